/*
 * lfpoll internal: what lets a queue (EQ, CQ, counter, a binding's object)
 * belong to a wait set or a poll set, without knowing how sets are built.
 * Do not include directly.
 *
 *   wait sets   a member links a struct lfp__wait_member into the set's
 *               core (its signal, member list and lock), which the set
 *               hands out through a private control command; trywait on a
 *               member goes through the set's fid ops.  wait.h implements
 *               the rest.
 *   poll sets   a member's struct lfp__poll_link points at its set's ready
 *               stack; producers push the link there (design.md section 4).
 *               poll.h implements the poller.
 */
#ifndef LFPOLL_INTERNAL_MEMBER_H
#define LFPOLL_INTERNAL_MEMBER_H

#include "../common.h"
#include "signal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_wait;

/* A member's link, embedded in the member object. */
struct lfp__wait_member {
	struct lfp__wait_member *next, *prev;
	struct lfp_fid *fid;
	uint64_t seen;                /* event-like members: events last seen */
};

/*
 * What a wait set shares with its members: its signal, and the member list
 * under a lock.  Producers never take the lock; joining, leaving and the
 * set's re-check do.
 */
struct lfp__set_core {
	struct lfp__signal *sig;
	pthread_mutex_t lock;         /* members (and the set's fds, scratch) */
	struct lfp__wait_member head; /* circular list of members */
	size_t nmembers;
};

/* The control command by which a wait set hands out its core. */
#define LFP__GETCORE (-0x4c46)

LFP_INLINE void lfp__set_core_bind(struct lfp__set_core *c, struct lfp__wait_member *m,
                                   struct lfp_fid *fid)
{
	pthread_mutex_lock(&c->lock);
	m->fid = fid;
	lfp__st_rlx_u64(&m->seen, fid->ops->events ? fid->ops->events(fid) : 0);
	m->next = c->head.next;
	m->prev = &c->head;
	c->head.next->prev = m;
	c->head.next = m;
	c->nmembers++;
	pthread_mutex_unlock(&c->lock);
}

LFP_INLINE void lfp__set_core_unbind(struct lfp__set_core *c, struct lfp__wait_member *m)
{
	pthread_mutex_lock(&c->lock);
	m->prev->next = m->next;
	m->next->prev = m->prev;
	m->next = m->prev = NULL;
	c->nmembers--;
	pthread_mutex_unlock(&c->lock);
}

/* The set's fid (a wait set begins with its struct lfp_fid). */
LFP_INLINE struct lfp_fid *lfp__set_fid(struct lfp_wait *ws)
{
	return (struct lfp_fid *)(void *)ws;
}

/* Join the wait set ws: 0 with its core in *core, or -EINVAL. */
LFP_INLINE int lfp__set_join(struct lfp_wait *ws, struct lfp__wait_member *m,
                             struct lfp_fid *fid, struct lfp__set_core **core)
{
	struct lfp_fid *set = lfp__set_fid(ws);

	if (!ws || set->fclass != LFP_CLASS_WAIT || !set->ops->control ||
	    set->ops->control(set, LFP__GETCORE, core))
		return -EINVAL;
	lfp__set_core_bind(*core, m, fid);
	return 0;
}

/* trywait on a member of ws: the set's, which re-checks every member. */
LFP_INLINE int lfp__set_trywait(struct lfp_wait *ws)
{
	struct lfp_fid *set = lfp__set_fid(ws);

	return set->ops->trywait(set);
}

/*
 * The wait side of a queue-like object (EQ, CQ, counter): its own wait
 * object (own, a struct lfp__signal the object embeds), membership in a
 * wait set, or none.  One implementation of the open-time checks, trywait
 * and control rules for all three classes.
 */
struct lfp__waitable {
	struct lfp__signal *sig;      /* own, the set's signal, or NULL (NONE) */
	struct lfp_wait *wait_set;    /* with LFP_WAIT_SET */
	struct lfp__set_core *core;   /* the set's, with LFP_WAIT_SET */
	enum lfp_wait_obj wait_obj;   /* as resolved (UNSPEC -> FD) */
	struct lfp__wait_member member;
};

