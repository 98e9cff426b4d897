/*
 * lfpoll ring: a bounded multi-producer multi-consumer ring of fixed-size
 * slots, power-of-two capacity, caller memory or lfp_ring_create().
 *
 * Each slot has one 64-bit word holding the slot's 32-bit sequence (high
 * half) and the entry's metadata (low half: its length, and for the EQ its
 * event code), and a payload area.  A producer claims positions by CAS on
 * head after seeing their slots free, copies the payload, then publishes
 * sequence and metadata with one release store; a consumer claims by CAS on
 * tail after seeing the slots published, copies out, then frees each slot
 * for the next lap with one release store.  Producers and consumers
 * therefore exchange only the slots' lines: no shared index is read by the
 * other side.  Head and tail are 64-bit, so a stale CAS can never succeed;
 * the 32-bit slot sequence is compared by signed difference, which is exact
 * while capacity <= 2^30.
 *
 * Layout (docs/design.md, "Ring layout"): a slot whose word and payload fit
 * one cache line is a power of two of at most a line, word first; a larger
 * one starts its payload on a line boundary and puts the word after it.  So
 * no payload copy touches more lines than its size needs.
 *
 * Every operation goes through one claim per side (lfp__ring_claim_prod,
 * lfp__ring_claim_cons), for one entry or a burst, on the geometry loaded
 * once into a struct lfp__ring_geo.
 *
 * Peek copies the head entry without claiming it and validates the copy by
 * re-reading the slot word (a seqlock read): a peeked copy is never torn and
 * never blocks other consumers.  consume(ticket) then claims exactly that
 * entry, or fails with -ESTALE when another consumer took it first.
 */
#ifndef LFPOLL_RING_H
#define LFPOLL_RING_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the per-slot word (sequence << 32 | metadata). */
#define LFP__RING_HDR 8
/* Largest capacity for which the 32-bit sequence difference is exact. */
#define LFP_RING_MAX_CAPACITY ((size_t)1 << 30)

struct lfp_ring {
	/* Read-only after init; read by both sides, written by neither. */
	unsigned char *slots;
	uint64_t mask;
	size_t stride;
	size_t slot_size;
	uint32_t word_off;           /* the slot word's offset in a slot */
	uint32_t data_off;           /* the payload's offset in a slot */
	uint32_t len_mask;           /* metadata bits that hold the length */
	int owns_mem;
	char lfp__pad0[LFP_CACHELINE_PAIR - sizeof(void *) - sizeof(uint64_t) -
	               2 * sizeof(size_t) - 3 * sizeof(uint32_t) - sizeof(int)];
	/* Producers only: next position to claim. */
	uint64_t head;
	char lfp__pad1[LFP_CACHELINE_PAIR - sizeof(uint64_t)];
	/* Consumers only: next position to take. */
	uint64_t tail;
	char lfp__pad2[LFP_CACHELINE_PAIR - sizeof(uint64_t)];
};

/*
 * Slot layout for slot_size payload bytes: stride, and where the word and
 * the payload sit.  Word and payload within one line: the stride is a power
 * of two from 16 to 64, so a stride-aligned slot never crosses a line.
 * Larger: the payload starts the slot (on a line boundary when the memory
 * is line-aligned) and the word follows it, and the stride is whole lines.
 */
LFP_INLINE size_t lfp__ring_layout(size_t slot_size, size_t *word_off,
                                   size_t *data_off)
{
	size_t need = LFP__RING_HDR + slot_size, s = 16, body;

	if (need <= LFP_CACHELINE) {
		while (s < need)
			s <<= 1;
		*word_off = 0;
		*data_off = LFP__RING_HDR;
		return s;
	}
	body = (slot_size + 7) & ~(size_t)7;
	*word_off = body;
	*data_off = 0;
	return (body + LFP__RING_HDR + LFP_CACHELINE - 1) &
	       ~(size_t)(LFP_CACHELINE - 1);
}

LFP_INLINE size_t lfp__ring_stride(size_t slot_size)
{
	size_t wo, dof;

	return lfp__ring_layout(slot_size, &wo, &dof);
}

