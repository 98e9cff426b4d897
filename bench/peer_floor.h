/*
 * bench/peer_floor.h: the floors of the ring benchmarks, measured in the
 * same run as the rings: what moving an event between two threads costs
 * with no atomic read-modify-write at all (floor_spsc, floor_index), and
 * what one uncontended compare-and-swap costs (locked_rmw_run).
 *
 * floor_spsc (fs) hands each event over through a flag word of its own
 * slot, with no shared index: the floor of a single transfer.  floor_index
 * (fi) is an index ring whose sides cache each other's index and copy
 * bursts with one index update: the floor of a burst.  Both are one
 * producer and one consumer only.  floor_mpmc (fm) is the design of
 * lfpoll's default mode with nothing else: a per-slot MPMC ring, one CAS
 * per side and operation and a slot word per entry.  floor_copy (fc), for
 * one thread only, is the copies alone: what any ring that copies its
 * events in and out must pay, with no index shared and nothing checked.
 * floor_rmw (fr), one thread only too, is floor_copy plus one CAS per side
 * and operation: about what any ring for several producers and consumers
 * must pay.
 */
#ifndef LFPOLL_BENCH_PEER_FLOOR_H
#define LFPOLL_BENCH_PEER_FLOOR_H

#include <lfpoll/ring.h>

#include <stdatomic.h>

#include "ring_ev.h"

/* A floor's single operations: bursts of one (0, or 1 when full/empty). */
#define FLOOR_SINGLES(X)                                                        \
BENCH_TEMPLATE int X##_enq(void *q, const void *e, size_t esz)                 \
{                                                                               \
	return !X##_enqn(q, e, 1, esz);                                         \
}                                                                               \
BENCH_TEMPLATE int X##_deq(void *q, void *e, size_t esz)                       \
{                                                                               \
	return !X##_deqn(q, e, 1, esz);                                         \
}

/*
 * floor_spsc: each side keeps its position to itself; the only lines that
 * cross between the CPUs are the slots'.  A slot holds the event and its
 * flag laid out as lfpoll's ring lays out a slot of that size: when event
 * and flag fit one line, a power of two of at most a line, flag first;
 * otherwise the event's lines and, after them, a line starting with the
 * flag (for 64 bytes, a 128-byte-aligned pair, the unit the adjacent-line
 * prefetcher fetches).  There is no read-modify-write anywhere.
 */
static inline __attribute__((always_inline)) size_t fs_fits_line(size_t esz)
{
	return esz + 8 <= 64;
}

static inline __attribute__((always_inline)) size_t fs_stride(size_t esz)
{
	size_t s = 16;

	if (!fs_fits_line(esz))
		return ((esz + 63) & ~(size_t)63) + 64;
	while (s < esz + 8)
		s <<= 1;
	return s;
}

static inline __attribute__((always_inline)) size_t fs_flag_off(size_t esz)
{
	return fs_fits_line(esz) ? 0 : (esz + 63) & ~(size_t)63;
}

static inline __attribute__((always_inline)) size_t fs_data_off(size_t esz)
{
	return fs_fits_line(esz) ? 8 : 0;
}

struct fsq {
	unsigned char *slots;   /* read-only after create */
	uint32_t mask;
	uint32_t head __attribute__((aligned(128)));  /* producer's only */
	uint32_t tail __attribute__((aligned(128)));  /* consumer's only */
} __attribute__((aligned(128)));

static inline __attribute__((always_inline))
atomic_uint *fs_flag(struct fsq *q, uint32_t pos, size_t esz)
{
	return (atomic_uint *)(q->slots + (pos & q->mask) * fs_stride(esz) +
	                       fs_flag_off(esz));
}

static inline __attribute__((always_inline))
unsigned char *fs_data(struct fsq *q, uint32_t pos, size_t esz)
{
	return q->slots + (pos & q->mask) * fs_stride(esz) + fs_data_off(esz);
}

