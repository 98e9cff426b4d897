/*
 * bench/harness.h: the one harness every lfpoll benchmark uses.
 *
 * A benchmark program is a list of cases.  A case is one workload ("1
 * producer + 1 consumer, 64-byte events") and the implementations that run
 * it: impls[0] is the subject (lfpoll), the others are its peers.  The
 * harness runs the implementations round-robin (warm-up A B C, then
 * A B C A B C ... for 7 rounds, 3 with BENCH_QUICK=1), each round for a fixed
 * time budget, so a slow peer costs no more wall time than a fast one.  It
 * then prints one greppable line per (case, implementation):
 *
 *   ring/1p1c        ck_ring    266.1   3.76   250.3-290.1   12.47x  >=10x MET
 *
 * median ns/item, Mitems/s, min-max ns/item over the rounds, and on every
 * peer's line the ratio subject/peer (peer ns / subject ns: > 1 means lfpoll
 * is faster) and, when the case declares one, the target and MET, MISSED
 * or BOUNDED (struct bench_target).
 * With BENCH_RESULTS=FILE in the environment it also appends one JSON object
 * per line and per (case, implementation) to FILE; bench/run assembles those
 * into build/bench-results/latest.json (bench/run).
 *
 * Writing a benchmark (bench/eq.c is built with this file automatically):
 *
 *   static int pairs_lfpoll(void *arg, struct bench_round *r)
 *   {
 *           uint64_t n = 0, t0 = bench_now_ns();
 *           do {
 *                   for (int k = 0; k < 256; k++, n++)
 *                           ... one item; on a wrong result:
 *                               return bench_fail("item %llu lost", ...);
 *           } while (!bench_round_over(r, n, t0));
 *           r->items = n;
 *           r->ns = bench_now_ns() - t0;
 *           return 0;
 *   }
 *
 *   int main(int argc, char **argv)
 *   {
 *           struct bench_impl impls[] = {
 *                   { .name = "lfpoll", .run = pairs_lfpoll, .arg = &a },
 *                   { .name = "fabric_udp", .run = pairs_fabric, .arg = &b },
 *                   { .name = "fabric_tcp", .skip = "libfabric-dev missing" },
 *           };
 *           struct bench_target targets[] = { { "fabric_udp", 2.0, NULL } };
 *           struct bench_case c = {
 *                   .name = "eq/pairs", .label = "one thread, write+read",
 *                   .threads = 1, .impls = impls, .n_impls = BENCH_LEN(impls),
 *                   .targets = targets, .n_targets = BENCH_LEN(targets),
 *           };
 *           bench_init("eq", argc, argv);
 *           bench_case_run(&c);
 *           return bench_finish();
 *   }
 *
 * Multi-threaded rounds: bench_threads() starts pinned threads together and
 * times them; producers stop when bench_round_over() says so, consumers drain
 * what was produced.  Waiting loops call bench_spin_fail() after each failed
 * attempt: it pauses, yields now and then (so 4 threads on 2 CPUs make
 * progress), counts retries and turns a hang into a reported stall.
 *
 * Checks: a run function, a worker thread or the case's check hook calls
 * bench_fail() on a lost, duplicated, torn or reordered item.  The
 * implementation is then reported as FAILED with the message, its remaining
 * rounds are skipped, and bench_finish() returns 1 so the program exits
 * non-zero.
 *
 * Command line (parsed by bench_init): --quick, --rounds N, --round-ms N,
 * --case SUBSTR (a trailing $ anchors it: "ring/1thr$"), --impl NAME[,NAME...],
 * --instr, --list, --help.
 * Environment: BENCH_QUICK=1, BENCH_ROUNDS, BENCH_ROUND_MS, BENCH_RESULTS,
 * BENCH_NO_HEADER=1 (bench/run prints the table header once), BENCH_STALL_S.
 *
 * --instr runs only the cases with instr_items > 0, once per implementation,
 * with exactly that many items and no time budget: a fixed workload for
 * valgrind --tool=callgrind.
 */
#ifndef LFPOLL_BENCH_HARNESS_H
#define LFPOLL_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* One round of one implementation: the harness fills the inputs, run()
 * the outputs. */
