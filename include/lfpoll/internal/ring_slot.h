/*
 * lfpoll internal: the per-slot ring, the default mode (any number of
 * producers and consumers) and its single-producer and single-consumer
 * forms.  Do not include directly; include <lfpoll/ring.h>.
 * docs/design.md section 1 holds the argument; R1..R6 are its labels.
 *
 * Each slot has a 64-bit word: a 32-bit sequence in the high half and the
 * entry's metadata (its length, and for the EQ its event code) in the low
 * half.  The sequence of the slot at position pos is pos's lap base (pos
 * with the slot index bits cleared), truncated to 32 bits:
 *
 *   base        free for position pos (metadata 0)
 *   base + 1    the entry at pos is published
 *   base + cap  freed: free for position pos + cap
 *
 * So a never-used slot's word is 0: a queue whose slot memory came zeroed
 * from the kernel touches no page until it is used.  A producer's check is
 * one 64-bit compare with the free word; a consumer's, one compare of the
 * high halves.  Anything else is the rare path: the slot is full (or, for a
 * consumer, empty), or the guess of head or tail was stale.  The two are
 * told apart by the signed 32-bit difference of the sequences, which a guess
 * stale by 2^31 positions or more gets wrong; so "full" and "empty" are
 * reported only after re-reading head or tail and finding it unchanged.
 *
 * Claims: a producer counts the slots from head on that it sees free (R2),
 * up to n, and moves head past them with one CAS; a consumer counts the
 * published entries from tail on that fit its buffer (R3) and moves tail
 * with one CAS.  A single producer (single consumer) owns head (tail) and
 * stores it instead.  Only slots seen free are claimed, so no producer ever
 * waits for a consumer.
 */
#ifndef LFPOLL_INTERNAL_RING_SLOT_H
#define LFPOLL_INTERNAL_RING_SLOT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The word of the slot at pos while it is free for pos. */
LFP_FORCE_INLINE uint64_t lfp__slot_free_word(const struct lfp__ring_geo *g,
                                              uint64_t pos)
{
	return (pos & ~g->mask) << 32;
}

/* The high half of the word of the slot at pos once its entry is published. */
LFP_FORCE_INLINE uint64_t lfp__slot_full_hi(const struct lfp__ring_geo *g,
                                            uint64_t pos)
{
	return ((pos & ~g->mask) + 1) << 32;
}

/* Whether word says the entry at pos is published. */
LFP_FORCE_INLINE int lfp__slot_is_full(const struct lfp__ring_geo *g,
                                       uint64_t word, uint64_t pos)
{
	return (word ^ lfp__slot_full_hi(g, pos)) >> 32 == 0;
}

/* Signed distance between the sequence in word and the one in want. */
LFP_FORCE_INLINE int32_t lfp__slot_dif(uint64_t word, uint64_t want)
{
	return (int32_t)((uint32_t)(word >> 32) - (uint32_t)(want >> 32));
}

LFP_FORCE_INLINE uint64_t *lfp__slot_wordp(const struct lfp__ring_geo *g,
                                           uint64_t pos)
{
	return (uint64_t *)(void *)(g->words + (size_t)(pos & g->mask) * g->stride);
}

/*
 * The word of the slot at pos, which a claim checks and its caller will
 * write (a producer publishes it, a consumer frees it).  A burst fetches the
 * line for writing now, one transfer instead of a read and then an upgrade:
 * a hint only (one entry: no gain measured, and n is then a constant 1).
 */
LFP_FORCE_INLINE uint64_t *lfp__slot_word_to_write(const struct lfp__ring_geo *g,
                                                   uint64_t pos, size_t n)
{
	uint64_t *w = lfp__slot_wordp(g, pos);

	if (n > 1)
		__builtin_prefetch(w, 1);
	return w;
}

