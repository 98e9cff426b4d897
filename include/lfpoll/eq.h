/*
 * lfpoll event queue: fi_eq(3) semantics on two lock-free rings, one for
 * events and one for errors, with the trywait protocol of signal.h.
 *
 * An event slot is the ring's: its word carries the event code beside the
 * payload length (code << 16 | length), so the slot holds only the payload,
 * up to entry_size bytes.  An error slot holds a struct lfp_eq_err_entry
 * followed by up to entry_size bytes of provider error data.  The overrun
 * state is a flag, not an entry, so it can always be reported even when the
 * error queue is full.
 */
#ifndef LFPOLL_EQ_H
#define LFPOLL_EQ_H

#include "common.h"
#include "ring.h"
#include "internal/object.h"
#include "internal/errq.h"

#include <sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Event codes (fi_eq(3) order); user codes from LFP_EVENT_USER. */
enum {
	LFP_NOTIFY,
	LFP_CONNREQ,
	LFP_CONNECTED,
	LFP_SHUTDOWN,
	LFP_MR_COMPLETE,
	LFP_AV_COMPLETE,
	LFP_JOIN_COMPLETE,
	LFP_EVENT_USER = 256
};

#define LFP_EQ_DEFAULT_SIZE       1024
#define LFP_EQ_DEFAULT_ENTRY_SIZE 64
/* The error queue holds this many entries at most (fewer for small EQs). */
#define LFP_EQ_ERR_CAPACITY       1024
/* Limits of an event: its code and its payload share the slot word. */
#define LFP_EQ_MAX_EVENT          0xfffe
#define LFP_EQ_MAX_ENTRY_SIZE     0xffff

struct lfp_eq_attr {
	size_t size;                 /* capacity, a minimum; 0 = default */
	uint64_t flags;              /* LFP_WRITE, LFP_AFFINITY, LFP_EQ_BACKPRESSURE */
	enum lfp_wait_obj wait_obj;
	int signaling_vector;        /* accepted, unused */
	struct lfp_wait *wait_set;   /* with LFP_WAIT_SET */
	size_t entry_size;           /* max payload bytes per event; 0 = 64 */
};

struct lfp_eq_entry {
	struct lfp_fid *fid;
	void *context;
	uint64_t data;
};

struct lfp_eq_err_entry {
	struct lfp_fid *fid;
	void *context;
	uint64_t data;
	int err;
	int prov_errno;
	void *err_data;
	size_t err_data_size;
};

struct lfp_eq {
	struct lfp_fid fid;
	struct lfp_ring events;
	struct lfp__errq errq;
	/* Read-mostly after open. */
	struct lfp__waitable w;
	uint64_t flags;
	size_t entry_size;
	/* Set by bindings: names provider errors in lfp_eq_strerror. */
	const char *(*prov_strerror)(int prov_errno, const void *err_data);
	uint32_t overrun;            /* 0, then 1 forever */
	uint32_t bind_refs;          /* bindings using this EQ: close is -EBUSY */
	struct lfp__signal own;
};

/* An event's slot metadata: code << 16 | payload length. */
#define LFP__EQ_LEN_MASK 0xffffu
#define LFP__EQ_META(event, len) ((uint32_t)(event) << 16 | (uint32_t)(len))
/* The metadata of a void entry, an event code no event has: a position whose
 * writer found the EQ overrun after claiming it.  Readers skip it. */
#define LFP__EQ_VOID LFP__EQ_META(LFP_EQ_MAX_EVENT + 1, 0)
#define LFP__EQ_OPEN_FLAGS (LFP_WRITE | LFP_AFFINITY | LFP_EQ_BACKPRESSURE | \
                            LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER)

/*
 * Whether an overrun EQ is drained: no position a writer claimed is still
 * unpublished.  Called after the overrun flag was seen set; the full barrier
 * orders that load before the loads of head and tail, the reader's half of
 * the overrun rule (docs/design.md, "Overrun is final").
 */
LFP_INLINE int lfp__eq_drained(struct lfp_eq *eq)
{
	lfp__mb();
	return lfp_ring_count(&eq->events) == 0;
}

LFP_INLINE int lfp__eq_ready(void *arg)
{
	struct lfp_eq *eq = (struct lfp_eq *)arg;

	return lfp__errq_ready(&eq->errq) || lfp__ring_ready(&eq->events) ||
	       (lfp__ld_acq_u32(&eq->overrun) && lfp__eq_drained(eq));
}