struct bench_round {
	/* In: stop after this many items (0: no limit; --instr sets it). */
	uint64_t max_items;
	/* In: stop starting new items after this long (0: no limit). */
	uint64_t budget_ns;
	/* Out: items completed, and the time they took. */
	uint64_t items;
	uint64_t ns;
	/* Out, optional: failed attempts (queue full or empty), for the
	 * record's retries_per_item; of those, the producers' (queue full),
	 * for full_retries_per_item (empty_retries_per_item: the rest). */
	uint64_t retries;
	uint64_t full_retries;
};

/* Run one round; return 0, or the value of bench_fail() on a failed check. */
typedef int (*bench_run_fn)(void *arg, struct bench_round *r);

struct bench_impl {
	const char *name;     /* short, no spaces: "lfpoll", "dpdk_mpmc" */
	bench_run_fn run;
	void *arg;            /* passed to every hook */
	/* Non-NULL: this peer is not available here; the table says
	 * "skipped (<skip>)" in its place. */
	const char *skip;
	/* Optional, untimed, once per case around all rounds: return 0, or
	 * bench_fail() (the implementation is reported FAILED). */
	int (*setup)(void *arg);
	void (*teardown)(void *arg);
};

/*
 * "subject >= ratio x peer", printed on the peer's line as MET or MISSED.
 * floor (NULL: none) names an implementation in the same case that does
 * the least the subject's design must do: when the subject misses, and the
 * floor, in the same rounds, misses too (peer ns / floor ns < ratio) while
 * being no slower than the subject, the row says BOUNDED with the floor's
 * ratio instead of MISSED.  floor2 (NULL: none) names a second one, doing
 * a part of the same least work another way; of the two that ran, the
 * faster is the floor judged and named.  A peer or floor that is not an
 * implementation of the case fails the case.
 */
struct bench_target {
	const char *peer;     /* a bench_impl name in the same case */
	double ratio;
	const char *floor;
	const char *floor2;
};

/* The ratio of "lfpoll's ns at most x times the peer's": 1/x exactly, so
 * that "within 1.1x" is 0.90909..., not a rounded 0.91. */
#define BENCH_AT_MOST(x) (1.0 / (x))

struct bench_case {
	const char *name;     /* "<bench>/<shape>", no spaces: "ring/1p1c" */
	const char *label;    /* one line for humans, printed above the rows */
	int threads;          /* threads the case uses (for the record) */
	const struct bench_impl *impls; /* impls[0] is the subject (lfpoll) */
	size_t n_impls;
	const struct bench_target *targets;
	size_t n_targets;
	/* Optional, untimed, after every round of every implementation, with
	 * that implementation's arg: return 0, or bench_fail(). */
	int (*check)(void *arg, const struct bench_round *r);
	/* Items for one --instr run; 0: the case is not run under --instr. */
	uint64_t instr_items;
};

/* Parse the command line and environment, pin the calling thread to the
 * first allowed CPU, print the table header.  Exits on a bad argument. */
void bench_init(const char *bench, int argc, char **argv);

/* Run every implementation of c, print its rows, append its records.
 * Returns 0, or 1 if an implementation failed. */
int bench_case_run(const struct bench_case *c);

/* Print the target tally; returns the exit status: 1 if anything failed. */
int bench_finish(void);

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);

/* Nonzero when a round started at t0 with done items completed should stop
 * starting new items: budget spent, max_items reached, or a check failed.
 * Reads the clock: call it every few hundred items, not every item. */
int bench_round_over(const struct bench_round *r, uint64_t done, uint64_t t0);

/* Non-zero under --instr (fixed-count runs for callgrind). */
int bench_instr_mode(void);

/* CPUs this process may run on, and a pin of the calling thread to the
 * i-th of them (modulo their number).  0 or -errno. */
int bench_ncpus(void);
int bench_pin(int i);

/* The index (for bench_pin) of the CPU the kernel numbers os_cpu, or -1
 * when this process may not run there. */
int bench_cpu_index(int os_cpu);

/*
 * A case that does not run here at all (a placement this machine cannot
 * give): one line "<name>  skipped (<reason>)" and one record.
 */
void bench_case_skip(const char *name, const char *label, const char *why);

/*
 * Measured quantities that are not times (call-site bytes, resident bytes
 * per object): one row per metric, with its unit, and a target when max is
 * set: MET when value <= max and cond holds.  NaN value: skipped, with note
 * as the reason.  The record has "kind":"metric", "value", "unit", "note".
 */
