/*
 * Promela model of waiters with DIFFERENT conditions on one FD object
 * (include/lfpoll/internal/signal.h, wait_fd.h; the callers are lfp_trywait plus the
 * application's poll on LFP_GETWAIT, lfp_cq_sread with a threshold and
 * lfp_cq_signal in include/lfpoll/cq.h).
 *
 *   spin -a multiwait.pml           the protocol as implemented
 *   spin -DLATE_SNAPSHOT -a multiwait.pml
 *                                   B's snapshot after W2: spin must find
 *                                   B asleep with its condition true
 *   spin -DOLD_A -a multiwait.pml   the earlier protocol: every waiter,
 *                                   the threshold reader included, drains
 *                                   the eventfd at W1 and posts it back
 *                                   only when ITS OWN condition holds;
 *                                   spin must find a lost wakeup
 *
 * Threads:
 *  - NPROD producers, NEV completions each (lfp_cq_write): P1 publish,
 *    P2 full barrier, P3 load state, P4 if any armed bit: fetch-and-clear
 *    both bits; if ARMED_COND was set, lock, cond_seq++, broadcast,
 *    unlock; if ARMED was set, post the eventfd (PENDING += 1, then
 *    write).
 *  - A, the eventfd waiter (lfp_trywait, then poll(2) on the fd).  W1:
 *    read the eventfd when its load of state shows PENDING > 0, or always
 *    when its last poll returned on a readable fd, and subtract the count
 *    read; W2 set ARMED; W3 re-check "CQ not empty": if so, post back a
 *    drained count (restore) and trywait returns -EAGAIN; otherwise block
 *    in poll until the eventfd counter is > 0.  After -EAGAIN the
 *    application either reads the whole CQ or leaves it to B, and waits
 *    again.
 *  - B, lfp_cq_sread(threshold THRESH), called up to NCALL times.  Each
 *    call: read when THRESH entries are published (it takes them all);
 *    return when a lfp_cq_signal came since the call began; otherwise
 *    lfp__signal_wait: snapshot cond_seq under the mutex, W2 set
 *    ARMED_COND (full barrier), W3 re-check its condition (published >=
 *    THRESH, or signals moved), W4 sleep until cond_seq moves.  B may time
 *    out at any point of its sleep or of its loop (nondeterministically)
 *    and return.
 *  - S (with -DSIGNAL), one lfp_cq_signal: faa signals (a full
 *    barrier: P1 and P2 at once), then P3, P4 as a producer.
 *
 * LATE_SNAPSHOT (a check of the model, not a version of lfpoll): B reads
 * cond_seq after W2 instead of before.  A producer can then clear B's bit
 * and bump the sequence before the snapshot, with too little published
 * for B; the next producer finds no bit set, and B sleeps with its
 * condition true: spin must find it through B_WOKEN.
 *
 * OLD_A: P4 is "btr ARMED; post"; B sleeps on the eventfd: W1 drain, W2
 * set ARMED, W3 re-check its own condition and post back a drained count
 * only if it holds, W4 poll until the counter is > 0 (or time out).
 *
 * Memory: sequentially consistent.  Every step below is one atomic
 * action, and each touches one shared location, or is a locked
 * instruction, a system call or a critical section.  The bug this model
 * is about is one of protocol logic, not of ordering; the store-buffering
 * pair P2/W2 is checked under x86-TSO by trywait.pml and under the
 * weaker model of weak.pml.
 *
 * Abstractions:
 *  - The CQ is `count`, its published, unconsumed entries.  Publishing is
 *    count++; a read takes every published entry (count = 0).  lfp_cq_read
 *    with a large enough buffer does that.
 *  - The eventfd is a counter: write adds 1, read returns and resets it,
 *    poll blocks while it is 0 and does not consume it.  The condition
 *    variable is cond_seq: broadcast is one step that bumps it (under the
 *    mutex), and the sleep is the guard "cond_seq != snapshot" (the mutex
 *    makes the check-then-wait atomic against the bump).
 *  - The spin count is 1 and the error queue is empty.
 *  - Timeouts: B may stop waiting at any moment; A has no timeout.
 *  - A stops (ghost) where its poll would block for good: nothing queued,
 *    counter 0, no producer or signaller before the end of its P4, nobody
 *    holding a drained count.
 *
 * Properties (safety, exhaustive):
 *  (1) no invalid end state: in particular A never stays blocked in poll
 *      for good while the CQ holds entries;
 *  (2) A_WOKEN, asserted when A blocks and, by the monitor, in every state
 *      while it is blocked: counter 0 and entries queued imply a producer
 *      (or the signaller) is before the end of its P4, or some waiter holds
 *      a drained count it has not yet posted back or dropped;
 *  (3) B_WOKEN, in every state while B sleeps on the condition: its
 *      condition holds and cond_seq has not moved imply some producer is
 *      before the end of its P4.  (Its timeout would otherwise hide a lost
 *      wakeup.)
 *
 * Ghost variables (only the checks read them):
 *  inflight  producers and the signaller between P1 and the end of P4
 *  holding   waiters that drained a count at W1 and have neither posted it
 *            back nor dropped it
 *  a_asleep  A is blocked in poll
 *  b_cond    B sleeps on the condition (b_seq0: its snapshot); b_asleep:
 *            B polls the eventfd (OLD_A)
 */

