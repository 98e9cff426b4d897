/*
 * bench/ring.c: lfpoll's MPMC ring against Concurrency Kit ck_ring (MPMC,
 * typed 64-byte entries and pointers to pooled events), DPDK rte_ring (MP/MC
 * and HTS, 64-byte elements, no EAL), atomic_queue (a bounded MPMC queue
 * of values, run only with one producer and one consumer: SOLO_AQ) and
 * moodycamel's ConcurrentQueue (per-producer FIFO only: not linearizable),
 * the last two from C++ (bench/ring_peers.cpp), a mutex-protected array
 * ring, and two single-producer single-consumer floors, all moving 64-byte
 * events through a ring of capacity 1024 (ck_ring and rte_ring keep one
 * slot empty: 1023 usable).
 *
 * The floors are what one producer and one consumer cost with no atomic
 * read-modify-write at all, measured in the same run: floor_spsc hands each
 * event over through a flag word beside its slot (no shared index), the
 * floor of a single transfer; floor_index is an index-based ring whose
 * sides cache each other's index and copy bursts, the floor of a burst.
 * Both run in the cases with one producer and one consumer (and in the
 * one-thread cases, where one thread is both); the others skip them.
 *
 * Cases: one thread (enqueue then dequeue), one thread batch 32, 1 producer +
 * 1 consumer on two CPUs, 2 producers + 2 consumers (4 threads on 2 cores),
 * and the two threaded shapes again with bursts of 32; then ring/locked-rmw,
 * the cost of one uncontended CAS, the floor under each side of 1P1C.
 * ck_ring and atomic_queue have no burst call: their burst rows make 32
 * single calls.  Every implementation goes through the same worker loops
 * (instantiated per implementation so the ring calls inline), and the same
 * retry policy on a full or empty ring (bench_spin_fail: pause, yield every
 * 64th failure).
 *
 * Checks: every event carries its producer, sequence number and a check word
 * derived from both.  Consumers reject a torn event or one older than the
 * last seen from the same producer (per-producer FIFO); after each round the
 * count and the sum of sequence numbers per producer must equal what was
 * produced.  Any failure makes the program exit non-zero.
 *
 * --instr runs only the one-thread cases, once, for a fixed count, for
 * valgrind --tool=callgrind.  Build with -DBENCH_INSTR to keep each ring
 * operation in its own function (op_<impl>_enq, _deq, _enqn, _deqn), then
 * count with --toggle-collect='op_lfpoll_*' and divide by the item count.
 */
#define _GNU_SOURCE
#include <lfpoll/ring.h>

#include "harness.h"
#include "ring_peers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_CK_RING
#  include <ck_ring.h>
#endif
#ifdef HAVE_DPDK
#  include <rte_ring.h>
#  include <rte_ring_elem.h>
#endif

#define CAPACITY    1024
#define BURST       32
#define MAXP        BENCH_MT_MAXP
#define POOL        4096         /* ck_ring_ptr: events per producer */
#define FREE_EV     UINT32_MAX   /* ck_ring_ptr: pool entry is free */
#define INSTR_ITEMS (1u << 18)

/* struct ev64 is in ring_peers.h, shared with the C++ peers. */
_Static_assert(sizeof(struct ev64) == 64, "events are 64 bytes");

LFP_RING_PROTOTYPE(ev64, struct ev64)
#ifdef HAVE_CK_RING
CK_RING_PROTOTYPE(ev64, ev64)
#endif

static inline uint64_t ev_mix(uint32_t p, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)p << 56) ^ 0x5bd1e995u;
}

static inline void ev_make(struct ev64 *e, uint32_t p, uint64_t seq)
{
	e->producer = p;
	e->seq = seq;
	e->check = ev_mix(p, seq);
}

/*
 * Ring operations, one set per implementation, all with these shapes:
 *   enq  0, or nonzero when full      deq  0, or nonzero when empty
 *   enqn/deqn  how many of up to n events were moved
 */
typedef int (*enq_fn)(void *q, const struct ev64 *e);
typedef int (*deq_fn)(void *q, struct ev64 *e);
typedef unsigned (*enqn_fn)(void *q, const struct ev64 *e, unsigned n);
typedef unsigned (*deqn_fn)(void *q, struct ev64 *e, unsigned n);

#define OP BENCH_OP
#define TEMPLATE BENCH_TEMPLATE

static void *alloc_aligned(size_t align, size_t bytes)
{
	void *p = aligned_alloc(align, (bytes + align - 1) & ~(align - 1));

	if (!p)
		bench_fail("out of memory");
	return p;
}

/* A queue's struct (bytes, on its own cache lines) and its CAPACITY slots;
 * NULL when either cannot be had. */
