/*
 * lfpoll internal: the POLLFD wait object kind, for wait sets only.  Do not
 * include directly.
 *
 * A POLLFD set is an FD set (internal/wait_fd.h: the same eventfd, posts,
 * drains and sleeps on the set's epoll fd) that hands its waiters the fds
 * themselves instead of the epoll fd: LFP_GETWAIT fills a struct
 * lfp_wait_pollfd from the set's change_index-tracked array (pollfd.h),
 * whose first entry is the set's eventfd.  So it is its own kind only in
 * what it answers: every other op is FD's.  Queues cannot use it
 * (LFP__KIND_SET_ONLY): a queue has no array of fds.
 */
#ifndef LFPOLL_INTERNAL_WAIT_POLLFD_H
#define LFPOLL_INTERNAL_WAIT_POLLFD_H

#include "wait_fd.h"
#include "../pollfd.h"

#ifdef __cplusplus
extern "C" {
#endif

LFP_INLINE int lfp__wait_pollfd_getwait(struct lfp__signal *s,
                                        struct lfp_pollfds *fds, void *arg)
{
	(void)s;
	return lfp_pollfds_get(fds, (struct lfp_wait_pollfd *)arg);
}

static const struct lfp__wait_kind lfp__wait_pollfd = {
	LFP_WAIT_POLLFD, LFP__KIND_SET_ONLY, LFP__ARMED_BIT,
	lfp__wait_fd_init, lfp__wait_fd_fini, lfp__wait_fd_post,
	lfp__wait_fd_drain, lfp__wait_fd_sleep, lfp__wait_pollfd_getwait
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_POLLFD_H */
