/*
 * bench/ring_work.h: what every ring benchmark runs, written once for every
 * implementation and event size: the one-thread loops, the producer and
 * consumer workers, their instantiation per (implementation, size), and the
 * table of implementations.
 *
 * The program defines RING_SIZES(X, a) (a subset of RING_EV_SIZES: the
 * event sizes it runs) before including this file.  Every implementation
 * goes through the same loops, instantiated per implementation and size so
 * that its calls inline with the size a constant, and the same retry policy
 * on a full or empty ring (bench_spin_fail: pause, yield every 64th
 * failure).
 *
 * Checks: every event carries its producer, sequence number and a check
 * word derived from both (ring_ev.h).  Consumers reject a torn event or one
 * older than the last seen from the same producer (per-producer FIFO);
 * after each round the count and the sum of sequence numbers per producer
 * must equal what was produced.
 *
 * Under -DBENCH_INSTR each operation is a function of its own,
 * op_<impl>_<enq|deq|enqn|deqn>_<size>, for valgrind --tool=callgrind.
 */
#ifndef LFPOLL_BENCH_RING_WORK_H
#define LFPOLL_BENCH_RING_WORK_H

#include <stdio.h>

#include "ring_ev.h"
#include "peer_lfpoll.h"
#include "peer_floor.h"
#include "peer_ck.h"
#include "peer_dpdk.h"
#include "peer_cxx.h"
#include "peer_mutex.h"

#define PRE_AHEAD   32          /* ring/1thr-pre: events written this far ahead */
#define PRE_RING    64          /* ... in a ring of this many */

enum { RING_SZ_8, RING_SZ_56, RING_SZ_64, RING_SZ_128, RING_NSZ };

static inline int ring_size_index(size_t esz)
{
	return esz == 8 ? RING_SZ_8 : esz == 56 ? RING_SZ_56 :
	       esz == 64 ? RING_SZ_64 : esz == 128 ? RING_SZ_128 : -1;
}

/* One implementation in one case. */
struct ring_ctx {
	struct bench_mt mt;     /* threaded cases: np producers, nc consumers */
	const struct impl_def *impl;
	const struct ring_case *rc;
	size_t esz;
	unsigned burst;         /* 1: single operations */
	void *q;
} __attribute__((aligned(128)));

/* Do a and b carry the same event? */
static inline __attribute__((always_inline))
int ev_same(const void *a, const void *b, size_t esz)
{
	const struct ev_hdr *x = a, *y = b;

	if (esz < sizeof(struct ev_hdr))
		return ((const struct ev8 *)a)->word ==
		       ((const struct ev8 *)b)->word;
	return x->seq == y->seq && x->check == y->check &&
	       x->producer == y->producer;
}

static inline __attribute__((always_inline))
uint64_t ev_seq(const void *e, size_t esz)
{
	uint32_t p;
	uint64_t seq;

	ev_id(e, esz, &p, &seq);
	return seq;
}

/* One event through the ring in one thread: enqueue in (item n), dequeue
 * it into out, check it came back whole.  0, or bench_fail().  out is an
 * array the failure path reads, so the dequeue's copy is made in full: no
 * part of it can be left out as unread. */
BENCH_TEMPLATE int st_item(void *q, const void *in, void *out, enq_fn enq,
                           deq_fn deq, size_t esz, uint64_t n)
{
	if (enq(q, in))
		return bench_fail("enqueue into an empty ring failed (item %llu)",
		                  (unsigned long long)n);
	if (deq(q, out))
		return bench_fail("ring empty after an enqueue (item %llu)",
		                  (unsigned long long)n);
	if (!ev_same(out, in, esz))
		return bench_fail("item %llu came back as %llu",
		                  (unsigned long long)n,
		                  (unsigned long long)ev_seq(out, esz));
	return 0;
}

/* One thread: enqueue one event, dequeue it. */
BENCH_TEMPLATE int st_one(void *arg, struct bench_round *r, enq_fn enq,
                          deq_fn deq, size_t esz)
{
	void *q = ((struct ring_ctx *)arg)->q;
	unsigned char in[EV_MAX] __attribute__((aligned(64)));
	unsigned char out[EV_MAX] __attribute__((aligned(64)));
	uint64_t n = 0, t0;
	int k;

	memset(in, 0, sizeof(in));
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256; k++, n++) {
			ev_make(in, esz, 0, n);
			if (st_item(q, in, out, enq, deq, esz, n))
				return -1;
		}
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

