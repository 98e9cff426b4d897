/*
 * bench/ring.c: lfpoll's ring against its peers (bench/peer_*.h) in one
 * run, single operations and bursts, one thread and threads on two CPUs.
 *
 * The cases of docs/bench-method.md, with 64-byte events unless the name
 * says otherwise:
 *   ring/1thr, ring/1thr-pre  one thread, enqueue one event and dequeue it;
 *                 -pre writes each event PRE_AHEAD items before its enqueue
 *   ring/1thr-b8, -b32        one thread, bursts of 8 or 32 each way
 *   ring/1p1c, ring/2p2c      producers and consumers on two CPUs (2p2c:
 *                 4 threads on 2 cores), single operations, and -b8, -b32
 *   ring/<shape>-p<bytes>     the same with 8-, 56- or 128-byte events: the
 *                 payload and burst matrix (a part by default, all of it
 *                 with BENCH_MATRIX=full)
 *   ring/spsc-*   lfpoll's single-producer single-consumer mode against
 *                 DPDK's SP/SC ring, beside lfpoll's default ring
 *   ring/locked-rmw  one uncontended CAS: the floor under each side of 1p1c
 *
 * --instr runs only the one-thread cases, once, for a fixed count, for
 * valgrind --tool=callgrind (scripts/bench-instr).
 */
#define _GNU_SOURCE
#define RING_SIZES RING_EV_SIZES

#include "ring_work.h"

#include <stdio.h>

#define INSTR_ITEMS (1u << 18)

/*
 * Targets: lfpoll/peer at least this (peer ns / lfpoll ns), the current
 * round's (docs/performance.md; earlier rounds' are in
 * docs/performance-history.md).  atomic_queue is a bounded MPMC FIFO of
 * values, as lfpoll's ring is, so the cases where it keeps that order (one
 * producer, one consumer) ask for parity with it; its burst rows are single
 * calls (it has none).  Where it does not keep it (2p2c) it is skipped
 * (SOLO_AQ) and no target names it.
 */
static const struct bench_target t_1thr[] = {
	{ "ck_ring", 1.0, NULL, NULL }, { "atomic_queue", 1.0, NULL, NULL } };
/*
 * A target that names a floor is BOUNDED where the floor, timed in the same
 * rounds, misses it too and is not slower than lfpoll (bench/harness.h):
 * floor_mpmc is the default mode's design with nothing else, floor_index
 * the SP/SC mode's (an index ring, one index update a burst, no RMW),
 * floor_copy a ring's copies with nothing else and floor_rmw those copies
 * and the CAS per side and operation of any MPMC ring (both one thread
 * only).  ring/1p1c-b32 names two floors, the faster judged: floor_mpmc,
 * and floor_spsc, the per-slot hand-over alone (read the slot's word, copy,
 * write the word, on each side) with no index shared and no RMW, a part
 * of the work of every per-slot ring, which the default mode is.
 * ring/1p1c's targets name the two floors of a single transfer, floor_spsc
 * and floor_index, the faster judged: one producer, one consumer and no
 * RMW at all, which no ring for several producers and consumers undercuts.
 */
static const struct bench_target t_pre[] = {
	{ "dpdk_mpmc", 1.2, "floor_rmw", NULL } };
static const struct bench_target t_1thr_b32[] = {
	{ "ck_ring", 1.4, NULL, NULL }, { "atomic_queue", 1.0, NULL, NULL } };
static const struct bench_target t_1p1c[] = {
	{ "dpdk_mpmc", 3.0, "floor_spsc", "floor_index" },
	{ "ck_ring", 3.0, "floor_spsc", "floor_index" },
	{ "atomic_queue", 1.0, NULL, NULL } };
static const struct bench_target t_2p2c[] = {
	{ "dpdk_mpmc", 2.0, NULL, NULL }, { "ck_ring", 1.3, NULL, NULL } };
