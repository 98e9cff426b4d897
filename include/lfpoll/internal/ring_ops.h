/*
 * lfpoll internal: what every ring mode shares, dispatched on the mode:
 * the claims, the copies in and out, the single and burst operations, and
 * the one-attempt forms that the public calls and the EQ and CQ inline.
 * Do not include directly; include <lfpoll/ring.h>.  The modes' own
 * protocols are internal/ring_slot.h (per-slot) and internal/ring_index.h
 * (index ring); docs/design.md section 1 holds the arguments.
 */
#ifndef LFPOLL_INTERNAL_RING_OPS_H
#define LFPOLL_INTERNAL_RING_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- misuse */

/*
 * LFP_DEBUG: a single side (LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER)
 * entered by a second thread while the first is inside aborts with a
 * message, instead of corrupting the ring.  Without LFP_DEBUG, nothing.
 */
#ifdef LFP_DEBUG
#include <stdio.h>

LFP_SLOW void lfp__misuse(const char *what)
{
	fputs(what, stderr);
	abort();
}

LFP_INLINE void lfp__side_enter(const struct lfp_ring *r, int producer)
{
	struct lfp_ring *w = (struct lfp_ring *)(uintptr_t)r;

	if (producer && (r->mode & LFP__RING_SP) &&
	    lfp__xchg_rlx_u32(&w->prod_busy, 1))
		lfp__misuse("lfpoll: two threads at once on the producer side of a "
		            "queue opened with LFP_SINGLE_PRODUCER\n");
	if (!producer && (r->mode & LFP__RING_SC) &&
	    lfp__xchg_rlx_u32(&w->cons_busy, 1))
		lfp__misuse("lfpoll: two threads at once on the consumer side of a "
		            "queue opened with LFP_SINGLE_CONSUMER\n");
}

LFP_INLINE void lfp__side_leave(const struct lfp_ring *r, int producer)
{
	struct lfp_ring *w = (struct lfp_ring *)(uintptr_t)r;

	/* Relaxed, as the exchange: the check needs atomicity only. */
	if (producer && (r->mode & LFP__RING_SP))
		lfp__st_rlx_u32(&w->prod_busy, 0);
	if (!producer && (r->mode & LFP__RING_SC))
		lfp__st_rlx_u32(&w->cons_busy, 0);
}
#else
#  define lfp__side_enter(r, producer) ((void)0)
#  define lfp__side_leave(r, producer) ((void)0)
#endif

#include "ring_slot.h"
#include "ring_index.h"

/* ---------------------------------------------------------------- claims */

/*
 * Claim up to n free positions: the number claimed (0: full) and the first
 * in *first.  Fill each with lfp__ring_put or lfp__ring_put2, then
 * lfp__ring_commit_prod.
 */
LFP_FORCE_INLINE size_t lfp__ring_claim_prod(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, uint64_t *first)
{
	if (g->mode == LFP__RING_INDEX)
		return lfp__idx_claim_prod(r, g, n, first);
	return lfp__slot_claim_prod(r, g, n, first);
}

/*
 * After a producer's claim failed: whether the ring holds fewer than its
 * capacity of claimed, untaken positions, so that the slot at head is held
 * by a consumer of the lap before that has taken its position and is still
 * copying the entry out (a per-slot ring frees a slot after its copy).
 * The ring is then not full, and the slot frees once that consumer runs.
 * An index ring gives positions back only after its copies: 0, full.
 *
 * The two indexes are read with RMWs (their latest values), head first:
 * tail only grows, so head minus a tail read after it is at most what the
 * ring held when head was read, and "full" is never said of a ring that
 * was not full at some instant of the call.  (Tail first, a thread stalled
 * between the two reads while others lapped the ring paired an old tail
 * with a new head and called a ring of capacity - 1 full: defect G3.)  A
 * tail that passed the head read makes the difference negative: not full,
 * claim again.  Slow path only (an overrun is at stake).
 */