/* Close is -EBUSY while a binding holds the EQ.  Acquire: pairs with the
 * RMWs of lfp_binding_eq_attach/detach. */
LFP_INLINE int lfp__eq_busy(void *obj)
{
	return lfp__ld_acq_u32(&((struct lfp_eq *)obj)->bind_refs) != 0;
}

LFP_INLINE void lfp__eq_free(struct lfp_eq *eq)
{
	lfp__ring_free_mem(&eq->events);
	free(eq);
}

LFP_INLINE void lfp__eq_fini(void *obj)
{
	struct lfp_eq *eq = (struct lfp_eq *)obj;

	lfp__errq_fini(&eq->errq);
	lfp__eq_free(eq);
}

static const struct lfp__class lfp__eq_class = {
	{ lfp__obj_close, lfp__obj_control, lfp__obj_trywait, lfp__obj_ready, NULL,
	  NULL /* an EQ cannot join a poll set */ },
	LFP_CLASS_EQ, offsetof(struct lfp_eq, w), 0, lfp__eq_ready, lfp__eq_busy,
	lfp__eq_fini
};

/*
 * Open an event queue.  attr NULL: defaults (wait object NONE, 1024 events
 * of up to 64 bytes).  -EINVAL for a bad wait object, unknown flags, SET
 * without a wait set (or a wait set without SET), or sizes out of range.
 */
LFP_INLINE int lfp_eq_open(const struct lfp_eq_attr *attr, struct lfp_eq **eqp,
                           void *context)
{
	struct lfp_eq_attr a;
	struct lfp_eq *eq;
	size_t cap, ecap, esz, rmem;
	int ret;

	if (!eqp)
		return -EINVAL;
	*eqp = NULL; /* written on every path (see lfp__neg_errno) */
	memset(&a, 0, sizeof(a));
	if (attr)
		a = *attr;
	if ((a.flags & ~LFP__EQ_OPEN_FLAGS) || lfp__waitable_check(a.wait_obj, a.wait_set))
		return -EINVAL;
	if (a.size > LFP_RING_MAX_CAPACITY || a.entry_size > LFP_EQ_MAX_ENTRY_SIZE)
		return -EINVAL;
	cap = lfp__pow2_at_least(a.size ? a.size : LFP_EQ_DEFAULT_SIZE);
	ecap = cap < LFP_EQ_ERR_CAPACITY ? cap : LFP_EQ_ERR_CAPACITY;
	esz = a.entry_size ? a.entry_size : LFP_EQ_DEFAULT_ENTRY_SIZE;
	rmem = lfp_ring_memsize_flags(cap, esz, a.flags & LFP__RING_FLAGS);
	if (!rmem || !lfp__errq_memsize(ecap, sizeof(struct lfp_eq_err_entry), esz))
		return -EINVAL;

	eq = (struct lfp_eq *)lfp__obj_new(&lfp__eq_class, sizeof(*eq), context);
	if (!eq)
		return -ENOMEM;
	if (lfp__ring_alloc(&eq->events, cap, esz, a.flags & LFP__RING_FLAGS)) {
		free(eq);
		return -ENOMEM;
	}
	eq->events.len_mask = LFP__EQ_LEN_MASK; /* the code sits above it */
	ret = lfp__errq_init(&eq->errq, ecap, sizeof(struct lfp_eq_err_entry), esz);
	if (ret) {
		lfp__eq_free(eq);
		return ret;
	}
	eq->flags = a.flags;
	eq->entry_size = esz;
	ret = lfp__obj_open_wait(&eq->fid, &eq->own, a.wait_obj, a.wait_set);
	if (!ret)
		*eqp = eq;
	return ret;
}

/*
 * Close: -EBUSY while a binding holds the EQ.  Queued events are discarded;
 * a member of a wait set leaves it.
 */
LFP_INLINE int lfp_eq_close(struct lfp_eq *eq)
{
	return eq ? lfp__obj_close(&eq->fid) : -EINVAL;
}