static void *alloc_with_slots(size_t bytes, struct ev64 **slots)
{
	void *q = alloc_aligned(128, bytes);

	if (!q)
		return NULL;
	*slots = alloc_aligned(64, CAPACITY * sizeof(struct ev64));
	if (!*slots) {
		free(q);
		return NULL;
	}
	return q;
}

/* ------------------------------------------------------------ lfpoll */

static void *lfpoll_create(void)
{
	struct lfp_ring *r;
	int ret = lfp_ring_create(CAPACITY, sizeof(struct ev64), &r);

	if (ret) {
		bench_fail("lfp_ring_create: %s", lfp_strerror(ret));
		return NULL;
	}
	return r;
}

static void lfpoll_destroy(void *q)
{
	lfp_ring_destroy(q);
}

OP int op_lfpoll_enq(void *q, const struct ev64 *e)
{
	return lfp_ring_enqueue_ev64(q, e);
}

OP int op_lfpoll_deq(void *q, struct ev64 *e)
{
	return lfp_ring_dequeue_ev64(q, e);
}

OP unsigned op_lfpoll_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return (unsigned)lfp_ring_enqueue_burst_ev64(q, e, n);
}

OP unsigned op_lfpoll_deqn(void *q, struct ev64 *e, unsigned n)
{
	return (unsigned)lfp_ring_dequeue_burst_ev64(q, e, n);
}

/* ------------------------------------------------------------ ck_ring */
#ifdef HAVE_CK_RING

/* ck_ring has no burst call: a burst is up to n single calls. */
TEMPLATE unsigned enq_each(void *q, const struct ev64 *e, unsigned n,
                           enq_fn enq)
{
	unsigned i;

	for (i = 0; i < n && !enq(q, &e[i]); i++)
		;
	return i;
}

TEMPLATE unsigned deq_each(void *q, struct ev64 *e, unsigned n, deq_fn deq)
{
	unsigned i;

	for (i = 0; i < n && !deq(q, &e[i]); i++)
		;
	return i;
}

/* Typed: 64-byte entries copied in and out (CK_RING_PROTOTYPE). */
struct ckq {
	struct ck_ring ring;
	struct ev64 *buf;
};

static void *ck_create(void)
{
	struct ev64 *slots;
	struct ckq *q = alloc_with_slots(sizeof(*q), &slots);

	if (q) {
		ck_ring_init(&q->ring, CAPACITY);
		q->buf = slots;
	}
	return q;
}

static void ck_destroy(void *p)
{
	struct ckq *q = p;

	free(q->buf);
	free(q);
}

OP int op_ck_enq(void *p, const struct ev64 *e)
{
	struct ckq *q = p;

	return !ck_ring_enqueue_mpmc_ev64(&q->ring, q->buf, (struct ev64 *)e);
}

OP int op_ck_deq(void *p, struct ev64 *e)
{
	struct ckq *q = p;

	return !ck_ring_dequeue_mpmc_ev64(&q->ring, q->buf, e);
}

OP unsigned op_ck_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return enq_each(q, e, n, op_ck_enq);
}

OP unsigned op_ck_deqn(void *q, struct ev64 *e, unsigned n)
{
	return deq_each(q, e, n, op_ck_deq);
}

/*
 * Pointers: each producer writes its event into the next entry of its own
 * pool and enqueues the pointer; the consumer copies the event out and hands
 * the entry back by marking it free.  An entry still held by a consumer (one
 * preempted between its dequeue and its copy) makes the producer retry, as
 * a full ring would.
 */
struct ckpq {
	struct ck_ring ring;
	struct ck_ring_buffer *buf;
	struct ev64 *pool[MAXP];
};

static void ckp_destroy(void *p)
{
	struct ckpq *q = p;
	int i;

	for (i = 0; i < MAXP; i++)
		free(q->pool[i]);
	free(q->buf);
	free(q);
}

static void *ckp_create(void)
{
	struct ckpq *q = alloc_aligned(128, sizeof(*q));
	int i, j;

	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	ck_ring_init(&q->ring, CAPACITY);
	q->buf = alloc_aligned(64, CAPACITY * sizeof(*q->buf));
	for (i = 0; i < MAXP; i++) {
		q->pool[i] = alloc_aligned(64, POOL * sizeof(struct ev64));
		if (!q->pool[i])
			break;
		for (j = 0; j < POOL; j++)
			q->pool[i][j].producer = FREE_EV;
	}
	if (!q->buf || i < MAXP) {
		ckp_destroy(q);
		return NULL;
	}
	return q;
}

