/*
 * The poll link's store-buffering pair raced head on (defect I4,
 * docs/design.md 2.6): a producer's TRACKED store at the end of its link
 * push, then its P3 load of the wait set's state, against a waiter's arm
 * (W2) and its load of the link in lfp__fid_poll_owed.  Each side needs a
 * full barrier between its store and its load; without the producer's
 * (LFP_BROKEN=I4) both loads can miss the other side's store, even on x86,
 * and the waiter sleeps while lfp_poll would report the counter.
 *
 * Setup: counter C in an FD wait set W and in a poll set P; a second
 * counter D in W only.  Each round:
 *   1. D fires and lfp_wait(W, 0) takes it, so W is unarmed with its post
 *      taken, as after any wake.
 *   2. The producer's lfp_cntr_inc(C) parks at poll.link.claimed; the loop
 *      consumes C's change with lfp_wait(W, 0), and lfp_poll(P) finds
 *      nothing (the link is not pushed yet).
 *   3. The producer goes on and parks at poll.link.pushed, just before its
 *      TRACKED store; the waiter calls lfp_wait(W, timeout) and parks at
 *      signal.W1, just before it arms.
 *   4. Both leave together, each after a random number of spins, so that
 *      over the rounds their stores and loads meet in every order.
 * lfp_wait must return before its timeout: the producer's change is owed
 * to lfp_poll, so either the waiter sees it owed or the producer sees the
 * waiter armed and wakes it.  A wait that runs to its timeout is a lost
 * wake-up (lfp_poll then reports the counter: checked too).
 */
#define LFP_SCHED_POINTS
#include <lfpoll/lfpoll.h>

#include <string.h>

#include "stress.h"

#define SPREAD 400              /* spins of delay, at most, each side */
#define WAIT_MS 1000            /* a healthy lfp_wait returns well before */
/* The rounds' length, at most, with a defect named; the run ends at the
 * first lost wake-up.  I4 shows once in about 10,000 to 60,000 rounds
 * here (6,000 to 64,000 in fourteen runs), so 4 s (some 230,000 rounds)
 * let one run of the checks miss it. */
#define BROKEN_S 30.0

static struct lfp_cntr *C, *D;
static struct lfp_wait *W;
static struct lfp_poll *P;

/* Where each thread parks next (NULL: nowhere); set by the thread itself. */
static _Thread_local const char *park_at;
static _Thread_local int is_producer;
/* The handshakes of one round: the producer parked at claimed, released
 * from it, parked at pushed; both released from the second park. */
static _Atomic int at_claimed, go_claimed, at_pushed, go_both;
static _Atomic uint64_t round_no, round_done;
static unsigned delay_p, delay_w;   /* set by the waiter before the round */
/* Fails the program if a round hangs anywhere, in a handshake's spin or
 * inside lfpoll; its deadline also bounds stress_await. */
static struct stress_watchdog wd;

static void spin(unsigned n)
{
	volatile unsigned i;

	for (i = 0; i < n; i++)
		lfp__cpu_relax();
}

static void await_flag(_Atomic int *f)
{
	while (!atomic_load_explicit(f, memory_order_acquire))
		lfp__cpu_relax();
}

void lfp_test_sched(const char *where, const void *obj)
{
	(void)obj;
	if (!park_at || strcmp(where, park_at) != 0)
		return;
	if (is_producer && strcmp(where, "poll.link.claimed") == 0) {
		park_at = "poll.link.pushed";
		atomic_store_explicit(&at_claimed, 1, memory_order_release);
		await_flag(&go_claimed);
		return;
	}
	park_at = NULL;
	if (is_producer) { /* poll.link.pushed */
		atomic_store_explicit(&at_pushed, 1, memory_order_release);
		await_flag(&go_both);
		spin(delay_p);
		/* Bring the set's state line here, as a producer that has
		 * touched it lately would have it. */
		(void)lfp__ld_rlx_u32(&W->sig.state);
		return;
	}
	/* The waiter, at signal.W1. */
	await_flag(&at_pushed);
	atomic_store_explicit(&go_both, 1, memory_order_release);
	spin(delay_w);
	(void)lfp__ld_rlx_u32(&C->link.queued);
}

