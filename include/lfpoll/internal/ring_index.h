/*
 * lfpoll internal: the index ring, the mode of a ring (EQ, CQ) opened with
 * both LFP_SINGLE_PRODUCER and LFP_SINGLE_CONSUMER.  Do not include
 * directly; include <lfpoll/ring.h>.  docs/design.md section 1.1 holds the
 * argument; I1..I5 are its labels.
 *
 * Payloads sit in one array, each entry's metadata (length, event code) in
 * a second one.  The producer owns head and the consumer tail; each keeps
 * its own copy of the other's index (tail_seen, head_seen) and reads the
 * other's line only when its copy says the ring is full (empty).  A burst
 * is therefore one pass of copies per side and one release store of an
 * index: no CAS, no slot word, and every call finishes in a bounded number
 * of its own steps (wait-free).  Only the single producer and the single
 * consumer may call the claim functions; any thread may take the
 * snapshots (ready, published, count).
 */
#ifndef LFPOLL_INTERNAL_RING_INDEX_H
#define LFPOLL_INTERNAL_RING_INDEX_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * I5, the lengths (docs/design.md section 1.1): the producer remembers the
 * metadata word it stored last (last_meta) and the position where the run
 * of entries with that word began (len_change), and the consumer copies
 * len_change each time it copies head (I3).  When its copy is at or before
 * tail, every entry from tail up to its copy of head has the metadata, and
 * so the length, of the entry at tail: a burst of fixed-size entries checks one
 * word, not one per entry.  Keep the record for the entry at pos.
 */
LFP_FORCE_INLINE void lfp__idx_note_meta(struct lfp_ring *r, uint64_t pos,
                                         uint32_t meta)
{
	/* Relaxed: both are the producer's; I2 publishes them with head. */
	if (LFP__UNLIKELY(meta != lfp__ld_rlx_u32(&r->last_meta))) {
		lfp__st_rlx_u32(&r->last_meta, meta);
		lfp__st_rlx_u64(&r->len_change, pos);
	}
}

/*
 * Store the metadata of the entry at pos, and keep the record.  A word that
 * already holds meta (an earlier lap's entry of the same kind) is only
 * read: a store would take the word's line from the consumer, which reads
 * it for every single entry (lfp__idx_claim_cons), and bring it back at the
 * consumer's next read, a line crossing per entry that a bare index ring
 * does not make (docs/design.md 1.1, "The metadata words").  Plain
 * accesses: this producer is the word's only writer, and I2/I3 order its
 * stores before the consumer's reads as they order the payload's.
 */
LFP_FORCE_INLINE void lfp__idx_set_meta(struct lfp_ring *r,
                                        const struct lfp__ring_geo *g,
                                        uint64_t pos, uint32_t meta)
{
	uint32_t *w = &g->meta[pos & g->mask];

	/* Test builds: "m" tests the record instead of the word, and leaves
	 * an earlier lap's metadata under a run of equal entries. */
	if (LFP__BROKEN("m") ? meta != lfp__ld_rlx_u32(&r->last_meta)
	                     : *w != meta)
		*w = meta;
	lfp__idx_note_meta(r, pos, meta);
}

/*
 * Store v into n consecutive metadata words: four at a time where they are
 * 16-byte aligned (a burst of 32 from an aligned start stores 8 times, not
 * 32), one at a time before and after.
 */
LFP_FORCE_INLINE void lfp__idx_fill_words(uint32_t *m, uint32_t v, size_t n)
{
	const uint32_t four[4] = { v, v, v, v };
	size_t i = 0;

	for (; i < n && ((uintptr_t)(m + i) & 15); i++)
		m[i] = v;
	for (; i + 4 <= n; i += 4)
		memcpy(m + i, four, sizeof(four));
	for (; i < n; i++)
		m[i] = v;
}

