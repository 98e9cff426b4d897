/*
 * lfpoll poll set: reports the CQs that hold work and the counters that
 * changed, at a cost that grows with the ready members, not with members.
 *
 * Producers push a member's poll link onto the set's ready stack when they
 * publish work and find the link idle (internal/poll_link.h, which holds
 * the protocol).  lfp_poll takes the stack whole and looks only at the
 * links it took and at the ones it still tracks because they held work
 * last time (a CQ stays reported while non-empty), dropping the others.
 * An object belongs to at most one poll set at a time.
 */
#ifndef LFPOLL_POLL_H
#define LFPOLL_POLL_H

#include "common.h"
#include "internal/object.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_poll_attr {
	uint64_t flags;               /* must be 0 */
};

struct lfp_poll {
	struct lfp_fid fid;
	/* Pushed by producers; taken whole by lfp_poll. */
	struct lfp_poll_link *ready;
	char lfp__pad0[LFP_CACHELINE_PAIR - sizeof(void *)];
	/* Poller side, under lock: links still tracked from the last poll,
	 * those it could not report (looked at first next time) and those it
	 * reported (looked at last). */
	pthread_mutex_t lock;
	struct lfp_poll_link *tracked;
	struct lfp_poll_link *reported;
	size_t nmembers;
};

/* -EBUSY while the set has members. */
LFP_INLINE int lfp__poll_busy(void *obj)
{
	struct lfp_poll *ps = (struct lfp_poll *)obj;
	size_t n;

	pthread_mutex_lock(&ps->lock);
	n = ps->nmembers;
	pthread_mutex_unlock(&ps->lock);
	return n != 0;
}

LFP_INLINE void lfp__poll_fini(void *obj)
{
	struct lfp_poll *ps = (struct lfp_poll *)obj;

	pthread_mutex_destroy(&ps->lock);
	free(ps);
}

/* A poll set has no wait side: no control, no trywait. */
static const struct lfp__class lfp__poll_class = {
	{ lfp__obj_close, NULL, NULL, NULL, NULL, NULL },
	LFP_CLASS_POLL, 0, 0, NULL, lfp__poll_busy, lfp__poll_fini
};

LFP_INLINE int lfp_poll_open(const struct lfp_poll_attr *attr,
                             struct lfp_poll **psp)
{
	struct lfp_poll *ps;

	if (!psp)
		return -EINVAL;
	*psp = NULL; /* written on every path (see lfp__neg_errno) */
	if (attr && attr->flags)
		return -EINVAL;
	ps = (struct lfp_poll *)lfp__obj_new(&lfp__poll_class, sizeof(*ps), NULL);
	if (!ps)
		return -ENOMEM;
	if (pthread_mutex_init(&ps->lock, NULL)) {
		free(ps);
		return -ENOMEM;
	}
	*psp = ps;
	return 0;
}

/* -EBUSY while the set has members. */
LFP_INLINE int lfp_poll_close(struct lfp_poll *ps)
{
	return ps ? lfp__obj_close(&ps->fid) : -EINVAL;
}

/* The address of the NULL that ends the list at *pp: where to append. */
LFP_INLINE struct lfp_poll_link **lfp__poll_tailp(struct lfp_poll_link **pp)
{
	while (*pp)
		pp = &(*pp)->next;
	return pp;
}

LFP_INLINE struct lfp_poll_link *lfp__poll_fid_link(struct lfp_fid *fid)
{
	if (!fid || !fid->ops || !fid->ops->poll_link)
		return NULL;
	return fid->ops->poll_link(fid);
}

/*
 * Add a CQ, a counter or a binding's pollable object.  -EINVAL for other
 * classes (EQs, sets) and for flags; -EEXIST when already a member;
 * -EBUSY when the object is in another poll set.  The object is checked at
 * the next lfp_poll, so work queued before the add is reported.
 */
