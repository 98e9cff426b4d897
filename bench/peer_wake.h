/*
 * bench/peer_wake.h: the floors of a blocking wake, the same ping-pong
 * message written directly with each primitive: an eventfd waited on with
 * poll (the floor of lfpoll's FD wait object), a futex word, a condition
 * variable.  Each is one direction of a channel carrying a 64-bit value.
 */
#ifndef LFPOLL_BENCH_PEER_WAKE_H
#define LFPOLL_BENCH_PEER_WAKE_H

#include "harness.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum wake_kind { WAKE_EFD, WAKE_FUTEX, WAKE_COND };

struct wake_chan {
	int efd;                /* WAKE_EFD */
	uint32_t fw;            /* WAKE_FUTEX: the futex word */
	pthread_mutex_t m;      /* WAKE_COND */
	pthread_cond_t cv;
	uint64_t cseq, seen;
	uint64_t val;           /* the message */
};

/* 0, or bench_fail().  wake_close may follow either. */
static inline int wake_open(struct wake_chan *k, enum wake_kind kind)
{
	pthread_condattr_t ca;

	memset(k, 0, sizeof(*k));
	k->efd = -1;
	if (kind == WAKE_EFD) {
		k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (k->efd < 0)
			return bench_fail("eventfd: %s", strerror(errno));
	} else if (kind == WAKE_COND) {
		if (pthread_condattr_init(&ca))
			return bench_fail("pthread_condattr_init failed");
		if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
		    pthread_mutex_init(&k->m, NULL) ||
		    pthread_cond_init(&k->cv, &ca)) {
			pthread_condattr_destroy(&ca);
			return bench_fail("condvar init failed");
		}
		pthread_condattr_destroy(&ca);
	}
	return 0;
}

static inline void wake_close(struct wake_chan *k, enum wake_kind kind)
{
	if (k->efd >= 0)
		close(k->efd);
	k->efd = -1;
	if (kind == WAKE_COND) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->m);
	}
}

/* Send v: 0, or bench_fail(). */
static inline int wake_send(struct wake_chan *k, enum wake_kind kind,
                            uint64_t v)
{
	uint64_t one = 1;

	switch (kind) {
	case WAKE_EFD:
		__atomic_store_n(&k->val, v, __ATOMIC_RELEASE);
		if (write(k->efd, &one, sizeof(one)) != sizeof(one))
			return bench_fail("eventfd write: %s", strerror(errno));
		return 0;
	case WAKE_FUTEX:
		__atomic_store_n(&k->val, v, __ATOMIC_RELAXED);
		__atomic_store_n(&k->fw, 1, __ATOMIC_RELEASE);
		if (syscall(SYS_futex, &k->fw, FUTEX_WAKE_PRIVATE, 1, NULL,
		            NULL, 0) < 0)
			return bench_fail("FUTEX_WAKE: %s", strerror(errno));
		return 0;
	case WAKE_COND:
		pthread_mutex_lock(&k->m);
		k->val = v;
		k->cseq++;
		pthread_cond_signal(&k->cv);
		pthread_mutex_unlock(&k->m);
		return 0;
	}
	return -1;
}

/* One blocking receive of at most timeout_ms: 1 with *v, 0 when the
 * timeout expired, or < 0. */
static inline int wake_recv_once(struct wake_chan *k, enum wake_kind kind,
                                 uint64_t *v, int timeout_ms)
{
	struct timespec ts;
	struct pollfd pfd;
	uint64_t x;
	int ret;

	switch (kind) {
	case WAKE_EFD:
		pfd = (struct pollfd){ .fd = k->efd, .events = POLLIN };
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno != EINTR)
			return bench_fail("poll: %s", strerror(errno));
		if (ret <= 0)
			return 0;
		if (read(k->efd, &x, sizeof(x)) != sizeof(x)) {
			if (errno == EAGAIN)
				return 0;
			return bench_fail("eventfd read: %s", strerror(errno));
		}
		*v = __atomic_load_n(&k->val, __ATOMIC_ACQUIRE);
		return 1;
	case WAKE_FUTEX:
		ts = (struct timespec){ timeout_ms / 1000,
		                        (timeout_ms % 1000) * 1000000L };
		while (!__atomic_load_n(&k->fw, __ATOMIC_ACQUIRE)) {
			if (syscall(SYS_futex, &k->fw, FUTEX_WAIT_PRIVATE, 0,
			            &ts, NULL, 0) < 0) {
				if (errno == ETIMEDOUT)
					return 0;
				if (errno != EAGAIN && errno != EINTR)
					return bench_fail("FUTEX_WAIT: %s",
					                  strerror(errno));
			}
		}
		__atomic_store_n(&k->fw, 0, __ATOMIC_RELAXED);
		*v = __atomic_load_n(&k->val, __ATOMIC_RELAXED);
		return 1;
	case WAKE_COND:
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ret = 0;
		pthread_mutex_lock(&k->m);
		while (k->cseq == k->seen && ret == 0)
			ret = pthread_cond_timedwait(&k->cv, &k->m, &ts);
		if (k->cseq != k->seen) {
			k->seen = k->cseq;
			*v = k->val;
			ret = 1;
		} else {
			ret = 0;
		}
		pthread_mutex_unlock(&k->m);
		return ret;
	}
	return -1;
}

#endif /* LFPOLL_BENCH_PEER_WAKE_H */
