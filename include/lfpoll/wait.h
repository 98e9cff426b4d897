/*
 * lfpoll wait set: one wait object shared by many EQs, CQs and counters
 * (opened with wait_obj = LFP_WAIT_SET) and by external file descriptors
 * (lfp_wait_add_fd, e.g. verbs completion channels).
 *
 * Members signal the set's lfp__signal with the protocol of signal.h, so
 * producers make no system call while nobody waits on the set.  The set's
 * wait object is one of the kinds of internal/wait_kinds.h:
 *   FD       one fd for the whole set (an epoll fd over the set's eventfd and
 *            the external fds), usable in select, poll and epoll.
 *   POLLFD   the same fds as a change_index-tracked pollfd array (pollfd.h).
 *   MUTEX_COND, YIELD, UNSPEC (= FD).  MUTEX_COND takes no external fds.
 * What the set does with external fds follows from its kind: a kind with an
 * fd of its own watches them through an epoll fd beside that fd; a kind
 * whose waiters poll (LFP__KIND_POLLS) polls them in its re-check; any
 * other kind cannot take them.  Membership changes take a mutex; producers
 * never do (internal/wait_member.h).
 */
#ifndef LFPOLL_WAIT_H
#define LFPOLL_WAIT_H

#include "common.h"
#include "pollfd.h"
#include "internal/object.h"

#include <fcntl.h>
#include <sys/epoll.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_wait_attr {
	enum lfp_wait_obj wait_obj;
	uint64_t flags;               /* must be 0 */
};

struct lfp_wait {
	struct lfp_fid fid;           /* first: members reach it through a cast */
	struct lfp__signal sig;
	struct lfp__set_core core;    /* the members, the lock */
	struct lfp__waitable w;       /* &sig and &core, the set's kind */
	int epfd;                     /* a kind with an fd: epoll over it + fds */
	size_t nfds;                  /* external fds, under core.lock */
	struct lfp_pollfds pollfds;   /* the set's own fd (if any) + external fds */
	struct pollfd *scratch;       /* LFP__KIND_POLLS: external fds polled */
	size_t scratch_cap;
};

/* Whether the set's waiters poll its sources (YIELD) instead of sleeping. */
LFP_INLINE int lfp__wait_polls(const struct lfp_wait *ws)
{
	return (ws->sig.kind->flags & LFP__KIND_POLLS) != 0;
}

/* Whether an external fd is ready; called with the lock held. */
LFP_INLINE int lfp__wait_fds_ready(struct lfp_wait *ws)
{
	struct lfp_wait_pollfd w;
	size_t i;
	int c, n;

	if (ws->nfds == 0)
		return 0;
	w.nfds = ws->scratch_cap;
	w.fd = ws->scratch;
	if (lfp_pollfds_get(&ws->pollfds, &w) != 0)
		return 1; /* cannot look: report possible work */
	/* The set's own fd, in the array for LFP_GETWAIT, is not a member:
	 * poll(2) skips a negative fd. */
	for (i = 0; i < w.nfds; i++)
		if (ws->scratch[i].fd == ws->sig.efd || ws->scratch[i].fd == ws->epfd)
			ws->scratch[i].fd = -1;
	c = lfp__nocancel_begin(); /* a look, not a sleep; the lock is held */
	n = poll(ws->scratch, w.nfds, 0);
	lfp__nocancel_end(c);
	return n > 0;
}

/* Whether any member has work (W3 for the set). */
LFP_INLINE int lfp__wait_ready(void *arg)
{
	struct lfp_wait *ws = (struct lfp_wait *)arg;
	int ready;

	pthread_mutex_lock(&ws->core.lock);
	ready = lfp__set_core_ready_locked(&ws->core);
	if (!ready && lfp__wait_polls(ws))
		ready = lfp__wait_fds_ready(ws);
	pthread_mutex_unlock(&ws->core.lock);
	return ready;
}

/*
 * At a deadline: whether an external fd is ready on a set that does not
 * poll them (FD, POLLFD): they wake its sleep through its fd, but a
 * deadline that has passed (a timeout of 0 among them) ends the wait
 * before any sleep.  One poll(2), only on sets that have external fds.
 */
LFP_INLINE int lfp__wait_fds_ready_at_deadline(struct lfp_wait *ws)
{
	int ready = 0;

	pthread_mutex_lock(&ws->core.lock);
	if (!lfp__wait_polls(ws))
		ready = lfp__wait_fds_ready(ws);
	pthread_mutex_unlock(&ws->core.lock);
	return ready;
}

/* LFP_GETWAIT on a set may answer with its array of fds (POLLFD). */
LFP_INLINE int lfp__wait_control(struct lfp_fid *fid, int command, void *arg)
{
	struct lfp_wait *ws = (struct lfp_wait *)(void *)fid;

	return lfp__waitable_control(&ws->w, &ws->pollfds, command, arg);
}