/*
 * One thread, each event written PRE_AHEAD items before it is enqueued: the
 * enqueue's copy then reads lines whose stores have long retired, where in
 * st_one it reads the stores just made (a copy with wider loads than those
 * stores cannot be forwarded from them and waits for them to retire).
 */
BENCH_TEMPLATE int st_pre(void *arg, struct bench_round *r, enq_fn enq,
                          deq_fn deq, size_t esz)
{
	void *q = ((struct ring_ctx *)arg)->q;
	unsigned char pre[PRE_RING * EV_MAX] __attribute__((aligned(64)));
	unsigned char out[EV_MAX] __attribute__((aligned(64)));
	uint64_t n = 0, t0;
	int k;

	memset(pre, 0, sizeof(pre));
	for (n = 0; n < PRE_AHEAD; n++)
		ev_make(pre + n * esz, esz, 0, n);
	n = 0;
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256; k++, n++) {
			ev_make(pre + ((n + PRE_AHEAD) % PRE_RING) * esz, esz, 0,
			        n + PRE_AHEAD);
			if (st_item(q, pre + (n % PRE_RING) * esz, out, enq,
			            deq, esz, n))
				return -1;
		}
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

/* One thread: enqueue a burst of b, dequeue b. */
BENCH_TEMPLATE int st_burst(void *arg, struct bench_round *r, enqn_fn enqn,
                            deqn_fn deqn, size_t esz, unsigned b)
{
	void *q = ((struct ring_ctx *)arg)->q;
	unsigned char in[BURST_MAX * EV_MAX] __attribute__((aligned(64)));
	unsigned char out[BURST_MAX * EV_MAX] __attribute__((aligned(64)));
	uint64_t n = 0, t0;
	unsigned i, got;
	unsigned k;

	memset(in, 0, sizeof(in));
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256 / b; k++, n += b) {
			for (i = 0; i < b; i++)
				ev_make(in + i * esz, esz, 0, n + i);
			got = enqn(q, in, b);
			if (got != b)
				return bench_fail("enqueue of %u into an empty "
				                  "ring took %u", b, got);
			got = deqn(q, out, b);
			if (got != b)
				return bench_fail("dequeue of %u after enqueue "
				                  "gave %u", b, got);
			for (i = 0; i < b; i++)
				if (!ev_same(out + i * esz, in + i * esz, esz))
					return bench_fail(
						"item %llu came back as %llu",
						(unsigned long long)(n + i),
						(unsigned long long)ev_seq(
							out + i * esz, esz));
		}
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

BENCH_TEMPLATE void *producer(struct bench_mt_worker *w, enq_fn enq,
                              enqn_fn enqn, size_t esz)
{
	struct ring_ctx *c = w->mt->ctx;
	struct bench_round mine = bench_mt_producer_round(w->mt);
	struct bench_spin sp = { 0 };
	unsigned char ev[BURST_MAX * EV_MAX] __attribute__((aligned(64)));
	uint32_t id = (uint32_t)w->id;
	unsigned b = c->burst, i, done, got, k;
	uint64_t n = 0, t0;

	memset(ev, 0, sizeof(ev));
	t0 = bench_now_ns();
	if (b == 1) {
		while (!bench_round_over(&mine, n, t0)) {
			for (k = 0; k < 256; k++, n++) {
				ev_make(ev, esz, id, n);
				while (enq(c->q, ev))
					if (bench_spin_fail(&sp))
						goto out;
				bench_spin_ok(&sp);
			}
		}
	} else {
		while (!bench_round_over(&mine, n, t0)) {
			for (k = 0; k < 256 / b; k++, n += b) {
				for (i = 0; i < b; i++)
					ev_make(ev + i * esz, esz, id, n + i);
				for (done = 0; done < b; done += got) {
					got = enqn(c->q, ev + done * esz,
					           b - done);
					if (got) {
						bench_spin_ok(&sp);
					} else if (bench_spin_fail(&sp)) {
						n += done;
						goto out;
					}
				}
			}
		}
	}
out:
	bench_mt_producer_done(w->mt, w->id, n, sp.retries);
	return NULL;
}

static inline __attribute__((always_inline))
int take(struct bench_mt *m, struct bench_mt_seen *s, const void *e,
         size_t esz)
{
	uint32_t p;
	uint64_t seq;

	if (ev_get(e, esz, &p, &seq))
		return bench_fail("torn event: producer %u seq %llu", p,
		                  (unsigned long long)seq);
	if (p >= (uint32_t)m->np)
		return bench_fail("event from unknown producer %u (seq %llu)",
		                  p, (unsigned long long)seq);
	return bench_mt_take(m, s, p, seq, 0, 0);
}

