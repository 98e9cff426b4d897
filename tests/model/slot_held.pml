/*
 * The "full" test of a write whose claim failed (lfp__ring_slot_held,
 * internal/ring_ops.h; docs/design.md 6.2, defects G2 and G3).
 *
 * A per-slot ring of C slots.  A slot is FREE (for the next lap), FULL
 * (published) or HELD (its position taken by a consumer that is still
 * copying the entry out).  A producer P and a consumer K run while the
 * writer W, whose claim failed on a HELD slot at head, reads the two
 * indexes and says "full" (the fatal overrun) when head - tail reaches
 * C.  The ghost wasfull records whether the ring held C claimed, untaken
 * positions at any instant after W's claim failed.
 *
 * Property: W says "full" only if the ring was full at some instant of
 * its check (a stale answer may only make it claim again).
 *
 *   spin -a slot_held.pml               the code: head read first
 *   spin -DTAIL_FIRST -a slot_held.pml  tail first (before G3): must fail
 *
 * Sequentially consistent: the two reads are RMWs in the code, and the
 * question is only their order.  Indexes count without wrapping here;
 * the code's are 64-bit.
 */
#define C 2
#define FREE 0
#define FULL 1
#define HELD 2

byte slot[C];
byte head, tail;
bit watching, wasfull;

inline watch() {
	if
	:: watching && head - tail >= C -> wasfull = 1
	:: else
	fi
}

proctype P(byte n)      /* claims and publishes when the slot at head is free */
{
	byte k;
	do
	:: k < n -> atomic { slot[head % C] == FREE -> slot[head % C] = FULL; head++; watch() }; k++
	:: else -> break
	od
}

proctype K(byte n)      /* takes the position (HELD), then frees the slot */
{
	byte k, p;
	do
	:: k < n -> atomic { slot[tail % C] == FULL -> p = tail % C; slot[p] = HELD; tail++ };
	            slot[p] = FREE; k++
	:: else -> break
	od
}

proctype W()
{
	byte h, t;
	bit says_full;

end:	atomic { slot[head % C] == HELD -> watching = 1; watch() }  /* the claim failed */
#ifdef TAIL_FIRST
	t = tail;
	h = head;
	says_full = h - t >= C;
#else
	h = head;
	t = tail;
	says_full = h >= t && h - t >= C;    /* (int64_t)(head - tail) > mask */
#endif
	assert(!says_full || wasfull)
}

init
{
	atomic { run P(4); run K(4); run W() }
}
