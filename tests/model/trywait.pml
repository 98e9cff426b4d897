/*
 * Promela model of the lfpoll trywait protocol with the FD wait object
 * (include/lfpoll/internal/signal.h and internal/wait_fd.h): the eventfd waiters of one EQ, which all test
 * the same condition (the EQ is not empty).  Two producers (lfp_eq_write),
 * two waiters.  A waiter loops over lfp_eq_read, lfp_trywait and poll(2)
 * on the eventfd, as an application using LFP_GETWAIT does, and as a wait
 * set's lfp_wait does (which returns after each wake).  (lfp_eq_sread itself now sleeps
 * on the object's condition variable, as every blocking call with its own
 * condition does; multiwait.pml models those waiters beside an eventfd
 * waiter.)  P4 is modelled as "btr ARMED": with no ARMED_COND waiter the
 * fetch-and-clear of both armed bits in signal.h is the same.  It follows
 * signal.h as implemented: state holds ARMED and, above it, PENDING, the eventfd
 * posts announced and not yet drained.  A post adds 1 to PENDING (locked
 * RMW) and then writes the eventfd; W1 (lfp__signal_clear) reads the fd
 * when its load of state shows PENDING > 0, and subtracts the count it
 * read (locked RMW).  (-DFORCE: also whatever state says when the
 * waiter's last poll returned on a readable fd, as an earlier
 * lfp__signal_wait_spin did; no caller reached it.)  The monitor
 * checks the invariant the design rests on, eventfd counter <= PENDING, in
 * every reachable state.
 *
 *   spin -a trywait.pml              the protocol as implemented
 *   spin -DBROKEN -a trywait.pml     P2 (the producer's full barrier) removed:
 *                                    spin must find a lost wakeup
 *   spin -DFORCE -a trywait.pml      W1 forced after a readable wake (an
 *                                    earlier version; not run by run)
 * Earlier versions, for comparison (tests/model/run does not run them):
 *   -DOLD_89BA192   a SIGNALLED bit plus a count of drainers: post sets the
 *                   bit then writes; W1 counts in, resets the bit, reads,
 *                   sets the bit again after an empty read, counts out.
 *                   Liveness holds only thanks to force; its invariant
 *                   ("counter non-zero => bit or drainer") fails after two
 *                   overlapping posts (-DCHECK_SIGNALLED), and a stale bit
 *                   can keep itself set (-DCHECK_STALE).
 * and, with safety (1, 2) holding for both but liveness (3) failing:
 *   -DOLD_96A5138   post writes, then sets the bit; W1 drains only if its
 *                   btr reset the bit; no force, no drainer count.  A
 *                   waiter spins on a readable fd with the bit clear while
 *                   a poster is paused between its write and its bts
 *                   (weak fairness hides it: the poster runs eventually).
 *   -DOLD_D2AB353   post sets the bit first; W1 sets it again after an
 *                   empty read; no force, no drainer count.  A waiter
 *                   spins while another is paused between its btr and its
 *                   read; and, even under weak fairness (pan -a -f), after
 *                   two posts overlap the fd stays readable with the bit
 *                   clear and no drainer, and the waiters spin for ever.
 *   (89ba192 and docs/design.md 2.3 describe both windows.)
 * Checks of claims in signal.h / docs/design.md that do not hold (they
 * cost only time, not correctness; tests/model/run does not run them):
 *   -DCHECK_SIGNALLED  the drainer-count invariant: see the monitor.
 *   -DCHECK_STALE   "a drainer whose read found nothing although it reset
 *                   the bit" finds "a write still in flight, or another
 *                   drainer took the count": asserts the first.  When it is
 *                   the second, the bit is left set with the fd empty, and
 *                   it stays so: each W1 counts in, resets it, reads
 *                   nothing, sets it again, counts out (a read(2) per
 *                   trywait) until the next real post is drained.
 *
 * Memory model: x86-TSO.  Every plain store of a thread goes into that
 * thread's FIFO store buffer; a later load by the same thread of the same
 * address sees its own youngest buffered value (store forwarding); other
 * threads see the store only once it drains to memory, which the flusher
 * process does at any moment, oldest entry first.  A full barrier (P2) or a
 * locked RMW (btr, bts, CAS, and the eventfd read/write system calls) first
 * drains the thread's buffer and is then one atomic step on memory.  Plain
 * loads are single steps.  Loads never pass loads and stores never pass
 * stores, so the only reordering left is a load passing an earlier store:
 * the store-buffering that P2 (and W2) exist to forbid.  The waiters' one
 * plain store is R4 (freeing a slot); W2 is a locked bts, a full barrier by
 * itself on x86, so lfp__mb_after_rmw adds nothing here (it is the C11
 * fence of the LFP_ATOMIC_BUILTINS build, for weaker machines, which are
 * not modelled).
 *
 * Abstractions:
 *  - The ring (ring.h) is its slot words plus head and tail.  A producer
 *    claims a position with the CAS on head (an RMW) and publishes it with
 *    one release store of the slot word (R1, a plain mov on x86): that store
 *    is P1 and goes through the store buffer.  A consumer claims with the CAS
 *    on tail (an RMW) if the slot at tail is published, and frees the slot
 *    with a plain (release) store (R4), also buffered.  The ring holds all
 *    events (no wrap, no back-pressure, no overrun, no error queue, no peek).
 *  - ready() (lfp__eq_ready) is one load of the slot word at tail.  The real
 *    code loads tail and then the slot; since a slot once published stays
 *    published until its consumer frees it (after tail has moved past it),
 *    splitting the two loads only adds spurious "ready" answers, which cost
 *    a retry, never a sleep.
 *  - The eventfd is its counter `efd`: write adds 1, read returns whether it
 *    was non-zero and resets it, poll blocks while it is 0 and does not
 *    consume.  System calls are atomic and act as full barriers.
 *  - LFP_SPIN_COUNT is 1: one ready() check before trywait.  Timeouts and
 *    EINTR are not modelled (infinite timeout).
 *  - Steps that touch only thread-private state are folded into the shared
 *    step before them: the claim CAS and the buffered publish store (P1),
 *    the consumer's CAS and its buffered R4 store.  Entering a private store
 *    buffer is invisible to other threads, so no behaviour is lost.
 *  - Termination: a waiter stops where it would block in poll for good:
 *    counter 0, every event consumed, and no post to come (QUIESCENT).  The
 *    real application would use a timeout or close; here it lets every
 *    correct run end, so that spin's invalid-end-state check catches a
 *    waiter asleep for good while events are still queued, and liveness
 *    catches waiters that never settle (spinning on a readable fd).
 *
 * Properties:
 *  (1) no invalid end state: every run that ends has consumed every event
 *      and stopped every thread (pan, compiled -DSAFETY -DNOCLAIM);
 *  (2) NO_LOST_WAKEUP, asserted where a waiter blocks in poll and, by the
 *      monitor, in every state while one is blocked;
 *  (3) ltl all_consumed, <> (every event consumed and every waiter
 *      stopped), checked WITHOUT fairness (pan -a): every run ends, whatever
 *      the scheduler does, so no thread can loop for ever, e.g. spin on a
 *      readable fd, while any other is paused anywhere or all keep
 *      running.  This implies the same property under weak fairness
 *      (pan -a -f), which is what the BROKEN variant is checked against:
 *      there the event is never consumed although every thread runs.
 * tests/model/run checks (1)-(3) on this model and (2), (3) on BROKEN.
 *
 * Ghost variables (no part of the protocol; only the checks read them):
 *  inflight  producers between P1 (the claim of a position) and the end of
 *            P4 (the eventfd write, or the decision not to write)
 *  holding   waiters that drained a count at W1 and have not put it back
 *            (lfp__signal_restore) nor found no work at W3
 *  posting   threads inside lfp__wait_fd_post (between its two steps)
 *  asleep    waiters blocked in poll (W4)
 *  stopped   waiters that stopped (termination)
 */

