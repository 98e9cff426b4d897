/*
 * Promela model of the poll-set link protocol (include/lfpoll/internal/
 * poll_link.h, used by poll.h):
 * producers that publish work on an object and then queue its link
 * (lfp__poll_link_notify), the poller (lfp_poll, under the set's lock,
 * followed by the application reading what it reported) and, with -DDEL,
 * lfp_poll_del followed by lfp_poll_add of one member, under the same
 * lock.
 *
 *   spin -a pollset.pml            the protocol as implemented
 *   spin -DDEL -a pollset.pml      the same, with a concurrent del + add
 *   spin -DOLD_B -a pollset.pml    the earlier L1: a plain store of IDLE
 *                                  instead of the CAS TRACKED -> IDLE;
 *                                  spin must find a member lost for good
 *
 * Link states (queued): IDLE, PUSHING, TRACKED.
 *
 * Producer, per event, on the link of its object:
 *   publish (P1; P2, the full barrier, is implied: see Memory);
 *   load link->ps, load queued: return unless a set and IDLE;
 *   claim: CAS queued IDLE -> PUSHING (return if it fails);
 *   load link->ps: if NULL (deleted meanwhile), store IDLE, return;
 *   Treiber push: load ready; then, until the CAS succeeds: store
 *   link->next = top, CAS ready top -> link (a failed CAS reloads top);
 *   store TRACKED.
 * Poller, lfp_poll, repeatedly: take the lock; exchange the stack with
 * NULL and append its links to its own list; for each link on its list:
 * object ready -> report it and keep it; not ready -> L1: CAS TRACKED ->
 * IDLE (if it fails, the link is still PUSHING: keep it); L2: full
 * barrier, re-check: not ready -> drop it; ready -> CAS IDLE -> TRACKED
 * (fails: a producer is pushing it: drop it, it comes back on the stack;
 * succeeds: keep it, report it if ready); unlock.  Then the application
 * reads every object reported (takes all its work).
 * lfp_poll_del (DEL; link 1): lock; D1 CAS link->ps -> NULL; wait while
 * PUSHING; unlink it from the poller's list, or else exchange the stack,
 * unlink it there and put the rest on the poller's list; CAS TRACKED ->
 * IDLE; unlock.  lfp_poll_add: lock; CAS link->ps NULL -> set; then CAS
 * IDLE -> TRACKED and append it to the poller's list, or find it TRACKED
 * (a producer pushed it), or wait while PUSHING; unlock.
 *
 * Memory: sequentially consistent: each step is one atomic action on one
 * shared location (or the lock's critical section of the poller's private
 * lists, which only the lock holder touches).  The bug this model is
 * about is one of protocol logic.  The two orderings of this protocol that
 * need the RMWs to be full barriers on a weak machine (the store of next
 * before the push's CAS; D1 against the claim) are checked in weak.pml.
 *
 * Abstractions:
 *  - An object's work is a count: publish adds 1; the application's read
 *    after lfp_poll reported the object takes it all; ready() is
 *    "work > 0".  That is a CQ (lfp_cq_write / lfp_cq_read).
 *  - The poller's two private lists (tracked, reported) are one set of
 *    links, `mine`; their order is only lfp_poll's fairness.  The stack is
 *    the ready pointer and the next fields; the ghost `stackset` is the set
 *    of links on it.  The poller walks what its exchange took in the same
 *    step as the exchange: the links it took are TRACKED or PUSHING with
 *    their push done, so no producer writes their next fields.
 *  - lfp_poll's count is large enough for every member.
 *  - Waiting loops (del while PUSHING, add while PUSHING) are guards.
 *
 * Properties (safety, exhaustive):
 *  (1) no invalid end state;
 *  (2) NOT_LOST, asserted at the start of every lfp_poll (under the lock):
 *      once every producer has finished (and, with DEL, the del and add
 *      have), every member that has work is TRACKED and on the stack or
 *      on the poller's list: a later lfp_poll reports it;
 *  (3) no link is on the stack and on the poller's list at once;
 *  (4) DEL: after lfp_poll_del returned, the link is on neither, and no
 *      producer pushes it until lfp_poll_add.
 */

#ifndef NOBJ
#define NOBJ 2                  /* objects (links 1..NOBJ) */
#endif
#ifndef NPROD
#define NPROD 2                 /* producer i writes to object i % NOBJ + 1 */
#endif
#ifndef NEV
#define NEV 2                   /* events per producer */
#endif
#define TOTAL (NPROD * NEV)

