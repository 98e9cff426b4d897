/*
 * bench/ring_peers.cpp: the ring benchmark's C++ peers behind a C interface
 * (bench/ring_peers.h), so that bench/ring.c runs them through the same
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
 * order (bench/ring.c runs it only with one producer and one consumer).
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
#include "ring_peers.h"

#include <new>

#ifdef HAVE_ATOMIC_QUEUE
#  include <atomic_queue/atomic_queue.h>
#endif
#ifdef HAVE_CONCURRENTQUEUE
#  include <concurrentqueue/concurrentqueue.h>
#endif

static_assert(sizeof(struct ev64) == 64, "events are 64 bytes");

namespace {

/* Up to n single calls; stops at the first that fails. */
template <class Q>
unsigned push_each(Q *q, const struct ev64 *e, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && q->try_push(e[i]); i++)
		;
	return i;
}

template <class Q>
unsigned pop_each(Q *q, struct ev64 *e, unsigned n)
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
 * fence, multi-producer multi-consumer. */
typedef atomic_queue::AtomicQueue2<struct ev64, RING_PEER_AQ_CAPACITY> aq_queue;

void *ring_peer_aq_create(unsigned capacity)
{
	if (capacity != RING_PEER_AQ_CAPACITY)
		return nullptr;
	/* The queue's members are line-aligned: C++17's new honours that. */
	return new (std::nothrow) aq_queue();
}

void ring_peer_aq_destroy(void *q)
{
	delete static_cast<aq_queue *>(q);
}

int ring_peer_aq_enq(void *q, const struct ev64 *e)
{
	return !static_cast<aq_queue *>(q)->try_push(*e);
}

int ring_peer_aq_deq(void *q, struct ev64 *e)
{
	return !static_cast<aq_queue *>(q)->try_pop(*e);
}

unsigned ring_peer_aq_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return push_each(static_cast<aq_queue *>(q), e, n);
}

unsigned ring_peer_aq_deqn(void *q, struct ev64 *e, unsigned n)
{
	return pop_each(static_cast<aq_queue *>(q), e, n);
}
#endif /* HAVE_ATOMIC_QUEUE */

/* ------------------------------------------------------------ moodycamel */
#ifdef HAVE_CONCURRENTQUEUE

typedef moodycamel::ConcurrentQueue<struct ev64> mc_queue;

void *ring_peer_mc_create(unsigned capacity)
{
	return new (std::nothrow) mc_queue(capacity);
}

void ring_peer_mc_destroy(void *q)
{
	delete static_cast<mc_queue *>(q);
}

int ring_peer_mc_enq(void *q, const struct ev64 *e)
{
	return !static_cast<mc_queue *>(q)->try_enqueue(*e);
}

int ring_peer_mc_deq(void *q, struct ev64 *e)
{
	return !static_cast<mc_queue *>(q)->try_dequeue(*e);
}

unsigned ring_peer_mc_enqn(void *q, const struct ev64 *e, unsigned n)
{
	return static_cast<mc_queue *>(q)->try_enqueue_bulk(e, n) ? n : 0;
}

unsigned ring_peer_mc_deqn(void *q, struct ev64 *e, unsigned n)
{
	return (unsigned)static_cast<mc_queue *>(q)->try_dequeue_bulk(e, n);
}
#endif /* HAVE_CONCURRENTQUEUE */

} // extern "C"
