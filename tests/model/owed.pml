/*
 * The I4 barrier (docs/design.md 2.6): a counter in a poll set, its
 * producer's push of the poll link against a waiter's check of what the
 * link still owes to lfp_poll (include/lfpoll/internal/poll_link.h:
 * lfp__poll_link_push, lfp__fid_poll_owed; cntr.h; signal.h).
 *
 * The producer (lfp_cntr_inc with an FD wait object):
 *   P1  faa events (a full-barrier RMW)
 *   P2  full barrier
 *       the link is IDLE: claim (CAS IDLE -> PUSHING), push it onto the
 *       set's ready stack (CAS), store TRACKED (release)
 *   I4  full barrier
 *   P3  load the waiters' state; ARMED: P4, btr ARMED and, if it was set,
 *       post the eventfd
 * The waiter is an fi_poll(3) loop on that counter: lfp_trywait, then
 * lfp_poll when the trywait says work, or poll(2) on the eventfd when it
 * says none:
 *   W1  drain the eventfd (kept, and posted back if W3 finds work)
 *   W2  bts ARMED (RMW), then lfp__mb_after_rmw
 *   W3  load events: moved since the last trywait that reported them
 *       (trywait_seen)?  Else lfp__fid_poll_owed: the link is TRACKED
 *       and events differ from the link's seen (the change is owed to
 *       lfp_poll).  Either: work (-EAGAIN).  Neither: sleep in poll(2).
 *   lfp_poll: take the ready stack; for the link on its list, report it
 *       when events differ from seen (seen = events), else drop it (L1:
 *       CAS TRACKED -> IDLE, full barrier, L2: re-check; changed: CAS
 *       IDLE -> TRACKED and report).
 *
 *   spin -a owed.pml               x86-TSO
 *   spin -DWEAK -a owed.pml        stores visible out of order, as weak.pml
 *   spin -DNO_I4 -a owed.pml       the barrier after the TRACKED store
 *                                  removed: spin must find the waiter asleep
 *                                  with the change owed
 *   -DNEV=2                        the producer counts two events
 *   -DNO_OWED                      a check of the model: the checks do
 *                                  not call lfp__fid_poll_owed (defect I3):
 *                                  must fail, with I4 or without
 *
 * Memory models: as in asym.pml (x86-TSO: a FIFO store buffer per thread;
 * -DWEAK: one pending slot per address, flushed in any order, a release
 * store empties the buffer first).  Full barriers, RMWs and system calls
 * empty the thread's buffer and act on memory.  The only plain stores here
 * are the producer's stores to queued (TRACKED, release), so both models
 * give the same runs; the weak one is checked to say so.
 *
 * Abstractions:
 *  - One counter, one link, one poll set, one waiter.  link->stack is the
 *    set throughout (no del), so the producer's loads of it are left out.
 *  - With one link the Treiber stack is a word: 1 when the link is on it.
 *  - trywait_seen and the link's seen are read and written only by the
 *    waiter's thread (the trywaits and lfp_poll): plain variables.
 *  - The eventfd is a counter: a post adds 1 (a system call), W1 reads
 *    and resets it, poll(2) waits while it is 0.  PENDING (signal.h) is
 *    left out: trywait.pml checks W1.
 *  - The waiter stops where its poll(2) would block for good: producer
 *    done, eventfd 0, nothing owed.
 *
 * Property (exhaustive, safety), asserted where the waiter blocks in
 * poll(2) and, by a monitor, in every state while it is blocked: if the
 * counter has a change that neither a trywait nor lfp_poll has reported
 * while its link is on the ready stack or the poller's list (owed), then
 * the eventfd is readable or the producer is still before the end of
 * its P3/P4.  And no invalid end state.
 */

#ifndef NEV
#define NEV 1
#endif

#define NT 2                    /* T0 producer, T1 waiter */

#define EV    0                 /* the counter's events */
#define Q     1                 /* link->queued */
#define RDY   2                 /* the set's ready stack (1: the link) */
#define STATE 3                 /* the waiters' state word: ARMED */
#define NADDR 4

#define IDLE    0
#define PUSHING 1
#define TRACKED 2
#define ARMED   1

byte mem[NADDR];
byte efd;                       /* the eventfd's counter */

/* The waiter's thread only. */
byte wseen;                     /* the wait set's seen of the counter */
byte seen;                      /* link->seen */
bit onlist;                     /* the link is on lfp_poll's list */

/* ghost */
bit inflight;                   /* the producer is between P1 and its P3/P4's end */
bit asleep;
byte ndone;

/* Owed: a change the wait set has not seen, or one lfp_poll would report. */
#define OWED ((mem[EV] != wseen) || ((mem[RDY] || onlist) && mem[EV] != seen))
#define NO_LOST (!OWED || efd > 0 || inflight)

