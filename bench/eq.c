/*
 * bench/eq.c: lfpoll's event queue against libfabric's own EQ, side by side
 * in one run: the pure util EQ (provider "udp", FI_EP_DGRAM, on 127.0.0.1)
 * and the EQ most users get (provider "tcp", FI_EP_MSG), with a bare
 * lfp_ring moving the same entries as the floor the EQ is built on (the
 * queues: bench/eq_queue.h).  The blocking round trips are bench/rtt.c.
 *
 * Cases (round-robin rounds, see harness.h):
 *   eq/pairs      one thread: write one event, read it back      (pairs/s)
 *   eq/peek       LFP_PEEK / FI_PEEK read on a non-empty EQ     (ns/op)
 *   eq/empty      read on an empty EQ                            (ns/op)
 *   eq/trywait    lfp_trywait / fi_trywait on an empty FD EQ     (ns/op)
 *   eq/nowait     eq/pairs on FD EQs with nobody waiting.  lfpoll must make
 *                 no producer system call (the LFP_STATS signal counter):
 *                 checked on every round and on a fixed run of 1,000,000
 *                 events, reported as system calls per event (libfabric's
 *                 are not counted)
 *   eq/1w1r       1 writer + 1 reader on two CPUs                (events/s)
 *   eq/2w2r       2 writers + 2 readers: 4 threads on 2 cores    (events/s)
 *   eq/spsc-pairs, eq/spsc-1w1r   eq/pairs and eq/1w1r with the EQ and the
 *                 bare ring both in single-producer single-consumer mode,
 *                 lfpoll through lfp_eq_write_spsc / lfp_eq_read_spsc (the
 *                 calls whose inline path is that mode's); skipped while
 *                 lfpoll has no ring modes
 *
 * In the threaded cases lfpoll's EQ is opened with LFP_EQ_BACKPRESSURE
 * (writers retry on -EAGAIN, so it never overruns); libfabric's EQ is
 * unbounded.  Each round counts from the start of the threads until the
 * readers have drained everything, so a writer running ahead of its reader
 * buys nothing.  Every event carries its writer, sequence number and a check
 * word; readers reject torn events and per-writer reordering, and after each
 * round the count, sum and hash-sum of sequence numbers per writer must
 * equal what was written (exactly once).  Any failure makes the program
 * exit non-zero.
 *
 * --instr runs only the one-thread cases, once, for a fixed count, for
 * valgrind --tool=callgrind.  Build with -DBENCH_INSTR to keep each EQ
 * operation in its own function (op_lfp_*, op_fi_*), then count with
 * --toggle-collect='op_lfp_*' and divide by the item count.  Select one case
 * at a time (--case eq/pairs, ...); eq/nowait's setup adds its fixed run of
 * 1,000,000 events to that count.
 */
#define _GNU_SOURCE
#include "eq_queue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define INSTR_ITEMS   (1u << 16)
#define NOWAIT_EVENTS 1000000u
#define NOWAIT_BATCH  1000u
#define PEEK_SEQ      4242u

/* What a case does: one thread (write+read pairs, peek, read on empty,
 * trywait), or writers and readers on their own threads. */
enum shape { SH_PAIRS, SH_PEEK, SH_EMPTY, SH_TRYWAIT, SH_MT };

#ifdef LFP_SINGLE_PRODUCER
#  define MODE_SPSC (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER)
#  define NO_MODES NULL
#else
#  define MODE_SPSC 0
#  define NO_MODES "lfpoll has no ring modes in this tree"
#endif

static struct fab fab_udp = FAB_UDP, fab_tcp = FAB_TCP;

/* ------------------------------------------------------------ contexts */

/* One implementation in one EQ case (not the ping-pongs). */
struct sctx {
	struct bench_mt mt;     /* threaded cases: np writers, nc readers */
	const struct impl_def *impl;
	const struct case_def *cd;
	struct q q;
	/* eq/nowait: producer signals counted over every round. */
	uint64_t sig_events, sig_count;
} __attribute__((aligned(128)));

