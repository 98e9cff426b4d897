/*
 * The orderings of lfpoll that need every RMW to be a full barrier, under
 * a memory model weaker than x86-TSO, as on ARMv8 (include/lfpoll/
 * internal/atomic.h: every ck_pr RMW is bracketed by full fences on
 * machines other than x86; with -DOLD_D the RMWs are the bare exclusive
 * pair loops they used to be, with no ordering at all).
 *
 *   spin -DPAT=1 -a weak.pml    MP: the Treiber push of a poll link
 *                               against lfp_poll's exchange and walk
 *   spin -DPAT=2 -a weak.pml    SB: lfp_poll_del's D1 against the
 *                               producer's claim of the link
 *   spin -DPAT=3 -a weak.pml    SB: the producer's P2/P3 against the
 *                               waiter's W2/W3 (signal.h) in the ck_pr
 *                               build, where lfp__mb_after_rmw is only a
 *                               compiler barrier
 *   add -DOLD_D: RMWs not ordered: spin must find each failure.
 *   Which of the two fences each pattern needs (not run by
 *   tests/model/run): -DNO_PRE drops the fence before every RMW (PAT 1
 *   fails), -DNO_POST the fence after (PAT 2 and PAT 3 fail).
 *   add -DBUILTINS: the LFP_ATOMIC_BUILTINS mapping, whose SEQ_CST RMW
 *   is a full barrier before it and none after (POWER's sync; ll/sc;
 *   isync lets the RMW's store wait behind later loads): only the
 *   explicit lfp__mb_after_rmw after W2, after D1 and after the claim
 *   orders the loads that follow.  Each pattern must verify; with
 *   -DNO_RMW_FENCE (no fence after D1 and the claim, as before they had
 *   one) PAT 2 must fail.
 *
 * Memory model (two threads, a few addresses):
 *  - Every store of a thread waits in a buffer with one slot per address;
 *    a flusher moves any pending slot of any thread to memory at any
 *    moment, in any order: stores to different addresses become visible
 *    out of program order (as on ARMv8 and under PSO).  Stores to one
 *    address stay in order: a store to an address whose slot is full
 *    first moves the older value to memory.
 *  - A load returns the thread's own pending value for that address, if
 *    any, else memory.  So a load can be satisfied while an earlier store
 *    of the thread to another address is not yet visible: store->load
 *    and store->store reordering.  Loads are performed in program order;
 *    the patterns below need nothing more (see the notes at each).
 *  - A full fence (lfp__mb, the acquire/release fences' store side, and
 *    the fences around an RMW) empties the thread's buffer.  A release
 *    store empties it before buffering its own store.
 *  - An RMW (CAS, exchange, fetch-and-add, bts) is atomic on its address:
 *    it waits until no other thread has a store to that address pending
 *    (such a store comes first in the address's coherence order), moves
 *    its own pending store to that address to memory, reads memory and
 *    computes.  Then:
 *      NEW (full barrier):  it empties the buffer first (the fence
 *                           before), writes memory directly (the fence
 *                           after: nothing of it stays buffered);
 *      OLD_D (unordered):   its write goes into the buffer like a plain
 *                           store, and the thread's other pending stores
 *                           stay there: the write may become visible
 *                           before them, and later loads may be satisfied
 *                           before it is visible.
 *    While an RMW's write is pending, no other thread's store to that
 *    address is moved to memory (asserted: these patterns have none).
 *
 * Properties (assertions, exhaustive):
 *  PAT 1: when lfp_poll's exchange takes link B, its load of B->next
 *         returns the top that B's successful push CAS expected: a link is
 *         never exposed with a stale next (which would drop the links
 *         below it from the walk: members lost for good).
 *  PAT 2: the deleter's load of the link state (ending its wait for
 *         PUSHING) and the producer's load of link->ps after its claim do
 *         not both return the old values (IDLE, the set), and no push
 *         happens once lfp_poll_del has returned.
 *  PAT 3: the producer's P3 load of state and the waiter's W3 load of the
 *         slot do not both return the old values (ARMED clear, slot
 *         empty): no lost wakeup.
 */

