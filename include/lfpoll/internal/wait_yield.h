/*
 * lfpoll internal: the YIELD wait object kind.  Do not include directly.
 *
 * No native object: a waiter re-checks its sources, yielding the CPU
 * between checks, and never arms, so producers never wake anyone and make
 * no call for it.  LFP_GETWAIT has nothing to give (-ENODATA).  A wait set
 * of this kind looks at its external fds with a poll of timeout 0 in its
 * re-check (wait.h).
 */
#ifndef LFPOLL_INTERNAL_WAIT_YIELD_H
#define LFPOLL_INTERNAL_WAIT_YIELD_H

#include "signal.h"

#include <sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/* W4: one yield; the caller re-checks. */
LFP_INLINE int lfp__wait_yield_sleep(struct lfp__signal *s, int64_t deadline)
{
	(void)s;
	/* sched_yield is no cancellation point: this sleep is one. */
	if (!LFP__BROKEN("Q"))
		pthread_testcancel();
	sched_yield();
	return lfp__expired(deadline) ? -ETIMEDOUT : 0;
}

LFP_INLINE int lfp__wait_yield_getwait(struct lfp__signal *s,
                                       struct lfp_pollfds *fds, void *arg)
{
	(void)s;
	(void)fds;
	(void)arg;
	return -ENODATA;
}

static const struct lfp__wait_kind lfp__wait_yield = {
	LFP_WAIT_YIELD, LFP__KIND_POLLS, LFP__ARMED_COND_BIT,
	lfp__wait_none_init, lfp__wait_none_fini, lfp__wait_none_wake,
	lfp__wait_none_drain, lfp__wait_yield_sleep, lfp__wait_yield_getwait
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_YIELD_H */