#ifndef NEV
#define NEV 2                   /* events per producer */
#endif
#define NPROD 2
#define NWAIT 2
#define TOTAL (NPROD * NEV)
#define NTHR (NPROD + NWAIT)    /* threads 0..1 produce, 2..3 wait */
#define SBSZ 2                  /* store-buffer entries per thread */

/* Addresses in mem[]: the slot words, then the state word of the signal. */
#define STATE TOTAL
#define NADDR (TOTAL + 1)

/* Slot word values. */
#define EMPTY     0
#define PUBLISHED 1
#define FREED     2

/* state: LFP__ARMED and PENDING above it (the current design); the old
 * variants use LFP__SIGNALLED and a drainer count there instead. */
#define ARMED       1
#define PENDING_ONE 2
#define SIGNALLED   2
#define DRAINER     4
#define DRAINERS    252         /* ~(ARMED | SIGNALLED) in a byte */

#if defined(OLD_D2AB353) || defined(OLD_96A5138)
#define OLD
#endif

byte mem[NADDR];        /* shared memory as the other threads see it */
byte head;              /* ring head: only the producers' CAS touches it */
byte tail;              /* ring tail: consumers' CAS, and ready()'s load */
byte efd;               /* eventfd counter (kernel: system calls only) */

typedef sbuf {
	byte addr[SBSZ];
	byte val[SBSZ];
	byte n
};
sbuf sb[NTHR];

