/*
 * A CQ with no wait object in the fi_poll(3) loop, while it joins and
 * leaves its poll set (docs/design.md 4.1).  Such a CQ's writes make no
 * fence while it is in no set; lfp_poll_add pays for their side of the
 * store-buffering pair with the process-wide barrier.  What must hold:
 * whatever the order of a write and an add, lfp_poll reports the CQ once
 * both have returned, and a write to a CQ already in the set is reported.
 *
 * Each round, on one CQ and one poll set:
 *   - "race": the CQ is out of the set and empty; the writer's
 *     lfp_cq_write and the poller's lfp_poll_add + lfp_poll start
 *     together, each after a random number of spins.  Once both returned,
 *     lfp_poll must report the CQ unless that first lfp_poll did.  Half of
 *     these rounds are "buffered": the writer first fills its store buffer
 *     (LINES, below), so that its publish stays unseen across the whole
 *     add and lfp_poll, as on a busy machine it may;
 *   - "member": the CQ is in the set; the writer writes while the poller
 *     runs lfp_poll until it reports the CQ.  An unreported write makes
 *     the poller spin to the watchdog.
 * Then the entry is read and checked (exactly one, the round's), and the
 * CQ leaves the set (race rounds) or stays (member rounds).
 *
 * LFP_BROKEN=V2 (an asym write never looks at its poll link) must fail
 * the member rounds; LFP_BROKEN=V (the add makes no process-wide barrier)
 * the buffered race rounds.  Without the buffered rounds no run here lost
 * a report under V: the unfenced writer's store leaves its store buffer
 * within a few nanoseconds, long before the add's lfp_poll reads the CQ.
 */
#include <lfpoll/lfpoll.h>

#include "stress.h"

#define SPREAD 300              /* spins of delay, at most, each side */
#define BROKEN_S 30.0           /* the rounds' length, at most, with a defect named */

/*
 * The lines of a "buffered" round: the poller writes them all before it
 * starts the round, and the writer writes them all just before its
 * lfp_cq_write.  Each of the writer's stores has to fetch its line from
 * the poller's cache, so they queue in the writer's store buffer (more
 * lines than any x86 store buffer has entries), and the CQ's publish
 * queues behind them, invisible to the poller for microseconds, while the
 * write's load of the link, which no fence holds back, is done at once.
 */
#define LINES 256
static struct {
	_Alignas(64) _Atomic uint64_t v;
} lines[LINES];
static _Atomic int buffered;

static void write_lines(uint64_t v)
{
	unsigned i;

	for (i = 0; i < LINES; i++)
		atomic_store_explicit(&lines[i].v, v, memory_order_relaxed);
}

static struct lfp_cq *Q;
static int q_ctx; /* the CQ's context, which lfp_poll reports */
static struct lfp_poll *P;
static _Atomic uint64_t round_no, round_done;
static unsigned delay_w;
static struct stress_watchdog wd;

static void spin(unsigned n)
{
	volatile unsigned i;

	for (i = 0; i < n; i++)
		lfp__cpu_relax();
}

static void *writer(void *arg)
{
	struct lfp_cq_entry e;
	uint64_t n;
	ssize_t r;

	(void)arg;
	for (n = 1;; n++) {
		stress_await(&round_no, n, &wd.deadline, "the poller's next round");
		if (atomic_load(&round_no) == UINT64_MAX)
			return NULL;
		spin(delay_w);
		if (atomic_load_explicit(&buffered, memory_order_relaxed))
			write_lines(n);
		e.op_context = (void *)(uintptr_t)n;
		r = lfp_cq_write(Q, &e, 1);
		CHECK(r == 1, "round %llu: lfp_cq_write = %zd", (unsigned long long)n, r);
		atomic_store_explicit(&round_done, n, memory_order_release);
	}
}

/* lfp_poll once; returns how many contexts, each checked to be the CQ's. */
static int poll_once(uint64_t n, const char *when)
{
	void *ctx[2];
	int k = lfp_poll(P, ctx, 2);

	CHECK(k >= 0 && k <= 1, "round %llu, %s: lfp_poll = %d (want 0 or 1)",
	      (unsigned long long)n, when, k);
	CHECK(k == 0 || ctx[0] == (void *)&q_ctx, "round %llu, %s: lfp_poll reported "
	      "%p, not the CQ", (unsigned long long)n, when, ctx[0]);
	return k;
}

