/*
 * lfpoll internal: the wait/wake primitive behind every wait object, and the
 * trywait protocol.  Do not include directly.  docs/design.md holds the proof; the labels P1..P4 and
 * W1..W4 below are the ones it uses.
 *
 * One word, state, holds two armed bits and, above them, PENDING (FD only:
 * eventfd posts announced and not yet drained).
 *
 *   ARMED       a waiter on the eventfd (trywait before the application's
 *               own poll, or lfp_wait on a wait set) needs the next event
 *               to post the eventfd.
 *   ARMED_COND  a waiter sleeps on the condition variable: lfp_eq_sread,
 *               lfp_cq_sread and lfp_cntr_wait on an object with its own FD
 *               or MUTEX_COND wait object, and every MUTEX_COND waiter.
 *
 *   producer                              waiter
 *   P1 publish the event (release)        W1 eventfd waiters: drain the fd
 *   P2 full barrier                       W2 set its armed bit (RMW), barrier
 *   P3 load state                         W3 re-check its condition
 *   P4 if armed: clear both bits (RMW);   W4 if it does not hold: sleep on
 *      post the eventfd and/or bump          the eventfd (poll), or on the
 *      the condition's sequence and          condition until its sequence
 *      broadcast, per the bits cleared       moves
 *
 * P2 and W2 form a store-buffering (Dekker) pair: either the producer sees
 * the waiter's bit at P3 and signals, or the waiter's re-check at W3 sees
 * the event.  The bits are cleared by the one producer that signals, so a
 * run of events with waiters asleep costs one wake, and with nobody armed
 * producers make no system call: P2 is a locked add on a private stack word
 * and P3 a plain load of a line that only waiters write.
 *
 * Waiters with different conditions.  A condition-variable wake is a
 * broadcast that nobody consumes: every sleeper whose sequence snapshot is
 * older wakes, re-checks its own condition (a threshold, a signal count)
 * and sleeps again if it does not hold.  The eventfd is different: W1
 * drains it, so one waiter's drain can take the wake another needed.  That
 * is safe only because every waiter that drains a given eventfd tests the
 * same condition (an object's trywait readiness; a wait set's "any member
 * ready"): a drainer that finds work puts the post back for the others
 * (restore), and one that finds none leaves nothing that any other waiter
 * could be owed.  This is why the blocking calls with thresholds never
 * sleep on the eventfd.
 *
 * The eventfd stays readable from a post until a trywait drains it, so every
 * thread polling it wakes (poll is level-triggered).  A post adds to PENDING
 * before it writes the eventfd and a drain subtracts what it read, so the
 * eventfd counter never exceeds PENDING: W1 makes no system call when
 * PENDING is 0.
 */
#ifndef LFPOLL_INTERNAL_SIGNAL_H
#define LFPOLL_INTERNAL_SIGNAL_H

#include "../common.h"
#include "time.h"

#include <sched.h>
#include <unistd.h>
#include <sys/eventfd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LFP__ARMED_BIT      0u
#define LFP__ARMED          (1u << LFP__ARMED_BIT)
#define LFP__ARMED_COND_BIT 1u
#define LFP__ARMED_COND     (1u << LFP__ARMED_COND_BIT)
#define LFP__ARMED_ANY      (LFP__ARMED | LFP__ARMED_COND)
/* The rest of state counts eventfd posts announced and not yet drained. */
#define LFP__PENDING_ONE    (1u << 2)
#define LFP__PENDING        (~LFP__ARMED_ANY)

/* Bounded spin before a waiter arms and sleeps (iterations of a pause). */
#ifndef LFP_SPIN_COUNT
#  define LFP_SPIN_COUNT 128
#endif

/*
 * The wait object UNSPEC resolves to: FD, because it also serves the
 * application's own poll/epoll loop through LFP_GETWAIT, and its blocking
 * round trip is within the noise of MUTEX_COND's on this class of machine
 * (see docs/performance.md).
 */
#define LFP__WAIT_UNSPEC_IS LFP_WAIT_FD

struct lfp__signal {
	/* Written by waiters (W2) and by the signalling producer (P4);
	 * read by every producer (P3).  Alone on its line pair. */
	uint32_t state;
	char lfp__pad0[LFP_CACHELINE_PAIR - sizeof(uint32_t)];
	enum lfp_wait_obj wait_obj;     /* FD, MUTEX_COND or YIELD */
	int efd;                        /* FD: the eventfd */
	int sleep_fd;                   /* FD: what waiters poll (efd, or a set's epoll fd) */
	/* Whether the blocking calls sleep on the condition variable (an own
	 * FD or MUTEX_COND object) rather than on sleep_fd (a wait set). */
	int cond_sleep;
	pthread_mutex_t mutex;          /* FD and MUTEX_COND */
	pthread_cond_t cond;
	uint64_t cond_seq;              /* bumped under mutex by each cond wake */
	/* Producer-side signals sent, counted only when built with LFP_STATS;
	 * always present so that the layout does not depend on the macro
	 * (code built with it links against code built without). */
	uint64_t stat_signals;
};