LFP_SLOW int lfp__ring_slot_held(struct lfp_ring *r)
{
	uint64_t head, tail;

	if (r->mode == LFP__RING_INDEX)
		return 0;
	if (LFP__BROKEN("G3")) {
		tail = lfp__faa_u64(&r->tail, 0);
		LFP__SCHED("ring.slot_held", r);
		head = lfp__faa_u64(&r->head, 0);
		return head - tail <= r->mask;
	}
	head = lfp__faa_u64(&r->head, 0);
	LFP__SCHED("ring.slot_held", r);
	tail = lfp__faa_u64(&r->tail, 0);
	return (int64_t)(head - tail) <= (int64_t)r->mask;
}

/* Publish the k positions filled from first (the index ring at once; the
 * per-slot ring published each slot as it was filled). */
LFP_FORCE_INLINE void lfp__ring_commit_prod(struct lfp_ring *r,
                                            const struct lfp__ring_geo *g,
                                            uint64_t first, size_t k)
{
	if (g->mode == LFP__RING_INDEX)
		lfp__idx_commit_prod(r, first, k);
}

/*
 * Claim up to n published entries that fit in cap bytes each: see
 * lfp__slot_claim_cons for *c and gate.  Copy each out with lfp__ring_take
 * or lfp__ring_take2, then lfp__ring_commit_cons.
 */
LFP_FORCE_INLINE size_t lfp__ring_claim_cons(struct lfp_ring *r,
                                             const struct lfp__ring_geo *g,
                                             size_t n, size_t cap,
                                             struct lfp__claim *c,
                                             int (*gate)(const void *),
                                             const void *garg)
{
	if (n == 0) {
		c->why = LFP__RING_EMPTY;
		return 0;
	}
	if (g->mode == LFP__RING_INDEX)
		return lfp__idx_claim_cons(r, g, n, cap, c, gate, garg);
	return lfp__slot_claim_cons(r, g, n, cap, c, gate, garg);
}

/* Give back the k positions copied out from first (the index ring at once;
 * the per-slot ring freed each slot as it was copied). */
LFP_FORCE_INLINE void lfp__ring_commit_cons(struct lfp_ring *r,
                                            const struct lfp__ring_geo *g,
                                            uint64_t first, size_t k)
{
	if (g->mode == LFP__RING_INDEX)
		lfp__idx_commit_cons(r, first, k);
}

/* ---------------------------------------------------------------- slots */

/* Record a filled entry: the per-slot ring publishes its word (R1), the
 * index ring stores its metadata (published by the commit, I2). */
LFP_FORCE_INLINE void lfp__ring_publish(struct lfp_ring *r,
                                        const struct lfp__ring_geo *g,
                                        uint64_t pos, uint32_t meta)
{
	if (g->mode == LFP__RING_INDEX)
		lfp__idx_set_meta(r, g, pos, meta);
	else
		lfp__slot_publish(g, pos, meta);
}

/* Release a copied-out slot: the per-slot ring frees its word (R4); the
 * index ring gives positions back in its commit. */
LFP_FORCE_INLINE void lfp__ring_free(const struct lfp__ring_geo *g,
                                     uint64_t pos)
{
	if (g->mode != LFP__RING_INDEX)
		lfp__slot_free(g, pos);
}

/* A claimed entry's metadata.  Relaxed: the claim's acquire ordered it. */
LFP_FORCE_INLINE uint32_t lfp__ring_meta(const struct lfp__ring_geo *g,
                                         uint64_t pos)
{
	if (g->mode == LFP__RING_INDEX)
		return g->meta[pos & g->mask];
	return lfp__slot_meta(g, pos);
}

/*
 * The copy of an entry whose length differs from the caller's buffer: out
 * of line and cold, so that the hot path, whose copy has a constant size
 * wherever the caller's is, keeps no call and no register saves for it.
 */
