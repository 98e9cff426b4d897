/*
 * bench/ring_ev.h: the events the ring benchmarks move, and what every ring
 * implementation in them looks like.
 *
 * An event is 8, 56, 64 or 128 bytes (RING_EV_SIZES).  From 24 bytes on it
 * starts with a header: its producer, its sequence number and a check word
 * derived from both (ev_mix), the rest padding; the 64-byte event is the
 * layout the ring benchmark has always moved.  An 8-byte event packs all three into
 * one word: sequence (40 bits), producer (8 bits), 16 check bits.
 *
 * Every implementation's operations are written once, generic in the event
 * size (a size_t esz argument, always a constant where they are inlined),
 * and instantiated per size by ring_work.h.  Their shapes:
 *   enq  0, or nonzero when full      deq  0, or nonzero when empty
 *   enqn/deqn  how many of up to n events were moved
 */
#ifndef LFPOLL_BENCH_RING_EV_H
#define LFPOLL_BENCH_RING_EV_H

#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define CAPACITY    1024        /* every ring's capacity */
#define EV_MAX      128         /* the largest event */
#define BURST_MAX   32          /* the largest burst */
#define FREE_EV     UINT32_MAX  /* ck_ring_ptr: a free pool entry */

/* The most producers a case of this program has (ck_ring_ptr makes a pool
 * for each); the program sets it before its first case. */
static __attribute__((unused)) int ring_max_np = 2;

/* The payload sizes, as an X-macro: X(arg, size). */
#define RING_EV_SIZES(X, a) X(a, 8) X(a, 56) X(a, 64) X(a, 128)

struct ev_hdr {
	uint32_t producer;
	uint32_t spare;
	uint64_t seq;
	uint64_t check;         /* ev_mix(producer, seq): catches torn copies */
};

/* One type per size, for the peers that are typed (ck_ring, lfpoll's
 * typed front end). */
struct ev8 {
	uint64_t word;
};
struct ev56 {
	struct ev_hdr h;
	uint64_t pad[4];
};
struct ev64 {
	uint32_t producer;
	uint32_t spare;
	uint64_t seq;
	uint64_t check;
	uint64_t pad[5];
};
struct ev128 {
	struct ev_hdr h;
	uint64_t pad[13];
};
_Static_assert(sizeof(struct ev8) == 8, "8-byte events");
_Static_assert(sizeof(struct ev56) == 56, "56-byte events");
_Static_assert(sizeof(struct ev64) == 64, "64-byte events");
_Static_assert(sizeof(struct ev128) == 128, "128-byte events");
_Static_assert(offsetof(struct ev64, seq) == offsetof(struct ev_hdr, seq) &&
               offsetof(struct ev64, check) == offsetof(struct ev_hdr, check),
               "struct ev64 starts with struct ev_hdr");

#define EV8_SEQ_BITS 40
#define EV8_SEQ_MASK ((UINT64_C(1) << EV8_SEQ_BITS) - 1)

static inline uint64_t ev_mix(uint32_t p, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)p << 56) ^ 0x5bd1e995u;
}

static inline uint64_t ev8_word(uint32_t p, uint64_t seq)
{
	return (seq & EV8_SEQ_MASK) | (uint64_t)(p & 0xff) << EV8_SEQ_BITS |
	       (ev_mix(p, seq) >> 48) << 48;
}

/* Write event (p, seq) of esz bytes at e.  Only the words that carry
 * something are stored, as the 64-byte benchmark always did: the padding
 * keeps whatever the buffer held. */
static inline __attribute__((always_inline))
void ev_make(void *e, size_t esz, uint32_t p, uint64_t seq)
{
	if (esz < sizeof(struct ev_hdr)) {
		((struct ev8 *)e)->word = ev8_word(p, seq);
		return;
	}
	((struct ev_hdr *)e)->producer = p;
	((struct ev_hdr *)e)->seq = seq;
	((struct ev_hdr *)e)->check = ev_mix(p, seq);
}

