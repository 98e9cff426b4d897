/*
 * bench/topo.c: placement by topology for the thread sweep (topo.h).
 *
 * The machine is read once into a flat list of the CPUs this process may
 * use, each with its core, L3 cache, package and NUMA node.  A placement
 * then picks CPUs by relation; it never puts two threads on one CPU, and
 * outside the SMT relation never two on one core, so that each relation
 * measures what its name says.  Where an L3 cache is not in the topology
 * (some virtual machines), its package stands for it.
 */
#define _GNU_SOURCE
#include "topo.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif
#ifdef HAVE_NUMA
#include <numa.h>
#endif

struct topo_cpu {
	int idx;                /* bench_pin's index */
	int core, l3, pkg, node;
};

static struct {
	int loaded;
	int n;
	struct topo_cpu *cpu;
	int ncore, nl3, npkg, nnode;
	int no_l3;              /* no L3 in the topology: packages stand in */
} T;

static const char *const rel_names[TOPO_NREL] = {
	"smt", "l3", "cross-l3", "cross-socket",
};

static const char *const rel_what[TOPO_NREL] = {
	"consumers on the SMT siblings of the producers' cores",
	"producers and consumers on cores of one L3 cache",
	"consumers under another L3 cache of the producers' package",
	"consumers in another package (socket) than the producers",
};

const char *topo_rel_name(enum topo_rel rel)
{
	return rel_names[rel];
}

const char *topo_rel_what(enum topo_rel rel)
{
	return rel_what[rel];
}

#ifdef HAVE_HWLOC
static int ancestor_index(hwloc_topology_t t, hwloc_obj_t pu, hwloc_obj_type_t type)
{
	hwloc_obj_t o = hwloc_get_ancestor_obj_by_type(t, type, pu);

	(void)t;
	return o ? (int)o->logical_index : -1;
}

static int max_plus_one(int a, int b)
{
	return a > b ? a : b + 1;
}

int topo_load(char *why, size_t len)
{
	hwloc_topology_t t;
	hwloc_obj_t pu;
	int i, npu;

	if (T.loaded)
		return 0;
	if (hwloc_topology_init(&t) || hwloc_topology_load(t)) {
		snprintf(why, len, "hwloc could not read the topology");
		return -1;
	}
	npu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	T.cpu = calloc((size_t)(npu > 0 ? npu : 1), sizeof(*T.cpu));
	if (!T.cpu) {
		hwloc_topology_destroy(t);
		snprintf(why, len, "out of memory");
		return -1;
	}
	T.no_l3 = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE) <= 0;
	for (i = 0; i < npu; i++) {
		struct topo_cpu *c = &T.cpu[T.n];

		pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, (unsigned)i);
		c->idx = bench_cpu_index((int)pu->os_index);
		if (c->idx < 0)
			continue;       /* not ours to run on */
		c->core = ancestor_index(t, pu, HWLOC_OBJ_CORE);
		if (c->core < 0)
			c->core = (int)pu->logical_index;
		c->pkg = ancestor_index(t, pu, HWLOC_OBJ_PACKAGE);
		if (c->pkg < 0)
			c->pkg = 0;
		c->l3 = T.no_l3 ? c->pkg : ancestor_index(t, pu, HWLOC_OBJ_L3CACHE);
		c->node = pu->nodeset ? hwloc_bitmap_first(pu->nodeset) : 0;
		if (c->node < 0)
			c->node = 0;
		T.ncore = max_plus_one(T.ncore, c->core);
		T.nl3 = max_plus_one(T.nl3, c->l3);
		T.npkg = max_plus_one(T.npkg, c->pkg);
		T.nnode = max_plus_one(T.nnode, c->node);
		T.n++;
	}
	hwloc_topology_destroy(t);
	if (!T.n) {
		snprintf(why, len, "hwloc found none of this process's CPUs");
		return -1;
	}
	T.loaded = 1;
	return 0;
}
#else
int topo_load(char *why, size_t len)
{
	snprintf(why, len, "built without libhwloc (libhwloc-dev)");
	return -1;
}
#endif