struct bench_metric {
	const char *impl;
	double value;
	const char *unit;     /* "bytes", "bytes/object" */
	double max;           /* > 0: the target is value <= max */
	int cond;             /* with max: a second condition of the target */
	const char *note;     /* printed after the row, and in the record */
};

void bench_metric_case(const char *name, const char *label,
                       const struct bench_metric *m, size_t n);

/*
 * Run fn(args[i]) on n threads, thread i pinned to CPU index cpus[i] (as in
 * bench_pin; cpus NULL: i).  All threads are released together once every
 * one has started; returns the nanoseconds from that release until the last
 * thread returned.  Exits the program if a thread cannot be created.
 */
uint64_t bench_threads(int n, void *(*fn)(void *), void *const *args,
                       const int *cpus);

/*
 * Report a failed check (printf format).  Safe from any thread; the first
 * message of a round is kept for the table.  Returns -1 so that a run
 * function can `return bench_fail(...)`.  After it, bench_failed() is true
 * and bench_round_over() and bench_spin_fail() tell every loop to stop.
 */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int bench_failed(void);

/*
 * For the implementations' operations and the loops around them (bench/ring.c,
 * bench/eq.c): a BENCH_OP function is inlined into the loops, or with
 * -DBENCH_INSTR kept in a function of its own (op_<impl>_<op>) for
 * valgrind --tool=callgrind --toggle-collect; a BENCH_TEMPLATE loop is always
 * inlined into each instantiation, so that its constant function pointers
 * become direct, inlined calls.
 */
#ifdef BENCH_INSTR
#  define BENCH_OP static __attribute__((noinline, used))
#else
#  define BENCH_OP static inline __attribute__((always_inline))
#endif
#define BENCH_TEMPLATE static inline __attribute__((always_inline))

/* Retry loop helper: one per waiting thread, zeroed before its loop. */
struct bench_spin {
	uint64_t retries;     /* failed attempts in total */
	uint32_t streak;      /* consecutive failed attempts */
	uint64_t since;       /* when the current long streak began */
};

int bench__spin_slow(struct bench_spin *s);

static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Call after a failed attempt (full or empty).  Pauses; every 64th
 * consecutive failure yields the CPU.  Returns nonzero when the caller must
 * give up: a check failed somewhere, or no attempt succeeded for
 * BENCH_STALL_S seconds (10 by default; reported as a stall).
 */
static inline int bench_spin_fail(struct bench_spin *s)
{
	s->retries++;
	if (++s->streak & 63) {
		bench_cpu_relax();
		return 0;
	}
	return bench__spin_slow(s);
}

/* Call after a successful attempt. */
static inline void bench_spin_ok(struct bench_spin *s)
{
	s->streak = 0;
}

/*
 * Producers and consumers (bench_mt): np producers push numbered items
 * (producer p: sequence 0, 1, 2, ...) into the implementation under test, nc
 * consumers take them out, and a round counts from the threads' start until
 * the consumers have drained everything.  The benchmark embeds a struct
 * bench_mt in its context, sets np, nc, ctx and the words of its messages,
 * and writes the two worker loops:
 *
 *   producer:  struct bench_round mine = bench_mt_producer_round(w->mt);
 *              ... until bench_round_over(&mine, n, t0): item n of w->id ...
 *              bench_mt_producer_done(w->mt, w->id, n, spin.retries);
 *   consumer:  done = bench_mt_all_produced(w->mt);   (before each attempt)
 *              ... on an item: bench_mt_take(w->mt, &w->mt->seen[w->id],
 *                                            producer, seq, strict, hash) ...
 *              ... when the attempt failed and done was true: return ...
 *              w->mt->seen[w->id].retries = spin.retries;
 *
 * Its run function calls bench_mt_run(), its case's check hook
 * bench_mt_check(): every item produced was consumed exactly once, and in
 * order per producer (strictly, with strict: no gap either).
 */
#define BENCH_MT_MAXP 32
#define BENCH_MT_MAXC 32

