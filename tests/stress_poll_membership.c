/*
 * lfpoll poll set: lfp_poll_add / lfp_poll_del racing a producer.
 *
 * One thread adds an object to a poll set, polls, deletes it and polls
 * again, in a loop; another makes the object produce events all the time
 * (a counter's inc, then a CQ's write + read).  The set also holds an idle
 * CQ that never leaves it.  Proved: the churn thread keeps making progress
 * (lfp_poll, add and del return), and at the end the object, added once
 * more, is reported for a fresh event and nothing else is lost.
 *
 * What can go wrong: the producer's push (IDLE -> PUSHING -> on the ready
 * stack -> TRACKED) racing the stores that add and del make to the link's
 * state.  If a link ends up both on the ready stack and on the set's own
 * list, lfp_poll joins the two into a cycle and spins forever holding the
 * set's lock; the watchdog here turns that into a failure.
 *
 * A last phase adds the object, while it is in one set, to another,
 * racing the first set's lfp_poll: every add must say -EBUSY and touch
 * nothing the first set reads (under ThreadSanitizer, an add that stored
 * into the link before it found the link taken is a data race with
 * lfp_poll's read of it: LFP_BROKEN=H2).
 *
 * Runs under ThreadSanitizer too (a shorter run).
 */
#include <lfpoll/lfpoll.h>

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "stress.h"

enum { OBJ_CNTR, OBJ_CQ };

struct phase {
	int kind;
	struct lfp_poll *ps;
	struct lfp_fid *obj;
	struct lfp_cntr *cntr;
	struct lfp_cq *cq, *idle;
	_Atomic int stop;
	_Atomic uint64_t iterations, events;
	_Atomic int churn_done;
};

static const char *kind_name(int kind)
{
	return kind == OBJ_CNTR ? "counter" : "CQ";
}

static void *producer_main(void *arg)
{
	struct phase *ph = (struct phase *)arg;
	struct lfp_cq_entry e = { &e };
	uint64_t n = 0;

	while (!atomic_load_explicit(&ph->stop, memory_order_relaxed)) {
		if (ph->kind == OBJ_CNTR) {
			CHECK(lfp_cntr_inc(ph->cntr, 1) == 0, "inc");
		} else if (lfp_cq_write(ph->cq, &e, 1) == 1) {
			/* Drain again at once, so the CQ keeps going from
			 * empty to non-empty: every write is a push. */
			(void)lfp_cq_read(ph->cq, &e, 1);
		}
		n++;
	}
	atomic_store(&ph->events, n);
	return NULL;
}

static void *churn_main(void *arg)
{
	struct phase *ph = (struct phase *)arg;
	void *ctx[4];
	int ret, n;

	while (!atomic_load_explicit(&ph->stop, memory_order_relaxed)) {
		ret = lfp_poll_add(ph->ps, ph->obj, 0);
		CHECK(ret == 0, "%s: add = %d", kind_name(ph->kind), ret);
		n = lfp_poll(ph->ps, ctx, 4);
		CHECK(n >= 0 && n <= 4, "lfp_poll = %d", n);
		ret = lfp_poll_del(ph->ps, ph->obj, 0);
		CHECK(ret == 0, "%s: del = %d", kind_name(ph->kind), ret);
		n = lfp_poll(ph->ps, ctx, 4);
		CHECK(n >= 0 && n <= 4, "lfp_poll = %d", n);
		atomic_fetch_add_explicit(&ph->iterations, 1, memory_order_relaxed);
	}
	atomic_store(&ph->churn_done, 1);
	return NULL;
}