#ifndef PAT
#define PAT 1
#endif
#if defined(BUILTINS) && !defined(NO_POST)
#define NO_POST                 /* the SEQ_CST RMW: no fence after it */
#endif

#define NT 2                    /* threads 0 and 1 */
#define NADDR 4
#define S(t, a) ((t) * NADDR + (a))

byte mem[NADDR];
bit pend[NT * NADDR];           /* a store of thread t to address a waits */
byte pval[NT * NADDR];
bit prmw[NT * NADDR];           /* ... and it is an RMW's write */

byte ndone;                     /* threads finished */

/* ------------------------------------------------------------ memory */

inline FLUSH(t, a)
{
	assert(!prmw[S(1 - (t), a)] || !pend[S(1 - (t), a)]);
	mem[a] = pval[S(t, a)];
	pend[S(t, a)] = 0; pval[S(t, a)] = 0; prmw[S(t, a)] = 0
}

/* A full fence: every pending store of t reaches memory. */
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

/* The guard every RMW step starts with. */
#define RMW_OK(t, a) (!pend[S(1 - (t), a)])

/* The start of an RMW (inside its d_step, after RMW_OK). */
inline RMW_PRE(t, a)
{
#if defined(OLD_D) || defined(NO_PRE)
	if
	:: pend[S(t, a)] -> FLUSH(t, a)
	:: else -> skip
	fi
#else
	DRAIN(t)
#endif
}

/* The write of an RMW. */
inline RMW_WRITE(t, a, v)
{
#if defined(OLD_D) || defined(NO_PRE) || defined(NO_POST)
	pend[S(t, a)] = 1; pval[S(t, a)] = v; prmw[S(t, a)] = 1
#else
	mem[a] = v
#endif
}

/* The fence after an RMW: in NEW its write went straight to memory, so
 * there is nothing left to do; with NO_PRE it is a step of its own, and
 * the write may reach memory before the stores buffered before it. */
inline RMW_POST(t)
{
#ifdef NO_PRE
	d_step { DRAIN(t) }
#else
	skip
#endif
}

/* lfp__mb_after_rmw: a full fence in the builtins mapping (only a
 * compiler barrier under ck_pr, whose RMWs need none).  nofence: the
 * call site is one that had none before (-DNO_RMW_FENCE leaves it out). */
inline MB_AFTER_RMW(t, nofence)
{
#ifdef BUILTINS
	if
	:: nofence -> skip
	:: else -> d_step { DRAIN(t); printf("T%d lfp__mb_after_rmw\n", t) }
	fi
#else
	skip
#endif
}

#ifdef NO_RMW_FENCE
#define NEW_FENCE 1
#else
#define NEW_FENCE 0
#endif

/* ok = CAS(a, expected e, new n); cur: the value read; msg: a printf
 * format for the result (ok, cur).  (Macros, for the string.) */
#define CAS(t, a, e, n, ok, cur, msg) \
	d_step { \
		RMW_OK(t, a) -> \
		RMW_PRE(t, a); \
		cur = mem[a]; \
		if \
		:: cur == e -> RMW_WRITE(t, a, n); ok = 1 \
		:: else -> ok = 0 \
		fi; \
		printf(msg, ok, cur) \
	}; \
	RMW_POST(t)

#define XCHG(t, a, n, old, msg) \
	d_step { \
		RMW_OK(t, a) -> \
		RMW_PRE(t, a); \
		old = mem[a]; \
		RMW_WRITE(t, a, n); \
		printf(msg, old) \
	}; \
	RMW_POST(t)

/* Any pending store of any thread may reach memory, in any order. */
#define FL(t, a) \
	:: d_step { pend[S(t, a)] -> \
		printf("T%d store [%d] = %d reaches memory\n", t, a, pval[S(t, a)]); \
		FLUSH(t, a) }