LFP_INLINE int lfp__ring_params_ok(size_t capacity, size_t slot_size)
{
	if (capacity < 2 || capacity > LFP_RING_MAX_CAPACITY ||
	    (capacity & (capacity - 1)) != 0)
		return 0;
	if (slot_size == 0 || slot_size > (size_t)INT32_MAX)
		return 0;
	if (lfp__ring_stride(slot_size) > SIZE_MAX / capacity)
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

/* Bytes of slot memory for lfp_ring_init(); 0 for invalid parameters. */
LFP_INLINE size_t lfp_ring_memsize(size_t capacity, size_t slot_size)
{
	if (!lfp__ring_params_ok(capacity, slot_size))
		return 0;
	return capacity * lfp__ring_stride(slot_size);
}

/*
 * The ring's geometry, loaded once per operation into locals: every atomic
 * is also a compiler barrier, which would otherwise make the compiler
 * reload these fields after each one.
 */
struct lfp__ring_geo {
	unsigned char *slots;
	uint64_t mask;
	size_t stride;
	size_t word_off;
	size_t data_off;
	uint32_t len_mask;
};

LFP_FORCE_INLINE struct lfp__ring_geo lfp__ring_geo(const struct lfp_ring *r)
{
	struct lfp__ring_geo g;

	g.slots = r->slots;
	g.mask = r->mask;
	g.stride = r->stride;
	g.word_off = r->word_off;
	g.data_off = r->data_off;
	g.len_mask = r->len_mask;
	return g;
}

LFP_FORCE_INLINE unsigned char *lfp__ring_slot(const struct lfp__ring_geo *g,
                                               uint64_t pos)
{
	return g->slots + (size_t)(pos & g->mask) * g->stride;
}

LFP_FORCE_INLINE uint64_t *lfp__ring_wordp(const struct lfp__ring_geo *g,
                                           uint64_t pos)
{
	return (uint64_t *)(void *)(lfp__ring_slot(g, pos) + g->word_off);
}

LFP_FORCE_INLINE unsigned char *lfp__ring_data(const struct lfp__ring_geo *g,
                                               uint64_t pos)
{
	return lfp__ring_slot(g, pos) + g->data_off;
}

/* The slot word of a published entry: sequence and metadata. */
LFP_FORCE_INLINE uint64_t lfp__ring_make_word(uint64_t seq, uint32_t meta)
{
	return ((uint64_t)(uint32_t)seq << 32) | meta;
}

/*
 * Initialise r over mem (lfp_ring_memsize() bytes, 8-byte aligned; 64-byte
 * aligned for best speed).  capacity: a power of two from 2 to 2^30.
 */
LFP_INLINE int lfp_ring_init(struct lfp_ring *r, void *mem, size_t capacity,
                             size_t slot_size)
{
	struct lfp__ring_geo g;
	size_t i, wo, dof;

	if (!r || !mem || ((uintptr_t)mem & 7) != 0 ||
	    !lfp__ring_params_ok(capacity, slot_size))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->slots = (unsigned char *)mem;
	r->mask = capacity - 1;
	r->stride = lfp__ring_layout(slot_size, &wo, &dof);
	r->word_off = (uint32_t)wo;
	r->data_off = (uint32_t)dof;
	r->len_mask = UINT32_MAX;
	r->slot_size = slot_size;
	/* Slot i is free for position i.  Plain stores: the ring is published
	 * to other threads by whatever hands them the pointer. */
	g = lfp__ring_geo(r);
	for (i = 0; i < capacity; i++)
		*lfp__ring_wordp(&g, i) = lfp__ring_make_word(i, 0);
	return 0;
}

LFP_INLINE int lfp_ring_create(size_t capacity, size_t slot_size,
                               struct lfp_ring **rp)
{
	struct lfp_ring *r;
	size_t bytes = lfp_ring_memsize(capacity, slot_size);
	void *mem;
	int ret;

	if (!rp || bytes == 0)
		return -EINVAL; /* *rp untouched on failure (every path returns a constant) */
	if (posix_memalign((void **)&r, LFP_CACHELINE_PAIR, sizeof(*r)))
		return -ENOMEM;
	if (posix_memalign(&mem, LFP_CACHELINE, bytes)) {
		free(r);
		return -ENOMEM;
	}
	ret = lfp_ring_init(r, mem, capacity, slot_size);
	if (ret) {
		free(mem);
		free(r);
		return ret;
	}
	r->owns_mem = 1;
	*rp = r;
	return 0;
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
		free(r->slots);
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

/* Signed distance between a slot's sequence and the one expected at pos. */
LFP_FORCE_INLINE int32_t lfp__ring_dif(uint64_t word, uint64_t want)
{
	return (int32_t)((uint32_t)(word >> 32) - (uint32_t)want);
}

/*
 * The word of the slot at pos, which a claim checks and its caller will
 * write (a producer publishes it, a consumer frees it).  A burst fetches the
 * line for writing now, one transfer instead of a read and then an upgrade:
 * a hint only (one entry: no gain measured, and n is then a constant 1).
 */
LFP_FORCE_INLINE uint64_t *lfp__ring_word_to_write(const struct lfp__ring_geo *g,
                                                   uint64_t pos, size_t n)
{
	uint64_t *w = lfp__ring_wordp(g, pos);

	if (n > 1)
		__builtin_prefetch(w, 1);
	return w;
}

/*
 * Claim up to n consecutive free positions from head: the producers' only
 * claim, for one entry (n constant 1) and for bursts.  Returns the number
 * claimed (0: full) and the first position in *first.
 *
 * Every slot is seen free before the claim, so a producer never waits for
 * a consumer: a slot whose consumer has claimed it and is still copying out
 * counts as full.  (Claiming against a cached copy of tail and then waiting
 * for each slot's free measured slower here: docs/design.md, section 1.)
 */
LFP_FORCE_INLINE size_t lfp__ring_claim_prod(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, uint64_t *first)
{
	uint64_t pos, *w;
	size_t k;
	int32_t dif = 0;

	if (n == 0)
		return 0;
	/* Relaxed: only a starting guess; the CAS validates it. */
	pos = lfp__ld_rlx_u64(&r->head);
	for (;;) {
		for (k = 0; k < n; k++) {
			w = lfp__ring_word_to_write(g, pos + k, n);
			/* R2: acquire pairs with R4 of the consumer that freed
			 * this slot: its copy-out is done before we overwrite. */
			dif = lfp__ring_dif(lfp__ld_acq_u64(w), pos + k);
			if (dif != 0)
				break;
		}
		if (k == 0) {
			if (dif < 0)
				return 0; /* the slot still holds last lap's entry */
			pos = lfp__ld_rlx_u64(&r->head); /* stale: retry */
			continue;
		}
		if (LFP__BROKEN("L"))
			k = n; /* claim n once the first is free, as a blind FAA would */
		/* Full-barrier RMW; ordering for the payload comes from R2.
		 * A failed CAS loads the current head into pos. */
		if (lfp__cas_u64(&r->head, &pos, pos + k))
			break;
	}
	LFP__SCHED("ring.prod.claimed", r);
	/* R6: pairs with R5 in peek.  A peeking reader that copied any byte we
	 * are about to write must, after its acquire fence, also see the
	 * slot word that R2 read, so its re-check fails. */
	lfp__fence_rel();
	*first = pos;
	return k;
}

/* Why a consumer's claim returned 0 (its *why). */
enum { LFP__RING_EMPTY, LFP__RING_TOO_BIG, LFP__RING_GATED };

/*
 * Claim up to n consecutive published positions from tail whose entries fit
 * in cap bytes: the consumers' only claim, for one entry and for bursts.
 * Returns the number claimed; 0 with *why set to LFP__RING_TOO_BIG when the
 * head entry is longer than cap (it stays queued), LFP__RING_GATED when
 * gate(garg) said no, else LFP__RING_EMPTY.
 *
 * gate (NULL: none) runs after the entries' slot words were read with
 * acquire (R3) and before the claim: what was visible to their producers
 * when they published is visible to it.  The EQ and CQ pass their error
 * check, so an event never overtakes an error queued before it.
 */
LFP_FORCE_INLINE size_t lfp__ring_claim_cons(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, size_t cap,
                                             uint64_t *first, int *why,
                                             int (*gate)(const void *),
                                             const void *garg)
{
	uint64_t pos, word, *w;
	size_t k;
	int32_t dif = 0;
	int big;

	*why = LFP__RING_EMPTY;
	if (n == 0)
		return 0;
	pos = lfp__ld_rlx_u64(&r->tail); /* a guess, validated by the CAS */
	for (;;) {
		big = 0;
		for (k = 0; k < n; k++) {
			w = lfp__ring_word_to_write(g, pos + k, n);
			/* R3: acquire pairs with R1: the payload and length
			 * written before the publish are visible. */
			word = lfp__ld_acq_u64(w);
			dif = lfp__ring_dif(word, pos + k + 1);
			if (dif != 0)
				break;
			if (((uint32_t)word & g->len_mask) > cap) {
				big = 1;
				break;
			}
		}
		if (k == 0) {
			if (big) {
				/* Report only if pos is still the head: loaded
				 * after R3 (acquire), so the length we read was
				 * this entry's while nobody had taken it. */
				if (lfp__ld_rlx_u64(&r->tail) == pos) {
					*why = LFP__RING_TOO_BIG;
					return 0;
				}
			} else if (dif < 0) {
				return 0; /* empty */
			}
			pos = lfp__ld_rlx_u64(&r->tail);
			continue;
		}
		LFP__SCHED("ring.cons.acquired", r);
		if (gate && gate(garg)) {
			*why = LFP__RING_GATED;
			return 0;
		}
		if (lfp__cas_u64(&r->tail, &pos, pos + k))
			break;
	}
	/* Until we free them, producers see these slots full. */
	LFP__SCHED("ring.cons.claimed", r);
	*first = pos;
	return k;
}

/* R1: publish a filled slot's payload and metadata; pairs with R3 (and R5). */
LFP_FORCE_INLINE void lfp__ring_publish(const struct lfp__ring_geo *g,
                                        uint64_t pos, uint32_t meta)
{
	lfp__st_rel_u64(lfp__ring_wordp(g, pos), lfp__ring_make_word(pos + 1, meta));
}

/* R4: free a consumed slot for the next lap; pairs with R2. */
LFP_FORCE_INLINE void lfp__ring_free(const struct lfp__ring_geo *g,
                                     uint64_t pos)
{
	lfp__st_rel_u64(lfp__ring_wordp(g, pos),
	                lfp__ring_make_word(pos + g->mask + 1, 0));
}

/* A claimed slot's metadata.  Relaxed: the claim's R3 already ordered it. */
LFP_FORCE_INLINE uint32_t lfp__ring_meta(const struct lfp__ring_geo *g,
                                         uint64_t pos)
{
	return (uint32_t)lfp__ld_rlx_u64(lfp__ring_wordp(g, pos));
}

/*
 * The copy of an entry whose length differs from the caller's buffer: out
 * of line and cold, so that the hot path, whose copy has a constant size
 * wherever the caller's is, keeps no call and no register saves for it.
 */
static __attribute__((noinline, cold, unused))
void lfp__ring_copy_var(void *dst, const void *src, size_t n)
{
	if (dst) /* always, when n > 0: a NULL buffer has cap 0 */
		memcpy(dst, src, n);
}

/*
 * Copy out the claimed entry at pos (length at most cap) into dst and free
 * its slot; returns the length.  An entry of exactly cap bytes, the common
 * case, is copied with cap's size, a constant in typed callers.
 */
LFP_FORCE_INLINE size_t lfp__ring_take(const struct lfp__ring_geo *g,
                                       uint64_t pos, void *dst, size_t cap)
{
	size_t len = lfp__ring_meta(g, pos) & g->len_mask;

	if (len == cap && cap)
		memcpy(dst, lfp__ring_data(g, pos), cap);
	else if (len) /* dst is non-NULL whenever len fits in cap > 0 */
		lfp__ring_copy_var(dst, lfp__ring_data(g, pos), len);
	lfp__ring_free(g, pos);
	return len;
}

/*
 * Copy out a claimed entry made of two parts and free its slot: the first
 * n1 bytes to d1, the rest to d2 (NULL: dropped).  Returns the length.  The
 * CQ (entry, then source address) and the error queue (entry, then
 * err_data) store entries this way.
 */
LFP_FORCE_INLINE size_t lfp__ring_take2(const struct lfp__ring_geo *g,
                                        uint64_t pos, void *d1, size_t n1,
                                        void *d2)
{
	size_t len = lfp__ring_meta(g, pos) & g->len_mask;
	const unsigned char *src = lfp__ring_data(g, pos);

	memcpy(d1, src, n1);
	if (d2 && len > n1)
		memcpy(d2, src + n1, len - n1);
	lfp__ring_free(g, pos);
	return len;
}

/* Fill the claimed slot at pos with n1 bytes from s1 then n2 from s2, and
 * publish it with meta. */
LFP_FORCE_INLINE void lfp__ring_put2(const struct lfp__ring_geo *g,
                                     uint64_t pos, const void *s1, size_t n1,
                                     const void *s2, size_t n2, uint32_t meta)
{
	unsigned char *d = lfp__ring_data(g, pos);

	lfp__copy_racy_in(d, s1, n1);
	lfp__copy_racy_in(d + n1, s2, n2);
	lfp__ring_publish(g, pos, meta);
}

/* Fill the claimed slot at pos with len bytes from src and publish it. */
LFP_FORCE_INLINE void lfp__ring_put(const struct lfp__ring_geo *g, uint64_t pos,
                                    const void *src, size_t len, uint32_t meta)
{
	lfp__copy_racy_in(lfp__ring_data(g, pos), src, len);
	lfp__ring_publish(g, pos, meta);
}

/* 0, -EAGAIN when full, -EMSGSIZE when len > slot size (nothing written). */
LFP_FORCE_INLINE int lfp__ring_enqueue(struct lfp_ring *r, const void *src,
                                       size_t len)
{
	struct lfp__ring_geo g;
	uint64_t pos;

	if (len > r->slot_size)
		return -EMSGSIZE;
	g = lfp__ring_geo(r);
	if (!lfp__ring_claim_prod(r, &g, 1, &pos))
		return -EAGAIN;
	lfp__ring_put(&g, pos, src, len, (uint32_t)len);
	return 0;
}

/* Enqueue one entry made of two parts (a header, then a payload) that
 * together fit a slot: 0, or -EAGAIN when full. */
LFP_FORCE_INLINE int lfp__ring_enqueue2(struct lfp_ring *r, const void *s1,
                                        size_t n1, const void *s2, size_t n2)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos;

	if (!lfp__ring_claim_prod(r, &g, 1, &pos))
		return -EAGAIN;
	lfp__ring_put2(&g, pos, s1, n1, s2, n2, (uint32_t)(n1 + n2));
	return 0;
}

LFP_FORCE_INLINE ssize_t lfp__ring_dequeue(struct lfp_ring *r, void *dst,
                                           size_t cap)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos;
	int why;

	if (!lfp__ring_claim_cons(r, &g, 1, cap, &pos, &why, NULL, NULL))
		return why == LFP__RING_TOO_BIG ? -LFP_ETOOSMALL : -EAGAIN;
	return (ssize_t)lfp__ring_take(&g, pos, dst, cap);
}