/*
 * A write whose claim failed on ring r (the events or the errors): 1 when
 * the queue is not full but the slot at head is still held by a reader of
 * the lap before (lfp__ring_slot_held), after waiting a moment for it:
 * claim again.  0 when the queue is full, or the EQ overran meanwhile: the
 * caller goes on to lfp__eq_full, which answers either.  The EQ holds its
 * size in events whatever its readers do: a reader stalled in its copy
 * must not turn a write into the fatal overrun (producers otherwise never
 * wait for a consumer; this one waits for the copy of one entry).
 *
 * With LFP_EQ_BACKPRESSURE the other answer, -EAGAIN, loses nothing, so
 * the write gives it at once, as for a full EQ (docs/design.md 6.2): no
 * wait for a reader, and no read-modify-writes of the readers' index
 * while they work (a writer that kept failing here took the tail's line
 * from the reader on every try: eq/1w1r ran at a fifth of the ring).
 */
LFP_SLOW int lfp__eq_slot_held(struct lfp_eq *eq, struct lfp_ring *r,
                               unsigned *spins)
{
	if (((eq->flags & LFP_EQ_BACKPRESSURE) && !LFP__BROKEN("G4")) ||
	    !lfp__ring_slot_held(r) || lfp__ld_acq_u32(&eq->overrun))
		return 0;
	if (++*spins < 64)
		lfp__cpu_relax();
	else
		sched_yield(); /* the reader may be off its CPU */
	return 1;
}

/* The fatal overrun: flag it and wake waiters so they see -LFP_EAVAIL. */
LFP_SLOW ssize_t lfp__eq_full(struct lfp_eq *eq)
{
	if (eq->flags & LFP_EQ_BACKPRESSURE)
		return -EAGAIN;
	/* Full-barrier RMW: a writer that claimed after it sees it (the
	 * writer's re-check in lfp_eq_write), and readers see it before they
	 * decide the EQ is drained (lfp__eq_drained). */
	(void)lfp__xchg_u32(&eq->overrun, 1);
	lfp__waitable_notify(&eq->w);
	return -LFP_EOVERRUN;
}

/* A writer that found the EQ overrun after its claim: a void entry, which
 * readers skip, in place of its event (lfp_eq_write). */
LFP_SLOW ssize_t lfp__eq_write_void(struct lfp_eq *eq, uint64_t pos)
{
	struct lfp__ring_geo g = lfp__ring_geo(&eq->events);

	lfp__ring_publish(&eq->events, &g, pos, LFP__EQ_VOID);
	lfp__ring_commit_prod(&eq->events, &g, pos, 1);
	lfp__side_leave(&eq->events, 1);
	/* A reader that found our place unpublished may have gone to sleep
	 * after the overrun's wake-up: now it would find the EQ drained. */
	if (!LFP__BROKEN("G5"))
		lfp__waitable_notify(&eq->w);
	return -LFP_EOVERRUN;
}

/* Whether lfp_eq_write's (and lfp_eq_write_spsc's) arguments are refused:
 * unlikely, as the branch hint says. */
LFP_FORCE_INLINE int lfp__eq_write_bad(const struct lfp_eq *eq, uint32_t event,
                                       const void *buf, size_t len,
                                       uint64_t flags)
{
	return LFP__UNLIKELY(!eq || (!buf && len) || flags ||
	                     event > LFP_EQ_MAX_EVENT || len > eq->entry_size);
}

/* lfp_eq_write's answer to bad arguments. */
LFP_SLOW ssize_t lfp__eq_write_refused(struct lfp_eq *eq, uint32_t event,
                                       const void *buf, size_t len,
                                       uint64_t flags)
{
	if (!eq || (!buf && len) || flags || event > LFP_EQ_MAX_EVENT)
		return -EINVAL;
	(void)len;
	return -EMSGSIZE; /* len > entry_size */
}

