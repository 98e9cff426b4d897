/*
 * lfpoll wait set: one wait object shared by many EQs, CQs and counters
 * (opened with wait_obj = LFP_WAIT_SET) and by external file descriptors
 * (lfp_wait_add_fd, e.g. verbs completion channels).
 *
 * Members signal the set's lfp__signal with the protocol of signal.h, so
 * producers make no system call while nobody waits on the set.
 *   FD       one fd for the whole set (an epoll fd over the set's eventfd and
 *            the external fds), usable in select, poll and epoll.
 *   POLLFD   the same fds as a change_index-tracked pollfd array (pollfd.h).
 *   MUTEX_COND, YIELD, UNSPEC (= FD).  MUTEX_COND takes no external fds.
 * Membership changes take a mutex; producers never do.
 */
#ifndef LFPOLL_WAIT_H
#define LFPOLL_WAIT_H

#include "common.h"
#include "pollfd.h"
#include "internal/member.h"

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
	struct lfp__set_core core;    /* &sig, the members, the lock */
	enum lfp_wait_obj wait_obj;   /* FD, POLLFD, MUTEX_COND or YIELD */
	int epfd;                     /* FD, POLLFD: epoll over eventfd + fds */
	size_t nfds;                  /* external fds, under core.lock */
	struct lfp_pollfds pollfds;   /* the set's eventfd (FD/POLLFD) + external fds */
	struct pollfd *scratch;       /* YIELD: external fds polled by lfp_wait */
	size_t scratch_cap;
};

LFP_INLINE struct lfp__signal *lfp__wait_signal(struct lfp_wait *ws)
{
	return &ws->sig;
}

/* YIELD sets: whether an external fd is ready; called with the lock held. */
LFP_INLINE int lfp__wait_fds_ready(struct lfp_wait *ws)
{
	struct lfp_wait_pollfd w;
	int c, n;

	if (ws->nfds == 0)
		return 0;
	w.nfds = ws->scratch_cap;
	w.fd = ws->scratch;
	if (lfp_pollfds_get(&ws->pollfds, &w) != 0)
		return 1; /* cannot look: report possible work */
	c = lfp__nocancel_begin(); /* a look, not a sleep; the lock is held */
	n = poll(ws->scratch, w.nfds, 0);
	lfp__nocancel_end(c);
	return n > 0;
}

/* Whether any member has work (W3 for the set). */
LFP_INLINE int lfp__wait_ready(void *arg)
{
	struct lfp_wait *ws = (struct lfp_wait *)arg;
	struct lfp__wait_member *m;
	int ready = 0;

	uint64_t ev;

	pthread_mutex_lock(&ws->core.lock);
	for (m = ws->core.head.next; m != &ws->core.head && !ready; m = m->next) {
		if (m->fid->ops->events) {
			/* Reported once per change.  Relaxed: seen is also
			 * reset by a counter's add/set; a lost race there
			 * only costs a false positive. */
			ev = m->fid->ops->events(m->fid);
			ready = ev != lfp__ld_rlx_u64(&m->seen);
			lfp__st_rlx_u64(&m->seen, ev);
		} else {
			ready = m->fid->ops->ready && m->fid->ops->ready(m->fid) > 0;
		}
	}
	if (!ready && ws->wait_obj == LFP_WAIT_YIELD)
		ready = lfp__wait_fds_ready(ws);
	pthread_mutex_unlock(&ws->core.lock);
	return ready;
}

LFP_INLINE int lfp__wait_trywait(struct lfp_wait *ws)
{
	return lfp__signal_trywait(&ws->sig, lfp__wait_ready, ws);
}

LFP_INLINE int lfp__wait_trywait_fid(struct lfp_fid *fid)
{
	return lfp__wait_trywait((struct lfp_wait *)(void *)fid);
}