LFP_INLINE int lfp_poll_add(struct lfp_poll *ps, struct lfp_fid *fid, uint64_t flags)
{
	struct lfp_poll_link *l = lfp__poll_fid_link(fid);
	int ret;

	if (!ps || !l || flags)
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	/* l->fid was set when the object was opened (lfp__poll_link_init).
	 * It is not stored here: while the object is in another set, that
	 * set's lfp_poll reads it under its own lock, not ours. */
	if (LFP__BROKEN("H2")) /* test builds: the store made before the check */
		l->fid = fid;
	ret = lfp__poll_link_attach(l, &ps->ready);
	if (ret < 0) {
		pthread_mutex_unlock(&ps->lock);
		return ret;
	}
	if (ret) {
		/* At the end: members already waiting go first. */
		l->next = NULL;
		*lfp__poll_tailp(&ps->tracked) = l;
	}
	ps->nmembers++;
	pthread_mutex_unlock(&ps->lock);
	return 0;
}

/* Remove l from the singly linked list at *head; returns whether found. */
LFP_INLINE int lfp__poll_unlink(struct lfp_poll_link **head,
                                struct lfp_poll_link *l)
{
	for (; *head; head = &(*head)->next) {
		if (*head == l) {
			*head = l->next;
			return 1;
		}
	}
	return 0;
}

/* -ENOENT when fid is not a member of ps; -EINVAL for flags. */
LFP_INLINE int lfp_poll_del(struct lfp_poll *ps, struct lfp_fid *fid, uint64_t flags)
{
	struct lfp_poll_link *l = lfp__poll_fid_link(fid), *stack;

	if (!ps || !l || flags)
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	if (lfp__poll_link_detach(l, &ps->ready)) {
		pthread_mutex_unlock(&ps->lock);
		return -ENOENT;
	}
	/* No producer can push l any more.  Take it off our list or the
	 * stack (taking the stack whole and putting the rest back on our
	 * list, where lfp_poll will look at them anyway). */
	if (!lfp__poll_unlink(&ps->tracked, l) && !lfp__poll_unlink(&ps->reported, l)) {
		stack = (struct lfp_poll_link *)lfp__xchg_ptr((void **)&ps->ready, NULL);
		lfp__poll_unlink(&stack, l);
		/* After the members already waiting: these are new. */
		*lfp__poll_tailp(&ps->tracked) = stack;
	}
	lfp__poll_link_detached(l);
	ps->nmembers--;
	pthread_mutex_unlock(&ps->lock);
	return 0;
}

/*
 * Write the contexts of up to count members that have work: CQs while
 * non-empty or holding an error, counters whose value or error count moved
 * since this set last returned them (or since the application's add/set).
 * Returns how many were written, 0 if none.  A member that does not fit
 * stays tracked for the next call: nothing is lost.
 */
LFP_INLINE int lfp_poll(struct lfp_poll *ps, void **context, int count)
{
	struct lfp_poll_link *list, *l, *next;
	/* Kept links: those not reported this time first, then the reported
	 * ones, so that members that did not fit come first next time. */
	struct lfp_poll_link *waiting = NULL, **wtail = &waiting;
	struct lfp_poll_link *done = NULL, **dtail = &done;
	int n = 0, r;

	if (!ps || count < 0 || (!context && count))
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	/* Acquire through the RMW: the pushed links' fields are visible. */
	list = (struct lfp_poll_link *)lfp__xchg_ptr((void **)&ps->ready, NULL);
	/* The order is the fairness: what did not fit last time first, then
	 * what is new, then what was reported last time.  Anything not
	 * reported now goes first next time, so with a short array every
	 * ready member is reported within a bounded number of calls. */
	*lfp__poll_tailp(&list) = ps->reported;
	*lfp__poll_tailp(&ps->tracked) = list;
	list = ps->tracked;
	ps->tracked = NULL;
	ps->reported = NULL;
	for (l = list; l; l = next) {
		next = l->next;
		/* A counter's change is consumed only when its context is
		 * returned (test builds: "c" consumes it regardless). */
		r = lfp__poll_link_ready(l, n < count || LFP__BROKEN("c"));
		if (!r && !l->sticky)
			r = lfp__poll_link_drop(l, n < count); /* L1, L2 */
		if (r < 0)
			continue; /* dropped: its producer pushes it again */
		if (r && n < count) {
			context[n++] = l->fid->context;
		} else if (r || !l->sticky) {
			*wtail = l;
			wtail = &l->next;
			continue;
		}
		*dtail = l;
		dtail = &l->next;
	}
	*dtail = NULL;
	*wtail = NULL;
	ps->tracked = waiting;
	ps->reported = done;
	pthread_mutex_unlock(&ps->lock);
	return n;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_POLL_H */
