/*
 * lfpoll internal: the poll link, what puts an object with work on its poll
 * set's ready stack.  Do not include directly.  Both sides of the protocol
 * are here: the producer's push, and the poller's attach, drop (L1, L2) and
 * detach (D1); poll.h builds the poll set on them.  docs/design.md section
 * 4 holds the proof.
 *
 * Each pollable object embeds one struct lfp_poll_link (a binding's object
 * gets one from lfp_binding_member_open).  When a producer publishes work
 * it checks the link: if the object is in a poll set and not already
 * queued there, it pushes the link onto the set's ready stack (a Treiber
 * stack: producers push, lfp_poll takes the whole stack with one
 * exchange).  The stack is all a producer needs of the set, so queues never
 * include the poller's code.  Objects filled by hardware (verbs CQs) have
 * no producer to push them; their links are sticky and cost one check per
 * lfp_poll each.
 *
 * Link states (queued):
 *   IDLE     not tracked: the next event pushes it
 *   PUSHING  a producer owns the push
 *   TRACKED  on the ready stack or on the poller's own list
 * A producer takes IDLE -> PUSHING by CAS, re-reads the link's poll set
 * (Dekker with lfp_poll_del, which marks it as leaving, waits out PUSHING,
 * and clears it at its end),
 * pushes, and stores TRACKED.  lfp_poll may take the link off the stack
 * before that store lands, so the poller drops a link only by CAS
 * TRACKED -> IDLE (L1): a link still PUSHING stays on the poller's list,
 * where the producer's TRACKED store leaves it consistent.  (A plain IDLE
 * store there was overwritten by the late TRACKED, and no producer ever
 * pushed the link again.)  After L1 the poller re-checks the object (L2,
 * Dekker with the producer's publish and claim), so an event is never left
 * untracked.
 */
#ifndef LFPOLL_INTERNAL_POLL_LINK_H
#define LFPOLL_INTERNAL_POLL_LINK_H

#include "../common.h"
#include "signal.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { LFP__LINK_IDLE, LFP__LINK_PUSHING, LFP__LINK_TRACKED };

/*
 * A link's stack while lfp_poll_del takes it out of its set, from D1 until
 * lfp__poll_link_detached: in no set for producers (they push nothing),
 * in one for lfp_poll_add (another set's add is -EBUSY) and for close.
 * Never a real stack's address (misaligned), and the same in every
 * translation unit.
 */
#define LFP__LINK_DETACHING ((struct lfp_poll_link **)(uintptr_t)1)

struct lfp_poll_link {
	/* The ready stack of the poll set the object is in (lfp_poll's
	 * ready field), LFP__LINK_DETACHING while a del takes it out, or
	 * NULL: all a producer needs of the set. */
	struct lfp_poll_link **stack;
	struct lfp_poll_link *next;   /* on the ready stack or the poller's list */
	struct lfp_fid *fid;
	uint64_t seen LFP__ALIGN8;    /* event-like objects: events last reported */
	uint32_t queued;              /* LFP__LINK_* */
	/* Set by classes whose work arrives with no producer to push the
	 * link (a verbs CQ is filled by the device): lfp_poll keeps such a
	 * link tracked and checks it on every call.  Also set by an add
	 * whose process-wide barrier failed (lfp__poll_link_attach). */
	uint32_t sticky;
};

/*
 * The process-wide barrier (Linux membarrier(2), private expedited): when
 * it returns, every other thread of the process has made a full barrier
 * somewhere between the call's start and its return (a thread off its CPU
 * has passed a context switch, which is one).  Against it a compiler
 * barrier on the other side of a store-buffering pair is enough.
 *
 * lfp__asym_ready registers the process for it, once per translation unit
 * (registration is per process and may be repeated), and says whether it
 * is available: not on kernels without it (before 4.14), nor where a
 * seccomp filter refuses it, nor with LFP_NO_MEMBARRIER defined.  Objects
 * opened then keep their producers' fence.
 */
