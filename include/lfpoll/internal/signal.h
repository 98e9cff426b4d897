/*
 * lfpoll internal: the wait/wake primitive behind every wait object, and the
 * trywait protocol.  Do not include directly.  docs/design.md holds the
 * proof; the labels P1..P4 and W1..W4 below are the ones it uses.
 *
 * This file is the protocol, the same for every kind of wait object.  What
 * a kind adds (its native object: how a waiter outside lfpoll's blocking
 * calls sleeps on it and how a producer wakes that waiter) is a struct
 * lfp__wait_kind, one per file (internal/wait_fd.h, wait_mutex_cond.h,
 * wait_yield.h, wait_pollfd.h), listed in internal/wait_kinds.h.  The
 * protocol calls a kind only on its slow paths: a producer's P4, which runs
 * only when a waiter is armed, and a waiter's drain and sleep.
 *
 * One word, state, holds two armed bits and, above them, PENDING (native
 * objects that are posted, such as FD's eventfd: posts announced and not
 * yet drained).
 *
 *   ARMED       a waiter on the kind's native object (trywait before the
 *               application's own poll, or lfp_wait on a wait set) needs
 *               the next event to post it.
 *   ARMED_COND  a waiter sleeps on the condition variable: lfp_eq_sread,
 *               lfp_cq_sread and lfp_cntr_wait on an object with its own
 *               wait object, and every MUTEX_COND waiter.
 *
 *   producer                              waiter
 *   P1 publish the event (release)        W1 clear the native object (drain)
 *   P2 full barrier                       W2 set its armed bit (RMW), barrier
 *   P3 load state                         W3 re-check its condition
 *   P4 if armed: clear both bits (RMW);   W4 if it does not hold: sleep on
 *      post the native object and/or         the native object, or on the
 *      bump the condition's sequence         condition until its sequence
 *      and broadcast, per the bits           moves
 *      cleared
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
 * and sleeps again if it does not hold.  A native object that is posted is
 * different: W1 drains it, so one waiter's drain can take the wake another
 * needed.  That is safe only because every waiter that drains a given
 * native object tests the same condition (an object's trywait readiness; a
 * wait set's "any member ready"): a drainer that finds work puts the post
 * back for the others (restore), and one that finds none leaves nothing
 * that any other waiter could be owed.  This is why the blocking calls with
 * thresholds never sleep on the native object.
 */
#ifndef LFPOLL_INTERNAL_SIGNAL_H
#define LFPOLL_INTERNAL_SIGNAL_H

#include "../common.h"
#include "time.h"

#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LFP__ARMED_BIT      0u
#define LFP__ARMED          (1u << LFP__ARMED_BIT)
#define LFP__ARMED_COND_BIT 1u
#define LFP__ARMED_COND     (1u << LFP__ARMED_COND_BIT)
#define LFP__ARMED_ANY      (LFP__ARMED | LFP__ARMED_COND)
/* The rest of state counts posts announced and not yet drained. */
#define LFP__PENDING_ONE    (1u << 2)
#define LFP__PENDING        (~LFP__ARMED_ANY)

/*
 * Cancellation (docs/contract.md, "Cancellation"): lfpoll's blocking calls
 * are cancellation points only while asleep, and a thread cancelled there
 * leaves nothing held and nothing consumed.  Every other system call
 * lfpoll makes (eventfd reads and writes, poll with no timeout, close) is
 * a cancellation point in the C library, so it runs with cancellation
 * disabled: a pending request is not acted on halfway through a protocol
 * step (a post announced and never written, a drain never accounted).
 */
