/*
 * bench/topo.h: thread and memory placement by topology for the thread
 * sweep (bench/sweep.c), from libhwloc (HAVE_HWLOC) and libnuma
 * (HAVE_NUMA).  Without hwloc nothing can be placed by relation, and every
 * placement reports why.
 */
#ifndef LFPOLL_BENCH_TOPO_H
#define LFPOLL_BENCH_TOPO_H

#include <stddef.h>

/* Where the consumers run relative to the producers. */
enum topo_rel {
	TOPO_SMT,               /* on the SMT siblings of the producers' cores */
	TOPO_L3,                /* on other cores under the same L3 cache */
	TOPO_CROSS_L3,          /* under another L3 cache of the same package */
	TOPO_CROSS_SOCKET,      /* in another package */
	TOPO_NREL
};

/* Read the machine's topology.  0, or -1 with why filled. */
int topo_load(char *why, size_t len);
void topo_unload(void);

/* "smt", "l3", "cross-l3", "cross-socket". */
const char *topo_rel_name(enum topo_rel rel);
/* A phrase for labels: "consumers on the producers' SMT siblings". */
const char *topo_rel_what(enum topo_rel rel);

/* One line on the machine: packages, L3 caches, cores, CPUs, NUMA nodes. */
void topo_describe(char *buf, size_t len);

/*
 * Place np producers and nc consumers in relation rel, one thread per CPU
 * and, outside TOPO_SMT, one per core: cpus[0..np) the producers' and
 * cpus[np..np+nc) the consumers' CPU indices (as bench_pin takes them),
 * *node the NUMA node of the first producer (-1: unknown).  0, or -1 with
 * why filled (what the placement needs and what this machine has).
 */
int topo_place(enum topo_rel rel, int np, int nc, int *cpus, int *node,
               char *why, size_t len);

/*
 * Memory placement around a queue's creation: topo_mem_begin(node) makes
 * the calling thread's new pages come from that NUMA node where libnuma
 * and more than one node are present; topo_mem_end() restores the
 * default.  topo_mem_note() says which of the two applied.
 */
void topo_mem_begin(int node);
void topo_mem_end(void);
const char *topo_mem_note(void);

#endif /* LFPOLL_BENCH_TOPO_H */