/* ---------------------------------------------------------------- setup */

LFP_INLINE int lfp__signal_cond_init(struct lfp__signal *s)
{
	pthread_condattr_t ca;

	if (pthread_mutex_init(&s->mutex, NULL))
		return -ENOMEM;
	if (pthread_condattr_init(&ca)) {
		pthread_mutex_destroy(&s->mutex);
		return -ENOMEM;
	}
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&s->cond, &ca)) {
		pthread_condattr_destroy(&ca);
		pthread_mutex_destroy(&s->mutex);
		return -ENOMEM;
	}
	pthread_condattr_destroy(&ca);
	return 0;
}

/*
 * FD objects get the condition variable too: their own blocking calls sleep
 * on it, so the eventfd serves only trywait and the application's poll.
 * A wait set calls lfp__signal_sleep_on_fd afterwards to make its blocking
 * call sleep on its epoll fd instead.
 */
LFP_INLINE int lfp__signal_init(struct lfp__signal *s, enum lfp_wait_obj obj)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->efd = -1;
	s->sleep_fd = -1;
	if (obj == LFP_WAIT_UNSPEC)
		obj = LFP__WAIT_UNSPEC_IS;
	s->wait_obj = obj;
	switch (obj) {
	case LFP_WAIT_FD:
		ret = lfp__signal_cond_init(s);
		if (ret)
			return ret;
		s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (s->efd < 0) {
			ret = lfp__neg_errno();
			pthread_cond_destroy(&s->cond);
			pthread_mutex_destroy(&s->mutex);
			return ret;
		}
		s->sleep_fd = s->efd;
		s->cond_sleep = 1;
		return 0;
	case LFP_WAIT_MUTEX_COND:
		ret = lfp__signal_cond_init(s);
		if (ret)
			return ret;
		s->cond_sleep = 1;
		return 0;
	case LFP_WAIT_YIELD:
		return 0;
	default:
		return -EINVAL;
	}
}

/* A wait set's signal: blocking calls poll fd (the set's epoll fd). */
LFP_INLINE void lfp__signal_sleep_on_fd(struct lfp__signal *s, int fd)
{
	s->sleep_fd = fd;
	s->cond_sleep = 0;
}

LFP_INLINE void lfp__signal_fini(struct lfp__signal *s)
{
	if (s->wait_obj == LFP_WAIT_FD && s->efd >= 0)
		close(s->efd);
	if (s->wait_obj == LFP_WAIT_FD || s->wait_obj == LFP_WAIT_MUTEX_COND) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->mutex);
	}
	s->efd = s->sleep_fd = -1;
}

/* ---------------------------------------------------------------- producer */

/*
 * Announce a post (PENDING += 1), then write the eventfd.  Announcing first
 * keeps the eventfd counter at or below PENDING at every instant, so a
 * waiter that finds PENDING at 0 may skip its drain: the fd is not
 * readable.  (The opposite order let a producer preempted between the two
 * leave a readable fd that every waiter skipped, spinning in poll.)
 */
