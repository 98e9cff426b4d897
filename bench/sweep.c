/*
 * bench/sweep.c: the ring's thread sweep placed by topology.
 *
 * 1, 2, 4 ... BENCH_SWEEP_MAX (default 4) producers against as many
 * consumers, every pair of counts, 64-byte single operations, for each
 * relation between the producers' and the consumers' CPUs (bench/topo.h):
 * SMT siblings, cores of one L3 cache, two L3 caches of one package, two
 * packages.  Each thread has a CPU of its own (and, outside the SMT
 * relation, a core of its own); each queue's memory is made from the first
 * producer's CPU and, with libnuma on a machine of several NUMA nodes,
 * preferred on its node.  A placement this machine cannot give is printed
 * as one skipped line with the reason; a relation it cannot give at all,
 * as one line for all its cases.
 *
 * Case names: sweep/<relation>-<P>p<C>c.  The implementations and checks
 * are the ring benchmark's (bench/ring_work.h).
 */
#define _GNU_SOURCE
#define RING_SIZES(X, a) X(a, 64)

#include "ring_work.h"
#include "topo.h"

#include <stdio.h>

#define SWEEP_MAX_DEFAULT 4

static int sweep_node = -1;

/* Make each queue from the first producer's CPU, its pages on its node. */
static void around_create(const struct ring_case *rc, int begin)
{
	if (begin) {
		bench_pin(rc->cpus[0]);
		topo_mem_begin(sweep_node);
	} else {
		topo_mem_end();
		bench_pin(0);
	}
}

int main(int argc, char **argv)
{
	static int cpus[BENCH_MT_MAXP + BENCH_MT_MAXC];
	const char *env = getenv("BENCH_SWEEP_MAX");
	int max = env && *env ? atoi(env) : SWEEP_MAX_DEFAULT;
	char why[160], desc[200], name[64], label[256];
	int rel, np, nc, placed;

	bench_init("sweep", argc, argv);
	if (max < 1 || max > BENCH_MT_MAXP)
		max = max < 1 ? 1 : BENCH_MT_MAXP;
	ring_max_np = max;
	if (topo_load(why, sizeof(why))) {
		bench_case_skip("sweep/*", "the thread sweep placed by topology",
		                why);
		return bench_finish();
	}
	topo_describe(desc, sizeof(desc));
	printf("# sweep: %s; %s\n", desc, topo_mem_note());
	for (rel = 0; rel < TOPO_NREL; rel++) {
		/* A relation this machine cannot give even to one pair: one
		 * line for all its cases. */
		if (topo_place(rel, 1, 1, cpus, &sweep_node, why, sizeof(why))) {
			snprintf(name, sizeof(name), "sweep/%s-*",
			         topo_rel_name(rel));
			bench_case_skip(name, topo_rel_what(rel), why);
			continue;
		}
		for (np = 1; np <= max; np *= 2)
			for (nc = 1; nc <= max; nc *= 2) {
				struct ring_case rc = {
					.name = name, .label = label,
					.np = np, .nc = nc, .burst = 1,
					.esz = 64, .set = set_mpmc, .cpus = cpus,
					.around_create = around_create,
				};

				snprintf(name, sizeof(name), "sweep/%s-%dp%dc",
				         topo_rel_name(rel), np, nc);
				snprintf(label, sizeof(label), "%d producer(s) + "
				         "%d consumer(s), %s, 64-byte single "
				         "operations", np, nc, topo_rel_what(rel));
				placed = !topo_place(rel, np, nc, cpus,
				                     &sweep_node, why, sizeof(why));
				if (!placed)
					bench_case_skip(name, label, why);
				else
					ring_case_run(&rc);
			}
	}
	topo_unload();
	return bench_finish();
}