/* The same for k entries of metadata len (a length alone) from first. */
LFP_FORCE_INLINE void lfp__idx_set_meta_run(struct lfp_ring *r,
                                            const struct lfp__ring_geo *g,
                                            uint64_t first, uint32_t len,
                                            size_t k)
{
	size_t at = (size_t)(first & g->mask), run = (size_t)g->mask + 1 - at;

	if (run >= k) {
		lfp__idx_fill_words(g->meta + at, len, k);
	} else {
		lfp__idx_fill_words(g->meta + at, len, run);
		lfp__idx_fill_words(g->meta, len, k - run);
	}
	if (k)
		lfp__idx_note_meta(r, first, len);
}

/*
 * I3: the consumer's copy of head, and with it its copy of len_change (I5).
 * The relaxed load of len_change after the acquire reads the value the
 * producer stored before the release of the head seen here, or a later one
 * (write-read coherence); a later one names a position at or past that
 * head, so past tail, and a burst's check then reads every word.
 */
LFP_FORCE_INLINE uint64_t lfp__idx_see_head(struct lfp_ring *r)
{
	/* I3: acquire pairs with I2: the payloads and metadata of the
	 * entries before head are visible. */
	uint64_t head = lfp__ld_acq_u64(&r->head);

	lfp__st_rlx_u64(&r->head_seen, head);
	lfp__st_rlx_u64(&r->change_seen, lfp__ld_rlx_u64(&r->len_change));
	return head;
}

/*
 * I5 at the consumer: 1 when every entry from tail up to its copy of head
 * has length cap (the one at tail has it, and the run it belongs to began
 * at or before tail), with the metadata of the entry at tail in *meta.
 */
LFP_FORCE_INLINE int lfp__idx_one_run(struct lfp_ring *r,
                                      const struct lfp__ring_geo *g,
                                      uint64_t tail, size_t cap,
                                      uint32_t *meta)
{
	*meta = g->meta[tail & g->mask];
	/* "At or before" as a difference, as every position compare is: a
	 * ring started near 2^64 (tests place one there) crosses it. */
	return (*meta & g->len_mask) == cap &&
	       (int64_t)(tail - lfp__ld_rlx_u64(&r->change_seen)) >= 0;
}

/*
 * Claim up to n free positions for the producer: returns the number
 * (0: full) and the first in *first.  The entries are filled with
 * lfp__idx_put and published together by lfp__idx_commit_prod.
 */
LFP_FORCE_INLINE size_t lfp__idx_claim_prod(struct lfp_ring *r,
                                            const struct lfp__ring_geo *g,
                                            size_t n, uint64_t *first)
{
	/* Relaxed: head is ours; tail_seen is our own copy. */
	uint64_t head = lfp__ld_rlx_u64(&r->head), tail;
	uint64_t room = lfp__ld_rlx_u64(&r->tail_seen) + g->mask + 1 - head;

	if (LFP__UNLIKELY(room < n)) {
		/* I1: acquire pairs with I4: the consumer's copies out of the
		 * positions it gave back are done before we overwrite them. */
		tail = lfp__ld_acq_u64(&r->tail);
		lfp__st_rlx_u64(&r->tail_seen, tail);
		room = tail + g->mask + 1 - head;
		if (room == 0)
			return 0;
		if (room < n)
			n = (size_t)room;
	}
	*first = head;
	return n;
}

/* I2: publish the k entries filled from first; pairs with I3. */
LFP_FORCE_INLINE void lfp__idx_commit_prod(struct lfp_ring *r, uint64_t first,
                                           size_t k)
{
	LFP__SCHED("ring.idx.filled", r);
	lfp__st_rel_u64(&r->head, first + k);
}

/*
 * Claim up to n published entries from tail whose lengths fit in cap:
 * fills *c as lfp__slot_claim_cons does and returns the number.  The
 * entries are copied out with lfp__idx_take and given back together by
 * lfp__idx_commit_cons.  gate as for the per-slot claim: it runs after I3.
 */
