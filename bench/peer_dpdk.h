/*
 * bench/peer_dpdk.h: DPDK's rte_ring, the fastest widely used ring, with
 * elements of the event's size through the _elem calls: MP/MC (dpdk), HTS
 * (hts: head/tail sync, claimers of one side in turn) and SP/SC
 * (dpdk_spsc, the peer of lfpoll's single-producer single-consumer mode).
 * Compiled in with HAVE_DPDK (libdpdk-dev).
 *
 * No EAL: rte_ring_init() on our own memory needs none, and every
 * enqueue/dequeue is inline.  The library's only other runtime use is
 * RTE_LOG on a bad argument, which before rte_eal_init() goes to stderr.
 */
#ifndef LFPOLL_BENCH_PEER_DPDK_H
#define LFPOLL_BENCH_PEER_DPDK_H

#ifdef HAVE_DPDK
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "ring_ev.h"

static inline void *dpdk_create_flags(size_t esz, unsigned flags)
{
	ssize_t bytes = rte_ring_get_memsize_elem((unsigned)esz, CAPACITY);
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

static inline void *dpdk_create(size_t esz)
{
	return dpdk_create_flags(esz, 0);
}

static inline void *hts_create(size_t esz)
{
	return dpdk_create_flags(esz, RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ);
}

static inline void *dspsc_create(size_t esz)
{
	return dpdk_create_flags(esz, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

static inline void dpdk_destroy(void *q, size_t esz)
{
	(void)esz;
	free(q);
}

#define hts_destroy dpdk_destroy
#define dspsc_destroy dpdk_destroy

BENCH_TEMPLATE int dpdk_enq(void *q, const void *e, size_t esz)
{
	return rte_ring_mp_enqueue_elem(q, (void *)e, (unsigned)esz);
}

BENCH_TEMPLATE int dpdk_deq(void *q, void *e, size_t esz)
{
	return rte_ring_mc_dequeue_elem(q, e, (unsigned)esz);
}

BENCH_TEMPLATE unsigned dpdk_enqn(void *q, const void *e, unsigned n,
                                  size_t esz)
{
	return rte_ring_mp_enqueue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

BENCH_TEMPLATE unsigned dpdk_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return rte_ring_mc_dequeue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

BENCH_TEMPLATE int hts_enq(void *q, const void *e, size_t esz)
{
	return !rte_ring_mp_hts_enqueue_bulk_elem(q, e, (unsigned)esz, 1, NULL);
}

BENCH_TEMPLATE int hts_deq(void *q, void *e, size_t esz)
{
	return !rte_ring_mc_hts_dequeue_bulk_elem(q, e, (unsigned)esz, 1, NULL);
}

BENCH_TEMPLATE unsigned hts_enqn(void *q, const void *e, unsigned n, size_t esz)
{
	return rte_ring_mp_hts_enqueue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

BENCH_TEMPLATE unsigned hts_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return rte_ring_mc_hts_dequeue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

BENCH_TEMPLATE int dspsc_enq(void *q, const void *e, size_t esz)
{
	return rte_ring_sp_enqueue_elem(q, (void *)e, (unsigned)esz);
}

BENCH_TEMPLATE int dspsc_deq(void *q, void *e, size_t esz)
{
	return rte_ring_sc_dequeue_elem(q, e, (unsigned)esz);
}

BENCH_TEMPLATE unsigned dspsc_enqn(void *q, const void *e, unsigned n,
                                   size_t esz)
{
	return rte_ring_sp_enqueue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

BENCH_TEMPLATE unsigned dspsc_deqn(void *q, void *e, unsigned n, size_t esz)
{
	return rte_ring_sc_dequeue_burst_elem(q, e, (unsigned)esz, n, NULL);
}

#endif /* HAVE_DPDK */
#endif /* LFPOLL_BENCH_PEER_DPDK_H */
