/*
 * lfpoll internal: the FD wait object kind.  Do not include directly.
 *
 * The native object is an eventfd (non-blocking, close-on-exec): trywait's
 * waiters (before the application's own poll on LFP_GETWAIT) arm
 * LFP__ARMED and poll it, and a producer's P4 posts it.  An FD object's
 * own blocking calls sleep on the condition variable it also has, so the
 * eventfd serves only trywait and the application's poll (docs/design.md
 * 2.2).  A wait set of this kind sleeps on an epoll fd over the eventfd and
 * its external fds instead (wait.h), and LFP_GETWAIT gives that fd.
 *
 * The eventfd stays readable from a post until a trywait drains it, so every
 * thread polling it wakes (poll is level-triggered).  A post adds to PENDING
 * before it writes the eventfd and a drain subtracts what it read, so the
 * eventfd counter never exceeds PENDING: W1 makes no system call when
 * PENDING is 0 (docs/design.md 2.4).
 */
#ifndef LFPOLL_INTERNAL_WAIT_FD_H
#define LFPOLL_INTERNAL_WAIT_FD_H

#include "signal.h"

#include <sys/eventfd.h>

#ifdef __cplusplus
extern "C" {
#endif

LFP_INLINE int lfp__wait_fd_init(struct lfp__signal *s)
{
	int ret = lfp__signal_cond_init(s);

	if (ret)
		return ret;
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0) {
		ret = lfp__neg_errno();
		lfp__signal_cond_fini(s);
		return ret;
	}
	s->sleep_fd = s->efd;
	return 0;
}

LFP_INLINE void lfp__wait_fd_fini(struct lfp__signal *s)
{
	if (s->efd >= 0)
		lfp__close_nocancel(s->efd);
	lfp__signal_cond_fini(s);
}

/*
 * Announce a post (PENDING += 1), then write the eventfd.  Announcing first
 * keeps the eventfd counter at or below PENDING at every instant, so a
 * waiter that finds PENDING at 0 may skip its drain: the fd is not
 * readable.  (The opposite order let a producer preempted between the two
 * leave a readable fd that every waiter skipped, spinning in poll.)
 */
LFP_INLINE void lfp__wait_fd_post(struct lfp__signal *s)
{
	uint64_t one = 1;
	ssize_t n;
	int c;

	if (!LFP__BROKEN("N"))
		(void)lfp__faa_u32(&s->state, LFP__PENDING_ONE);
	LFP__SCHED("signal.post.announced", s);
	/* Non-blocking eventfd: never blocks; EAGAIN only at a counter of
	 * 2^64-2, which is readable already.  A cancellation acted on here
	 * would leave the post announced and never written: a sleeper owed
	 * it would sleep on. */
	c = lfp__nocancel_begin();
	do
		n = write(s->efd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	lfp__nocancel_end(c);
	if (LFP__BROKEN("N")) /* announced after the write */
		(void)lfp__faa_u32(&s->state, LFP__PENDING_ONE);
}

/*
 * W1's read.  Invariant: eventfd counter <= PENDING (posts add before
 * writing; a drain subtracts only what its read returned).  PENDING > 0
 * with nothing to read means a post is between its announcement and its
 * write, or another drainer is between its read and its subtraction: the
 * read finds nothing, costs one system call, and leaves a fd that is not
 * readable, which is what a sleeper needs.  No interleaving of posts and
 * drains can leave the fd readable with PENDING at 0.
 */
LFP_INLINE int lfp__wait_fd_drain(struct lfp__signal *s)
{
	uint64_t v;
	ssize_t n;
	int c;

	/* Not a cancellation point: a drain must be accounted, and restored
	 * when its re-check finds work. */
	c = lfp__nocancel_begin();
	do
		n = read(s->efd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	lfp__nocancel_end(c);
	if (n != (ssize_t)sizeof(v))
		return 0;
	LFP__SCHED("signal.W1.read", s);
	/* Every count we read was announced first: no underflow. */
	(void)lfp__faa_u32(&s->state, (uint32_t)0 - (uint32_t)v * LFP__PENDING_ONE);
	return 1;
}

/*
 * W4 on sleep_fd (the eventfd, or a wait set's epoll fd).  The deadline is
 * checked after every wake, so a fd kept readable cannot stretch a
 * timeout.
 */
LFP_INLINE int lfp__wait_fd_sleep(struct lfp__signal *s, int64_t deadline)
{
	struct pollfd pfd;
	int n;

	pfd.fd = s->sleep_fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	n = poll(&pfd, 1, lfp__ms_left(deadline));
	if (n < 0 && errno != EINTR)
		return lfp__neg_errno();
	if (lfp__expired(deadline))
		return -ETIMEDOUT;
	return n > 0 ? 1 : 0;
}

/* The fd to poll: the eventfd, or a wait set's epoll fd. */
LFP_INLINE int lfp__wait_fd_getwait(struct lfp__signal *s, struct lfp_pollfds *fds,
                                    void *arg)
{
	(void)fds;
	*(int *)arg = s->sleep_fd;
	return 0;
}

static const struct lfp__wait_kind lfp__wait_fd = {
	LFP_WAIT_FD, 0, LFP__ARMED_BIT,
	lfp__wait_fd_init, lfp__wait_fd_fini, lfp__wait_fd_post,
	lfp__wait_fd_drain, lfp__wait_fd_sleep, lfp__wait_fd_getwait
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_FD_H */