/* Open-time check: -EINVAL for an unknown object, POLLFD (a wait-set
 * object only), SET without a set, or a set without SET. */
LFP_INLINE int lfp__waitable_check(enum lfp_wait_obj obj, const struct lfp_wait *set)
{
	switch (obj) {
	case LFP_WAIT_NONE: case LFP_WAIT_UNSPEC: case LFP_WAIT_FD:
	case LFP_WAIT_MUTEX_COND: case LFP_WAIT_YIELD:
		return set ? -EINVAL : 0;
	case LFP_WAIT_SET:
		return set ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

LFP_INLINE int lfp__waitable_open(struct lfp__waitable *w, struct lfp__signal *own,
                                  enum lfp_wait_obj obj, struct lfp_wait *set,
                                  struct lfp_fid *fid)
{
	int ret;

	w->wait_obj = obj;
	if (obj == LFP_WAIT_SET) {
		ret = lfp__set_join(set, &w->member, fid, &w->core);
		if (ret)
			return ret;
		w->wait_set = set;
		w->sig = w->core->sig;
	} else if (obj != LFP_WAIT_NONE) {
		ret = lfp__signal_init(own, obj);
		if (ret)
			return ret;
		w->sig = own;
		w->wait_obj = own->wait_obj;
	}
	return 0;
}

LFP_INLINE void lfp__waitable_close(struct lfp__waitable *w, struct lfp__signal *own)
{
	if (w->wait_set)
		lfp__set_core_unbind(w->core, &w->member);
	else if (w->sig)
		lfp__signal_fini(own);
}

/* Whether sread/cntr_wait may block: only on the object's own wait object
 * (NONE has none; a set's members are waited on through the set). */
LFP_INLINE int lfp__waitable_can_block(const struct lfp__waitable *w)
{
	return w->sig && !w->wait_set;
}

LFP_INLINE int lfp__waitable_trywait(struct lfp__waitable *w,
                                     int (*ready)(void *), void *arg)
{
	if (!w->sig)
		return -EINVAL;
	if (w->wait_set) /* clearing the set's signal re-checks every member */
		return lfp__set_trywait(w->wait_set);
	return lfp__signal_trywait(w->sig, ready, arg);
}

LFP_INLINE int lfp__waitable_control(struct lfp__waitable *w, int command, void *arg)
{
	int ret = lfp__control_begin(w->wait_obj, command, arg);

	if (ret != 1)
		return ret;
	if (!lfp__waitable_can_block(w))
		return -ENODATA; /* NONE; members are waited on through the set */
	return lfp__signal_getwait(w->sig, command, arg);
}

/* ---------------------------------------------------------------- poll sets */

enum { LFP__LINK_IDLE, LFP__LINK_PUSHING, LFP__LINK_TRACKED };

struct lfp__poll_link {
	/* The ready stack of the poll set the object is in (lfp_poll's
	 * ready field), or NULL: all a producer needs of the set. */
	struct lfp__poll_link **stack;
	struct lfp__poll_link *next;  /* on the ready stack or the poller's list */
	struct lfp_fid *fid;
	uint64_t seen;                /* event-like objects: events last reported */
	uint32_t queued;              /* LFP__LINK_* */
	/* Set by classes whose work arrives with no producer to push the
	 * link (a verbs CQ is filled by the device): lfp_poll keeps such a
	 * link tracked and checks it on every call. */
	uint32_t sticky;
};

/*
 * The push of a link its producer found IDLE in a poll set: out of line,
 * since only a queue's first event after lfp_poll dropped it comes here.
 */
LFP_OUTLINE void lfp__poll_link_push(struct lfp__poll_link *l)
{
	struct lfp__poll_link **stack, *top;
	uint32_t idle = LFP__LINK_IDLE;

	/* Full-barrier RMW: orders our publish before the poller's re-check
	 * (pairs with the poller's L2), and the claim before the re-read of
	 * the stack (pairs with lfp_poll_del's D1). */
	if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_PUSHING))
		return;
	LFP__SCHED("poll.link.claimed", l);
	stack = (struct lfp__poll_link **)lfp__ld_acq_ptr((void *const *)&l->stack);
	if (!stack) {
		/* Deleted meanwhile: lfp_poll_del waits for this store. */
		lfp__st_rel_u32(&l->queued, LFP__LINK_IDLE);
		return;
	}
	top = (struct lfp__poll_link *)lfp__ld_rlx_ptr((void *const *)stack);
	/* Treiber push.  The CAS is a full barrier (release for the store of
	 * next before it on every architecture); lfp_poll's exchange, also a
	 * full barrier, is its acquire. */
	do
		l->next = top;
	while (!lfp__cas_ptr((void **)stack, (void **)&top, l));
	LFP__SCHED("poll.link.pushed", l);
	/* Release: lfp_poll_del waits for a state other than PUSHING before
	 * it touches the stack; lfp_poll's L1 CAS waits for it too. */
	lfp__st_rel_u32(&l->queued, LFP__LINK_TRACKED);
}