#if defined(__linux__) && !defined(LFP_NO_MEMBARRIER)
#  include <sys/syscall.h>
#  include <unistd.h>
#  if defined(SYS_membarrier)
#    define LFP__HAVE_MEMBARRIER 1
/* syscall(2) is declared only with _DEFAULT_SOURCE (glibc's __USE_MISC)
 * or _GNU_SOURCE; C++ compilers define the latter. */
#    if !defined(__USE_MISC) && !defined(_GNU_SOURCE) && !defined(__cplusplus)
long syscall(long number, ...);
#    endif
#  endif
#endif
enum {
	LFP__MBR_QUERY = 0,                          /* MEMBARRIER_CMD_QUERY */
	LFP__MBR_PRIVATE_EXPEDITED = 1 << 3,
	LFP__MBR_REGISTER_PRIVATE_EXPEDITED = 1 << 4
};

LFP_SLOW int lfp__asym_ready(void)
{
	static uint32_t state; /* 0 not tried yet, 1 registered, 2 refused */
	uint32_t s = lfp__ld_rlx_u32(&state);

	if (s)
		return s == 1;
	s = 2;
#if defined(LFP__HAVE_MEMBARRIER)
	{
		long cmds = syscall(SYS_membarrier, LFP__MBR_QUERY, 0, 0);

		if (cmds > 0 && (cmds & LFP__MBR_PRIVATE_EXPEDITED) &&
		    (cmds & LFP__MBR_REGISTER_PRIVATE_EXPEDITED) &&
		    syscall(SYS_membarrier, LFP__MBR_REGISTER_PRIVATE_EXPEDITED,
		            0, 0) == 0)
			s = 1;
	}
#endif
	/* Relaxed: it caches a property of the process, which the kernel
	 * holds from the registration's return on; a race registers twice. */
	lfp__st_rlx_u32(&state, s);
	return s == 1;
}

/* The barrier itself: 0, or -errno (a seccomp filter installed since the
 * registration, say). */
LFP_SLOW int lfp__asym_barrier(void)
{
#if defined(LFP__HAVE_MEMBARRIER)
	if (syscall(SYS_membarrier, LFP__MBR_PRIVATE_EXPEDITED, 0, 0) == 0)
		return 0;
	return errno ? -errno : -EIO;
#else
	return -ENOSYS;
#endif
}

/* ---------------------------------------------------------------- producer */

/*
 * The push of a link its producer found IDLE in a poll set: out of line,
 * since only a queue's first event after lfp_poll dropped it comes here.
 */
LFP_OUTLINE void lfp__poll_link_push(struct lfp_poll_link *l)
{
	struct lfp_poll_link **stack, *top;
	uint32_t idle = LFP__LINK_IDLE;

	/* The claim and the re-read of the stack after it are one side of a
	 * store-buffering pair with lfp_poll_del's D1 and its load of queued:
	 * a full barrier between the two on each side (the RMW, and with
	 * LFP_ATOMIC_BUILTINS, whose SEQ_CST RMW orders no later plain load,
	 * the fence of lfp__mb_after_rmw).  Our publish is ordered before the
	 * poller's re-check by P2, before we got here (pairs with L2). */
	if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_PUSHING))
		return;
	lfp__mb_after_rmw();
	LFP__SCHED("poll.link.claimed", l);
	stack = (struct lfp_poll_link **)lfp__ld_acq_ptr((void *const *)&l->stack);
	if (!stack || stack == LFP__LINK_DETACHING) {
		/* Deleted meanwhile: lfp_poll_del waits for this store. */
		lfp__st_rel_u32(&l->queued, LFP__LINK_IDLE);
		return;
	}
	top = (struct lfp_poll_link *)lfp__ld_rlx_ptr((void *const *)stack);
	/* Treiber push.  The CAS is a full barrier (release for the store of
	 * next before it on every architecture); lfp_poll's exchange, also a
	 * full barrier, is its acquire. */
	do
		l->next = top;
	while (!lfp__cas_ptr((void **)stack, (void **)&top, l));
	LFP__SCHED("poll.link.pushed", l);
	/* Release: lfp_poll_del waits for a state other than PUSHING before
	 * it touches the stack; lfp_poll's L1 CAS waits for it too. */
	lfp__st_rel_u32(&l->queued, LFP__LINK_TRACKED);
	/* Full barrier (I4): orders the TRACKED store before the producer's
	 * P3 load of the waiters' state that follows (lfp__notify_in_set).
	 * Pairs with W2's barrier (lfp__mb_after_rmw) before a waiter's load
	 * of this link in lfp__fid_poll_owed: either the producer sees the
	 * waiter armed and posts, or the waiter sees the change owed
	 * (docs/design.md 2.6).  P2 came before the push and does not order
	 * this store.  Only the push pays it, once per lfp_poll report. */
	if (!LFP__BROKEN("I4"))
		lfp__mb();
}