LFP_SLOW void lfp__ring_copy_var(void *dst, const void *src, size_t n)
{
	if (dst) /* always, when n > 0: a NULL buffer has cap 0 */
		memcpy(dst, src, n);
}

/*
 * Copy out the claimed entry at pos, whose metadata is meta (from the
 * claim), into dst (cap bytes of room), and release its slot; returns the
 * length.  An entry of exactly cap bytes, the common case, is copied with
 * cap's size, a constant in typed callers.
 */
LFP_FORCE_INLINE size_t lfp__ring_take(const struct lfp__ring_geo *g,
                                       uint64_t pos, uint32_t meta, void *dst,
                                       size_t cap)
{
	size_t len = meta & g->len_mask;

	if (LFP__LIKELY(len == cap && cap))
		memcpy(dst, lfp__ring_data(g, pos), cap);
	else if (len) /* dst is non-NULL whenever len fits in cap > 0 */
		lfp__ring_copy_var(dst, lfp__ring_data(g, pos), len);
	lfp__ring_free(g, pos);
	return len;
}

/*
 * Copy out a claimed entry of len bytes made of two parts and release its
 * slot: the first n1 bytes to d1, the rest to d2 (NULL: dropped).  The
 * error queue (entry, then err_data) stores entries this way.  The CQ's
 * slots (entry, then source address) have their own fill and copy-out,
 * lfp__cq_put_one and lfp__cq_take_one, which copy the run-time entry size
 * word by word instead of calling memcpy.
 */
LFP_FORCE_INLINE void lfp__ring_take2(const struct lfp__ring_geo *g,
                                      uint64_t pos, size_t len, void *d1,
                                      size_t n1, void *d2)
{
	const unsigned char *src = lfp__ring_data(g, pos);

	memcpy(d1, src, n1);
	if (d2 && len > n1)
		memcpy(d2, src + n1, len - n1);
	lfp__ring_free(g, pos);
}

/* Fill the claimed slot at pos with n1 bytes from s1 then n2 from s2, and
 * record it with meta. */
LFP_FORCE_INLINE void lfp__ring_put2(struct lfp_ring *r,
                                     const struct lfp__ring_geo *g,
                                     uint64_t pos, const void *s1, size_t n1,
                                     const void *s2, size_t n2, uint32_t meta)
{
	unsigned char *d = lfp__ring_data(g, pos);

	lfp__copy_racy_in(d, s1, n1);
	lfp__copy_racy_in(d + n1, s2, n2);
	lfp__ring_publish(r, g, pos, meta);
}

/* Fill the claimed slot at pos with len bytes from src and record it. */
LFP_FORCE_INLINE void lfp__ring_put(struct lfp_ring *r,
                                    const struct lfp__ring_geo *g, uint64_t pos,
                                    const void *src, size_t len, uint32_t meta)
{
	lfp__copy_racy_in(lfp__ring_data(g, pos), src, len);
	lfp__ring_publish(r, g, pos, meta);
}

/* ---------------------------------------------------------------- single */

/* 0, -EAGAIN when full, -EMSGSIZE when len > slot size (nothing written). */
LFP_FORCE_INLINE int lfp__ring_enqueue(struct lfp_ring *r, const void *src,
                                       size_t len)
{
	struct lfp__ring_geo g;
	uint64_t pos;
	int ret = 0;

	if (LFP__UNLIKELY(len > r->slot_size))
		return -EMSGSIZE;
	g = lfp__ring_geo(r);
	lfp__side_enter(r, 1);
	if (LFP__LIKELY(lfp__ring_claim_prod(r, &g, 1, &pos))) {
		lfp__ring_put(r, &g, pos, src, len, (uint32_t)len);
		lfp__ring_commit_prod(r, &g, pos, 1);
	} else {
		ret = -EAGAIN;
	}
	lfp__side_leave(r, 1);
	return ret;
}

/* Enqueue one entry made of two parts (a header, then a payload) that
 * together fit a slot: 0, or -EAGAIN when full. */
