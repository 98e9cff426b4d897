/*
 * lfpoll poll set: reports the CQs that hold work and the counters that
 * changed, at a cost that grows with the ready members, not with members.
 *
 * Each pollable object embeds one struct lfp__poll_link.  When a producer
 * publishes work it checks the link: if the object is in a poll set and not
 * already queued there, it pushes the link onto the set's ready stack (a
 * Treiber stack: producers push, lfp_poll takes the whole stack with one
 * exchange).  lfp_poll looks only at the links it took and at the ones it
 * still tracks because they held work last time (a CQ stays reported while
 * non-empty).  An object belongs to at most one poll set at a time.
 * Objects filled by hardware (verbs CQs) have no producer to push them;
 * their links are sticky and cost one check per lfp_poll each.
 *
 * Link states (queued):
 *   IDLE     not tracked: the next event pushes it
 *   PUSHING  a producer owns the push
 *   TRACKED  on the ready stack or on the poller's own list
 * A producer takes IDLE -> PUSHING by CAS, re-reads the link's poll set
 * (Dekker with lfp_poll_del, which clears it and then waits out PUSHING),
 * pushes, and stores TRACKED.  lfp_poll may take the link off the stack
 * before that store lands, so the poller drops a link only by CAS
 * TRACKED -> IDLE (L1): a link still PUSHING stays on the poller's list,
 * where the producer's TRACKED store leaves it consistent.  (A plain IDLE
 * store there was overwritten by the late TRACKED, and no producer ever
 * pushed the link again.)  After L1 the poller re-checks the object (L2,
 * Dekker with the producer's publish and claim), so an event is never left
 * untracked.
 */
#ifndef LFPOLL_POLL_H
#define LFPOLL_POLL_H

#include "common.h"
#include "internal/member.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_poll_attr {
	uint64_t flags;               /* must be 0 */
};

struct lfp_poll {
	struct lfp_fid fid;
	/* Pushed by producers; taken whole by lfp_poll. */
	struct lfp__poll_link *ready;
	char lfp__pad0[LFP_CACHELINE_PAIR - sizeof(void *)];
	/* Poller side, under lock: links still tracked from the last poll,
	 * those it could not report (looked at first next time) and those it
	 * reported (looked at last). */
	pthread_mutex_t lock;
	struct lfp__poll_link *tracked;
	struct lfp__poll_link *reported;
	size_t nmembers;
};

LFP_INLINE int lfp_poll_close(struct lfp_poll *ps);

LFP_INLINE int lfp__poll_close_fid(struct lfp_fid *fid)
{
	return lfp_poll_close((struct lfp_poll *)(void *)fid);
}

static const struct lfp_fid_ops lfp__poll_ops = {
	lfp__poll_close_fid, NULL, NULL, NULL, NULL, NULL
};

LFP_INLINE int lfp_poll_open(const struct lfp_poll_attr *attr,
                             struct lfp_poll **psp)
{
	struct lfp_poll *ps;
	void *p;

	if (!psp)
		return -EINVAL;
	*psp = NULL; /* written on every path (see lfp__neg_errno) */
	if (attr && attr->flags)
		return -EINVAL;
	if (posix_memalign(&p, LFP_CACHELINE_PAIR, sizeof(*ps)))
		return -ENOMEM;
	ps = (struct lfp_poll *)p;
	memset(ps, 0, sizeof(*ps));
	if (pthread_mutex_init(&ps->lock, NULL)) {
		free(ps);
		return -ENOMEM;
	}
	ps->fid.fclass = LFP_CLASS_POLL;
	ps->fid.abi = LFP_ABI_VERSION;
	ps->fid.ops = &lfp__poll_ops;
	*psp = ps;
	return 0;
}

/* -EBUSY while the set has members. */
LFP_INLINE int lfp_poll_close(struct lfp_poll *ps)
{
	size_t n;

	if (!ps)
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	n = ps->nmembers;
	pthread_mutex_unlock(&ps->lock);
	if (n)
		return -EBUSY;
	pthread_mutex_destroy(&ps->lock);
	free(ps);
	return 0;
}

/* The address of the NULL that ends the list at *pp: where to append. */
LFP_INLINE struct lfp__poll_link **lfp__poll_tailp(struct lfp__poll_link **pp)
{
	while (*pp)
		pp = &(*pp)->next;
	return pp;
}