LFP_INLINE int lfp__nocancel_begin(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	if (!LFP__BROKEN("Q"))
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

LFP_INLINE void lfp__nocancel_end(int old)
{
	int ignored;

	if (!LFP__BROKEN("Q"))
		pthread_setcancelstate(old, &ignored);
}

/* close(2), never acted on by a cancellation request. */
LFP_INLINE void lfp__close_nocancel(int fd)
{
	int c = lfp__nocancel_begin();

	close(fd);
	lfp__nocancel_end(c);
}

/* Bounded spin before a waiter arms and sleeps (iterations of a pause). */
#ifndef LFP_SPIN_COUNT
#  define LFP_SPIN_COUNT 128
#endif

struct lfp__signal;
struct lfp_pollfds;

/*
 * A kind of wait object: its native object, the one a waiter outside
 * lfpoll's blocking calls sleeps on.  Every op is filled (the shared
 * lfp__wait_none_* where a kind has nothing to do); the protocol calls them
 * only on slow paths.
 *
 *   obj          the kind's enum value: what LFP_GETWAITOBJ answers.
 *   flags        LFP__KIND_POLLS: waiters poll the sources; nobody arms,
 *                so no producer ever wakes anyone (YIELD).
 *                LFP__KIND_SET_ONLY: only a wait set may be opened with it.
 *   trywait_bit  what trywait arms (W2): LFP__ARMED_BIT when its waiter
 *                sleeps on a native object that is posted, else
 *                LFP__ARMED_COND_BIT (the native object is the condition).
 *   init, fini   set up and release the native object: fill efd and
 *                sleep_fd (a kind with an fd) and set cond_sleep with
 *                lfp__signal_cond_init (a kind with a condition variable).
 *   wake         P4 for the waiters armed with LFP__ARMED: post the native
 *                object, announcing the post in PENDING first.  Also the
 *                restore of a drained post.
 *   drain        W1: take a post back (subtracting it from PENDING); 1 when
 *                one was taken.  Called only when PENDING is not 0.
 *   sleep        W4 for a waiter that does not sleep on the condition:
 *                0 (go and re-check), 1 (woke on a readable native object),
 *                or -errno (-ETIMEDOUT at the deadline).  The caller
 *                loops, so a spurious 0 is allowed.
 *   getwait      LFP_GETWAIT's answer into arg; fds is a wait set's array
 *                of fds (its own fd first), NULL for a queue.
 */
struct lfp__wait_kind {
	enum lfp_wait_obj obj;
	unsigned flags;
	unsigned trywait_bit;
	int (*init)(struct lfp__signal *s);
	void (*fini)(struct lfp__signal *s);
	void (*wake)(struct lfp__signal *s);
	int (*drain)(struct lfp__signal *s);
	int (*sleep)(struct lfp__signal *s, int64_t deadline);
	int (*getwait)(struct lfp__signal *s, struct lfp_pollfds *fds, void *arg);
};

#define LFP__KIND_POLLS    1u
#define LFP__KIND_SET_ONLY 2u

struct lfp__signal {
	/* Written by waiters (W2) and by the signalling producer (P4);
	 * read by every producer (P3).  The padding keeps the signal's own
	 * fields off its line pair; the fields before it in the enclosing
	 * object are not kept off (the EQ's overrun and the CQ's poll link,
	 * which every write reads too, share its line). */
	uint32_t state;
	char lfp__pad0[LFP_CACHELINE_PAIR - sizeof(uint32_t)];
	const struct lfp__wait_kind *kind;
	int efd;                        /* the kind's own fd (FD: its eventfd), or -1 */
	int sleep_fd;                   /* what W4 polls: efd, or a set's epoll fd; or -1 */
	/* Whether the blocking calls sleep on the condition variable (an own
	 * FD or MUTEX_COND object) rather than through the kind's sleep (a
	 * wait set with an fd; YIELD). */
	int cond_sleep;
	pthread_mutex_t mutex;          /* kinds with a condition variable */
	pthread_cond_t cond;
	uint64_t cond_seq;              /* bumped under mutex by each cond wake */
	/* Producer-side signals sent, counted only when built with LFP_STATS;
	 * always present so that the layout does not depend on the macro
	 * (code built with it links against code built without).  Aligned to
	 * 8: on 32-bit x86 a uint64_t is 4-aligned, and this one fell 60
	 * bytes into a line of a CQ and of a counter, where its atomic add
	 * split across two lines (tests/ilp32/align.c). */
	uint64_t stat_signals LFP__ALIGN8;
};

/* ---------------------------------------------------------------- setup */

/*
 * The condition variable of a kind whose blocking calls sleep on it (an
 * own FD or MUTEX_COND object): its init ops call this.  -ENOMEM or 0.
 */
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
	s->cond_sleep = 1;
	return 0;
}

LFP_INLINE void lfp__signal_cond_fini(struct lfp__signal *s)
{
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->mutex);
}