LFP_FORCE_INLINE int lfp__ring_enqueue2(struct lfp_ring *r, const void *s1,
                                        size_t n1, const void *s2, size_t n2)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos;
	int ret = 0;

	lfp__side_enter(r, 1);
	if (lfp__ring_claim_prod(r, &g, 1, &pos)) {
		lfp__ring_put2(r, &g, pos, s1, n1, s2, n2, (uint32_t)(n1 + n2));
		lfp__ring_commit_prod(r, &g, pos, 1);
	} else {
		ret = -EAGAIN;
	}
	lfp__side_leave(r, 1);
	return ret;
}

LFP_FORCE_INLINE ssize_t lfp__ring_dequeue(struct lfp_ring *r, void *dst,
                                           size_t cap)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	struct lfp__claim c;
	ssize_t ret;

	lfp__side_enter(r, 0);
	if (LFP__LIKELY(lfp__ring_claim_cons(r, &g, 1, cap, &c, NULL, NULL))) {
		ret = (ssize_t)lfp__ring_take(&g, c.first, c.meta, dst, cap);
		lfp__ring_commit_cons(r, &g, c.first, 1);
	} else {
		ret = c.why == LFP__RING_TOO_BIG ? -LFP_ETOOSMALL : -EAGAIN;
	}
	lfp__side_leave(r, 0);
	return ret;
}

/*
 * One enqueue on the index ring, by its single producer: 1 when the entry
 * of len bytes from src went in with metadata meta, 0 when the ring is
 * full.  Wait-free: a full ring is the only thing to retry.  The inline
 * path of the ring's enqueue and of lfp_eq_write_spsc.
 */
LFP_FORCE_INLINE int lfp__idx_try_put(struct lfp_ring *r,
                                      const struct lfp__ring_geo *g,
                                      const void *src, size_t len,
                                      uint32_t meta)
{
	uint64_t pos;

	lfp__side_enter(r, 1);
	if (LFP__UNLIKELY(!lfp__idx_claim_prod(r, g, 1, &pos))) {
		lfp__side_leave(r, 1);
		return 0;
	}
	lfp__copy_racy_in(lfp__ring_data(g, pos), src, len);
	lfp__idx_set_meta(r, g, pos, meta);
	lfp__idx_commit_prod(r, pos, 1);
	lfp__side_leave(r, 1);
	return 1;
}

/*
 * One dequeue on the index ring, by its single consumer, gated as the
 * claims are: the entry's length, copied into dst (cap bytes of room), its
 * metadata in c->meta; or -1 with c->why when it took none.  The inline
 * path of the ring's dequeue and of lfp_eq_read_spsc.
 */
LFP_FORCE_INLINE ssize_t lfp__idx_try_take(struct lfp_ring *r,
                                           const struct lfp__ring_geo *g,
                                           void *dst, size_t cap,
                                           struct lfp__claim *c,
                                           int (*gate)(const void *),
                                           const void *garg)
{
	size_t len;

	lfp__side_enter(r, 0);
	if (LFP__UNLIKELY(!lfp__idx_claim_cons(r, g, 1, cap, c, gate, garg))) {
		lfp__side_leave(r, 0);
		return -1;
	}
	len = lfp__ring_take(g, c->first, c->meta, dst, cap);
	lfp__idx_commit_cons(r, c->first, 1);
	lfp__side_leave(r, 0);
	return (ssize_t)len;
}

/*
 * One attempt at an enqueue on the default mode, for inline callers: 1 when
 * it enqueued, 0 when it did nothing (another mode, a size check, a full
 * ring or a lost CAS: the caller runs the whole enqueue out of line).
 */
LFP_FORCE_INLINE int lfp__ring_try_enqueue(struct lfp_ring *r, const void *src,
                                           size_t len)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos;

	if (LFP__UNLIKELY(len > r->slot_size))
		return 0;
	if (g.mode == LFP__RING_INDEX)
		return lfp__idx_try_put(r, &g, src, len, (uint32_t)len);
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC ||
	                  !lfp__slot_try_prod(r, &g, 1, &pos)))
		return 0;
	lfp__copy_racy_in(lfp__ring_data(&g, pos), src, len);
	lfp__slot_publish(&g, pos, (uint32_t)len);
	return 1;
}

