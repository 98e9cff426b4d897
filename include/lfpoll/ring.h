/*
 * lfpoll ring: a bounded FIFO of fixed-size slots, power-of-two capacity,
 * caller memory or lfp_ring_create(), in one of three modes chosen at init:
 *
 *   default                any number of producers and consumers; lock-free.
 *                          Per-slot: each slot has a word that says whether
 *                          it is free or published for which position
 *                          (internal/ring_slot.h).
 *   LFP_SINGLE_PRODUCER or LFP_SINGLE_CONSUMER
 *                          the same per-slot ring, whose single side owns
 *                          its index and claims without a CAS.
 *   both                   an index ring: one producer, one consumer,
 *                          wait-free, a burst copied in one pass per side
 *                          (internal/ring_index.h).
 *
 * Entries keep their own length (0 to the slot size).  Peek copies the head
 * entry without claiming it (a seqlock read in the per-slot ring: never
 * torn, never blocking other consumers); consume(ticket) then takes exactly
 * that entry, or fails with -ESTALE when another consumer took it first.
 *
 * Layout (docs/design.md, "Ring layout"): in a per-slot ring, a slot whose
 * word and payload fit one cache line is a power of two of at most a line,
 * word first; a larger one starts its payload on a line boundary and puts
 * the word after it, so no payload copy touches more lines than its size
 * needs.  An index ring's payloads are packed at a multiple of 8 bytes,
 * with the metadata in an array of its own.  A never-used slot's word is 0,
 * so slot memory that the kernel hands out zeroed costs no resident page
 * until the ring reaches it (lfp_ring_create, EQs and CQs).
 */
#ifndef LFPOLL_RING_H
#define LFPOLL_RING_H

#include "common.h"
#include "internal/mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the per-slot word (sequence << 32 | metadata). */
#define LFP__RING_HDR 8
/* Largest capacity for which the 32-bit sequence difference is exact. */
#define LFP_RING_MAX_CAPACITY ((size_t)1 << 30)
/* The flags a ring accepts. */
#define LFP__RING_FLAGS (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER)

/* Modes (struct lfp_ring.mode): bits, so that a per-slot ring tests its
 * single side with one AND; both bits make the index ring. */
#define LFP__RING_MPMC  0u
#define LFP__RING_SP    1u
#define LFP__RING_SC    2u
#define LFP__RING_INDEX (LFP__RING_SP | LFP__RING_SC)

struct lfp_ring {
	/* Read-only after init; read by both sides, written by neither. */
	unsigned char *slots;        /* the slot memory */
	unsigned char *words;        /* slot 0's word (per-slot ring) */
	unsigned char *data;         /* slot 0's payload */
	uint32_t *meta;              /* index ring: each entry's metadata */
	uint64_t mask;
	size_t stride;               /* from one slot (payload) to the next */
	size_t slot_size;
	uint32_t len_mask;           /* metadata bits that hold the length */
	uint32_t mode;               /* LFP__RING_* */
	uint32_t owns_mem;           /* the memory is lfp__zalloc's */
	char lfp__pad0[LFP_CACHELINE_PAIR - 4 * sizeof(void *) - sizeof(uint64_t) -
	               2 * sizeof(size_t) - 3 * sizeof(uint32_t)];
	/* Producers only: next position to claim. */
	uint64_t head;
	uint64_t tail_seen;          /* index ring: the producer's copy of tail */
	uint64_t len_change;         /* index ring: where the last run of equal
	                              * metadata words began (I5) */
	uint32_t last_meta;          /* index ring: that run's word */
	uint32_t prod_busy;          /* LFP_DEBUG: a single producer is inside */
	char lfp__pad1[LFP_CACHELINE_PAIR - 3 * sizeof(uint64_t) -
	               2 * sizeof(uint32_t)];
	/* Consumers only: next position to take. */
	uint64_t tail;
	uint64_t head_seen;          /* index ring: the consumer's copy of head */
	uint64_t change_seen;        /* index ring: its copy of len_change */
	uint32_t cons_busy;          /* LFP_DEBUG: a single consumer is inside */
	char lfp__pad2[LFP_CACHELINE_PAIR - 3 * sizeof(uint64_t) - sizeof(uint32_t)];
} LFP__ALIGN8;