/*
 * The producers' rare path: the slot at pos holds word, not the free word
 * for pos.  Returns 1 when the ring is full: the slot still holds an older
 * lap's entry (or its consumer is still copying it out) and head, re-read
 * after the slot's acquire, is still pos, so no producer has claimed pos
 * and the difference was not a stale guess wrapping the 32-bit sequence.
 * Otherwise 0: reload head and try again.  (Values, not pointers: a pointer
 * to the caller's locals would keep them in memory on the fast path.)
 */
LFP_SLOW int lfp__slot_prod_stuck(struct lfp_ring *r, uint64_t mask,
                                  uint64_t word, uint64_t pos)
{
	int32_t dif = (int32_t)((uint32_t)(word >> 32) - (uint32_t)(pos & ~mask));

	LFP__SCHED("ring.prod.stuck", r);
	if (dif < 0 && LFP__BROKEN("S"))
		return 1; /* full on the sequence alone, as before the re-check */
	return dif < 0 && lfp__ld_rlx_u64(&r->head) == pos;
}

/*
 * How many of the n slots from pos on are free for their positions (R2);
 * *word is the word of the first that is not.
 */
LFP_FORCE_INLINE size_t lfp__slot_scan_free(const struct lfp__ring_geo *g,
                                            uint64_t pos, size_t n,
                                            uint64_t *word)
{
	size_t k;

	for (k = 0; k < n; k++) {
		/* R2: acquire pairs with R4 of the consumer that freed this
		 * slot: its copy-out is done before we overwrite. */
		*word = lfp__ld_acq_u64(lfp__slot_word_to_write(g, pos + k, n));
		if (*word != lfp__slot_free_word(g, pos + k))
			break;
	}
	return k;
}

/* Move head from pos past k claimed positions: 1 when ours.  A single
 * producer owns head and stores it (relaxed: the slot words carry the
 * data; others read head only as a snapshot, lfp_ring_count). */
LFP_FORCE_INLINE int lfp__slot_take_head(struct lfp_ring *r,
                                         const struct lfp__ring_geo *g,
                                         uint64_t pos, size_t k)
{
	if (g->mode & LFP__RING_SP) {
		lfp__st_rlx_u64(&r->head, pos + k);
		return 1;
	}
	/* Full-barrier RMW; ordering for the payload comes from R2. */
	return lfp__cas_ok_u64(&r->head, pos, pos + k);
}

/* A producer's claim of run.n positions from run.first (n 0: full). */
struct lfp__run {
	uint64_t first;
	size_t n;
};

/*
 * The producers' claim loop, out of line: what the inline attempt of
 * lfp__slot_claim_prod hands over when its one try did not succeed (a lost
 * CAS, a full ring, a stale guess of head).
 */
LFP_OUTLINE struct lfp__run lfp__slot_claim_prod_loop(struct lfp_ring *r,
                                                      size_t n)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	struct lfp__run run;
	uint64_t word = 0;
	size_t k;

	run.first = lfp__ld_rlx_u64(&r->head);
	for (;;) {
		LFP__SCHED("ring.prod.guessed", r);
		k = lfp__slot_scan_free(&g, run.first, n, &word);
		if (k == 0) {
			if (lfp__slot_prod_stuck(r, g.mask, word, run.first)) {
				run.n = 0;
				return run;
			}
		} else {
			if (LFP__BROKEN("L"))
				k = n; /* claim n once the first is free, as a blind FAA would */
			if (lfp__slot_take_head(r, &g, run.first, k))
				break;
		}
		run.first = lfp__ld_rlx_u64(&r->head); /* stale or lost: retry */
	}
	run.n = k;
	return run;
}

/*
 * One attempt at claiming up to n free positions from head: the number
 * claimed, or 0 when this attempt claimed nothing (a full ring, a stale
 * guess, a lost CAS: lfp__slot_claim_prod_loop tells them apart).  Inline
 * callers try once and hand anything else to code out of line.
 */