/* ghost */
byte inflight, holding, posting, asleep, stopped;

/* ------------------------------------------------------------ TSO memory */

/* v = load of address a by thread t (own buffer first, youngest wins). */
inline LOAD(t, a, v)
{
	v = mem[a];
	i = 0;
	do
	:: i < sb[t].n ->
		if
		:: sb[t].addr[i] == a -> v = sb[t].val[i]
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0
}

/* Plain store: append to thread t's buffer. */
inline STORE(t, a, v)
{
	assert(sb[t].n < SBSZ);
	sb[t].addr[sb[t].n] = a;
	sb[t].val[sb[t].n] = v;
	sb[t].n++
}

/* Move the oldest entry of thread t's buffer to memory. */
inline FLUSH1(t)
{
	printf("T%d mem address %d = %d reaches memory\n", t, sb[t].addr[0], sb[t].val[0]);
	mem[sb[t].addr[0]] = sb[t].val[0];
	i = 1;
	do
	:: i < sb[t].n ->
		sb[t].addr[i - 1] = sb[t].addr[i];
		sb[t].val[i - 1] = sb[t].val[i];
		i++
	:: else -> break
	od;
	sb[t].n--;
	sb[t].addr[sb[t].n] = 0;
	sb[t].val[sb[t].n] = 0;
	i = 0
}

/* Full barrier / the front half of a locked RMW: empty the buffer. */
inline DRAIN(t)
{
	do
	:: sb[t].n > 0 -> FLUSH1(t)
	:: else -> break
	od
}

/* lfp__eq_ready(): the slot at tail is published (one load). */
inline READY(t, r)
{
	if
	:: tail < TOTAL ->
		LOAD(t, tail, r);
		r = (r == PUBLISHED)
	:: else -> r = 0
	fi
}

/* The stores drain in the background, each buffer in FIFO order. */
active proctype flusher()
{
	byte i;
end:
	do
	:: d_step { sb[0].n > 0 -> FLUSH1(0) }
	:: d_step { sb[1].n > 0 -> FLUSH1(1) }
	:: d_step { sb[2].n > 0 -> FLUSH1(2) }
	:: d_step { sb[3].n > 0 -> FLUSH1(3) }
	od
}

/* ------------------------------------------------------------ post */

/* lfp__wait_fd_post: used by P4 and by lfp__signal_restore.  done is the
 * ghost counter the write ends (inflight for P4, holding for restore). */
inline POST(t, done)
{
#if !defined(OLD) && !defined(OLD_89BA192)
	/* faa PENDING + 1 (locked RMW) first ... */
	d_step {
		DRAIN(t); mem[STATE] = mem[STATE] + PENDING_ONE; posting++;
		printf("T%d     post: faa pending+1\n", t)
	}
	/* ... then write(efd). */
	d_step {
		DRAIN(t); efd++; posting--; done--;
		printf("T%d     post: write(efd): counter %d\n", t, efd)
	}
#elif !defined(OLD_96A5138)
	/* bts SIGNALLED (locked RMW) first ... */
	d_step {
		DRAIN(t); mem[STATE] = mem[STATE] | SIGNALLED; posting++;
		printf("T%d     post: bts SIGNALLED\n", t)
	}
	/* ... then write(efd). */
	d_step {
		DRAIN(t); efd++; posting--; done--;
		printf("T%d     post: write(efd): counter %d\n", t, efd)
	}
#else
	/* 96a5138: write(efd) first ... */
	d_step {
		DRAIN(t); efd++; posting++; done--;
		printf("T%d     post: write(efd): counter %d\n", t, efd)
	}
	/* ... then bts SIGNALLED. */
	d_step {
		DRAIN(t); mem[STATE] = mem[STATE] | SIGNALLED; posting--;
		printf("T%d     post: bts SIGNALLED\n", t)
	}
#endif
}