/* One attempt at a dequeue, as lfp__ring_try_enqueue: the entry's length,
 * -EAGAIN when the ring is empty for certain (the answer to a poll of an
 * idle ring, given inline), or -1 when it did nothing else. */
LFP_FORCE_INLINE ssize_t lfp__ring_try_dequeue(struct lfp_ring *r, void *dst,
                                               size_t cap)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	struct lfp__claim c;
	ssize_t len;

	if (g.mode == LFP__RING_INDEX) {
		len = lfp__idx_try_take(r, &g, dst, cap, &c, NULL, NULL);
		if (LFP__UNLIKELY(len < 0))
			return c.why == LFP__RING_EMPTY ? -EAGAIN : -1;
		return len;
	}
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC))
		return -1;
	if (LFP__UNLIKELY(!lfp__slot_try_cons(r, &g, 1, cap, &c, NULL, NULL)))
		return c.why == LFP__RING_EMPTY ? -EAGAIN : -1;
	return (ssize_t)lfp__ring_take(&g, c.first, c.meta, dst, cap);
}

/* The whole enqueue and dequeue, every mode, out of line. */
LFP_OUTLINE int lfp__ring_enqueue_out(struct lfp_ring *r, const void *src,
                                      size_t len)
{
	return lfp__ring_enqueue(r, src, len);
}

LFP_OUTLINE ssize_t lfp__ring_dequeue_out(struct lfp_ring *r, void *dst,
                                          size_t cap)
{
	return lfp__ring_dequeue(r, dst, cap);
}

/* ---------------------------------------------------------------- peek */

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
	ssize_t ret;

	/* A consumer call like the others: LFP_DEBUG's check of a single
	 * consumer covers it in every mode (a per-slot peek is a safe
	 * read, but lfp_ring(3) forbids the overlap all the same). */
	lfp__side_enter(r, 0);
	if (r->mode != LFP__RING_INDEX)
		ret = lfp__slot_peek_split(r, d1, n1, d2, cap2, ticket, meta);
	else
		ret = lfp__idx_peek_split(r, d1, n1, d2, cap2, ticket, meta);
	lfp__side_leave(r, 0);
	return ret;
}

/* ---------------------------------------------------------------- snapshots */

/*
 * How many entries from the head on are published, counting up to limit: a
 * snapshot for thresholds.  Unlike lfp_ring_count it does not count
 * positions that producers claimed and have not yet published, which no
 * read can take (a blocking read that counted them would spin, not sleep,
 * while a producer is stalled between its claim and its publish).
 */
LFP_INLINE size_t lfp__ring_published(const struct lfp_ring *r, size_t limit)
{
	if (r->mode == LFP__RING_INDEX)
		return lfp__idx_published(r, limit);
	return lfp__slot_published(r, limit);
}

/* Whether the head entry is published: a snapshot for readiness checks. */
LFP_INLINE int lfp__ring_ready(const struct lfp_ring *r)
{
	return lfp__ring_published(r, 1) != 0;
}

/* ---------------------------------------------------------------- bursts */

/*
 * Whether an index ring's burst copies its packed entries in one at a time
 * rather than with one memcpy a run: entries of a size known at compile
 * time, from just over half a line to two lines, where each copy is a few
 * vector moves.  Measured in SP/SC bursts of 56-, 64- and 128-byte entries:
 * faster across CPUs, level in one thread (4 instructions an entry more);
 * of 8 bytes, mixed, so small entries keep the one call (docs/design.md
 * 1.1, "Burst copies").
 */
#define LFP__IDX_COPY_EACH(len)                                                \
	(LFP__CONSTANT(len) && (len) > 32 && (len) <= 128)