LFP_INLINE int lfp__wait_control(struct lfp_fid *fid, int command, void *arg)
{
	struct lfp_wait *ws = (struct lfp_wait *)(void *)fid;
	int ret;

	if (arg && command == LFP__GETCORE) { /* a member joining (member.h) */
		*(struct lfp__set_core **)arg = &ws->core;
		return 0;
	}
	ret = lfp__control_begin(ws->wait_obj, command, arg);
	if (ret != 1)
		return ret;
	if (ws->wait_obj == LFP_WAIT_POLLFD)
		return lfp_pollfds_get(&ws->pollfds, (struct lfp_wait_pollfd *)arg);
	return lfp__signal_getwait(&ws->sig, command, arg);
}

LFP_INLINE int lfp_wait_close(struct lfp_wait *ws);

LFP_INLINE int lfp__wait_close_fid(struct lfp_fid *fid)
{
	return lfp_wait_close((struct lfp_wait *)(void *)fid);
}

static const struct lfp_fid_ops lfp__wait_ops = {
	lfp__wait_close_fid, lfp__wait_control, lfp__wait_trywait_fid, NULL,
	NULL, NULL
};

/*
 * Open a wait set.  attr NULL or wait_obj UNSPEC: FD.  NONE and SET are
 * -EINVAL; flags must be 0.
 */
LFP_INLINE int lfp_wait_open(const struct lfp_wait_attr *attr,
                             struct lfp_wait **wsp)
{
	struct lfp_wait *ws;
	struct epoll_event ev;
	enum lfp_wait_obj obj = attr ? attr->wait_obj : LFP_WAIT_UNSPEC;
	void *p;
	int ret;

	if (!wsp)
		return -EINVAL;
	*wsp = NULL; /* written on every path (see lfp__neg_errno) */
	if (attr && attr->flags)
		return -EINVAL;
	if (obj == LFP_WAIT_UNSPEC)
		obj = LFP__WAIT_UNSPEC_IS;
	if (obj != LFP_WAIT_FD && obj != LFP_WAIT_POLLFD &&
	    obj != LFP_WAIT_MUTEX_COND && obj != LFP_WAIT_YIELD)
		return -EINVAL;
	if (posix_memalign(&p, LFP_CACHELINE_PAIR, sizeof(*ws)))
		return -ENOMEM;
	ws = (struct lfp_wait *)p;
	memset(ws, 0, sizeof(*ws));
	ws->epfd = -1;
	ws->fid.fclass = LFP_CLASS_WAIT;
	ws->fid.abi = LFP_ABI_VERSION;
	ws->fid.ops = &lfp__wait_ops;
	ws->wait_obj = obj;
	ws->core.head.next = ws->core.head.prev = &ws->core.head;
	ws->core.sig = &ws->sig;
	ret = lfp__signal_init(&ws->sig, obj == LFP_WAIT_POLLFD ? LFP_WAIT_FD : obj);
	if (ret)
		goto fail_free;
	ret = lfp_pollfds_init(&ws->pollfds);
	if (ret)
		goto fail_sig;
	if (pthread_mutex_init(&ws->core.lock, NULL)) {
		ret = -ENOMEM;
		goto fail_pollfds;
	}
	if (ws->sig.wait_obj == LFP_WAIT_FD) {
		ws->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (ws->epfd < 0) {
			ret = lfp__neg_errno();
			goto fail_lock;
		}
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.fd = ws->sig.efd;
		if (epoll_ctl(ws->epfd, EPOLL_CTL_ADD, ws->sig.efd, &ev)) {
			ret = lfp__neg_errno();
			goto fail_ep;
		}
		ret = lfp_pollfds_add(&ws->pollfds, ws->sig.efd, POLLIN, ws);
		if (ret)
			goto fail_ep;
		/* Waiters sleep on the epoll fd: the eventfd or any external
		 * fd wakes them.  They all test lfp__wait_ready, so they may
		 * share the eventfd's drain (signal.h). */
		lfp__signal_sleep_on_fd(&ws->sig, ws->epfd);
	}
	*wsp = ws;
	return 0;
fail_ep:
	lfp__close_nocancel(ws->epfd);
fail_lock:
	pthread_mutex_destroy(&ws->core.lock);
fail_pollfds:
	lfp_pollfds_fini(&ws->pollfds);
fail_sig:
	lfp__signal_fini(&ws->sig);
fail_free:
	free(ws);
	return ret;
}

