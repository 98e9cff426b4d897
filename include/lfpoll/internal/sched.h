/*
 * lfpoll internal: test-only schedule points.
 * Do not include directly; every lfpoll header includes it.
 *
 * LFP__SCHED(where, obj) marks a protocol step at which another thread's
 * timing matters: between a ring claim and its publish, between P2 and P3,
 * between a poll link's push and its TRACKED store, and so on (the points
 * are listed in tests/README.md).  In a user build it is nothing at all.
 * A test program that defines LFP_SCHED_POINTS before its first lfpoll
 * include provides
 *
 *     void lfp_test_sched(const char *where, const void *obj);
 *
 * which may park the calling thread there while other threads act, so a
 * test can stall a thread at every step of a protocol deterministically.
 * `where` is a string literal naming the step; obj is the object (ring,
 * signal, link) the step works on.
 */
#ifndef LFPOLL_INTERNAL_SCHED_H
#define LFPOLL_INTERNAL_SCHED_H

#ifdef LFP_SCHED_POINTS
#  ifdef __cplusplus
extern "C"
#  endif
void lfp_test_sched(const char *where, const void *obj);
#  define LFP__SCHED(where, obj) lfp_test_sched((where), (const void *)(obj))
#else
#  define LFP__SCHED(where, obj) ((void)0)
#endif

/*
 * LFP__BROKEN(defect): test-only switch back to a protocol step as it was
 * before a defect was fixed, so that the tests that claim to catch the
 * defect can be shown to fail on it (tests/README.md lists them).  It is the
 * constant 0 unless a test defines LFP_TEST_BROKEN and provides
 *
 *     int lfp_test_broken(const char *defect);
 *
 * Defects (docs/reliability.md): "A" a waiter with its own condition drains
 * the eventfd, "B" lfp_poll drops a link with a plain store, "D1"
 * lfp_poll_del frees a link for other sets before its end, "C" sread's
 * threshold counts unpublished entries, "E" a signal before sread is
 * forgotten, "F" the error check runs before the event's acquire, "G" a
 * writer does not re-check the overrun after its claim, "G4" a write to an
 * LFP_EQ_BACKPRESSURE EQ waits for a reader's copy instead of -EAGAIN,
 * "G5" a writer that found the EQ overrun after its claim leaves its void
 * entry without waking the wait object, "I" a producer
 * wakes waiters before it pushes its poll link, "J" an error writer counts
 * its entry after publishing it; and "L", which guards the ring's claim
 * (docs/design.md, section 1): a burst claims all n positions once it saw
 * the first free; "S" a producer (consumer) whose guess of head (tail) is
 * 2^31 positions or more stale reports full (empty) on the 32-bit sequence
 * difference alone, without re-reading the index; "X" an index ring's
 * consumer gives its positions back (I4) before it has copied them out;
 * "K" lfp_cq_signal's counts compare as 32-bit serial numbers; "T" an
 * sread threshold is not capped at the capacity; "O" an error write
 * racing the overrun does not re-check it after its claim (nor a readerr
 * wait for writes in flight, nor a peek make the overrun entry final);
 * "O3" the event path counts the void error entries queued after the
 * overrun entry as queued errors; "Q" a thread cancelled in a sleep is
 * not cleaned up after (the mutex, the YIELD sleep, the sread's signals).
 * More show that the stress programs catch what they claim to (tests/
 * sched.mk, STRESS_DEFECTS): "R" a waiter sleeps after arming without
 * re-checking (W3 left out), "N" the FD kind writes the eventfd before it
 * announces the post, "M" lfp_poll_add tracks a link a producer has pushed
 * already, "P" the verbs binding arms a CQ without polling it again, "U"
 * a thread cancelled in the verbs binding's sleep leaves its count raised,
 * "Y" the binding takes a shared channel's fd out of a wait set when any
 * of the set's CQs on it leaves, not the last, "Z" the binding reads an
 * async event over the one a full EQ refused, "P2" a producer makes no full
 * barrier between its publish and its load of the waiters' state (P2),
 * "V2" a write of a CQ with no wait object (fid.asym) never looks at its
 * poll link, "V" lfp_poll_add makes no process-wide barrier for such a CQ.
 * And two only ThreadSanitizer sees (make check-broken-tsan): "H" lfp_wait
 * reads a set's fd count, and the verbs async trywait its held event,
 * without the writer's lock; "H2" lfp_poll_add stores into a link that
 * another set's lfp_poll reads under its own lock.
 * One is a build switch, not a run-time one, since it picks an atomic
 * layer: LFP_TEST_BROKEN_W, "W", 64-bit words loaded and stored through
 * ck_pr on 32-bit targets, as two 32-bit accesses (make check-ilp32).
 * Two, in lower case, show that fuzz targets' oracles can fail (tests/
 * fuzz.mk, make fuzz-broken): "p" an EQ peek consumes its event, "c"
 * lfp_poll consumes a counter's change it had no room to report.
 */
#ifdef LFP_TEST_BROKEN
#  ifdef __cplusplus
extern "C"
#  endif
int lfp_test_broken(const char *defect);
#  define LFP__BROKEN(defect) lfp_test_broken(defect)
#else
#  define LFP__BROKEN(defect) 0
#endif

#endif /* LFPOLL_INTERNAL_SCHED_H */