/* A signal of kind k (resolved: internal/wait_kinds.h).  0 or -errno. */
LFP_INLINE int lfp__signal_init(struct lfp__signal *s, const struct lfp__wait_kind *k)
{
	memset(s, 0, sizeof(*s));
	s->efd = -1;
	s->sleep_fd = -1;
	s->kind = k;
	return k->init(s);
}

/* A wait set's signal: blocking calls poll fd (the set's epoll fd). */
LFP_INLINE void lfp__signal_sleep_on_fd(struct lfp__signal *s, int fd)
{
	s->sleep_fd = fd;
	s->cond_sleep = 0;
}

LFP_INLINE void lfp__signal_fini(struct lfp__signal *s)
{
	s->kind->fini(s);
	s->efd = s->sleep_fd = -1;
}

/* The ops of a kind that has nothing to do at that step. */
LFP_INLINE int lfp__wait_none_init(struct lfp__signal *s)
{
	(void)s;
	return 0;
}

LFP_INLINE void lfp__wait_none_fini(struct lfp__signal *s)
{
	(void)s;
}

/* Nobody is ever armed with LFP__ARMED on a kind without a posted object. */
LFP_INLINE void lfp__wait_none_wake(struct lfp__signal *s)
{
	(void)s;
}

/* Nothing was posted: PENDING stays 0, so this is never called. */
LFP_INLINE int lfp__wait_none_drain(struct lfp__signal *s)
{
	(void)s;
	return 0;
}

/* ---------------------------------------------------------------- producer */

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
	if (old & LFP__ARMED)
		s->kind->wake(s);
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
	if (!LFP__BROKEN("P2"))
		lfp__mb(); /* P2: pairs with W2 (lfp__mb_after_rmw) */
	lfp__signal_check(s);
}

/* ---------------------------------------------------------------- waiter */

/*
 * W1: clear the native object's notification.  Returns 1 when a
 * notification was drained (the caller puts it back with
 * lfp__signal_restore if the re-check finds work).
 *
 * Every post is announced in PENDING before it is made, and a drain
 * subtracts only what it took (the kinds that post keep that invariant:
 * internal/wait_fd.h), so PENDING == 0 means there is nothing to drain and
 * W1 makes no system call: the idle trywait of every kind.  (A waiter
 * that saw the fd readable sees the post's announcement too: the kernel
 * orders the producer's write(2) before the poll(2) that reported it.)
 */
LFP_INLINE int lfp__signal_clear(struct lfp__signal *s)
{
	if (!(lfp__ld_rlx_u32(&s->state) & LFP__PENDING))
		return 0;
	return s->kind->drain(s);
}

/*
 * W2: announce the waiter (bit: LFP__ARMED_BIT for waiters on a posted
 * native object, LFP__ARMED_COND_BIT for condition sleepers), then order
 * that before the re-check (W3).
 */
LFP_INLINE void lfp__signal_arm(struct lfp__signal *s, unsigned bit)
{
	if (s->kind->flags & LFP__KIND_POLLS)
		return; /* waiters poll the sources; producers need not know */
	(void)lfp__bts_u32(&s->state, bit);
	lfp__mb_after_rmw(); /* pairs with P2 */
	LFP__SCHED("signal.W2", s);
}