/* An index ring's burst copy in: k entries of len_each bytes from s into
 * the positions from first, which may wrap: one at a time
 * (LFP__IDX_COPY_EACH), or in one or two copies when the entries are
 * packed as the ring packs them. */
LFP_FORCE_INLINE void lfp__idx_put_run(struct lfp_ring *r,
                                       const struct lfp__ring_geo *g,
                                       uint64_t first, const unsigned char *s,
                                       size_t len_each, size_t k)
{
	size_t i, at = (size_t)(first & g->mask), run;

	if (len_each == g->stride) {
		unsigned char *d = g->data + at * len_each;

		run = (size_t)g->mask + 1 - at;
		if (run > k)
			run = k;
		if (LFP__IDX_COPY_EACH(len_each)) {
			for (i = 0; i < run; i++, d += len_each, s += len_each)
				memcpy(d, s, len_each);
			for (d = g->data; i < k; i++, d += len_each, s += len_each)
				memcpy(d, s, len_each);
		} else {
			memcpy(d, s, run * len_each);
			if (k > run)
				memcpy(g->data, s + run * len_each,
				       (k - run) * len_each);
		}
	} else if (len_each) {
		for (i = 0; i < k; i++)
			memcpy(lfp__ring_data(g, first + i), s + i * len_each, len_each);
	}
	lfp__idx_set_meta_run(r, g, first, (uint32_t)len_each, k);
}

/* An index ring's burst copy out, as lfp__idx_put_run (exact: every entry
 * is len_each bytes long). */
LFP_FORCE_INLINE void lfp__idx_take_run(const struct lfp__ring_geo *g,
                                        uint64_t first, unsigned char *d,
                                        size_t len_each, size_t k, int exact)
{
	size_t i, at = (size_t)(first & g->mask), run;

	if (exact && len_each == g->stride) {
		run = (size_t)g->mask + 1 - at;
		if (run > k)
			run = k;
		memcpy(d, g->data + at * len_each, run * len_each);
		if (k > run)
			memcpy(d + run * len_each, g->data, (k - run) * len_each);
		return;
	}
	for (i = 0; i < k; i++)
		(void)lfp__ring_take(g, first + i, g->meta[(first + i) & g->mask],
		                     len_each ? d + i * len_each : d, len_each);
}

/* The default and single-sided modes' burst copies: each slot copied and
 * published (in) or copied out (out).  A run whose entries all have
 * len_each bytes (exact) copies with that constant length, so an inline
 * caller's fixed size reaches memcpy; otherwise each slot's own length. */
LFP_FORCE_INLINE void lfp__slot_put_run(const struct lfp__ring_geo *g,
                                        uint64_t pos, const unsigned char *s,
                                        size_t len_each, size_t k)
{
	size_t i;

	for (i = 0; i < k; i++) {
		lfp__copy_racy_in(lfp__ring_data(g, pos + i),
		                  len_each ? s + i * len_each : s, len_each);
		lfp__slot_publish(g, pos + i, (uint32_t)len_each);
	}
}

LFP_FORCE_INLINE void lfp__slot_take_run(const struct lfp__ring_geo *g,
                                         uint64_t first, unsigned char *d,
                                         size_t len_each, size_t k, int exact)
{
	size_t i;

	if (LFP__LIKELY(exact)) {
		for (i = 0; i < k; i++)
			lfp__ring_take(g, first + i, (uint32_t)len_each,
			               len_each ? d + i * len_each : d, len_each);
	} else {
		for (i = 0; i < k; i++)
			lfp__ring_take(g, first + i, lfp__slot_meta(g, first + i),
			               len_each ? d + i * len_each : d, len_each);
	}
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
	size_t k;

	if (LFP__UNLIKELY(len_each > r->slot_size) || n == 0)
		return 0;
	g = lfp__ring_geo(r);
	lfp__side_enter(r, 1);
	k = lfp__ring_claim_prod(r, &g, n, &pos);
	if (g.mode == LFP__RING_INDEX) {
		if (k) {
			lfp__idx_put_run(r, &g, pos, s, len_each, k);
			lfp__idx_commit_prod(r, pos, k);
		}
	} else {
		lfp__slot_put_run(&g, pos, s, len_each, k);
	}
	lfp__side_leave(r, 1);
	return k;
}

