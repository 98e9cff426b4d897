/*
 * bench/peer_cxx.cpp: the ring benchmark's C++ peers behind a C interface
 * (bench/peer_cxx.h), so that the ring benchmarks run them through the same
 * worker loops as every other ring.  The ring benchmark is linked with
 * link-time optimisation where the compilers allow it (bench/bench.mk), so
 * that these calls inline into those loops as the C peers' do.
 *
 * atomic_queue (HAVE_ATOMIC_QUEUE): AtomicQueue2, the variant that holds
 * elements of any type by value, each slot guarded by a one-byte state.
 * Its capacity is a template argument; at 1024 slots it is exactly 1024 (no
 * index remapping below 4096 slots), where the run-time-sized AtomicQueueB2
 * would round a 64-byte element queue up to 4096 (below 4096 slots, 64
 * slot states share each cache line).  try_push and try_pop claim a
 * position on the shared head or tail index with a compare-and-swap after
 * a full or empty check, then wait, spinning, for that slot's state; its
 * fetch-and-add claim is in push and pop, which wait on a full or empty
 * queue instead of reporting it, so the harness cannot use them.  It is
 * meant as a bounded MPMC FIFO like lfpoll's ring, and with one producer
 * and one consumer it is one; but the slot state carries no lap, so a
 * thread that stalls for a lap between its claim and its slot lets
 * another lap's element through, and one producer's events come out of
 * order (the benchmarks run it only with one producer and one consumer).
 * No burst call: a burst is single calls.
 *
 * moodycamel (HAVE_CONCURRENTQUEUE): moodycamel::ConcurrentQueue, a set of
 * per-producer sub-queues (one implicit producer per enqueueing thread)
 * that consumers pick from.  It keeps each producer's order, not one order
 * across producers: it is not linearizable, and its try_dequeue may miss an
 * item while others are being dequeued.  It is unbounded by default; here
 * it is built with room for `capacity` events (capacity / 32 blocks of 32)
 * and used only through the calls that never allocate a block
 * (try_enqueue, try_enqueue_bulk), so it holds at most `capacity` events.
 * A block partly filled by a thread that has exited stays with that
 * thread's sub-queue, so fewer may fit.  Bursts use its bulk calls:
 * try_enqueue_bulk enqueues all n or none, try_dequeue_bulk up to n.
 */
#include "peer_cxx.h"

#include <new>

#ifdef HAVE_ATOMIC_QUEUE
#  include <atomic_queue/atomic_queue.h>
#endif
#ifdef HAVE_CONCURRENTQUEUE
#  include <concurrentqueue/concurrentqueue.h>
#endif

namespace {

/* An event of S bytes, as the C side lays it out; 64 is struct ev64. */
template <size_t S>
struct ev {
	uint64_t w[S / 8];
};
static_assert(sizeof(ev<56>) == 56 && sizeof(ev<128>) == 128, "event sizes");

/* Up to n single calls; stops at the first that fails. */
template <class Q, class E>
unsigned push_each(Q *q, const E *e, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && q->try_push(e[i]); i++)
		;
	return i;
}

template <class Q, class E>
unsigned pop_each(Q *q, E *e, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && q->try_pop(e[i]); i++)
		;
	return i;
}

} // namespace

extern "C" {

/* ------------------------------------------------------------ atomic_queue */
#ifdef HAVE_ATOMIC_QUEUE

/* The defaults: spin on the slot state while waiting, no total-order
 * fence, multi-producer multi-consumer.  The queue's members are
 * line-aligned: C++17's new honours that. */
#define AQ(S)                                                                 \
typedef atomic_queue::AtomicQueue2<ev<S>, RING_PEER_AQ_CAPACITY> aq_##S;      \
void *ring_peer_aq_create_##S(unsigned capacity)                              \
{                                                                             \
	if (capacity != RING_PEER_AQ_CAPACITY)                                \
		return nullptr;                                               \
	return new (std::nothrow) aq_##S();                                   \
}                                                                             \
void ring_peer_aq_destroy_##S(void *q) { delete static_cast<aq_##S *>(q); }   \
int ring_peer_aq_enq_##S(void *q, const void *e)                              \
{ return !static_cast<aq_##S *>(q)->try_push(*static_cast<const ev<S> *>(e)); } \
int ring_peer_aq_deq_##S(void *q, void *e)                                    \
{ return !static_cast<aq_##S *>(q)->try_pop(*static_cast<ev<S> *>(e)); }       \
unsigned ring_peer_aq_enqn_##S(void *q, const void *e, unsigned n)            \
{ return push_each(static_cast<aq_##S *>(q), static_cast<const ev<S> *>(e), n); } \
unsigned ring_peer_aq_deqn_##S(void *q, void *e, unsigned n)                  \
{ return pop_each(static_cast<aq_##S *>(q), static_cast<ev<S> *>(e), n); }
AQ(8)
AQ(56)
AQ(64)
AQ(128)
#endif /* HAVE_ATOMIC_QUEUE */

/* ------------------------------------------------------------ moodycamel */
#ifdef HAVE_CONCURRENTQUEUE

#define MC(S)                                                                 \
typedef moodycamel::ConcurrentQueue<ev<S>> mc_##S;                            \
void *ring_peer_mc_create_##S(unsigned capacity)                              \
{ return new (std::nothrow) mc_##S(capacity); }                               \
void ring_peer_mc_destroy_##S(void *q) { delete static_cast<mc_##S *>(q); }   \
int ring_peer_mc_enq_##S(void *q, const void *e)                              \
{ return !static_cast<mc_##S *>(q)->try_enqueue(*static_cast<const ev<S> *>(e)); } \
int ring_peer_mc_deq_##S(void *q, void *e)                                    \
{ return !static_cast<mc_##S *>(q)->try_dequeue(*static_cast<ev<S> *>(e)); }   \
unsigned ring_peer_mc_enqn_##S(void *q, const void *e, unsigned n)            \
{                                                                             \
	return static_cast<mc_##S *>(q)->try_enqueue_bulk(                    \
		static_cast<const ev<S> *>(e), n) ? n : 0;                    \
}                                                                             \
unsigned ring_peer_mc_deqn_##S(void *q, void *e, unsigned n)                  \
{                                                                             \
	return (unsigned)static_cast<mc_##S *>(q)->try_dequeue_bulk(          \
		static_cast<ev<S> *>(e), n);                                  \
}
MC(8)
MC(56)
MC(64)
MC(128)
#endif /* HAVE_CONCURRENTQUEUE */

} // extern "C"
