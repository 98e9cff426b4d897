/*
 * Promela model of the ring's claim protocol (include/lfpoll/ring.h):
 * producers that claim the positions whose slots they saw free by CAS on
 * head, consumers that claim published slots by CAS on tail and free them
 * after their copy-out, and a peeker (lfp_ring_peek: a seqlock read of the
 * head slot, no claim).
 *
 *   spin -a ring.pml            the protocol as implemented: a burst
 *                               producer, a single-entry producer and two
 *                               consumers
 *   spin -DNCONS=1 -DPEEK -a ring.pml
 *                               the same with one consumer and a peeker
 *   spin -DBLIND_CLAIM -a ring.pml
 *                               a burst that claims all n positions once it
 *                               saw the first free (as a fetch-and-add
 *                               claim would): spin must find a consumer
 *                               whose copy-out was overwritten
 *
 * Ring: CAP slots, each a word `seq` (the slot word's sequence: pos when
 * free for position pos, pos + 1 when position pos is published in it) and
 * a payload of two bytes, d0 and d1, written and read one at a time, so a
 * copy that overlaps a write is seen torn.  head and tail are the
 * producers' and consumers' positions.
 *
 * Producer, per call of n entries (lfp__ring_claim_prod, then put):
 *   pos = head;
 *   loop: k = the slots from pos on seen free (seq == pos + i, R2), at most
 *         n; none: seq < pos, full, the call returns 0 (and is retried);
 *         seq > pos, pos is stale, reload it; else CAS head pos -> pos + k
 *         (failure reloads pos);
 *   for each: d0 = v; d1 = v; seq = pos + 1 (R1, the publish).
 * Producer 0 calls with bursts of NBURST, producer 1 with single entries.
 * Consumer (lfp__ring_claim_cons with n = 1, then take):
 *   pos = tail; if seq != pos + 1: empty or stale, retry; CAS tail pos ->
 *   pos + 1; copy d0, d1; seq = pos + CAP (R4, the free).
 * Peeker: pos = tail; w = seq; if w == pos + 1: copy d0, d1; if seq == w
 *   still, the copy is the entry at pos.
 *
 * Memory: sequentially consistent: each step is one access to one shared
 * location.  The protocol's orderings on a weaker machine are acquire (R2,
 * R3), release (R1, R4) and the peek's fence pair (R5, R6); docs/design.md
 * gives the argument ("Ring"); this model is about the protocol's logic:
 * whether a claim can let a producer overwrite an entry that is still
 * being read.
 *
 * Items: producer p's i-th entry is p * 8 + i + 1 (never 0).
 *
 * Properties (safety, exhaustive):
 *  (1) no invalid end state;
 *  (2) every copy a consumer makes of the entry it claimed is whole and is
 *      that entry (d0 == d1 == the value the slot held when claimed);
 *  (3) per-producer FIFO and exactly once: the entries of each producer
 *      are claimed in the order it wrote them, none twice, and at the end
 *      all were taken;
 *  (4) a peeked copy that passed its re-check is whole.
 */

#ifndef CAP
#define CAP 2
#endif
#ifndef NEV
#define NEV 2                   /* entries per producer */
#endif
#ifndef NBURST
#define NBURST 2                /* producer 0's burst size */
#endif
#define NPROD 2
#ifndef NCONS
#define NCONS 2                 /* consumers: 1 or 2 */
#endif
#ifndef NPEEK
#define NPEEK 1               /* whole peeks before the peeker stops */
#endif
#define TOTAL (NPROD * NEV)

byte seq[CAP];
byte d0[CAP];
byte d1[CAP];
byte head;
byte tail;
byte taken;                     /* entries claimed by consumers */
byte next[NPROD];               /* each producer's next entry to be claimed */

proctype Prod(byte id; byte n)
{
	byte done, pos, k, v;
	short dif;

	do
	:: done == NEV -> break
	:: else ->
		if
		:: n > NEV - done -> n = NEV - done
		:: else
		fi;
		pos = head;
		do
		:: k = 0;
		   do                                   /* R2: the slots seen free */
		   :: k < n && seq[(pos + k) % CAP] == pos + k -> k++
		   :: else -> break
		   od;
		   if
		   :: k == 0 ->
			dif = seq[pos % CAP] - pos;
			if
			:: dif < 0 -> break                 /* full: the call returns 0 */
			:: else -> pos = head               /* stale: retry */
			fi
		   :: else ->
#ifdef BLIND_CLAIM
			k = n;
#endif
			atomic {
				if
				:: head == pos -> head = pos + k;
					printf("P%d claims %d..%d\n", id, pos, pos + k - 1);
					break
				:: else -> pos = head
				fi
			}
		   fi
		od;
		for (v : 0 .. k - 1) {
			d_step { d0[(pos + v) % CAP] = id * 8 + done + v + 1; printf("P%d writes d0 of %d = %d\n", id, pos + v, id * 8 + done + v + 1) };
			d_step { d1[(pos + v) % CAP] = id * 8 + done + v + 1; printf("P%d writes d1 of %d\n", id, pos + v) };
			d_step { seq[(pos + v) % CAP] = pos + v + 1; printf("P%d publishes %d\n", id, pos + v) }  /* R1 */
		}
		done = done + k
	od
}

proctype Cons()
{
	byte pos, v, c0, c1;

	do
	:: taken == TOTAL -> break
	:: else ->
		pos = tail;
		if
		:: seq[pos % CAP] == pos + 1 ->
			atomic {
				if
				:: tail == pos ->
					tail = pos + 1;
					taken++;
					printf("C claims %d\n", pos);
					/* The entry at pos is this claim's:
					 * (3) in the order of claims. */
					v = d0[pos % CAP];
					assert(v / 8 < NPROD && v % 8 == next[v / 8] + 1);
					next[v / 8]++
				:: else -> v = 0
				fi
			}
			if
			:: v != 0 ->
				d_step { c0 = d0[pos % CAP]; printf("C copies d0 of %d = %d\n", pos, c0) };
				d_step { c1 = d1[pos % CAP]; printf("C copies d1 of %d = %d (claimed %d)\n", pos, c1, v) };
				assert(c0 == v && c1 == v);     /* (2) */
				seq[pos % CAP] = pos + CAP      /* R4 */
			:: else
			fi
		:: else
		fi
	od
}

proctype Peek()
{
	byte pos, w, c0, c1, tries;

	do
	:: tries == NPEEK || taken == TOTAL -> break
	:: else ->
		pos = tail;
		w = seq[pos % CAP];
		if
		:: w == pos + 1 ->
			c0 = d0[pos % CAP];
			c1 = d1[pos % CAP];
			if
			:: seq[pos % CAP] == w ->
				assert(c0 == c1 && c0 != 0);    /* (4) */
				tries++
			:: else
			fi
		:: else
		fi
	od
}

active proctype main()
{
	byte i;

	for (i : 0 .. CAP - 1) {
		seq[i] = i
	}
	run Prod(0, NBURST);
	run Prod(1, 1);
	run Cons();
#if NCONS > 1
	run Cons();
#endif
#ifdef PEEK
	run Peek();
#endif
	(_nr_pr == 1);
	assert(taken == TOTAL && next[0] == NEV && next[1] == NEV)  /* (3) */
}