/* -EBUSY while objects or external fds are members. */
LFP_INLINE int lfp__wait_busy(void *obj)
{
	struct lfp_wait *ws = (struct lfp_wait *)obj;
	size_t busy;

	pthread_mutex_lock(&ws->core.lock);
	busy = ws->core.nmembers + ws->nfds;
	pthread_mutex_unlock(&ws->core.lock);
	return busy != 0;
}

/* What open made besides the signal (closed with the wait side). */
LFP_INLINE void lfp__wait_fini(void *obj)
{
	struct lfp_wait *ws = (struct lfp_wait *)obj;

	if (ws->epfd >= 0)
		lfp__close_nocancel(ws->epfd);
	lfp__set_core_fini(&ws->core);
	lfp_pollfds_fini(&ws->pollfds);
	free(ws->scratch);
	free(ws);
}

static const struct lfp__class lfp__wait_class = {
	{ lfp__obj_close, lfp__wait_control, lfp__obj_trywait, NULL, NULL, NULL },
	LFP_CLASS_WAIT, offsetof(struct lfp_wait, w), 0, lfp__wait_ready,
	lfp__wait_busy, lfp__wait_fini
};

/*
 * A kind with an fd of its own: an epoll fd over it, in which external fds
 * join it, and the fd first in the set's array of fds.  Waiters sleep on
 * the epoll fd: the own fd or any external fd wakes them.  They all test
 * lfp__wait_ready, so they may share the own fd's drain (signal.h).
 */
LFP_INLINE int lfp__wait_open_epoll(struct lfp_wait *ws)
{
	struct epoll_event ev;
	int ret;

	ws->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ws->epfd < 0)
		return lfp__neg_errno();
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = ws->sig.efd;
	if (epoll_ctl(ws->epfd, EPOLL_CTL_ADD, ws->sig.efd, &ev))
		return lfp__neg_errno();
	ret = lfp_pollfds_add(&ws->pollfds, ws->sig.efd, POLLIN, ws);
	if (ret)
		return ret;
	lfp__signal_sleep_on_fd(&ws->sig, ws->epfd);
	return 0;
}

/*
 * Open a wait set.  attr NULL or wait_obj UNSPEC: FD.  NONE and SET are
 * -EINVAL; flags must be 0.
 */
LFP_INLINE int lfp_wait_open(const struct lfp_wait_attr *attr,
                             struct lfp_wait **wsp)
{
	const struct lfp__wait_kind *k;
	struct lfp_wait *ws;
	int ret;

	if (!wsp)
		return -EINVAL;
	*wsp = NULL; /* written on every path (see lfp__neg_errno) */
	if (attr && attr->flags)
		return -EINVAL;
	k = lfp__wait_kind_of(attr ? attr->wait_obj : LFP_WAIT_UNSPEC);
	if (!k)
		return -EINVAL;
	ws = (struct lfp_wait *)lfp__obj_new(&lfp__wait_class, sizeof(*ws), NULL);
	if (!ws)
		return -ENOMEM;
	ws->epfd = -1;
	ret = lfp__signal_init(&ws->sig, k);
	if (ret) {
		free(ws);
		return ret;
	}
	ret = lfp_pollfds_init(&ws->pollfds);
	if (ret)
		goto fail_sig;
	ret = lfp__set_core_init(&ws->core);
	if (ret)
		goto fail_pollfds;
	lfp__waitable_own(&ws->w, &ws->sig, &ws->core);
	if (ws->sig.efd >= 0) {
		ret = lfp__wait_open_epoll(ws);
		if (ret) {
			lfp__signal_fini(&ws->sig);
			lfp__wait_fini(ws);
			return ret;
		}
	}
	*wsp = ws;
	return 0;
fail_pollfds:
	lfp_pollfds_fini(&ws->pollfds);
fail_sig:
	lfp__signal_fini(&ws->sig);
	free(ws);
	return ret;
}

/* -EBUSY while objects or external fds are members. */
LFP_INLINE int lfp_wait_close(struct lfp_wait *ws)
{
	return ws ? lfp__obj_close(&ws->fid) : -EINVAL;
}

/*
 * Add an external fd (readable or writable per events, as for poll(2)).
 * FD and POLLFD sets also see it in LFP_GETWAIT (the epoll fd, or the pollfd
 * array with its change_index bumped).  -EEXIST when present or one of the
 * set's own fds; -EINVAL on a MUTEX_COND set, which cannot wait on fds.
 */
