/*
 * bench/ring_peers.h: the event bench/ring.c moves, and the C interface of
 * its C++ peers (bench/ring_peers.cpp): atomic_queue and moodycamel's
 * ConcurrentQueue, each behind the operation shapes every ring in the
 * benchmark has.
 */
#ifndef LFPOLL_BENCH_RING_PEERS_H
#define LFPOLL_BENCH_RING_PEERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ev64 {
	uint32_t producer;
	uint32_t spare;
	uint64_t seq;
	uint64_t check;     /* ev_mix(producer, seq): catches torn copies */
	uint64_t pad[5];
};

/*
 * For each peer P (aq: atomic_queue, mc: moodycamel):
 *   ring_peer_P_create(capacity)  a queue, or NULL when it cannot be had
 *                                 (out of memory; aq: capacity other than
 *                                 RING_PEER_AQ_CAPACITY)
 *   enq   0, or nonzero when full      deq   0, or nonzero when empty
 *   enqn  how many of e[0..n) were enqueued (mc: n or 0, all or nothing)
 *   deqn  how many, up to n, were dequeued into e
 * Every call is non-blocking in the sense of the harness: full and empty
 * are reported, never waited out (a peer may still wait inside a call for
 * a slot another thread has claimed; docs/bench-method.md).
 */
#define RING_PEER_DECLARE(P)                                                  \
	void *ring_peer_##P##_create(unsigned capacity);                      \
	void ring_peer_##P##_destroy(void *q);                                \
	int ring_peer_##P##_enq(void *q, const struct ev64 *e);               \
	int ring_peer_##P##_deq(void *q, struct ev64 *e);                     \
	unsigned ring_peer_##P##_enqn(void *q, const struct ev64 *e,          \
	                              unsigned n);                            \
	unsigned ring_peer_##P##_deqn(void *q, struct ev64 *e, unsigned n);

/* atomic_queue's capacity is a template argument: this one only. */
#define RING_PEER_AQ_CAPACITY 1024

RING_PEER_DECLARE(aq)
RING_PEER_DECLARE(mc)

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_BENCH_RING_PEERS_H */
