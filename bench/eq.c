/*
 * bench/eq.c: lfpoll's event queue against libfabric's own EQ, side by side
 * in one run: the pure util EQ (provider "udp", FI_EP_DGRAM, on 127.0.0.1)
 * and the EQ most users get (provider "tcp", FI_EP_MSG).  No libfabric
 * framework is set up beyond fi_getinfo + fi_fabric + fi_eq_open (size 1024,
 * FI_WRITE).  Every event carries the same 24-byte payload (struct
 * fi_eq_entry; lfpoll's EQ is opened with entry_size = sizeof(struct
 * fi_eq_entry)).
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
 *   eq/rtt-p50    blocking round trip: sread ping-pong between two EQs on
 *                 two threads on different CPUs, for lfpoll FD (the
 *                 subject), MUTEX_COND and UNSPEC and libfabric udp/tcp with
 *                 FI_WAIT_FD and FI_WAIT_UNSPEC; ns/item is each round's
 *                 median round trip.  Floors between the same two threads in
 *                 the same run: raw eventfd + poll, futex, condvar
 *   eq/rtt-p99    the same, ns/item is each round's 99th percentile
 *   eq/rtt-block-p50, -p99   the same with lfpoll as built with
 *                 LFP_SPIN_COUNT=0 (no bounded spin before it arms and
 *                 sleeps): in a tight ping-pong the default spin catches
 *                 nearly every reply, so eq/rtt-p* hardly sleeps; these two
 *                 time lfpoll's wake path itself
 *
 * Beside libfabric, "ring" moves the same entries through a bare lfp_ring
 * (the typed front end, no event code, no error queue, no wait object):
 * the floor the EQ is built on, which eq/1w1r targets within 1.1x.
 *
 * In the threaded cases lfpoll's EQ is opened with LFP_EQ_BACKPRESSURE
 * (writers retry on -EAGAIN, so it never overruns); libfabric's EQ is
 * unbounded.  Each round counts from the start of the threads until the
 * readers have drained everything, so a writer running ahead of its reader
 * buys nothing.  Every event carries its writer, sequence number and a check
 * word; readers reject torn events and per-writer reordering, and after each
 * round the count, sum and hash-sum of sequence numbers per writer must
 * equal what was written (exactly once).  The ping-pongs check that every
 * reply carries the sequence number just sent.  Any failure makes the
 * program exit non-zero.
 *
 * --instr runs only the one-thread cases, once, for a fixed count, for
 * valgrind --tool=callgrind.  Build with -DBENCH_INSTR to keep each EQ
 * operation in its own function (op_lfp_*, op_fi_*), then count with
 * --toggle-collect='op_lfp_*' and divide by the item count.  Select one case
 * at a time (--case eq/pairs, ...); eq/nowait's setup adds its fixed run of
 * 1,000,000 events to that count.
 */
#define _GNU_SOURCE

/*
 * LFP_SPIN_COUNT is lfpoll's documented knob (lfpoll(3)): how many times a
 * blocking call re-checks before it arms and sleeps, default 128.  It is
 * routed through a variable so that one build times lfp_eq_sread both as
 * shipped and as built with -DLFP_SPIN_COUNT=0 (eq/rtt-block-*).
 */
#ifdef LFP_SPIN_COUNT
enum { BENCH_SPIN_DEFAULT = LFP_SPIN_COUNT }; /* the value given at build */
#  undef LFP_SPIN_COUNT
#else
enum { BENCH_SPIN_DEFAULT = 128 }; /* lfpoll's default, docs/man/lfpoll.3.md */
#endif
static int bench_spin_count = BENCH_SPIN_DEFAULT;
#define LFP_SPIN_COUNT bench_spin_count

#include <lfpoll/eq.h>

#include "harness.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_FABRIC
#  include <rdma/fabric.h>
#  include <rdma/fi_eq.h>
#  include <rdma/fi_errno.h>
#endif

#define EQ_SIZE       1024
#define INSTR_ITEMS   (1u << 16)
#define NOWAIT_EVENTS 1000000u
#define NOWAIT_BATCH  1000u
#define PEEK_SEQ      4242u
#define RTT_TIMEOUT   1000           /* ms, per blocking call; loops on expiry */
#define RTT_MAX_LAT   (1u << 20)     /* latency samples kept per round */
#define STOP_SEQ      UINT64_MAX