LFP_INLINE int lfp_ring_enqueue(struct lfp_ring *r, const void *src, size_t len)
{
	if (!r || (!src && len))
		return -EINVAL;
	return lfp__ring_enqueue(r, src, len);
}

/* The entry's length, -EAGAIN when empty, -LFP_ETOOSMALL (entry kept). */
LFP_INLINE ssize_t lfp_ring_dequeue(struct lfp_ring *r, void *dst, size_t cap)
{
	if (!r || (!dst && cap))
		return -EINVAL;
	return lfp__ring_dequeue(r, dst, cap);
}

/*
 * Peek split in two: the first n1 bytes of the head entry go to d1, the rest
 * (at most cap2 bytes) to d2.  Returns the entry's whole length, -EAGAIN, or
 * -LFP_ETOOSMALL; *ticket names the entry for lfp_ring_consume() and *meta
 * is its metadata.
 */
LFP_INLINE ssize_t lfp__ring_peek_split(struct lfp_ring *r, void *d1, size_t n1,
                                        void *d2, size_t cap2, uint64_t *ticket,
                                        uint32_t *meta)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos, word, *w;
	unsigned char *d;
	size_t len;
	int32_t dif;

	pos = lfp__ld_rlx_u64(&r->tail);
	for (;;) {
		w = lfp__ring_wordp(&g, pos);
		word = lfp__ld_acq_u64(w); /* R3 as in the claim */
		dif = lfp__ring_dif(word, pos + 1);
		if (dif < 0)
			return -EAGAIN;
		if (dif == 0) {
			len = (uint32_t)word & g.len_mask;
			*meta = (uint32_t)word;
			if (len == 0) {
				/* Nothing to copy: the word alone is the entry. */
				*ticket = pos;
				return 0;
			}
			if (len < n1 || len - n1 > cap2) {
				if (lfp__ld_rlx_u64(&r->tail) == pos)
					return -LFP_ETOOSMALL;
			} else {
				d = lfp__ring_data(&g, pos);
				lfp__copy_racy_out(d1, d, n1);
				lfp__copy_racy_out(d2, d + n1, len - n1);
				/* R5: orders the copy's loads before the
				 * re-check; pairs with R6 in the producer that
				 * could be refilling this slot. */
				lfp__fence_acq();
				if (lfp__ld_rlx_u64(w) == word) {
					*ticket = pos;
					return (ssize_t)len;
				}
			}
		}
		pos = lfp__ld_rlx_u64(&r->tail);
	}
}