void topo_unload(void)
{
	free(T.cpu);
	memset(&T, 0, sizeof(T));
}

/* How many distinct values f takes over the CPUs matching (key == val). */
static int count_distinct(int (*f)(const struct topo_cpu *),
                          int (*key)(const struct topo_cpu *), int val)
{
	int i, j, n = 0, dup;

	for (i = 0; i < T.n; i++) {
		if (key && key(&T.cpu[i]) != val)
			continue;
		dup = 0;
		for (j = 0; j < i && !dup; j++)
			dup = (!key || key(&T.cpu[j]) == val) &&
			      f(&T.cpu[j]) == f(&T.cpu[i]);
		n += !dup;
	}
	return n;
}

static int f_core(const struct topo_cpu *c) { return c->core; }
static int f_l3(const struct topo_cpu *c) { return c->l3; }
static int f_pkg(const struct topo_cpu *c) { return c->pkg; }
static int f_node(const struct topo_cpu *c) { return c->node; }

void topo_describe(char *buf, size_t len)
{
	if (!T.loaded) {
		snprintf(buf, len, "topology unknown");
		return;
	}
	snprintf(buf, len, "%d package(s), %d L3 cache(s)%s, %d core(s), "
	         "%d CPU(s), %d NUMA node(s)", count_distinct(f_pkg, NULL, 0),
	         count_distinct(f_l3, NULL, 0),
	         T.no_l3 ? " (none in the topology: one per package)" : "",
	         count_distinct(f_core, NULL, 0), T.n,
	         count_distinct(f_node, NULL, 0));
}

/*
 * Take up to want CPUs, one per core, from the CPUs whose key is val and
 * whose core is not yet used; their indices go to out.  Returns how many.
 */
static int take_cores(int (*key)(const struct topo_cpu *), int val, int want,
                      char *used_core, int *out, int *node)
{
	int i, got = 0;

	for (i = 0; i < T.n && got < want; i++) {
		const struct topo_cpu *c = &T.cpu[i];

		if ((key && key(c) != val) || used_core[c->core])
			continue;
		used_core[c->core] = 1;
		if (node && *node < 0)
			*node = c->node;
		out[got++] = c->idx;
	}
	return got;
}

/* The domain (value of key) with the most cores, other than skip, and in
 * package pkg when pkg >= 0. */
static int widest(int (*key)(const struct topo_cpu *), int ndom, int skip,
                  int pkg, int *cores)
{
	int d, best = -1, n, i;

	*cores = 0;
	for (d = 0; d < ndom; d++) {
		if (d == skip)
			continue;
		for (i = 0; pkg >= 0 && i < T.n; i++)
			if (key(&T.cpu[i]) == d)
				break;
		if (pkg >= 0 && (i == T.n || T.cpu[i].pkg != pkg))
			continue;
		n = count_distinct(f_core, key, d);
		if (n > *cores) {
			*cores = n;
			best = d;
		}
	}
	return best;
}

static int place_smt(int np, int nc, int *cpus, int *node, char *why,
                     size_t len)
{
	int i, j, pairs = 0, k;

	if (np != nc) {
		snprintf(why, len, "SMT pairs need as many producers as "
		         "consumers");
		return -1;
	}
	/* Core by core: its first CPU a producer's, its second a consumer's. */
	for (i = 0; i < T.n && pairs < np; i++) {
		int first = 1;

		for (j = 0; j < i; j++)
			first &= T.cpu[j].core != T.cpu[i].core;
		if (!first)
			continue;
		for (k = i + 1; k < T.n; k++)
			if (T.cpu[k].core == T.cpu[i].core)
				break;
		if (k == T.n)
			continue;
		if (*node < 0)
			*node = T.cpu[i].node;
		cpus[pairs] = T.cpu[i].idx;
		cpus[np + pairs] = T.cpu[k].idx;
		pairs++;
	}
	if (pairs < np) {
		snprintf(why, len, "needs %d core(s) with two hardware threads; "
		         "this machine has %d", np, pairs);
		return -1;
	}
	return 0;
}