int main(void)
{
	struct lfp_cq_attr qa = { .size = 64, .format = LFP_CQ_FORMAT_CONTEXT,
	                          .wait_obj = LFP_WAIT_NONE };
	/* With a defect named, the rounds go on until it shows, for up to
	 * BROKEN_S.  V needs a write and an add to meet inside the publish's
	 * delay: within 0.9 s on a guest whose CPUs fetch each other's lines
	 * slowly, after 1,000 to 720,000 rounds (590,000 took 3.6 s) on one
	 * whose CPUs pass a line in a few nanoseconds. */
	double budget = stress_broken_run() ? BROKEN_S : stress_seconds(3.0);
	struct stress_deadline d;
	uint64_t seed = 0x5eed0a5, n, races = 0, members = 0, late = 0;
	uint64_t buffered_rounds = 0;
	struct lfp_cq_entry e;
	unsigned delay_p;
	pthread_t t;
	int r, k, member = 0, buffer_round;
	ssize_t got;

	if (stress_broken_run())
		stress_broken_uncap();
	d = stress_deadline_in(budget, "rounds");
	r = lfp_cq_open(&qa, &Q, &q_ctx);
	CHECK(r == 0, "lfp_cq_open = %d", r);
	r = lfp_poll_open(NULL, &P);
	CHECK(r == 0, "lfp_poll_open = %d", r);
	if (!Q->fid.asym)
		printf("stress_poll_asym: the process-wide barrier is not "
		       "available here: the CQ's writes fence (the rounds still run)\n");
	stress_watchdog_start(&wd, budget + 10.0, "stress_poll_asym", NULL, NULL);
	stress_spawn(&t, writer, NULL);
	for (n = 1; !stress_deadline_passed(&d); n++) {
		int want_member = (stress_rand(&seed) & 3) == 0;

		if (want_member != member) {
			r = want_member ? lfp_poll_add(P, &Q->fid, 0)
			                : lfp_poll_del(P, &Q->fid, 0);
			CHECK(r == 0, "round %llu: lfp_poll_%s = %d", (unsigned long long)n,
			      want_member ? "add" : "del", r);
			member = want_member;
		}
		while (member && poll_once(n, "before the round") != 0)
			; /* the add's own check */
		delay_w = (unsigned)(stress_rand(&seed) % SPREAD);
		delay_p = (unsigned)(stress_rand(&seed) % SPREAD);
		/* Half the race rounds are buffered (the release of round_no
		 * below publishes the choice). */
		buffer_round = !member && (stress_rand(&seed) & 1);
		if (buffer_round) {
			write_lines(~n);
			buffered_rounds++;
		}
		atomic_store_explicit(&buffered, buffer_round, memory_order_relaxed);
		atomic_store_explicit(&round_no, n, memory_order_release);
		spin(delay_p);
		if (member) {
			/* Reported once written: spins to the watchdog if not. */
			while (poll_once(n, "member") == 0)
				lfp__cpu_relax();
			members++;
			stress_await(&round_done, n, &wd.deadline, "the write");
		} else {
			r = lfp_poll_add(P, &Q->fid, 0);
			CHECK(r == 0, "round %llu: lfp_poll_add = %d", (unsigned long long)n, r);
			k = poll_once(n, "right after the add");
			stress_await(&round_done, n, &wd.deadline, "the write");
			if (!k) {
				late++;
				k = poll_once(n, "after both returned");
				CHECK(k == 1, "round %llu: the CQ holds a completion, and "
				      "lfp_poll reports nothing after the write and the "
				      "add both returned: a lost report (delays %u, %u)",
				      (unsigned long long)n, delay_w, delay_p);
			}
			races++;
			member = 1;
		}
		got = lfp_cq_read(Q, &e, 1);
		CHECK(got == 1 && e.op_context == (void *)(uintptr_t)n,
		      "round %llu: lfp_cq_read = %zd, context %p (want 1, %llu)",
		      (unsigned long long)n, got, got == 1 ? e.op_context : NULL,
		      (unsigned long long)n);
		got = lfp_cq_read(Q, &e, 1);
		CHECK(got == -EAGAIN, "round %llu: a second lfp_cq_read = %zd",
		      (unsigned long long)n, got);
	}
	atomic_store_explicit(&round_no, UINT64_MAX, memory_order_release);
	stress_join(t);
	stress_watchdog_stop(&wd);
	printf("stress_poll_asym: %llu rounds (%llu racing an add, %llu of them "
	       "buffered, %llu reported only after both returned; %llu in the "
	       "set), no report lost%s\n", (unsigned long long)(n - 1),
	       (unsigned long long)races, (unsigned long long)buffered_rounds,
	       (unsigned long long)late, (unsigned long long)members,
	       Q->fid.asym ? "" : " (fenced writes)");
	if (member) {
		r = lfp_poll_del(P, &Q->fid, 0);
		CHECK(r == 0, "lfp_poll_del = %d", r);
	}
	lfp_poll_close(P);
	lfp_cq_close(Q);
	return 0;
}