typedef struct lfp_eq_entry ent_t;

#ifdef HAVE_FABRIC
_Static_assert(sizeof(struct lfp_eq_entry) == sizeof(struct fi_eq_entry),
               "lfpoll and libfabric EQ entries have the same size");
#  define ENTRY_SIZE sizeof(struct fi_eq_entry)
#else
#  define ENTRY_SIZE sizeof(struct lfp_eq_entry)
#endif

#define OP BENCH_OP
#define TEMPLATE BENCH_TEMPLATE

/* ------------------------------------------------------------ events */

static inline uint64_t ev_mix(uint32_t w, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(w + 1) << 56) ^
	       0x5bd1e995u;
}

static inline void ent_make(ent_t *e, uint32_t w, uint64_t seq)
{
	e->fid = (struct lfp_fid *)(uintptr_t)ev_mix(w, seq);
	e->context = (void *)(uintptr_t)(w + 1);
	e->data = seq;
}

/* The writer of a well-formed event, or -1 for a torn or foreign one. */
static inline int ent_writer(const ent_t *e, int nw)
{
	uintptr_t c = (uintptr_t)e->context;

	if (c < 1 || c > (uintptr_t)nw)
		return -1;
	if ((uintptr_t)e->fid != (uintptr_t)ev_mix((uint32_t)(c - 1), e->data))
		return -1;
	return (int)(c - 1);
}

/* ------------------------------------------------------------ queues */

enum kind { K_LFP, K_RING, K_FI, K_EFD, K_FUTEX, K_COND };
/* What a case does: one thread (write+read pairs, peek, read on empty,
 * trywait), or writers and readers on their own threads. */
enum shape { SH_PAIRS, SH_PEEK, SH_EMPTY, SH_TRYWAIT, SH_MT };
enum wobj { WO_NONE, WO_FD, WO_UNSPEC, WO_MCOND };

/* A libfabric fabric opened once per provider; skip says why not. */
struct fab {
	const char *prov;
	const char *skip;
	char why[160];
#ifdef HAVE_FABRIC
	struct fid_fabric *fabric;
#endif
};

static struct fab fab_udp = { .prov = "udp" }, fab_tcp = { .prov = "tcp" };

struct q {
	struct lfp_eq *leq;
	struct lfp_fid *lfid;
	struct lfp_ring *ring;  /* K_RING */
#ifdef HAVE_FABRIC
	struct fid_eq *feq;
	struct fid_fabric *fabric;
#endif
};

#ifdef HAVE_FABRIC
#  define FI_WAIT(x) x
#else
#  define FI_WAIT(x) 0
#endif

/* enum wobj as lfpoll's and libfabric's wait objects. */
static const struct {
	enum lfp_wait_obj lfp;
	int fi;                 /* enum fi_wait_obj */
} wait_objs[] = {
	[WO_NONE] = { LFP_WAIT_NONE, FI_WAIT(FI_WAIT_NONE) },
	[WO_FD] = { LFP_WAIT_FD, FI_WAIT(FI_WAIT_FD) },
	[WO_UNSPEC] = { LFP_WAIT_UNSPEC, FI_WAIT(FI_WAIT_UNSPEC) },
	[WO_MCOND] = { LFP_WAIT_MUTEX_COND, FI_WAIT(FI_WAIT_MUTEX_COND) },
};

static int q_open(struct q *q, enum kind k, struct fab *f, enum wobj w, int bp)
{
	int ret;

	memset(q, 0, sizeof(*q));
	if (k == K_LFP) {
		struct lfp_eq_attr a = {
			.size = EQ_SIZE,
			.flags = LFP_WRITE | (bp ? LFP_EQ_BACKPRESSURE : 0),
			.wait_obj = wait_objs[w].lfp,
			.entry_size = ENTRY_SIZE,
		};

		ret = lfp_eq_open(&a, &q->leq, NULL);
		if (ret)
			return bench_fail("lfp_eq_open: %s", lfp_strerror(ret));
		q->lfid = &q->leq->fid;
		return 0;
	}
	if (k == K_RING) {
		ret = lfp_ring_create(EQ_SIZE, sizeof(ent_t), &q->ring);
		if (ret)
			return bench_fail("lfp_ring_create: %s", lfp_strerror(ret));
		return 0;
	}
#ifdef HAVE_FABRIC
	if (k == K_FI) {
		struct fi_eq_attr a = { .size = EQ_SIZE, .flags = FI_WRITE,
		                        .wait_obj = wait_objs[w].fi };

		ret = fi_eq_open(f->fabric, &a, &q->feq, NULL);
		if (ret)
			return bench_fail("fi_eq_open(%s): %s", f->prov,
			                  fi_strerror(-ret));
		q->fabric = f->fabric;
		return 0;
	}
#else
	(void)f;
#endif
	return bench_fail("no EQ of this kind");
}

