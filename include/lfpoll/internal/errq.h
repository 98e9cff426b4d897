/*
 * lfpoll internal: the error queue shared by EQs and CQs.
 * Do not include directly; include <lfpoll/eq.h> or <lfpoll/cq.h>.
 *
 * A ring whose slots hold an error entry (the caller's struct, copied
 * whole) followed by up to data_max bytes of provider error data.  Reading
 * applies fi_eq(3)/fi_cq(3)'s err_data rules: with err_data_size > 0 on
 * input the data is copied into the caller's buffer (err_data_size becomes
 * the bytes copied); otherwise err_data points at queue-owned memory valid
 * until the next readerr.  Errors are rare, so readers serialise on a
 * mutex that guards that memory; writers stay lock-free.
 */
#ifndef LFPOLL_INTERNAL_ERRQ_H
#define LFPOLL_INTERNAL_ERRQ_H

#include "../ring.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lfp__errq {
	struct lfp_ring ring;
	/* Writes begun minus entries taken: at least the number queued, so
	 * 0 means none, and the event path's error check is one load of this
	 * read-mostly word while no error is queued (docs/design.md, "Errors
	 * before events"). */
	uint32_t pending;
	pthread_mutex_t lock;         /* readers only: guards scratch */
	unsigned char *scratch;       /* queue-owned err_data */
	size_t data_max;
	/* Written under lock, read atomically: a read returned the synthetic
	 * entry (the EQ's overrun); from then on every read returns it, so no
	 * error queued by a writer that raced the overrun comes out after it.
	 * Only void entries can be queued after it (lfp__errq_write), and
	 * nothing takes them: the event path's error check ignores the queue
	 * from then on (lfp__errq_ready_ring). */
	uint32_t final;
};

LFP_INLINE size_t lfp__errq_memsize(size_t capacity, size_t entry_size,
                                    size_t data_max)
{
	return lfp_ring_memsize(capacity, entry_size + data_max);
}

/* Slot memory comes zeroed and untouched until used (lfp__ring_alloc): an
 * error queue nobody writes costs no resident page. */
LFP_INLINE int lfp__errq_init(struct lfp__errq *q, size_t capacity,
                              size_t entry_size, size_t data_max)
{
	if (!lfp__errq_memsize(capacity, entry_size, data_max))
		return -EINVAL;
	if (lfp__ring_alloc(&q->ring, capacity, entry_size + data_max, 0))
		return -ENOMEM;
	q->scratch = (unsigned char *)malloc(data_max ? data_max : 1);
	if (!q->scratch || pthread_mutex_init(&q->lock, NULL)) {
		free(q->scratch);
		lfp__ring_free_mem(&q->ring);
		return -ENOMEM;
	}
	q->data_max = data_max;
	return 0;
}

LFP_INLINE void lfp__errq_fini(struct lfp__errq *q)
{
	pthread_mutex_destroy(&q->lock);
	lfp__ring_free_mem(&q->ring);
	free(q->scratch);
}

/*
 * Queue entry (entry_size bytes, its data pointer already cleared by the
 * caller) and data_len bytes of data.  0, -EMSGSIZE, or -EAGAIN when full.
 *
 * overrun (the EQ's flag; NULL for a CQ, which never overruns): an error
 * written while the EQ overran must either come out before the overrun
 * entry that every readerr returns from then on, or be refused.  After the
 * claim the writer re-reads the flag; set, it publishes a void entry
 * (metadata 0: no entry is that short), which readers skip, and returns
 * -LFP_EOVERRUN.  A reader gives the overrun entry only when no claimed
 * position is unpublished (lfp__errq_read).  docs/design.md, "Overrun is
 * final", has the argument; it is the EQ's void entries' (section 6.2).
 */