#ifndef NPROD
#define NPROD 2
#endif
#ifndef NEV
#define NEV 1                   /* completions per producer */
#endif
#ifndef THRESH
#define THRESH 2                /* B's sread threshold */
#endif
#ifndef NCALL
#define NCALL 2                 /* B's sread calls */
#endif
#define TOTAL (NPROD * NEV)

#define ARMED       1
#define ARMED_COND  2
#define PENDING_ONE 4

byte state;     /* ARMED | ARMED_COND | PENDING * PENDING_ONE */
byte count;     /* published, unconsumed completions */
byte efd;       /* eventfd counter */
byte seq;       /* cond_seq */
byte signals;   /* lfp_cq_signal calls */

/* ghost */
byte inflight, holding, produced;
bit a_asleep, b_asleep, b_cond, a_stopped;
byte b_seq0;
byte sig0;      /* B's snapshot of signals at the start of its call */

/* ------------------------------------------------------------ producers */

/* lfp__wait_fd_post: PENDING += 1 (locked RMW), then write(efd).  done is
 * the ghost counter the write ends. */
inline POST(done)
{
	d_step { state = state + PENDING_ONE; printf("     post: faa pending+1\n") }
	d_step { efd++; done--; printf("     post: write(efd), counter %d\n", efd) }
}

/* P3, P4 of lfp__signal_notify / lfp__signal_fire.  P2 is implied by
 * sequential consistency. */
inline NOTIFY()
{
	d_step {
		st = state;
		printf("P3  load state = %d (ARMED %d, ARMED_COND %d)\n",
		       st, st & ARMED, (st & ARMED_COND) / ARMED_COND)
	}
#ifndef OLD_A
	if
	:: st & (ARMED | ARMED_COND) ->
		/* P4: fetch-and-clear both bits (full-barrier RMW) */
		d_step {
			old = state;
			state = state & ~(ARMED | ARMED_COND);
			printf("P4  fetch-and-clear armed bits: was %d\n", old & 3)
		}
		if
		:: old & ARMED_COND ->
			/* lock; cond_seq++; broadcast; unlock */
			d_step { seq++; printf("P4  cond_seq++ (%d), broadcast\n", seq) }
		:: else -> skip
		fi;
		if
		:: old & ARMED -> POST(inflight)
		:: else -> inflight--
		fi
	:: else -> inflight--
	fi;
#else
	if
	:: st & ARMED ->
		/* P4: btr ARMED; only the producer that reset it posts */
		d_step {
			old = state;
			state = state & ~ARMED;
			printf("P4  btr ARMED: was %d\n", old & ARMED)
		}
		if
		:: old & ARMED -> POST(inflight)
		:: else -> inflight--
		fi
	:: else -> inflight--
	fi;
#endif
	st = 0; old = 0
}