/* ------------------------------------------------------------ producer */

/* lfp_eq_write(): publish (P1), then lfp__signal_notify (P2-P4). */
proctype producer(byte t)
{
	byte i, k, pos, st, won;

	do
	:: k < NEV ->
		/* P1, lfp__ring_claim_prod: CAS on head (locked RMW), then
		 * lfp__ring_publish R1: the release store of the slot word, a
		 * plain mov on x86, which goes into the store buffer.  The
		 * payload copy between them touches no modelled state and the
		 * store enters a private buffer (only the flusher publishes
		 * it, later), so one step holds both. */
		d_step {
			DRAIN(t); pos = head; head++; inflight++;
			printf("T%d P1  CAS head: claims slot %d\n", t, pos);
			STORE(t, pos, PUBLISHED);
			printf("T%d P1  store slot %d = PUBLISHED (into T%d's store buffer)\n", t, pos, t);
			pos = 0
#ifdef BROKEN
			;
			printf("T%d P2  (removed: BROKEN)\n", t)
#endif
		}
#ifndef BROKEN
		/* P2, lfp__mb: locked add on a private word = full barrier. */
		d_step { DRAIN(t); printf("T%d P2  full barrier: store buffer drained\n", t) }
#endif
		/* P3: plain (relaxed) load of state. */
		d_step {
			LOAD(t, STATE, st);
			printf("T%d P3  load state = %d (ARMED %d)\n", t, st, st & ARMED);
			if
			:: st & ARMED -> skip
			:: else -> inflight--   /* nobody armed: done */
			fi
		}
		if
		:: st & ARMED ->
			/* P4, lfp__signal_fire: btr ARMED (locked RMW); only
			 * the producer that reset it signals. */
			d_step {
				DRAIN(t);
				won = mem[STATE] & ARMED;
				mem[STATE] = mem[STATE] & ~ARMED;
				printf("T%d P4  btr ARMED: was %d\n", t, won);
				if
				:: won -> skip
				:: else -> inflight--
				fi
			}
			if
			:: won -> POST(t, inflight)
			:: else -> skip
			fi
		:: else -> skip
		fi;
		d_step { st = 0; won = 0; k++ }
	:: else -> break
	od
}

/* ------------------------------------------------------------ waiter */

/* The key safety property, at the moment a waiter blocks in poll: if the
 * eventfd counter is 0 and an event is queued, some producer is still on
 * its way to its eventfd write (P1..P4) or some waiter still holds a
 * drained count it will put back.  Otherwise nobody will ever make the
 * eventfd readable: a lost wakeup. */
#define NO_LOST_WAKEUP \
	(efd > 0 || tail >= head || inflight > 0 || holding > 0)

/* Every event consumed and no post to come: no producer before its write,
 * no waiter holding a drained count. */
#define QUIESCENT (tail == TOTAL && inflight == 0 && holding == 0)

/* lfp_eq_sread() with an infinite timeout, called over and over (woke is
 * its local, 0 at each call). */