/* The claim, copy and publish of lfp_eq_write, on the ring's geometry g. */
LFP_FORCE_INLINE ssize_t lfp__eq_write_on(struct lfp_eq *eq,
                                          const struct lfp__ring_geo *g,
                                          uint32_t event, const void *buf,
                                          size_t len)
{
	unsigned spins = 0;
	uint64_t pos;

	/* Acquire: pairs with the RMW in lfp__eq_full (a flag only). */
	if (lfp__ld_acq_u32(&eq->overrun))
		return -LFP_EOVERRUN;
	lfp__side_enter(&eq->events, 1);
	while (LFP__UNLIKELY(!lfp__ring_claim_prod(&eq->events, g, 1, &pos))) {
		if (!LFP__BROKEN("G2") && lfp__eq_slot_held(eq, &eq->events, &spins))
			continue;
		lfp__side_leave(&eq->events, 1);
		return lfp__eq_full(eq);
	}
	LFP__SCHED("eq.write.claimed", eq);
	/*
	 * Overrun is final: a reader that found the overrun EQ drained (no
	 * claimed position unpublished) must never see an event after it.  A
	 * writer that claimed after that reader's look sees the flag here
	 * (our claim CAS and this load against the flag's RMW and the
	 * reader's loads: docs/design.md) and publishes a void entry, which
	 * readers skip, instead of its event.  (A single producer is also the
	 * only thread that can set the flag: the load is then always 0.)
	 */
	lfp__mb_after_rmw();
	if (LFP__UNLIKELY(lfp__ld_acq_u32(&eq->overrun)) && !LFP__BROKEN("G"))
		return lfp__eq_write_void(eq, pos);
	lfp__ring_put(&eq->events, g, pos, buf, len, LFP__EQ_META(event, len)); /* P1 */
	lfp__ring_commit_prod(&eq->events, g, pos, 1);
	lfp__side_leave(&eq->events, 1);
	lfp__waitable_notify(&eq->w);
	return (ssize_t)len;
}

/* lfp_eq_write whole, out of line: every mode, every retry.  The inline
 * call makes one attempt on the default mode and hands anything else
 * here, so that its call sites carry one mode's fast path. */
LFP_OUTLINE ssize_t lfp__eq_write_slow(struct lfp_eq *eq, uint32_t event,
                                       const void *buf, size_t len)
{
	struct lfp__ring_geo g = lfp__ring_geo(&eq->events);

	return lfp__eq_write_on(eq, &g, event, buf, len);
}

/*
 * Queue one event of len payload bytes (0 is legal).  Returns len,
 * -EMSGSIZE when len > entry_size (nothing written), -LFP_EOVERRUN on a full
 * (now overrun) or overrun EQ, -EAGAIN when full with LFP_EQ_BACKPRESSURE.
 * flags must be 0; event at most LFP_EQ_MAX_EVENT.
 */
LFP_FORCE_INLINE ssize_t lfp_eq_write(struct lfp_eq *eq, uint32_t event,
                                      const void *buf, size_t len,
                                      uint64_t flags)
{
	struct lfp__ring_geo g;
	uint64_t pos;

	/* An overrun EQ is found by the re-check after the claim (or by the
	 * claim itself, full): one load of the flag on the fast path. */
	if (lfp__eq_write_bad(eq, event, buf, len, flags))
		return lfp__eq_write_refused(eq, event, buf, len, flags);
	g = lfp__ring_geo(&eq->events);
	if (!LFP__CONSTANT(len) || LFP__UNLIKELY(g.mode != LFP__RING_MPMC ||
	                                         !lfp__slot_try_prod(&eq->events, &g,
	                                                             1, &pos)))
		return lfp__eq_write_slow(eq, event, buf, len);
	LFP__SCHED("eq.write.claimed", eq);
	lfp__mb_after_rmw(); /* the overrun re-check, as in lfp__eq_write_on */
	if (LFP__UNLIKELY(lfp__ld_acq_u32(&eq->overrun)) && !LFP__BROKEN("G"))
		return lfp__eq_write_void(eq, pos);
	lfp__copy_racy_in(lfp__ring_data(&g, pos), buf, len);
	lfp__slot_publish(&g, pos, LFP__EQ_META(event, len)); /* P1 */
	lfp__waitable_notify(&eq->w);
	return (ssize_t)len;
}

/*
 * Queue an error entry (producer side).  err->err must be positive (an errno);
 * err->err_data_size bytes at err->err_data are copied (at most entry_size:
 * -EMSGSIZE beyond).  Returns sizeof(*err) or as lfp_eq_write.
 */
