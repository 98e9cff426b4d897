/*
 * lfpoll internal: deadlines on the monotonic clock, for the blocking calls.
 * Do not include directly; the public headers include it.
 */
#ifndef LFPOLL_INTERNAL_TIME_H
#define LFPOLL_INTERNAL_TIME_H

#include "../common.h"

#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

LFP_INLINE int64_t lfp__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A deadline on the monotonic clock; -1 for an infinite timeout (< 0). */
LFP_INLINE int64_t lfp__deadline(int timeout_ms)
{
	if (timeout_ms < 0)
		return -1;
	return lfp__now_ns() + (int64_t)timeout_ms * 1000000;
}

/* Milliseconds left until the deadline for poll(2), rounded up; -1: none. */
LFP_INLINE int lfp__ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - lfp__now_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

LFP_INLINE int lfp__expired(int64_t deadline)
{
	return deadline >= 0 && lfp__now_ns() >= deadline;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_TIME_H */