proctype waiter(byte t)
{
	byte i, pos, st, v, r, had, cleared, woke;

loop:
	/* lfp_eq_read, lfp__ring_claim_cons: CAS on tail (locked RMW) if the
	 * slot at tail is published; then R4, lfp__ring_free: a plain
	 * (release) store that frees the slot, into the store buffer.  The
	 * copy-out between the two touches no modelled state and the store
	 * enters a private buffer, so one step holds both.  An event read
	 * ends this lfp_eq_sread call: the next one starts with woke = 0. */
	atomic {
		DRAIN(t);
		r = 0;
		if
		:: tail < TOTAL ->
			LOAD(t, tail, v);
			if
			:: v == PUBLISHED ->
				pos = tail; tail++; r = 1; woke = 0;
				printf("T%d      read: consumes slot %d\n", t, pos);
				STORE(t, pos, FREED);
				pos = 0
			:: else -> skip
			fi;
			v = 0
		:: else -> skip
		fi;
		if
		:: !r -> printf("T%d      read: empty (-EAGAIN)\n", t)
		:: else -> skip
		fi
	}
	if
	:: r -> r = 0; goto loop
	:: else -> skip
	fi;

	/* lfp__signal_wait_spin: the bounded spin of ready() checks. */
	d_step { READY(t, r); printf("T%d      spin: ready() = %d\n", t, r) }
	if
	:: r -> r = 0; goto loop
	:: else -> skip
	fi;

	/* W1, lfp__signal_clear (force = woke only with -DFORCE and the
	 * earlier designs). */
#if !defined(OLD) && !defined(OLD_89BA192)
	if
#ifdef FORCE
	:: woke -> st = PENDING_ONE /* force: read whatever state says */
#endif
	:: else ->
		/* plain load of state: any pending post? */
		d_step {
			LOAD(t, STATE, st);
			printf("T%d W1  load state = %d (pending %d)\n",
			       t, st, st / PENDING_ONE)
		}
	fi;
	if
	:: st / PENDING_ONE > 0 ->
		/* read(efd): the whole count if non-zero, else EAGAIN */
		d_step {
			DRAIN(t);
			had = efd;
			cleared = (efd > 0);
			efd = 0;
			holding = holding + cleared;
			printf("T%d W1  read(efd): %d\n", t, had)
		}
		if
		:: had > 0 ->
			/* faa PENDING - count (locked RMW) */
			d_step {
				DRAIN(t); mem[STATE] = mem[STATE] - had * PENDING_ONE;
				printf("T%d W1  faa pending-%d\n", t, had)
			}
		:: else -> skip
		fi
	:: else -> skip
	fi;
#elif !defined(OLD)
	st = SIGNALLED;
	if
	:: woke -> skip /* force: drain whatever the bits say */
	:: else ->
		/* plain load of state: the bit or a drainer? */
		d_step {
			LOAD(t, STATE, st);
			printf("T%d W1  load state = %d (SIGNALLED %d, drainers %d)\n",
			       t, st, (st & SIGNALLED) / SIGNALLED, st / DRAINER)
		}
	fi;
	if
	:: st & (SIGNALLED | DRAINERS) ->
		/* faa +DRAINER (locked RMW) */
		d_step {
			DRAIN(t); mem[STATE] = mem[STATE] + DRAINER;
			printf("T%d W1  faa drainers+1 (force %d)\n", t, woke)
		}
		/* btr SIGNALLED (locked RMW) */
		d_step {
			DRAIN(t);
			had = (mem[STATE] & SIGNALLED) / SIGNALLED;
			mem[STATE] = mem[STATE] & ~SIGNALLED;
			printf("T%d W1  btr SIGNALLED: was %d\n", t, had)
		}
		/* read(efd): a count if non-zero, else EAGAIN (non-blocking) */
		d_step {
			DRAIN(t);
			cleared = (efd > 0);
			efd = 0;
			holding = holding + cleared;
#ifdef CHECK_STALE
			/* "a write is in flight" when our read is empty */
			assert(!had || cleared || posting > 0);
#endif
			printf("T%d W1  read(efd): cleared %d\n", t, cleared)
		}
		if
		:: had && !cleared ->
			/* empty although we reset the bit: bts it again */
			d_step {
				DRAIN(t); mem[STATE] = mem[STATE] | SIGNALLED;
				printf("T%d W1  bts SIGNALLED again\n", t)
			}
		:: else -> skip
		fi;
		/* faa -DRAINER (locked RMW) */
		d_step {
			DRAIN(t); mem[STATE] = mem[STATE] - DRAINER;
			printf("T%d W1  faa drainers-1\n", t)
		}
	:: else -> skip
	fi;
#else
	/* d2ab353 and 96a5138: no force, no drainer count. */
	d_step {
		LOAD(t, STATE, st);
		printf("T%d W1  load state = %d (SIGNALLED %d)\n", t, st, (st & SIGNALLED) / SIGNALLED)
	}
	if
	:: st & SIGNALLED ->
		d_step {
			DRAIN(t);
			had = (mem[STATE] & SIGNALLED) / SIGNALLED;
			mem[STATE] = mem[STATE] & ~SIGNALLED;
			printf("T%d W1  btr SIGNALLED: was %d\n", t, had)
		}
		if
		:: had ->
			d_step {
				DRAIN(t);
				cleared = (efd > 0);
				efd = 0;
				holding = holding + cleared;
				printf("T%d W1  read(efd): cleared %d\n", t, cleared)
			}
#ifdef OLD_D2AB353
			if
			:: !cleared ->
				d_step {
					DRAIN(t); mem[STATE] = mem[STATE] | SIGNALLED;
					printf("T%d W1  bts SIGNALLED again\n", t)
				}
			:: else -> skip
			fi
#endif
		:: else -> skip /* another waiter is draining it */
		fi
	:: else -> skip
	fi;
#endif

	/* W2, lfp__signal_arm: bts ARMED (locked RMW) then
	 * lfp__mb_after_rmw (the RMW is already a full barrier on x86).
	 * Also *woke = 0, which lfp__signal_wait_spin does after trywait
	 * (only W1 reads it, so doing it here is the same). */
	d_step {
		DRAIN(t); mem[STATE] = mem[STATE] | ARMED;
		st = 0; had = 0; woke = 0;
		printf("T%d W2  bts ARMED\n", t)
	}

	/* W3: re-check ready(). */
	d_step {
		READY(t, r);
		printf("T%d W3  ready() = %d\n", t, r);
		if
		:: !r && cleared -> holding--; cleared = 0  /* count dropped */
		:: else -> skip
		fi
	}
	if
	:: r ->
		r = 0;
		if
		:: cleared ->
			/* lfp__signal_restore -> lfp__wait_fd_post */
			POST(t, holding);
			cleared = 0
		:: else -> skip
		fi;
		goto loop   /* trywait returned -EAGAIN */
	:: else -> skip
	fi;

	/* W4, lfp__signal_sleep: poll(efd) blocks while the counter is 0;
	 * returning on a readable fd sets woke (force at the next W1). */
	d_step {
		printf("T%d W4  poll(efd): counter %d, %d event(s) queued, %d producer(s) before P4\n",
		       t, efd, head - tail, inflight);
		assert(NO_LOST_WAKEUP);
		asleep++
	}
	if
	:: d_step {
		efd > 0 -> asleep--; woke = 1;
		printf("T%d W4  poll returns\n", t)
	   }
	   goto loop
	:: d_step {
		/* Termination (ghost): every event consumed and nothing
		 * can make the fd readable any more, so this poll would
		 * block for good, as it may: the waiter stops here. */
		QUIESCENT && efd == 0 -> asleep--; stopped++;
		printf("T%d      stops: all consumed, nothing pending\n", t)
	   }
	fi
}