BENCH_TEMPLATE void *consumer(struct bench_mt_worker *w, deq_fn deq,
                              deqn_fn deqn, size_t esz)
{
	struct ring_ctx *c = w->mt->ctx;
	struct bench_mt_seen *s = &w->mt->seen[w->id];
	struct bench_spin sp = { 0 };
	unsigned char ev[BURST_MAX * EV_MAX] __attribute__((aligned(64)));
	unsigned i, got;
	int all_done;

	for (;;) {
		all_done = bench_mt_all_produced(w->mt);
		if (c->burst == 1)
			got = !deq(c->q, ev);
		else
			got = deqn(c->q, ev, c->burst);
		if (got) {
			bench_spin_ok(&sp);
			for (i = 0; i < got; i++)
				if (take(w->mt, s, ev + i * esz, esz))
					goto out;
			continue;
		}
		if (all_done || bench_spin_fail(&sp))
			break;
	}
out:
	s->retries = sp.retries;
	return NULL;
}

/* The check hook of the threaded cases: nothing lost, nothing duplicated. */
static __attribute__((unused)) int mt_check(void *arg,
                                            const struct bench_round *r)
{
	(void)r;
	return bench_mt_check(&((struct ring_ctx *)arg)->mt);
}

/* ------------------------------------------------------------ instances */

/* The runs of one implementation at one size; NULL: not built. */
struct ring_fns {
	bench_run_fn one, pre, b8, b32, mt;
};

struct impl_def {
	const char *name;
	const char *skip;       /* not built here: why */
	void *(*create)(size_t esz);
	void (*destroy)(void *q, size_t esz);
	struct ring_fns fns[RING_NSZ];
	/* Non-NULL: not run where a case has more than one producer or more
	 * than one consumer, for this reason. */
	const char *solo;
	/* Non-NULL: not run where a case has threads, for this reason. */
	const char *one_thread;
};

#define RING_UNUSED static __attribute__((unused))

