/*
 * lfpoll counter: a 64-bit success count and error count.
 *
 * lfp_cntr_inc / lfp_cntr_incerr are the completion side: they count as
 * events for poll sets and wait sets and wake waiters.  The application's
 * lfp_cntr_add / _set (and _adderr / _seterr) follow fi_poll(3): they change
 * the value, wake lfp_cntr_wait, and reset the "changed since the last poll"
 * state, so a poll set does not report a counter for the application's own
 * change.
 */
#ifndef LFPOLL_CNTR_H
#define LFPOLL_CNTR_H

#include "common.h"
#include "internal/object.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a counter counts (fi_cntr(3)): completions, the only kind. */
enum lfp_cntr_events {
	LFP_CNTR_EVENTS_COMP
};

/* Fields in fi_cntr_attr's order, so initializers carry over. */
struct lfp_cntr_attr {
	enum lfp_cntr_events events;  /* LFP_CNTR_EVENTS_COMP (0) */
	enum lfp_wait_obj wait_obj;
	struct lfp_wait *wait_set;    /* with LFP_WAIT_SET */
	uint64_t flags;               /* must be 0 */
};

struct lfp_cntr {
	struct lfp_fid fid;
	struct lfp__waitable w;
	struct lfp_poll_link link;
	uint64_t trywait_seen LFP__ALIGN8; /* events when trywait last reported */
	char lfp__pad0[LFP_CACHELINE_PAIR];
	/* Written by the completion side; one line pair of their own. */
	uint64_t value LFP__ALIGN8;
	uint64_t err LFP__ALIGN8;
	uint64_t events LFP__ALIGN8;  /* inc/incerr calls: what sets compare */
	char lfp__pad1[LFP_CACHELINE_PAIR - 3 * sizeof(uint64_t)];
	struct lfp__signal own;
};

LFP_INLINE uint64_t lfp__cntr_events(struct lfp_fid *fid)
{
	/* Acquire: pairs with the RMWs in inc/incerr; a set that sees the
	 * event count move also sees the value that moved with it. */
	return lfp__ld_acq_u64(&((struct lfp_cntr *)(void *)fid)->events);
}

/* trywait's re-check: the counter has work when its events moved since
 * the last trywait that reported them, or while a poll set it is in has
 * not reported them (lfp__fid_poll_owed). */
LFP_INLINE int lfp__cntr_ready(void *arg)
{
	struct lfp_cntr *c = (struct lfp_cntr *)arg;

	/* Acquire: pairs with the event RMW, as in lfp__cntr_events. */
	return lfp__ld_acq_u64(&c->events) != lfp__ld_rlx_u64(&c->trywait_seen) ||
	       lfp__fid_poll_owed(&c->fid);
}

/*
 * Blocking is safe once the caller has seen every event so far: the
 * trywait itself marks them seen, so -EAGAIN reports new ones once.  The
 * mark moves trywait_seen from the value the caller read before its check
 * (a full-barrier CAS): of several trywaits that found one batch, one
 * reports it, and the others try again, which arms them (or reports a
 * newer batch).  A plain store let two report the same batch (I2).
 */
LFP_INLINE int lfp__cntr_trywait(struct lfp_fid *fid)
{
	struct lfp_cntr *c = (struct lfp_cntr *)(void *)fid;
	uint64_t seen, ev;
	int ret;

	for (;;) {
		seen = lfp__ld_rlx_u64(&c->trywait_seen);
		ret = lfp__obj_trywait(fid);
		if (ret != -EAGAIN || c->w.set)
			return ret;
		LFP__SCHED("cntr.trywait.ready", c);
		ev = lfp__ld_acq_u64(&c->events); /* as lfp__cntr_events */
		if (LFP__BROKEN("I2")) {
			lfp__st_rlx_u64(&c->trywait_seen, ev);
			return ret;
		}
		if (ev != seen && lfp__cas_u64(&c->trywait_seen, &seen, ev))
			return ret;
		if (lfp__fid_poll_owed(fid)) /* owed to a poll set: work */
			return ret;
	}
}

static const struct lfp__class lfp__cntr_class = {
	{ lfp__obj_close, lfp__obj_control, lfp__cntr_trywait, NULL, lfp__cntr_events,
	  lfp__obj_poll_link },
	LFP_CLASS_CNTR, offsetof(struct lfp_cntr, w), offsetof(struct lfp_cntr, link),
	lfp__cntr_ready, NULL, free /* a counter holds nothing else */
};

/* attr NULL: wait object NONE.  -EINVAL for flags, events other than
 * LFP_CNTR_EVENTS_COMP, bad wait objects. */
LFP_INLINE int lfp_cntr_open(const struct lfp_cntr_attr *attr,
                             struct lfp_cntr **cp, void *context)
{
	struct lfp_cntr_attr a;
	struct lfp_cntr *c;
	int ret;

	if (!cp)
		return -EINVAL;
	*cp = NULL; /* written on every path (see lfp__neg_errno) */
	memset(&a, 0, sizeof(a));
	if (attr)
		a = *attr;
	if (a.flags || a.events != LFP_CNTR_EVENTS_COMP ||
	    lfp__waitable_check(a.wait_obj, a.wait_set))
		return -EINVAL;
	c = (struct lfp_cntr *)lfp__obj_new(&lfp__cntr_class, sizeof(*c), context);
	if (!c)
		return -ENOMEM;
	lfp__poll_link_init(&c->link, &c->fid, 0);
	ret = lfp__obj_open_wait(&c->fid, &c->own, a.wait_obj, a.wait_set);
	if (!ret)
		*cp = c;
	return ret;
}