/* Producers in one domain of key and consumers in another (split), or both
 * in one (!split). */
static int place_dom(int (*key)(const struct topo_cpu *), int ndom,
                     const char *dom, int split, int pkg, int np, int nc,
                     int *cpus, int *node, char *why, size_t len)
{
	char *used = calloc((size_t)T.ncore + 1, 1);
	int a, b, ca, cb, ret = -1;

	if (!used) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	a = widest(key, ndom, -1, pkg, &ca);
	if (!split) {
		if (ca < np + nc)
			snprintf(why, len, "needs %d cores under one %s; the "
			         "widest has %d", np + nc, dom, ca);
		else if (take_cores(key, a, np, used, cpus, node) == np &&
		         take_cores(key, a, nc, used, cpus + np, NULL) == nc)
			ret = 0;
		free(used);
		return ret;
	}
	b = widest(key, ndom, a, pkg, &cb);
	if (b < 0)
		snprintf(why, len, "needs two %ss; this machine has one", dom);
	else if (ca < np || cb < nc)
		snprintf(why, len, "needs %d and %d cores in two %ss; they have "
		         "%d and %d", np, nc, dom, ca, cb);
	else if (take_cores(key, a, np, used, cpus, node) == np &&
	         take_cores(key, b, nc, used, cpus + np, NULL) == nc)
		ret = 0;
	free(used);
	return ret;
}

int topo_place(enum topo_rel rel, int np, int nc, int *cpus, int *node,
               char *why, size_t len)
{
	int pkg;

	*node = -1;
	if (!T.loaded) {
		snprintf(why, len, "no topology");
		return -1;
	}
	switch (rel) {
	case TOPO_SMT:
		return place_smt(np, nc, cpus, node, why, len);
	case TOPO_L3:
		return place_dom(f_l3, T.nl3, "L3 cache", 0, -1, np, nc, cpus,
		                 node, why, len);
	case TOPO_CROSS_L3:
		if (T.no_l3) {
			snprintf(why, len, "no L3 cache in the topology");
			return -1;
		}
		/* The first package with two L3 caches. */
		for (pkg = 0; pkg < T.npkg; pkg++)
			if (count_distinct(f_l3, f_pkg, pkg) > 1)
				break;
		if (pkg == T.npkg) {
			snprintf(why, len, "needs two L3 caches in one package; "
			         "each package here has one");
			return -1;
		}
		return place_dom(f_l3, T.nl3, "L3 cache", 1, pkg, np, nc, cpus,
		                 node, why, len);
	case TOPO_CROSS_SOCKET:
		return place_dom(f_pkg, T.npkg, "package", 1, -1, np, nc, cpus,
		                 node, why, len);
	case TOPO_NREL:
		break;
	}
	snprintf(why, len, "unknown relation");
	return -1;
}

/* ------------------------------------------------------------ memory */

static int numa_nodes(void)
{
#ifdef HAVE_NUMA
	static int n = -2;

	if (n == -2)
		n = numa_available() < 0 ? -1 : numa_max_node() + 1;
	return n;
#else
	return -1;
#endif
}

void topo_mem_begin(int node)
{
#ifdef HAVE_NUMA
	if (node >= 0 && numa_nodes() > 1)
		numa_set_preferred(node);
#else
	(void)node;
#endif
}

void topo_mem_end(void)
{
#ifdef HAVE_NUMA
	if (numa_nodes() > 1)
		numa_set_localalloc();
#endif
}

const char *topo_mem_note(void)
{
	int n = numa_nodes();

	if (n < 0)
		return "memory: first touch by the first producer's CPU "
		       "(libnuma not available)";
	if (n == 1)
		return "memory: one NUMA node, nothing to place";
	return "memory: each queue's pages preferred on the first producer's "
	       "NUMA node (libnuma), first touched from its CPU";
}
