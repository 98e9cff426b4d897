/*
 * bench/peer_cxx.h: the ring benchmarks' C++ peers, atomic_queue and
 * moodycamel's ConcurrentQueue (bench/peer_cxx.cpp), behind a C interface
 * with the operation shapes every ring in the benchmarks has, for each
 * event size; and, for C, the generic operations over them (ring_ev.h).
 */
#ifndef LFPOLL_BENCH_PEER_CXX_H
#define LFPOLL_BENCH_PEER_CXX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * For each peer P (aq: atomic_queue, mc: moodycamel) and event size S (8,
 * 56, 64, 128 bytes):
 *   ring_peer_P_create_S(capacity)  a queue, or NULL when it cannot be had
 *                                   (out of memory; aq: capacity other
 *                                   than RING_PEER_AQ_CAPACITY)
 *   enq   0, or nonzero when full      deq   0, or nonzero when empty
 *   enqn  how many of e[0..n) were enqueued (mc: n or 0, all or nothing)
 *   deqn  how many, up to n, were dequeued into e
 * Every call is non-blocking in the sense of the harness: full and empty
 * are reported, never waited out (a peer may still wait inside a call for
 * a slot another thread has claimed; docs/bench-method.md).
 */
#define RING_PEER_DECLARE(P, S)                                               \
	void *ring_peer_##P##_create_##S(unsigned capacity);                  \
	void ring_peer_##P##_destroy_##S(void *q);                            \
	int ring_peer_##P##_enq_##S(void *q, const void *e);                  \
	int ring_peer_##P##_deq_##S(void *q, void *e);                        \
	unsigned ring_peer_##P##_enqn_##S(void *q, const void *e, unsigned n);\
	unsigned ring_peer_##P##_deqn_##S(void *q, void *e, unsigned n);

/* atomic_queue's capacity is a template argument: this one only. */
#define RING_PEER_AQ_CAPACITY 1024

#define RING_PEER_DECLARE_ALL(P) RING_PEER_DECLARE(P, 8) RING_PEER_DECLARE(P, 56) \
	RING_PEER_DECLARE(P, 64) RING_PEER_DECLARE(P, 128)
RING_PEER_DECLARE_ALL(aq)
RING_PEER_DECLARE_ALL(mc)

#ifdef __cplusplus
}
#endif

#ifndef __cplusplus
#include "ring_ev.h"

/* The call of this size (esz is a constant where these inline). */
#define CXX_SIZED(esz, P, op, ...)                                              \
	((esz) == 8 ? ring_peer_##P##_##op##_8(__VA_ARGS__) :                   \
	 (esz) == 56 ? ring_peer_##P##_##op##_56(__VA_ARGS__) :                 \
	 (esz) == 64 ? ring_peer_##P##_##op##_64(__VA_ARGS__) :                 \
	 ring_peer_##P##_##op##_128(__VA_ARGS__))

/* A queue remembers nothing of its size: destroy by the size it was made
 * with, which the caller keeps (ring_ctx). */
#define CXX_DESTROY(P, esz, q)                                                  \
	((esz) == 8 ? ring_peer_##P##_destroy_8(q) :                            \
	 (esz) == 56 ? ring_peer_##P##_destroy_56(q) :                          \
	 (esz) == 64 ? ring_peer_##P##_destroy_64(q) :                          \
	 ring_peer_##P##_destroy_128(q))

/* aq_create, aq_enq, ... mc_deqn: the C shapes of ring_ev.h. */
#define CXX_PEER(P)                                                             \
static __attribute__((unused)) void *P##_create(size_t esz)                     \
{                                                                               \
	void *q = CXX_SIZED(esz, P, create, CAPACITY);                          \
                                                                                \
	if (!q)                                                                 \
		bench_fail("ring_peer_" #P "_create(%u) failed", CAPACITY);     \
	return q;                                                               \
}                                                                               \
static __attribute__((unused)) void P##_destroy(void *q, size_t esz)            \
{ CXX_DESTROY(P, esz, q); }                                                     \
BENCH_TEMPLATE int P##_enq(void *q, const void *e, size_t esz)                  \
{ return CXX_SIZED(esz, P, enq, q, e); }                                        \
BENCH_TEMPLATE int P##_deq(void *q, void *e, size_t esz)                        \
{ return CXX_SIZED(esz, P, deq, q, e); }                                        \
BENCH_TEMPLATE unsigned P##_enqn(void *q, const void *e, unsigned n, size_t esz) \
{ return CXX_SIZED(esz, P, enqn, q, e, n); }                                    \
BENCH_TEMPLATE unsigned P##_deqn(void *q, void *e, unsigned n, size_t esz)      \
{ return CXX_SIZED(esz, P, deqn, q, e, n); }

#ifdef HAVE_ATOMIC_QUEUE
_Static_assert(CAPACITY == RING_PEER_AQ_CAPACITY, "atomic_queue's capacity");
CXX_PEER(aq)
#endif
#ifdef HAVE_CONCURRENTQUEUE
CXX_PEER(mc)
#endif
#endif /* !__cplusplus */

#endif /* LFPOLL_BENCH_PEER_CXX_H */