#define IDLE    0
#define PUSHING 1
#define TRACKED 2

#define BIT(l) (1 << ((l) - 1))

byte ready;                     /* the set's stack: 0 = NULL, else a link */
byte next[NOBJ + 1];            /* link->next */
byte queued[NOBJ + 1];          /* link->queued */
bit ps[NOBJ + 1];               /* link->ps != NULL */
byte work[NOBJ + 1];            /* published, unread work */
bit lock;                       /* the set's mutex */
byte mine;                      /* the poller's lists (a set of links) */

/* ghost */
byte stackset;                  /* links on the stack */
byte inflight, produced;
bit admin_done, del_returned;

/* Every producer finished (and the del + add, if any). */
#define QUIESCENT (produced == TOTAL && inflight == 0 && admin_done)

#if NOBJ > 1
#define ALL_READ (work[1] == 0 && work[2] == 0)
#else
#define ALL_READ (work[1] == 0)
#endif

#define ON_A_LIST(l) (((mine | stackset) & BIT(l)) != 0)
#define KEPT(l) (!ps[l] || work[l] == 0 || (queued[l] == TRACKED && ON_A_LIST(l)))

/* ------------------------------------------------------------ producer */

proctype producer(byte l)
{
	byte k, v, top;

	do
	:: k < NEV ->
		/* P1 publish (P2 implied) */
		d_step {
			work[l]++; produced++; inflight++;
			printf("P%d  publish: work %d\n", l, work[l])
		}
		/* the cheap checks: in a set, and IDLE */
		d_step { v = ps[l] }
		if
		:: v -> skip
		:: else -> goto done
		fi;
		d_step { v = queued[l] }
		if
		:: v == IDLE -> skip
		:: else -> printf("P%d  link not IDLE (%d)\n", l, v); goto done
		fi;
		/* claim: CAS IDLE -> PUSHING */
		if
		:: d_step { queued[l] == IDLE -> queued[l] = PUSHING; printf("P%d  claim IDLE -> PUSHING\n", l) }
		:: d_step { queued[l] != IDLE -> printf("P%d  claim fails\n", l) }
		   goto done
		fi;
		/* re-read link->ps */
		d_step { v = ps[l] }
		if
		:: v -> skip
		:: else ->
			d_step { queued[l] = IDLE; printf("P%d  deleted meanwhile: IDLE\n", l) }
			goto done
		fi;
		/* Treiber push */
		d_step { top = ready }
	retry:
		skip;
		d_step { next[l] = top; printf("P%d  next = %d\n", l, top) }
		if
		:: d_step {
			ready == top -> ready = l; stackset = stackset | BIT(l);
			printf("P%d  CAS ready %d -> %d\n", l, top, l);
			assert(!(l == 1 && del_returned))     /* (4) */
		   }
		:: d_step { ready != top -> top = ready; printf("P%d  CAS ready fails\n", l) }
		   goto retry
		fi;
		d_step { queued[l] = TRACKED; printf("P%d  store TRACKED\n", l) }
	done:
		skip;
		d_step { inflight--; k++; v = 0; top = 0 }
	:: else -> break
	od
}

/* ------------------------------------------------------------ poller */