static inline void *fs_create(size_t esz)
{
	void *slots;
	struct fsq *q = alloc_with_slots(sizeof(*q), 128, fs_stride(esz),
	                                 &slots);
	uint32_t i;

	if (!q)
		return NULL;
	q->slots = slots;
	q->mask = CAPACITY - 1;
	for (i = 0; i < CAPACITY; i++)
		atomic_init(fs_flag(q, i, esz), 0);
	q->head = q->tail = 0;
	return q;
}

static inline void fs_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct fsq *)p)->slots);
}

BENCH_TEMPLATE unsigned fs_enqn(void *p, const void *e, unsigned n, size_t esz)
{
	struct fsq *q = p;
	unsigned i;

	for (i = 0; i < n; i++) {
		atomic_uint *full = fs_flag(q, q->head + i, esz);

		/* F1: acquire pairs with F4: the consumer's copy of the
		 * previous lap's event is complete before we overwrite it. */
		if (atomic_load_explicit(full, memory_order_acquire))
			break;
		memcpy(fs_data(q, q->head + i, esz), (const char *)e + i * esz,
		       esz);
		/* F2: release pairs with F3: the event is written before the
		 * consumer can see the slot full. */
		atomic_store_explicit(full, 1, memory_order_release);
	}
	q->head += i;
	return i;
}

BENCH_TEMPLATE unsigned fs_deqn(void *p, void *e, unsigned n, size_t esz)
{
	struct fsq *q = p;
	unsigned i;

	for (i = 0; i < n; i++) {
		atomic_uint *full = fs_flag(q, q->tail + i, esz);

		/* F3: acquire pairs with F2: we read the event the producer
		 * wrote before it set the flag. */
		if (!atomic_load_explicit(full, memory_order_acquire))
			break;
		memcpy((char *)e + i * esz, fs_data(q, q->tail + i, esz), esz);
		/* F4: release pairs with F1: our copy is done before the
		 * producer may reuse the slot. */
		atomic_store_explicit(full, 0, memory_order_release);
	}
	q->tail += i;
	return i;
}

FLOOR_SINGLES(fs)

/*
 * floor_index: shared head and tail indices and slots of the event's size,
 * packed.  Each side writes its own index on its own line and keeps a copy
 * of the other's there, re-reading the other's line only when its copy says
 * full or empty; a burst moves its events with one index update, so one
 * line crosses per burst besides the events' own.  The indices run free;
 * head - tail (unsigned) is the fill, so all CAPACITY slots are usable.
 */
struct fiq {
	unsigned char *slots;   /* read-only after create */
	uint32_t mask;
	atomic_uint head __attribute__((aligned(128)));  /* written by producer */
	uint32_t tail_seen;     /* producer's copy of tail */
	atomic_uint tail __attribute__((aligned(128)));  /* written by consumer */
	uint32_t head_seen;     /* consumer's copy of head */
} __attribute__((aligned(128)));

static inline void *fi_create(size_t esz)
{
	struct fiq *q = alloc_aligned(128, sizeof(*q));

	if (!q)
		return NULL;
	q->slots = alloc_aligned(64, CAPACITY * esz);
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

static inline void fi_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct fiq *)p)->slots);
}

BENCH_TEMPLATE unsigned fi_enqn(void *p, const void *e, unsigned n, size_t esz)
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
		memcpy(q->slots + ((head + i) & q->mask) * esz,
		       (const char *)e + i * esz, esz);
	/* I2: release pairs with I3: the events are written before the
	 * consumer can see the new head. */
	atomic_store_explicit(&q->head, head + n, memory_order_release);
	return n;
}

BENCH_TEMPLATE unsigned fi_deqn(void *p, void *e, unsigned n, size_t esz)
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
		memcpy((char *)e + i * esz,
		       q->slots + ((tail + i) & q->mask) * esz, esz);
	/* I4: release pairs with I1: our copies are done before the
	 * producer can see these slots free. */
	atomic_store_explicit(&q->tail, tail + n, memory_order_release);
	return n;
}

FLOOR_SINGLES(fi)