static void run(int kind, double seconds)
{
	struct phase ph;
	pthread_t tp, tc;
	void *ctx[4];
	uint64_t last = 0, now, t0 = stress_now_ns(), stalled_since = t0;
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	double stall_s = stress_broken_limit(10);
	int n, k, found;

	memset(&ph, 0, sizeof(ph));
	ph.kind = kind;
	CHECK(lfp_poll_open(NULL, &ph.ps) == 0, "poll open");
	CHECK(lfp_cq_open(NULL, &ph.idle, (void *)0x1d1e) == 0, "cq open");
	CHECK(lfp_poll_add(ph.ps, &ph.idle->fid, 0) == 0, "add the idle CQ");
	if (kind == OBJ_CNTR) {
		CHECK(lfp_cntr_open(NULL, &ph.cntr, (void *)0xc0) == 0, "cntr open");
		ph.obj = &ph.cntr->fid;
	} else {
		CHECK(lfp_cq_open(NULL, &ph.cq, (void *)0xc0) == 0, "cq open");
		ph.obj = &ph.cq->fid;
	}
	stress_spawn(&tp, producer_main, &ph);
	stress_spawn(&tc, churn_main, &ph);
	/* Run for `seconds`, then until the churn thread has stopped; all the
	 * while, watch that it makes progress. */
	while (!atomic_load(&ph.churn_done)) {
		if (stress_seconds_since(t0) >= seconds)
			atomic_store(&ph.stop, 1);
		nanosleep(&tick, NULL);
		now = atomic_load(&ph.iterations);
		if (now != last) {
			last = now;
			stalled_since = stress_now_ns();
			continue;
		}
		/* No add/poll/del round finished for 10 s (less in a broken
		 * build): lfp_poll (or del, waiting for its lock) is stuck.
		 * Threads are left running; CHECK exits the process. */
		CHECK(stress_seconds_since(stalled_since) < stall_s,
		      "%s: add/poll/del made no progress for %.0f s after %llu rounds: "
		      "lfp_poll is spinning on a cyclic list (a link both on the ready "
		      "stack and on the tracked list after add/del raced the "
		      "producer's push)", kind_name(kind), stall_s,
		      (unsigned long long)last);
	}
	stress_join(tp);
	stress_join(tc);

	/* Quiet: a fresh event on the re-added object is reported. */
	CHECK(lfp_poll_add(ph.ps, ph.obj, 0) == 0, "final add");
	while (lfp_poll(ph.ps, ctx, 4) > 0)
		;
	if (kind == OBJ_CNTR) {
		CHECK(lfp_cntr_inc(ph.cntr, 1) == 0, "inc");
	} else {
		struct lfp_cq_entry e = { &e };

		while (lfp_cq_read(ph.cq, &e, 1) == 1)
			;
		CHECK(lfp_cq_write(ph.cq, &e, 1) == 1, "write");
	}
	n = lfp_poll(ph.ps, ctx, 4);
	CHECK(n >= 1 && n <= 4, "%s: fresh event after the churn: lfp_poll = %d",
	      kind_name(kind), n);
	for (found = 0, k = 0; k < n; k++)
		found |= ctx[k] == (void *)0xc0;
	CHECK(found, "%s: a fresh event after the churn was not reported",
	      kind_name(kind));

	CHECK(lfp_poll_del(ph.ps, ph.obj, 0) == 0, "del");
	CHECK(lfp_poll_del(ph.ps, &ph.idle->fid, 0) == 0, "del idle");
	CHECK(lfp_poll_close(ph.ps) == 0, "poll close");
	CHECK(lfp_close(ph.obj) == 0 && lfp_cq_close(ph.idle) == 0, "close");
	printf("stress_poll_membership: PASS %s: %llu add/poll/del rounds against "
	       "%llu producer events (%.1f s)\n", kind_name(kind), (unsigned long long)last,
	       (unsigned long long)atomic_load(&ph.events), stress_seconds_since(t0));
}

struct intruder {
	struct lfp_poll *ps;
	_Atomic int stop;
	_Atomic uint64_t polls;
};

/* The first set's poller: its member holds a completion, so every
 * lfp_poll reports it. */
static void *poller_main(void *arg)
{
	struct intruder *in = (struct intruder *)arg;
	void *ctx[4];
	int n;

	while (!atomic_load_explicit(&in->stop, memory_order_relaxed)) {
		n = lfp_poll(in->ps, ctx, 4);
		CHECK(n == 1 && ctx[0] == (void *)0xc0,
		      "lfp_poll of a set whose CQ holds a completion = %d", n);
		atomic_fetch_add_explicit(&in->polls, 1, memory_order_relaxed);
	}
	return NULL;
}

static void run_intruder(double seconds)
{
	struct intruder in;
	struct lfp_poll *other;
	struct lfp_cq *cq;
	struct lfp_cq_entry e = { &e };
	uint64_t adds = 0, t0 = stress_now_ns();
	pthread_t tp;
	int ret;

	memset(&in, 0, sizeof(in));
	CHECK(lfp_poll_open(NULL, &in.ps) == 0 && lfp_poll_open(NULL, &other) == 0,
	      "poll open");
	CHECK(lfp_cq_open(NULL, &cq, (void *)0xc0) == 0, "cq open");
	CHECK(lfp_poll_add(in.ps, &cq->fid, 0) == 0, "add");
	CHECK(lfp_cq_write(cq, &e, 1) == 1, "write");
	stress_spawn(&tp, poller_main, &in);
	while (stress_seconds_since(t0) < seconds) {
		ret = lfp_poll_add(other, &cq->fid, 0);
		CHECK(ret == -EBUSY, "add to a second set = %d, not -EBUSY", ret);
		ret = lfp_poll_del(other, &cq->fid, 0);
		CHECK(ret == -ENOENT, "del from a set it is not in = %d", ret);
		adds++;
	}
	atomic_store(&in.stop, 1);
	stress_join(tp);
	CHECK(atomic_load(&in.polls) > 0, "the poller never polled");
	CHECK(lfp_poll_del(in.ps, &cq->fid, 0) == 0, "del");
	CHECK(lfp_cq_close(cq) == 0 && lfp_poll_close(in.ps) == 0 &&
	      lfp_poll_close(other) == 0, "close");
	printf("stress_poll_membership: PASS intruder: %llu adds to a second set "
	       "against %llu polls of the first\n", (unsigned long long)adds,
	       (unsigned long long)atomic_load(&in.polls));
}

int main(void)
{
	/* With a defect named, 5 s phases: each defect shows in its own. */
	double seconds = stress_broken_limit(STRESS_TSAN ? 8.0 * stress_scale()
	                                                 : stress_seconds(6.0));

	setvbuf(stdout, NULL, _IOLBF, 0);
	run_intruder(seconds / 4);
#ifdef LFP_STRESS_BROKEN
	if (lfp_test_broken("H2"))
		return 0; /* H2 races in that phase only (TSan reports it) */
#endif
	run(OBJ_CNTR, seconds);
	run(OBJ_CQ, seconds);
	printf("stress_poll_membership: PASS\n");
	return 0;
}