proctype poller()
{
	byte l, r, cur, reported;

	do
	::
		/* lfp_poll: lock; the checks; exchange the stack and walk it */
		d_step {
			!lock -> lock = 1;
			printf("poll\n");
			l = 1;
			do
			:: l <= NOBJ ->
				assert((mine & stackset & BIT(l)) == 0);   /* (3) */
				assert(!QUIESCENT || KEPT(l));             /* (2) */
				l++
			:: else -> break
			od;
			cur = ready; ready = 0; stackset = 0;
			do
			:: cur != 0 -> mine = mine | BIT(cur); cur = next[cur]
			:: else -> break
			od;
			printf("poll: takes the stack, list %d\n", mine)
		}
		l = 1;
		do
		:: l <= NOBJ ->
			if
			:: mine & BIT(l) ->
				d_step { r = (work[l] > 0) }
				if
				:: r -> d_step { reported = reported | BIT(l); printf("poll: %d ready: reported\n", l) }
				:: else ->
#ifndef OLD_B
					/* L1: CAS TRACKED -> IDLE */
					if
					:: d_step {
						queued[l] == TRACKED -> queued[l] = IDLE; mine = mine & ~BIT(l);
						printf("poll: %d not ready, L1 CAS TRACKED -> IDLE\n", l)
					   }
					:: d_step {
						queued[l] != TRACKED ->
						printf("poll: %d not ready, L1 CAS fails (PUSHING): kept\n", l)
					   }
					   goto nextl
					fi;
#else
					/* L1 as it was: a plain store of IDLE */
					d_step {
						queued[l] = IDLE; mine = mine & ~BIT(l);
						printf("poll: %d not ready, L1 store IDLE\n", l)
					}
#endif
					/* L2: full barrier, re-check */
					d_step { r = (work[l] > 0) }
					if
					:: r -> skip
					:: else -> printf("poll: %d L2 not ready: dropped\n", l); goto nextl
					fi;
					if
					:: d_step {
						queued[l] == IDLE -> queued[l] = TRACKED; mine = mine | BIT(l);
						printf("poll: %d L2 ready, CAS IDLE -> TRACKED\n", l)
					   }
						d_step { r = (work[l] > 0) }
						if
						:: r -> reported = reported | BIT(l)
						:: else -> skip
						fi
					:: d_step {
						queued[l] != IDLE ->
						printf("poll: %d L2 ready, CAS fails: a producer pushes it\n", l)
					   }
					fi
				fi
			:: else -> skip
			fi;
		nextl:
			l++
		:: else -> break
		od;
		lock = 0;       /* unlock (l, r: dead) */
		d_step { l = 0; r = 0 }
		/* the application reads what was reported */
		d_step {
			l = 1;
			do
			:: l <= NOBJ ->
				if
				:: reported & BIT(l) -> printf("app reads %d: %d\n", l, work[l]); work[l] = 0
				:: else -> skip
				fi;
				l++
			:: else -> break
			od;
			l = 0; reported = 0
		}
		/* stop when nothing more can come */
		if
		:: d_step {
			QUIESCENT && ALL_READ -> printf("poller stops\n")
		   }
		   break
		:: else -> skip
		fi
	od
}

/* ------------------------------------------------------------ del + add */

#ifdef DEL
proctype admin()
{
	byte cur, prev, v;

	/* lfp_poll_del(link 1) */
	d_step { !lock -> lock = 1 }
	d_step { ps[1] = 0; printf("del: D1 ps = NULL\n") }
	d_step { queued[1] != PUSHING -> printf("del: not PUSHING (%d)\n", queued[1]) }
	d_step {
		if
		:: mine & BIT(1) -> mine = mine & ~BIT(1); printf("del: off the poller's list\n")
		:: else ->
			/* take the stack whole; unlink 1; the rest to our list */
			cur = ready; ready = 0; stackset = 0;
			do
			:: cur != 0 ->
				if
				:: cur != 1 -> mine = mine | BIT(cur)
				:: else -> skip
				fi;
				cur = next[cur]
			:: else -> break
			od;
			printf("del: off the stack\n")
		fi
	}
	d_step {
		if
		:: queued[1] == TRACKED -> queued[1] = IDLE
		:: else -> skip
		fi;
		assert(!ON_A_LIST(1));                              /* (4) */
		del_returned = 1;
		lock = 0;
		printf("del: CAS TRACKED -> IDLE, unlock\n")
	}
	/* lfp_poll_add(link 1) */
	d_step { !lock -> lock = 1 }
	d_step { ps[1] = 1; del_returned = 0; printf("add: CAS ps = set\n") }
	if
	:: d_step {
		queued[1] == IDLE -> queued[1] = TRACKED; mine = mine | BIT(1);
		printf("add: CAS IDLE -> TRACKED, on the poller's list\n")
	   }
	:: d_step { queued[1] == TRACKED -> printf("add: TRACKED (pushed)\n") }
	fi;
	d_step { lock = 0; admin_done = 1; cur = 0; prev = 0; v = 0 }
}
#endif

init
{
	byte i;

	atomic {
		i = 1;
		do
		/* every object added (lfp_poll_add: TRACKED, on the
		 * poller's list) */
		:: i <= NOBJ -> ps[i] = 1; queued[i] = TRACKED; mine = mine | BIT(i); i++
		:: else -> break
		od;
#ifndef DEL
		admin_done = 1;
#endif
		i = 0;
		do
		:: i < NPROD -> run producer(i % NOBJ + 1); i++
		:: else -> break
		od;
		run poller();
#ifdef DEL
		run admin()
#endif
	}
}