/*
 * floor_copy: a ring's copies and nothing else, for the one-thread cases
 * (no other thread may touch it: head and tail are plain fields).  A burst
 * is one memcpy in and one out per run that does not wrap, as DPDK's SP/SC
 * ring copies and lfpoll's copies out (its copy in of 33- to 128-byte
 * entries goes entry by entry, which ran level with this in one thread:
 * docs/design.md 1.1); a single event one memcpy of its size.  Full
 * and empty are kept; nothing else is.  No ring that copies its events can
 * be faster in these shapes, so a target this floor misses too is out of
 * reach of any such ring on the machine at hand.
 */
struct fcq {
	unsigned char *slots;   /* CAPACITY events of esz bytes */
	uint32_t head, tail;
};

static inline void *fc_create(size_t esz)
{
	void *slots;
	struct fcq *q = alloc_with_slots(sizeof(*q), 64, esz, &slots);

	if (!q)
		return NULL;
	q->slots = slots;
	q->head = q->tail = 0;
	return q;
}

static inline void fc_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct fcq *)p)->slots);
}

/* Copy n events between e and the slots from position pos on (in: into
 * the slots), in at most two runs. */
BENCH_TEMPLATE void fc_copy(unsigned char *slots, uint32_t pos,
                            unsigned char *e, unsigned n, size_t esz, int in)
{
	uint32_t at = pos & (CAPACITY - 1), run = CAPACITY - at;
	unsigned char *s = slots + at * esz;

	if (n == 1) { /* a copy of the event's size, a constant at the call */
		memcpy(in ? s : e, in ? e : s, esz);
		return;
	}
	if (run > n)
		run = n;
	memcpy(in ? s : e, in ? e : s, run * esz);
	if (n > run)
		memcpy(in ? slots : e + run * esz,
		       in ? e + run * esz : slots, (n - run) * esz);
}

BENCH_TEMPLATE unsigned fc_enqn(void *p, const void *e, unsigned n, size_t esz)
{
	struct fcq *q = p;
	uint32_t room = CAPACITY - (q->head - q->tail);

	if (n > room)
		n = room;
	if (!n)
		return 0;
	fc_copy(q->slots, q->head, (unsigned char *)e, n, esz, 1);
	q->head += n;
	return n;
}

BENCH_TEMPLATE unsigned fc_deqn(void *p, void *e, unsigned n, size_t esz)
{
	struct fcq *q = p;
	uint32_t have = q->head - q->tail;

	if (n > have)
		n = have;
	if (!n)
		return 0;
	fc_copy(q->slots, q->tail, (unsigned char *)e, n, esz, 0);
	q->tail += n;
	return n;
}

FLOOR_SINGLES(fc)

/*
 * floor_rmw: floor_copy plus the claim, for the one-thread cases of the
 * default mode.  A linearizable bounded queue for several producers and
 * consumers makes at least one atomic read-modify-write or one full
 * barrier in each enqueue and each dequeue, since each can succeed or
 * fail because of another (Attiya et al., "Laws of Order", POPL 2011),
 * whether or not its producers wait for one another; on x86 either is a
 * locked instruction.  lfpoll's default mode, DPDK's MP/MC
 * ring and ck_ring's MPMC ring all claim with a CAS.  This floor loads its
 * position and makes that CAS, relaxed, then copies as floor_copy does; it
 * publishes nothing, so no other thread may touch it.  A target this
 * floor misses too is out of reach of such rings on the machine at hand,
 * give or take a ring that claims with one instruction less (a
 * fetch-and-add with no load before it).
 */
struct frq {
	unsigned char *slots;           /* CAPACITY events of esz bytes */
	_Atomic uint32_t head __attribute__((aligned(64)));
	_Atomic uint32_t tail __attribute__((aligned(64)));
};

static inline void *fr_create(size_t esz)
{
	void *slots;
	struct frq *q = alloc_with_slots(sizeof(*q), 64, esz, &slots);

	if (!q)
		return NULL;
	q->slots = slots;
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	return q;
}

static inline void fr_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct frq *)p)->slots);
}