/*
 * Copy the head entry without consuming it; *ticket names it for
 * lfp_ring_consume().  Returns its length, -EAGAIN, or -LFP_ETOOSMALL.
 */
LFP_INLINE ssize_t lfp_ring_peek(struct lfp_ring *r, void *dst, size_t cap,
                                 uint64_t *ticket)
{
	uint32_t meta;

	if (!r || !ticket || (!dst && cap))
		return -EINVAL;
	return lfp__ring_peek_split(r, NULL, 0, dst, cap, ticket, &meta);
}

/*
 * Whether the head entry is published: a snapshot for readiness checks
 * (a claimed, not yet published entry does not count).
 */
LFP_INLINE int lfp__ring_ready(const struct lfp_ring *r)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos = lfp__ld_rlx_u64(&r->tail);

	/* R3: acquire, so a caller that sees the entry also sees its
	 * contents when it goes on to read it. */
	return lfp__ring_dif(lfp__ld_acq_u64(lfp__ring_wordp(&g, pos)), pos + 1) >= 0;
}

/*
 * How many entries from the head on are published, counting up to limit: a
 * snapshot for thresholds.  Unlike lfp_ring_count it does not count
 * positions that producers claimed and have not yet published, which no
 * read can take (a blocking read that counted them would spin, not sleep,
 * while a producer is stalled between its claim and its publish).
 */
