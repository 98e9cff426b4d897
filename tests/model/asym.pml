/*
 * The asymmetric fence of a CQ with no wait object in a poll set
 * (include/lfpoll/internal/poll_link.h: lfp__notify_all,
 * lfp__poll_link_attach; poll.h: lfp_poll_add, lfp_poll, lfp_poll_del).
 *
 * A CQ whose wait object is NONE and whose link is marked asym has a
 * producer that makes no hardware fence when the CQ is in no poll set:
 *   P1   publish the entry (release store of the slot word)
 *        compiler barrier only
 *        load link->stack (relaxed); NULL: done
 *   P2   (stack set) full barrier, then the usual notify: load stack and
 *        queued; IDLE: claim (CAS IDLE -> PUSHING), re-read stack, push
 *        onto the ready stack, store TRACKED (release), full barrier (I4)
 * In exchange lfp_poll_add, under the set's mutex, makes the process-wide
 * barrier (membarrier(2), private expedited) right after its CAS of stack
 * NULL -> set, then tracks the link (CAS IDLE -> TRACKED, or finds it
 * TRACKED, or waits while PUSHING) and unlocks.  lfp_poll (later, under the
 * same mutex, maybe in another thread) then looks at the CQ: ready() is one
 * load of the slot word at the consumer's tail; an empty CQ's link is
 * dropped (L1: CAS TRACKED -> IDLE, full barrier, L2: ready() again; work
 * now: CAS IDLE -> TRACKED and report it).
 *
 *   spin -a asym.pml                 the asym protocol, x86-TSO
 *   spin -DWEAK -a asym.pml          the same, stores visible out of order
 *                                    (ARMv8-like, as weak.pml)
 *   spin -DNO_HEAVY -a asym.pml      the add's membarrier left out: spin
 *                                    must find the lost report
 *   spin -DFENCED -a asym.pml        the code without asym (a wait object, or
 *                                    no membarrier): the producer
 *                                    always fences after P1, no membarrier
 * Configurations (each with any of the above):
 *   -DNEV=1 or 2      entries written by each producer (default 2)
 *   -DNPROD=2         two producers (T0 and T3), each claiming its slots
 *   -DPOLLER          lfp_poll runs in a thread of its own (T2), not in
 *                     the adder after its add
 *   -DDEL             (implies POLLER) the adder runs lfp_poll_add, then
 *                     lfp_poll_del and lfp_poll_add again
 *   -DMB_FAIL         the membarrier may fail: the add marks the link
 *                     sticky instead (lfp__poll_link_attach)
 *   -DNPOLL=n         lfp_poll calls, at most (default 2)
 * Where the membarrier goes, and checks of the model itself:
 *   -DHEAVY_LAST      the membarrier after the add's CAS of queued, just
 *                     before the unlock: must verify too
 *   -DHEAVY_FIRST     the membarrier before the CAS of stack: must fail
 *                     (a producer's load of stack may come after the
 *                     barrier and before the CAS)
 *   -DFENCED -DNO_P2  the producer's P2 removed from the fenced code: must
 *                     fail
 *   -DNO_L2           lfp_poll drops the link at L1 without its re-check:
 *                     must fail (a producer that fenced and found the
 *                     link TRACKED just before L1 loses its entries)
 *
 * Memory model, x86-TSO (default), as trywait.pml: every plain store
 * (release stores included: a plain mov) goes into its thread's FIFO store
 * buffer; a load sees the thread's own youngest buffered store to its
 * address, else memory; a flusher moves the oldest entry of any buffer to
 * memory at any moment.  A full barrier and every locked RMW (CAS,
 * exchange, and the mutex's lock and unlock) first empty the thread's
 * buffer, then act on memory in one step.
 *
 * -DWEAK, as weak.pml: a thread has one pending slot per address; the
 * flusher moves any pending slot of any thread to memory, in any order
 * (store -> store and store -> load reordering).  A release store first
 * empties the thread's buffer, then waits in it.  A full barrier and each
 * RMW (fenced on both sides: section 0 of docs/design.md) empty the buffer,
 * and an RMW writes memory directly.  Loads are performed in program
 * order: the loads that matter here are ordered by a barrier, the mutex's
 * acquire or a dependency anyway.
 *
 * The membarrier (both models): a step that starts it, then one full
 * barrier for each other thread (a step of the flusher's that empties
 * that thread's buffer, at any moment the scheduler picks), then a step
 * that returns once every other thread has made its barrier.  That is
 * the call's guarantee: each other thread makes a full barrier at some
 * point between the call's start and its return (an IPI, or a context
 * switch for a thread that is not running).  Loads are performed at their
 * step, so a thread's loads after its barrier see memory as it is then
 * or later.
 *
 * Abstractions:
 *  - One CQ, one link, one poll set.  The CQ is its slot words (no wrap);
 *    ready() is one load of the slot at tail.  tail is the consumer's own
 *    (one thread polls and reads).  The reading frees nothing (no wrap).
 *    A producer's claim of its slot is a step of its own with no fence
 *    (the ring's claim is an RMW; leaving its fence out only adds runs).
 *  - With one link the Treiber stack is a word: 1 when the link is on it.
 *    The push's CAS always finds it empty (only the owner of PUSHING
 *    pushes), so the load of the top and the store of next are left out.
 *  - The poller's lists (tracked, reported) are one bit, onlist, read and
 *    written only under the mutex.  The mutex is a word taken by an RMW and
 *    released by an RMW (as glibc's), each a full barrier.
 *  - The application reads every entry that ready() shows, after an
 *    lfp_poll that reported the CQ (outside the mutex).
 *  - Waiting loops (the add's and the del's wait for PUSHING) are guards.
 *
 * Property (exhaustive, safety): when every thread has finished and the
 * buffers have drained, an entry still in the CQ has its link TRACKED and
 * on the poller's list or on the ready stack: the next lfp_poll reports
 * it.  (No lost report.)  Also: the link is never on the stack and on the
 * list at once, and no invalid end state.
 */