LFP_FORCE_INLINE size_t lfp__slot_try_prod(struct lfp_ring *r,
                                           const struct lfp__ring_geo *g,
                                           size_t n, uint64_t *first)
{
	uint64_t pos, word;
	size_t k;

	/* Relaxed: only a guess, which the CAS validates (a single producer
	 * owns head: it is exact). */
	pos = lfp__ld_rlx_u64(&r->head);
	LFP__SCHED("ring.prod.guessed", r);
	k = lfp__slot_scan_free(g, pos, n, &word);
	if (LFP__BROKEN("L") && k)
		k = n;
	if (LFP__UNLIKELY(!k || !lfp__slot_take_head(r, g, pos, k)))
		return 0;
	LFP__SCHED("ring.prod.claimed", r);
	/* R6: pairs with R5 in peek.  A peeking reader that copied any byte we
	 * are about to write must, after its acquire fence, also see the
	 * slot word that R2 read, so its re-check fails. */
	lfp__fence_rel();
	*first = pos;
	return k;
}

/*
 * Claim up to n consecutive free positions from head: the producers' only
 * claim, for one entry (n constant 1) and for bursts.  Returns the number
 * claimed (0: full) and the first position in *first.  One attempt inline;
 * the rest in lfp__slot_claim_prod_loop.
 *
 * Every slot is seen free before the claim, so a producer never waits for
 * a consumer: a slot whose consumer has claimed it and is still copying out
 * counts as full.  (Claiming against a cached copy of tail and then waiting
 * for each slot's free measured slower here: docs/design.md, section 1.)
 */
LFP_FORCE_INLINE size_t lfp__slot_claim_prod(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, uint64_t *first)
{
	struct lfp__run run;
	size_t k = lfp__slot_try_prod(r, g, n, first);

	if (LFP__LIKELY(k))
		return k;
	run = lfp__slot_claim_prod_loop(r, n);
	if (!run.n)
		return 0;
	LFP__SCHED("ring.prod.claimed", r);
	lfp__fence_rel(); /* R6, as in lfp__slot_try_prod */
	*first = run.first;
	return run.n;
}

/*
 * The consumers' rare path: the slot at pos did not give an entry that fits
 * (its word is word; big: published but longer than the caller's buffer).
 * Returns the reason to report, LFP__RING_EMPTY or LFP__RING_TOO_BIG, when
 * tail, re-read after the slot's acquire, is still pos, which makes the
 * word this position's; otherwise -1: reload tail and try again.
 */
LFP_SLOW int lfp__slot_cons_stuck(struct lfp_ring *r, uint64_t mask,
                                  uint64_t word, int big, uint64_t pos)
{
	int32_t dif = (int32_t)((uint32_t)(word >> 32) -
	                        (uint32_t)((pos & ~mask) + 1));

	if (dif < 0 && !big && LFP__BROKEN("S"))
		return LFP__RING_EMPTY; /* empty on the sequence alone, as before */
	if (lfp__ld_rlx_u64(&r->tail) != pos)
		return -1;
	if (big)
		return LFP__RING_TOO_BIG;
	/* Not yet published for pos: the sequence is behind. */
	return dif < 0 ? LFP__RING_EMPTY : -1;
}

/*
 * How many of the n entries from pos on are published (R3) and fit in cap;
 * sets c->exact and c->meta (the first entry's metadata), *word (the word
 * of the first that is not published) and *big (it is published, but
 * longer than cap).
 */
LFP_FORCE_INLINE size_t lfp__slot_scan_full(const struct lfp__ring_geo *g,
                                            uint64_t pos, size_t n, size_t cap,
                                            struct lfp__claim *c,
                                            uint64_t *word, int *big)
{
	uint32_t len;
	size_t k;

	*big = 0;
	c->exact = 1;
	c->meta = 0;
	for (k = 0; k < n; k++) {
		/* R3: acquire pairs with R1: the payload and length written
		 * before the publish are visible. */
		*word = lfp__ld_acq_u64(lfp__slot_word_to_write(g, pos + k, n));
		if (!lfp__slot_is_full(g, *word, pos + k))
			break;
		len = (uint32_t)*word & g->len_mask;
		if (LFP__UNLIKELY(len != cap)) {
			if (len > cap) {
				*big = 1;
				break;
			}
			c->exact = 0;
		}
		if (k == 0)
			c->meta = (uint32_t)*word;
	}
	return k;
}