LFP_INLINE size_t lfp__ring_published(const struct lfp_ring *r, size_t limit)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos = lfp__ld_rlx_u64(&r->tail);
	size_t k;

	/* R3 per slot, as in lfp__ring_ready. */
	for (k = 0; k < limit; k++)
		if (lfp__ring_dif(lfp__ld_acq_u64(lfp__ring_wordp(&g, pos + k)),
		                  pos + k + 1) != 0)
			break;
	return k;
}

/*
 * Consume the entry a peek returned.  0 once; -ESTALE when it was already
 * consumed (by this ticket or by another consumer).
 */
LFP_INLINE int lfp_ring_consume(struct lfp_ring *r, uint64_t ticket)
{
	struct lfp__ring_geo g;
	uint64_t pos = ticket;

	if (!r)
		return -EINVAL;
	g = lfp__ring_geo(r);
	/* R3: the entry must be published at this position (a ticket from
	 * peek always is; this rejects forged ones without claiming). */
	if (lfp__ring_dif(lfp__ld_acq_u64(lfp__ring_wordp(&g, ticket)),
	                  ticket + 1) != 0)
		return -ESTALE;
	if (!lfp__cas_u64(&r->tail, &pos, ticket + 1))
		return -ESTALE;
	lfp__ring_free(&g, ticket);
	return 0;
}