LFP_FORCE_INLINE size_t lfp__idx_claim_cons(struct lfp_ring *r,
                                            const struct lfp__ring_geo *g,
                                            size_t n, size_t cap,
                                            struct lfp__claim *c,
                                            int (*gate)(const void *),
                                            const void *garg)
{
	uint64_t tail = lfp__ld_rlx_u64(&r->tail), head; /* ours */
	uint64_t avail = lfp__ld_rlx_u64(&r->head_seen) - tail;
	uint32_t len, meta;
	size_t k;

	if (LFP__UNLIKELY(avail < n)) {
		head = lfp__idx_see_head(r); /* I3 */
		avail = head - tail;
		if (avail == 0) {
			c->why = LFP__RING_EMPTY;
			return 0;
		}
		if (avail < n)
			n = (size_t)avail;
	}
	c->exact = 1;
	if (n > 1 && LFP__LIKELY(lfp__idx_one_run(r, g, tail, cap, &c->meta)))
		k = n;
	else for (k = 0; k < n; k++) {
		meta = g->meta[(tail + k) & g->mask];
		len = meta & g->len_mask;
		if (LFP__UNLIKELY(len != cap)) {
			if (len > cap)
				break;
			c->exact = 0;
		}
		if (k == 0)
			c->meta = meta;
	}
	if (LFP__UNLIKELY(k == 0)) {
		c->why = LFP__RING_TOO_BIG; /* only we move tail: no re-check */
		return 0;
	}
	if (gate && gate(garg)) {
		c->why = LFP__RING_GATED;
		return 0;
	}
	c->first = tail;
	if (LFP__BROKEN("X")) /* give the positions back before the copies */
		lfp__st_rel_u64(&r->tail, tail + k);
	LFP__SCHED("ring.idx.claimed", r);
	return k;
}

/* I4: give back the k positions copied out from first; pairs with I1. */
LFP_FORCE_INLINE void lfp__idx_commit_cons(struct lfp_ring *r, uint64_t first,
                                           size_t k)
{
	LFP__SCHED("ring.idx.taken", r);
	lfp__st_rel_u64(&r->tail, first + k);
}

/* Peek the head entry (the consumer only): as lfp__slot_peek_split. */
LFP_INLINE ssize_t lfp__idx_peek_split(struct lfp_ring *r, void *d1, size_t n1,
                                       void *d2, size_t cap2, uint64_t *ticket,
                                       uint32_t *meta)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t tail = lfp__ld_rlx_u64(&r->tail);
	const unsigned char *d;
	size_t len;

	if (lfp__ld_rlx_u64(&r->head_seen) == tail) {
		if (lfp__idx_see_head(r) == tail) /* I3 */
			return -EAGAIN;
	}
	*meta = g.meta[tail & g.mask];
	len = *meta & g.len_mask;
	if (len < n1 || len - n1 > cap2)
		return -LFP_ETOOSMALL;
	/* Only we give positions back: the producer cannot refill it. */
	d = lfp__ring_data(&g, tail);
	if (n1)
		memcpy(d1, d, n1);
	if (len > n1)
		memcpy(d2, d + n1, len - n1);
	*ticket = tail;
	return (ssize_t)len;
}

/* Consume the head entry a peek returned (the consumer only). */
LFP_INLINE int lfp__idx_consume(struct lfp_ring *r, uint64_t ticket)
{
	if (lfp__ld_rlx_u64(&r->tail) != ticket)
		return -ESTALE;
	/* I3: the ticket must name a published entry (forged ones fail). */
	if (lfp__ld_rlx_u64(&r->head_seen) == ticket) {
		if (lfp__idx_see_head(r) == ticket)
			return -ESTALE;
	}
	lfp__idx_commit_cons(r, ticket, 1);
	return 0;
}

/* Published entries from the head on, up to limit: a snapshot any thread
 * may take.  Acquire on head (I3's pairing) so that a reader that goes on
 * to read sees the contents. */
LFP_INLINE size_t lfp__idx_published(const struct lfp_ring *r, size_t limit)
{
	uint64_t tail = lfp__ld_rlx_u64(&r->tail);
	uint64_t avail = lfp__ld_acq_u64(&r->head) - tail;

	/* A tail loaded before a long stall can pass the head we load:
	 * the difference is then "negative", and nothing is ready. */
	if ((int64_t)avail <= 0)
		return 0;
	return avail < limit ? (size_t)avail : limit;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_RING_INDEX_H */