/* ------------------------------------------------------------ one thread */

/* One item of a one-thread case (sh is a constant: the switch folds away):
 * 0, or bench_fail(). */
TEMPLATE int st_item(struct q *q, uint64_t n, enum shape sh, wr_fn wr,
                     rd_fn rd, tw_fn tw)
{
	ent_t in, out;
	int ret;

	switch (sh) {
	case SH_PAIRS:
		ent_make(&in, 0, n);
		ret = wr(q, &in);
		if (ret)
			return bench_fail("write into an empty EQ: %s (item %llu)",
			                  ret > 0 ? "full" : err_str(ret),
			                  (unsigned long long)n);
		ret = rd(q, &out, 0);
		if (ret != 1)
			return bench_fail("read after a write: %s (item %llu)",
			                  ret == 0 ? "empty" : err_str(ret),
			                  (unsigned long long)n);
		if (out.data != n || out.fid != in.fid ||
		    out.context != in.context)
			return bench_fail("item %llu came back as %llu",
			                  (unsigned long long)n,
			                  (unsigned long long)out.data);
		return 0;
	case SH_PEEK:
		out.data = 0;
		ret = rd(q, &out, 1);
		if (ret != 1 || out.data != PEEK_SEQ)
			return bench_fail("peek %llu: %s", (unsigned long long)n,
			                  ret == 1 ? "wrong event" :
			                  ret == 0 ? "empty" : err_str(ret));
		return 0;
	case SH_EMPTY:
		ret = rd(q, &out, 0);
		if (ret != 0)
			return bench_fail("read on an empty EQ: %s",
			                  ret == 1 ? "got an event" : err_str(ret));
		return 0;
	case SH_TRYWAIT:
		ret = tw(q);
		if (ret != 0)
			return bench_fail("trywait on an empty EQ: %s",
			                  err_str(ret));
		return 0;
	case SH_MT:
		break;
	}
	return bench_fail("not a one-thread case");
}

/* The one-thread cases: items of shape sh until the round is over. */
TEMPLATE int st_run(void *arg, struct bench_round *r, enum shape sh, wr_fn wr,
                    rd_fn rd, tw_fn tw)
{
	struct q *q = &((struct sctx *)arg)->q;
	uint64_t n = 0, t0;
	int k;

	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256; k++, n++)
			if (st_item(q, n, sh, wr, rd, tw))
				return -1;
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

/* ------------------------------------------------------------ threads */

TEMPLATE void *writer(struct bench_mt_worker *w, wr_fn wr)
{
	struct sctx *c = w->mt->ctx;
	struct bench_round mine = bench_mt_producer_round(w->mt);
	struct bench_spin sp = { 0 };
	uint32_t id = (uint32_t)w->id;
	uint64_t n = 0, t0;
	ent_t e;
	int k, ret;

	t0 = bench_now_ns();
	while (!bench_round_over(&mine, n, t0)) {
		for (k = 0; k < 256; k++, n++) {
			ent_make(&e, id, n);
			while ((ret = wr(&c->q, &e)) != 0) {
				if (ret < 0) {
					bench_fail("writer %u: %s", id,
					           err_str(ret));
					goto out;
				}
				if (bench_spin_fail(&sp))
					goto out;
			}
			bench_spin_ok(&sp);
		}
	}
out:
	bench_mt_producer_done(w->mt, w->id, n, sp.retries);
	return NULL;
}

static inline int take(struct bench_mt *m, struct bench_mt_seen *s,
                       const ent_t *e, int strict)
{
	int w = ent_writer(e, m->np);
	uint64_t seq = e->data;

	if (w < 0)
		return bench_fail("torn or foreign event (data %llu)",
		                  (unsigned long long)seq);
	/* One reader sees every event of a writer in order; with several,
	 * each sees an increasing subsequence. */
	return bench_mt_take(m, s, (uint32_t)w, seq, strict,
	                     ev_mix((uint32_t)w, seq));
}