/*
 * Producer side, after publishing work and the full barrier P2 of
 * lfp__notify_all, which orders the publish before the loads here.  Cheap
 * when the object is in no poll set or already tracked: two loads.
 */
LFP_INLINE void lfp__poll_link_notify(struct lfp_poll_link *l)
{
	if (LFP__UNLIKELY(lfp__ld_rlx_ptr((void *const *)&l->stack) != NULL) &&
	    lfp__ld_rlx_u32(&l->queued) == LFP__LINK_IDLE)
		lfp__poll_link_push(l);
}

/* lfp__notify_all's rest for an object in a poll set, out of line: the
 * push (when the link is IDLE), then P3-P4, in that order.  Marked cold
 * for gcc, which then moves the call and its frame out of every write's
 * inline body (the write of a CQ in a poll set still calls it each time:
 * two loads when the link is tracked).  clang keeps the call in line
 * either way, and lays the write out shorter without the mark. */
#if defined(__clang__)
#  define LFP__NOTIFY_IN_SET LFP_OUTLINE
#else
#  define LFP__NOTIFY_IN_SET LFP_SLOW
#endif
LFP__NOTIFY_IN_SET void lfp__notify_in_set(struct lfp__signal *sig, struct lfp_poll_link *l)
{
	if (l->fid->asym)
		lfp__mb(); /* P2, which lfp__notify_all left out */
	lfp__poll_link_notify(l);
	if (sig)
		lfp__signal_check(sig);
}

/*
 * What a producer does after publishing work (P1): P2, then queue the object
 * in its poll set, then wake an armed waiter (P3-P4 of signal.h).  The one
 * full barrier orders the publish before the poll link's loads and before
 * P3.  The push comes before the wake: a waiter that consumed the change
 * through a wait set's trywait while the link was still being pushed, found
 * nothing in lfp_poll and armed again, is woken by this producer's P4, after
 * the link is on the stack.  (In the other order that wake went out first,
 * and the waiter slept with the counter's change unreported: docs/
 * reliability.md, defect I.)
 */
LFP_INLINE void lfp__notify_all(struct lfp__signal *sig, struct lfp_poll_link *l,
                                 uint32_t asym)
{
	if (LFP__BROKEN("I")) {
		if (sig)
			lfp__signal_notify(sig);
		else
			lfp__mb();
		lfp__poll_link_notify(l);
		return;
	}
	/* An asym object (no wait object) needs the fence only when it is in
	 * a poll set, and then makes it in lfp__notify_in_set, before the
	 * link's other loads.  In no set there is no one to wake and nothing
	 * to push, but the load of stack must still follow the publish in
	 * the instruction stream (a compiler barrier; the processor may let
	 * it pass the store): the other side, lfp_poll_add, sets stack and
	 * then makes the process-wide barrier before any lfp_poll looks at
	 * the object, so either this load sees the set or that look sees the
	 * publish (docs/design.md 4.1). */
	if (LFP__BROKEN("V2") && asym)
		return;
	if (LFP__LIKELY(!asym) && !LFP__BROKEN("P2"))
		lfp__mb(); /* P2: pairs with W2 and with the poller's L2 */
	__asm__ __volatile__("" ::: "memory"); /* asym: the compiler barrier */
	if (LFP__UNLIKELY(lfp__ld_rlx_ptr((void *const *)&l->stack) != NULL))
		lfp__notify_in_set(sig, l);
	else if (sig)
		lfp__signal_check(sig);
}

/* ---------------------------------------------------------------- poller */