/* Move tail from pos past k claimed entries: 1 when ours (a single
 * consumer owns tail and stores it, relaxed as head for a single
 * producer). */
LFP_FORCE_INLINE int lfp__slot_take_tail(struct lfp_ring *r,
                                         const struct lfp__ring_geo *g,
                                         uint64_t pos, size_t k)
{
	if (g->mode & LFP__RING_SC) {
		lfp__st_rlx_u64(&r->tail, pos + k);
		return 1;
	}
	return lfp__cas_ok_u64(&r->tail, pos, pos + k);
}

/* The consumers' claim loop, out of line, as lfp__slot_claim_prod_loop:
 * returns the claim (first, meta, exact; why when n is 0) and its count. */
LFP_OUTLINE struct lfp__claim lfp__slot_claim_cons_loop(struct lfp_ring *r,
                                                        size_t n, size_t cap,
                                                        int (*gate)(const void *),
                                                        const void *garg,
                                                        size_t *count)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	struct lfp__claim c;
	uint64_t pos, word = 0;
	size_t k;
	int big, why;

	pos = lfp__ld_rlx_u64(&r->tail);
	for (;;) {
		LFP__SCHED("ring.cons.guessed", r);
		k = lfp__slot_scan_full(&g, pos, n, cap, &c, &word, &big);
		if (k == 0) {
			why = lfp__slot_cons_stuck(r, g.mask, word, big, pos);
			if (why >= 0) {
				c.why = why;
				*count = 0;
				return c;
			}
		} else {
			LFP__SCHED("ring.cons.acquired", r);
			if (gate && gate(garg)) {
				c.why = LFP__RING_GATED;
				*count = 0;
				return c;
			}
			if (lfp__slot_take_tail(r, &g, pos, k))
				break;
		}
		pos = lfp__ld_rlx_u64(&r->tail);
	}
	c.first = pos;
	*count = k;
	return c;
}

/*
 * One attempt at claiming up to n published entries from tail that fit in
 * cap: the number claimed, or 0 when this attempt claimed nothing.  Then
 * c->why is LFP__RING_EMPTY when the ring is empty for certain: the slot at
 * pos is still free for pos (no producer published pos) and tail, re-read
 * after the slot's acquire, is still pos, so the word was this position's
 * and not a guess laps stale (design.md 1, "Claims, inline and out of
 * line").  This is the answer of every poll of an idle queue, so it is
 * given here, with one more load of a line the attempt just read.
 * Otherwise (too big, gated, stale, lost, a slot a consumer of the
 * previous lap has not freed yet) c->why is LFP__RING_RETRY:
 * lfp__slot_claim_cons_loop tells them apart.  Fills *c as
 * lfp__slot_claim_cons does.
 */