/* -EBUSY while in a poll set. */
LFP_INLINE int lfp_cntr_close(struct lfp_cntr *c)
{
	return c ? lfp__obj_close(&c->fid) : -EINVAL;
}

/*
 * The values.  A NULL counter reads 0 with errno set to EINVAL (the value
 * itself cannot carry an error, as in fi_cntr_read).
 */
LFP_INLINE uint64_t lfp_cntr_read(struct lfp_cntr *c)
{
	if (!c) {
		errno = EINVAL;
		return 0;
	}
	/* Acquire: pairs with the completion side's RMW on value. */
	return lfp__ld_acq_u64(&c->value);
}

LFP_INLINE uint64_t lfp_cntr_readerr(struct lfp_cntr *c)
{
	if (!c) {
		errno = EINVAL;
		return 0;
	}
	return lfp__ld_acq_u64(&c->err); /* as lfp_cntr_read */
}

/* Completion side: an event.  The RMWs are P1 (publish) of signal.h. */
LFP_INLINE int lfp__cntr_event(struct lfp_cntr *c, uint64_t *field, uint64_t v)
{
	if (!c)
		return -EINVAL;
	(void)lfp__faa_u64(field, v);
	(void)lfp__faa_u64(&c->events, 1);
	lfp__notify_all(c->w.sig, &c->link, 0);
	return 0;
}

LFP_INLINE int lfp_cntr_inc(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_event(c, c ? &c->value : NULL, v);
}

LFP_INLINE int lfp_cntr_incerr(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_event(c, c ? &c->err : NULL, v);
}

/*
 * Application side: change a value and wake lfp_cntr_wait.  No change of
 * the application's is an event.  add and set also mark every event so
 * far as seen by the poll set and the wait set: the reset fi_poll(3)
 * describes, which names fi_cntr_add and fi_cntr_set only.  The error
 * forms leave that tracking alone, so that an application clearing its
 * error count never hides a completion that came before.
 */
LFP_INLINE int lfp__cntr_app(struct lfp_cntr *c, int err, int set, uint64_t v)
{
	uint64_t ev, *field;

	if (!c)
		return -EINVAL;
	field = err ? &c->err : &c->value;
	if (set) /* full-barrier RMWs: lfp_cntr_wait's acquire loads pair */
		(void)lfp__xchg_u64(field, v);
	else
		(void)lfp__faa_u64(field, v);
	if (!err) {
		ev = lfp__ld_acq_u64(&c->events); /* as lfp__cntr_events */
		lfp__st_rlx_u64(&c->link.seen, ev);
		lfp__st_rlx_u64(&c->w.member.seen, ev);
	}
	lfp__waitable_notify(&c->w);
	return 0;
}

LFP_INLINE int lfp_cntr_add(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_app(c, 0, 0, v);
}

LFP_INLINE int lfp_cntr_adderr(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_app(c, 1, 0, v);
}

LFP_INLINE int lfp_cntr_set(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_app(c, 0, 1, v);
}

LFP_INLINE int lfp_cntr_seterr(struct lfp_cntr *c, uint64_t v)
{
	return lfp__cntr_app(c, 1, 1, v);
}

struct lfp__cntr_wait {
	struct lfp_cntr *c;
	uint64_t threshold;
	uint64_t err0;
};

LFP_INLINE int lfp__cntr_wait_ready(void *arg)
{
	struct lfp__cntr_wait *w = (struct lfp__cntr_wait *)arg;

	/* Acquire: pairs with the RMWs of inc/add/set on value and err. */
	return lfp__ld_acq_u64(&w->c->value) >= w->threshold ||
	       lfp__ld_acq_u64(&w->c->err) != w->err0;
}

/*
 * Wait until the value reaches threshold: 0; -LFP_EAVAIL when the error
 * count changes meanwhile; -ETIMEDOUT at the timeout (ms, < 0 infinite);
 * -ENOSYS for wait objects NONE and SET.
 */
LFP_INLINE int lfp_cntr_wait(struct lfp_cntr *c, uint64_t threshold, int timeout)
{
	struct lfp__cntr_wait w;
	int64_t deadline;
	int ret;

	if (!c)
		return -EINVAL;
	if (!lfp__waitable_can_block(&c->w))
		return -ENOSYS;
	w.c = c;
	w.threshold = threshold;
	w.err0 = lfp__ld_acq_u64(&c->err); /* acquires as lfp__cntr_wait_ready */
	deadline = lfp__deadline(timeout);
	for (;;) {
		if (lfp__ld_acq_u64(&c->value) >= threshold)
			return 0;
		if (lfp__ld_acq_u64(&c->err) != w.err0)
			return -LFP_EAVAIL;
		ret = timeout == 0 ? -ETIMEDOUT :
		      lfp__signal_wait(c->w.sig, lfp__cntr_wait_ready, &w, deadline);
		if (ret < 0 && ret != -ETIMEDOUT)
			return ret; /* the wait object failed (e.g. -EBADF) */
		if (ret < 0) {
			if (lfp__ld_acq_u64(&c->value) >= threshold)
				return 0;
			return lfp__ld_acq_u64(&c->err) != w.err0 ? -LFP_EAVAIL
			                                           : -ETIMEDOUT;
		}
	}
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_CNTR_H */