/* The bursts behind lfp_ring_enqueue_burst, lfp_ring_dequeue_burst and the
 * typed front end.  len_each 0 leaves the (then possibly NULL) buffer
 * pointer as it is: no arithmetic on NULL. */
LFP_FORCE_INLINE size_t lfp__ring_enqueue_burst(struct lfp_ring *r,
                                                const void *src,
                                                size_t len_each, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	struct lfp__ring_geo g;
	uint64_t pos = 0;
	size_t k, i;

	if (len_each > r->slot_size)
		return 0;
	g = lfp__ring_geo(r);
	k = lfp__ring_claim_prod(r, &g, n, &pos);
	for (i = 0; i < k; i++)
		lfp__ring_put(&g, pos + i, len_each ? s + i * len_each : s,
		              len_each, (uint32_t)len_each);
	return k;
}

LFP_FORCE_INLINE size_t lfp__ring_dequeue_burst(struct lfp_ring *r, void *dst,
                                                size_t len_each, size_t n)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	unsigned char *d = (unsigned char *)dst;
	uint64_t pos = 0;
	size_t k, i;
	int why;

	k = lfp__ring_claim_cons(r, &g, n, len_each, &pos, &why, NULL, NULL);
	for (i = 0; i < k; i++)
		lfp__ring_take(&g, pos + i, len_each ? d + i * len_each : d,
		               len_each);
	return k;
}