LFP_FORCE_INLINE size_t lfp__slot_try_cons(struct lfp_ring *r,
                                           const struct lfp__ring_geo *g,
                                           size_t n, size_t cap,
                                           struct lfp__claim *c,
                                           int (*gate)(const void *),
                                           const void *garg)
{
	uint64_t pos, word;
	size_t k;
	int big;

	pos = lfp__ld_rlx_u64(&r->tail); /* a guess, validated by the CAS */
	LFP__SCHED("ring.cons.guessed", r);
	k = lfp__slot_scan_full(g, pos, n, cap, c, &word, &big);
	if (LFP__UNLIKELY(!k)) {
		if (LFP__BROKEN("S")) /* empty on the wrapped sequence alone */
			c->why = !big && lfp__slot_dif(word, lfp__slot_full_hi(g, pos)) < 0
			         ? LFP__RING_EMPTY : LFP__RING_RETRY;
		else
			c->why = word == lfp__slot_free_word(g, pos) &&
			         lfp__ld_rlx_u64(&r->tail) == pos ? LFP__RING_EMPTY
			                                          : LFP__RING_RETRY;
		return 0;
	}
	LFP__SCHED("ring.cons.acquired", r);
	if (LFP__UNLIKELY((gate && gate(garg)) ||
	                  !lfp__slot_take_tail(r, g, pos, k))) {
		c->why = LFP__RING_RETRY;
		return 0;
	}
	/* Until we free them, producers see these slots full. */
	LFP__SCHED("ring.cons.claimed", r);
	c->first = pos;
	return k;
}

/*
 * Claim up to n consecutive published positions from tail whose entries fit
 * in cap bytes: the consumers' only claim, for one entry and for bursts.
 * Fills *c: the first position, the metadata of the first entry (for a
 * single entry: its taker need not read the word again), and whether every
 * entry claimed is exactly cap bytes long (then the takers copy with cap's
 * size).  Returns the number claimed; 0 with c->why LFP__RING_TOO_BIG when
 * the head entry is longer than cap (it stays queued), LFP__RING_GATED when
 * gate(garg) said no, else LFP__RING_EMPTY.  One attempt inline; the rest
 * in lfp__slot_claim_cons_loop.
 *
 * gate (NULL: none) runs after the entries' slot words were read with
 * acquire (R3) and before the claim: what was visible to their producers
 * when they published is visible to it.  The EQ and CQ pass their error
 * check, so an event never overtakes an error queued before it.
 */
LFP_FORCE_INLINE size_t lfp__slot_claim_cons(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, size_t cap,
                                             struct lfp__claim *c,
                                             int (*gate)(const void *),
                                             const void *garg)
{
	size_t k = lfp__slot_try_cons(r, g, n, cap, c, gate, garg);

	if (LFP__LIKELY(k) || c->why == LFP__RING_EMPTY)
		return k;
	*c = lfp__slot_claim_cons_loop(r, n, cap, gate, garg, &k);
	if (k)
		LFP__SCHED("ring.cons.claimed", r);
	return k;
}

/* R1: publish a filled slot's payload and metadata; pairs with R3 (and R5). */
LFP_FORCE_INLINE void lfp__slot_publish(const struct lfp__ring_geo *g,
                                        uint64_t pos, uint32_t meta)
{
	lfp__st_rel_u64(lfp__slot_wordp(g, pos), lfp__slot_full_hi(g, pos) | meta);
}

/* R4: free a consumed slot for the next lap; pairs with R2. */
LFP_FORCE_INLINE void lfp__slot_free(const struct lfp__ring_geo *g,
                                     uint64_t pos)
{
	lfp__st_rel_u64(lfp__slot_wordp(g, pos),
	                lfp__slot_free_word(g, pos + g->mask + 1));
}

/* A claimed slot's metadata.  Relaxed: the claim's R3 already ordered it. */
LFP_FORCE_INLINE uint32_t lfp__slot_meta(const struct lfp__ring_geo *g,
                                         uint64_t pos)
{
	return (uint32_t)lfp__ld_rlx_u64(lfp__slot_wordp(g, pos));
}

/*
 * Peek split in two: the first n1 bytes of the head entry go to d1, the rest
 * (at most cap2 bytes) to d2.  Returns the entry's whole length, -EAGAIN, or
 * -LFP_ETOOSMALL; *ticket names the entry for lfp_ring_consume() and *meta
 * is its metadata.  A seqlock read: the copy counts only if the slot word
 * did not change during it, and only if tail is still pos after it.  The
 * word's 32-bit sequence cannot tell pos from a position 2^32 later: a
 * peeker stalled after loading tail while that many entries passed found
 * the slot "full" with a later lap's entry, not the head (S2).  tail, 64
 * bits, can: equal after the copy, pos was the head, and the word, which
 * no later lap can write before pos is consumed, was pos's.
 */