/* ------------------------------------------------------------ memory */

#ifndef WEAK
#define SBSZ 2
typedef sbuf {
	byte addr[SBSZ];
	byte val[SBSZ];
	byte n
};
sbuf sb[NT];

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

inline STORE_REL(t, a, v)
{
	assert(sb[t].n < SBSZ);
	sb[t].addr[sb[t].n] = a;
	sb[t].val[sb[t].n] = v;
	sb[t].n++
}

inline FLUSH1(t)
{
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

inline DRAIN(t)
{
	do
	:: sb[t].n > 0 -> FLUSH1(t)
	:: else -> break
	od
}

active proctype flusher()
{
	byte i;
end:
	do
	:: d_step { sb[0].n > 0 ->
		printf("T0 store [%d] = %d reaches memory\n", sb[0].addr[0], sb[0].val[0]);
		FLUSH1(0) }
	od
}

#else /* WEAK */

#define S(t, a) ((t) * NADDR + (a))
bit pend[NT * NADDR];
byte pval[NT * NADDR];

inline FLUSH(t, a)
{
	mem[a] = pval[S(t, a)];
	pend[S(t, a)] = 0; pval[S(t, a)] = 0
}

inline DRAIN(t)
{
	i = 0;
	do
	:: i < NADDR ->
		if
		:: pend[S(t, i)] -> FLUSH(t, i)
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	i = 0
}

inline LOAD(t, a, v)
{
	if
	:: pend[S(t, a)] -> v = pval[S(t, a)]
	:: else -> v = mem[a]
	fi
}

inline STORE_REL(t, a, v)
{
	DRAIN(t);
	pend[S(t, a)] = 1; pval[S(t, a)] = v
}

active proctype flusher()
{
	byte i;
end:
	do
	:: d_step { pend[S(0, Q)] ->
		printf("T0 store [%d] = %d reaches memory\n", Q, pval[S(0, Q)]);
		FLUSH(0, Q) }
	od
}
#endif /* WEAK */

#define MB(t, msg) d_step { DRAIN(t); printf(msg, t) }

#define CAS(t, a, e, n, ok, cur, msg) \
	d_step { \
		DRAIN(t); \
		cur = mem[a]; \
		if \
		:: cur == e -> mem[a] = n; ok = 1 \
		:: else -> ok = 0 \
		fi; \
		printf(msg, t, ok, cur) \
	}

/* ------------------------------------------------------------ producer */

proctype producer()
{
	byte i, k, v, cur;
	bit ok;

	do
	:: k < NEV ->
		d_step {
			DRAIN(0); mem[EV]++; inflight = 1;
			printf("T0 P1 faa events: %d\n", mem[EV])
		}
		MB(0, "T%d P2 full barrier\n");
		d_step { LOAD(0, Q, v); printf("T0 load queued = %d\n", v) }
		if
		:: v == IDLE ->
			CAS(0, Q, IDLE, PUSHING, ok, cur, "T%d claim: CAS queued IDLE -> PUSHING: %d (read %d)\n");
			if
			:: ok ->
				CAS(0, RDY, 0, 1, ok, cur, "T%d push: CAS ready 0 -> link: %d (read %d)\n");
				assert(ok);
				d_step { STORE_REL(0, Q, TRACKED); printf("T0 store queued TRACKED (release, buffered)\n") }
#ifndef NO_I4
				MB(0, "T%d I4 full barrier\n");
#endif
			:: else -> skip
			fi
		:: else -> skip
		fi;
		/* P3 */
		d_step {
			LOAD(0, STATE, v);
			printf("T0 P3 load state = %d\n", v);
			if
			:: v & ARMED -> skip
			:: else -> inflight = 0
			fi
		}
		if
		:: v & ARMED ->
			/* P4: btr ARMED; the producer that cleared it posts. */
			d_step {
				DRAIN(0); ok = mem[STATE] & ARMED; mem[STATE] = mem[STATE] & ~ARMED;
				printf("T0 P4 btr ARMED: was %d\n", ok);
				if
				:: ok -> skip
				:: else -> inflight = 0
				fi
			}
			if
			:: ok -> d_step { DRAIN(0); efd++; inflight = 0; printf("T0 P4 write(efd): %d\n", efd) }
			:: else -> skip
			fi
		:: else -> skip
		fi;
		d_step { v = 0; ok = 0; cur = 0; k++ }
	:: else -> break
	od;
	ndone++
}

/* ------------------------------------------------------------ waiter */

/* The wait set's check (lfp__set_core_ready_locked): the counter's
 * events moved since the set last saw them (consumed: wseen = events), or
 * its change is owed to the poll set (lfp__fid_poll_owed). */
#ifdef NO_OWED
#define NO_OWED_CHECK 1
#else
#define NO_OWED_CHECK 0
#endif

mtype = { lfp_wait_check, W3 };

#define CHECK(name) \
	d_step { LOAD(1, EV, ev); printf("T1 %e load events = %d (the set's seen %d)\n", name, ev, wseen) } \
	if \
	:: ev != wseen -> d_step { wseen = ev; work = 1; printf("T1 %e new events: work\n", name) } \
	:: else -> \
		d_step { LOAD(1, Q, v); printf("T1 %e owed? load queued = %d\n", name, v) } \
		if \
		:: v == TRACKED && !NO_OWED_CHECK -> \
			d_step { \
				LOAD(1, EV, ev); work = (ev != seen); \
				printf("T1 %e owed? events %d, link seen %d: %d\n", name, ev, seen, work) \
			} \
		:: else -> work = 0 \
		fi \
	fi

/* The application: lfp_wait on a wait set holding the counter, then
 * lfp_poll, again and again. */
proctype waiter()
{
	byte i, v, ev, cur;
	bit ok, cleared, work, r;

loop:
	skip;
	/* lfp_wait: the check first, before anything is armed */
	CHECK(lfp_wait_check);
	if
	:: work -> goto poll
	:: else -> skip
	fi;
	/* lfp__signal_wait_spin -> trywait: W1 */
	d_step {
		DRAIN(1); cleared = (efd > 0); efd = 0;
		printf("T1 W1 read(efd): %d\n", cleared)
	}
	/* W2, and lfp__mb_after_rmw */
	d_step { DRAIN(1); mem[STATE] = mem[STATE] | ARMED; printf("T1 W2 bts ARMED\n") }
	/* W3 */
	CHECK(W3);
	if
	:: work ->
		if
		:: cleared -> d_step { DRAIN(1); efd++; printf("T1 restore: write(efd)\n") }
		:: else -> skip
		fi;
		goto poll
	:: else -> skip
	fi;
	/* W4: poll(2) on the eventfd */
	d_step {
		cleared = 0; v = 0; ev = 0;
		printf("T1 W4 poll(efd): efd %d, events %d, set's seen %d, link seen %d, queued %d, on the stack %d, list %d, producer in flight %d\n",
		       efd, mem[EV], wseen, seen, mem[Q], mem[RDY], onlist, inflight);
		assert(NO_LOST);
		asleep = 1
	}
	if
	:: d_step { efd > 0 -> asleep = 0; printf("T1 W4 poll returns\n") }
	:: d_step { ndone == 1 && efd == 0 && !OWED -> asleep = 0; printf("T1 stops\n") }
	   goto stop
	fi;
poll:
	skip;
	/* lfp_wait returned: lfp_poll */
	d_step {
		cleared = 0; work = 0;
		DRAIN(1); cur = mem[RDY]; mem[RDY] = 0;
		if
		:: cur -> assert(!onlist); onlist = 1
		:: else -> skip
		fi;
		printf("T1 lfp_poll: exchange ready: takes %d\n", cur)
	}
	if
	:: onlist ->
		d_step {
			LOAD(1, EV, ev); r = (ev != seen);
			if
			:: r -> seen = ev; printf("T1 lfp_poll reports the counter (link seen = %d)\n", seen)
			:: else -> printf("T1 lfp_poll: no change\n")
			fi
		}
		if
		:: !r ->
			CAS(1, Q, TRACKED, IDLE, ok, cur, "T%d L1: CAS queued TRACKED -> IDLE: %d (read %d)\n");
			if
			:: ok ->
				d_step { DRAIN(1); LOAD(1, EV, ev); r = (ev != seen); printf("T1 L2: events %d\n", ev) }
				if
				:: !r -> d_step { onlist = 0; printf("T1 lfp_poll: link dropped\n") }
				:: else ->
					CAS(1, Q, IDLE, TRACKED, ok, cur, "T%d L2: CAS queued IDLE -> TRACKED: %d (read %d)\n");
					if
					:: ok -> d_step { seen = ev; printf("T1 lfp_poll reports the counter (link seen = %d)\n", seen) }
					:: else -> d_step { onlist = 0; printf("T1 lfp_poll: a producer pushes it\n") }
					fi
				fi
			:: else -> skip
			fi
		:: else -> skip
		fi
	:: else -> skip
	fi;
	d_step { r = 0; ok = 0; cur = 0; v = 0; ev = 0 }
	goto loop;
stop:
	ndone++
}

active proctype monitor()
{
end:
	atomic { !(!asleep || NO_LOST) -> assert(!asleep || NO_LOST) }
}

init
{
	atomic {
		mem[Q] = IDLE;
		run producer();
		run waiter()
	}
}
