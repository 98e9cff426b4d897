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
 * Ring: CAP slots, each a word `seq` (the slot word's sequence: pos's lap
 * base when free for position pos, that + 1 when position pos is published
 * in it) and a payload of two bytes, d0 and d1, written and read one at a
 * time, so a copy that overlaps a write is seen torn.  head and tail are
 * the producers' and consumers' positions, never wrapping (the code's are
 * 64-bit); the sequences are kept modulo SEQMOD and compared by their
 * signed difference, as the code keeps them in 32 bits.  SEQMOD stands for
 * 2^32: with a small one (-DSEQMOD=6) a thread stalled after reading head
 * or tail while SEQMOD / 2 positions pass sees a difference that wrapped.
 *
 * Producer, per call of n entries (lfp__slot_claim_prod, then put):
 *   pos = head;
 *   loop: k = the slots from pos on seen free (seq == pos's, R2), at most
 *         n; none: the difference of seq and pos's is < 0 and head is
 *         still pos: full, the call returns 0 (and is retried); else pos is
 *         stale: reload it; some: CAS head pos -> pos + k (failure reloads
 *         pos);
 *   for each: d0 = v; d1 = v; seq = pos's + 1 (R1, the publish).
 * Producer 0 calls with bursts of NBURST, producer 1 with single entries.
 * Consumer (lfp__slot_claim_cons with n = 1, then take):
 *   pos = tail; if seq != pos's + 1: the difference is < 0 and tail is
 *   still pos: empty, the call returns (and is retried); else stale,
 *   retry; CAS tail pos -> pos + 1; copy d0, d1; seq = pos's + CAP (R4, the
 *   free).
 * Peeker: pos = tail; w = seq; if w == pos's + 1: copy d0, d1; if seq == w
 *   still, the copy is the entry at pos.
 *
 * -DNO_RECHECK reports full (empty) on the difference alone, as the code
 * did before it re-read head (tail): with -DSEQMOD=6 spin must find a full
 * (empty) reported from a guess that was already stale.
 *
 * Memory: sequentially consistent: each step is one access to one shared
 * location.  The protocol's orderings on a weaker machine are acquire (R2,
 * R3), release (R1, R4) and the peek's fence pair (R5, R6); docs/design.md
 * gives the argument ("Ring"); this model is about the protocol's logic:
 * whether a claim can let a producer overwrite an entry that is still
 * being read, and whether full or empty is ever reported on a stale guess.
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
 *  (4) a peeked copy that passed its re-check is whole;
 *  (5) full and empty are reported only from a guess of head (tail) that
 *      was current when the slot was read.
 */

#ifndef CAP
#define CAP 2
#endif
#ifndef NEV
#define NEV 2                   /* entries per producer */
#endif
#ifndef NEV0
#define NEV0 NEV                /* producer 0's entries */
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
#ifndef SEQMOD
#define SEQMOD 128              /* stands for 2^32; > 2 * CAP */
#endif
#define TOTAL (NEV0 + NEV)
#define SEQ(x) ((x) % SEQMOD)
/* The signed difference of sequence w and position p's (into d). */
#define DIF(d, w, p) d = (w + SEQMOD - SEQ(p)) % SEQMOD; \
	if :: d >= SEQMOD / 2 -> d = d - SEQMOD :: else fi

byte seq[CAP];
byte d0[CAP];
byte d1[CAP];
byte head;
byte tail;
byte taken;                     /* entries claimed by consumers */
byte next[NPROD];               /* each producer's next entry to be claimed */

proctype Prod(byte id; byte n; byte nev)
{
	byte done, pos, k, v, w;
	bool stale;
	short dif;

	do
	:: done == nev -> break
	:: else ->
		if
		:: n > nev - done -> n = nev - done
		:: else
		fi;
		pos = head;
		do
		:: k = 0;
		   do                                   /* R2: the slots seen free */
		   :: k < n ->
			d_step {
				w = seq[(pos + k) % CAP];
				if
				:: k == 0 -> stale = head != pos
				:: else
				fi
			}
			if
			:: w == SEQ(pos + k - (pos + k) % CAP) -> k++; w = 0; stale = 0
			:: else -> break
			fi
		   :: else -> break
		   od;
		   if
		   :: k == 0 ->
			DIF(dif, w, pos - pos % CAP);
			if
#ifdef NO_RECHECK
			:: dif < 0 ->
#else
			:: dif < 0 && head == pos ->
#endif
				assert(!stale);         /* (5) */
				w = 0; stale = 0; dif = 0;
				break                   /* full: the call returns 0 */
			:: else -> pos = head           /* stale: retry */
			fi;
			w = 0; stale = 0; dif = 0
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
			d_step { seq[(pos + v) % CAP] = SEQ(pos + v - (pos + v) % CAP + 1); printf("P%d publishes %d\n", id, pos + v) }  /* R1 */
		}
		done = done + k
	od
}

proctype Cons()
{
	byte pos, v, w, c0, c1;
	bool stale;
	short dif;

	do
	:: taken == TOTAL -> break
	:: else ->
		pos = tail;
		d_step { w = seq[pos % CAP]; stale = tail != pos };
		if
		:: w == SEQ(pos - pos % CAP + 1) ->
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
				seq[pos % CAP] = SEQ(pos - pos % CAP + CAP)   /* R4 */
			:: else
			fi
		:: else ->
			DIF(dif, w, pos - pos % CAP + 1);
			if
#ifdef NO_RECHECK
			:: dif < 0 ->
#else
			:: dif < 0 && tail == pos ->
#endif
				assert(!stale)          /* (5): empty, reported */
			:: else                         /* stale: retry */
			fi
		fi;
		w = 0; stale = 0; dif = 0; pos = 0; v = 0; c0 = 0; c1 = 0
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
		:: w == SEQ(pos - pos % CAP + 1) ->
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

	/* Every slot free for the first lap: sequence 0. */
	run Prod(0, NBURST, NEV0);
	run Prod(1, 1, NEV);
	run Cons();
#if NCONS > 1
	run Cons();
#endif
#ifdef PEEK
	run Peek();
#endif
	(_nr_pr == 1);
	assert(taken == TOTAL && next[0] == NEV0 && next[1] == NEV)  /* (3) */
}
