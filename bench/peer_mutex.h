/*
 * bench/peer_mutex.h: the plain baseline, an array ring under one pthread
 * mutex.  With nothing contending it, it is the fastest in one thread.
 */
#ifndef LFPOLL_BENCH_PEER_MUTEX_H
#define LFPOLL_BENCH_PEER_MUTEX_H

#include <pthread.h>

#include "ring_ev.h"

struct mq {
	pthread_mutex_t lock;
	uint64_t head, tail;
	unsigned char *slots;
};

static inline void *mutex_create(size_t esz)
{
	void *slots;
	struct mq *q = alloc_with_slots(sizeof(*q), 64, esz, &slots);

	if (q) {
		pthread_mutex_init(&q->lock, NULL);
		q->head = q->tail = 0;
		q->slots = slots;
	}
	return q;
}

static inline void mutex_destroy(void *p, size_t esz)
{
	struct mq *q = p;

	(void)esz;
	pthread_mutex_destroy(&q->lock);
	free_with_slots(q, q->slots);
}

BENCH_TEMPLATE unsigned mutex_enqn(void *p, const void *e, unsigned n,
                                   size_t esz)
{
	struct mq *q = p;
	unsigned i, room;

	pthread_mutex_lock(&q->lock);
	room = CAPACITY - (unsigned)(q->head - q->tail);
	if (n > room)
		n = room;
	for (i = 0; i < n; i++)
		memcpy(q->slots + ((q->head + i) & (CAPACITY - 1)) * esz,
		       (const char *)e + i * esz, esz);
	q->head += n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

BENCH_TEMPLATE unsigned mutex_deqn(void *p, void *e, unsigned n, size_t esz)
{
	struct mq *q = p;
	unsigned i, have;

	pthread_mutex_lock(&q->lock);
	have = (unsigned)(q->head - q->tail);
	if (n > have)
		n = have;
	for (i = 0; i < n; i++)
		memcpy((char *)e + i * esz,
		       q->slots + ((q->tail + i) & (CAPACITY - 1)) * esz, esz);
	q->tail += n;
	pthread_mutex_unlock(&q->lock);
	return n;
}

BENCH_TEMPLATE int mutex_enq(void *q, const void *e, size_t esz)
{
	return !mutex_enqn(q, e, 1, esz);
}

BENCH_TEMPLATE int mutex_deq(void *q, void *e, size_t esz)
{
	return !mutex_deqn(q, e, 1, esz);
}

#endif /* LFPOLL_BENCH_PEER_MUTEX_H */