LFP_FORCE_INLINE size_t lfp__ring_dequeue_burst(struct lfp_ring *r, void *dst,
                                                size_t len_each, size_t n)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	unsigned char *d = (unsigned char *)dst;
	struct lfp__claim c;
	size_t k;

	c.first = 0; /* read (for no entry) when nothing is claimed */
	lfp__side_enter(r, 0);
	k = lfp__ring_claim_cons(r, &g, n, len_each, &c, NULL, NULL);
	if (g.mode == LFP__RING_INDEX) {
		if (k) {
			lfp__idx_take_run(&g, c.first, d, len_each, k, c.exact);
			lfp__idx_commit_cons(r, c.first, k);
		}
	} else {
		lfp__slot_take_run(&g, c.first, d, len_each, k, c.exact || k == 0);
	}
	lfp__side_leave(r, 0);
	return k;
}

/* One attempt at a burst on the default mode, for inline callers: the
 * number moved, or 0 when it moved nothing (the caller runs the whole burst
 * out of line, which tells full or empty from a lost race). */
LFP_FORCE_INLINE size_t lfp__ring_try_enqueue_burst(struct lfp_ring *r,
                                                    const void *src,
                                                    size_t len_each, size_t n)
{
	const unsigned char *s = (const unsigned char *)src;
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos = 0;
	size_t k;

	if (LFP__UNLIKELY(len_each > r->slot_size || n == 0))
		return 0;
	if (g.mode == LFP__RING_INDEX) {
		lfp__side_enter(r, 1);
		k = lfp__idx_claim_prod(r, &g, n, &pos);
		if (k) {
			lfp__idx_put_run(r, &g, pos, s, len_each, k);
			lfp__idx_commit_prod(r, pos, k);
		}
		lfp__side_leave(r, 1);
		return k;
	}
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC))
		return 0;
	k = lfp__slot_try_prod(r, &g, n, &pos);
	lfp__slot_put_run(&g, pos, s, len_each, k);
	return k;
}

LFP_FORCE_INLINE size_t lfp__ring_try_dequeue_burst(struct lfp_ring *r,
                                                    void *dst, size_t len_each,
                                                    size_t n)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	unsigned char *d = (unsigned char *)dst;
	struct lfp__claim c;
	size_t k;

	if (LFP__UNLIKELY(n == 0))
		return 0;
	if (g.mode == LFP__RING_INDEX) {
		lfp__side_enter(r, 0);
		k = lfp__idx_claim_cons(r, &g, n, len_each, &c, NULL, NULL);
		if (k) {
			lfp__idx_take_run(&g, c.first, d, len_each, k, c.exact);
			lfp__idx_commit_cons(r, c.first, k);
		}
		lfp__side_leave(r, 0);
		return k;
	}
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC))
		return 0;
	c.first = 0; /* read (for no entry) when nothing is claimed */
	k = lfp__slot_try_cons(r, &g, n, len_each, &c, NULL, NULL);
	lfp__slot_take_run(&g, c.first, d, len_each, k, c.exact);
	return k;
}

LFP_OUTLINE size_t lfp__ring_enqueue_burst_out(struct lfp_ring *r,
                                               const void *src, size_t len_each,
                                               size_t n)
{
	return lfp__ring_enqueue_burst(r, src, len_each, n);
}

LFP_OUTLINE size_t lfp__ring_dequeue_burst_out(struct lfp_ring *r, void *dst,
                                               size_t len_each, size_t n)
{
	return lfp__ring_dequeue_burst(r, dst, len_each, n);
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_RING_OPS_H */