static const struct bench_target t_1p1c_b32[] = {
	{ "dpdk_mpmc", 0.8, "floor_mpmc", "floor_spsc" },
	{ "atomic_queue", 1.0, NULL, NULL } };
static const struct bench_target t_2p2c_b32[] = {
	{ "dpdk_mpmc", 0.8, "floor_mpmc", NULL } };
/* The single-producer single-consumer mode, against DPDK's SP/SC. */
static const struct bench_target t_spsc_1thr_b32[] = {
	{ "dpdk_spsc", 1.25, "floor_copy", NULL } };
static const struct bench_target t_spsc_1p1c_b32[] = {
	{ "dpdk_spsc", 1.2, "floor_index", NULL } };

/* The notes every case's label carries. */
#define NOTE_B "ck_ring, atomic_queue: single calls; moodycamel: " \
	"bulk calls, enqueue all or none"
#define NOTE_MC "; moodycamel: per-producer FIFO, not linearizable"
#define T(t) t, BENCH_LEN(t)

static const struct ring_case cases[] = {
	{ "ring/1thr", "one thread: enqueue one event, dequeue it" NOTE_MC,
	  0, 0, 1, 0, 64, set_mpmc, T(t_1thr), NULL, INSTR_ITEMS, NULL },
	{ "ring/1thr-pre", "one thread: enqueue one event written 32 items "
	  "before, dequeue it" NOTE_MC, 0, 0, 1, 1, 64, set_mpmc, T(t_pre),
	  NULL, INSTR_ITEMS, NULL },
	{ "ring/1thr-b32", "one thread: enqueue 32, dequeue 32 (burst calls; "
	  NOTE_B ")" NOTE_MC, 0, 0, 32, 0, 64, set_mpmc, T(t_1thr_b32),
	  NULL, INSTR_ITEMS, NULL },
	{ "ring/1p1c", "1 producer + 1 consumer on 2 CPUs, single operations"
	  NOTE_MC, 1, 1, 1, 0, 64, set_mpmc, T(t_1p1c), NULL, 0, NULL },
	{ "ring/2p2c", "2 producers + 2 consumers: 4 threads on 2 cores, "
	  "single operations" NOTE_MC, 2, 2, 1, 0, 64, set_mpmc, T(t_2p2c),
	  NULL, 0, NULL },
	{ "ring/1p1c-b32", "1 producer + 1 consumer on 2 CPUs, bursts of 32 "
	  "(" NOTE_B ")" NOTE_MC, 1, 1, 32, 0, 64, set_mpmc, T(t_1p1c_b32),
	  NULL, 0, NULL },
	{ "ring/2p2c-b32", "2 producers + 2 consumers: 4 threads on 2 cores, "
	  "bursts of 32 (" NOTE_B ")" NOTE_MC, 2, 2, 32, 0, 64, set_mpmc,
	  T(t_2p2c_b32), NULL, 0, NULL },
	/* The single-producer single-consumer mode. */
	{ "ring/spsc-1thr", "SP/SC mode, one thread: enqueue one, dequeue it",
	  0, 0, 1, 0, 64, set_spsc, NULL, 0, NULL, INSTR_ITEMS, NULL },
	{ "ring/spsc-1thr-pre", "SP/SC mode, one thread: enqueue one event "
	  "written 32 items before, dequeue it", 0, 0, 1, 1, 64, set_spsc,
	  NULL, 0, NULL, INSTR_ITEMS, NULL },
	{ "ring/spsc-1thr-b32", "SP/SC mode, one thread: bursts of 32", 0, 0,
	  32, 0, 64, set_spsc, T(t_spsc_1thr_b32), NULL, INSTR_ITEMS, NULL },
	{ "ring/spsc-1p1c", "SP/SC mode, 1 producer + 1 consumer on 2 CPUs, "
	  "single operations", 1, 1, 1, 0, 64, set_spsc, NULL, 0, NULL, 0, NULL },
	{ "ring/spsc-1p1c-b32", "SP/SC mode, 1 producer + 1 consumer on 2 "
	  "CPUs, bursts of 32", 1, 1, 32, 0, 64, set_spsc,
	  T(t_spsc_1p1c_b32), NULL, 0, NULL },
};