LFP_INLINE void lfp__poll_link_init(struct lfp_poll_link *l, struct lfp_fid *fid,
                                    int sticky)
{
	l->fid = fid;
	l->sticky = sticky ? 1 : 0;
}

/* Whether the object is in a poll set, or leaving one (its close must then
 * be -EBUSY).  Acquire: pairs with the release in lfp__poll_link_detached,
 * so a close after a del in another thread sees the link out of the set. */
LFP_INLINE int lfp__poll_link_in_set(struct lfp_poll_link *l)
{
	return lfp__ld_acq_ptr((void *const *)&l->stack) != NULL;
}

/*
 * Whether an event-like object (a counter) has a change tracked in a poll
 * set (its link pushed, or put there by the add) that the set has not
 * reported: the change is still owed to the fi_poll(3) loop, whoever else
 * saw it.  A wait set's check or a trywait that consumed the change while
 * its producer was on its way to the push found nothing in lfp_poll; if
 * the producer then pushed and woke nobody (nobody was armed yet), the
 * loop's next check found the change consumed and slept with it in the
 * poll set (defect I3).  They answer "work" for it until lfp_poll reports
 * it.  Before the push the link is not TRACKED and this says 0: the
 * waiter arms, and the producer's P2-P3 after its push (TRACKED store)
 * and the waiter's W2-W3 before this load are the usual Dekker pair, so
 * one of them sees the other (lfp__notify_all).
 */
LFP_INLINE int lfp__fid_poll_owed(struct lfp_fid *fid)
{
	struct lfp_poll_link *l;

	if (!fid->ops->events || !fid->ops->poll_link || LFP__BROKEN("I3"))
		return 0;
	l = fid->ops->poll_link(fid);
	if (!l || !lfp__poll_link_in_set(l) ||
	    lfp__ld_rlx_u32(&l->queued) != LFP__LINK_TRACKED)
		return 0;
	/* Relaxed seen: lfp_poll and the counter's add/set move it; a stale
	 * one costs a false positive, as in lfp__fid_work. */
	return fid->ops->events(fid) != lfp__ld_rlx_u64(&l->seen);
}

/* Whether the object behind a link has something to report; consumes a
 * counter's change only when consume is set. */
LFP_INLINE int lfp__poll_link_ready(struct lfp_poll_link *l, int consume)
{
	return lfp__fid_work(l->fid, &l->seen, consume);
}

/*
 * Put l in the poll set whose ready stack is stack; poll set lock held.
 * -EEXIST when it is there already, -EBUSY when it is in another set; 1
 * when the caller must track it on its own list, 0 when a producer that
 * saw the new set has pushed it onto the stack already.
 */
LFP_INLINE int lfp__poll_link_attach(struct lfp_poll_link *l,
                                     struct lfp_poll_link **stack)
{
	struct lfp_poll_link **none = NULL;

	if (!lfp__cas_ptr((void **)&l->stack, (void **)&none, stack))
		return none == stack ? -EEXIST : -EBUSY;
	/* The other side of the asym pair (lfp__notify_all): after the CAS,
	 * which set stack, and before any lfp_poll looks at the object (it
	 * needs the set's lock, which the caller holds).  Where the barrier
	 * fails, the link becomes sticky: lfp_poll then checks the object on
	 * every call, as a verbs CQ's, and no report depends on a producer's
	 * push. */
	if (l->fid->asym && !LFP__BROKEN("V") && lfp__asym_barrier() != 0)
		l->sticky = 1;
	/* Track it now, unless a producer that saw the new set has claimed
	 * the push (PUSHING: wait for it) or done it (TRACKED: the link is on
	 * the ready stack).  Putting it on our list as well would link it
	 * twice.  seen is kept: a counter's events since its last add/set (or
	 * since it was opened) are reported, as fi_poll(3) says. */
	if (LFP__BROKEN("M")) { /* tracked whatever a producer did */
		lfp__st_rel_u32(&l->queued, LFP__LINK_TRACKED);
		return 1;
	}
	for (;;) {
		uint32_t st = LFP__LINK_IDLE;

		if (lfp__cas_u32(&l->queued, &st, LFP__LINK_TRACKED))
			return 1;
		if (st == LFP__LINK_TRACKED)
			return 0;
		lfp__cpu_relax(); /* PUSHING */
	}
}