TEMPLATE void *reader(struct bench_mt_worker *w, rd_fn rd)
{
	struct sctx *c = w->mt->ctx;
	struct bench_mt_seen *s = &w->mt->seen[w->id];
	struct bench_spin sp = { 0 };
	int strict = w->mt->nc == 1, done, ret;
	ent_t e;

	for (;;) {
		done = bench_mt_all_produced(w->mt);
		ret = rd(&c->q, &e, 0);
		if (ret == 1) {
			bench_spin_ok(&sp);
			if (take(w->mt, s, &e, strict))
				break;
			continue;
		}
		if (ret < 0) {
			bench_fail("reader %d: %s", w->id, err_str(ret));
			break;
		}
		if (done || bench_spin_fail(&sp))
			break;
	}
	s->retries = sp.retries;
	return NULL;
}

static uint64_t mt_hash(uint32_t w, uint64_t seq)
{
	return ev_mix(w, seq);
}

/* Check hook of the threaded cases: every event read exactly once. */
static int mt_check(void *arg, const struct bench_round *r)
{
	(void)r;
	return bench_mt_check(&((struct sctx *)arg)->mt);
}

/* ------------------------------------------------------------ EQ impls */

struct impl_def {
	const char *name;
	enum kind kind;
	struct fab *fab;        /* K_FI */
	bench_run_fn pairs, peek, empty, trywait, mt;
};