/* Event e's producer and sequence, unchecked. */
static inline __attribute__((always_inline))
void ev_id(const void *e, size_t esz, uint32_t *p, uint64_t *seq)
{
	uint64_t w;

	if (esz < sizeof(struct ev_hdr)) {
		w = ((const struct ev8 *)e)->word;
		*p = (uint32_t)(w >> EV8_SEQ_BITS) & 0xff;
		*seq = w & EV8_SEQ_MASK;
		return;
	}
	*p = ((const struct ev_hdr *)e)->producer;
	*seq = ((const struct ev_hdr *)e)->seq;
}

/* Read event e: 0 with *p and *seq, or -1 for a torn event. */
static inline __attribute__((always_inline))
int ev_get(const void *e, size_t esz, uint32_t *p, uint64_t *seq)
{
	ev_id(e, esz, p, seq);
	if (esz < sizeof(struct ev_hdr))
		return ((const struct ev8 *)e)->word == ev8_word(*p, *seq) ? 0 : -1;
	return ((const struct ev_hdr *)e)->check == ev_mix(*p, *seq) ? 0 : -1;
}

/* A pool entry's free mark (ck_ring_ptr): the producer field, or for
 * 8-byte events the whole word (no event of producer 255 is made).  The
 * producer's acquire in ev_is_free pairs with the consumer's release in
 * ev_set_free: the consumer's copy out of the entry is complete before the
 * producer overwrites it. */
static inline __attribute__((always_inline))
int ev_is_free(const void *e, size_t esz)
{
	if (esz < sizeof(struct ev_hdr))
		return __atomic_load_n(&((const struct ev8 *)e)->word,
		                       __ATOMIC_ACQUIRE) == UINT64_MAX;
	return __atomic_load_n(&((const struct ev_hdr *)e)->producer,
	                       __ATOMIC_ACQUIRE) == FREE_EV;
}

static inline __attribute__((always_inline))
void ev_set_free(void *e, size_t esz)
{
	if (esz < sizeof(struct ev_hdr))
		__atomic_store_n(&((struct ev8 *)e)->word, UINT64_MAX,
		                 __ATOMIC_RELEASE);
	else
		__atomic_store_n(&((struct ev_hdr *)e)->producer, FREE_EV,
		                 __ATOMIC_RELEASE);
}

typedef int (*enq_fn)(void *q, const void *e);
typedef int (*deq_fn)(void *q, void *e);
typedef unsigned (*enqn_fn)(void *q, const void *e, unsigned n);
typedef unsigned (*deqn_fn)(void *q, void *e, unsigned n);

static inline void *alloc_aligned(size_t align, size_t bytes)
{
	void *p = aligned_alloc(align, (bytes + align - 1) & ~(align - 1));

	if (!p)
		bench_fail("out of memory");
	return p;
}

/* A queue's struct (bytes, on its own cache lines) and CAPACITY slots of
 * esz bytes aligned to align; NULL when either cannot be had. */
static inline void *alloc_with_slots(size_t bytes, size_t align, size_t esz,
                                     void **slots)
{
	void *q = alloc_aligned(128, bytes);

	if (!q)
		return NULL;
	*slots = alloc_aligned(align, CAPACITY * esz);
	if (!*slots) {
		free(q);
		return NULL;
	}
	return q;
}

/* Free what alloc_with_slots gave: the slots, then the queue's struct. */
static inline void free_with_slots(void *q, void *slots)
{
	free(slots);
	free(q);
}

/* A burst made of single calls, for the peers that have no burst call. */
static inline __attribute__((always_inline))
unsigned enq_each(void *q, const void *e, unsigned n, size_t esz,
                  int (*enq)(void *, const void *, size_t))
{
	unsigned i;

	for (i = 0; i < n && !enq(q, (const char *)e + i * esz, esz); i++)
		;
	return i;
}

static inline __attribute__((always_inline))
unsigned deq_each(void *q, void *e, unsigned n, size_t esz,
                  int (*deq)(void *, void *, size_t))
{
	unsigned i;

	for (i = 0; i < n && !deq(q, (char *)e + i * esz, esz); i++)
		;
	return i;
}

#endif /* LFPOLL_BENCH_RING_EV_H */