/*
 * The ring's geometry, loaded once per operation into locals: every atomic
 * is also a compiler barrier, which would otherwise make the compiler
 * reload these fields after each one.
 */
struct lfp__ring_geo {
	unsigned char *words;
	unsigned char *data;
	uint32_t *meta;
	uint64_t mask;
	size_t stride;
	uint32_t len_mask;
	uint32_t mode;
};

/* What a consumer's claim found (lfp__ring_claim_cons). */
struct lfp__claim {
	uint64_t first;              /* the first position claimed */
	uint32_t meta;               /* the first entry's metadata */
	int exact;                   /* every entry is exactly cap bytes */
	int why;                     /* none claimed: LFP__RING_EMPTY etc. */
};

/* Why a consumer's claim returned 0 (lfp__claim.why).  RETRY: only from
 * one inline attempt, which could not decide (the full claim then does). */
enum { LFP__RING_EMPTY, LFP__RING_TOO_BIG, LFP__RING_GATED, LFP__RING_RETRY };

LFP_FORCE_INLINE struct lfp__ring_geo lfp__ring_geo(const struct lfp_ring *r)
{
	struct lfp__ring_geo g;

	g.words = r->words;
	g.data = r->data;
	g.meta = r->meta;
	g.mask = r->mask;
	g.stride = r->stride;
	g.len_mask = r->len_mask;
	g.mode = r->mode;
	return g;
}

/* The payload of the slot at pos. */
LFP_FORCE_INLINE unsigned char *lfp__ring_data(const struct lfp__ring_geo *g,
                                               uint64_t pos)
{
	return g->data + (size_t)(pos & g->mask) * g->stride;
}

/* ---------------------------------------------------------------- layout */

LFP_INLINE unsigned lfp__ring_mode(uint64_t flags)
{
	return (flags & LFP_SINGLE_PRODUCER ? LFP__RING_SP : 0) |
	       (flags & LFP_SINGLE_CONSUMER ? LFP__RING_SC : 0);
}

/*
 * Where everything of a ring sits in its memory.
 *
 * Per-slot ring: each slot is a word and a payload.  When they fit one
 * line, the slot is their size rounded up to a power of two (16 to 64),
 * word first, so a stride-aligned slot never crosses a line.  A larger
 * payload starts its slot on a line boundary, the word follows it, and the
 * stride is whole lines.  (Words packed in an array of their own, for
 * payloads of whole lines, halved the lines a burst moves but made single
 * entries across cores 26% slower: docs/design.md, "Ring layout".)
 *
 * Index ring: payloads packed at a multiple of 8 bytes, then the metadata
 * array, 4 bytes an entry.
 */
struct lfp__ring_shape {
	size_t stride;                  /* slot to slot */
	size_t data_off, word_off, meta_off;
	size_t bytes;                   /* the memory it needs */
};

#define LFP__LINE_UP(n) (((n) + LFP_CACHELINE - 1) & ~(size_t)(LFP_CACHELINE - 1))

/* The shape of a ring of capacity slots of slot_size bytes in mode, for
 * parameters already checked (lfp__ring_params_ok). */
LFP_INLINE void lfp__ring_shape(size_t capacity, size_t slot_size, unsigned mode,
                                struct lfp__ring_shape *sh)
{
	size_t need = LFP__RING_HDR + slot_size, body = (slot_size + 7) & ~(size_t)7;
	size_t s = 16;

