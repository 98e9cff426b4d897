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
 * Memory: sequentially consistent; I1..I4 are acquire and release on a
 * weaker machine (docs/design.md section 1.1).
 *
 * Items: the i-th entry is i + 1.  Properties (safety, exhaustive): no
 * invalid end state; every copy is whole and is the next entry in order
 * (FIFO, exactly once); at the end all were taken.
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
byte head;                      /* the producer's, read by the consumer (I3) */
byte tail;                      /* the consumer's, read by the producer (I1) */

proctype Prod()
{
	byte done, room, k, i, tail_seen;

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
				d1[(head - k + i) % CAP] = done + i + 1
			}
#else
			for (i : 0 .. k - 1) {
				d0[(head + i) % CAP] = done + i + 1;
				d1[(head + i) % CAP] = done + i + 1
			}
			head = head + k;                        /* I2 */
#endif
			done = done + k
		fi;
		room = 0; i = 0
	od
}

proctype Cons()
{
	byte taken, avail, k, i, head_seen, c0, c1;

	do
	:: taken == NEV -> break
	:: else ->
		k = NBC;
		avail = head_seen - tail;
		if
		:: avail < k ->
			head_seen = head;                       /* I3 */
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
#ifdef EARLY_RELEASE
			tail = tail + k;
			for (i : 0 .. k - 1) {
				c0 = d0[(tail - k + i) % CAP];
				c1 = d1[(tail - k + i) % CAP];
				assert(c0 == taken + i + 1 && c1 == c0)
			}
#else
			for (i : 0 .. k - 1) {
				c0 = d0[(tail + i) % CAP];
				c1 = d1[(tail + i) % CAP];
				/* whole, and the next entry in order */
				assert(c0 == taken + i + 1 && c1 == c0)
			}
			tail = tail + k;                        /* I4 */
#endif
			taken = taken + k
		fi;
		avail = 0; i = 0; c0 = 0; c1 = 0
	od
}

init
{
	run Prod();
	run Cons();
	(_nr_pr == 1);
	assert(head == NEV && tail == NEV)
}
