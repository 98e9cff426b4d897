/*
 * bench/peer_ck.h: Concurrency Kit's ck_ring in MPMC mode, the lock-free
 * ring most C projects would pick, in two forms: typed entries copied in
 * and out (CK_RING_PROTOTYPE, one type per event size: ck), and pointers
 * to events in per-producer pools (ck_ring_ptr: ckp).  It has no burst
 * call: a burst is single calls.  Header only (libck-dev), compiled in
 * with HAVE_CK_RING.
 */
#ifndef LFPOLL_BENCH_PEER_CK_H
#define LFPOLL_BENCH_PEER_CK_H

#ifdef HAVE_CK_RING
#include <ck_ring.h>

#include "ring_ev.h"

#define CK_POOL 4096            /* ck_ring_ptr: events per producer */

CK_RING_PROTOTYPE(ev8, ev8)
CK_RING_PROTOTYPE(ev56, ev56)
CK_RING_PROTOTYPE(ev64, ev64)
CK_RING_PROTOTYPE(ev128, ev128)

/* Typed: entries of the event's size copied in and out. */
struct ckq {
	struct ck_ring ring;
	void *buf;
};

static inline void *ck_create(size_t esz)
{
	void *slots;
	struct ckq *q = alloc_with_slots(sizeof(*q), 64, esz, &slots);

	if (q) {
		ck_ring_init(&q->ring, CAPACITY);
		q->buf = slots;
	}
	return q;
}

static inline void ck_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct ckq *)p)->buf);
}

/* The typed call of this size (esz is a constant where these inline). */
#define CK_TYPED(esz, op, q, e)                                                \
	((esz) == 8 ? ck_ring_##op##_mpmc_ev8(&(q)->ring, (q)->buf, (void *)(e)) : \
	 (esz) == 56 ? ck_ring_##op##_mpmc_ev56(&(q)->ring, (q)->buf, (void *)(e)) : \
	 (esz) == 64 ? ck_ring_##op##_mpmc_ev64(&(q)->ring, (q)->buf, (void *)(e)) : \
	 ck_ring_##op##_mpmc_ev128(&(q)->ring, (q)->buf, (void *)(e)))

BENCH_TEMPLATE int ck_enq(void *p, const void *e, size_t esz)
{
	struct ckq *q = p;

	return !CK_TYPED(esz, enqueue, q, e);
}

BENCH_TEMPLATE int ck_deq(void *p, void *e, size_t esz)
{
	struct ckq *q = p;

	return !CK_TYPED(esz, dequeue, q, e);
}

BENCH_TEMPLATE unsigned ck_enqn(void *q, const void *e, unsigned n, size_t esz)
{
	return enq_each(q, e, n, esz, ck_enq);
}

BENCH_TEMPLATE unsigned ck_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return deq_each(q, e, n, esz, ck_deq);
}

/*
 * Pointers: each producer writes its event into the next entry of its own
 * pool and enqueues the pointer; the consumer copies the event out and hands
 * the entry back by marking it free.  An entry still held by a consumer (one
 * preempted between its dequeue and its copy) makes the producer retry, as
 * a full ring would.  One pool per possible producer, allocated when the
 * producer first uses it.
 */
struct ckpq {
	struct ck_ring ring;
	struct ck_ring_buffer *buf;
	size_t esz;
	void *pool[BENCH_MT_MAXP];
};

static inline void ckp_destroy(void *p, size_t esz)
{
	struct ckpq *q = p;
	int i;

	(void)esz;
	for (i = 0; i < BENCH_MT_MAXP; i++)
		free(q->pool[i]);
	free(q->buf);
	free(q);
}

static inline void *ckp_create(size_t esz)
{
	struct ckpq *q = alloc_aligned(128, sizeof(*q));
	size_t j;
	int i;

	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->esz = esz;
	ck_ring_init(&q->ring, CAPACITY);
	q->buf = alloc_aligned(64, CAPACITY * sizeof(*q->buf));
	/* Producer pools are made here, untimed: as many as a case of this
	 * process may use (bench_mt's np is not known yet). */
	for (i = 0; i < BENCH_MT_MAXP; i++) {
		q->pool[i] = alloc_aligned(64, CK_POOL * esz);
		if (!q->pool[i])
			break;
		for (j = 0; j < CK_POOL; j++)
			ev_set_free((char *)q->pool[i] + j * esz, esz);
		if (i + 1 >= ring_max_np)
			break;
	}
	if (!q->buf || !q->pool[0]) {
		ckp_destroy(q, esz);
		return NULL;
	}
	return q;
}

BENCH_TEMPLATE int ckp_enq(void *p, const void *e, size_t esz)
{
	struct ckpq *q = p;
	uint32_t producer;
	uint64_t seq;
	void *slot;

	ev_id(e, esz, &producer, &seq);
	slot = (char *)q->pool[producer] + (seq & (CK_POOL - 1)) * esz;
	/* ev_is_free's acquire pairs with the consumer's release in
	 * ev_set_free (ckp_deq): its copy is complete before we overwrite the
	 * entry. */
	if (!ev_is_free(slot, esz))
		return -1;
	memcpy(slot, e, esz);
	if (!ck_ring_enqueue_mpmc(&q->ring, q->buf, slot)) {
		ev_set_free(slot, esz); /* never published */
		return -1;
	}
	return 0;
}

BENCH_TEMPLATE int ckp_deq(void *p, void *e, size_t esz)
{
	struct ckpq *q = p;
	void *ev;

	if (!ck_ring_dequeue_mpmc(&q->ring, q->buf, &ev))
		return -1;
	memcpy(e, ev, esz);
	ev_set_free(ev, esz);
	return 0;
}

BENCH_TEMPLATE unsigned ckp_enqn(void *q, const void *e, unsigned n,
                                 size_t esz)
{
	return enq_each(q, e, n, esz, ckp_enq);
}

BENCH_TEMPLATE unsigned ckp_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return deq_each(q, e, n, esz, ckp_deq);
}

#endif /* HAVE_CK_RING */
#endif /* LFPOLL_BENCH_PEER_CK_H */