/* What one consumer saw, per producer. */
struct bench_mt_seen {
	uint64_t next[BENCH_MT_MAXP];   /* lowest sequence still acceptable */
	uint64_t count[BENCH_MT_MAXP];
	uint64_t sum[BENCH_MT_MAXP];    /* of sequence numbers */
	uint64_t hsum[BENCH_MT_MAXP];   /* of the hashes given to bench_mt_take */
	uint64_t retries;
} __attribute__((aligned(128)));

struct bench_mt;

struct bench_mt_worker {
	struct bench_mt *mt;
	int id;                 /* producer or consumer index, from 0 */
	void *(*fn)(void *);    /* called with this worker */
};

struct bench_mt {
	/* Set by the benchmark. */
	int np, nc;             /* 1..BENCH_MT_MAXP, 1..BENCH_MT_MAXC */
	void *ctx;              /* the benchmark's own context, for its workers */
	/* Optional: the hash of (producer, seq) the consumers pass to
	 * bench_mt_take; bench_mt_check then also compares the hash sums
	 * (a lost item and a duplicated one cancel in the plain sum). */
	uint64_t (*hash)(uint32_t producer, uint64_t seq);
	/* Words of the failure messages: "producer", "produced", "consumed". */
	const char *who, *made, *took;
	/* Optional: the CPU index (as in bench_pin) of each worker, producers
	 * first, then consumers; NULL: producer i on i, consumer j on np + j. */
	const int *cpus;
	/* Set by bench_mt_run. */
	const struct bench_round *round;
	struct bench_mt_worker w[BENCH_MT_MAXP + BENCH_MT_MAXC];
	struct bench_mt_seen seen[BENCH_MT_MAXC];
	uint64_t produced[BENCH_MT_MAXP];
	uint64_t prod_retries[BENCH_MT_MAXP];
	int producers_done __attribute__((aligned(128)));
} __attribute__((aligned(128)));

/*
 * One round: producer i on CPU index i, consumer j on CPU index np + j
 * (modulo the CPUs: 1P1C on two CPUs, 2P2C one of each per CPU; or where
 * m->cpus says), prod and
 * cons called with their struct bench_mt_worker.  Fills r->ns, r->items (all
 * produced), r->retries (everyone's) and r->full_retries (the producers').
 * Returns 0.
 */
int bench_mt_run(struct bench_mt *m, struct bench_round *r,
                 void *(*prod)(void *), void *(*cons)(void *));

/* After a round: every item consumed exactly once.  0, or bench_fail(). */
int bench_mt_check(const struct bench_mt *m);

int bench__mt_order_fail(const struct bench_mt *m, uint32_t p, uint64_t seq,
                         uint64_t next);

/* The round a producer works to: max_items shared among the producers. */
static inline struct bench_round bench_mt_producer_round(const struct bench_mt *m)
{
	struct bench_round mine = *m->round;

	mine.max_items /= (uint64_t)m->np;
	return mine;
}

/* A producer's last act: n items made, after retries failed attempts. */
static inline void bench_mt_producer_done(struct bench_mt *m, int id,
                                          uint64_t n, uint64_t retries)
{
	m->produced[id] = n;
	m->prod_retries[id] = retries;
	/* Release pairs with the consumers' acquire: once they see every
	 * producer done, every item is in, so an empty queue is drained. */
	__atomic_add_fetch(&m->producers_done, 1, __ATOMIC_RELEASE);
}

/* Nonzero once every producer is done: read it before an attempt, and stop
 * when that attempt then finds nothing. */
static inline int bench_mt_all_produced(struct bench_mt *m)
{
	return __atomic_load_n(&m->producers_done, __ATOMIC_ACQUIRE) == m->np;
}

/*
 * A consumer took item seq of producer p (p < np, already validated): check
 * its order (strict: exactly the next one, for a lone consumer; otherwise
 * any later one) and count it.  0, or bench_fail().
 */
static inline int bench_mt_take(const struct bench_mt *m,
                                struct bench_mt_seen *s, uint32_t p,
                                uint64_t seq, int strict, uint64_t hash)
{
	if (strict ? seq != s->next[p] : seq < s->next[p])
		return bench__mt_order_fail(m, p, seq, s->next[p]);
	s->next[p] = seq + 1;
	s->count[p]++;
	s->sum[p] += seq;
	s->hsum[p] += hash;
	return 0;
}

#endif /* LFPOLL_BENCH_HARNESS_H */
