/*
 * An FD-mode CQ's own wait object, its mirror: an epoll fd
 * (level-triggered) watching the channel fd and an eventfd of the CQ.  The
 * eventfd is written when another CQ credits this one, and read by this
 * CQ's trywait before it looks at anything, so the mirror is readable while
 * the channel holds an unread event (which may be this CQ's) or an event
 * was credited to this CQ since its last trywait.  A trywait that took such
 * a wake and finds work puts it back (a post), for the CQ's other waiters,
 * as lfpoll's own trywait does.
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/*
 * The mirror of v, watching v's channel fd and a new eventfd.  0 or -errno;
 * on failure lfp_verbs__mirror_close frees what was made.
 */
int lfp_verbs__mirror_open(struct vcq *v)
{
	struct epoll_event ev;

	v->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (v->evfd < 0)
		return neg_errno();
	v->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (v->epfd < 0)
		return neg_errno();
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = v->channel->fd;
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->channel->fd, &ev))
		return neg_errno();
	ev.data.fd = v->evfd;
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->evfd, &ev))
		return neg_errno();
	return 0;
}

void lfp_verbs__mirror_close(struct vcq *v)
{
	if (v->epfd >= 0)
		(void)close(v->epfd);
	if (v->evfd >= 0)
		(void)close(v->evfd);
	v->epfd = v->evfd = -1;
}

/*
 * Another CQ credited v: make v's mirror readable.  Never blocks.  The
 * post is announced (posts += 1) before the write, so the eventfd's counter
 * never exceeds posts: an owner that finds posts at 0 may skip its read,
 * the eventfd is not readable (the protocol of lfpoll's own eventfd
 * signal).
 */
void lfp_verbs__mirror_post(struct vcq *v)
{
	uint64_t one = 1;
	ssize_t n;

	/* Full-barrier RMW, after the credit's count: pairs with the relaxed
	 * load in mirror_clear (which only decides whether to read). */
	(void)atomic_fetch_add(&v->posts, 1);
	/* EAGAIN only at a counter of 2^64-2, which is readable already. */
	do
		n = write(v->evfd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/*
 * The first step of v's trywait: clear its credit notification, before it
 * looks at the channel, the credits or the CQ.  A credit whose post this
 * read consumed was counted before the post, so the look that follows sees
 * it; a later post leaves the mirror readable.  Only the owner reads the
 * eventfd, under its lock, and subtracts what the read returned.  Returns
 * whether it consumed a post (a wake that trywait may have to put back).
 * Lock held.
 */
int lfp_verbs__mirror_clear(struct vcq *v)
{
	uint64_t cnt;
	ssize_t n;

	/* Relaxed: a stale 0 only skips a read of a readable eventfd, so the
	 * sleep that follows returns at once and the next trywait reads it
	 * (one lap, never a lost wake); a stale non-zero costs one read. */
	if (!atomic_load_explicit(&v->posts, memory_order_relaxed))
		return 0;
	do
		n = read(v->evfd, &cnt, sizeof(cnt));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(cnt))
		return 0;
	/* Relaxed: posts is a count, not a publication; what orders the
	 * credits whose posts were read is the eventfd itself (each was
	 * announced, after its count, before its write). */
	(void)atomic_fetch_sub_explicit(&v->posts, (uint32_t)cnt,
	                                memory_order_relaxed);
	return 1;
}