	memset(sh, 0, sizeof(*sh));
	if (mode == LFP__RING_INDEX) {
		sh->stride = body;
		sh->meta_off = LFP__LINE_UP(capacity * body);
		sh->bytes = sh->meta_off + capacity * sizeof(uint32_t);
		return;
	}
	if (need <= LFP_CACHELINE) {
		while (s < need)
			s <<= 1;
		sh->stride = s;
		sh->data_off = LFP__RING_HDR;
		sh->bytes = capacity * s;
		return;
	}
	sh->stride = LFP__LINE_UP(body + LFP__RING_HDR);
	sh->word_off = body;
	sh->bytes = capacity * sh->stride;
}

LFP_INLINE int lfp__ring_params_ok(size_t capacity, size_t slot_size,
                                   uint64_t flags)
{
	size_t room;

	if (flags & ~(uint64_t)LFP__RING_FLAGS)
		return 0;
	if (capacity < 2 || capacity > LFP_RING_MAX_CAPACITY ||
	    (capacity & (capacity - 1)) != 0)
		return 0;
	if (slot_size == 0 || slot_size > (size_t)INT32_MAX)
		return 0;
	/* Room for capacity lines of slot_size (the largest stride, rounded
	 * up), the words or metadata beside them and their alignment.  With
	 * a 32-bit size_t the room per slot can be less than the header
	 * (capacity 2^29 and up): refused before the subtraction wraps. */
	room = (SIZE_MAX - LFP_CACHELINE) / capacity;
	if (room < LFP__RING_HDR ||
	    LFP__LINE_UP(slot_size + LFP__RING_HDR) > room - LFP__RING_HDR)
		return 0;
	return 1;
}

/* The smallest power of two >= n, and at least 2 (queue capacities). */
LFP_INLINE size_t lfp__pow2_at_least(size_t n)
{
	size_t p = 2;

	while (p < n && p <= SIZE_MAX / 2)
		p <<= 1;
	return p;
}

/* Bytes of slot memory for lfp_ring_init_flags(); 0 for invalid parameters. */
LFP_INLINE size_t lfp_ring_memsize_flags(size_t capacity, size_t slot_size,
                                         uint64_t flags)
{
	struct lfp__ring_shape sh;

	if (!lfp__ring_params_ok(capacity, slot_size, flags))
		return 0;
	lfp__ring_shape(capacity, slot_size, lfp__ring_mode(flags), &sh);
	return sh.bytes;
}

/* Bytes of slot memory for lfp_ring_init(); 0 for invalid parameters. */
LFP_INLINE size_t lfp_ring_memsize(size_t capacity, size_t slot_size)
{
	return lfp_ring_memsize_flags(capacity, slot_size, 0);
}

/* ---------------------------------------------------------------- init */

/* Set r up over mem, whose slot words (per-slot ring) must already be 0. */
LFP_INLINE void lfp__ring_setup(struct lfp_ring *r, void *mem, size_t capacity,
                                size_t slot_size, uint64_t flags)
{
	struct lfp__ring_shape sh;

	memset(r, 0, sizeof(*r));
	r->mode = lfp__ring_mode(flags);
	lfp__ring_shape(capacity, slot_size, r->mode, &sh);
	r->slots = (unsigned char *)mem;
	r->mask = capacity - 1;
	r->stride = sh.stride;
	r->words = r->slots + sh.word_off;
	r->data = r->slots + sh.data_off;
	r->len_mask = UINT32_MAX;
	r->slot_size = slot_size;
	if (r->mode == LFP__RING_INDEX)
		r->meta = (uint32_t *)(void *)(r->slots + sh.meta_off);
}

/*
 * Initialise r over mem (lfp_ring_memsize_flags() bytes, 8-byte aligned;
 * 64-byte aligned for best speed) in the mode that flags name.  capacity:
 * a power of two from 2 to 2^30.  r must be 8-byte aligned, as its type
 * is (LFP__ALIGN8): one placed in raw memory at less could put a position
 * across a cache line on 32-bit targets.
 */
