/*
 * The wake protocol's store-buffering pair raced head on: a producer's
 * publish (P1), full barrier (P2) and load of the waiters' state (P3)
 * against a waiter's arm (W2, a locked RMW and its barrier) and re-check
 * (W3), include/lfpoll/internal/signal.h and docs/design.md.
 *
 * Each round, a writer and a waiter leave a spin on a shared round number
 * together, and one of them waits a while before it acts: the waiter calls
 * lfp_trywait on the object, the writer writes one entry into it.  Which
 * one waits, and how long, follows the outcomes: a round in which the
 * waiter armed before the entry was in delays the waiter a step more the
 * next time (or the writer a step less), one in which it saw the entry the
 * other way, so the two keep meeting where the outcome changes, which is
 * inside the pair's window, give or take a little noise.
 *
 * When trywait returned 0, the waiter's re-check saw nothing, so the writer
 * must have seen the waiter armed and posted the object's fd: once the
 * writer has returned from its write, poll(2) with a zero timeout must find
 * the fd readable.  If it does not, the entry is queued and the fd quiet: a
 * lost wake-up, and a program blocked in poll(2) would sleep with work
 * pending.
 *
 * Without P2 (defect P2, tests/sched.mk) a producer's load of the state may
 * complete before its publish is visible to other CPUs, even on x86, and a
 * waiter that arms and re-checks in that window of a few nanoseconds is
 * never woken: this program is written to land in that window often.  The
 * other stress programs pass without P2; the spin model
 * tests/model/trywait.pml refutes it too (-DBROKEN).
 *
 * Phases: an EQ (lfp_eq_write) and a CQ (lfp_cq_write), each with an fd
 * wait object, each run to its end before the program fails, so that a
 * failure says which lost a wake-up.
 */
#include <lfpoll/cq.h>
#include <lfpoll/eq.h>

#include <errno.h>
#include <poll.h>

#include "stress.h"

struct race {
	const char *name;
	struct lfp_fid *fid;
	struct lfp_eq *eq;              /* one of eq and cq */
	struct lfp_cq *cq;
	int fd;
	uint64_t rounds;                /* at most: fewer past budget_s */
	double budget_s;
	uint64_t lost;                  /* the round whose wake-up was lost */
	/* Round n starts (ROUND_STOP: no more), set by the waiter; the
	 * writer's round n is over.  See run() and writer() for what each
	 * store publishes. */
	_Atomic uint64_t round, written;
	int offset;                     /* > 0: the waiter waits that many
	                                 * steps, < 0: the writer; set by the
	                                 * waiter between rounds */
	struct stress_deadline d;
};

#define ROUND_STOP UINT64_MAX
#define OFFSET_MAX 4096
#define NOISE 15u               /* random steps added to each side's wait */

/* Wait n steps plus a little noise: a loop on a local. */
static void delay(uint64_t *rng, int n)
{
	volatile int i;

	n = (n > 0 ? n : 0) + (int)(stress_rand(rng) & NOISE);
	for (i = 0; i < n; i++)
		;
}

/*
 * Until *v >= n: spin (the other thread is a cache-line transfer away),
 * then back off, so that two threads sharing one CPU take turns.  Not
 * stress_await: its pauses and early yields would spread the two threads'
 * starts far wider than the window this program aims at.  Acquire
 * pairs with the release store that set *v (run() and writer() say what
 * it publishes).  Returns *v.
 */
static uint64_t await_at_least(_Atomic uint64_t *v, uint64_t n,
                               const struct stress_deadline *d)
{
	unsigned spins = 0, backoffs = 0;
	uint64_t at;

	while ((at = atomic_load_explicit(v, memory_order_acquire)) < n)
		if (++spins > 1000) {
			spins = 0;
			stress_backoff(&backoffs);
			CHECK_DEADLINE(d);
		}
	return at;
}

static void write_one(struct race *r, uint64_t n)
{
	struct lfp_cq_tagged_entry e = { .data = n };
	ssize_t ret;

	if (r->eq)
		ret = lfp_eq_write(r->eq, LFP_EVENT_USER, &n, sizeof(n), 0);
	else
		ret = lfp_cq_write(r->cq, &e, 1);
	CHECK(r->eq ? ret == (ssize_t)sizeof(n) : ret == 1,
	      "%s: write of %llu = %zd", r->name, (unsigned long long)n, ret);
}

/* Read back the entry write_one(r, n) wrote. */
static void read_one(struct race *r, uint64_t n)
{
	struct lfp_cq_tagged_entry e;
	uint64_t got = ~n;
	uint32_t ev;
	ssize_t ret;

	if (r->eq) {
		ret = lfp_eq_read(r->eq, &ev, &got, sizeof(got), 0);
		CHECK(ret == (ssize_t)sizeof(got) && ev == LFP_EVENT_USER,
		      "%s: read of %llu = %zd", r->name,
		      (unsigned long long)n, ret);
	} else {
		ret = lfp_cq_read(r->cq, &e, 1);
		CHECK(ret == 1, "%s: read of %llu = %zd", r->name,
		      (unsigned long long)n, ret);
		got = e.data;
	}
	CHECK(got == n, "%s: read %llu, wrote %llu", r->name,
	      (unsigned long long)got, (unsigned long long)n);
}