/*
 * Enqueue up to n entries of len_each bytes from src (contiguous).  Returns
 * how many were enqueued, from 0 (full, or len_each > slot size) to n.
 */
LFP_INLINE size_t lfp_ring_enqueue_burst(struct lfp_ring *r, const void *src,
                                         size_t len_each, size_t n)
{
	if (!r || (!src && len_each))
		return 0;
	return lfp__ring_enqueue_burst(r, src, len_each, n);
}

/*
 * Dequeue up to n entries into dst, each at a stride of len_each bytes.  An
 * entry longer than len_each ends the burst before it and stays queued.
 */
LFP_INLINE size_t lfp_ring_dequeue_burst(struct lfp_ring *r, void *dst,
                                         size_t len_each, size_t n)
{
	if (!r || (!dst && len_each))
		return 0;
	return lfp__ring_dequeue_burst(r, dst, len_each, n);
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
 * Typed front end: LFP_RING_PROTOTYPE(ev, struct my_event) (no trailing
 * semicolon) generates lfp_ring_enqueue_ev(r, const struct my_event *),
 * lfp_ring_dequeue_ev(r, struct my_event *) (0 | -EAGAIN | -LFP_ETOOSMALL)
 * and the _burst forms, with the slot size known at compile time.  The fast
 * path does not check for NULL; enqueue returns -EMSGSIZE on a ring whose
 * slots are smaller than the type.
 */
#define LFP_RING_PROTOTYPE(name, type)                                          \
LFP__UNUSED LFP_INLINE int lfp_ring_enqueue_##name(struct lfp_ring *r,         \
                                                   const type *v)              \
{                                                                               \
	return lfp__ring_enqueue(r, v, sizeof(type));                           \
}                                                                               \
LFP__UNUSED LFP_INLINE int lfp_ring_dequeue_##name(struct lfp_ring *r, type *v)\
{                                                                               \
	ssize_t n = lfp__ring_dequeue(r, v, sizeof(type));                      \
	return n < 0 ? (int)n : 0;                                              \
}                                                                               \
LFP__UNUSED LFP_INLINE size_t lfp_ring_enqueue_burst_##name(struct lfp_ring *r,\
                                                const type *v, size_t n)        \
{                                                                               \
	return lfp__ring_enqueue_burst(r, v, sizeof(type), n);                  \
}                                                                               \
LFP__UNUSED LFP_INLINE size_t lfp_ring_dequeue_burst_##name(struct lfp_ring *r,\
                                                type *v, size_t n)              \
{                                                                               \
	return lfp__ring_dequeue_burst(r, v, sizeof(type), n);                  \
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_RING_H */