LFP_INLINE ssize_t lfp__slot_peek_split(struct lfp_ring *r, void *d1, size_t n1,
                                        void *d2, size_t cap2, uint64_t *ticket,
                                        uint32_t *meta)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos, word, *w;
	unsigned char *d;
	size_t len;

	pos = lfp__ld_rlx_u64(&r->tail);
	for (;;) {
		LFP__SCHED("ring.peek.guessed", r);
		w = lfp__slot_wordp(&g, pos);
		word = lfp__ld_acq_u64(w); /* R3 as in the claim */
		if (lfp__slot_is_full(&g, word, pos)) {
			len = (uint32_t)word & g.len_mask;
			*meta = (uint32_t)word;
			if (len == 0) {
				/* Nothing to copy: the word alone is the
				 * entry, if pos is still the head. */
				if (lfp__ld_rlx_u64(&r->tail) == pos ||
				    LFP__BROKEN("S2")) {
					*ticket = pos;
					return 0;
				}
			} else if (len < n1 || len - n1 > cap2) {
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
				if (lfp__ld_rlx_u64(w) == word &&
				    (lfp__ld_rlx_u64(&r->tail) == pos ||
				     LFP__BROKEN("S2"))) {
					*ticket = pos;
					return (ssize_t)len;
				}
			}
		} else if (lfp__slot_dif(word, lfp__slot_full_hi(&g, pos)) < 0 &&
		           lfp__ld_rlx_u64(&r->tail) == pos) {
			return -EAGAIN; /* empty, and not a stale guess */
		}
		pos = lfp__ld_rlx_u64(&r->tail);
	}
}

/*
 * How many entries from the head on are published, counting up to limit: a
 * snapshot for readiness and thresholds.  Positions that producers claimed
 * and have not yet published do not count: no read can take them.
 */
LFP_INLINE size_t lfp__slot_published(const struct lfp_ring *r, size_t limit)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos = lfp__ld_rlx_u64(&r->tail), word = 0;
	size_t k;

	for (;;) {
		/* R3 per slot, so a caller that sees the entries also sees
		 * their contents when it goes on to read them. */
		for (k = 0; k < limit; k++) {
			word = lfp__ld_acq_u64(lfp__slot_wordp(&g, pos + k));
			if (!lfp__slot_is_full(&g, word, pos + k))
				break;
		}
		if (k > 0 || limit == 0)
			return k;
		/* None: report it only for the current tail (a guess stale
		 * by 2^31 positions sees a later lap as "behind"). */
		if (lfp__slot_dif(word, lfp__slot_full_hi(&g, pos)) < 0 &&
		    lfp__ld_rlx_u64(&r->tail) == pos)
			return 0;
		pos = lfp__ld_rlx_u64(&r->tail);
	}
}

/* Consume the entry a peek returned: 0 once, -ESTALE when it was already
 * consumed (by this ticket or by another consumer). */
LFP_INLINE int lfp__slot_consume(struct lfp_ring *r, uint64_t ticket)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);

	/* R3: the entry must be published at this position (a ticket from
	 * peek always is; this rejects forged ones without claiming). */
	if (!lfp__slot_is_full(&g, lfp__ld_acq_u64(lfp__slot_wordp(&g, ticket)),
	                       ticket))
		return -ESTALE;
	if (g.mode & LFP__RING_SC) {
		if (lfp__ld_rlx_u64(&r->tail) != ticket)
			return -ESTALE;
		lfp__st_rlx_u64(&r->tail, ticket + 1);
	} else if (!lfp__cas_ok_u64(&r->tail, ticket, ticket + 1)) {
		return -ESTALE;
	}
	lfp__slot_free(&g, ticket);
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_RING_SLOT_H */