/* -EBUSY while objects or external fds are members. */
LFP_INLINE int lfp_wait_close(struct lfp_wait *ws)
{
	size_t busy;

	if (!ws)
		return -EINVAL;
	pthread_mutex_lock(&ws->core.lock);
	busy = ws->core.nmembers + ws->nfds;
	pthread_mutex_unlock(&ws->core.lock);
	if (busy)
		return -EBUSY;
	if (ws->epfd >= 0)
		lfp__close_nocancel(ws->epfd);
	pthread_mutex_destroy(&ws->core.lock);
	lfp_pollfds_fini(&ws->pollfds);
	lfp__signal_fini(&ws->sig);
	free(ws->scratch);
	free(ws);
	return 0;
}

/*
 * Add an external fd (readable or writable per events, as for poll(2)).
 * FD and POLLFD sets also see it in LFP_GETWAIT (the epoll fd, or the pollfd
 * array with its change_index bumped).  -EEXIST when present; -EINVAL on a
 * MUTEX_COND set, which cannot wait on fds.
 */
LFP_INLINE int lfp_wait_add_fd(struct lfp_wait *ws, int fd, short events,
                               void *context)
{
	struct epoll_event ev;
	struct pollfd *s;
	int ret;

	if (!ws || fd < 0 || ws->wait_obj == LFP_WAIT_MUTEX_COND)
		return -EINVAL;
	pthread_mutex_lock(&ws->core.lock);
	/* Everything that can fail first: a failed add leaves the pollfd
	 * array and its change_index untouched. */
	if (ws->nfds + 1 > ws->scratch_cap) {
		s = (struct pollfd *)realloc(ws->scratch,
		                             (ws->nfds + 1) * 2 * sizeof(*s));
		if (!s) {
			ret = -ENOMEM;
			goto out;
		}
		ws->scratch = s;
		ws->scratch_cap = (ws->nfds + 1) * 2;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = (uint32_t)(unsigned short)events; /* EPOLLIN == POLLIN etc. */
	ev.data.ptr = context;
	if (fd == ws->sig.efd) {
		ret = -EEXIST;
		goto out;
	}
	if (ws->epfd >= 0 && epoll_ctl(ws->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = lfp__neg_errno();
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
	struct epoll_event ev;
	int ret;

	if (!ws)
		return -EINVAL;
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
	int ret, woke = 0, spin;

	if (!ws || ws->fid.fclass != LFP_CLASS_WAIT)
		return -EINVAL;
	deadline = lfp__deadline(timeout);
	for (;;) {
		if (lfp__wait_ready(ws))
			return 0;
		/* No spin when the check is a system call (YIELD with fds).
		 * nfds is read under the lock that add_fd/del_fd hold. */
		pthread_mutex_lock(&ws->core.lock);
		spin = ws->nfds && ws->wait_obj == LFP_WAIT_YIELD ? 0 : LFP_SPIN_COUNT;
		pthread_mutex_unlock(&ws->core.lock);
		ret = lfp__signal_wait_spin(&ws->sig, lfp__wait_ready, ws, deadline,
		                            spin, &woke);
		if (ret == -ETIMEDOUT && lfp__wait_ready(ws))
			return 0; /* work arrived with the deadline */
		if (ret < 0)
			return ret;
		/* 0: the check found work (and, for a counter, consumed its
		 * change: return now or it is lost).  1: woke from the native
		 * object; YIELD "wakes" after every yield, so it checks again. */
		if (ret == 0 || ws->wait_obj != LFP_WAIT_YIELD)
			return 0;
		if (timeout == 0)
			return -ETIMEDOUT;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_WAIT_H */