/* ------------------------------------------------------------ invariants */

/* Checked in every reachable state (the monitor can only move when one
 * fails, so it adds no states): NO_LOST_WAKEUP holds for as long as a
 * waiter is asleep, not only when it falls asleep.
 *
 * With -DCHECK_SIGNALLED, also the invariant of lfp__signal_clear's comment
 * and docs/design.md 2.3: while the eventfd counter is non-zero, SIGNALLED
 * is set or a drainer is counted.  It does not hold: two posts overlap, the
 * second one's bts lands on a bit that is already set, a drainer resets the
 * bit and takes the first write, and the second write lands with the bit
 * clear and no drainer.  What keeps that harmless is force (woke): the
 * waiter that the readable fd wakes drains it at its next W1 whatever the
 * bits say, so it costs one spurious wake per waiter.  The property that
 * matters, no waiter spinning on a readable fd, is property (3), checked
 * without fairness. */
#define INV_ASLEEP   (asleep == 0 || NO_LOST_WAKEUP)
#if !defined(OLD) && !defined(OLD_89BA192)
/* The design's invariant: the eventfd never holds more than PENDING. */
#define INV_SIGNALLED (efd <= mem[STATE] / PENDING_ONE)
#elif defined(CHECK_SIGNALLED)
#define INV_SIGNALLED \
	(efd == 0 || (mem[STATE] & (SIGNALLED | DRAINERS)))
#else
#define INV_SIGNALLED 1
#endif

active proctype monitor()
{
end:
	atomic {
		!(INV_ASLEEP && INV_SIGNALLED) ->
		assert(INV_ASLEEP);
		assert(INV_SIGNALLED)
	}
}

init
{
	atomic {
		run producer(0);
		run producer(1);
		run waiter(2);
		run waiter(3)
	}
}

/* (3) Every event is consumed and every waiter stops: pan -a (no
 * fairness) for the model, pan -a -f (weak fairness) for BROKEN; compile
 * without -DNOCLAIM. */
ltl all_consumed { <> (tail == TOTAL && stopped == NWAIT) }