static void *writer(void *p)
{
	struct race *r = p;
	uint64_t rng = 0x5eed, n;

	for (n = 1;; n++) {
		if (await_at_least(&r->round, n, &r->d) == ROUND_STOP)
			break;
		delay(&rng, -r->offset);
		write_one(r, n);
		/* Release: the write, and any post it made, happen before the
		 * waiter's look at the fd (its acquire in await_at_least). */
		atomic_store_explicit(&r->written, n, memory_order_release);
	}
	return NULL;
}

static int fd_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, 0);

	CHECK(ret >= 0, "poll(2): %d", errno);
	return ret == 1 && (pfd.revents & POLLIN);
}

/* One phase: rounds until r->rounds, the budget, or a lost wake-up. */
static void run(struct race *r)
{
	uint64_t rng = 0xfeed, n, t0 = stress_now_ns(), armed = 0;
	pthread_t t;
	int ret;

	r->d = stress_deadline_in(stress_broken_limit(120.0 * stress_scale()),
	                          r->name);
	ret = lfp_control(r->fid, LFP_GETWAIT, &r->fd);
	CHECK(ret == 0 && r->fd >= 0, "%s: LFP_GETWAIT = %d", r->name, ret);
	stress_spawn(&t, writer, r);
	for (n = 1; n <= r->rounds; n++) {
		if ((n & 63) == 0 && stress_seconds_since(t0) > r->budget_s)
			break;
		/* Release: offset, and this thread's read of the last round's
		 * entry, happen before the writer starts round n. */
		atomic_store_explicit(&r->round, n, memory_order_release);
		delay(&rng, r->offset);
		ret = lfp_trywait(&r->fid, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "%s: trywait in round "
		      "%llu = %d", r->name, (unsigned long long)n, ret);
		(void)await_at_least(&r->written, n, &r->d);
		/* Early: wait a step longer next round; late: a step less. */
		if (ret == 0 && r->offset < OFFSET_MAX)
			r->offset++;
		else if (ret != 0 && r->offset > -OFFSET_MAX)
			r->offset--;
		if (ret == 0) {
			armed++;
			if (!fd_readable(r->fd)) {
				r->lost = n;
				break;
			}
		}
		read_one(r, n);
		if (ret != 0) {
			/* The re-check found the entry, and trywait may have
			 * left its armed bit set; then the next round's writer
			 * would post whether or not it saw the bit in time.
			 * A write of our own clears the bit (P4). */
			write_one(r, 0);
			read_one(r, 0);
		}
	}
	/* Release: nothing to publish but the end. */
	atomic_store_explicit(&r->round, ROUND_STOP, memory_order_release);
	stress_join(t);
	printf("stress_wake_barrier: %s: %llu rounds, %llu with trywait armed "
	       "before the write, %s (%.1f s)\n", r->name,
	       (unsigned long long)(r->lost ? n : n - 1),
	       (unsigned long long)armed,
	       r->lost ? "a wake-up lost" : "no wake-up lost",
	       stress_seconds_since(t0));
}

int main(void)
{
	uint64_t rounds = stress_count(1000000, 100000);
	struct lfp_eq_attr ea = { .size = 64, .wait_obj = LFP_WAIT_FD };
	struct lfp_cq_attr ca = { .size = 64, .format = LFP_CQ_FORMAT_TAGGED,
	                          .wait_obj = LFP_WAIT_FD };
	/* A slow or shared machine runs fewer rounds, not past the deadline;
	 * with a defect named, 2 s a phase, well inside the 5-s deadline. */
	double budget = stress_broken_run() ? 2.0 : 30.0 * stress_scale();
	struct race eq = { .name = "eq", .rounds = rounds, .budget_s = budget };
	struct race cq = { .name = "cq", .rounds = rounds, .budget_s = budget };
	int ret;

	if (stress_broken_run())
		eq.rounds = cq.rounds = UINT64_MAX - 1;
	ret = lfp_eq_open(&ea, &eq.eq, NULL);
	CHECK(ret == 0, "lfp_eq_open = %d", ret);
	eq.fid = &eq.eq->fid;
	run(&eq);
	ret = lfp_cq_open(&ca, &cq.cq, NULL);
	CHECK(ret == 0, "lfp_cq_open = %d", ret);
	cq.fid = &cq.cq->fid;
	run(&cq);
	/* Both phases run before this, so a failure says which lost. */
	CHECK(!eq.lost && !cq.lost, "a wake-up lost: trywait returned 0 and "
	      "the write that followed left the fd quiet with the entry "
	      "queued (eq: round %llu, cq: round %llu; 0: none lost)",
	      (unsigned long long)eq.lost, (unsigned long long)cq.lost);
	CHECK(lfp_eq_close(eq.eq) == 0 && lfp_cq_close(cq.cq) == 0, "close");
	return 0;
}