LFP_INLINE int lfp_ring_init_flags(struct lfp_ring *r, void *mem, size_t capacity,
                                   size_t slot_size, uint64_t flags)
{
	size_t i, stride;

	if (!r || ((uintptr_t)r & 7) != 0 || !mem || ((uintptr_t)mem & 7) != 0 ||
	    !lfp__ring_params_ok(capacity, slot_size, flags))
		return -EINVAL;
	lfp__ring_setup(r, mem, capacity, slot_size, flags);
	/* Every slot free for the first lap: word 0.  Plain stores: the ring
	 * is published to other threads by whatever hands them the pointer.
	 * An index ring's metadata is written before it is read. */
	if (r->mode != LFP__RING_INDEX) {
		stride = r->stride;
		for (i = 0; i < capacity; i++)
			*(uint64_t *)(void *)(r->words + i * stride) = 0;
	}
	return 0;
}

LFP_INLINE int lfp_ring_init(struct lfp_ring *r, void *mem, size_t capacity,
                             size_t slot_size)
{
	return lfp_ring_init_flags(r, mem, capacity, slot_size, 0);
}

/* Set up a queue's ring over slot memory of its own (lfp__zalloc): 0 or
 * -ENOMEM.  The caller checked the parameters. */
LFP_INLINE int lfp__ring_alloc(struct lfp_ring *r, size_t capacity,
                               size_t slot_size, uint64_t flags)
{
	size_t bytes = lfp_ring_memsize_flags(capacity, slot_size, flags);
	void *mem = lfp__zalloc(bytes);

	if (!mem)
		return -ENOMEM;
	lfp__ring_setup(r, mem, capacity, slot_size, flags);
	r->owns_mem = 1;
	return 0;
}

/* Free what lfp__ring_alloc took. */
LFP_INLINE void lfp__ring_free_mem(struct lfp_ring *r)
{
	if (r->owns_mem)
		lfp__zfree(r->slots, lfp_ring_memsize_flags((size_t)r->mask + 1,
		                                            r->slot_size,
		                                            (r->mode & LFP__RING_SP ?
		                                             LFP_SINGLE_PRODUCER : 0) |
		                                            (r->mode & LFP__RING_SC ?
		                                             LFP_SINGLE_CONSUMER : 0)));
	r->slots = NULL;
	r->owns_mem = 0;
}

LFP_INLINE int lfp_ring_create_flags(size_t capacity, size_t slot_size,
                                     uint64_t flags, struct lfp_ring **rp)
{
	struct lfp_ring *r;
	int ret;

	if (!rp || !lfp__ring_params_ok(capacity, slot_size, flags))
		return -EINVAL; /* *rp untouched on failure */
	if (posix_memalign((void **)&r, LFP_CACHELINE_PAIR, sizeof(*r)))
		return -ENOMEM;
	ret = lfp__ring_alloc(r, capacity, slot_size, flags);
	if (ret) {
		free(r);
		return ret;
	}
	*rp = r;
	return 0;
}

LFP_INLINE int lfp_ring_create(size_t capacity, size_t slot_size,
                               struct lfp_ring **rp)
{
	return lfp_ring_create_flags(capacity, slot_size, 0, rp);
}

LFP_INLINE void lfp_ring_destroy(struct lfp_ring *r)
{
	if (!r)
		return;
	if (r->owns_mem) {
		void *self = r;

		/* Only rings from lfp_ring_create own their memory; hide the
		 * pointer's origin so that gcc does not warn about freeing a
		 * caller's static or stack ring on this (untaken) path. */
		__asm__("" : "+r"(self));
		lfp__ring_free_mem(r);
		free(self);
	}
}

/* Capacity and slot size (0 for a NULL ring). */
LFP_INLINE size_t lfp_ring_capacity(const struct lfp_ring *r)
{
	return r ? (size_t)r->mask + 1 : 0;
}

LFP_INLINE size_t lfp_ring_slot_size(const struct lfp_ring *r)
{
	return r ? r->slot_size : 0;
}

#include "internal/ring_ops.h"

/* ---------------------------------------------------------------- calls */

/* 0, -EAGAIN when full, -EMSGSIZE when len > slot size (nothing written).
 * Inline when len is a constant (the copy is then a few moves). */