LFP_INLINE ssize_t lfp_eq_write_err(struct lfp_eq *eq,
                                    const struct lfp_eq_err_entry *err)
{
	struct lfp_eq_err_entry e;
	unsigned spins = 0;
	int ret;

	if (!eq || !err || err->err <= 0 || (!err->err_data && err->err_data_size))
		return -EINVAL;
	if (err->err_data_size > eq->entry_size)
		return -EMSGSIZE;
	if (lfp__ld_acq_u32(&eq->overrun)) /* as in lfp_eq_write */
		return -LFP_EOVERRUN;
	e = *err;
	e.err_data = NULL;
	/* A single producer writes errors too: the one thread that may set
	 * the overrun flag is then the one that writes events. */
	lfp__side_enter(&eq->events, 1);
	do
		ret = lfp__errq_write(&eq->errq, &e, sizeof(e), err->err_data,
		                      err->err_data_size, &eq->overrun); /* P1 */
	while (ret == -EAGAIN && !LFP__BROKEN("G2") &&
	       lfp__eq_slot_held(eq, &eq->errq.ring, &spins));
	lfp__side_leave(&eq->events, 1);
	if (ret == -EAGAIN)
		return lfp__eq_full(eq);
	/* Queued, or (-LFP_EOVERRUN) a void entry in its place: either way
	 * readers have something new to look at. */
	lfp__waitable_notify(&eq->w);
	return ret ? ret : (ssize_t)sizeof(*err);
}

/*
 * What a read that took no event returns, given why its claim took none:
 * -LFP_EAVAIL while an error is queued, -LFP_ETOOSMALL, -LFP_EAVAIL after
 * an overrun once no claimed position is still to be published (a write in
 * flight from before the overrun may still publish its event), else
 * -EAGAIN.
 */
LFP_SLOW ssize_t lfp__eq_read_none(struct lfp_eq *eq, int why)
{
	if (why == LFP__RING_GATED || lfp__errq_ready(&eq->errq))
		return -LFP_EAVAIL; /* an error is queued: it goes first */
	if (why == LFP__RING_TOO_BIG)
		return -LFP_ETOOSMALL;
	/* Acquire: pairs with lfp__eq_full's RMW. */
	if (lfp__ld_acq_u32(&eq->overrun) &&
	    (LFP__BROKEN("G") || lfp__eq_drained(eq)))
		return -LFP_EAVAIL;
	return -EAGAIN;
}

/*
 * What a read returns when its attempt found no event published: inline,
 * -EAGAIN when no error is queued and the EQ has not overrun, the answer to
 * every poll of an idle EQ; otherwise lfp__eq_read_none decides.  The
 * checks follow the attempt's acquire of the slot word, as the gate's do.
 */
LFP_FORCE_INLINE ssize_t lfp__eq_read_empty(struct lfp_eq *eq)
{
	/* The error count alone is a filter: a count above 0 goes to
	 * lfp__eq_read_none, whose lfp__errq_ready makes the full check.
	 * (Calling lfp__errq_ready here costs every read 3 instructions, by
	 * callgrind, for the same answers.)  Acquire on overrun: pairs with
	 * lfp__eq_full's RMW, as in lfp__eq_read_none. */
	if (LFP__LIKELY(!lfp__ld_rlx_u32(&eq->errq.pending) &&
	                !lfp__ld_acq_u32(&eq->overrun)))
		return -EAGAIN;
	return lfp__failed(lfp__eq_read_none(eq, LFP__RING_EMPTY));
}

/* Whether the arguments of a read (lfp_eq_read, lfp_eq_read_spsc,
 * lfp_eq_sread) are refused, -EINVAL: unlikely, as the hint says. */
LFP_FORCE_INLINE int lfp__eq_read_bad(const struct lfp_eq *eq,
                                      const uint32_t *event, const void *buf,
                                      size_t len, uint64_t flags)
{
	return LFP__UNLIKELY(!eq || !event || (!buf && len) || (flags & ~LFP_PEEK));
}

/*
 * lfp_eq_read with LFP_PEEK: copy the head event, leave it queued.  The
 * error check comes after the peek's acquire of the entry, as the gate
 * does for a read.
 */
LFP_INLINE ssize_t lfp__eq_peek(struct lfp_eq *eq, uint32_t *event, void *buf,
                                size_t len)
{
	uint32_t meta;
	uint64_t pos;
	ssize_t r;

	for (;;) {
		r = lfp__ring_peek_split(&eq->events, NULL, 0, buf, len, &pos, &meta);
		if (r >= 0 && meta == LFP__EQ_VOID) {
			/* Skip a void entry; -ESTALE: another reader took
			 * it.  Either way, look again. */
			(void)lfp_ring_consume(&eq->events, pos);
			continue;
		}
		if (r >= 0 && lfp__errq_ready(&eq->errq))
			return -LFP_EAVAIL;
		if (r >= 0) {
			*event = meta >> 16;
			if (LFP__BROKEN("p")) /* test builds: the peek consumes */
				(void)lfp_ring_consume(&eq->events, pos);
			return r;
		}
		return lfp__failed(lfp__eq_read_none(eq, r == -LFP_ETOOSMALL ?
		                                         LFP__RING_TOO_BIG :
		                                         LFP__RING_EMPTY));
	}
}

