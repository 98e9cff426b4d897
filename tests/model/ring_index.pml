/*
 * Promela model of the index ring (include/lfpoll/internal/ring_index.h),
 * the mode of a ring opened with LFP_SINGLE_PRODUCER and
 * LFP_SINGLE_CONSUMER: one producer, one consumer, each owning its index
 * and keeping a copy of the other's.
 *
 *   spin -a ring_index.pml          the protocol as implemented
 *   spin -DEARLY_RELEASE -a ring_index.pml
 *                                   the consumer gives its positions back
 *                                   (I4) before copying them out: spin
 *                                   must find an entry overwritten while
 *                                   it was being read
 *   spin -DEARLY_PUBLISH -a ring_index.pml
 *                                   the producer publishes head (I2) before
 *                                   filling the slots: spin must find an
 *                                   entry read before it was written
 *   spin -DLATE_CHANGE -a ring_index.pml
 *                                   the producer records a change of
 *                                   length (I5) after publishing head:
 *                                   spin must find a burst that takes an
 *                                   entry of another length as its own
 *   spin -DSTALE_CHANGE -a ring_index.pml
 *                                   the consumer copies head without
 *                                   len_change: the same
 *   spin -DCHANGE_FIRST -a ring_index.pml
 *                                   the consumer copies len_change before
 *                                   head: the same
 *
 * Ring: CAP slots of two payload bytes, d0 and d1, written and read one
 * at a time, so a copy that overlaps a write is seen torn.  head and tail
 * never wrap (the code's are 64-bit).
 *
 * Producer, per call of up to NB entries (lfp__idx_claim_prod, the
 * copies, lfp__idx_commit_prod):
 *   room = tail_seen + CAP - head; if room < n: tail_seen = tail (I1),
 *   room again; none: full, retry the call; k = min(n, room); fill k
 *   slots; head = head + k (I2).
 * Consumer, per call of up to NBC entries (lfp__idx_claim_cons, the
 *   copies, lfp__idx_commit_cons): avail = head_seen - tail; if avail <
 *   n: head_seen = head (I3), avail again; none: empty, retry; k =
 *   min(n, avail); copy k slots; tail = tail + k (I4).
 *
 * Lengths (I5): entry 3 is two units long, the others one; each entry's
 * length is stored in lm[] before head moves (the code leaves a word that
 * already holds the length alone, lfp__idx_set_meta: in this model, where
 * every access is sequentially consistent, a store of the value a variable
 * already holds changes no state, so the two are the same).  The producer
 * keeps the last length it stored and where that run began (len_change);
 * the consumer copies len_change with head (change_seen).  Each consumer
 * call asks for entries of cap 1 or 2 units (either, nondeterministically):
 * when the entry at tail has length cap and change_seen <= tail, it takes
 * k entries without reading their lengths (the fast path), otherwise it
 * reads each one's and stops before one longer than cap.
 *
 * Memory: sequentially consistent; I1..I4 are acquire and release on a
 * weaker machine, I5's loads and stores relaxed, ordered by I2 and I3
 * (docs/design.md section 1.1).
 *
 * Items: the i-th entry is i + 1.  Properties (safety, exhaustive): no
 * invalid end state; every copy is whole and is the next entry in order
 * (FIFO, exactly once); no entry is longer than the cap of the call that
 * took it, and one taken on the fast path has exactly that length; at the
 * end all were taken.
 */

#ifndef CAP
#define CAP 2
#endif
#ifndef NEV
#define NEV 5                   /* entries */
#endif
#ifndef NB
#define NB 2                    /* the producer's burst */
#endif
#ifndef NBC
#define NBC 2                   /* the consumer's burst */
#endif

byte d0[CAP];
byte d1[CAP];
byte lm[CAP];                   /* each entry's length (the metadata) */
byte len_change;                /* the producer's; copied by the consumer */

#define LEN(v) ((v) == 3 -> 2 : 1)
byte head;                      /* the producer's, read by the consumer (I3) */
byte tail;                      /* the consumer's, read by the producer (I1) */