#define ST_OPS(X) op_##X##_write, op_##X##_read, op_##X##_trywait
#define INSTANTIATE(X)                                                          \
static int pairs_##X(void *a, struct bench_round *r)                            \
{ return st_run(a, r, SH_PAIRS, ST_OPS(X)); }                                   \
static int peek_##X(void *a, struct bench_round *r)                             \
{ return st_run(a, r, SH_PEEK, ST_OPS(X)); }                                    \
static int empty_##X(void *a, struct bench_round *r)                            \
{ return st_run(a, r, SH_EMPTY, ST_OPS(X)); }                                   \
__attribute__((unused)) /* the ring has no wait object */                      \
static int trywait_##X(void *a, struct bench_round *r)                          \
{ return st_run(a, r, SH_TRYWAIT, ST_OPS(X)); }                                 \
static void *writer_##X(void *w)                                                \
{ return writer(w, op_##X##_write); }                                           \
static void *reader_##X(void *w)                                                \
{ return reader(w, op_##X##_read); }                                            \
static int mt_##X(void *a, struct bench_round *r)                               \
{ return bench_mt_run(&((struct sctx *)a)->mt, r, writer_##X, reader_##X); }

INSTANTIATE(lfp)
INSTANTIATE(ring)
#ifdef LFP_SINGLE_PRODUCER
INSTANTIATE(lfp_spsc)
#endif
#ifdef HAVE_FABRIC
INSTANTIATE(fi)
#  define FI_FNS pairs_fi, peek_fi, empty_fi, trywait_fi, mt_fi
#else
#  define FI_FNS NULL, NULL, NULL, NULL, NULL
#endif

static const struct impl_def impls[] = {
	{ "lfpoll", K_LFP, NULL, pairs_lfp, peek_lfp, empty_lfp, trywait_lfp,
	  mt_lfp },
	{ "ring", K_RING, NULL, pairs_ring, peek_ring, empty_ring, NULL, mt_ring },
	{ "fi_udp", K_FI, &fab_udp, FI_FNS },
	{ "fi_tcp", K_FI, &fab_tcp, FI_FNS },
};
#define NIMPL BENCH_LEN(impls)

/* lfpoll in the SP/SC cases: lfp_eq_write_spsc and lfp_eq_read_spsc, the
 * calls an SP/SC EQ's users make (lfp_eq_write and lfp_eq_read inline the
 * default mode only).  It takes lfpoll's place in those cases. */
#ifdef LFP_SINGLE_PRODUCER
static const struct impl_def impl_lfp_spsc = {
	"lfpoll", K_LFP, NULL, pairs_lfp_spsc, peek_lfp_spsc, empty_lfp_spsc,
	trywait_lfp_spsc, mt_lfp_spsc
};
#  define IMPL_OF(cd, ii) ((cd)->mode && (ii) == 0 ? &impl_lfp_spsc : &impls[ii])
#else
#  define IMPL_OF(cd, ii) (&impls[ii])
#endif

/* The ring's ns over lfpoll's: "at most 1.1x the raw ring's ns".  Against
 * libfabric the ring is the floor: the EQ is built on it, so a miss is
 * bounded when the bare ring, moving the same entries in the same rounds,
 * misses too (and is at least as fast as the EQ). */
static const struct bench_target t_pairs[] = {
	{ "ring", BENCH_AT_MOST(1.1), NULL, NULL },
	{ "fi_udp", 2.0, "ring", NULL }
};
static const struct bench_target t_one[] = { { "fi_udp", 1.0, NULL, NULL } };
static const struct bench_target t_1w1r[] = {
	{ "ring", BENCH_AT_MOST(1.1), NULL, NULL },
	{ "fi_udp", 15.0, "ring", NULL }
};
static const struct bench_target t_2w2r[] = {
	{ "fi_udp", 10.0, "ring", NULL }
};

static const struct case_def {
	const char *name, *label;
	enum shape shape;
	enum wobj wobj;
	int nw, nr;             /* SH_MT */
	const struct bench_target *targets;
	size_t n_targets;
	/* Ring modes of the EQ and the ring (lfpoll and ring only: every
	 * other implementation is left out of the case). */
	uint64_t mode;
} cases[] = {
	{ "eq/pairs", "one thread: write one event, read it back "
	  "(items = pairs; wait object NONE)", SH_PAIRS, WO_NONE, 0, 0,
	  t_pairs, BENCH_LEN(t_pairs), 0 },
	{ "eq/peek", "one thread: peek (LFP_PEEK / FI_PEEK) on a non-empty EQ",
	  SH_PEEK, WO_NONE, 0, 0, t_one, BENCH_LEN(t_one), 0 },
	{ "eq/empty", "one thread: read on an empty EQ", SH_EMPTY, WO_NONE,
	  0, 0, t_one, BENCH_LEN(t_one), 0 },
	{ "eq/trywait", "one thread: lfp_trywait / fi_trywait on an empty "
	  "FD EQ", SH_TRYWAIT, WO_FD, 0, 0, t_one, BENCH_LEN(t_one), 0 },
	{ "eq/nowait", "one thread: write+read pairs on FD EQs with nobody "
	  "waiting (lfpoll producer system calls counted)", SH_PAIRS, WO_FD,
	  0, 0, NULL, 0, 0 },
	{ "eq/1w1r", "1 writer + 1 reader on 2 CPUs (lfpoll: "
	  "LFP_EQ_BACKPRESSURE; libfabric: unbounded)", SH_MT, WO_NONE, 1, 1,
	  t_1w1r, BENCH_LEN(t_1w1r), 0 },
	{ "eq/2w2r", "2 writers + 2 readers: 4 threads on 2 cores (lfpoll: "
	  "LFP_EQ_BACKPRESSURE; libfabric: unbounded)", SH_MT, WO_NONE, 2, 2,
	  t_2w2r, BENCH_LEN(t_2w2r), 0 },
	{ "eq/spsc-pairs", "one thread: write one event, read it back, EQ and "
	  "ring in SP/SC mode", SH_PAIRS, WO_NONE, 0, 0, NULL, 0, MODE_SPSC },
	{ "eq/spsc-1w1r", "1 writer + 1 reader on 2 CPUs, EQ "
	  "(LFP_EQ_BACKPRESSURE) and ring in SP/SC mode", SH_MT, WO_NONE, 1, 1,
	  t_1w1r, 1, MODE_SPSC },
};
#define NCASE BENCH_LEN(cases)

static struct sctx sctxs[NCASE][NIMPL];

/* eq/nowait: the fixed run of NOWAIT_EVENTS, done in lfpoll's setup. */
static struct {
	int done;               /* 1: counted, -1: no counter (no LFP_STATS) */
	uint64_t events, signals;
} nowait;

static int sig_read(struct sctx *c, uint64_t *v)
{
#ifdef LFP_STATS
	if (c->impl->kind == K_LFP) {
		*v = lfp__eq_stat_signals(c->q.leq);
		return 1;
	}
#else
	(void)c;
#endif
	*v = 0;
	return 0;
}

/* Write NOWAIT_EVENTS events on an FD EQ nobody waits on (reading them
 * back in batches without blocking); count the producer's signals. */
static int nowait_run(struct sctx *c)
{
	uint64_t s0, s1, n = 0;
	ent_t e, o;
	unsigned i;
	int ret;

	if (!sig_read(c, &s0)) {
		nowait.done = -1; /* no counter in this build */
		return 0;
	}
	while (n < NOWAIT_EVENTS) {
		for (i = 0; i < NOWAIT_BATCH; i++) {
			ent_make(&e, 0, n + i);
			ret = op_lfp_write(&c->q, &e);
			if (ret)
				return bench_fail("nowait write: %s",
				                  ret > 0 ? "full" : err_str(ret));
		}
		for (i = 0; i < NOWAIT_BATCH; i++, n++) {
			ret = op_lfp_read(&c->q, &o, 0);
			if (ret != 1 || o.data != n)
				return bench_fail("nowait read %llu: %s",
				                  (unsigned long long)n,
				                  ret == 1 ? "wrong event" :
				                  ret == 0 ? "empty" : err_str(ret));
		}
	}
	sig_read(c, &s1);
	nowait.done = 1;
	nowait.events = n;
	nowait.signals = s1 - s0;
	if (s1 != s0)
		return bench_fail("%llu producer system calls in %llu events "
		                  "with nobody waiting (must be 0)",
		                  (unsigned long long)(s1 - s0),
		                  (unsigned long long)n);
	return 0;
}

static int sctx_setup(void *arg)
{
	struct sctx *c = arg;
	const struct case_def *cd = c->cd;
	ent_t e;
	int ret;

	if (q_open(&c->q, c->impl->kind, c->impl->fab, cd->wobj,
	           (cd->shape == SH_MT && c->impl->kind == K_LFP ?
	            LFP_EQ_BACKPRESSURE : 0) | cd->mode))
		return -1;
	c->sig_events = c->sig_count = 0;
	if (cd->shape == SH_PEEK) {
		ent_make(&e, 0, PEEK_SEQ);
		ret = c->impl->kind == K_LFP ? op_lfp_write(&c->q, &e) :
		      c->impl->kind == K_RING ? op_ring_write(&c->q, &e) :
#ifdef HAVE_FABRIC
		      op_fi_write(&c->q, &e);
#else
		      -ENOSYS;
#endif
		if (ret) {
			bench_fail("peek setup write: %s", err_str(ret));
			goto fail;
		}
	}
	if (cd->shape == SH_PAIRS && cd->wobj != WO_NONE &&
	    c->impl->kind == K_LFP && nowait_run(c))
		goto fail;
	return 0;
fail:
	q_close(&c->q); /* the harness calls teardown only after a setup that worked */
	return -1;
}

static void sctx_teardown(void *arg)
{
	q_close(&((struct sctx *)arg)->q);
}

/* eq/nowait: every round of lfpoll must leave the signal count alone. */
static int nowait_round(void *arg, struct bench_round *r)
{
	struct sctx *c = arg;
	uint64_t s0, s1;
	int ret;

	sig_read(c, &s0);
	ret = c->impl->pairs(arg, r);
	sig_read(c, &s1);
	c->sig_events += r->items;
	c->sig_count += s1 - s0;
	if (!ret && s1 != s0)
		return bench_fail("%llu producer system calls in %llu events "
		                  "with nobody waiting (must be 0)",
		                  (unsigned long long)(s1 - s0),
		                  (unsigned long long)r->items);
	return ret;
}


static void run_eq_case(size_t ci)
{
	const struct case_def *cd = &cases[ci];
	struct bench_impl bi[NIMPL];
	int mt = cd->shape == SH_MT, nowait_case = cd->shape == SH_PAIRS &&
	                                        cd->wobj != WO_NONE;
	struct bench_case bc = {
		.name = cd->name,
		.label = cd->label,
		.threads = mt ? cd->nw + cd->nr : 1,
		.impls = bi,
		.n_impls = cd->mode ? 2 : NIMPL,
		.targets = cd->targets,
		.n_targets = cd->n_targets,
		.check = mt ? mt_check : NULL,
		/* nowait also runs an untimed million-event syscall count: no instr figure */
		.instr_items = mt || nowait_case ? 0 : INSTR_ITEMS,
	};
	struct sctx *lc = &sctxs[ci][0];
	size_t ii;

	if (cd->mode == 0 && strstr(cd->name, "/spsc-")) {
		bench_case_skip(cd->name, cd->label, NO_MODES);
		return;
	}
	for (ii = 0; ii < NIMPL; ii++) {
		const struct impl_def *d = IMPL_OF(cd, ii);
		struct sctx *c = &sctxs[ci][ii];
		bench_run_fn run[] = {
			[SH_PAIRS] = d->pairs, [SH_PEEK] = d->peek,
			[SH_EMPTY] = d->empty, [SH_TRYWAIT] = d->trywait,
			[SH_MT] = d->mt,
		};

		c->impl = d;
		c->cd = cd;
		c->mt = (struct bench_mt){
			.np = cd->nw, .nc = cd->nr, .ctx = c, .hash = mt_hash,
			.who = "writer", .made = "written", .took = "read",
		};
		bi[ii] = (struct bench_impl){
			.name = d->name,
			.skip = d->fab ? d->fab->skip :
			        !run[cd->shape] ? "a ring has no wait object" : NULL,
			.arg = c,
			.setup = sctx_setup,
			.teardown = sctx_teardown,
			.run = nowait_case && run[cd->shape] ? nowait_round
			                                  : run[cd->shape],
		};
	}
	bench_case_run(&bc);
	if (nowait_case && nowait.done < 0)
		printf("# %s: lfpoll producer system calls not counted (built "
		       "without -DLFP_STATS)\n", cd->name);
	if (nowait_case && nowait.done > 0) {
#ifdef LFP_STATS
		printf("# %s: lfpoll producer system calls with nobody waiting: "
		       "%llu in %llu events (%.6f per event), %llu in %llu "
		       "timed events; target 0 %s\n", cd->name,
		       (unsigned long long)nowait.signals,
		       (unsigned long long)nowait.events,
		       (double)nowait.signals / (double)nowait.events,
		       (unsigned long long)lc->sig_count,
		       (unsigned long long)lc->sig_events,
		       nowait.signals || lc->sig_count ? "MISSED" : "MET");
#endif
		fflush(stdout);
	}
	(void)lc;
}


int main(int argc, char **argv)
{
	size_t ci;
	int status;

	bench_init("eq", argc, argv);
	fab_open_eq(&fab_udp, &fab_tcp);
	for (ci = 0; ci < NCASE; ci++)
		run_eq_case(ci);
	status = bench_finish();
	fab_close_eq(&fab_udp, &fab_tcp);
	return status;
}