/* The claim and copy-out of lfp_eq_read, on the ring's geometry g. */
LFP_FORCE_INLINE ssize_t lfp__eq_read_on(struct lfp_eq *eq,
                                         const struct lfp__ring_geo *g,
                                         uint32_t *event, void *buf, size_t len)
{
	struct lfp__claim c;
	ssize_t r;

	lfp__side_enter(&eq->events, 0);
	for (;;) {
		if (LFP__UNLIKELY(!lfp__ring_claim_cons(&eq->events, g, 1,
		                                        len < eq->entry_size ? len
		                                                             : eq->entry_size,
		                                        &c,
		                                        LFP__BROKEN("F") ? NULL
		                                                         : lfp__errq_gate,
		                                        &eq->errq))) {
			lfp__side_leave(&eq->events, 0);
			return lfp__failed(lfp__eq_read_none(eq, c.why));
		}
		if (LFP__LIKELY(c.meta != LFP__EQ_VOID))
			break;
		lfp__ring_free(g, c.first);
		lfp__ring_commit_cons(&eq->events, g, c.first, 1);
	}
	*event = c.meta >> 16;
	/* A payload of exactly len bytes, the common case, is copied with
	 * len's size: a constant at most calls. */
	r = (ssize_t)lfp__ring_take(g, c.first, c.meta, buf, len);
	lfp__ring_commit_cons(&eq->events, g, c.first, 1);
	lfp__side_leave(&eq->events, 0);
	return r;
}

/* lfp_eq_read whole, out of line, as lfp__eq_write_slow. */
LFP_OUTLINE ssize_t lfp__eq_read_slow(struct lfp_eq *eq, uint32_t *event,
                                      void *buf, size_t len)
{
	struct lfp__ring_geo g = lfp__ring_geo(&eq->events);

	return lfp__eq_read_on(eq, &g, event, buf, len);
}

/* The inline read's attempt claimed a void entry: free it and read on. */
LFP_SLOW ssize_t lfp__eq_read_void(struct lfp_eq *eq, uint64_t pos,
                                   uint32_t *event, void *buf, size_t len)
{
	struct lfp__ring_geo g = lfp__ring_geo(&eq->events);

	lfp__slot_free(&g, pos);
	return lfp__eq_read_slow(eq, event, buf, len);
}

/*
 * Read one event: its payload into buf (len bytes of room), its code into
 * *event.  Returns the payload bytes copied; -EAGAIN when empty;
 * -LFP_EAVAIL while an error is queued or after an overrun once the events
 * are drained; -LFP_ETOOSMALL when len is short (the event stays queued).
 * LFP_PEEK copies the head event without consuming it.
 *
 * Always inline: the caller's len is then a constant at most calls, and
 * so is the copy-out's size; everything but one attempt on the default
 * mode is out of line.
 */
LFP_FORCE_INLINE ssize_t lfp_eq_read(struct lfp_eq *eq, uint32_t *event,
                                     void *buf, size_t len, uint64_t flags)
{
	struct lfp__ring_geo g;
	struct lfp__claim c;

	if (lfp__eq_read_bad(eq, event, buf, len, flags))
		return -EINVAL;
	if (flags & LFP_PEEK)
		return lfp__eq_peek(eq, event, buf, len);
	if (LFP__BROKEN("F") && lfp__errq_ready(&eq->errq))
		return -LFP_EAVAIL; /* checked before the take: the old order */
	g = lfp__ring_geo(&eq->events);
	if (!LFP__CONSTANT(len) || LFP__UNLIKELY(g.mode != LFP__RING_MPMC))
		return lfp__eq_read_slow(eq, event, buf, len);
	/* The claim's cap is len itself: no event is longer than entry_size,
	 * so a longer len changes nothing but a compare against it. */
	if (LFP__UNLIKELY(!lfp__slot_try_cons(&eq->events, &g, 1, len, &c,
	                                      LFP__BROKEN("F") ? NULL : lfp__errq_gate,
	                                      &eq->errq)))
		return c.why == LFP__RING_EMPTY ? lfp__eq_read_empty(eq)
		                                : lfp__eq_read_slow(eq, event, buf, len);
	if (LFP__UNLIKELY(c.meta == LFP__EQ_VOID))
		return lfp__eq_read_void(eq, c.first, event, buf, len);
	*event = c.meta >> 16;
	/* A payload of exactly len bytes, the common case, is copied with
	 * len's size: a constant at most calls. */
	return (ssize_t)lfp__ring_take(&g, c.first, c.meta, buf, len);
}