/* After W3 found work: hand a cleared notification back to other sleepers. */
LFP_INLINE void lfp__signal_restore(struct lfp__signal *s, int cleared)
{
	if (cleared)
		s->kind->wake(s);
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

/* A sleeper on the condition cancelled in pthread_cond_(timed)wait holds
 * the mutex again: give it back, so that the next broadcast can run. */
LFP_INLINE void lfp__signal_unlock_cancelled(void *mutex)
{
	if (!LFP__BROKEN("Q"))
		pthread_mutex_unlock((pthread_mutex_t *)mutex);
}

/*
 * W4 on the condition variable: until the sequence moves past seq0 or the
 * deadline passes.  0 or -ETIMEDOUT.  A cancellation point: the cleanup
 * handler unlocks the mutex; the armed bit left behind costs one spurious
 * wake at most.
 */
LFP_INLINE int lfp__signal_sleep_cond(struct lfp__signal *s, uint64_t seq0,
                                      int64_t deadline)
{
	struct timespec ts = { 0, 0 };
	int rc = 0;

	if (deadline >= 0) {
		ts.tv_sec = (time_t)(deadline / 1000000000);
		ts.tv_nsec = (long)(deadline % 1000000000);
	}
	pthread_mutex_lock(&s->mutex);
	pthread_cleanup_push(lfp__signal_unlock_cancelled, &s->mutex);
	while (s->cond_seq == seq0 && rc == 0) {
		if (deadline < 0)
			rc = pthread_cond_wait(&s->cond, &s->mutex);
		else
			rc = pthread_cond_timedwait(&s->cond, &s->mutex, &ts);
	}
	pthread_cleanup_pop(0); /* the handler is for cancellation only */
	pthread_mutex_unlock(&s->mutex);
	return rc == ETIMEDOUT ? -ETIMEDOUT : 0;
}

/*
 * The trywait step of one object for a waiter outside lfpoll's blocking
 * calls (the application's poll on LFP_GETWAIT, or lfp_wait on a set): W1,
 * W2, then W3 through ready(arg) (> 0: work pending).  0 when blocking on
 * the native object is safe, -EAGAIN otherwise.  Every caller on one
 * signal must pass the same ready (see the top of this file).
 */
LFP_INLINE int lfp__signal_trywait(struct lfp__signal *s,
                                   int (*ready)(void *), void *arg)
{
	int cleared = lfp__signal_clear(s); /* W1 */

	LFP__SCHED("signal.W1", s);
	/* W2: a waiter on the native object, whichever bit the kind's
	 * waiters arm. */
	lfp__signal_arm(s, s->kind->trywait_bit);
	if (!LFP__BROKEN("R") && ready(arg) > 0) { /* W3 */
		lfp__signal_restore(s, cleared);
		return -EAGAIN;
	}
	LFP__SCHED("signal.W3", s);
	return 0;
}

/*
 * Block until ready(arg) may be true: a bounded spin of `spin` checks, then
 * W1-W4.  Returns 0 when ready(arg) reported work, 1 after a wake (work may
 * be there, or a spurious wake), and -ETIMEDOUT at the deadline.  Never
 * consumes anything.  ready may be any condition of the caller's (a
 * threshold, a signal count) when the signal sleeps on its condition
 * variable; on a wait set's fd it must be the set's own readiness.
 */
LFP_INLINE int lfp__signal_wait_spin(struct lfp__signal *s, int (*ready)(void *),
                                     void *arg, int64_t deadline, int spin)
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
	/* (Defect A: objects with an fd slept on it, draining posts that a
	 * trywait waiter of the fd was owed.) */
	if (s->cond_sleep && !(s->efd >= 0 && LFP__BROKEN("A"))) {
		/* The snapshot comes before W2: a producer that clears our
		 * bit bumps the sequence after it. */
		seq0 = lfp__signal_seq(s);
		lfp__signal_arm(s, LFP__ARMED_COND_BIT);        /* W2 */
		if (!LFP__BROKEN("R") && ready(arg) > 0)        /* W3 */
			return 0;
		LFP__SCHED("signal.W3", s);
		ret = lfp__signal_sleep_cond(s, seq0, deadline); /* W4 */
		return ret < 0 ? ret : 1;
	}
	if (lfp__signal_trywait(s, ready, arg))
		return 0;
	ret = s->kind->sleep(s, deadline);                   /* W4 */
	return ret < 0 ? ret : 1;
}

LFP_INLINE int lfp__signal_wait(struct lfp__signal *s, int (*ready)(void *),
                                void *arg, int64_t deadline)
{
	return lfp__signal_wait_spin(s, ready, arg, deadline, LFP_SPIN_COUNT);
}

/*
 * lfp_control on an object whose wait object is this signal: LFP_GETWAITOBJ
 * with the kind, LFP_GETWAIT with the kind's native object (fds: a wait
 * set's array of fds, else NULL).
 */
LFP_INLINE int lfp__signal_control(struct lfp__signal *s, struct lfp_pollfds *fds,
                                   int command, void *arg)
{
	int ret = lfp__control_begin(s->kind->obj, command, arg);

	if (ret != 1)
		return ret;
	return s->kind->getwait(s, fds, arg);
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_SIGNAL_H */