LFP_INLINE int lfp__errq_write(struct lfp__errq *q, const void *entry,
                               size_t entry_size, const void *data,
                               size_t data_len, const uint32_t *overrun)
{
	struct lfp__ring_geo g;
	uint64_t pos;
	int ret;

	if (data_len > q->data_max)
		return -EMSGSIZE;
	/* E1: counted before the publish, so the count never falls below
	 * the entries queued: an entry's E1 happens before its publish, hence
	 * before its taker's E2, and coherence keeps them in that order.  Any
	 * thread that learns of this write's return (through an event
	 * published after it, say) sees the count or a later one.
	 * Full-barrier RMW. */
	if (LFP__BROKEN("J")) { /* the count after the publish */
		ret = lfp__ring_enqueue2(&q->ring, entry, entry_size, data, data_len);
		LFP__SCHED("errq.write.half", q);
		if (!ret)
			(void)lfp__faa_u32(&q->pending, 1);
		return ret;
	}
	(void)lfp__faa_u32(&q->pending, 1);
	LFP__SCHED("errq.write.half", q);
	g = lfp__ring_geo(&q->ring);
	if (!lfp__ring_claim_prod(&q->ring, &g, 1, &pos)) {
		(void)lfp__faa_u32(&q->pending, (uint32_t)-1); /* not queued */
		return -EAGAIN;
	}
	LFP__SCHED("errq.write.claimed", q);
	if (overrun && !LFP__BROKEN("O")) {
		/* O1: the claim was a full-barrier RMW; the flag's load after
		 * it pairs with the flag's RMW and with the reader's loads of
		 * the flag and of head (O2). */
		lfp__mb_after_rmw();
		if (lfp__ld_acq_u32(overrun)) {
			lfp__ring_publish(&q->ring, &g, pos, 0); /* void; its taker uncounts it */
			return -LFP_EOVERRUN;
		}
	}
	lfp__ring_put2(&q->ring, &g, pos, entry, entry_size, data, data_len,
	               (uint32_t)(entry_size + data_len));
	return 0;
}

/*
 * Whether an error is queued, once pending said one may be.  Not once the
 * queue is final: a reader found it empty with no position claimed after
 * the EQ overran, so every write that claims later finds the flag and
 * queues a void entry (O1/O2, docs/design.md 6.2), which no read takes
 * any more.  Counting those held back the events still queued for good.
 * Relaxed: a flag that, once set, never clears and leaves nothing but void
 * entries behind; read late, it only sends the caller to readerr first.
 */
LFP_SLOW int lfp__errq_ready_ring(const struct lfp__errq *q)
{
	struct lfp__ring_geo g;
	uint64_t tail, head, pos;

	if (lfp__ld_rlx_u32(&q->final) && !LFP__BROKEN("O3"))
		return 0;
	if (LFP__BROKEN("J2"))
		return lfp__ring_ready(&q->ring);
	/*
	 * Any error published from tail to head, not only at the head: a
	 * write that claimed the head may still be under way, an error
	 * published behind it is queued all the same, and an event its
	 * writer published after it must not come out first (docs/design.md
	 * 6.1, "A write stalled at the head"; J2).  A void entry (metadata 0:
	 * an error write refused after the overrun) is no error, at the head
	 * or behind it: the next readerr drops it, and reads go on to the
	 * events queued before the overrun (J3).  Relaxed loads suffice: a
	 * reader that took such an event with acquire sees that writer's
	 * claim of head and its publish of the error, or later values of
	 * both (coherence).  At most a capacity of positions, and only while
	 * errors are counted.
	 */
	g = lfp__ring_geo(&q->ring);
	tail = lfp__ld_rlx_u64(&q->ring.tail);
	head = lfp__ld_rlx_u64(&q->ring.head);
	if (head - tail > (uint64_t)g.mask + 1)
		head = tail + g.mask + 1; /* tail went stale meanwhile */
	for (pos = tail; pos != head; pos++) {
		uint64_t word = lfp__ld_rlx_u64(lfp__slot_wordp(&g, pos));

		/* (J3 and O3: a void entry taken for an error) */
		if (lfp__slot_is_full(&g, word, pos) &&
		    ((uint32_t)word != 0 || LFP__BROKEN("J3") || LFP__BROKEN("O3")))
			return 1;
	}
	return 0;
}

LFP_INLINE int lfp__errq_ready(const struct lfp__errq *q)
{
	return LFP__UNLIKELY(lfp__ld_rlx_u32(&q->pending) != 0) &&
	       lfp__errq_ready_ring(q);
}

/*
 * The gate an EQ or CQ passes to its event ring's claim: no event is taken
 * while an error is queued.  It runs after the event's slot word was read
 * with acquire, so an error its producer queued before publishing the event
 * is seen (docs/design.md, "Errors before events").
 */
LFP_INLINE int lfp__errq_gate(const void *q)
{
	return lfp__errq_ready((const struct lfp__errq *)q);
}