active proctype flusher()
{
end:
	do
	FL(0, 0) FL(0, 1) FL(0, 2) FL(0, 3)
	FL(1, 0) FL(1, 1) FL(1, 2) FL(1, 3)
	od
}

/* Link states and link names. */
#define IDLE    0
#define PUSHING 1
#define TRACKED 2
#define LINK_A  1
#define LINK_B  2
#define STALE   3               /* B->next left from an earlier life */

#if PAT == 1
/* ------------------------------------------------------------ PAT 1: MP
 *
 * The stack holds link A.  Thread 0 runs lfp__poll_link_notify for link
 * B: claim (CAS IDLE -> PUSHING), load the top, store B->next = top, CAS
 * ready top -> B (a failed CAS reloads the top and stores next again),
 * store TRACKED (release).  Thread 1 runs lfp_poll's exchange of the stack
 * twice, and each time it takes B, loads B->next.  That load's address
 * comes from the exchange (an address dependency, which ARMv8 keeps in
 * order), so only the writer's order is in question.
 */
#define READY 0
#define NEXTB 1
#define QB    2

byte b_top = 255;               /* ghost: the top B's push CAS expected */

proctype pusher()
{
	byte i, top, cur;
	bit ok;

	CAS(0, QB, IDLE, PUSHING, ok, cur, "T0 claim: CAS B state IDLE -> PUSHING: %d (read %d)\n");
	d_step { LOAD(0, READY, top); printf("T0 load ready = %d\n", top) }
retry:
	skip;
	d_step {
		STORE(0, NEXTB, top); b_top = top;
		printf("T0 store B->next = %d (buffered)\n", top)
	}
	CAS(0, READY, top, LINK_B, ok, cur, "T0 push: CAS ready -> B: %d (read %d)\n");
	if
	:: ok -> skip
	:: else -> top = cur; goto retry
	fi;
	d_step { STORE_REL(0, QB, TRACKED); printf("T0 store TRACKED (release)\n") }
	ndone++
}

proctype poller()
{
	byte i, k, got, n;

	do
	:: k < 2 ->
		XCHG(1, READY, 0, got, "T1 lfp_poll: exchange ready: takes %d (1 A, 2 B)\n");
		if
		:: got == LINK_B ->
			d_step {
				LOAD(1, NEXTB, n);
				printf("T1 load B->next = %d (the push expected %d)\n", n, b_top);
				assert(n == b_top)
			}
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	ndone++
}

init
{
	atomic {
		mem[READY] = LINK_A;
		mem[NEXTB] = STALE;
		mem[QB] = IDLE;
		run pusher();
		run poller()
	}
}
#endif

#if PAT == 2
/* ------------------------------------------------------------ PAT 2: SB
 *
 * Link B is a member (ps = the set) and IDLE, the stack empty.  Thread 0
 * is a producer after publishing work: load ps, load the state (the cheap
 * checks), claim (CAS IDLE -> PUSHING), load ps again (acquire): NULL ->
 * store IDLE (release); the set -> push B (load top, store next, CAS
 * ready) and store TRACKED (release).  Thread 1 is lfp_poll_del: D1 (CAS
 * ps -> NULL), wait while the state loads as PUSHING (acquire), take the
 * stack (exchange), return.  The loads of each side come after its RMW in
 * program order with nothing else between: a load performed early is the
 * same as the RMW's write staying buffered, which the model has.
 */
#define PSB   0
#define QB    1
#define READY 2
#define NEXTB 3

#define SET 1
byte r_del = 255;               /* ghost: the state the deleter's wait ended on */
byte r_prod = 255;              /* ghost: ps as the producer re-read it */
bit del_returned;