proctype producer(byte id)
{
	byte k, st, old;

	do
	:: k < NEV ->
		/* P1: publish (P2, the full barrier, is implied) */
		d_step {
			count++; produced++; inflight++;
			printf("P1  publish: %d queued\n", count)
		}
		NOTIFY();
		k++
	:: else -> break
	od
}

/* lfp_cq_signal: faa signals (a full barrier: P1 and P2), then P3, P4. */
proctype signaller()
{
	byte st, old;

	d_step { signals++; inflight++; printf("S   lfp_cq_signal: signals %d\n", signals) }
	NOTIFY()
}

/* ------------------------------------------------------------ A */

/* Nobody can make the eventfd readable any more and nothing is queued. */
#define A_DONE (count == 0 && efd == 0 && inflight == 0 && holding == 0 && \
                produced == TOTAL)

#define A_WOKEN (efd > 0 || count == 0 || inflight > 0 || holding > 0)

/* The application: lfp_trywait, then poll(2); after -EAGAIN, read the CQ
 * or not.  woke: the last poll returned on a readable fd (force). */
active proctype A()
{
	byte had;
	bit woke, cleared;

loop:
	skip;
	/* W1, lfp__signal_clear(force = woke), one step: the load of
	 * state, the read of the eventfd and the subtraction (trywait.pml
	 * checks their interleavings). */
	d_step {
		if
		:: woke || state / PENDING_ONE > 0 ->
			had = efd; efd = 0; cleared = (had > 0);
			holding = holding + cleared;
			state = state - had * PENDING_ONE;
			printf("A W1  read(efd): %d\n", had)
		:: else -> printf("A W1  nothing pending\n")
		fi
	}
	/* W2: bts ARMED (full barrier) */
	d_step { state = state | ARMED; had = 0; woke = 0; printf("A W2  bts ARMED\n") }
	/* W3: ready() = CQ not empty */
	if
	:: d_step {
		count > 0 -> printf("A W3  %d queued: -EAGAIN\n", count)
	   }
		if
		:: cleared -> POST(holding); cleared = 0
		:: else -> skip
		fi;
		/* The application reads the CQ, or leaves it to B. */
		if
		:: d_step { count > 0 -> printf("A   reads %d\n", count); count = 0 }
		:: skip
		fi;
		goto loop
	:: d_step {
		count == 0 -> printf("A W3  empty: sleeps\n");
		holding = holding - cleared; cleared = 0
	   }
	fi;
	/* W4: poll(efd) */
	d_step {
		printf("A W4  poll: counter %d, %d queued, %d in flight\n", efd, count, inflight);
		assert(A_WOKEN);
		a_asleep = 1
	}
	if
	:: d_step { efd > 0 -> a_asleep = 0; woke = 1; printf("A W4  poll returns\n") }
	   goto loop
	:: d_step { A_DONE -> a_asleep = 0; a_stopped = 1; printf("A   stops: nothing queued or to come\n") }
	fi;
end:
	skip
}

/* ------------------------------------------------------------ B */

#ifdef SIGNAL
#define SIGNALLED (signals != sig0)
#else
#define SIGNALLED 0
#endif
#define B_READY (count >= THRESH || SIGNALLED)

/* B sleeps on the condition with its condition true and cond_seq where
 * it was: only a producer still before the end of its P4 can wake it. */
#define B_WOKEN (!b_cond || seq != b_seq0 || !B_READY || inflight > 0)