LFP_FORCE_INLINE int lfp_ring_enqueue(struct lfp_ring *r, const void *src,
                                      size_t len)
{
	if (LFP__UNLIKELY(!r || (!src && len)))
		return -EINVAL;
	if (LFP__CONSTANT(len) && lfp__ring_try_enqueue(r, src, len))
		return 0;
	return lfp__ring_enqueue_out(r, src, len);
}

/* The entry's length, -EAGAIN when empty, -LFP_ETOOSMALL (entry kept). */
LFP_FORCE_INLINE ssize_t lfp_ring_dequeue(struct lfp_ring *r, void *dst,
                                          size_t cap)
{
	ssize_t n;

	if (LFP__UNLIKELY(!r || (!dst && cap)))
		return -EINVAL;
	if (LFP__CONSTANT(cap) &&
	    ((n = lfp__ring_try_dequeue(r, dst, cap)) >= 0 || n == -EAGAIN))
		return n;
	return lfp__ring_dequeue_out(r, dst, cap);
}

/*
 * Copy the head entry without consuming it; *ticket names it for
 * lfp_ring_consume().  Returns its length, -EAGAIN, or -LFP_ETOOSMALL.
 */
LFP_INLINE ssize_t lfp_ring_peek(struct lfp_ring *r, void *dst, size_t cap,
                                 uint64_t *ticket)
{
	uint32_t meta;
	ssize_t ret = -EINVAL;

	if (!ticket)
		return -EINVAL;
	if (r && (dst || !cap))
		ret = lfp__ring_peek_split(r, NULL, 0, dst, cap, ticket, &meta);
	/* On failure a ticket that names no entry (a position consumers have
	 * passed: lfp_ring_consume says -ESTALE), so that a caller's compiler
	 * need not prove that it is used only after a success. */
	if (ret < 0)
		*ticket = r ? lfp__ld_rlx_u64(&r->tail) - 1 : 0;
	return ret;
}

/*
 * Consume the entry a peek returned.  0 once; -ESTALE when it was already
 * consumed (by this ticket or by another consumer).
 */
LFP_INLINE int lfp_ring_consume(struct lfp_ring *r, uint64_t ticket)
{
	int ret;

	if (!r)
		return -EINVAL;
	lfp__side_enter(r, 0);
	if (r->mode == LFP__RING_INDEX)
		ret = lfp__idx_consume(r, ticket);
	else
		ret = lfp__slot_consume(r, ticket);
	lfp__side_leave(r, 0);
	return ret;
}

/* Entries claimed by producers and not yet by consumers: a snapshot. */
LFP_INLINE size_t lfp_ring_count(const struct lfp_ring *r)
{
	uint64_t tail, head;

	if (!r)
		return 0;
	tail = lfp__ld_rlx_u64(&r->tail);
	head = lfp__ld_rlx_u64(&r->head);
	if ((int64_t)(head - tail) <= 0)
		return 0;
	if (head - tail > r->mask + 1)
		return (size_t)r->mask + 1;
	return (size_t)(head - tail);
}

/*
 * Enqueue up to n entries of len_each bytes from src (contiguous).  Returns
 * how many were enqueued, from 0 (full, or len_each > slot size) to n.
 */
LFP_FORCE_INLINE size_t lfp_ring_enqueue_burst(struct lfp_ring *r,
                                               const void *src,
                                               size_t len_each, size_t n)
{
	size_t k;

	if (LFP__UNLIKELY(!r || (!src && len_each)))
		return 0;
	if (LFP__CONSTANT(len_each) &&
	    (k = lfp__ring_try_enqueue_burst(r, src, len_each, n)) != 0)
		return k;
	return lfp__ring_enqueue_burst_out(r, src, len_each, n);
}

/*
 * Dequeue up to n entries into dst, each at a stride of len_each bytes.  An
 * entry longer than len_each ends the burst before it and stays queued.
 */