proctype producer()
{
	byte i, v, top, cur;
	bit ok;

	d_step { LOAD(0, PSB, v); printf("T0 load ps = %d\n", v) }
	if
	:: v == 0 -> goto done
	:: else -> skip
	fi;
	d_step { LOAD(0, QB, v); printf("T0 load state = %d\n", v) }
	if
	:: v != IDLE -> goto done
	:: else -> skip
	fi;
	CAS(0, QB, IDLE, PUSHING, ok, cur, "T0 claim: CAS state IDLE -> PUSHING: %d (read %d)\n");
	MB_AFTER_RMW(0, NEW_FENCE);
	if
	:: !ok -> goto done
	:: else -> skip
	fi;
	d_step { LOAD(0, PSB, v); r_prod = v; printf("T0 load ps = %d (after the claim)\n", v) }
	if
	:: v == 0 ->
		d_step { STORE_REL(0, QB, IDLE); printf("T0 store IDLE (release)\n") }
		goto done
	:: else -> skip
	fi;
	d_step { LOAD(0, READY, top); printf("T0 load ready = %d\n", top) }
retry:
	skip;
	d_step { STORE(0, NEXTB, top); printf("T0 store B->next = %d (buffered)\n", top) }
	CAS(0, READY, top, LINK_B, ok, cur, "T0 push: CAS ready -> B: %d (read %d)\n");
	if
	:: ok -> assert(!del_returned)
	:: else -> top = cur; goto retry
	fi;
	d_step { STORE_REL(0, QB, TRACKED); printf("T0 store TRACKED (release)\n") }
done:
	ndone++
}

proctype deleter()
{
	byte i, v, cur, got;
	bit ok;

	CAS(1, PSB, SET, 0, ok, cur, "T1 D1: CAS ps -> NULL: %d (read %d)\n");
	MB_AFTER_RMW(1, NEW_FENCE);
	do
	:: d_step {
		LOAD(1, QB, v);
		printf("T1 load state = %d\n", v)
	   }
	   if
	   :: v == PUSHING -> skip
	   :: else -> break
	   fi
	od;
	r_del = v;
	XCHG(1, READY, 0, got, "T1 exchange ready: takes %d\n");
	d_step { del_returned = 1; printf("T1 lfp_poll_del returns\n") }
	ndone++
}

init
{
	atomic {
		mem[PSB] = SET;
		mem[QB] = IDLE;
		run producer();
		run deleter()
	}
	(ndone == 2) ->
	assert(!(r_del == IDLE && r_prod == SET))
}
#endif

#if PAT == 3
/* ------------------------------------------------------------ PAT 3: SB
 *
 * Thread 0 is a producer: publish (a release store of the slot word,
 * ring.h R1), P2 (lfp__mb: a full fence), P3 (load state).  Thread 1 is a
 * waiter: W2 (bts ARMED; lfp__mb_after_rmw is only a compiler barrier in
 * the ck_pr build, so the RMW's own fences are all there is), W3 (load the
 * slot).  As in PAT 2, each side's load comes right after its barrier.
 */
#define SLOT  0
#define STATE 1

#define ARMED     1
#define PUBLISHED 1
byte r_state = 255;             /* ghost: P3's load */
byte r_slot = 255;              /* ghost: W3's load */

proctype producer()
{
	byte i, v;

	d_step { STORE_REL(0, SLOT, PUBLISHED); printf("T0 P1 publish (buffered)\n") }
	d_step { DRAIN(0); printf("T0 P2 full fence\n") }
	d_step { LOAD(0, STATE, v); r_state = v; printf("T0 P3 load state = %d\n", v) }
	ndone++
}

proctype waiter()
{
	byte i, v;

	d_step {
		RMW_OK(1, STATE) ->
		RMW_PRE(1, STATE);
		v = mem[STATE];
		RMW_WRITE(1, STATE, v | ARMED);
		printf("T1 W2 bts ARMED\n")
	}
	RMW_POST(1);
	MB_AFTER_RMW(1, 0);
	d_step { LOAD(1, SLOT, v); r_slot = v; printf("T1 W3 load slot = %d\n", v) }
	ndone++
}

init
{
	atomic { run producer(); run waiter() }
	(ndone == 2) ->
	assert(!((r_state & ARMED) == 0 && r_slot != PUBLISHED))
}
#endif