LFP_INLINE int lfp_wait_add_fd(struct lfp_wait *ws, int fd, short events,
                               void *context)
{
	struct epoll_event ev;
	struct pollfd *s;
	int ret;

	/* A set watches fds through its own fd's epoll, or polls them. */
	if (!ws || fd < 0 || (ws->sig.efd < 0 && !lfp__wait_polls(ws)))
		return -EINVAL;
	pthread_mutex_lock(&ws->core.lock);
	/* Everything that can fail first: a failed add leaves the pollfd
	 * array and its change_index untouched. */
	/* The scratch array takes a copy of the pollfds: the external fds
	 * with this one, and the set's own fd where it has one. */
	if (ws->nfds + 2 > ws->scratch_cap) {
		s = (struct pollfd *)realloc(ws->scratch,
		                             (ws->nfds + 2) * 2 * sizeof(*s));
		if (!s) {
			ret = -ENOMEM;
			goto out;
		}
		ws->scratch = s;
		ws->scratch_cap = (ws->nfds + 2) * 2;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = (uint32_t)(unsigned short)events; /* EPOLLIN == POLLIN etc. */
	ev.data.ptr = context;
	if (fd == ws->sig.efd || fd == ws->epfd) { /* the set's own fds */
		ret = -EEXIST;
		goto out;
	}
	if (ws->epfd >= 0 && epoll_ctl(ws->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = lfp__neg_errno();
		goto out;
	}
	/* A set that polls its fds has no epoll to refuse a closed one: ask
	 * the kernel, or every lfp_wait would return at once on POLLNVAL. */
	if (ws->epfd < 0) {
		int c = lfp__nocancel_begin(); /* a look, not a sleep; the lock is held */

		ret = fcntl(fd, F_GETFD) < 0 ? lfp__neg_errno() : 0;
		lfp__nocancel_end(c);
		if (ret)
			goto out;
	}
	ret = lfp_pollfds_add(&ws->pollfds, fd, events, context);
	if (ret) {
		if (ws->epfd >= 0)
			epoll_ctl(ws->epfd, EPOLL_CTL_DEL, fd, &ev);
		goto out;
	}
	ws->nfds++;
out:
	pthread_mutex_unlock(&ws->core.lock);
	if (ret == 0) /* a new fd may already be ready: wake current waiters */
		lfp__signal_notify(&ws->sig);
	return ret;
}

/* Remove an external fd; -ENOENT when it is not a member. */
LFP_INLINE int lfp_wait_del_fd(struct lfp_wait *ws, int fd)
{
	/* EPOLL_CTL_DEL ignores the event (kernels before 2.6.9 wanted a
	 * pointer all the same); zeroed, no uninitialised bytes reach the
	 * kernel. */
	struct epoll_event ev;
	int ret;

	if (!ws)
		return -EINVAL;
	memset(&ev, 0, sizeof(ev));
	pthread_mutex_lock(&ws->core.lock);
	if (fd == ws->sig.efd) {
		ret = -ENOENT; /* the set's own eventfd is not an external fd */
		goto out;
	}
	ret = lfp_pollfds_del(&ws->pollfds, fd);
	if (ret)
		goto out;
	if (ws->epfd >= 0)
		epoll_ctl(ws->epfd, EPOLL_CTL_DEL, fd, &ev);
	ws->nfds--;
out:
	pthread_mutex_unlock(&ws->core.lock);
	return ret;
}

/*
 * Wait until a member may have work.  Returns 0 at once when a member is
 * ready, 0 after any wake (false positives are allowed: read the members,
 * then wait again), -ETIMEDOUT when the timeout (ms; < 0 infinite) expires.
 */
LFP_INLINE int lfp_wait(struct lfp_wait *ws, int timeout)
{
	int64_t deadline;
	int ret, spin;

	if (!ws || ws->fid.fclass != LFP_CLASS_WAIT)
		return -EINVAL;
	deadline = lfp__deadline(timeout);
	for (;;) {
		if (lfp__wait_ready(ws))
			return 0;
		/* No spin when the check is a system call (polling fds).
		 * nfds is read under the lock that add_fd/del_fd hold (H:
		 * without it, the data race ThreadSanitizer reports). */
		if (!LFP__BROKEN("H"))
			pthread_mutex_lock(&ws->core.lock);
		spin = ws->nfds && lfp__wait_polls(ws) ? 0 : LFP_SPIN_COUNT;
		if (!LFP__BROKEN("H"))
			pthread_mutex_unlock(&ws->core.lock);
		ret = lfp__signal_wait_spin(&ws->sig, lfp__wait_ready, ws, deadline,
		                            spin);
		if (ret == -ETIMEDOUT && (lfp__wait_ready(ws) ||
		                          lfp__wait_fds_ready_at_deadline(ws)))
			return 0; /* work arrived with the deadline */
		if (ret < 0)
			return ret;
		/* 0: the check found work (and, for a counter, consumed its
		 * change: return now or it is lost).  1: woke from the native
		 * object; a set that polls "wakes" after every yield, so it
		 * checks again. */
		if (ret == 0 || !lfp__wait_polls(ws))
			return 0;
		if (timeout == 0)
			return -ETIMEDOUT;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_WAIT_H */
