/*
 * lfpoll internal: the MUTEX_COND wait object kind.  Do not include
 * directly.
 *
 * The native object is the signal's own mutex and condition variable,
 * which LFP_GETWAIT hands out (struct lfp_mutex_cond).  Every waiter is a
 * condition sleeper: trywait arms LFP__ARMED_COND, and a producer's P4
 * bumps the sequence and broadcasts under the mutex (signal.h), so the
 * application that holds the mutex across lfp_trywait and
 * pthread_cond_wait cannot miss it (docs/design.md 2.6).  Nothing is
 * posted: no wake, no drain.  A wait set of this kind takes no external
 * fds: a condition variable cannot wait on them.
 */
#ifndef LFPOLL_INTERNAL_WAIT_MUTEX_COND_H
#define LFPOLL_INTERNAL_WAIT_MUTEX_COND_H

#include "signal.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * W4 off the condition: never called, since every waiter of this kind
 * sleeps on the condition (cond_sleep is always set).  A spurious wake is
 * what the protocol allows.
 */
LFP_INLINE int lfp__wait_mutex_cond_sleep(struct lfp__signal *s, int64_t deadline)
{
	(void)s;
	(void)deadline;
	return 0;
}

LFP_INLINE int lfp__wait_mutex_cond_getwait(struct lfp__signal *s,
                                            struct lfp_pollfds *fds, void *arg)
{
	struct lfp_mutex_cond *mc = (struct lfp_mutex_cond *)arg;

	(void)fds;
	mc->mutex = &s->mutex;
	mc->cond = &s->cond;
	return 0;
}

static const struct lfp__wait_kind lfp__wait_mutex_cond = {
	LFP_WAIT_MUTEX_COND, 0, LFP__ARMED_COND_BIT,
	lfp__signal_cond_init, lfp__signal_cond_fini, lfp__wait_none_wake,
	lfp__wait_none_drain, lfp__wait_mutex_cond_sleep,
	lfp__wait_mutex_cond_getwait
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_MUTEX_COND_H */
