/*
 * bench/peer_lfpoll.h: lfpoll's ring, the subject of the ring benchmarks,
 * through its typed front end (LFP_RING_PROTOTYPE), one type per event
 * size, so that the slot size is a constant as in a user's code.
 *
 * lfpoll_create opens the default ring (lock-free MPMC, per-slot);
 * lfpoll_spsc_create opens the ring in single-producer single-consumer
 * mode (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER) where the tree has ring
 * modes; elsewhere RING_NO_MODES says why its rows are skipped.  Both go
 * through the same calls: the mode is the ring's, chosen at open.
 */
#ifndef LFPOLL_BENCH_PEER_LFPOLL_H
#define LFPOLL_BENCH_PEER_LFPOLL_H

#include <lfpoll/ring.h>

#include "ring_ev.h"

#ifdef LFP_SINGLE_PRODUCER
#  define RING_NO_MODES NULL
#else
#  define RING_NO_MODES "lfpoll has no ring modes in this tree"
#endif

LFP_RING_PROTOTYPE(ev8, struct ev8)
LFP_RING_PROTOTYPE(ev56, struct ev56)
LFP_RING_PROTOTYPE(ev64, struct ev64)
LFP_RING_PROTOTYPE(ev128, struct ev128)

static inline void *lfpoll_open(size_t esz, uint64_t flags)
{
	struct lfp_ring *r = NULL;
	int ret;

#ifdef LFP_SINGLE_PRODUCER
	ret = lfp_ring_create_flags(CAPACITY, esz, flags, &r);
#else
	ret = flags ? -ENOSYS : lfp_ring_create(CAPACITY, esz, &r);
#endif
	if (ret) {
		bench_fail("lfp_ring_create: %s", lfp_strerror(ret));
		return NULL;
	}
	return r;
}

static inline void *lfpoll_create(size_t esz)
{
	return lfpoll_open(esz, 0);
}

static __attribute__((unused)) void *lfpoll_spsc_create(size_t esz)
{
#ifdef LFP_SINGLE_PRODUCER
	return lfpoll_open(esz, LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER);
#else
	(void)esz;
	bench_fail("%s", RING_NO_MODES);
	return NULL;
#endif
}

static inline void lfpoll_destroy(void *q, size_t esz)
{
	(void)esz;
	lfp_ring_destroy(q);
}

#define lfpoll_spsc_destroy lfpoll_destroy

/* The typed call of this size (esz is a constant where these inline). */
#define LFPOLL_TYPED(esz, call, ...)                                            \
	((esz) == 8 ? call##_ev8(__VA_ARGS__) :                                 \
	 (esz) == 56 ? call##_ev56(__VA_ARGS__) :                               \
	 (esz) == 64 ? call##_ev64(__VA_ARGS__) : call##_ev128(__VA_ARGS__))

BENCH_TEMPLATE int lfpoll_enq(void *q, const void *e, size_t esz)
{
	return LFPOLL_TYPED(esz, lfp_ring_enqueue, q, e);
}

BENCH_TEMPLATE int lfpoll_deq(void *q, void *e, size_t esz)
{
	return LFPOLL_TYPED(esz, lfp_ring_dequeue, q, e);
}

BENCH_TEMPLATE unsigned lfpoll_enqn(void *q, const void *e, unsigned n,
                                    size_t esz)
{
	return (unsigned)LFPOLL_TYPED(esz, lfp_ring_enqueue_burst, q, e, n);
}

BENCH_TEMPLATE unsigned lfpoll_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return (unsigned)LFPOLL_TYPED(esz, lfp_ring_dequeue_burst, q, e, n);
}

#endif /* LFPOLL_BENCH_PEER_LFPOLL_H */