active proctype B()
{
	byte calls, seq0, had;
	bit woke, cleared;

	do
	:: calls < NCALL ->
		/* lfp_cq_sread: one call */
		d_step { sig0 = signals; woke = 0; calls++; printf("B   sread(threshold %d)\n", THRESH) }
	again:
		skip;
		/* The loop's checks (one step): enough published, read them
		 * all; a signal since the call began, -EAGAIN.  They also
		 * stand for lfp__signal_wait's spin check. */
		if
		:: d_step { count >= THRESH -> printf("B   reads %d\n", count); count = 0 }
		   goto ret
		:: d_step { count < THRESH && SIGNALLED -> printf("B   signalled: -EAGAIN\n") }
		   goto ret
		:: d_step { !B_READY -> skip }
		fi;
		/* the deadline, checked on every lap */
		if
		:: printf("B   times out\n"); goto ret
		:: skip
		fi;
#ifndef OLD_A
#ifndef LATE_SNAPSHOT
		/* snapshot cond_seq under the mutex */
		d_step { seq0 = seq; printf("B   snapshot cond_seq = %d\n", seq0) }
#endif
		/* W2: bts ARMED_COND, full barrier */
		d_step { state = state | ARMED_COND; printf("B W2  bts ARMED_COND\n") }
#ifdef LATE_SNAPSHOT
		d_step { seq0 = seq; printf("B   snapshot cond_seq = %d (after W2)\n", seq0) }
#endif
		/* W3: its own condition */
		if
		:: d_step { B_READY -> printf("B W3  ready\n") } goto again
		:: d_step {
			!B_READY -> printf("B W3  not ready: sleeps on the condition\n");
			b_seq0 = seq0; b_cond = 1; assert(B_WOKEN)
		   }
		fi;
		/* W4: pthread_cond_(timed)wait while cond_seq == seq0 */
		if
		:: d_step { seq != seq0 -> b_cond = 0; b_seq0 = 0; printf("B W4  woken\n") }
		   goto again
		:: d_step { b_cond = 0; b_seq0 = 0; printf("B W4  times out\n") }
		   goto ret
		fi;
#else
		/* W1: drain the eventfd (force after a readable poll), one
		 * step as in A */
		d_step {
			if
			:: woke || state / PENDING_ONE > 0 ->
				had = efd; efd = 0; cleared = (had > 0);
				holding = holding + cleared;
				state = state - had * PENDING_ONE;
				printf("B W1  read(efd): %d\n", had)
			:: else -> printf("B W1  nothing pending\n")
			fi
		}
		/* W2: bts ARMED */
		d_step { state = state | ARMED; had = 0; woke = 0; printf("B W2  bts ARMED\n") }
		/* W3: its own condition; restore only if it holds */
		if
		:: d_step { B_READY -> printf("B W3  ready\n") }
			if
			:: cleared -> POST(holding); cleared = 0
			:: else -> skip
			fi;
			goto again
		:: d_step {
			!B_READY -> printf("B W3  not ready (%d queued): keeps the drained count, sleeps\n", count);
			holding = holding - cleared; cleared = 0
		   }
		fi;
		/* W4: poll(efd), or time out */
		d_step { b_asleep = 1 }
		if
		:: d_step { efd > 0 -> b_asleep = 0; woke = 1; printf("B W4  poll returns\n") }
		   goto again
		:: d_step { b_asleep = 0; printf("B W4  times out\n") }
		   goto ret
		fi;
#endif
	ret:
		skip;
		d_step { had = 0; seq0 = 0; sig0 = 0; woke = 0 }
	:: calls < NCALL -> break   /* or makes no more calls */
	:: else -> break
	od
}

/* ------------------------------------------------------------ checks */

active proctype monitor()
{
end:
	atomic {
		!((!a_asleep || A_WOKEN) && B_WOKEN) ->
		assert(!a_asleep || A_WOKEN);
		assert(B_WOKEN)
	}
}

init
{
	byte i;

	atomic {
		i = 0;
		do
		:: i < NPROD -> run producer(i); i++
		:: else -> break
		od;
#ifdef SIGNAL
		run signaller()
#endif
	}
}