/*
 * lfp_eq_write for an EQ opened with LFP_SINGLE_PRODUCER and
 * LFP_SINGLE_CONSUMER: the same arguments and results, with that mode's
 * write inline (wait-free: a claim of the producer's own index, the copy,
 * one release store) where lfp_eq_write has the default mode's.  On an EQ
 * of another mode it does what lfp_eq_write does, out of line.  The mode
 * is chosen by the call, at compile time, so that neither call's sites
 * carry the other mode's path.
 */
LFP_FORCE_INLINE ssize_t lfp_eq_write_spsc(struct lfp_eq *eq, uint32_t event,
                                           const void *buf, size_t len,
                                           uint64_t flags)
{
	struct lfp__ring_geo g;

	if (lfp__eq_write_bad(eq, event, buf, len, flags))
		return lfp__eq_write_refused(eq, event, buf, len, flags);
	g = lfp__ring_geo(&eq->events);
	/*
	 * Relaxed on overrun: with one producer, the thread that sets the
	 * flag (lfp__eq_full, from a write or an error write) is this one,
	 * so there is nothing to order, and no position can be claimed
	 * after it was set: no void entry, no re-check after the claim.
	 */
	if (!LFP__CONSTANT(len) || LFP__UNLIKELY(g.mode != LFP__RING_INDEX ||
	                                         lfp__ld_rlx_u32(&eq->overrun)))
		return lfp__eq_write_slow(eq, event, buf, len);
	/* Published by the index commit (I2): P1. */
	if (LFP__UNLIKELY(!lfp__idx_try_put(&eq->events, &g, buf, len,
	                                    LFP__EQ_META(event, len))))
		return lfp__eq_write_slow(eq, event, buf, len); /* full */
	lfp__waitable_notify(&eq->w);
	return (ssize_t)len;
}

/*
 * lfp_eq_read for an EQ opened with LFP_SINGLE_PRODUCER and
 * LFP_SINGLE_CONSUMER, as lfp_eq_write_spsc: the same arguments and
 * results (LFP_PEEK included), that mode's read inline.
 */
LFP_FORCE_INLINE ssize_t lfp_eq_read_spsc(struct lfp_eq *eq, uint32_t *event,
                                          void *buf, size_t len, uint64_t flags)
{
	struct lfp__ring_geo g;
	struct lfp__claim c;
	ssize_t r;

	if (lfp__eq_read_bad(eq, event, buf, len, flags))
		return -EINVAL;
	if (flags & LFP_PEEK) /* as lfp_eq_read: one peek for every mode */
		return lfp__eq_peek(eq, event, buf, len);
	if (LFP__BROKEN("F")) /* test builds: the old order, as lfp_eq_read */
		return lfp_eq_read(eq, event, buf, len, flags);
	g = lfp__ring_geo(&eq->events);
	if (!LFP__CONSTANT(len) || LFP__UNLIKELY(g.mode != LFP__RING_INDEX))
		return lfp__eq_read_slow(eq, event, buf, len);
	/* The gate runs after the claim's acquire of head (I3), as in
	 * lfp__eq_read_on: an error queued before the event is seen. */
	r = lfp__idx_try_take(&eq->events, &g, buf, len, &c, lfp__errq_gate,
	                      &eq->errq);
	if (LFP__UNLIKELY(r < 0))
		return c.why == LFP__RING_EMPTY ? lfp__eq_read_empty(eq)
		                                : lfp__failed(lfp__eq_read_none(eq, c.why));
	/* A void entry (never written with one producer: see
	 * lfp_eq_write_spsc) has length 0 and was taken as the full read
	 * skips one; read on. */
	if (LFP__UNLIKELY(c.meta == LFP__EQ_VOID))
		return lfp__eq_read_slow(eq, event, buf, len);
	*event = c.meta >> 16;
	return r;
}