#ifndef NEV
#define NEV 2
#endif
#ifndef NPROD
#define NPROD 1
#endif
#define TOTAL (NPROD * NEV)
#ifndef NPOLL
#define NPOLL 2
#endif
#ifdef DEL
#ifndef POLLER
#define POLLER
#endif
#endif

/* T0 producer, T1 adder, T2 poller, T3 the second producer */
#define NT (NPROD + 2)

/* The threads other than the adder (T1), as a mask. */
#ifdef POLLER
#define OTHER2 4
#else
#define OTHER2 0
#endif
#if NPROD > 1
#define OTHER3 8
#else
#define OTHER3 0
#endif
#define OTHERS (1 | OTHER2 | OTHER3)

/* Addresses: slot words 0 .. TOTAL-1, then the link and the set. */
#define STK   TOTAL             /* link->stack */
#define Q     (TOTAL + 1)       /* link->queued */
#define RDY   (TOTAL + 2)       /* the set's ready stack (1: the link) */
#define NADDR (TOTAL + 3)

#define EMPTY     0
#define PUBLISHED 1

/* stack values */
#define NUL       0
#define SET       1
#define DETACHING 2

#define IDLE    0
#define PUSHING 1
#define TRACKED 2

byte mem[NADDR];

/* Under the mutex (poller side only). */
bit onlist;                     /* the link is on the poller's lists */
bit sticky;
bit lck;                        /* the set's mutex */

byte head;                      /* the producers' claims */
byte tail;                      /* the consumer's index */
byte mbp;                       /* threads the membarrier still waits for */
byte ndone;                     /* threads finished */

/* ------------------------------------------------------------ memory */

#ifndef WEAK
#define SBSZ 3
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

inline STORE(t, a, v)
{
	assert(sb[t].n < SBSZ);
	sb[t].addr[sb[t].n] = a;
	sb[t].val[sb[t].n] = v;
	sb[t].n++
}