static void *producer(void *arg)
{
	uint64_t n;
	int r;

	(void)arg;
	is_producer = 1;
	for (n = 1;; n++) {
		stress_await(&round_no, n, &wd.deadline, "the waiter's next round");
		if (atomic_load(&round_no) == UINT64_MAX)
			return NULL;
		park_at = "poll.link.claimed";
		r = lfp_cntr_inc(C, 1);
		CHECK(r == 0, "round %llu: lfp_cntr_inc(C) = %d",
		      (unsigned long long)n, r);
		park_at = NULL;
		atomic_store_explicit(&round_done, n, memory_order_release);
	}
}

int main(void)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_cntr_attr ca = { .wait_obj = LFP_WAIT_SET };
	double budget = stress_broken_run() ? BROKEN_S : stress_seconds(3.0);
	struct stress_deadline d = stress_deadline_in(budget, "rounds");
	struct lfp_fid *cf;
	uint64_t seed = 0x1234567, n;
	void *ctx[4];
	pthread_t t;
	uint64_t t0;
	double slept;
	int r, k;

	r = lfp_wait_open(&wa, &W);
	CHECK(r == 0, "lfp_wait_open = %d", r);
	ca.wait_set = W;
	r = lfp_cntr_open(&ca, &C, NULL);
	CHECK(r == 0, "lfp_cntr_open(C) = %d", r);
	r = lfp_cntr_open(&ca, &D, NULL);
	CHECK(r == 0, "lfp_cntr_open(D) = %d", r);
	r = lfp_poll_open(NULL, &P);
	CHECK(r == 0, "lfp_poll_open = %d", r);
	r = lfp_poll_add(P, &C->fid, 0);
	CHECK(r == 0, "lfp_poll_add = %d", r);
	cf = &C->fid;
	stress_watchdog_start(&wd, budget + 10.0, "stress_link_barrier", NULL, NULL);
	stress_spawn(&t, producer, NULL);
	for (n = 1; !stress_deadline_passed(&d); n++) {
		/* 1: C reported and quiet, W unarmed with D's post taken. */
		while (lfp_poll(P, ctx, 4) != 0)
			;
		while (lfp_trywait(&cf, 1) != 0)
			;
		r = lfp_cntr_inc(D, 1);
		CHECK(r == 0, "round %llu: lfp_cntr_inc(D) = %d",
		      (unsigned long long)n, r);
		r = lfp_wait(W, 0);
		CHECK(r == 0, "round %llu: lfp_wait after D's change = %d",
		      (unsigned long long)n, r);
		atomic_store(&at_claimed, 0);
		atomic_store(&go_claimed, 0);
		atomic_store(&at_pushed, 0);
		atomic_store(&go_both, 0);
		delay_p = (unsigned)(stress_rand(&seed) % SPREAD);
		delay_w = (unsigned)(stress_rand(&seed) % SPREAD);
		/* 2: the change consumed, the link not pushed yet. */
		atomic_store_explicit(&round_no, n, memory_order_release);
		await_flag(&at_claimed);
		r = lfp_wait(W, 0);
		k = lfp_poll(P, ctx, 4);
		CHECK(r == 0 && k == 0, "round %llu: with the push parked, lfp_wait = "
		      "%d and lfp_poll = %d (want 0 and 0)", (unsigned long long)n, r, k);
		atomic_store_explicit(&go_claimed, 1, memory_order_release);
		/* 3 and 4. */
		park_at = "signal.W1";
		t0 = stress_now_ns();
		r = lfp_wait(W, WAIT_MS);
		slept = stress_seconds_since(t0);
		park_at = NULL;
		stress_await(&round_done, n, &wd.deadline, "the producer's inc");
		k = lfp_poll(P, ctx, 4);
		CHECK(slept < WAIT_MS * 0.75e-3,
		      "round %llu: lfp_wait slept %.3f s (returned %d) while the "
		      "counter's change was owed to lfp_poll, which then reported "
		      "%d: a lost wake-up (delays %u, %u)", (unsigned long long)n,
		      slept, r, k, delay_p, delay_w);
	}
	atomic_store_explicit(&round_no, UINT64_MAX, memory_order_release);
	stress_join(t);
	stress_watchdog_stop(&wd);
	printf("stress_link_barrier: %llu rounds, no wake-up lost\n",
	       (unsigned long long)(n - 1));
	r = lfp_poll_del(P, &C->fid, 0);
	CHECK(r == 0, "lfp_poll_del = %d", r);
	lfp_poll_close(P);
	lfp_cntr_close(C);
	lfp_cntr_close(D);
	lfp_wait_close(W);
	return 0;
}