/* The synthetic entry every readerr returns once the queued errors of an
 * overrun EQ are read. */
LFP_INLINE int lfp__eq_overrun_entry(void *buf, void *arg)
{
	struct lfp_eq_err_entry *e = (struct lfp_eq_err_entry *)buf;
	struct lfp_eq *eq = (struct lfp_eq *)arg;

	/* Acquire: pairs with the RMW in lfp__eq_full (a flag only). */
	if (!lfp__ld_acq_u32(&eq->overrun))
		return 0;
	memset(e, 0, sizeof(*e));
	e->fid = &eq->fid;
	e->context = eq->fid.context;
	e->err = LFP_EOVERRUN;
	return 1;
}

/*
 * Read one error entry into *buf; returns sizeof(*buf) or -EAGAIN.  If
 * buf->err_data_size > 0 on input, as much of the error data as fits is
 * copied to buf->err_data and err_data_size is set to the bytes copied
 * (fi_eq(3)); the entry is consumed even when its data was cut short.
 * With err_data_size 0, err_data points at EQ-owned memory valid until the
 * next readerr on this EQ.  After an overrun (and once queued errors are
 * read) every readerr returns an entry with err = LFP_EOVERRUN, and keeps
 * doing so.  Honours LFP_PEEK.
 */
LFP_INLINE ssize_t lfp_eq_readerr(struct lfp_eq *eq, struct lfp_eq_err_entry *buf,
                                  uint64_t flags)
{
	struct lfp_eq_err_entry e;
	ssize_t r;

	if (!eq || !buf || (flags & ~LFP_PEEK) || (buf->err_data_size && !buf->err_data))
		return -EINVAL;
	e.err_data = buf->err_data;
	e.err_data_size = buf->err_data_size;
	r = lfp__errq_read(&eq->errq, &e, sizeof(e), &e.err_data, &e.err_data_size,
	                   flags, lfp__eq_overrun_entry, eq);
	if (r < 0)
		return r;
	*buf = e;
	return (ssize_t)sizeof(e);
}

/*
 * Blocking read.  timeout in ms: < 0 infinite, 0 non-blocking.  Returns as
 * lfp_eq_read; -EAGAIN when the timeout expires (spurious wakeups wait out
 * the full timeout); -ENOSYS for wait objects NONE and SET.
 */
LFP_INLINE ssize_t lfp_eq_sread(struct lfp_eq *eq, uint32_t *event, void *buf,
                                size_t len, int timeout, uint64_t flags)
{
	int64_t deadline;
	ssize_t ret;

	if (lfp__eq_read_bad(eq, event, buf, len, flags))
		return -EINVAL;
	if (!lfp__waitable_can_block(&eq->w))
		return -ENOSYS;
	deadline = lfp__deadline(timeout);
	for (;;) {
		ret = lfp_eq_read(eq, event, buf, len, flags);
		if (ret != -EAGAIN || timeout == 0 || lfp__expired(deadline))
			return ret;
		ret = lfp__signal_wait(eq->w.sig, lfp__eq_ready, eq, deadline);
		if (ret == -ETIMEDOUT)
			return lfp_eq_read(eq, event, buf, len, flags);
		if (ret < 0)
			return ret; /* the wait object failed (e.g. -EBADF) */
	}
}

/*
 * A printable description of a provider error: the binding's name for it
 * when one is set.  Without a binding prov_errno has no meaning lfpoll knows
 * (it is the provider's, not an errno): "provider error N" in buf, or that
 * text without the number when no buf is given.  Copied into buf when buf
 * and len are given (always terminated); the return value is never NULL.
 */
LFP_INLINE const char *lfp_eq_strerror(struct lfp_eq *eq, int prov_errno,
                                       const void *err_data, char *buf,
                                       size_t len)
{
	return lfp__prov_strerror(eq ? eq->prov_strerror : NULL, prov_errno,
	                          err_data, buf, len);
}

#ifdef LFP_STATS
LFP_INLINE uint64_t lfp__eq_stat_signals(struct lfp_eq *eq)
{
	return lfp__waitable_stat_signals(&eq->w);
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_EQ_H */