OP int op_ckp_enq(void *p, const struct ev64 *e)
{
	struct ckpq *q = p;
	struct ev64 *slot = &q->pool[e->producer][e->seq & (POOL - 1)];

	/* Acquire pairs with the consumer's release in op_ckp_deq: its copy
	 * is complete before we overwrite the entry. */
	if (__atomic_load_n(&slot->producer, __ATOMIC_ACQUIRE) != FREE_EV)
		return -1;
	*slot = *e;
	if (!ck_ring_enqueue_mpmc(&q->ring, q->buf, slot)) {
		slot->producer = FREE_EV; /* never published */
		return -1;
	}
	return 0;
}

OP int op_ckp_deq(void *p, struct ev64 *e)
{
	struct ckpq *q = p;
	struct ev64 *ev;

	if (!ck_ring_dequeue_mpmc(&q->ring, q->buf, &ev))
		return -1;
	*e = *ev;
	__atomic_store_n(&ev->producer, FREE_EV, __ATOMIC_RELEASE);
	return 0;
}

OP unsigned op_ckp_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return enq_each(q, e, n, op_ckp_enq);
}

OP unsigned op_ckp_deqn(void *q, struct ev64 *e, unsigned n)
{
	return deq_each(q, e, n, op_ckp_deq);
}
#endif /* HAVE_CK_RING */

/* ------------------------------------------------------------ DPDK */
#ifdef HAVE_DPDK

/*
 * No EAL: rte_ring_init() on our own memory needs none, and every
 * enqueue/dequeue is inline.  The library's only other runtime use is
 * RTE_LOG on a bad argument, which before rte_eal_init() goes to stderr.
 */
static void *dpdk_create_flags(unsigned flags)
{
	ssize_t bytes = rte_ring_get_memsize_elem(sizeof(struct ev64), CAPACITY);
	struct rte_ring *r;
	int ret;

	if (bytes < 0) {
		bench_fail("rte_ring_get_memsize_elem: %zd", bytes);
		return NULL;
	}
	r = alloc_aligned(128, (size_t)bytes);
	if (!r)
		return NULL;
	ret = rte_ring_init(r, "lfp_bench", CAPACITY, flags);
	if (ret) {
		bench_fail("rte_ring_init: %d", ret);
		free(r);
		return NULL;
	}
	return r;
}

static void *dpdk_create(void)
{
	return dpdk_create_flags(0);
}

static void *hts_create(void)
{
	return dpdk_create_flags(RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ);
}

static void dpdk_destroy(void *q)
{
	free(q);
}

#define hts_destroy dpdk_destroy

OP int op_dpdk_enq(void *q, const struct ev64 *e)
{
	return rte_ring_mp_enqueue_elem(q, (void *)e, sizeof(*e));
}

OP int op_dpdk_deq(void *q, struct ev64 *e)
{
	return rte_ring_mc_dequeue_elem(q, e, sizeof(*e));
}

OP unsigned op_dpdk_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return rte_ring_mp_enqueue_burst_elem(q, e, sizeof(*e), n, NULL);
}

OP unsigned op_dpdk_deqn(void *q, struct ev64 *e, unsigned n)
{
	return rte_ring_mc_dequeue_burst_elem(q, e, sizeof(*e), n, NULL);
}

OP int op_hts_enq(void *q, const struct ev64 *e)
{
	return !rte_ring_mp_hts_enqueue_bulk_elem(q, e, sizeof(*e), 1, NULL);
}

OP int op_hts_deq(void *q, struct ev64 *e)
{
	return !rte_ring_mc_hts_dequeue_bulk_elem(q, e, sizeof(*e), 1, NULL);
}

OP unsigned op_hts_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return rte_ring_mp_hts_enqueue_burst_elem(q, e, sizeof(*e), n, NULL);
}

OP unsigned op_hts_deqn(void *q, struct ev64 *e, unsigned n)
{
	return rte_ring_mc_hts_dequeue_burst_elem(q, e, sizeof(*e), n, NULL);
}
#endif /* HAVE_DPDK */

/* ------------------------------------------------------------ mutex */

/* The honest baseline: an array ring under one pthread mutex. */
struct mq {
	pthread_mutex_t lock;
	uint64_t head, tail;
	struct ev64 *slots;
};

static void *mutex_create(void)
{
	struct ev64 *slots;
	struct mq *q = alloc_with_slots(sizeof(*q), &slots);

	if (q) {
		pthread_mutex_init(&q->lock, NULL);
		q->head = q->tail = 0;
		q->slots = slots;
	}
	return q;
}

static void mutex_destroy(void *p)
{
	struct mq *q = p;

	pthread_mutex_destroy(&q->lock);
	free(q->slots);
	free(q);
}