/*
 * Producer side, after publishing work and the full barrier P2 of
 * lfp__notify_all, which orders the publish before the loads here.  Cheap
 * when the object is in no poll set or already tracked: two loads.
 */
LFP_INLINE void lfp__poll_link_notify(struct lfp__poll_link *l)
{
	if (LFP__UNLIKELY(lfp__ld_rlx_ptr((void *const *)&l->stack) != NULL) &&
	    lfp__ld_rlx_u32(&l->queued) == LFP__LINK_IDLE)
		lfp__poll_link_push(l);
}

/* lfp__notify_all's rest for an object in a poll set, out of line: the
 * push (when the link is IDLE), then P3-P4, in that order. */
LFP_OUTLINE void lfp__notify_in_set(struct lfp__signal *sig, struct lfp__poll_link *l)
{
	lfp__poll_link_notify(l);
	if (sig)
		lfp__signal_check(sig);
}

/*
 * What a producer does after publishing work (P1): P2, then queue the object
 * in its poll set, then wake an armed waiter (P3-P4 of signal.h).  The one
 * full barrier orders the publish before the poll link's loads and before
 * P3.  The push comes before the wake: a waiter that consumed the change
 * through a wait set's trywait while the link was still being pushed, found
 * nothing in lfp_poll and armed again, is woken by this producer's P4, after
 * the link is on the stack.  (In the other order that wake went out first,
 * and the waiter slept with the counter's change unreported: docs/
 * reliability.md, defect I.)
 */
LFP_INLINE void lfp__notify_all(struct lfp__signal *sig, struct lfp__poll_link *l)
{
	if (LFP__BROKEN("I")) {
		if (sig)
			lfp__signal_notify(sig);
		else
			lfp__mb();
		lfp__poll_link_notify(l);
		return;
	}
	lfp__mb(); /* P2: pairs with W2 and with the poller's L2 */
	if (LFP__UNLIKELY(lfp__ld_rlx_ptr((void *const *)&l->stack) != NULL))
		lfp__notify_in_set(sig, l);
	else if (sig)
		lfp__signal_check(sig);
}

/* Whether the member behind a link has something to report; consumes a
 * counter's change only when consume is set. */
LFP_INLINE int lfp__poll_link_ready(struct lfp__poll_link *l, int consume)
{
	uint64_t ev;

	if (l->fid->ops->events) {
		/* Relaxed: seen is also reset by the counter's add/set; a
		 * lost race there only costs a false positive. */
		ev = l->fid->ops->events(l->fid);
		if (ev == lfp__ld_rlx_u64(&l->seen))
			return 0;
		if (consume)
			lfp__st_rlx_u64(&l->seen, ev);
		return 1;
	}
	return l->fid->ops->ready(l->fid) > 0;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_MEMBER_H */