/*
 * The payload and burst matrix: every shape at every event size and burst
 * (BENCH_MATRIX=full), or by default the cuts through the 64-byte cases
 * that answer the two questions, payload (8, 56, 128 bytes at bursts of 1
 * and 32 across CPUs, and at 32 in one thread) and burst (8), with the
 * implementations of set_matrix.
 */
static const char *const set_matrix[] = {
	"lfpoll", "floor_spsc", "floor_index", "ck_ring", "dpdk_mpmc",
	"mutex", NULL
};

static int in_default_matrix(int np, unsigned burst, size_t esz)
{
	if (esz == 64)
		return burst == 8 && np <= 1;
	if (np == 1)
		return burst != 8;
	return np == 0 && burst == 32;
}

static void run_matrix(int full)
{
	static const size_t sizes[] = { 8, 56, 64, 128 };
	static const unsigned bursts[] = { 1, 8, 32 };
	static const struct { const char *shape, *what; int np; } shapes[] = {
		{ "1thr", "one thread", 0 },
		{ "1p1c", "1 producer + 1 consumer on 2 CPUs", 1 },
		{ "2p2c", "2 producers + 2 consumers: 4 threads on 2 cores", 2 },
	};
	char name[64], label[160];
	size_t s, b, h;

	for (h = 0; h < BENCH_LEN(shapes); h++)
		for (b = 0; b < BENCH_LEN(bursts); b++)
			for (s = 0; s < BENCH_LEN(sizes); s++) {
				struct ring_case rc = {
					.name = name, .label = label,
					.np = shapes[h].np, .nc = shapes[h].np,
					.burst = bursts[b], .esz = sizes[s],
					.set = full ? set_mpmc : set_matrix,
					.instr_items = INSTR_ITEMS,
				};

				/* The 64-byte single and 32-burst cases are
				 * the main table's. */
				if (sizes[s] == 64 && bursts[b] != 8)
					continue;
				if (!full && !in_default_matrix(rc.np, rc.burst,
				                                rc.esz))
					continue;
				snprintf(name, sizeof(name), "ring/%s%s%.0u%s%.0zu",
				         shapes[h].shape, bursts[b] > 1 ? "-b" : "",
				         bursts[b] > 1 ? bursts[b] : 0,
				         sizes[s] != 64 ? "-p" : "",
				         sizes[s] != 64 ? sizes[s] : 0);
				snprintf(label, sizeof(label), "%s, %zu-byte "
				         "events, %s%.0u", shapes[h].what,
				         sizes[s], bursts[b] > 1 ?
				         "bursts of " : "single operations",
				         bursts[b] > 1 ? bursts[b] : 0);
				ring_case_run(&rc);
			}
}

static void run_locked_rmw(void)
{
	static const struct bench_impl impl = {
		.name = "lock_cmpxchg", .run = locked_rmw_run,
	};
	const struct bench_case c = {
		.name = "ring/locked-rmw",
		.label = "one thread: one uncontended CAS (each side of an MPMC "
		         "operation makes at least one)",
		.threads = 1, .impls = &impl, .n_impls = 1,
	};

	bench_case_run(&c);
}

int main(int argc, char **argv)
{
	const char *m = getenv("BENCH_MATRIX");
	size_t i;

	bench_init("ring", argc, argv);
	ring_max_np = 2;
	for (i = 0; i < BENCH_LEN(cases); i++)
		ring_case_run(&cases[i]);
	run_matrix(m && !strcmp(m, "full"));
	run_locked_rmw();
	return bench_finish();
}
