/*
 * lfpoll internal: wait-set membership.  Do not include directly.
 *
 * A wait set's core is its member list under a lock.  A member (an EQ, CQ
 * or counter opened with LFP_WAIT_SET, or a binding's object) links a
 * struct lfp__wait_member into it and signals the set's struct
 * lfp__signal, so the trywait protocol (signal.h) covers members with
 * "re-check every source" meaning "every member" (docs/design.md 3).  The
 * set hands its core and its signal to a joining member through its
 * waitable (internal/object.h: lfp__wait_set_of).
 *
 * Producers never take the lock: joining, leaving and the set's re-check
 * do.  The re-check reports a queue-like member while it holds work and an
 * event-like one (a counter) once per change: seen is the member's event
 * count when the set last reported it, moved on by the re-check and reset
 * by the counter's own add/set (fi_poll(3)'s reset rule).
 */
#ifndef LFPOLL_INTERNAL_WAIT_MEMBER_H
#define LFPOLL_INTERNAL_WAIT_MEMBER_H

#include "../common.h"
#include "poll_link.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A member's link, embedded in the member object. */
struct lfp__wait_member {
	struct lfp__wait_member *next, *prev;
	struct lfp_fid *fid;
	uint64_t seen LFP__ALIGN8;    /* event-like members: events last reported */
};

/* What a wait set shares with its members: the member list under a lock. */
struct lfp__set_core {
	pthread_mutex_t lock;         /* members (and the set's fds, scratch) */
	struct lfp__wait_member head; /* circular list of members */
	size_t nmembers;
};

LFP_INLINE int lfp__set_core_init(struct lfp__set_core *c)
{
	if (pthread_mutex_init(&c->lock, NULL))
		return -ENOMEM;
	c->head.next = c->head.prev = &c->head;
	c->nmembers = 0;
	return 0;
}

LFP_INLINE void lfp__set_core_fini(struct lfp__set_core *c)
{
	pthread_mutex_destroy(&c->lock);
}

/* fid joins: its changes so far are not news to the set. */
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

/* Whether any member has work (the set's W3); lock held.  A counter's
 * change is consumed: reported once, and again while a poll set it is in
 * has not reported it (lfp__fid_poll_owed). */
LFP_INLINE int lfp__set_core_ready_locked(struct lfp__set_core *c)
{
	struct lfp__wait_member *m;

	for (m = c->head.next; m != &c->head; m = m->next)
		if (lfp__fid_work(m->fid, &m->seen, 1) || lfp__fid_poll_owed(m->fid))
			return 1;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_MEMBER_H */