/* A release store is a plain mov on x86. */
inline STORE_REL(t, a, v)
{
	STORE(t, a, v)
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

#define FL(t) \
	:: d_step { sb[t].n > 0 -> \
		printf("T%d store [%d] = %d reaches memory\n", t, sb[t].addr[0], sb[t].val[0]); \
		FLUSH1(t) }

#define MBP(t) \
	:: d_step { mbp & (1 << t) -> \
		DRAIN(t); mbp = mbp & ~(1 << t); \
		printf("T%d full barrier (the membarrier's)\n", t) }

active proctype flusher()
{
	byte i;
end:
	do
	FL(0) FL(1) FL(2)
#if NPROD > 1
	FL(3)
#endif
	MBP(0)
#ifdef POLLER
	MBP(2)
#endif
#if NPROD > 1
	MBP(3)
#endif
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

/* Stores to one address stay in order. */
inline STORE(t, a, v)
{
	if
	:: pend[S(t, a)] -> FLUSH(t, a)
	:: else -> skip
	fi;
	pend[S(t, a)] = 1; pval[S(t, a)] = v
}

inline STORE_REL(t, a, v)
{
	DRAIN(t);
	STORE(t, a, v)
}

#define MBP(t) \
	:: d_step { mbp & (1 << t) -> \
		DRAIN(t); mbp = mbp & ~(1 << t); \
		printf("T%d full barrier (the membarrier's)\n", t) }

#define FL(t, a) \
	:: d_step { pend[S(t, a)] -> \
		printf("T%d store [%d] = %d reaches memory\n", t, a, pval[S(t, a)]); \
		FLUSH(t, a) }

/* The plain stores: the producer's slots and queued, the del's stack. */
active proctype flusher()
{
	byte i;
end:
	do
	FL(0, 0)
#if TOTAL > 1
	FL(0, 1)
#endif
#if TOTAL > 2
	FL(0, 2)
#endif
	FL(0, Q)
	FL(1, STK)
#if NPROD > 1
	FL(3, 0)
	FL(3, 1)
#if TOTAL > 2
	FL(3, 2)
#endif
	FL(3, Q)
#endif
	MBP(0)
#ifdef POLLER
	MBP(2)
#endif
#if NPROD > 1
	MBP(3)
#endif
	od
}
#endif /* WEAK */

/* A full barrier. */
#define MB(t, msg) d_step { DRAIN(t); printf(msg, t) }

/* ok = CAS(a, e -> n), cur the value read: a full-barrier RMW. */
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

/* The process-wide barrier: every other thread's buffer empties. */
/* The process-wide barrier: it starts, each other thread makes a full
 * barrier at a moment of its own (a step of the flusher's), and it returns
 * once they all have. */
inline MEMBARRIER(t)
{
	d_step { mbp = OTHERS; printf("T%d membarrier starts\n", t) }
	d_step { mbp == 0 -> printf("T%d membarrier returns\n", t) }
}

inline LOCK(t)
{
	d_step { lck == 0 -> DRAIN(t); lck = 1; printf("T%d lock\n", t) }
}

inline UNLOCK(t)
{
	d_step { DRAIN(t); lck = 0; printf("T%d unlock\n", t) }
}

/* ready(): the slot at tail holds an entry (one load). */
inline READY(t, r)
{
	if
	:: tail < TOTAL -> LOAD(t, tail, r); r = (r == PUBLISHED)
	:: else -> r = 0
	fi
}

/* ------------------------------------------------------------ producer */

/* lfp_cq_write on an asym CQ (no wait object), NEV times. */
proctype producer(byte t)
{
	byte i, k, v, cur, pos;
	bit ok;

	do
	:: k < NEV ->
		/* The claim of a slot (its RMW's fence left out: fewer
		 * orderings, more runs) ... */
		d_step { pos = head; head++; printf("T%d claims slot %d\n", t, pos) }
		/* ... then P1: the release store of the slot word. */
		d_step {
			STORE_REL(t, pos, PUBLISHED);
			printf("T%d P1 publish entry %d (buffered)\n", t, pos);
			pos = 0
		}
#if defined(FENCED) && !defined(NO_P2)
		MB(t, "T%d P2 full barrier\n");
#endif
		/* asym: a compiler barrier, then a relaxed load of stack. */
		d_step { LOAD(t, STK, v); printf("T%d load stack = %d\n", t, v) }
		if
		:: v == NUL -> goto next
		:: else -> skip
		fi;
#ifndef FENCED
		/* lfp__notify_in_set: the P2 that lfp__notify_all left out. */
		MB(t, "T%d P2 full barrier (in a set)\n");
#endif
		/* lfp__poll_link_notify */
		d_step { LOAD(t, STK, v); printf("T%d load stack = %d\n", t, v) }
		if
		:: v == NUL -> goto next
		:: else -> skip
		fi;
		d_step { LOAD(t, Q, v); printf("T%d load queued = %d\n", t, v) }
		if
		:: v != IDLE -> goto next
		:: else -> skip
		fi;
		/* lfp__poll_link_push */
		CAS(t, Q, IDLE, PUSHING, ok, cur, "T%d claim: CAS queued IDLE -> PUSHING: %d (read %d)\n");
		if
		:: !ok -> goto next
		:: else -> skip
		fi;
		d_step { LOAD(t, STK, v); printf("T%d load stack = %d (acquire)\n", t, v) }
		if
		:: v != SET ->
			d_step { STORE_REL(t, Q, IDLE); printf("T%d store queued IDLE (release)\n", t) }
			goto next
		:: else -> skip
		fi;
		CAS(t, RDY, 0, 1, ok, cur, "T%d push: CAS ready 0 -> link: %d (read %d)\n");
		assert(ok);
		d_step { STORE_REL(t, Q, TRACKED); printf("T%d store queued TRACKED (release)\n", t) }
		MB(t, "T%d I4 full barrier\n");
next:
		k++
	:: else -> break
	od;
	ndone++
}

/* ------------------------------------------------------------ poller side */

/* lfp_poll_add, lfp__poll_link_attach. */
inline ADD(t)
{
	LOCK(t);
#ifdef HEAVY_FIRST
	MEMBARRIER(t);
#endif
	CAS(t, STK, NUL, SET, ok, cur, "T%d add: CAS stack NULL -> set: %d (read %d)\n");
	assert(ok);
#if !defined(NO_HEAVY) && !defined(FENCED) && !defined(HEAVY_FIRST) && !defined(HEAVY_LAST)
	if
	:: MEMBARRIER(t)
#ifdef MB_FAIL
	:: d_step { sticky = 1; printf("T%d membarrier fails: link sticky\n", t) }
#endif
	fi;
#endif
	/* CAS IDLE -> TRACKED; TRACKED: a producer pushed it; PUSHING: wait. */
	d_step {
		mem[Q] != PUSHING ->
		DRAIN(t);
		cur = mem[Q];
		if
		:: cur == IDLE -> mem[Q] = TRACKED; assert(!onlist); onlist = 1
		:: else -> assert(cur == TRACKED)
		fi;
		printf("T%d add: queued was %d: on the list %d\n", t, cur, onlist)
	}
#ifdef HEAVY_LAST
	MEMBARRIER(t);
#endif
	UNLOCK(t)
}

/* lfp_poll_del, lfp__poll_link_detach and _detached. */
inline DEL1(t)
{
	LOCK(t);
	CAS(t, STK, SET, DETACHING, ok, cur, "T%d D1: CAS stack set -> DETACHING: %d (read %d)\n");
	assert(ok);
	d_step { mem[Q] != PUSHING -> printf("T%d del: queued = %d\n", t, mem[Q]) }
	if
	:: onlist -> d_step { onlist = 0; printf("T%d del: off the list\n", t) }
	:: else ->
		d_step {
			DRAIN(t); cur = mem[RDY]; mem[RDY] = 0;
			printf("T%d del: exchange ready: takes %d\n", t, cur)
		}
	fi;
	CAS(t, Q, TRACKED, IDLE, ok, cur, "T%d del: CAS queued TRACKED -> IDLE: %d (read %d)\n");
	d_step { STORE_REL(t, STK, NUL); printf("T%d del: store stack NULL (release)\n", t) }
	UNLOCK(t)
}

/* lfp_poll, then the application reads the CQ if it was reported. */
inline POLL(t)
{
	LOCK(t);
	d_step {
		DRAIN(t); cur = mem[RDY]; mem[RDY] = 0;
		if
		:: cur -> assert(!onlist); onlist = 1
		:: else -> skip
		fi;
		printf("T%d lfp_poll: exchange ready: takes %d\n", t, cur)
	}
	r = 0;
	if
	:: onlist ->
		d_step { READY(t, r); printf("T%d lfp_poll: ready() = %d\n", t, r) }
		if
		:: !r && !sticky ->
			CAS(t, Q, TRACKED, IDLE, ok, cur, "T%d L1: CAS queued TRACKED -> IDLE: %d (read %d)\n");
			if
			:: ok ->
#ifndef NO_L2
				d_step {
					DRAIN(t); READY(t, r);
					printf("T%d L2: full barrier, ready() = %d\n", t, r)
				}
#else
				r = 0;
#endif
				if
				:: !r -> d_step { onlist = 0; printf("T%d lfp_poll: link dropped\n", t) }
				:: else ->
					CAS(t, Q, IDLE, TRACKED, ok, cur, "T%d L2: CAS queued IDLE -> TRACKED: %d (read %d)\n");
					if
					:: !ok -> d_step { onlist = 0; r = 0; printf("T%d lfp_poll: a producer pushes it\n", t) }
					:: else -> skip
					fi
				fi
			:: else -> skip        /* PUSHING: kept */
			fi
		:: else -> skip
		fi
	:: else -> skip
	fi;
	UNLOCK(t);
	if
	:: r ->
		printf("T%d lfp_poll reports the CQ\n", t);
		do
		:: d_step {
			READY(t, v);
			if
			:: v -> printf("T%d reads entry %d\n", t, tail); tail++
			:: else -> printf("T%d read: empty\n", t)
			fi
		   }
		   if
		   :: !v -> break
		   :: else -> skip
		   fi
		od
	:: else -> skip
	fi;
	r = 0; v = 0; cur = 0; ok = 0
}

inline POLLS(t)
{
	do
	:: np < NPOLL -> POLL(t); np++
	:: break
	od
}

proctype adder()
{
	byte i, cur, v, np;
	bit ok, r;

	ADD(1);
#ifdef DEL
	DEL1(1);
	ADD(1);
#endif
#ifndef POLLER
	POLLS(1);
#endif
	ndone++
}

#ifdef POLLER
proctype poller()
{
	byte i, cur, v, np;
	bit ok, r;

	POLLS(2);
	ndone++
}
#define NRUN (NPROD + 2)
#else
#define NRUN (NPROD + 1)
#endif

init
{
	byte i;

	atomic {
		run producer(0);
		run adder();
#ifdef POLLER
		run poller();
#else
		skip;                   /* T2 is the init process then */
#endif
#if NPROD > 1
		run producer(3)
#endif
	}
	(ndone == NRUN) ->
	d_step {
		DRAIN(0); DRAIN(1); DRAIN(2);
#if NPROD > 1
		DRAIN(3);
#endif
		printf("end: buffers drained: tail %d, queued %d, on the list %d, on the stack %d\n",
		       tail, mem[Q], onlist, mem[RDY]);
		assert(tail >= TOTAL || mem[tail] != PUBLISHED ||
		       (mem[Q] == TRACKED && (onlist || mem[RDY])))
	}
}