static void q_close(struct q *q)
{
	if (q->leq)
		lfp_eq_close(q->leq);
	lfp_ring_destroy(q->ring);
#ifdef HAVE_FABRIC
	if (q->feq)
		fi_close(&q->feq->fid);
#endif
	memset(q, 0, sizeof(*q));
}

/*
 * EQ operations, one set per kind, all with these shapes:
 *   write    0, 1 when full (retry), or a negative error
 *   read     1 with an event, 0 when empty, or a negative error
 *   trywait  0 (safe to block), or a negative error (-EAGAIN: work pending)
 *   sread    1 with an event, 0 when the timeout expired, or an error
 */
typedef int (*wr_fn)(struct q *q, const ent_t *e);
typedef int (*rd_fn)(struct q *q, ent_t *e, int peek);
typedef int (*tw_fn)(struct q *q);
typedef int (*sr_fn)(struct q *q, ent_t *e, int timeout);

/* ---- lfpoll */

OP int op_lfp_write(struct q *q, const ent_t *e)
{
	ssize_t r = lfp_eq_write(q->leq, LFP_NOTIFY, e, sizeof(*e), 0);

	if (r == (ssize_t)sizeof(*e))
		return 0;
	return r == -EAGAIN ? 1 : (int)r;
}

OP int op_lfp_read(struct q *q, ent_t *e, int peek)
{
	uint32_t ev;
	ssize_t r = lfp_eq_read(q->leq, &ev, e, sizeof(*e),
	                        peek ? LFP_PEEK : 0);

	if (r == (ssize_t)sizeof(*e))
		return ev == LFP_NOTIFY ? 1 : -EPROTO;
	return r == -EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

OP int op_lfp_trywait(struct q *q)
{
	return lfp_trywait(&q->lfid, 1);
}

OP int op_lfp_sread(struct q *q, ent_t *e, int timeout)
{
	uint32_t ev;
	ssize_t r = lfp_eq_sread(q->leq, &ev, e, sizeof(*e), timeout, 0);

	if (r == (ssize_t)sizeof(*e))
		return ev == LFP_NOTIFY ? 1 : -EPROTO;
	return r == -EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

/* ---- the raw ring: the same entries in an lfp_ring, the EQ's floor */

LFP_RING_PROTOTYPE(ent, ent_t)

OP int op_ring_write(struct q *q, const ent_t *e)
{
	int r = lfp_ring_enqueue_ent(q->ring, e);

	return r == -EAGAIN ? 1 : r;
}

OP int op_ring_read(struct q *q, ent_t *e, int peek)
{
	uint64_t ticket;
	ssize_t r;
	int ret;

	if (!peek) {
		ret = lfp_ring_dequeue_ent(q->ring, e);
		return ret == 0 ? 1 : ret == -EAGAIN ? 0 : ret;
	}
	r = lfp_ring_peek(q->ring, e, sizeof(*e), &ticket);
	if (r == (ssize_t)sizeof(*e))
		return 1;
	return r == -EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

OP int op_ring_trywait(struct q *q)
{
	(void)q;
	return -ENOSYS; /* a ring has no wait object: not in the impl table */
}

/* ---- libfabric */
#ifdef HAVE_FABRIC

OP int op_fi_write(struct q *q, const ent_t *e)
{
	ssize_t r = fi_eq_write(q->feq, FI_NOTIFY, e, sizeof(*e), 0);

	if (r == (ssize_t)sizeof(*e))
		return 0;
	return r == -FI_EAGAIN ? 1 : r < 0 ? (int)r : -EPROTO;
}

OP int op_fi_read(struct q *q, ent_t *e, int peek)
{
	uint32_t ev;
	ssize_t r = fi_eq_read(q->feq, &ev, e, sizeof(*e), peek ? FI_PEEK : 0);

	if (r == (ssize_t)sizeof(*e))
		return ev == FI_NOTIFY ? 1 : -EPROTO;
	return r == -FI_EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

OP int op_fi_trywait(struct q *q)
{
	struct fid *fid = &q->feq->fid;

	return fi_trywait(q->fabric, &fid, 1);
}

OP int op_fi_sread(struct q *q, ent_t *e, int timeout)
{
	uint32_t ev;
	ssize_t r = fi_eq_sread(q->feq, &ev, e, sizeof(*e), timeout, 0);

	if (r == (ssize_t)sizeof(*e))
		return ev == FI_NOTIFY ? 1 : -EPROTO;
	if (r == -FI_EAGAIN || r == -FI_ETIMEDOUT)
		return 0;
	return r < 0 ? (int)r : -EPROTO;
}
#endif /* HAVE_FABRIC */

static const char *err_str(int err)
{
#ifdef HAVE_FABRIC
	return fi_strerror(err < 0 ? -err : err);
#else
	return lfp_strerror(err);
#endif
}

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

/* The ring's ns over lfpoll's: 0.91 is "at most 1.1x the raw ring's ns". */
static const struct bench_target t_pairs[] = { { "fi_udp", 2.0 } };
static const struct bench_target t_one[] = { { "fi_udp", 1.0 } };
static const struct bench_target t_1w1r[] = { { "ring", 0.91 },
                                              { "fi_udp", 15.0 } };
static const struct bench_target t_2w2r[] = { { "fi_udp", 10.0 } };

static const struct case_def {
	const char *name, *label;
	enum shape shape;
	enum wobj wobj;
	int nw, nr;             /* SH_MT */
	const struct bench_target *targets;
	size_t n_targets;
} cases[] = {
	{ "eq/pairs", "one thread: write one event, read it back "
	  "(items = pairs; wait object NONE)", SH_PAIRS, WO_NONE, 0, 0,
	  t_pairs, BENCH_LEN(t_pairs) },
	{ "eq/peek", "one thread: peek (LFP_PEEK / FI_PEEK) on a non-empty EQ",
	  SH_PEEK, WO_NONE, 0, 0, t_one, BENCH_LEN(t_one) },
	{ "eq/empty", "one thread: read on an empty EQ", SH_EMPTY, WO_NONE,
	  0, 0, t_one, BENCH_LEN(t_one) },
	{ "eq/trywait", "one thread: lfp_trywait / fi_trywait on an empty "
	  "FD EQ", SH_TRYWAIT, WO_FD, 0, 0, t_one, BENCH_LEN(t_one) },
	{ "eq/nowait", "one thread: write+read pairs on FD EQs with nobody "
	  "waiting (lfpoll producer system calls counted)", SH_PAIRS, WO_FD,
	  0, 0, NULL, 0 },
	{ "eq/1w1r", "1 writer + 1 reader on 2 CPUs (lfpoll: "
	  "LFP_EQ_BACKPRESSURE; libfabric: unbounded)", SH_MT, WO_NONE, 1, 1,
	  t_1w1r, BENCH_LEN(t_1w1r) },
	{ "eq/2w2r", "2 writers + 2 readers: 4 threads on 2 cores (lfpoll: "
	  "LFP_EQ_BACKPRESSURE; libfabric: unbounded)", SH_MT, WO_NONE, 2, 2,
	  t_2w2r, BENCH_LEN(t_2w2r) },
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
	           cd->shape == SH_MT))
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

/* ------------------------------------------------------------ ping-pong */

/*
 * Two threads, two channels: A (CPU 0) sends n on channel 0 and blocks for
 * the reply on channel 1; B (CPU 1) blocks on channel 0 and sends what it
 * got back on channel 1.  A times each round trip.  Channels are EQs read
 * with sread, or the floors: an eventfd + poll, a futex word, a condvar.
 * Every blocking call has a RTT_TIMEOUT ms timeout so that a lost wakeup
 * shows as a stall, not a hang.
 */
/* One direction of a ping-pong: an EQ, or one of the floors' objects. */
struct chan {
	struct q q;
	int efd;                /* eventfd_poll */
	uint32_t fw;            /* futex word */
	pthread_mutex_t m;      /* condvar */
	pthread_cond_t cv;
	uint64_t cseq, seen;
	uint64_t val;           /* the floors' message */
} __attribute__((aligned(128)));

struct rctx {
	const struct rtt_def *d;
	int pct;                /* 50 or 99: what a round reports */
	int nospin;             /* lfpoll: LFP_SPIN_COUNT 0 (no spin before sleeping) */
	sr_fn sread;
	wr_fn write;
	struct chan ch[2];
	uint64_t msgs, sigs;    /* lfpoll: messages and producer signals */
	int failed;
	uint32_t *lat;
	uint64_t nlat;
	const struct bench_round *round;
} __attribute__((aligned(128)));

struct rtt_def {
	const char *name;
	enum kind kind;
	struct fab *fab;
	enum wobj wobj;
};

static const struct rtt_def rtts[] = {
	{ "lfpoll_fd", K_LFP, NULL, WO_FD },
	{ "lfpoll_mcond", K_LFP, NULL, WO_MCOND },
	{ "lfpoll_unsp", K_LFP, NULL, WO_UNSPEC },
	{ "fi_udp_fd", K_FI, &fab_udp, WO_FD },
	{ "fi_udp_unsp", K_FI, &fab_udp, WO_UNSPEC },
	{ "fi_tcp_fd", K_FI, &fab_tcp, WO_FD },
	{ "fi_tcp_unsp", K_FI, &fab_tcp, WO_UNSPEC },
	{ "eventfd_poll", K_EFD, NULL, WO_NONE },
	{ "futex", K_FUTEX, NULL, WO_NONE },
	{ "condvar", K_COND, NULL, WO_NONE },
};
#define NRTT BENCH_LEN(rtts)

static struct rctx rctxs[4][NRTT]; /* [rtt case][impl] */

static int ch_send(struct rctx *c, int ch, uint64_t v)
{
	struct chan *k = &c->ch[ch];
	uint64_t one = 1;
	ent_t e;
	int ret;

	switch (c->d->kind) {
	case K_RING:
		return bench_fail("a ring is not a blocking channel");
	case K_LFP:
	case K_FI:
		ent_make(&e, (uint32_t)ch, v);
		ret = c->write(&k->q, &e);
		if (ret)
			return bench_fail("ping-pong write: %s",
			                  ret > 0 ? "full" : err_str(ret));
		return 0;
	case K_EFD:
		__atomic_store_n(&k->val, v, __ATOMIC_RELEASE);
		if (write(k->efd, &one, sizeof(one)) != sizeof(one))
			return bench_fail("eventfd write: %s", strerror(errno));
		return 0;
	case K_FUTEX:
		__atomic_store_n(&k->val, v, __ATOMIC_RELAXED);
		__atomic_store_n(&k->fw, 1, __ATOMIC_RELEASE);
		if (syscall(SYS_futex, &k->fw, FUTEX_WAKE_PRIVATE, 1, NULL,
		            NULL, 0) < 0)
			return bench_fail("FUTEX_WAKE: %s", strerror(errno));
		return 0;
	case K_COND:
		pthread_mutex_lock(&k->m);
		k->val = v;
		k->cseq++;
		pthread_cond_signal(&k->cv);
		pthread_mutex_unlock(&k->m);
		return 0;
	}
	return -1;
}

/* One blocking receive: 1 with *v, 0 when the timeout expired, or < 0. */
static int ch_recv_once(struct rctx *c, int ch, uint64_t *v)
{
	struct chan *k = &c->ch[ch];
	struct timespec ts;
	struct pollfd pfd;
	uint64_t x;
	ent_t e;
	int ret;

	switch (c->d->kind) {
	case K_RING:
		return bench_fail("a ring is not a blocking channel");
	case K_LFP:
	case K_FI:
		ret = c->sread(&k->q, &e, RTT_TIMEOUT);
		if (ret == 1) {
			if (ent_writer(&e, 2) != ch)
				return bench_fail("ping-pong: torn event");
			*v = e.data;
		} else if (ret < 0) {
			return bench_fail("sread: %s", err_str(ret));
		}
		return ret;
	case K_EFD:
		pfd = (struct pollfd){ .fd = k->efd, .events = POLLIN };
		ret = poll(&pfd, 1, RTT_TIMEOUT);
		if (ret < 0 && errno != EINTR)
			return bench_fail("poll: %s", strerror(errno));
		if (ret <= 0)
			return 0;
		if (read(k->efd, &x, sizeof(x)) != sizeof(x)) {
			if (errno == EAGAIN)
				return 0;
			return bench_fail("eventfd read: %s", strerror(errno));
		}
		*v = __atomic_load_n(&k->val, __ATOMIC_ACQUIRE);
		return 1;
	case K_FUTEX:
		ts = (struct timespec){ RTT_TIMEOUT / 1000,
		                        (RTT_TIMEOUT % 1000) * 1000000L };
		while (!__atomic_load_n(&k->fw, __ATOMIC_ACQUIRE)) {
			if (syscall(SYS_futex, &k->fw, FUTEX_WAIT_PRIVATE, 0,
			            &ts, NULL, 0) < 0) {
				if (errno == ETIMEDOUT)
					return 0;
				if (errno != EAGAIN && errno != EINTR)
					return bench_fail("FUTEX_WAIT: %s",
					                  strerror(errno));
			}
		}
		__atomic_store_n(&k->fw, 0, __ATOMIC_RELAXED);
		*v = __atomic_load_n(&k->val, __ATOMIC_RELAXED);
		return 1;
	case K_COND:
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += RTT_TIMEOUT / 1000;
		ret = 0;
		pthread_mutex_lock(&k->m);
		while (k->cseq == k->seen && ret == 0)
			ret = pthread_cond_timedwait(&k->cv, &k->m, &ts);
		if (k->cseq != k->seen) {
			k->seen = k->cseq;
			*v = k->val;
			ret = 1;
		} else {
			ret = 0;
		}
		pthread_mutex_unlock(&k->m);
		return ret;
	}
	return -1;
}

/* Block until a message arrives; < 0 on a failure anywhere or a stall. */
static int ch_recv(struct rctx *c, int ch, uint64_t *v)
{
	uint64_t t0 = 0;
	int ret;

	for (;;) {
		ret = ch_recv_once(c, ch, v);
		if (ret)
			return ret < 0 ? -1 : 0;
		if (bench_failed())
			return -1;
		if (!t0) {
			t0 = bench_now_ns();
		} else if (bench_now_ns() - t0 > 10ull * 1000000000u) {
			return bench_fail("no message for 10 s on channel %d "
			                  "(lost wakeup?)", ch);
		}
	}
}

static void *pinger(void *arg)
{
	struct rctx *c = arg;
	const struct bench_round *r = c->round;
	uint64_t n = 0, t0, t, v;

	t0 = bench_now_ns();
	while (n < RTT_MAX_LAT && !bench_round_over(r, n, t0)) {
		t = bench_now_ns();
		if (ch_send(c, 0, n) || ch_recv(c, 1, &v))
			break;
		t = bench_now_ns() - t;
		if (v != n) {
			bench_fail("round trip %llu came back as %llu",
			           (unsigned long long)n, (unsigned long long)v);
			break;
		}
		c->lat[n++] = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
	}
	c->nlat = n;
	ch_send(c, 0, STOP_SEQ);
	return NULL;
}

static void *ponger(void *arg)
{
	struct rctx *c = arg;
	uint64_t v;

	for (;;) {
		if (ch_recv(c, 0, &v) || v == STOP_SEQ)
			break;
		if (ch_send(c, 1, v))
			break;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint64_t lfp_signals(struct rctx *c)
{
#ifdef LFP_STATS
	if (c->d->kind == K_LFP)
		return lfp__eq_stat_signals(c->ch[0].q.leq) +
		       lfp__eq_stat_signals(c->ch[1].q.leq);
#else
	(void)c;
#endif
	return 0;
}

struct rtt_thr {
	void *(*fn)(void *);
	struct rctx *c;
};

static void *rtt_thread(void *p)
{
	struct rtt_thr *t = p;

	return t->fn(t->c);
}

static int rtt_run(void *arg, struct bench_round *r)
{
	struct rctx *c = arg;
	struct rtt_thr t[2] = { { pinger, c }, { ponger, c } };
	void *args[2] = { &t[0], &t[1] };
	static const int cpus[2] = { 0, 1 };
	uint64_t s0, n, rank;

	c->round = r;
	c->nlat = 0;
	/* Before the threads start: they only read it. */
	bench_spin_count = c->nospin ? 0 : BENCH_SPIN_DEFAULT;
	s0 = lfp_signals(c);
	bench_threads(2, rtt_thread, args, cpus);
	bench_spin_count = BENCH_SPIN_DEFAULT;
	if (bench_failed()) {
		c->failed = 1;
		return -1;
	}
	n = c->nlat;
	c->msgs += 2 * n + 1;   /* + the stop message */
	c->sigs += lfp_signals(c) - s0;
	if (!n)
		return bench_fail("no round trip completed");
	/* Nearest rank: the smallest sample with pct % of them at or below. */
	qsort(c->lat, n, sizeof(c->lat[0]), cmp_u32);
	rank = (n * (uint64_t)c->pct + 99) / 100;
	r->items = n;
	r->ns = (uint64_t)c->lat[rank ? rank - 1 : 0] * n;
	return 0;
}

static void rctx_teardown(void *arg)
{
	struct rctx *c = arg;
	struct chan *k;
	int i;

	for (i = 0; i < 2; i++) {
		k = &c->ch[i];
		q_close(&k->q);
		if (k->efd >= 0)
			close(k->efd);
		k->efd = -1;
		if (c->d->kind == K_COND) {
			pthread_cond_destroy(&k->cv);
			pthread_mutex_destroy(&k->m);
		}
	}
	free(c->lat);
	c->lat = NULL;
}

static int rctx_setup(void *arg)
{
	struct rctx *c = arg;
	pthread_condattr_t ca;
	struct chan *k;
	int i;

	memset(c->ch, 0, sizeof(c->ch));
	c->ch[0].efd = c->ch[1].efd = -1;
	c->msgs = c->sigs = 0;
	c->failed = 0;
	c->sread = NULL;
	c->write = NULL;
	if (c->d->kind == K_LFP) {
		c->sread = op_lfp_sread;
		c->write = op_lfp_write;
	}
#ifdef HAVE_FABRIC
	if (c->d->kind == K_FI) {
		c->sread = op_fi_sread;
		c->write = op_fi_write;
	}
#endif
	if (c->d->kind == K_COND) {
		/* Initialised first so that teardown can always destroy them. */
		for (i = 0; i < 2; i++) {
			k = &c->ch[i];
			if (pthread_condattr_init(&ca))
				return bench_fail("pthread_condattr_init failed");
			if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
			    pthread_mutex_init(&k->m, NULL) ||
			    pthread_cond_init(&k->cv, &ca)) {
				pthread_condattr_destroy(&ca);
				return bench_fail("condvar init failed");
			}
			pthread_condattr_destroy(&ca);
		}
	}
	c->lat = malloc(RTT_MAX_LAT * sizeof(c->lat[0]));
	if (!c->lat)
		goto fail;
	for (i = 0; i < 2; i++) {
		k = &c->ch[i];
		if (c->d->kind == K_LFP || c->d->kind == K_FI) {
			if (q_open(&k->q, c->d->kind, c->d->fab, c->d->wobj, 0))
				goto fail;
		} else if (c->d->kind == K_EFD) {
			k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (k->efd < 0) {
				bench_fail("eventfd: %s", strerror(errno));
				goto fail;
			}
		}
	}
	return 0;
fail:
	if (!bench_failed())
		bench_fail("out of memory");
	rctx_teardown(c);
	return -1;
}

/* lfpoll FD within 10 % of the raw eventfd + poll floor (lower is better:
 * the harness ratio is floor ns / lfpoll ns, so >= 1 / 1.1). */
static const struct bench_target t_rtt[] = { { "eventfd_poll", 0.91 } };

/* ------------------------------------------------------------ main */

static void fab_open(struct fab *f, int ep_type, const char *ep_name)
{
#ifdef HAVE_FABRIC
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints || !(hints->fabric_attr->prov_name = strdup(f->prov))) {
		snprintf(f->why, sizeof(f->why), "fi_allocinfo failed");
		f->skip = f->why;
		fi_freeinfo(hints);
		return;
	}
	hints->ep_attr->type = (enum fi_ep_type)ep_type;
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	                 "127.0.0.1", NULL, 0, hints, &info);
	if (ret) {
		snprintf(f->why, sizeof(f->why),
		         "fi_getinfo(prov %s, %s, 127.0.0.1): %s", f->prov,
		         ep_name, fi_strerror(-ret));
		f->skip = f->why;
	} else if ((ret = fi_fabric(info->fabric_attr, &f->fabric, NULL))) {
		snprintf(f->why, sizeof(f->why), "fi_fabric(%s): %s", f->prov,
		         fi_strerror(-ret));
		f->skip = f->why;
		f->fabric = NULL;
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
#else
	(void)ep_type;
	(void)ep_name;
	f->skip = "libfabric not found by pkg-config: libfabric-dev";
#endif
}

static void fab_close(struct fab *f)
{
#ifdef HAVE_FABRIC
	if (f->fabric)
		fi_close(&f->fabric->fid);
	f->fabric = NULL;
#else
	(void)f;
#endif
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
		.n_impls = NIMPL,
		.targets = cd->targets,
		.n_targets = cd->n_targets,
		.check = mt ? mt_check : NULL,
		/* nowait also runs an untimed million-event syscall count: no instr figure */
		.instr_items = mt || nowait_case ? 0 : INSTR_ITEMS,
	};
	struct sctx *lc = &sctxs[ci][0];
	size_t ii;

	for (ii = 0; ii < NIMPL; ii++) {
		const struct impl_def *d = &impls[ii];
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

static const struct rtt_case {
	const char *name, *label;
	int pct, nospin;
	const struct bench_target *targets;
	size_t n_targets;
} rtt_cases[] = {
	{ "eq/rtt-p50", "blocking round trip: sread ping-pong on 2 EQs between 2 "
	  "threads on 2 CPUs, ns/item = the round's median (unsp = "
	  "WAIT_UNSPEC, mcond = WAIT_MUTEX_COND; floors: eventfd_poll, futex, "
	  "condvar)", 50, 0, t_rtt, BENCH_LEN(t_rtt) },
	{ "eq/rtt-p99", "as eq/rtt-p50, ns/item = the round's 99th percentile",
	  99, 0, NULL, 0 },
	{ "eq/rtt-block-p50", "as eq/rtt-p50 with lfpoll's LFP_SPIN_COUNT = 0 "
	  "(every wait arms and sleeps: the wake path), ns/item = median",
	  50, 1, t_rtt, BENCH_LEN(t_rtt) },
	{ "eq/rtt-block-p99", "as eq/rtt-block-p50, ns/item = the round's 99th "
	  "percentile", 99, 1, NULL, 0 },
};
#define NRTTCASE BENCH_LEN(rtt_cases)
_Static_assert(BENCH_LEN(rtt_cases) == BENCH_LEN(rctxs),
               "one row of rctxs per ping-pong case");

static void run_rtt_case(size_t which)
{
	const struct rtt_case *rc = &rtt_cases[which];
	struct bench_impl bi[NRTT];
	struct bench_case bc = {
		.name = rc->name,
		.label = rc->label,
		.threads = 2,
		.impls = bi,
		.n_impls = NRTT,
		.targets = rc->targets,
		.n_targets = rc->n_targets,
	};
	size_t ii;
	int any = 0;

	for (ii = 0; ii < NRTT; ii++) {
		struct rctx *c = &rctxs[which][ii];

		c->d = &rtts[ii];
		c->pct = rc->pct;
		c->nospin = rc->nospin;
		c->msgs = c->sigs = 0;
		bi[ii] = (struct bench_impl){
			.name = rtts[ii].name,
			.skip = rtts[ii].fab ? rtts[ii].fab->skip : NULL,
			.arg = c,
			.run = rtt_run,
			.setup = rctx_setup,
			.teardown = rctx_teardown,
		};
	}
	bench_case_run(&bc);
	for (ii = 0; ii < NRTT; ii++) {
		struct rctx *c = &rctxs[which][ii];

		if (c->d->kind != K_LFP || !c->msgs || c->failed)
			continue;
		if (!any)
			printf("# %s: lfpoll wakeups (producer system calls) "
			       "per message:", rc->name);
		printf("%s %s %.3f", any ? "," : "", c->d->name,
		       (double)c->sigs / (double)c->msgs);
		any = 1;
	}
	if (any)
		printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t ci;
	int status;

	bench_init("eq", argc, argv);
#ifdef HAVE_FABRIC
	fab_open(&fab_udp, FI_EP_DGRAM, "FI_EP_DGRAM");
	fab_open(&fab_tcp, FI_EP_MSG, "FI_EP_MSG");
#else
	fab_open(&fab_udp, 0, NULL);
	fab_open(&fab_tcp, 0, NULL);
#endif
	for (ci = 0; ci < NCASE; ci++)
		run_eq_case(ci);
	for (ci = 0; ci < NRTTCASE; ci++)
		run_rtt_case(ci);
	status = bench_finish();
	fab_close(&fab_udp);
	fab_close(&fab_tcp);
	return status;
}