proctype Prod()
{
	byte done, room, k, i, tail_seen, last_len;

	do
	:: done == NEV -> break
	:: else ->
		k = NEV - done;
		if
		:: k > NB -> k = NB
		:: else
		fi;
		room = tail_seen + CAP - head;
		if
		:: room < k ->
			tail_seen = tail;                       /* I1 */
			room = tail_seen + CAP - head
		:: else
		fi;
		if
		:: room == 0 -> skip                            /* full: retry */
		:: else ->
			if
			:: k > room -> k = room
			:: else
			fi;
#ifdef EARLY_PUBLISH
			head = head + k;
			for (i : 0 .. k - 1) {
				d0[(head - k + i) % CAP] = done + i + 1;
				d1[(head - k + i) % CAP] = done + i + 1;
				lm[(head - k + i) % CAP] = LEN(done + i + 1);
				if
				:: LEN(done + i + 1) != last_len ->
					last_len = LEN(done + i + 1);
					len_change = head - k + i
				:: else
				fi
			}
#else
			for (i : 0 .. k - 1) {
				d0[(head + i) % CAP] = done + i + 1;
				d1[(head + i) % CAP] = done + i + 1;
				lm[(head + i) % CAP] = LEN(done + i + 1);
#ifndef LATE_CHANGE
				if                              /* I5 */
				:: LEN(done + i + 1) != last_len ->
					last_len = LEN(done + i + 1);
					len_change = head + i
				:: else
				fi
#endif
			}
			head = head + k;                        /* I2 */
#ifdef LATE_CHANGE
			for (i : 0 .. k - 1) {
				if
				:: LEN(done + i + 1) != last_len ->
					last_len = LEN(done + i + 1);
					len_change = head - k + i
				:: else
				fi
			}
#endif
#endif
			done = done + k
		fi;
		room = 0; i = 0
	od
}

proctype Cons()
{
	byte taken, avail, k, i, head_seen, c0, c1, cap, fast, change_seen;

	do
	:: taken == NEV -> break
	:: else ->
		k = NBC;
		if
		:: cap = 1
		:: cap = 2
		fi;
		avail = head_seen - tail;
		if
		:: avail < k ->
#ifdef CHANGE_FIRST
			change_seen = len_change;
#endif
			head_seen = head;                       /* I3 */
#if !defined(STALE_CHANGE) && !defined(CHANGE_FIRST)
			change_seen = len_change;               /* I5 */
#endif
			avail = head_seen - tail
		:: else
		fi;
		if
		:: avail == 0 -> skip                           /* empty: retry */
		:: else ->
			if
			:: k > avail -> k = avail
			:: else
			fi;
			/* the lengths: one word, or each entry's (I5) */
			if
			:: lm[tail % CAP] == cap && (k == 1 || change_seen <= tail) ->
				fast = 1
			:: else ->
				fast = 0;
				i = 0;
				do
				:: i < k && lm[(tail + i) % CAP] <= cap -> i++
				:: else -> break
				od;
				k = i
			fi
		fi;
		if
		:: avail == 0 || k == 0 -> skip        /* empty, or too long */
		:: else ->
#ifdef EARLY_RELEASE
			tail = tail + k;
			for (i : 0 .. k - 1) {
				c0 = d0[(tail - k + i) % CAP];
				c1 = d1[(tail - k + i) % CAP];
				assert(c0 == taken + i + 1 && c1 == c0);
				assert(LEN(c0) <= cap && (!fast || LEN(c0) == cap))
			}
#else
			for (i : 0 .. k - 1) {
				c0 = d0[(tail + i) % CAP];
				c1 = d1[(tail + i) % CAP];
				/* whole, and the next entry in order */
				assert(c0 == taken + i + 1 && c1 == c0);
				/* not longer than cap; exactly cap if fast */
				assert(LEN(c0) <= cap && (!fast || LEN(c0) == cap))
			}
			tail = tail + k;                        /* I4 */
#endif
			taken = taken + k
		fi;
		avail = 0; i = 0; c0 = 0; c1 = 0; cap = 0; fast = 0
	od
}

init
{
	run Prod();
	run Cons();
	(_nr_pr == 1);
	assert(head == NEV && tail == NEV)
}