/*
 * Read (or with LFP_PEEK copy) the head entry into buf, entry_size bytes,
 * whose err_data / err_data_size fields are at *data / *data_size.  With
 * fill != NULL and an empty queue, fill(buf) supplies a synthetic entry
 * (the EQ's overrun) instead of -EAGAIN.  Returns entry_size or -EAGAIN.
 *
 * The data rules are fi_eq(3)'s and fi_cq(3)'s: a caller buffer
 * (*data_size > 0 on input) receives as much of the entry's data as fits,
 * *data_size is set to the bytes copied, and the entry is consumed even
 * when its data was cut short; *data_size 0 on input points *data at the
 * queue's own copy of all of it.
 */
LFP_INLINE ssize_t lfp__errq_read(struct lfp__errq *q, void *buf,
                                  size_t entry_size, void **data,
                                  size_t *data_size, uint64_t flags,
                                  int (*fill)(void *buf, void *arg), void *arg)
{
	void *user = *data_size ? *data : NULL;
	struct lfp__ring_geo g = lfp__ring_geo(&q->ring);
	size_t user_size = *data_size, dlen = 0, n;
	struct lfp__claim c;
	uint32_t meta;
	uint64_t pos;
	ssize_t r;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		r = -EAGAIN;
		if (lfp__ld_rlx_u32(&q->final)) {
			/* only the synthetic entry from now on */
		} else if (flags & LFP_PEEK) {
			/* Copy the head entry without taking it. */
			r = lfp__ring_peek_split(&q->ring, buf, entry_size, q->scratch,
			                         q->data_max, &pos, &meta);
			if (r == 0) {
				/* A void entry (a writer that found the EQ
				 * overrun): take it, as a read would, and
				 * look again.  Readers hold the lock. */
				if (lfp_ring_consume(&q->ring, pos) == 0)
					(void)lfp__faa_u32(&q->pending, (uint32_t)-1);
				continue;
			}
		} else if (lfp__ring_claim_cons(&q->ring, &g, 1, (size_t)-1, &c,
		                                NULL, NULL)) {
			r = (ssize_t)(c.meta & g.len_mask);
			if (r)
				lfp__ring_take2(&g, c.first, (size_t)r, buf, entry_size,
				                q->scratch);
			else
				lfp__ring_free(&g, c.first); /* void */
			lfp__ring_commit_cons(&q->ring, &g, c.first, 1);
			/* E2: uncounted after the claim (see E1).
			 * Full-barrier RMW. */
			(void)lfp__faa_u32(&q->pending, (uint32_t)-1);
			if (!r)
				continue;
		}
		break;
	}
	if (r >= 0)
		dlen = (size_t)r - entry_size;
	/*
	 * Nothing queued (peek or not): the caller's synthetic entry, once no
	 * claimed position is still to be published.  O2: the full barrier
	 * orders the flag's load (in fill) before the loads of head and tail;
	 * pairs with O1.  An error write in flight either sees the flag and
	 * voids its entry, or is seen here: then -EAGAIN until it publishes.
	 */
	if (r == -EAGAIN && fill && fill(buf, arg) &&
	    (lfp__ld_rlx_u32(&q->final) || LFP__BROKEN("O") ||
	     (lfp__mb(), lfp_ring_count(&q->ring) == 0))) {
		r = 0;
		if (!(flags & LFP_PEEK) || !LFP__BROKEN("O"))
			lfp__st_rlx_u32(&q->final, 1);
	}
	if (r >= 0) {
		if (user) {
			n = dlen < user_size ? dlen : user_size;
			if (n)
				memcpy(user, q->scratch, n);
			*data = user;
			*data_size = n;
		} else {
			*data = dlen ? q->scratch : NULL;
			*data_size = dlen;
		}
		r = (ssize_t)entry_size;
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

/*
 * The strerror of EQs and CQs: the binding's name for a provider error when
 * one is set (name) and it has one (not NULL), else "provider error N"
 * (prov_errno is the provider's number, not an errno).  Copied into buf
 * when buf and len are given (always terminated, possibly cut short);
 * never NULL.
 */
LFP_INLINE const char *lfp__prov_strerror(const char *(*name)(int, const void *),
                                          int prov_errno, const void *err_data,
                                          char *buf, size_t len)
{
	char num[48];
	const char *s;
	size_t n;

	s = name ? name(prov_errno, err_data) : NULL;
	if (!s && buf && len) {
		snprintf(num, sizeof(num), "provider error %d", prov_errno);
		s = num;
	} else if (!s) {
		s = "provider error (no binding to name it)";
	}
	if (!buf || !len)
		return s;
	n = strlen(s);
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_ERRQ_H */