/*
 * Claim up to n positions at *end, from pos: the CAS first, on the
 * position just loaded, then the room, from the other side's position
 * (*other) loaded after it; a claim larger than the room is cut back with
 * a plain store, which one thread may make.  Relaxed throughout: nothing
 * is published, and on x86 the CAS is the same locked instruction at any
 * order.  With one thread the CAS cannot fail; if it did, nothing is
 * claimed.
 *
 * The room comes after the CAS because each side's CAS writes the other
 * side's room, and on x86 loading it ahead of the next locked instruction
 * costs several ns a side, which the rings this floor stands for do not
 * pay (docs/bench-method.md, "Why the room comes after the CAS").
 */
BENCH_TEMPLATE unsigned fr_claim(_Atomic uint32_t *end, uint32_t pos,
                                 _Atomic uint32_t *other, unsigned n, int in)
{
	uint32_t have;

	if (!n || !atomic_compare_exchange_strong_explicit(
	            end, &pos, pos + n, memory_order_relaxed,
	            memory_order_relaxed))
		return 0;
	have = atomic_load_explicit(other, memory_order_relaxed);
	have = in ? CAPACITY - (pos - have) : have - pos;
	if (n > have) {
		n = have;
		atomic_store_explicit(end, pos + n, memory_order_relaxed);
	}
	return n;
}

BENCH_TEMPLATE unsigned fr_enqn(void *p, const void *e, unsigned n, size_t esz)
{
	struct frq *q = p;
	uint32_t head = atomic_load_explicit(&q->head, memory_order_relaxed);

	n = fr_claim(&q->head, head, &q->tail, n, 1);
	if (n)
		fc_copy(q->slots, head, (unsigned char *)e, n, esz, 1);
	return n;
}

BENCH_TEMPLATE unsigned fr_deqn(void *p, void *e, unsigned n, size_t esz)
{
	struct frq *q = p;
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	n = fr_claim(&q->tail, tail, &q->head, n, 0);
	if (n)
		fc_copy(q->slots, tail, (unsigned char *)e, n, esz, 0);
	return n;
}

FLOOR_SINGLES(fr)

/*
 * floor_mpmc: a per-slot ring for any number of producers and consumers
 * reduced to its protocol, the floor under lfpoll's default mode (the
 * design is the bounded MPMC queue with a sequence per cell that D. Vyukov
 * published, with lfpoll's burst claims).  Each slot's word holds a 64-bit
 * sequence: pos while the slot is free for position pos, pos + 1 once the
 * entry at pos is in, pos + CAPACITY once a consumer took it.  A producer
 * counts the slots from head that it sees free, up to n, and claims them
 * with one CAS; a consumer does the same from tail with the slots it sees
 * full; each then copies and stores the words.  As in lfpoll, no producer
 * waits for a consumer and no consumer for another consumer, and a
 * dequeue that takes nothing leaves the caller's buffer alone.  Left out,
 * all of which lfpoll's ring pays for: a geometry read from the queue
 * (here the capacity, stride and event size are constants), lengths and
 * metadata in the word, the modes, a slot word that reads 0 in never-used
 * memory (here every word is written at create), the re-reads that guard
 * 32-bit sequences, and peek.  Words and payloads are laid out as
 * floor_spsc's.  A single operation is a burst of one.
 */
struct fmq {
	unsigned char *slots;   /* read-only after create */
	_Atomic uint64_t head __attribute__((aligned(128)));
	_Atomic uint64_t tail __attribute__((aligned(128)));
} __attribute__((aligned(128)));

BENCH_TEMPLATE _Atomic uint64_t *fm_word(struct fmq *q, uint64_t pos,
                                         size_t esz)
{
	return (_Atomic uint64_t *)(q->slots + (pos & (CAPACITY - 1)) *
	                            fs_stride(esz) + fs_flag_off(esz));
}

BENCH_TEMPLATE unsigned char *fm_data(struct fmq *q, uint64_t pos, size_t esz)
{
	return q->slots + (pos & (CAPACITY - 1)) * fs_stride(esz) +
	       fs_data_off(esz);
}