/* Implementation X (its X_enq, X_deq, X_enqn, X_deqn) at size S. */
#define RING_INSTANCE(X, S)                                                     \
OP int op_##X##_enq_##S(void *q, const void *e)                                \
{ return X##_enq(q, e, S); }                                                    \
OP int op_##X##_deq_##S(void *q, void *e)                                      \
{ return X##_deq(q, e, S); }                                                    \
OP unsigned op_##X##_enqn_##S(void *q, const void *e, unsigned n)              \
{ return X##_enqn(q, e, n, S); }                                                \
OP unsigned op_##X##_deqn_##S(void *q, void *e, unsigned n)                    \
{ return X##_deqn(q, e, n, S); }                                                \
RING_UNUSED int one_##X##_##S(void *a, struct bench_round *r)                   \
{ return st_one(a, r, op_##X##_enq_##S, op_##X##_deq_##S, S); }                 \
RING_UNUSED int pre_##X##_##S(void *a, struct bench_round *r)                   \
{ return st_pre(a, r, op_##X##_enq_##S, op_##X##_deq_##S, S); }                 \
RING_UNUSED int b8_##X##_##S(void *a, struct bench_round *r)                    \
{ return st_burst(a, r, op_##X##_enqn_##S, op_##X##_deqn_##S, S, 8); }          \
RING_UNUSED int b32_##X##_##S(void *a, struct bench_round *r)                   \
{ return st_burst(a, r, op_##X##_enqn_##S, op_##X##_deqn_##S, S, 32); }         \
static void *prod_##X##_##S(void *w)                                            \
{ return producer(w, op_##X##_enq_##S, op_##X##_enqn_##S, S); }                 \
static void *cons_##X##_##S(void *w)                                            \
{ return consumer(w, op_##X##_deq_##S, op_##X##_deqn_##S, S); }                 \
RING_UNUSED int mt_##X##_##S(void *a, struct bench_round *r)                    \
{ return bench_mt_run(&((struct ring_ctx *)a)->mt, r, prod_##X##_##S,          \
                      cons_##X##_##S); }

#define RING_FNS(X, S)                                                          \
	[RING_SZ_##S] = { one_##X##_##S, pre_##X##_##S, b8_##X##_##S,          \
	                  b32_##X##_##S, mt_##X##_##S },

#define OP BENCH_OP
#define INSTANTIATE(X) RING_SIZES(RING_INSTANCE, X)

#define IMPL_FULL(name, X, C, solo, one_thread)                                 \
	{ name, NULL, C##_create, C##_destroy, { RING_SIZES(RING_FNS, X) },     \
	  solo, one_thread }
#define IMPL_AS(name, X, C, solo) IMPL_FULL(name, X, C, solo, NULL)
#define IMPL_1P1C(name, X, solo) IMPL_AS(name, X, X, solo)
#define IMPL(name, X) IMPL_1P1C(name, X, NULL)
#define IMPL_SKIP(name, why) { name, why, NULL, NULL, { { NULL } }, NULL, NULL }
#define IMPL_ONE_THREAD(name, X, why) IMPL_FULL(name, X, X, NULL, why)

#define SOLO_SPSC "single producer, single consumer: not for this case"
/*
 * atomic_queue's slot state has no lap: a consumer that claimed a position
 * and stalls before taking its slot lets the consumer of the same slot one
 * lap later take the element meant for it (and a stalled producer lets a
 * later lap's producer fill its slot), so one producer's events come out of
 * order.  With 4 threads on 2 CPUs preemption does exactly that, and the
 * order check fails; with one producer and one consumer it cannot happen.
 */
#define SOLO_AQ "reorders a producer's events when a thread stalls a lap " \
	"between its claim and its slot (the slot state has no lap)"

INSTANTIATE(lfpoll)
INSTANTIATE(mutex)
INSTANTIATE(fs)
INSTANTIATE(fi)
INSTANTIATE(fc)
INSTANTIATE(fr)
INSTANTIATE(fm)
#ifdef HAVE_CK_RING
INSTANTIATE(ck)
INSTANTIATE(ckp)
#endif
#ifdef HAVE_DPDK
INSTANTIATE(dpdk)
INSTANTIATE(hts)
INSTANTIATE(dspsc)
#endif
#ifdef HAVE_ATOMIC_QUEUE
INSTANTIATE(aq)
#endif
#ifdef HAVE_CONCURRENTQUEUE
INSTANTIATE(mc)
#endif

#define NO_CK "ck_ring.h not found: libck-dev"
#define NO_DPDK "DPDK not found by pkg-config: libdpdk-dev"

/* Every implementation; a case names the ones it runs (ring_impl). */
static const struct impl_def impls[] = {
	IMPL("lfpoll", lfpoll),
#ifdef LFP_SINGLE_PRODUCER
	IMPL_AS("lfpoll_spsc", lfpoll, lfpoll_spsc, SOLO_SPSC),
#else
	IMPL_SKIP("lfpoll_spsc", RING_NO_MODES),
#endif
	IMPL_1P1C("floor_spsc", fs, SOLO_SPSC),
	IMPL_1P1C("floor_index", fi, SOLO_SPSC),
	IMPL_ONE_THREAD("floor_copy", fc, "the copies alone: one thread only"),
	IMPL_ONE_THREAD("floor_rmw", fr,
	                "the copies and claims alone: one thread only"),
	IMPL("floor_mpmc", fm),
#ifdef HAVE_CK_RING
	IMPL("ck_ring", ck),
	IMPL("ck_ring_ptr", ckp),
#else
	IMPL_SKIP("ck_ring", NO_CK),
	IMPL_SKIP("ck_ring_ptr", NO_CK),
#endif
#ifdef HAVE_DPDK
	IMPL("dpdk_mpmc", dpdk),
	IMPL("dpdk_hts", hts),
	IMPL_1P1C("dpdk_spsc", dspsc, SOLO_SPSC),
#else
	IMPL_SKIP("dpdk_mpmc", NO_DPDK),
	IMPL_SKIP("dpdk_hts", NO_DPDK),
	IMPL_SKIP("dpdk_spsc", NO_DPDK),
#endif
#ifdef HAVE_ATOMIC_QUEUE
	IMPL_1P1C("atomic_queue", aq, SOLO_AQ),
#else
	IMPL_SKIP("atomic_queue", "atomic_queue.h not found: libatomic-queue-dev"),
#endif
#ifdef HAVE_CONCURRENTQUEUE
	IMPL("moodycamel", mc),
#else
	IMPL_SKIP("moodycamel",
	          "concurrentqueue.h not found: libconcurrentqueue-dev"),
#endif
	IMPL("mutex", mutex),
};

static inline const struct impl_def *ring_impl(const char *name)
{
	size_t i;

	for (i = 0; i < BENCH_LEN(impls); i++)
		if (!strcmp(impls[i].name, name))
			return &impls[i];
	return NULL;
}

/* The implementations of each kind of case, the subject first. */
static const char *const __attribute__((unused)) set_mpmc[] = {
	"lfpoll", "floor_spsc", "floor_index", "floor_mpmc", "floor_rmw",
	"ck_ring", "ck_ring_ptr",
	"dpdk_mpmc", "dpdk_hts", "atomic_queue", "moodycamel", "mutex", NULL
};
static const char *const __attribute__((unused)) set_spsc[] = {
	"lfpoll_spsc", "dpdk_spsc", "floor_spsc", "floor_index", "floor_copy",
	"lfpoll", NULL
};

/* What a ring case is: its shape, its event, its implementations. */
struct ring_case {
	const char *name, *label;
	int np, nc;             /* 0, 0: one thread */
	unsigned burst;         /* 1, 8 or 32 */
	int pre;                /* one thread: events written ahead */
	size_t esz;
	const char *const *set; /* names, NULL-terminated, subject first */
	const struct bench_target *targets;
	size_t n_targets;
	const int *cpus;        /* bench_mt placement; NULL: the default */
	uint64_t instr_items;
	/* Optional: called before (begin 1) and after (0) each queue is
	 * made, to place its memory. */
	void (*around_create)(const struct ring_case *rc, int begin);
};

static int ctx_setup(void *arg)
{
	struct ring_ctx *c = arg;

	if (c->rc->around_create)
		c->rc->around_create(c->rc, 1);
	c->q = c->impl->create(c->esz);
	if (c->rc->around_create)
		c->rc->around_create(c->rc, 0);
	return c->q ? 0 : -1;
}

static void ctx_teardown(void *arg)
{
	struct ring_ctx *c = arg;

	c->impl->destroy(c->q, c->esz);
	c->q = NULL;
}

/* The run of implementation d in case rc, or NULL with *why set. */
static bench_run_fn ring_run_of(const struct impl_def *d,
                                const struct ring_case *rc, const char **why)
{
	const struct ring_fns *f;
	int si = ring_size_index(rc->esz);

	if (d->skip) {
		*why = d->skip;
		return NULL;
	}
	if ((rc->np > 1 || rc->nc > 1) && d->solo) {
		*why = d->solo;
		return NULL;
	}
	if (rc->np && d->one_thread) {
		*why = d->one_thread;
		return NULL;
	}
	*why = "not built for this event size";
	if (si < 0)
		return NULL;
	f = &d->fns[si];
	if (rc->np)
		return f->mt;
	if (rc->pre)
		return f->one && rc->burst == 1 ? f->pre : NULL;
	return rc->burst == 1 ? f->one : rc->burst == 8 ? f->b8 :
	       rc->burst == 32 ? f->b32 : NULL;
}

/* Run ring case rc over its implementations.  Returns 0, or 1 when an
 * implementation failed. */
static int ring_case_run(const struct ring_case *rc)
{
	struct bench_impl bi[BENCH_LEN(impls)];
	struct ring_ctx *ctx;
	size_t n = 0, i;
	int threads = rc->np + rc->nc, ret;

	/* A case whose subject is not built here has nothing to compare. */
	if (ring_impl(rc->set[0]) && ring_impl(rc->set[0])->skip) {
		bench_case_skip(rc->name, rc->label, ring_impl(rc->set[0])->skip);
		return 0;
	}
	ctx = aligned_alloc(128, sizeof(*ctx) * BENCH_LEN(impls));
	if (!ctx) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	for (i = 0; rc->set[i]; i++) {
		const struct impl_def *d = ring_impl(rc->set[i]);
		struct ring_ctx *c = &ctx[n];
		const char *why = NULL;

		if (!d)
			continue;
		memset(c, 0, sizeof(*c));
		c->impl = d;
		c->rc = rc;
		c->esz = rc->esz;
		c->burst = rc->burst;
		c->mt = (struct bench_mt){
			.np = rc->np, .nc = rc->nc, .ctx = c, .cpus = rc->cpus,
			.who = "producer", .made = "produced",
			.took = "consumed",
		};
		bi[n] = (struct bench_impl){
			.name = d->name,
			.arg = c,
			.setup = ctx_setup,
			.teardown = ctx_teardown,
			.run = ring_run_of(d, rc, &why),
		};
		if (!bi[n].run)
			bi[n].skip = why;
		n++;
	}
	{
		struct bench_case bc = {
			.name = rc->name,
			.label = rc->label,
			.threads = threads ? threads : 1,
			.impls = bi,
			.n_impls = n,
			.targets = rc->targets,
			.n_targets = rc->n_targets,
			.check = threads ? mt_check : NULL,
			.instr_items = threads ? 0 : rc->instr_items,
		};

		ret = bench_case_run(&bc);
	}
	free(ctx);
	return ret;
}

#endif /* LFPOLL_BENCH_RING_WORK_H */