/*
 * Take l out of the poll set whose ready stack is stack (D1); poll set lock
 * held.  -ENOENT when it is not there.  On 0 no producer can push l any
 * more: the caller takes it off its list or the stack, then calls
 * lfp__poll_link_detached, which lets another set have it.
 */
LFP_INLINE int lfp__poll_link_detach(struct lfp_poll_link *l,
                                     struct lfp_poll_link **stack)
{
	void *self = stack;

	/* D1: full-barrier RMW marking the link as leaving its set; with the
	 * load of queued below, the other side of the store-buffering pair
	 * with the producer's claim and its re-read of the stack (each side
	 * the RMW, then lfp__mb_after_rmw): a producer that claimed before
	 * D1 is seen below as PUSHING, one that claimed after it re-reads
	 * the stack as the mark.  Not NULL yet: an add to
	 * another set in between would track the link, and our
	 * lfp__poll_link_detached would then untrack it there (LFP_BROKEN
	 * "D1": NULL at once, as before). */
	if (!lfp__cas_ptr((void **)&l->stack, &self,
	                  LFP__BROKEN("D1") ? NULL : (void *)LFP__LINK_DETACHING))
		return -ENOENT;
	lfp__mb_after_rmw();
	LFP__SCHED("poll.D1", l);
	/* Acquire: pairs with the producer's release of TRACKED/IDLE, so its
	 * push (if any) is visible before the caller looks at the stack. */
	while (lfp__ld_acq_u32(&l->queued) == LFP__LINK_PUSHING)
		lfp__cpu_relax();
	return 0;
}

/*
 * The end of a detach, once l is on no list.  TRACKED -> IDLE only: a
 * producer that loaded the stack before D1 may claim IDLE -> PUSHING now;
 * it then reads the mark (or NULL) and stores IDLE itself.  Overwriting its claim would
 * let it push the link after a re-add has tracked it.
 */
LFP_INLINE void lfp__poll_link_detached(struct lfp_poll_link *l)
{
	uint32_t st = LFP__LINK_TRACKED;

	(void)lfp__cas_u32(&l->queued, &st, LFP__LINK_IDLE);
	/* Out of the set: another set's add may take it now.  Release:
	 * pairs with that add's CAS (a full barrier), which then sees the
	 * link IDLE (or PUSHING by a producer that will store IDLE). */
	if (!LFP__BROKEN("D1"))
		lfp__st_rel_ptr((void **)&l->stack, NULL);
}

/*
 * lfp_poll found nothing to report on l (not sticky): drop it (L1), then
 * re-check (L2).  Returns -1 when l is dropped (on no list: a producer
 * pushes it at its next event), 0 when it stays tracked with nothing to
 * report (its producer is still pushing it), 1 when L2 found work and l is
 * tracked again with something to report (consume as
 * lfp__poll_link_ready).
 */
LFP_INLINE int lfp__poll_link_drop(struct lfp_poll_link *l, int consume)
{
	uint32_t idle = LFP__LINK_TRACKED;

	/* L1: untrack, only from TRACKED: a link we took off the stack while
	 * its producer is still PUSHING stays on our list (the producer's
	 * TRACKED store then matches it).  Full-barrier CAS: it orders our
	 * last write of l->next before a producer's push that rewrites it,
	 * and is the store half of L2's pair. */
	if (LFP__BROKEN("B"))
		lfp__st_rel_u32(&l->queued, LFP__LINK_IDLE);
	else if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_IDLE))
		return 0;
	LFP__SCHED("poll.L1", l);
	/* L2: re-check after a full barrier (pairs with the producer's P2,
	 * between its publish and its load of queued).  Either the producer
	 * sees IDLE and pushes, or we see its work. */
	lfp__mb();
	if (!lfp__poll_link_ready(l, 0))
		return -1;
	idle = LFP__LINK_IDLE;
	if (!lfp__cas_u32(&l->queued, &idle, LFP__LINK_TRACKED))
		return -1; /* a producer is pushing it: it comes back */
	return lfp__poll_link_ready(l, consume);
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_POLL_LINK_H */