static inline void *fm_create(size_t esz)
{
	void *slots;
	struct fmq *q = alloc_with_slots(sizeof(*q), 128, fs_stride(esz),
	                                 &slots);
	uint64_t i;

	if (!q)
		return NULL;
	q->slots = slots;
	for (i = 0; i < CAPACITY; i++)
		atomic_init(fm_word(q, i, esz), i);
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	return q;
}

static inline void fm_destroy(void *p, size_t esz)
{
	(void)esz;
	free_with_slots(p, ((struct fmq *)p)->slots);
}

/*
 * Claim up to n consecutive positions from *end whose words read want(pos)
 * = pos + off (off 0: free, for producers; 1: full, for consumers): the
 * number claimed, 0 when the first is not ready for this lap (full or
 * empty), with the first in *first.
 */
BENCH_TEMPLATE unsigned fm_claim(struct fmq *q, _Atomic uint64_t *end,
                                 unsigned n, uint64_t off, size_t esz,
                                 uint64_t *first)
{
	/* Relaxed: a guess, which the CAS validates. */
	uint64_t pos = atomic_load_explicit(end, memory_order_relaxed), w = 0;
	unsigned k;

	if (!n)
		return 0;
	for (;;) {
		for (k = 0; k < n; k++) {
			/* M1 (producers): acquire pairs with M4: the copy out
			 * of the previous lap's entry is done before we
			 * overwrite it.  M3 (consumers): acquire pairs with
			 * M2: the entry was written before its word said so. */
			w = atomic_load_explicit(fm_word(q, pos + k, esz),
			                         memory_order_acquire);
			if (w != pos + k + off)
				break;
		}
		if (k) {
			/* Ordering for the payload comes from M1..M4. */
			if (atomic_compare_exchange_weak_explicit(end, &pos,
			                pos + k, memory_order_relaxed,
			                memory_order_relaxed))
				break;
		} else if ((int64_t)(w - (pos + off)) < 0) {
			return 0; /* an earlier lap's entry, or none yet */
		} else {
			pos = atomic_load_explicit(end, memory_order_relaxed);
		}
	}
	*first = pos;
	return k;
}

BENCH_TEMPLATE unsigned fm_enqn(void *p, const void *e, unsigned n, size_t esz)
{
	struct fmq *q = p;
	uint64_t pos = 0;
	unsigned k = fm_claim(q, &q->head, n, 0, esz, &pos), i;

	for (i = 0; i < k; i++) {
		memcpy(fm_data(q, pos + i, esz), (const char *)e + i * esz,
		       esz);
		/* M2: release pairs with M3: the entry is in before the word
		 * says so. */
		atomic_store_explicit(fm_word(q, pos + i, esz), pos + i + 1,
		                      memory_order_release);
	}
	return k;
}

BENCH_TEMPLATE unsigned fm_deqn(void *p, void *e, unsigned n, size_t esz)
{
	struct fmq *q = p;
	uint64_t pos = 0;
	unsigned k = fm_claim(q, &q->tail, n, 1, esz, &pos), i;

	for (i = 0; i < k; i++) {
		memcpy((char *)e + i * esz, fm_data(q, pos + i, esz), esz);
		/* M4: release pairs with M1: our copy is done before the slot
		 * is free for the next lap's producer. */
		atomic_store_explicit(fm_word(q, pos + i, esz),
		                      pos + i + CAPACITY, memory_order_release);
	}
	return k;
}

FLOOR_SINGLES(fm)

/*
 * ring/locked-rmw: one uncontended compare-and-swap on a private cache line,
 * through the same atomic layer as lfpoll's ring.  Any MPMC queue must make
 * at least one atomic read-modify-write in every single enqueue and dequeue
 * (the producers, and the consumers, agree on a position), so this is a
 * floor under each side of ring/1p1c on this machine.
 */
static __attribute__((unused)) int locked_rmw_run(void *arg,
                                                  struct bench_round *r)
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

#endif /* LFPOLL_BENCH_PEER_FLOOR_H */