OP unsigned op_mutex_enqn(void *p, const struct ev64 *e, unsigned n)
{
	struct mq *q = p;
	unsigned i, room;

	pthread_mutex_lock(&q->lock);
	room = CAPACITY - (unsigned)(q->head - q->tail);
	if (n > room)
		n = room;
	for (i = 0; i < n; i++)
		q->slots[(q->head + i) & (CAPACITY - 1)] = e[i];
	q->head += n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

OP unsigned op_mutex_deqn(void *p, struct ev64 *e, unsigned n)
{
	struct mq *q = p;
	unsigned i, have;

	pthread_mutex_lock(&q->lock);
	have = (unsigned)(q->head - q->tail);
	if (n > have)
		n = have;
	for (i = 0; i < n; i++)
		e[i] = q->slots[(q->tail + i) & (CAPACITY - 1)];
	q->tail += n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

OP int op_mutex_enq(void *q, const struct ev64 *e)
{
	return !op_mutex_enqn(q, e, 1);
}

OP int op_mutex_deq(void *q, struct ev64 *e)
{
	return !op_mutex_deqn(q, e, 1);
}

/* ------------------------------------------------------------ C++ peers */

/*
 * atomic_queue and moodycamel through their C interface (ring_peers.h):
 * the op_<impl>_ wrappers give them the names and the inlining of the
 * others' operations.
 */
#define CXX_PEER(P)                                                             \
static void *P##_create(void)                                                   \
{                                                                               \
	void *q = ring_peer_##P##_create(CAPACITY);                             \
                                                                                \
	if (!q)                                                                 \
		bench_fail("ring_peer_" #P "_create(%u) failed", CAPACITY);     \
	return q;                                                               \
}                                                                               \
static void P##_destroy(void *q) { ring_peer_##P##_destroy(q); }                \
OP int op_##P##_enq(void *q, const struct ev64 *e)                             \
{ return ring_peer_##P##_enq(q, e); }                                           \
OP int op_##P##_deq(void *q, struct ev64 *e)                                   \
{ return ring_peer_##P##_deq(q, e); }                                           \
OP unsigned op_##P##_enqn(void *q, const struct ev64 *e, unsigned n)           \
{ return ring_peer_##P##_enqn(q, e, n); }                                       \
OP unsigned op_##P##_deqn(void *q, struct ev64 *e, unsigned n)                 \
{ return ring_peer_##P##_deqn(q, e, n); }

#ifdef HAVE_ATOMIC_QUEUE
_Static_assert(CAPACITY == RING_PEER_AQ_CAPACITY, "atomic_queue's capacity");
CXX_PEER(aq)
#endif
#ifdef HAVE_CONCURRENTQUEUE
CXX_PEER(mc)
#endif

/* ------------------------------------------------------------ floors */

/*
 * floor_spsc: one producer, one consumer, a flag word per slot and no
 * shared index.  Each side keeps its position to itself; the only lines
 * that cross between the CPUs are the slots'.  A 64-byte event and its
 * flag cannot share one 64-byte line, so a slot is the event's line and,
 * after it, a line starting with the flag: a 128-byte-aligned pair, the
 * unit the adjacent-line prefetcher fetches (lfpoll's 64-byte slots are
 * laid out the same way).  There is no read-modify-write anywhere: this is
 * the floor of handing over one event.
 */
struct fs_slot {
	struct ev64 ev;
	atomic_uint full;       /* 1: ev holds an event not yet consumed */
} __attribute__((aligned(128)));

struct fsq {
	struct fs_slot *slots;  /* read-only after create */
	uint32_t mask;
	uint32_t head __attribute__((aligned(128)));  /* producer's only */
	uint32_t tail __attribute__((aligned(128)));  /* consumer's only */
} __attribute__((aligned(128)));

static void *fs_create(void)
{
	struct fsq *q = alloc_aligned(128, sizeof(*q));
	uint32_t i;

	if (!q)
		return NULL;
	q->slots = alloc_aligned(128, CAPACITY * sizeof(*q->slots));
	if (!q->slots) {
		free(q);
		return NULL;
	}
	for (i = 0; i < CAPACITY; i++)
		atomic_init(&q->slots[i].full, 0);
	q->mask = CAPACITY - 1;
	q->head = q->tail = 0;
	return q;
}

static void fs_destroy(void *p)
{
	struct fsq *q = p;

	free(q->slots);
	free(q);
}

OP unsigned op_fs_enqn(void *p, const struct ev64 *e, unsigned n)
{
	struct fsq *q = p;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct fs_slot *s = &q->slots[(q->head + i) & q->mask];

		/* F1: acquire pairs with F4: the consumer's copy of the
		 * previous lap's event is complete before we overwrite it. */
		if (atomic_load_explicit(&s->full, memory_order_acquire))
			break;
		s->ev = e[i];
		/* F2: release pairs with F3: the event is written before the
		 * consumer can see the slot full. */
		atomic_store_explicit(&s->full, 1, memory_order_release);
	}
	q->head += i;
	return i;
}

OP unsigned op_fs_deqn(void *p, struct ev64 *e, unsigned n)
{
	struct fsq *q = p;
	unsigned i;

	for (i = 0; i < n; i++) {
		struct fs_slot *s = &q->slots[(q->tail + i) & q->mask];

		/* F3: acquire pairs with F2: we read the event the producer
		 * wrote before it set the flag. */
		if (!atomic_load_explicit(&s->full, memory_order_acquire))
			break;
		e[i] = s->ev;
		/* F4: release pairs with F1: our copy is done before the
		 * producer may reuse the slot. */
		atomic_store_explicit(&s->full, 0, memory_order_release);
	}
	q->tail += i;
	return i;
}

OP int op_fs_enq(void *q, const struct ev64 *e)
{
	return !op_fs_enqn(q, e, 1);
}

OP int op_fs_deq(void *q, struct ev64 *e)
{
	return !op_fs_deqn(q, e, 1);
}

/*
 * floor_index: one producer, one consumer, shared head and tail indices
 * and 64-byte slots (one line per event).  Each side writes its own index
 * on its own line and keeps a copy of the other's there, re-reading the
 * other's line only when its copy says full or empty; a burst moves its
 * events with one index update, so one line crosses per burst besides the
 * events' own.  The indices run free; head - tail (unsigned) is the fill,
 * so all CAPACITY slots are usable.  The floor of a burst.
 */
struct fiq {
	struct ev64 *slots;     /* read-only after create */
	uint32_t mask;
	atomic_uint head __attribute__((aligned(128)));  /* written by producer */
	uint32_t tail_seen;     /* producer's copy of tail */
	atomic_uint tail __attribute__((aligned(128)));  /* written by consumer */
	uint32_t head_seen;     /* consumer's copy of head */
} __attribute__((aligned(128)));

static void *fi_create(void)
{
	struct fiq *q = alloc_aligned(128, sizeof(*q));

	if (!q)
		return NULL;
	q->slots = alloc_aligned(64, CAPACITY * sizeof(*q->slots));
	if (!q->slots) {
		free(q);
		return NULL;
	}
	q->mask = CAPACITY - 1;
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	q->tail_seen = q->head_seen = 0;
	return q;
}

static void fi_destroy(void *p)
{
	struct fiq *q = p;

	free(q->slots);
	free(q);
}

OP unsigned op_fi_enqn(void *p, const struct ev64 *e, unsigned n)
{
	struct fiq *q = p;
	/* Relaxed: only this producer writes head. */
	uint32_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	uint32_t room = CAPACITY - (head - q->tail_seen), i;

	if (room < n) {
		/* I1: acquire pairs with I4: the consumer's copies out of the
		 * slots it freed are done before we refill them. */
		q->tail_seen = atomic_load_explicit(&q->tail,
		                                    memory_order_acquire);
		room = CAPACITY - (head - q->tail_seen);
		if (n > room)
			n = room;
		if (!n)
			return 0;
	}
	for (i = 0; i < n; i++)
		q->slots[(head + i) & q->mask] = e[i];
	/* I2: release pairs with I3: the events are written before the
	 * consumer can see the new head. */
	atomic_store_explicit(&q->head, head + n, memory_order_release);
	return n;
}

OP unsigned op_fi_deqn(void *p, struct ev64 *e, unsigned n)
{
	struct fiq *q = p;
	/* Relaxed: only this consumer writes tail. */
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint32_t have = q->head_seen - tail, i;

	if (have < n) {
		/* I3: acquire pairs with I2: we read events written before
		 * the head we see. */
		q->head_seen = atomic_load_explicit(&q->head,
		                                    memory_order_acquire);
		have = q->head_seen - tail;
		if (n > have)
			n = have;
		if (!n)
			return 0;
	}
	for (i = 0; i < n; i++)
		e[i] = q->slots[(tail + i) & q->mask];
	/* I4: release pairs with I1: our copies are done before the
	 * producer can see these slots free. */
	atomic_store_explicit(&q->tail, tail + n, memory_order_release);
	return n;
}

OP int op_fi_enq(void *q, const struct ev64 *e)
{
	return !op_fi_enqn(q, e, 1);
}

OP int op_fi_deq(void *q, struct ev64 *e)
{
	return !op_fi_deqn(q, e, 1);
}

/* ------------------------------------------------------------ workers */

/* One implementation in one case. */
struct ring_ctx {
	struct bench_mt mt;     /* threaded cases: np producers, nc consumers */
	const struct impl_def *impl;
	unsigned burst;         /* 1: single operations */
	void *q;
} __attribute__((aligned(128)));

TEMPLATE int st_one(void *arg, struct bench_round *r, enq_fn enq, deq_fn deq)
{
	void *q = ((struct ring_ctx *)arg)->q;
	struct ev64 in, out;
	uint64_t n = 0, t0;
	int k;

	memset(&in, 0, sizeof(in));
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256; k++, n++) {
			ev_make(&in, 0, n);
			if (enq(q, &in))
				return bench_fail("enqueue into an empty ring "
				                  "failed (item %llu)",
				                  (unsigned long long)n);
			if (deq(q, &out))
				return bench_fail("ring empty after an enqueue "
				                  "(item %llu)",
				                  (unsigned long long)n);
			if (out.seq != n || out.check != in.check ||
			    out.producer != 0)
				return bench_fail("item %llu came back as %llu",
				                  (unsigned long long)n,
				                  (unsigned long long)out.seq);
		}
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

TEMPLATE int st_burst(void *arg, struct bench_round *r, enqn_fn enqn,
                      deqn_fn deqn)
{
	void *q = ((struct ring_ctx *)arg)->q;
	struct ev64 in[BURST], out[BURST];
	uint64_t n = 0, t0;
	unsigned i, got;
	int k;

	memset(in, 0, sizeof(in));
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 8; k++, n += BURST) {
			for (i = 0; i < BURST; i++)
				ev_make(&in[i], 0, n + i);
			got = enqn(q, in, BURST);
			if (got != BURST)
				return bench_fail("enqueue of %u into an empty "
				                  "ring took %u", BURST, got);
			got = deqn(q, out, BURST);
			if (got != BURST)
				return bench_fail("dequeue of %u after enqueue "
				                  "gave %u", BURST, got);
			for (i = 0; i < BURST; i++)
				if (out[i].seq != n + i ||
				    out[i].check != in[i].check)
					return bench_fail(
						"item %llu came back as %llu",
						(unsigned long long)(n + i),
						(unsigned long long)out[i].seq);
		}
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

TEMPLATE void *producer(struct bench_mt_worker *w, enq_fn enq, enqn_fn enqn)
{
	struct ring_ctx *c = w->mt->ctx;
	struct bench_round mine = bench_mt_producer_round(w->mt);
	struct bench_spin sp = { 0 };
	struct ev64 ev[BURST];
	uint32_t id = (uint32_t)w->id;
	uint64_t n = 0, t0;
	unsigned i, done, got;
	int k;

	memset(ev, 0, sizeof(ev));
	t0 = bench_now_ns();
	if (c->burst == 1) {
		while (!bench_round_over(&mine, n, t0)) {
			for (k = 0; k < 256; k++, n++) {
				ev_make(&ev[0], id, n);
				while (enq(c->q, &ev[0]))
					if (bench_spin_fail(&sp))
						goto out;
				bench_spin_ok(&sp);
			}
		}
	} else {
		while (!bench_round_over(&mine, n, t0)) {
			for (k = 0; k < 8; k++, n += BURST) {
				for (i = 0; i < BURST; i++)
					ev_make(&ev[i], id, n + i);
				for (done = 0; done < BURST; done += got) {
					got = enqn(c->q, ev + done, BURST - done);
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

static inline int take(struct bench_mt *m, struct bench_mt_seen *s,
                       const struct ev64 *e)
{
	uint32_t p = e->producer;

	if (p >= (uint32_t)m->np)
		return bench_fail("event from unknown producer %u (seq %llu)",
		                  p, (unsigned long long)e->seq);
	if (e->check != ev_mix(p, e->seq))
		return bench_fail("torn event: producer %u seq %llu", p,
		                  (unsigned long long)e->seq);
	return bench_mt_take(m, s, p, e->seq, 0, 0);
}

TEMPLATE void *consumer(struct bench_mt_worker *w, deq_fn deq, deqn_fn deqn)
{
	struct ring_ctx *c = w->mt->ctx;
	struct bench_mt_seen *s = &w->mt->seen[w->id];
	struct bench_spin sp = { 0 };
	struct ev64 ev[BURST];
	unsigned i, got;
	int all_done;

	for (;;) {
		all_done = bench_mt_all_produced(w->mt);
		if (c->burst == 1)
			got = !deq(c->q, &ev[0]);
		else
			got = deqn(c->q, ev, BURST);
		if (got) {
			bench_spin_ok(&sp);
			for (i = 0; i < got; i++)
				if (take(w->mt, s, &ev[i]))
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
static int mt_check(void *arg, const struct bench_round *r)
{
	(void)r;
	return bench_mt_check(&((struct ring_ctx *)arg)->mt);
}

/* ------------------------------------------------------------ tables */

struct impl_def {
	const char *name;
	const char *skip;       /* not built here: why */
	void *(*create)(void);
	void (*destroy)(void *q);
	bench_run_fn st_one, st_burst, mt;
	/* Non-NULL: not run where a case has more than one producer or more
	 * than one consumer, for this reason. */
	const char *solo;
};

#define INSTANTIATE(X)                                                          \
static int st_one_##X(void *a, struct bench_round *r)                           \
{ return st_one(a, r, op_##X##_enq, op_##X##_deq); }                            \
static int st_burst_##X(void *a, struct bench_round *r)                         \
{ return st_burst(a, r, op_##X##_enqn, op_##X##_deqn); }                        \
static void *prod_##X(void *w)                                                  \
{ return producer(w, op_##X##_enq, op_##X##_enqn); }                            \
static void *cons_##X(void *w)                                                  \
{ return consumer(w, op_##X##_deq, op_##X##_deqn); }                            \
static int mt_##X(void *a, struct bench_round *r)                               \
{ return bench_mt_run(&((struct ring_ctx *)a)->mt, r, prod_##X, cons_##X); }

#define IMPL_1P1C(name, X, solo) \
	{ name, NULL, X##_create, X##_destroy, st_one_##X, st_burst_##X, mt_##X, \
	  solo }
#define IMPL(name, X) IMPL_1P1C(name, X, NULL)
#define IMPL_SKIP(name, why) { name, why, NULL, NULL, NULL, NULL, NULL, NULL }

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
#ifdef HAVE_CK_RING
INSTANTIATE(ck)
INSTANTIATE(ckp)
#endif
#ifdef HAVE_DPDK
INSTANTIATE(dpdk)
INSTANTIATE(hts)
#endif
#ifdef HAVE_ATOMIC_QUEUE
INSTANTIATE(aq)
#endif
#ifdef HAVE_CONCURRENTQUEUE
INSTANTIATE(mc)
#endif

static const struct impl_def impls[] = {
	IMPL("lfpoll", lfpoll),
	IMPL_1P1C("floor_spsc", fs, SOLO_SPSC),
	IMPL_1P1C("floor_index", fi, SOLO_SPSC),
#ifdef HAVE_CK_RING
	IMPL("ck_ring", ck),
	IMPL("ck_ring_ptr", ckp),
#else
	IMPL_SKIP("ck_ring", "ck_ring.h not found: libck-dev"),
	IMPL_SKIP("ck_ring_ptr", "ck_ring.h not found: libck-dev"),
#endif
#ifdef HAVE_DPDK
	IMPL("dpdk_mpmc", dpdk),
	IMPL("dpdk_hts", hts),
#else
	IMPL_SKIP("dpdk_mpmc", "DPDK not found by pkg-config: libdpdk-dev"),
	IMPL_SKIP("dpdk_hts", "DPDK not found by pkg-config: libdpdk-dev"),
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
#define NIMPL BENCH_LEN(impls)

/*
 * Targets: lfpoll/peer at least this (peer ns / lfpoll ns).  atomic_queue
 * is a bounded MPMC FIFO of values, as lfpoll's ring is, so the cases where
 * it keeps that order (one producer, one consumer) ask for parity with it;
 * its burst rows are single calls (it has none).  Where it does not keep
 * it (2p2c) it is skipped (SOLO_AQ) and no target names it.
 */
static const struct bench_target t_1thr[] = { { "ck_ring", 1.1 },
                                              { "atomic_queue", 1.0 } };
static const struct bench_target t_1thr_b32[] = { { "ck_ring", 1.4 },
                                                  { "dpdk_mpmc", 1.0 },
                                                  { "atomic_queue", 1.0 } };
static const struct bench_target t_1p1c[] = { { "floor_spsc", 0.87 },
                                              { "ck_ring", 1.7 },
                                              { "dpdk_mpmc", 1.7 },
                                              { "atomic_queue", 1.0 } };
static const struct bench_target t_2p2c[] = { { "dpdk_mpmc", 2.0 },
                                              { "ck_ring", 1.3 } };
static const struct bench_target t_1p1c_b32[] = { { "dpdk_mpmc", 0.9 },
                                                  { "atomic_queue", 1.0 } };

/* The notes every case's label carries. */
#define NOTE_B32 "ck_ring, atomic_queue: 32 single calls; moodycamel: " \
	"bulk calls, enqueue all or none"
#define NOTE_MC "; moodycamel: per-producer FIFO, not linearizable"

static const struct case_def {
	const char *name, *label;
	int np, nc;             /* 0, 0: one thread */
	unsigned burst;
	const struct bench_target *targets;
	size_t n_targets;
} cases[] = {
	{ "ring/1thr", "one thread: enqueue one event, dequeue it" NOTE_MC,
	  0, 0, 1, t_1thr, BENCH_LEN(t_1thr) },
	{ "ring/1thr-b32", "one thread: enqueue 32, dequeue 32 "
	  "(burst calls; " NOTE_B32 ")" NOTE_MC, 0, 0, BURST,
	  t_1thr_b32, BENCH_LEN(t_1thr_b32) },
	{ "ring/1p1c", "1 producer + 1 consumer on 2 CPUs, single operations"
	  NOTE_MC, 1, 1, 1, t_1p1c, BENCH_LEN(t_1p1c) },
	{ "ring/2p2c", "2 producers + 2 consumers: 4 threads on 2 cores, "
	  "single operations" NOTE_MC, 2, 2, 1, t_2p2c, BENCH_LEN(t_2p2c) },
	{ "ring/1p1c-b32", "1 producer + 1 consumer on 2 CPUs, bursts of 32 "
	  "(" NOTE_B32 ")" NOTE_MC, 1, 1, BURST,
	  t_1p1c_b32, BENCH_LEN(t_1p1c_b32) },
	{ "ring/2p2c-b32", "2 producers + 2 consumers: 4 threads on 2 cores, "
	  "bursts of 32 (" NOTE_B32 ")" NOTE_MC, 2, 2, BURST, NULL, 0 },
};
#define NCASE BENCH_LEN(cases)

static struct ring_ctx ctxs[NCASE][NIMPL];

static int ctx_setup(void *arg)
{
	struct ring_ctx *c = arg;

	c->q = c->impl->create();
	return c->q ? 0 : -1;
}

static void ctx_teardown(void *arg)
{
	struct ring_ctx *c = arg;

	c->impl->destroy(c->q);
	c->q = NULL;
}

/*
 * ring/locked-rmw: one uncontended compare-and-swap on a private cache line,
 * through the same atomic layer as the ring.  Any MPMC queue must make at
 * least one atomic read-modify-write in every single enqueue and dequeue
 * (the producers, and the consumers, agree on a position), so this is a
 * floor under each side of ring/1p1c on this machine.  It is printed in the
 * same run so that a throughput target can be read against it.
 */
static int locked_rmw_run(void *arg, struct bench_round *r)
{
	static uint64_t word __attribute__((aligned(64)));
	uint64_t n = 0, t0, e;
	int k;

	(void)arg;
	word = e = 0;
	t0 = bench_now_ns();
	do {
		for (k = 0; k < 256; k++, n++, e++)
			if (!lfp__cas_u64(&word, &e, e + 1))
				return bench_fail("CAS failed at %llu",
				                  (unsigned long long)n);
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return word == n ? 0 : bench_fail("%llu CASes, word %llu",
	                                  (unsigned long long)n,
	                                  (unsigned long long)word);
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
	struct bench_impl bi[NIMPL];
	size_t ci, ii;

	bench_init("ring", argc, argv);
	for (ci = 0; ci < NCASE; ci++) {
		const struct case_def *cd = &cases[ci];
		int threads = cd->np + cd->nc;
		struct bench_case bc = {
			.name = cd->name,
			.label = cd->label,
			.threads = threads ? threads : 1,
			.impls = bi,
			.n_impls = NIMPL,
			.targets = cd->targets,
			.n_targets = cd->n_targets,
			.check = threads ? mt_check : NULL,
			.instr_items = threads ? 0 : INSTR_ITEMS,
		};

		for (ii = 0; ii < NIMPL; ii++) {
			const struct impl_def *d = &impls[ii];
			struct ring_ctx *c = &ctxs[ci][ii];

			c->impl = d;
			c->mt = (struct bench_mt){
				.np = cd->np, .nc = cd->nc, .ctx = c,
				.who = "producer", .made = "produced",
				.took = "consumed",
			};
			c->burst = cd->burst;
			bi[ii] = (struct bench_impl){
				.name = d->name,
				.skip = d->skip ? d->skip
				      : cd->np > 1 || cd->nc > 1 ? d->solo
				      : NULL,
				.arg = c,
				.setup = ctx_setup,
				.teardown = ctx_teardown,
				.run = !threads ? (cd->burst > 1 ? d->st_burst
				                                 : d->st_one)
				                : d->mt,
			};
		}
		bench_case_run(&bc);
	}
	run_locked_rmw();
	return bench_finish();
}