LFP_INLINE void lfp__signal_post(struct lfp__signal *s)
{
	uint64_t one = 1;
	ssize_t n;

	(void)lfp__faa_u32(&s->state, LFP__PENDING_ONE);
	LFP__SCHED("signal.post.announced", s);
	/* Non-blocking eventfd: never blocks; EAGAIN only at a counter of
	 * 2^64-2, which is readable already. */
	do
		n = write(s->efd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/* Wake every sleeper on the condition variable (a broadcast). */
LFP_INLINE void lfp__signal_broadcast(struct lfp__signal *s)
{
	/* Under the mutex, so a waiter between reading cond_seq and sleeping
	 * (it holds the mutex) cannot miss it. */
	pthread_mutex_lock(&s->mutex);
	s->cond_seq++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mutex);
}

/* P4: the slow path, taken only when a waiter is armed; out of line and
 * cold, so that no producer's call site holds a system call or a pthread
 * call. */
LFP_SLOW void lfp__signal_fire(struct lfp__signal *s)
{
	/* Only the producer that clears a bit wakes its waiters: a run of
	 * events with waiters asleep costs one wake.  Full-barrier RMW: it is
	 * after the W2 whose bit it clears, so the cond_seq bump below is
	 * after that waiter's snapshot (docs/design.md, "Waiters with
	 * different conditions"). */
	uint32_t old = lfp__fetch_clear_u32(&s->state, LFP__ARMED_ANY);

	if (!(old & LFP__ARMED_ANY))
		return;
	LFP__SCHED("signal.P4", s);
#ifdef LFP_STATS
	(void)lfp__faa_u64(&s->stat_signals, 1);
#endif
	if ((old & LFP__ARMED_COND) && s->cond_sleep)
		lfp__signal_broadcast(s);
	if ((old & LFP__ARMED) && s->wait_obj == LFP_WAIT_FD)
		lfp__signal_post(s);
}

/* P3-P4, for a producer that has passed P2 already (lfp__notify_all). */
LFP_INLINE void lfp__signal_check(struct lfp__signal *s)
{
	LFP__SCHED("signal.P3", s);
	if (LFP__UNLIKELY(lfp__ld_rlx_u32(&s->state) & LFP__ARMED_ANY)) /* P3 */
		lfp__signal_fire(s);
}

/*
 * P2-P4, called by every producer after publishing (P1).  With nobody armed
 * this is one private locked add and one load of a line that stays shared.
 */
LFP_INLINE void lfp__signal_notify(struct lfp__signal *s)
{
	LFP__SCHED("signal.P2", s);
	lfp__mb(); /* P2: pairs with W2 (lfp__mb_after_rmw) */
	lfp__signal_check(s);
}

/* ---------------------------------------------------------------- waiter */

/*
 * W1: clear the native object's notification.  Returns 1 when a
 * notification was drained (the caller puts it back with
 * lfp__signal_restore if the re-check finds work).
 *
 * Invariant: eventfd counter <= PENDING (posts add before writing; a drain
 * subtracts only what its read returned).  So PENDING == 0 means the fd is
 * not readable and W1 skips the read.  PENDING > 0 with nothing to read
 * means a post is between its announcement and its write, or another
 * drainer is between its read and its subtraction: the read finds nothing,
 * costs one system call, and leaves a fd that is not readable, which is
 * what a sleeper needs.  No interleaving of posts and drains can leave the
 * fd readable with PENDING at 0.
 *
 * force: the caller's last sleep ended on a readable fd: read even if our
 * load of state says 0 (a relaxed load may lag).
 */
LFP_INLINE int lfp__signal_clear(struct lfp__signal *s, int force)
{
	uint64_t v;
	ssize_t n;

	if (s->wait_obj != LFP_WAIT_FD)
		return 0;
	if (!force && !(lfp__ld_rlx_u32(&s->state) & LFP__PENDING))
		return 0;
	do
		n = read(s->efd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(v))
		return 0;
	LFP__SCHED("signal.W1.read", s);
	/* Every count we read was announced first: no underflow. */
	(void)lfp__faa_u32(&s->state, (uint32_t)0 - (uint32_t)v * LFP__PENDING_ONE);
	return 1;
}

/*
 * W2: announce the waiter (bit: LFP__ARMED_BIT for eventfd waiters,
 * LFP__ARMED_COND_BIT for condition sleepers), then order that before the
 * re-check (W3).
 */
LFP_INLINE void lfp__signal_arm(struct lfp__signal *s, unsigned bit)
{
	if (s->wait_obj == LFP_WAIT_YIELD)
		return; /* waiters poll the sources; producers need not know */
	(void)lfp__bts_u32(&s->state, bit);
	lfp__mb_after_rmw(); /* pairs with P2 */
	LFP__SCHED("signal.W2", s);
}

/* After W3 found work: hand a cleared notification back to other sleepers. */
LFP_INLINE void lfp__signal_restore(struct lfp__signal *s, int cleared)
{
	if (cleared && s->wait_obj == LFP_WAIT_FD)
		lfp__signal_post(s);
}

/*
 * W4 on the eventfd (or a wait set's epoll fd).  Returns 0 (go and
 * re-check), 1 (woke because the fd is readable: the next W1 must drain it)
 * or -ETIMEDOUT.  The deadline is checked after every wake, so a fd kept
 * readable cannot stretch a timeout.
 */
LFP_INLINE int lfp__signal_sleep_fd(struct lfp__signal *s, int64_t deadline)
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

/* The condition's sequence, read before arming (under the mutex). */
LFP_INLINE uint64_t lfp__signal_seq(struct lfp__signal *s)
{
	uint64_t v;

	pthread_mutex_lock(&s->mutex);
	v = s->cond_seq;
	pthread_mutex_unlock(&s->mutex);
	return v;
}

/*
 * W4 on the condition variable: until the sequence moves past seq0 or the
 * deadline passes.  0 or -ETIMEDOUT.
 */
LFP_INLINE int lfp__signal_sleep_cond(struct lfp__signal *s, uint64_t seq0,
                                      int64_t deadline)
{
	struct timespec ts;
	int rc = 0;

	if (deadline >= 0) {
		ts.tv_sec = (time_t)(deadline / 1000000000);
		ts.tv_nsec = (long)(deadline % 1000000000);
	}
	pthread_mutex_lock(&s->mutex);
	while (s->cond_seq == seq0 && rc == 0) {
		if (deadline < 0)
			rc = pthread_cond_wait(&s->cond, &s->mutex);
		else
			rc = pthread_cond_timedwait(&s->cond, &s->mutex, &ts);
	}
	pthread_mutex_unlock(&s->mutex);
	return rc == ETIMEDOUT ? -ETIMEDOUT : 0;
}

/*
 * The trywait step of one object for a waiter outside lfpoll's blocking
 * calls (the application's poll on LFP_GETWAIT, or lfp_wait on a set): W1,
 * W2, then W3 through ready(arg) (> 0: work pending).  0 when blocking on
 * the native object is safe, -EAGAIN otherwise.  force: see
 * lfp__signal_clear.  Every caller on one signal must pass the same ready
 * (see the top of this file).
 */
LFP_INLINE int lfp__signal_trywait_force(struct lfp__signal *s,
                                         int (*ready)(void *), void *arg,
                                         int force)
{
	int cleared = lfp__signal_clear(s, force); /* W1 */

	LFP__SCHED("signal.W1", s);
	/* W2: an eventfd waiter, or (MUTEX_COND) one on the condition. */
	lfp__signal_arm(s, s->wait_obj == LFP_WAIT_FD ? LFP__ARMED_BIT
	                                              : LFP__ARMED_COND_BIT);
	if (ready(arg) > 0) {               /* W3 */
		lfp__signal_restore(s, cleared);
		return -EAGAIN;
	}
	LFP__SCHED("signal.W3", s);
	return 0;
}

LFP_INLINE int lfp__signal_trywait(struct lfp__signal *s,
                                   int (*ready)(void *), void *arg)
{
	return lfp__signal_trywait_force(s, ready, arg, 0);
}

/*
 * Block until ready(arg) may be true: a bounded spin of `spin` checks, then
 * W1-W4.  Returns 0 when ready(arg) reported work, 1 after a wake (work may
 * be there, or a spurious wake), and -ETIMEDOUT at the deadline.  Never
 * consumes anything.  ready may be any condition of the caller's (a
 * threshold, a signal count) when the signal sleeps on its condition
 * variable; on a wait set's fd it must be the set's own readiness.  *woke
 * carries, between the calls of one waiting loop (start it at 0), whether
 * the last sleep ended on a readable fd.
 */
LFP_INLINE int lfp__signal_wait_spin(struct lfp__signal *s, int (*ready)(void *),
                                     void *arg, int64_t deadline, int spin,
                                     int *woke)
{
	uint64_t seq0;
	int i, ret;

	for (i = 0; i < spin; i++) {
		if (ready(arg) > 0)
			return 0;
		lfp__cpu_relax();
	}
	if (lfp__expired(deadline))
		return -ETIMEDOUT;
	if (s->cond_sleep &&
	    !(s->wait_obj == LFP_WAIT_FD && LFP__BROKEN("A"))) {
		/* The snapshot comes before W2: a producer that clears our
		 * bit bumps the sequence after it. */
		seq0 = lfp__signal_seq(s);
		lfp__signal_arm(s, LFP__ARMED_COND_BIT);        /* W2 */
		if (ready(arg) > 0)                             /* W3 */
			return 0;
		LFP__SCHED("signal.W3", s);
		ret = lfp__signal_sleep_cond(s, seq0, deadline); /* W4 */
		return ret < 0 ? ret : 1;
	}
	ret = lfp__signal_trywait_force(s, ready, arg, *woke);
	*woke = 0;
	if (ret)
		return 0;
	if (s->wait_obj == LFP_WAIT_YIELD) {
		sched_yield();
		return lfp__expired(deadline) ? -ETIMEDOUT : 1;
	}
	ret = lfp__signal_sleep_fd(s, deadline);            /* W4 */
	if (ret < 0)
		return ret;
	*woke = ret;
	return 1;
}

LFP_INLINE int lfp__signal_wait(struct lfp__signal *s, int (*ready)(void *),
                                void *arg, int64_t deadline, int *woke)
{
	return lfp__signal_wait_spin(s, ready, arg, deadline, LFP_SPIN_COUNT, woke);
}

LFP_INLINE int lfp__signal_getwait(struct lfp__signal *s, int command, void *arg)
{
	struct lfp_mutex_cond *mc;
	int ret = lfp__control_begin(s->wait_obj, command, arg);

	if (ret != 1)
		return ret;
	switch (s->wait_obj) {
	case LFP_WAIT_FD:
		*(int *)arg = s->sleep_fd;
		return 0;
	case LFP_WAIT_MUTEX_COND:
		mc = (struct lfp_mutex_cond *)arg;
		mc->mutex = &s->mutex;
		mc->cond = &s->cond;
		return 0;
	default:
		return -ENODATA;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_SIGNAL_H */