LFP_FORCE_INLINE size_t lfp_ring_dequeue_burst(struct lfp_ring *r, void *dst,
                                               size_t len_each, size_t n)
{
	size_t k;

	if (LFP__UNLIKELY(!r || (!dst && len_each)))
		return 0;
	if (LFP__CONSTANT(len_each) &&
	    (k = lfp__ring_try_dequeue_burst(r, dst, len_each, n)) != 0)
		return k;
	return lfp__ring_dequeue_burst_out(r, dst, len_each, n);
}

/*
 * Typed front end: LFP_RING_PROTOTYPE(ev, struct my_event) (no trailing
 * semicolon) generates lfp_ring_enqueue_ev(r, const struct my_event *),
 * lfp_ring_dequeue_ev(r, struct my_event *) (0 | -EAGAIN | -LFP_ETOOSMALL)
 * and the _burst forms, with the slot size known at compile time.  The fast
 * path does not check for NULL; enqueue returns -EMSGSIZE on a ring whose
 * slots are smaller than the type.  Each call is one inline attempt on the
 * default mode and, for everything else, a function of the type's own out
 * of line (so a single-producer or single-consumer ring's copies have a
 * constant size too).
 */
#define LFP_RING_PROTOTYPE(name, type)                                          \
LFP_OUTLINE int lfp__ring_enqueue_out_##name(struct lfp_ring *r, const type *v) \
{                                                                               \
	return lfp__ring_enqueue(r, v, sizeof(type));                           \
}                                                                               \
LFP_OUTLINE ssize_t lfp__ring_dequeue_out_##name(struct lfp_ring *r, type *v)   \
{                                                                               \
	return lfp__ring_dequeue(r, v, sizeof(type));                           \
}                                                                               \
LFP_OUTLINE size_t lfp__ring_enqueue_burst_out_##name(struct lfp_ring *r,       \
                                                      const type *v, size_t n)  \
{                                                                               \
	return lfp__ring_enqueue_burst(r, v, sizeof(type), n);                  \
}                                                                               \
LFP_OUTLINE size_t lfp__ring_dequeue_burst_out_##name(struct lfp_ring *r,       \
                                                      type *v, size_t n)        \
{                                                                               \
	return lfp__ring_dequeue_burst(r, v, sizeof(type), n);                  \
}                                                                               \
LFP__UNUSED LFP_FORCE_INLINE int lfp_ring_enqueue_##name(struct lfp_ring *r,   \
                                                         const type *v)        \
{                                                                               \
	if (LFP__LIKELY(lfp__ring_try_enqueue(r, v, sizeof(type))))             \
		return 0;                                                       \
	return lfp__ring_enqueue_out_##name(r, v);                              \
}                                                                               \
LFP__UNUSED LFP_FORCE_INLINE int lfp_ring_dequeue_##name(struct lfp_ring *r,   \
                                                         type *v)              \
{                                                                               \
	ssize_t n = lfp__ring_try_dequeue(r, v, sizeof(type));                  \
                                                                                \
	if (LFP__UNLIKELY(n == -1))                                             \
		n = lfp__ring_dequeue_out_##name(r, v);                         \
	return n < 0 ? (int)n : 0;                                              \
}                                                                               \
LFP__UNUSED LFP_FORCE_INLINE size_t                                             \
lfp_ring_enqueue_burst_##name(struct lfp_ring *r, const type *v, size_t n)      \
{                                                                               \
	size_t k = lfp__ring_try_enqueue_burst(r, v, sizeof(type), n);          \
                                                                                \
	return LFP__LIKELY(k) ? k : lfp__ring_enqueue_burst_out_##name(r, v, n);\
}                                                                               \
LFP__UNUSED LFP_FORCE_INLINE size_t                                             \
lfp_ring_dequeue_burst_##name(struct lfp_ring *r, type *v, size_t n)            \
{                                                                               \
	size_t k = lfp__ring_try_dequeue_burst(r, v, sizeof(type), n);          \
                                                                                \
	return LFP__LIKELY(k) ? k : lfp__ring_dequeue_burst_out_##name(r, v, n);\
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_RING_H */