LFP_INLINE struct lfp__poll_link *lfp__poll_fid_link(struct lfp_fid *fid)
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
	struct lfp__poll_link *l = lfp__poll_fid_link(fid);
	struct lfp__poll_link **none = NULL;

	if (!ps || !l || flags)
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	l->fid = fid;
	if (!lfp__cas_ptr((void **)&l->stack, (void **)&none, &ps->ready)) {
		pthread_mutex_unlock(&ps->lock);
		return none == &ps->ready ? -EEXIST : -EBUSY;
	}
	/* Track it now, unless a producer that saw the new ps has claimed
	 * the push (PUSHING: wait for it) or done it (TRACKED: the link is on
	 * the ready stack).  Putting it on our list as well would link it
	 * twice.  seen is kept: a counter's events since its last add/set (or
	 * since it was opened) are reported, as fi_poll(3) says. */
	for (;;) {
		uint32_t st = LFP__LINK_IDLE;

		if (lfp__cas_u32(&l->queued, &st, LFP__LINK_TRACKED)) {
			/* At the end: members already waiting go first. */
			l->next = NULL;
			*lfp__poll_tailp(&ps->tracked) = l;
			break;
		}
		if (st == LFP__LINK_TRACKED)
			break;
		lfp__cpu_relax(); /* PUSHING */
	}
	ps->nmembers++;
	pthread_mutex_unlock(&ps->lock);
	return 0;
}

/* Remove l from the singly linked list at *head; returns whether found. */
LFP_INLINE int lfp__poll_unlink(struct lfp__poll_link **head,
                                struct lfp__poll_link *l)
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
	struct lfp__poll_link *l = lfp__poll_fid_link(fid), *stack;
	void *self;

	if (!ps || !l || flags)
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	self = &ps->ready;
	/* D1: full-barrier RMW clearing the link's stack; pairs with the
	 * producer's claim: a producer that claimed before it re-reads the
	 * stack below as PUSHING. */
	if (!lfp__cas_ptr((void **)&l->stack, &self, NULL)) {
		pthread_mutex_unlock(&ps->lock);
		return -ENOENT;
	}
	LFP__SCHED("poll.D1", l);
	/* Acquire: pairs with the producer's release of TRACKED/IDLE, so its
	 * push (if any) is visible before we look at the stack. */
	while (lfp__ld_acq_u32(&l->queued) == LFP__LINK_PUSHING)
		lfp__cpu_relax();
	/* No producer can push l any more.  Take it off our list or the
	 * stack (taking the stack whole and putting the rest back on our
	 * list, where lfp_poll will look at them anyway). */
	if (!lfp__poll_unlink(&ps->tracked, l) && !lfp__poll_unlink(&ps->reported, l)) {
		stack = (struct lfp__poll_link *)lfp__xchg_ptr((void **)&ps->ready, NULL);
		lfp__poll_unlink(&stack, l);
		/* After the members already waiting: these are new. */
		*lfp__poll_tailp(&ps->tracked) = stack;
	}
	/* TRACKED -> IDLE only: a producer that loaded ps before D1 may claim
	 * IDLE -> PUSHING now; it then reads ps == NULL and stores IDLE
	 * itself.  Overwriting its claim would let it push the link after a
	 * re-add has tracked it. */
	{
		uint32_t st = LFP__LINK_TRACKED;

		(void)lfp__cas_u32(&l->queued, &st, LFP__LINK_IDLE);
	}
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
	struct lfp__poll_link *list, *l, *next;
	/* Kept links: those not reported this time first, then the reported
	 * ones, so that members that did not fit come first next time. */
	struct lfp__poll_link *waiting = NULL, **wtail = &waiting;
	struct lfp__poll_link *done = NULL, **dtail = &done;
	uint32_t idle;
	int n = 0, r;

	if (!ps || count < 0 || (!context && count))
		return -EINVAL;
	pthread_mutex_lock(&ps->lock);
	/* Acquire through the RMW: the pushed links' fields are visible. */
	list = (struct lfp__poll_link *)lfp__xchg_ptr((void **)&ps->ready, NULL);
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
		r = lfp__poll_link_ready(l, n < count);
		if (!r && l->sticky) {
			*dtail = l;
			dtail = &l->next;
			continue;
		}
		if (!r) {
			/* L1: untrack, only from TRACKED: a link we took off
			 * the stack while its producer is still PUSHING stays
			 * on our list (the producer's TRACKED store then
			 * matches it).  Full-barrier CAS: it orders our last
			 * write of l->next before a producer's push that
			 * rewrites it, and is the store half of L2's pair. */
			idle = LFP__LINK_TRACKED;
			if (LFP__BROKEN("B"))
				lfp__st_rel_u32(&l->queued, LFP__LINK_IDLE);
			else if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_IDLE)) {
				*wtail = l;
				wtail = &l->next;
				continue;
			}
			LFP__SCHED("poll.L1", l);
			/* L2: re-check after a full barrier (pairs with the
			 * producer's claim CAS).  Either the producer sees
			 * IDLE and pushes, or we see its work. */
			lfp__mb();
			if (!lfp__poll_link_ready(l, 0))
				continue;
			idle = LFP__LINK_IDLE;
			if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_TRACKED))
				continue; /* a producer is pushing it: it comes back */
			r = lfp__poll_link_ready(l, n < count);
		}
		if (r && n < count) {
			context[n++] = l->fid->context;
			*dtail = l;
			dtail = &l->next;
		} else {
			*wtail = l;
			wtail = &l->next;
		}
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
