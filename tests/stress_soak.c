/*
 * lfpoll soak: lost wakeups between waiters with different conditions on one
 * object, and poll-set members lost for good, under progress watchdogs.
 *
 * Scenario 1, the fi_poll(3) loop.  A wait set (FD) and a poll set; 4 CQs
 * (16 entries, so producers often find one full and retry on -EAGAIN) and 4
 * counters, each opened with LFP_WAIT_SET on the wait set and added to the
 * poll set.  2 producers write tagged CQ entries in bursts and increment
 * counters; one consumer runs the loop { lfp_trywait(wait set); if 0,
 * poll(2) the set's fd; lfp_poll; drain each reported CQ with lfp_cq_read,
 * read each reported counter with lfp_cntr_read }.  Checked: every entry
 * arrives exactly once and in order per (producer, CQ); every counter's
 * final value is observed through a poll-set report (a member whose link
 * the set lost is never reported again); a watchdog fails the run when an
 * object holds work (entries queued, or increments not yet reported) and
 * makes no progress for several seconds, naming the object and where each
 * thread was.  The producers are delayed at random points (preemption
 * injection, below) so that short windows between their stores are hit.
 *
 * Scenario 2, mixed waiters on one object, for each wait object (FD,
 * UNSPEC, MUTEX_COND, YIELD).  On one CQ: a thread that calls lfp_trywait
 * and then blocks on the native object (poll(2) on the fd; for MUTEX_COND
 * pthread_cond_timedwait under the mutex, as lfp_trywait(3) describes; for
 * YIELD sched_yield), a thread in lfp_cq_sread(threshold 1, no timeout),
 * 2 bystanders looping on lfp_cq_sread(threshold 8, 5 ms) with a threshold
 * never reached, and a thread calling lfp_cq_signal while no entry is
 * outstanding.  On one counter: a thread in lfp_cntr_wait(next value, no
 * timeout) and 2 bystanders looping on lfp_cntr_wait(UINT64_MAX, 5 ms).  A
 * driver per object runs rounds: it waits until that round's real waiter
 * is about to sleep, writes one entry (or increments once), and measures
 * the time from the write to the waiter's wake.  A waiter whose condition
 * holds must wake: one that has not after a generous limit (seconds) fails
 * the run, as a hang would.  With an fd, after lfp_trywait returned 0 and
 * the entry was written, poll(fd, 0) must show the fd readable while the
 * entry is still in the CQ (nobody consumes it in those rounds).
 *
 * One summary line; exit 0 only when every check held.
 *
 *   LFP_SOAK_SECONDS=S  run for about S seconds (default 6, 4 under TSan,
 *                       3 under ASan);
 *                       make soak sets a longer run
 *   LFP_SOAK_ONLY=poll|waiters   run one scenario; or FD, UNSPEC, MUTEX_COND,
 *                       YIELD: scenario 2 with that wait object only
 *   LFP_SOAK_PREEMPT=0  no preemption injection into scenario 1's producers
 *
 * No speed threshold: the limits only turn a hang into a failure.
 */
#include <lfpoll/lfpoll.h>

#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "stress_objs.h"

/* ================================================================ common */

static double soak_seconds;
static int soak_preempt = 1;  /* preemption injection into the producers */
static double wake_limit_s;  /* a waiter whose condition holds wakes within */
static double stall_limit_s; /* an object with work makes progress within */

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

/*
 * Out of line: gcc -O2 may warn (-Wmaybe-uninitialized, an error here)
 * inside the ring's burst copy when lfp_cq_read is inlined into a loop.
 */
__attribute__((noinline))
static ssize_t soak_cq_read(struct lfp_cq *cq, struct lfp_cq_data_entry *buf, size_t n)
{
	return lfp_cq_read(cq, buf, n);
}

__attribute__((noinline))
static ssize_t soak_cq_sread(struct lfp_cq *cq, struct lfp_cq_data_entry *buf,
                             size_t n, const size_t *threshold, int timeout)
{
	return lfp_cq_sread(cq, buf, n, threshold, timeout);
}

/*
 * A progress watchdog: every 50 ms it calls check(arg, msg); a non-zero
 * return means some work stalled for too long, and the program fails with
 * msg after report(arg) printed the state of every thread and object.
 * Unlike a fixed deadline, it lets a long soak run as long as work moves.
 */
struct soak_wd {
	pthread_t thread;
	_Atomic int stop;
	const char *what;
	int (*check)(void *arg, char *msg, size_t len);
	void (*report)(void *arg);
	void *arg;
};

static void *soak_wd_main(void *p)
{
	struct soak_wd *wd = (struct soak_wd *)p;
	char msg[512];

	while (!atomic_load(&wd->stop)) {
		sleep_us(50000);
		msg[0] = '\0';
		if (wd->check(wd->arg, msg, sizeof(msg))) {
			flockfile(stderr);
			fprintf(stderr, "stress_soak: %s: watchdog: %s\n", wd->what, msg);
			wd->report(wd->arg);
			funlockfile(stderr);
			CHECK(0, "%s: %s", wd->what, msg);
		}
	}
	return NULL;
}

static void soak_wd_start(struct soak_wd *wd, const char *what,
                          int (*check)(void *, char *, size_t),
                          void (*report)(void *), void *arg)
{
	atomic_store(&wd->stop, 0);
	wd->what = what;
	wd->check = check;
	wd->report = report;
	wd->arg = arg;
	stress_spawn(&wd->thread, soak_wd_main, wd);
}

static void soak_wd_stop(struct soak_wd *wd)
{
	atomic_store(&wd->stop, 1);
	stress_join(wd->thread);
}

/*
 * Preemption injection: a thread sends SIGUSR1 to the producers at random
 * moments, and the handler sleeps 20-220 us.  The producer stops wherever
 * it was, as if the scheduler had preempted it there, but far more often
 * than a 2-core machine's scheduler does: a window of a few instructions
 * between two stores of a producer (a poll-set link pushed but not yet
 * marked TRACKED) is hit within seconds instead of minutes.  Only delays:
 * every system call the producers make is restarted (SA_RESTART) or
 * retried on EINTR.  LFP_SOAK_PREEMPT=0 turns it off.
 */

static _Thread_local unsigned preempt_k;

static void preempt_handler(int sig)
{
	int e = errno;
	struct timespec ts;

	(void)sig;
	preempt_k = preempt_k * 1103515245u + 12345u;
	ts.tv_sec = 0;
	ts.tv_nsec = 20000 + (long)((preempt_k >> 16) % 200) * 1000;
	nanosleep(&ts, NULL);
	errno = e;
}

struct preempter {
	pthread_t thread;
	pthread_t *targets;
	unsigned n;
	_Atomic int stop;
	_Atomic uint64_t sent;
};

static void *preempter_main(void *arg)
{
	struct preempter *pe = (struct preempter *)arg;
	uint64_t rng = 0x9e;
	unsigned i;

	while (!atomic_load(&pe->stop)) {
		for (i = 0; i < pe->n; i++)
			if (stress_rand(&rng) & 1) {
				pthread_kill(pe->targets[i], SIGUSR1);
				atomic_fetch_add(&pe->sent, 1);
			}
		sleep_us(100 + (unsigned)(stress_rand(&rng) % 400));
	}
	return NULL;
}

static void preempter_start(struct preempter *pe, pthread_t *targets, unsigned n)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = preempt_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	pe->targets = targets;
	pe->n = n;
	atomic_store(&pe->stop, 0);
	stress_spawn(&pe->thread, preempter_main, pe);
}

static void preempter_stop(struct preempter *pe)
{
	atomic_store(&pe->stop, 1);
	stress_join(pe->thread);
}

/* Summary counts over the whole run. */
static struct {
	uint64_t entries, increments, reports, polls_empty, blocks;
	uint64_t rounds, wakes, max_wake_ns, signals, bystander_calls;
} total;

/* ================================================================ 1 */

#define P_CQS     4
#define P_CNTRS   4
#define P_OBJS    (P_CQS + P_CNTRS)
#define P_PROD    2
#define P_CQ_SIZE 16
#define P_BURST   24 /* > P_CQ_SIZE: a burst often meets a full CQ */

/* One poll-set member; lfp_poll reports a pointer to it. */
struct p_obj {
	unsigned idx;                 /* 0..P_OBJS-1: CQs first */
	int is_cq;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	/* CQ: entries queued, counted by producers after each write.
	 * Counter: increments made (lfp_cntr_read is the authority). */
	_Atomic uint64_t produced;
	/* CQ: entries read.  Counter: the value read after the last report. */
	_Atomic uint64_t consumed;
	_Atomic uint64_t reports;     /* times lfp_poll returned it */
	_Atomic uint64_t last_report_ns;
	uint64_t final;               /* after the producers stopped */
	/* Watchdog thread only. */
	uint64_t wd_mark, wd_since;
};

enum { PW_IDLE, PW_WRITE, PW_FULL, PW_INC, PW_PAUSE, PW_DONE };
enum { CW_START, CW_TRYWAIT, CW_BLOCK, CW_LFP_POLL, CW_DRAIN, CW_READ_CNTR, CW_DONE };

struct p_phase;

struct p_producer {
	struct p_phase *ph;
	unsigned id;
	uint64_t seq[P_CQS];          /* next sequence number per CQ */
	uint64_t incs[P_CNTRS];
	_Atomic int where, where_obj;
	_Atomic uint64_t ops;
};

struct p_phase {
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	int fd;
	struct p_obj obj[P_OBJS];
	struct p_producer pr[P_PROD];
	_Atomic int stop, producers_done;
	/* consumer */
	_Atomic int c_where, c_where_obj;
	_Atomic uint64_t c_loops, c_polls_empty, c_blocks, c_block_timeouts,
	                 c_trywait_eagain;
	uint64_t next[P_PROD][P_CQS]; /* consumer only: next seq expected */
	uint64_t t0;
};

static const char *pw_name(int w)
{
	switch (w) {
	case PW_IDLE:  return "starting";
	case PW_WRITE: return "in lfp_cq_write";
	case PW_FULL:  return "retrying lfp_cq_write on a full CQ";
	case PW_INC:   return "in lfp_cntr_inc";
	case PW_PAUSE: return "pausing";
	case PW_DONE:  return "done";
	default:       return "?";
	}
}

static const char *cw_name(int w)
{
	switch (w) {
	case CW_START:     return "starting";
	case CW_TRYWAIT:   return "in lfp_trywait(wait set)";
	case CW_BLOCK:     return "blocked in poll(2) on the wait set's fd";
	case CW_LFP_POLL:  return "in lfp_poll";
	case CW_DRAIN:     return "draining a reported CQ";
	case CW_READ_CNTR: return "reading a reported counter";
	case CW_DONE:      return "done";
	default:           return "?";
	}
}

static void p_obj_name(const struct p_obj *o, char *buf, size_t len)
{
	if (o->is_cq)
		snprintf(buf, len, "CQ %u", o->idx);
	else
		snprintf(buf, len, "counter %u", o->idx - P_CQS);
}

static void *p_producer_main(void *arg)
{
	struct p_producer *pr = (struct p_producer *)arg;
	struct p_phase *ph = pr->ph;
	struct lfp_cq_data_entry e[P_BURST];
	uint64_t rng = 0x50a4 + pr->id, r;
	unsigned j, k, i, spins;
	size_t off;
	ssize_t n;
	int ret;

	while (!atomic_load_explicit(&ph->stop, memory_order_relaxed)) {
		r = stress_rand(&rng);
		if (r % 3 != 0) {
			/* A burst of entries to one CQ, retried while it is full. */
			j = (unsigned)(r >> 8) % P_CQS;
			k = 1 + (unsigned)(r >> 16) % P_BURST;
			for (i = 0; i < k; i++) {
				uint64_t seq = pr->seq[j] + i;

				memset(&e[i], 0, sizeof(e[i]));
				e[i].op_context = (void *)(uintptr_t)(seq * 2654435761u + pr->id);
				e[i].flags = j;
				e[i].len = pr->id;
				e[i].data = seq;
			}
			atomic_store_explicit(&pr->where_obj, (int)j, memory_order_relaxed);
			atomic_store_explicit(&pr->where, PW_WRITE, memory_order_relaxed);
			off = 0;
			spins = 0;
			while (off < k) {
				n = lfp_cq_write(ph->obj[j].cq, &e[off], k - off);
				if (n == -EAGAIN) {
					/* Full: the consumer must drain it,
					 * which it does only when lfp_poll
					 * reports it. */
					atomic_store_explicit(&pr->where, PW_FULL,
					                      memory_order_relaxed);
					stress_backoff(&spins);
					continue;
				}
				CHECK(n > 0 && (size_t)n <= k - off, "1: producer %u: "
				      "lfp_cq_write(CQ %u, %zu) = %zd", pr->id, j,
				      k - off, n);
				off += (size_t)n;
				pr->seq[j] += (uint64_t)n;
				atomic_fetch_add(&ph->obj[j].produced, (uint64_t)n);
				atomic_store_explicit(&pr->where, PW_WRITE,
				                      memory_order_relaxed);
				spins = 0;
			}
		} else {
			/* A few increments of one counter. */
			j = (unsigned)(r >> 8) % P_CNTRS;
			k = 1 + (unsigned)(r >> 16) % 8;
			atomic_store_explicit(&pr->where_obj, (int)(P_CQS + j),
			                      memory_order_relaxed);
			atomic_store_explicit(&pr->where, PW_INC, memory_order_relaxed);
			for (i = 0; i < k; i++) {
				ret = lfp_cntr_inc(ph->obj[P_CQS + j].cntr, 1);
				CHECK(ret == 0, "1: producer %u: lfp_cntr_inc = %d",
				      pr->id, ret);
				pr->incs[j]++;
				atomic_fetch_add(&ph->obj[P_CQS + j].produced, 1);
			}
		}
		atomic_fetch_add_explicit(&pr->ops, 1, memory_order_relaxed);
		if (((r >> 40) & 63) == 0) {
			/* Let the consumer run dry and block in poll(2). */
			atomic_store_explicit(&pr->where, PW_PAUSE, memory_order_relaxed);
			sleep_us(50 + (unsigned)(r >> 48) % 200);
		}
	}
	atomic_store(&pr->where, PW_DONE);
	return NULL;
}

static void p_check_entry(struct p_phase *ph, unsigned j,
                          const struct lfp_cq_data_entry *e)
{
	uint64_t p = e->len, seq = e->data;

	CHECK(p < P_PROD && e->flags == j &&
	      e->op_context == (void *)(uintptr_t)(seq * 2654435761u + p),
	      "1: CQ %u: garbled entry (producer %llu, CQ %llu, seq %llu)", j,
	      (unsigned long long)p, (unsigned long long)e->flags,
	      (unsigned long long)seq);
	CHECK(seq == ph->next[p][j], "1: CQ %u: producer %llu's entry %llu "
	      "arrived when %llu was next (%s)", j, (unsigned long long)p,
	      (unsigned long long)seq, (unsigned long long)ph->next[p][j],
	      seq < ph->next[p][j] ? "read twice or out of order" : "entries lost");
	ph->next[p][j]++;
}

/* Every entry read and every counter's final value reported. */
static int p_all_done(struct p_phase *ph)
{
	unsigned i;

	if (!atomic_load(&ph->producers_done))
		return 0;
	for (i = 0; i < P_OBJS; i++)
		if (atomic_load(&ph->obj[i].consumed) != ph->obj[i].final)
			return 0;
	return 1;
}

static void *p_consumer_main(void *arg)
{
	struct p_phase *ph = (struct p_phase *)arg;
	struct lfp_fid *wf = &ph->ws->fid;
	struct lfp_cq_data_entry buf[16];
	struct pollfd pfd;
	void *ctx[P_OBJS];
	uint64_t rng = 0xc0de, v, prev;
	unsigned seen;
	int n, i, k, ret, count;
	ssize_t m;

	for (;;) {
		if (p_all_done(ph))
			break;
		atomic_fetch_add_explicit(&ph->c_loops, 1, memory_order_relaxed);
		atomic_store_explicit(&ph->c_where, CW_TRYWAIT, memory_order_relaxed);
		ret = lfp_trywait(&wf, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "1: lfp_trywait(wait set) = %d", ret);
		if (ret == 0) {
			/* Short: a counter change that the wait set reported
			 * while its producer was still queuing the member on
			 * the poll set shows up at the next lfp_poll. */
			atomic_store_explicit(&ph->c_where, CW_BLOCK, memory_order_relaxed);
			atomic_fetch_add_explicit(&ph->c_blocks, 1, memory_order_relaxed);
			pfd.fd = ph->fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			n = poll(&pfd, 1, 50);
			CHECK(n >= 0 || errno == EINTR, "1: poll: %s", strerror(errno));
			if (n == 0)
				atomic_fetch_add_explicit(&ph->c_block_timeouts, 1,
				                          memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&ph->c_trywait_eagain, 1,
			                          memory_order_relaxed);
		}
		atomic_store_explicit(&ph->c_where, CW_LFP_POLL, memory_order_relaxed);
		/* A short array now and then: members that do not fit must
		 * come in a later call. */
		count = 1 + (int)(stress_rand(&rng) % P_OBJS);
		n = lfp_poll(ph->ps, ctx, count);
		CHECK(n >= 0 && n <= count, "1: lfp_poll(%d) = %d", count, n);
		if (n == 0)
			atomic_fetch_add_explicit(&ph->c_polls_empty, 1, memory_order_relaxed);
		seen = 0;
		for (i = 0; i < n; i++) {
			struct p_obj *o = (struct p_obj *)ctx[i];

			k = -1;
			if (o >= &ph->obj[0] && o < &ph->obj[P_OBJS])
				k = (int)(o - &ph->obj[0]);
			CHECK(k >= 0, "1: lfp_poll returned unknown context %p", ctx[i]);
			CHECK(!(seen & (1u << k)), "1: lfp_poll returned object %d "
			      "twice in one call", k);
			seen |= 1u << k;
			atomic_fetch_add(&o->reports, 1);
			atomic_store(&o->last_report_ns, stress_now_ns());
			atomic_store_explicit(&ph->c_where_obj, k, memory_order_relaxed);
			if (o->is_cq) {
				atomic_store_explicit(&ph->c_where, CW_DRAIN,
				                      memory_order_relaxed);
				while ((m = soak_cq_read(o->cq, buf, 16)) > 0) {
					for (k = 0; k < (int)m; k++)
						p_check_entry(ph, o->idx, &buf[k]);
					atomic_fetch_add(&o->consumed, (uint64_t)m);
				}
				CHECK(m == -EAGAIN, "1: lfp_cq_read(CQ %u) = %zd",
				      o->idx, m);
			} else {
				atomic_store_explicit(&ph->c_where, CW_READ_CNTR,
				                      memory_order_relaxed);
				v = lfp_cntr_read(o->cntr);
				prev = atomic_load(&o->consumed);
				CHECK(v >= prev, "1: counter %u went back from %llu "
				      "to %llu", o->idx - P_CQS,
				      (unsigned long long)prev, (unsigned long long)v);
				atomic_store(&o->consumed, v);
			}
		}
	}
	atomic_store(&ph->c_where, CW_DONE);
	return NULL;
}

/* The watchdog's check: an object with work that has not moved. */
static int p_wd_check(void *arg, char *msg, size_t len)
{
	struct p_phase *ph = (struct p_phase *)arg;
	uint64_t now = stress_now_ns(), have, got, t;
	char name[32], last[48];
	unsigned i;

	for (i = 0; i < P_OBJS; i++) {
		struct p_obj *o = &ph->obj[i];

		got = atomic_load(&o->consumed);
		have = o->is_cq ? atomic_load(&o->produced) : lfp_cntr_read(o->cntr);
		if (have <= got || got != o->wd_mark || !o->wd_since) {
			o->wd_mark = got;
			o->wd_since = now;
			continue;
		}
		if ((double)(now - o->wd_since) / 1e9 < stall_limit_s)
			continue;
		p_obj_name(o, name, sizeof(name));
		t = atomic_load(&o->last_report_ns);
		if (t)
			snprintf(last, sizeof(last), "%.1f s", (double)(now - t) / 1e9);
		else
			snprintf(last, sizeof(last), "never; started %.1f s",
			         (double)(now - ph->t0) / 1e9);
		if (o->is_cq)
			snprintf(msg, len, "%s has held %llu unread entries for "
			         "%.1f s without lfp_poll reporting it (reported %llu "
			         "times, last %s ago): a poll-set member lost, or a "
			         "lost wakeup", name, (unsigned long long)(have - got),
			         (double)(now - o->wd_since) / 1e9,
			         (unsigned long long)atomic_load(&o->reports), last);
		else
			snprintf(msg, len, "%s is at %llu but lfp_poll last led "
			         "to reading %llu: %llu increments unreported for "
			         "%.1f s (reported %llu times, last %s ago): a "
			         "poll-set member lost, or a lost wakeup", name,
			         (unsigned long long)have, (unsigned long long)got,
			         (unsigned long long)(have - got),
			         (double)(now - o->wd_since) / 1e9,
			         (unsigned long long)atomic_load(&o->reports), last);
		return 1;
	}
	return 0;
}

static void p_wd_report(void *arg)
{
	struct p_phase *ph = (struct p_phase *)arg;
	char name[32];
	unsigned i;

	fprintf(stderr, "  after %.1f s; producers %s\n", stress_seconds_since(ph->t0),
	        atomic_load(&ph->producers_done) ? "finished" :
	        atomic_load(&ph->stop) ? "stopping" : "running");
	for (i = 0; i < P_OBJS; i++) {
		struct p_obj *o = &ph->obj[i];

		p_obj_name(o, name, sizeof(name));
		if (o->is_cq)
			fprintf(stderr, "  %-9s written %llu, read %llu (%llu "
			        "outstanding), reported %llu times\n", name,
			        (unsigned long long)atomic_load(&o->produced),
			        (unsigned long long)atomic_load(&o->consumed),
			        (unsigned long long)(atomic_load(&o->produced) -
			                             atomic_load(&o->consumed)),
			        (unsigned long long)atomic_load(&o->reports));
		else
			fprintf(stderr, "  %-9s value %llu, last reported value %llu "
			        "(%llu increments outstanding), reported %llu times\n",
			        name, (unsigned long long)lfp_cntr_read(o->cntr),
			        (unsigned long long)atomic_load(&o->consumed),
			        (unsigned long long)(lfp_cntr_read(o->cntr) -
			                             atomic_load(&o->consumed)),
			        (unsigned long long)atomic_load(&o->reports));
	}
	for (i = 0; i < P_PROD; i++) {
		int w = atomic_load(&ph->pr[i].where);

		p_obj_name(&ph->obj[atomic_load(&ph->pr[i].where_obj)], name,
		           sizeof(name));
		fprintf(stderr, "  producer %u: %s%s%s after %llu operations\n", i,
		        pw_name(w), w == PW_DONE || w == PW_PAUSE ? "" : " on ",
		        w == PW_DONE || w == PW_PAUSE ? "" : name,
		        (unsigned long long)atomic_load(&ph->pr[i].ops));
	}
	p_obj_name(&ph->obj[atomic_load(&ph->c_where_obj)], name, sizeof(name));
	fprintf(stderr, "  consumer: %s (last object %s); %llu loops, lfp_trywait "
	        "-EAGAIN %llu, blocked %llu (%llu poll timeouts), lfp_poll "
	        "empty %llu\n", cw_name(atomic_load(&ph->c_where)), name,
	        (unsigned long long)atomic_load(&ph->c_loops),
	        (unsigned long long)atomic_load(&ph->c_trywait_eagain),
	        (unsigned long long)atomic_load(&ph->c_blocks),
	        (unsigned long long)atomic_load(&ph->c_block_timeouts),
	        (unsigned long long)atomic_load(&ph->c_polls_empty));
}

static void scenario_poll(double seconds)
{
	static struct p_phase ph; /* large; the watchdog reads it */
	struct lfp_wait_attr wa = { LFP_WAIT_FD, 0 };
	struct soak_wd wd;
	struct preempter pe;
	pthread_t prod[P_PROD], cons;
	uint64_t sum, entries = 0, incs = 0, reports = 0;
	unsigned i, p;
	int ret;

	memset(&ph, 0, sizeof(ph));
	ph.t0 = stress_now_ns();
	ret = lfp_wait_open(&wa, &ph.ws);
	CHECK(ret == 0, "1: lfp_wait_open = %d", ret);
	ret = lfp_control(&ph.ws->fid, LFP_GETWAIT, &ph.fd);
	CHECK(ret == 0 && ph.fd >= 0, "1: LFP_GETWAIT(wait set) = %d", ret);
	ret = lfp_poll_open(NULL, &ph.ps);
	CHECK(ret == 0, "1: lfp_poll_open = %d", ret);
	for (i = 0; i < P_OBJS; i++) {
		struct p_obj *o = &ph.obj[i];

		o->idx = i;
		o->is_cq = i < P_CQS;
		if (o->is_cq) {
			struct lfp_cq_attr a;

			memset(&a, 0, sizeof(a));
			a.size = P_CQ_SIZE;
			a.format = LFP_CQ_FORMAT_DATA;
			a.wait_obj = LFP_WAIT_SET;
			a.wait_set = ph.ws;
			ret = lfp_cq_open(&a, &o->cq, o);
			CHECK(ret == 0, "1: lfp_cq_open = %d", ret);
			ret = lfp_poll_add(ph.ps, &o->cq->fid, 0);
		} else {
			struct lfp_cntr_attr a;

			memset(&a, 0, sizeof(a));
			a.wait_obj = LFP_WAIT_SET;
			a.wait_set = ph.ws;
			ret = lfp_cntr_open(&a, &o->cntr, o);
			CHECK(ret == 0, "1: lfp_cntr_open = %d", ret);
			ret = lfp_poll_add(ph.ps, &o->cntr->fid, 0);
		}
		CHECK(ret == 0, "1: lfp_poll_add(object %u) = %d", i, ret);
	}

	soak_wd_start(&wd, "1 (fi_poll loop: wait set + poll set)", p_wd_check,
	              p_wd_report, &ph);
	stress_spawn(&cons, p_consumer_main, &ph);
	for (p = 0; p < P_PROD; p++) {
		ph.pr[p].ph = &ph;
		ph.pr[p].id = p;
		stress_spawn(&prod[p], p_producer_main, &ph.pr[p]);
	}
	if (soak_preempt)
		preempter_start(&pe, prod, P_PROD);
	sleep_us((unsigned)(seconds * 1e6));
	if (soak_preempt)
		preempter_stop(&pe); /* before the producers exit */
	atomic_store(&ph.stop, 1);
	for (p = 0; p < P_PROD; p++)
		stress_join(prod[p]);
	/* The totals the consumer must reach. */
	for (i = 0; i < P_OBJS; i++) {
		struct p_obj *o = &ph.obj[i];

		for (sum = 0, p = 0; p < P_PROD; p++)
			sum += o->is_cq ? ph.pr[p].seq[i] : ph.pr[p].incs[i - P_CQS];
		CHECK(sum == atomic_load(&o->produced), "1: object %u: producers "
		      "counted %llu and %llu", i, (unsigned long long)sum,
		      (unsigned long long)atomic_load(&o->produced));
		if (!o->is_cq)
			CHECK(lfp_cntr_read(o->cntr) == sum, "1: counter %u is %llu "
			      "after %llu increments of 1", i - P_CQS,
			      (unsigned long long)lfp_cntr_read(o->cntr),
			      (unsigned long long)sum);
		o->final = sum;
	}
	atomic_store(&ph.producers_done, 1);
	stress_join(cons); /* the watchdog fails the run if it never finishes */
	soak_wd_stop(&wd);

	for (i = 0; i < P_OBJS; i++) {
		struct p_obj *o = &ph.obj[i];

		if (o->is_cq) {
			struct lfp_cq_data_entry e;

			for (p = 0; p < P_PROD; p++)
				CHECK(ph.next[p][i] == ph.pr[p].seq[i], "1: CQ %u: "
				      "producer %u wrote %llu entries, %llu read", i, p,
				      (unsigned long long)ph.pr[p].seq[i],
				      (unsigned long long)ph.next[p][i]);
			CHECK(soak_cq_read(o->cq, &e, 1) == -EAGAIN, "1: CQ %u: "
			      "an entry left over", i);
			entries += o->final;
			CHECK(lfp_poll_del(ph.ps, &o->cq->fid, 0) == 0, "1: del");
			CHECK(lfp_cq_close(o->cq) == 0, "1: cq close");
		} else {
			incs += o->final;
			CHECK(lfp_poll_del(ph.ps, &o->cntr->fid, 0) == 0, "1: del");
			CHECK(lfp_cntr_close(o->cntr) == 0, "1: cntr close");
		}
		reports += atomic_load(&o->reports);
	}
	CHECK(lfp_poll_close(ph.ps) == 0, "1: poll close");
	CHECK(lfp_wait_close(ph.ws) == 0, "1: wait close");
	total.entries += entries;
	total.increments += incs;
	total.reports += reports;
	total.polls_empty += atomic_load(&ph.c_polls_empty);
	total.blocks += atomic_load(&ph.c_blocks);
}

/* ================================================================ 2 */

#define W_BYSTANDERS  2
#define W_CQ_SIZE     16
#define W_THRESHOLD   8      /* valid (<= count), never reached: <= 1 queued */

enum { K_POLLER, K_SREAD };  /* which real waiter a CQ round is for */

enum {
	AW_IDLE, AW_TRYWAIT, AW_BLOCKED, AW_WOKEN, AW_DONE
};
enum {
	RW_IDLE, RW_SREAD, RW_GOT, RW_DONE
};
enum {
	DW_START, DW_WAIT_READY, DW_WRITTEN, DW_WAIT_WAKE, DW_READ, DW_DONE
};

struct w_group;

struct w_thread {
	struct w_group *g;
	unsigned id;
};

/* One CQ and one counter with their own wait object, and their threads. */
struct w_group {
	enum lfp_wait_obj obj;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	int fd;                      /* FD, UNSPEC: the CQ's fd */
	struct lfp_mutex_cond mc;    /* MUTEX_COND: the CQ's */
	uint64_t t0;
	double seconds;
	_Atomic int stop_drivers, stop_bystanders, stop_waiters;

	/* CQ rounds: published by the CQ driver. */
	/* The current round (from 1) and its kind, in one word so that a
	 * waiter never pairs a round with the next one's kind:
	 * round * 2 + K_POLLER or K_SREAD. */
	_Atomic uint64_t q_round_kind;
	_Atomic uint64_t q_ready;           /* round whose waiter is about to sleep */
	_Atomic uint64_t q_written;         /* round whose entry is written */
	_Atomic uint64_t q_woken;           /* round whose waiter woke */
	_Atomic uint64_t q_got_seq;         /* K_SREAD: the entry's seq */
	_Atomic uint64_t q_t_write, q_t_wake;
	_Atomic int q_quiet;                /* no entry outstanding */
	_Atomic int q_sig_inflight;
	_Atomic int a_where, r_where, qd_where;
	_Atomic uint64_t a_blocks, r_signalled, q_by_calls, q_signals;
	_Atomic uint64_t q_rounds_done, q_oracle_seen;

	/* Counter rounds: published by the counter driver. */
	_Atomic uint64_t k_round, k_ready, k_woken, k_value;
	_Atomic uint64_t k_t_write, k_t_wake;
	_Atomic int w_where, kd_where;
	_Atomic uint64_t k_by_calls, k_rounds_done;

	/* Latency, written by the drivers. */
	_Atomic uint64_t max_wake_ns, sum_wake_ns, wakes;
};

static void w_note_wake(struct w_group *g, uint64_t ns)
{
	uint64_t m = atomic_load(&g->max_wake_ns);

	while (ns > m && !atomic_compare_exchange_weak(&g->max_wake_ns, &m, ns))
		;
	atomic_fetch_add(&g->sum_wake_ns, ns);
	atomic_fetch_add(&g->wakes, 1);
}

static const char *aw_name(int w)
{
	switch (w) {
	case AW_IDLE:    return "idle between its rounds";
	case AW_TRYWAIT: return "in lfp_trywait";
	case AW_BLOCKED: return "blocked on the native object";
	case AW_WOKEN:   return "woken";
	case AW_DONE:    return "done";
	default:         return "?";
	}
}

static const char *rw_name(int w)
{
	switch (w) {
	case RW_IDLE:  return "idle between its rounds";
	case RW_SREAD: return "in lfp_cq_sread(threshold 1, no timeout)";
	case RW_GOT:   return "returned with the entry";
	case RW_DONE:  return "done";
	default:       return "?";
	}
}

static const char *dw_name(int w)
{
	switch (w) {
	case DW_START:      return "starting";
	case DW_WAIT_READY: return "waiting for the round's waiter to be about to sleep";
	case DW_WRITTEN:    return "has written";
	case DW_WAIT_WAKE:  return "waiting for the waiter to wake";
	case DW_READ:       return "reading the entry back";
	case DW_DONE:       return "done";
	default:            return "?";
	}
}

/*
 * Wait for the driver's next round of this kind after round last: its
 * number (from 1), or 0 once the waiters are told to stop.
 */
static uint64_t w_next_round(struct w_group *g, uint64_t last, int kind)
{
	unsigned spins = 0;
	uint64_t rk, r;

	for (;;) {
		rk = atomic_load(&g->q_round_kind);
		r = rk / 2;
		if (atomic_load(&g->stop_waiters))
			return 0;
		if (r != last && rk % 2 == (uint64_t)kind)
			return r;
		stress_backoff(&spins);
	}
}

/* The CQ waiter that blocks on the native object after lfp_trywait. */
static void *w_poller_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	struct lfp_fid *fid = &g->cq->fid;
	struct pollfd pfd;
	struct timespec ts;
	uint64_t last = 0, r, t;
	unsigned spins;
	int ret, n;

	for (;;) {
		/* Wait for a round of ours. */
		atomic_store(&g->a_where, AW_IDLE);
		r = w_next_round(g, last, K_POLLER);
		if (!r) {
			atomic_store(&g->a_where, AW_DONE);
			return NULL;
		}
		last = r;
		for (;;) {
			atomic_store(&g->a_where, AW_TRYWAIT);
			if (g->obj == LFP_WAIT_MUTEX_COND)
				pthread_mutex_lock(g->mc.mutex);
			ret = lfp_trywait(&fid, 1);
			if (ret == -EAGAIN) {
				if (g->obj == LFP_WAIT_MUTEX_COND)
					pthread_mutex_unlock(g->mc.mutex);
				t = stress_now_ns();
				/* Only the driver's entry makes the CQ
				 * non-empty; wait for its bookkeeping. */
				spins = 0;
				while (atomic_load(&g->q_written) != r)
					stress_backoff(&spins);
				atomic_store(&g->q_t_wake, t);
				atomic_store(&g->a_where, AW_WOKEN);
				atomic_store(&g->q_woken, r);
				break;
			}
			CHECK(ret == 0, "2 %s: poller: lfp_trywait(CQ) = %d",
			      obj_name(g->obj), ret);
			/* Safe to sleep: announce it (once per round). */
			if (atomic_load(&g->q_ready) != r)
				atomic_store(&g->q_ready, r);
			atomic_store(&g->a_where, AW_BLOCKED);
			atomic_fetch_add(&g->a_blocks, 1);
			switch (g->obj) {
			case LFP_WAIT_FD:
			case LFP_WAIT_UNSPEC:
				/* Long: only an event or a signal ends it. */
				pfd.fd = g->fd;
				pfd.events = POLLIN;
				pfd.revents = 0;
				n = poll(&pfd, 1, 30000);
				CHECK(n >= 0 || errno == EINTR, "2: poll: %s",
				      strerror(errno));
				break;
			case LFP_WAIT_MUTEX_COND:
				/* Still holding the mutex since before
				 * lfp_trywait, as lfp_trywait(3) says. */
				clock_gettime(CLOCK_MONOTONIC, &ts);
				ts.tv_sec += 30;
				ret = pthread_cond_timedwait(g->mc.cond, g->mc.mutex, &ts);
				CHECK(ret == 0 || ret == ETIMEDOUT, "2: "
				      "pthread_cond_timedwait = %d", ret);
				pthread_mutex_unlock(g->mc.mutex);
				break;
			default:
				sched_yield(); /* YIELD: re-check */
				break;
			}
			/* Woken (or timed out): lfp_trywait tells. */
		}
	}
}

/* The CQ waiter in lfp_cq_sread(threshold 1, no timeout). */
static void *w_sread_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	struct lfp_cq_data_entry buf[W_CQ_SIZE];
	uint64_t last = 0, r, t;
	ssize_t n;

	for (;;) {
		atomic_store(&g->r_where, RW_IDLE);
		r = w_next_round(g, last, K_SREAD);
		if (!r) {
			atomic_store(&g->r_where, RW_DONE);
			return NULL;
		}
		last = r;
		atomic_store(&g->r_where, RW_SREAD);
		atomic_store(&g->q_ready, r);
		for (;;) {
			n = soak_cq_sread(g->cq, buf, W_CQ_SIZE, NULL, -1);
			t = stress_now_ns();
			if (n == -EAGAIN) {
				/* lfp_cq_signal: expected; wait again. */
				atomic_fetch_add(&g->r_signalled, 1);
				continue;
			}
			CHECK(n == 1, "2 %s: lfp_cq_sread(threshold 1, no timeout) = "
			      "%zd in round %llu (one entry was written)",
			      obj_name(g->obj), n, (unsigned long long)r);
			break;
		}
		atomic_store(&g->q_got_seq, buf[0].data);
		atomic_store(&g->q_t_wake, t);
		atomic_store(&g->r_where, RW_GOT);
		atomic_store(&g->q_woken, r);
	}
}

/* CQ bystanders: a condition (threshold 8) that never holds, short timeouts. */
static void *w_cq_bystander_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	struct lfp_cq_data_entry buf[W_CQ_SIZE];
	size_t th = W_THRESHOLD;
	ssize_t n;

	while (!atomic_load(&g->stop_bystanders)) {
		n = soak_cq_sread(g->cq, buf, W_CQ_SIZE, &th, 5);
		CHECK(n == -EAGAIN, "2 %s: bystander lfp_cq_sread(threshold %d, "
		      "5 ms) = %zd with at most one entry queued",
		      obj_name(g->obj), W_THRESHOLD, n);
		atomic_fetch_add_explicit(&g->q_by_calls, 1, memory_order_relaxed);
	}
	return NULL;
}

/* lfp_cq_signal now and then, but never while an entry is outstanding: a
 * signal wakes every sleeper and would hide a lost wakeup. */
static void *w_signaller_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	uint64_t rng = 0x516e + (uint64_t)g->obj;
	int ret;

	while (!atomic_load(&g->stop_waiters)) {
		sleep_us(300 + (unsigned)(stress_rand(&rng) % 3000));
		atomic_fetch_add(&g->q_sig_inflight, 1);
		if (atomic_load(&g->q_quiet)) {
			ret = lfp_cq_signal(g->cq);
			CHECK(ret == 0, "2: lfp_cq_signal = %d", ret);
			atomic_fetch_add(&g->q_signals, 1);
		}
		atomic_fetch_sub(&g->q_sig_inflight, 1);
	}
	return NULL;
}

static const char *native_name(enum lfp_wait_obj o)
{
	switch (o) {
	case LFP_WAIT_FD:
	case LFP_WAIT_UNSPEC:     return "poll(2) on the CQ's fd";
	case LFP_WAIT_MUTEX_COND: return "pthread_cond_timedwait on the CQ's condition";
	default:                  return "sched_yield";
	}
}

static void w_cq_fail(struct w_group *g, uint64_t r, int kind, int oracle,
                      uint64_t t_write)
{
	int a = atomic_load(&g->a_where);

	if (kind == K_POLLER && atomic_load(&g->q_woken) == r)
		CHECK(0, "2 %s: CQ round %llu: the poller woke, but in %.1f s "
		      "poll(fd, 0) never showed the fd readable while the entry "
		      "was in the CQ (%d bystanders in lfp_cq_sread(threshold %d, "
		      "5 ms)): a lost wakeup for anyone else polling the fd",
		      obj_name(g->obj), (unsigned long long)r,
		      stress_seconds_since(t_write), W_BYSTANDERS, W_THRESHOLD);
	if (kind == K_POLLER)
		CHECK(0, "2 %s: CQ round %llu: lfp_trywait returned 0 to the poller, "
		      "then one entry was written; %.1f s later the poller is %s%s "
		      "(%s%s), although the entry is still in the CQ (%d bystanders in "
		      "lfp_cq_sread(threshold %d, 5 ms)): a lost wakeup",
		      obj_name(g->obj), (unsigned long long)r,
		      stress_seconds_since(t_write), a == AW_BLOCKED ? "still " : "",
		      aw_name(a), native_name(g->obj),
		      g->fd < 0 ? "" : oracle ? "; the fd was readable at some point" :
		      "; poll(fd, 0) never showed the fd readable",
		      W_BYSTANDERS, W_THRESHOLD);
	CHECK(0, "2 %s: CQ round %llu: one entry written %.1f s ago, and the "
	      "sread waiter is %s%s (%d bystanders in lfp_cq_sread(threshold %d, "
	      "5 ms)): a lost wakeup", obj_name(g->obj), (unsigned long long)r,
	      stress_seconds_since(t_write),
	      atomic_load(&g->r_where) == RW_SREAD ? "still " : "",
	      rw_name(atomic_load(&g->r_where)), W_BYSTANDERS, W_THRESHOLD);
}

static void *w_cq_driver_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	struct lfp_cq_data_entry e, got;
	struct stress_deadline d;
	struct pollfd pfd;
	uint64_t r, rng = 0xd1 + (uint64_t)g->obj, t_write, t_wake;
	unsigned spins;
	int kind, oracle;
	ssize_t n;

	for (r = 1; !atomic_load(&g->stop_drivers); r++) {
		kind = (stress_rand(&rng) & 1) ? K_POLLER : K_SREAD;
		atomic_store(&g->qd_where, DW_WAIT_READY);
		atomic_store(&g->q_round_kind, r * 2 + (uint64_t)kind);
		d = stress_deadline_in(stall_limit_s, "2: the CQ round's waiter to "
		                       "get ready");
		spins = 0;
		while (atomic_load(&g->q_ready) != r) {
			stress_backoff(&spins);
			CHECK(!stress_deadline_passed(&d), "2 %s: CQ round %llu: the "
			      "%s never got ready (it is %s)", obj_name(g->obj),
			      (unsigned long long)r,
			      kind == K_POLLER ? "poller" : "sread waiter",
			      kind == K_POLLER ? aw_name(atomic_load(&g->a_where))
			                       : rw_name(atomic_load(&g->r_where)));
		}
		/* Land anywhere from before its sleep to well into it. */
		if (stress_rand(&rng) & 1)
			sleep_us((unsigned)(stress_rand(&rng) % 400));
		/* No signal in flight from here to the end of the round. */
		atomic_store(&g->q_quiet, 0);
		spins = 0;
		while (atomic_load(&g->q_sig_inflight))
			stress_backoff(&spins);
		memset(&e, 0, sizeof(e));
		e.op_context = g;
		e.data = r;
		t_write = stress_now_ns();
		atomic_store(&g->q_t_write, t_write);
		n = lfp_cq_write(g->cq, &e, 1);
		CHECK(n == 1, "2 %s: lfp_cq_write = %zd", obj_name(g->obj), n);
		atomic_store(&g->q_written, r);
		atomic_store(&g->qd_where, DW_WAIT_WAKE);
		/* Wait for the wake; meanwhile, with an fd, the oracle: the
		 * fd must show readable while the entry is queued. */
		oracle = g->fd < 0 || kind != K_POLLER;
		spins = 0;
		while (atomic_load(&g->q_woken) != r || !oracle) {
			if (!oracle) {
				pfd.fd = g->fd;
				pfd.events = POLLIN;
				pfd.revents = 0;
				if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN))
					oracle = 1;
			}
			if ((double)(stress_now_ns() - t_write) / 1e9 > wake_limit_s)
				w_cq_fail(g, r, kind, oracle, t_write);
			stress_backoff(&spins);
		}
		if (kind == K_POLLER && g->fd >= 0)
			atomic_fetch_add(&g->q_oracle_seen, 1);
		t_wake = atomic_load(&g->q_t_wake);
		w_note_wake(g, t_wake > t_write ? t_wake - t_write : 0);
		if (kind == K_POLLER) {
			/* Nobody else consumes it: read it back. */
			atomic_store(&g->qd_where, DW_READ);
			n = soak_cq_read(g->cq, &got, 1);
			CHECK(n == 1 && got.op_context == g && got.data == r, "2 %s: "
			      "CQ round %llu: lfp_cq_read = %zd, data %llu",
			      obj_name(g->obj), (unsigned long long)r, n,
			      n == 1 ? (unsigned long long)got.data : 0ull);
		} else {
			CHECK(atomic_load(&g->q_got_seq) == r, "2 %s: CQ round %llu: "
			      "the sread waiter got entry %llu", obj_name(g->obj),
			      (unsigned long long)r,
			      (unsigned long long)atomic_load(&g->q_got_seq));
		}
		n = soak_cq_read(g->cq, &got, 1);
		CHECK(n == -EAGAIN, "2 %s: CQ round %llu: lfp_cq_read after the "
		      "round = %zd (an entry read twice or left over)",
		      obj_name(g->obj), (unsigned long long)r, n);
		atomic_store(&g->q_quiet, 1);
		atomic_fetch_add(&g->q_rounds_done, 1);
	}
	atomic_store(&g->qd_where, DW_DONE);
	return NULL;
}

/* The counter waiter: lfp_cntr_wait(next value, no timeout). */
static void *w_cntr_waiter_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	uint64_t last = 0, r, t;
	unsigned spins;
	int ret;

	for (;;) {
		atomic_store(&g->w_where, RW_IDLE);
		spins = 0;
		for (;;) {
			r = atomic_load(&g->k_round);
			if (atomic_load(&g->stop_waiters)) {
				atomic_store(&g->w_where, RW_DONE);
				return NULL;
			}
			if (r != last)
				break;
			stress_backoff(&spins);
		}
		last = r;
		atomic_store(&g->w_where, RW_SREAD);
		atomic_store(&g->k_ready, r);
		ret = lfp_cntr_wait(g->cntr, r, -1);
		t = stress_now_ns();
		CHECK(ret == 0, "2 %s: lfp_cntr_wait(%llu, no timeout) = %d",
		      obj_name(g->obj), (unsigned long long)r, ret);
		atomic_store(&g->k_value, lfp_cntr_read(g->cntr));
		atomic_store(&g->k_t_wake, t);
		atomic_store(&g->w_where, RW_GOT);
		atomic_store(&g->k_woken, r);
	}
}

static void *w_cntr_bystander_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	int ret;

	while (!atomic_load(&g->stop_bystanders)) {
		ret = lfp_cntr_wait(g->cntr, UINT64_MAX, 5);
		CHECK(ret == -ETIMEDOUT, "2 %s: bystander lfp_cntr_wait(UINT64_MAX, "
		      "5 ms) = %d", obj_name(g->obj), ret);
		atomic_fetch_add_explicit(&g->k_by_calls, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *w_cntr_driver_main(void *arg)
{
	struct w_group *g = ((struct w_thread *)arg)->g;
	struct stress_deadline d;
	uint64_t r, rng = 0xc7 + (uint64_t)g->obj, t_write, t_wake;
	unsigned spins;
	int ret, w;

	for (r = 1; !atomic_load(&g->stop_drivers); r++) {
		atomic_store(&g->kd_where, DW_WAIT_READY);
		atomic_store(&g->k_round, r);
		d = stress_deadline_in(stall_limit_s, "2: the counter waiter");
		spins = 0;
		while (atomic_load(&g->k_ready) != r) {
			stress_backoff(&spins);
			CHECK(!stress_deadline_passed(&d), "2 %s: counter round %llu: "
			      "the waiter never got ready", obj_name(g->obj),
			      (unsigned long long)r);
		}
		if (stress_rand(&rng) & 1)
			sleep_us((unsigned)(stress_rand(&rng) % 400));
		t_write = stress_now_ns();
		atomic_store(&g->k_t_write, t_write);
		ret = lfp_cntr_inc(g->cntr, 1);
		CHECK(ret == 0, "2 %s: lfp_cntr_inc = %d", obj_name(g->obj), ret);
		atomic_store(&g->kd_where, DW_WAIT_WAKE);
		spins = 0;
		while (atomic_load(&g->k_woken) != r) {
			if ((double)(stress_now_ns() - t_write) / 1e9 > wake_limit_s) {
				w = atomic_load(&g->w_where);
				CHECK(0, "2 %s: counter round %llu: lfp_cntr_inc made the "
				      "value %llu %.1f s ago, and the waiter %s (%d "
				      "bystanders in lfp_cntr_wait(UINT64_MAX, 5 ms)): "
				      "a lost wakeup", obj_name(g->obj),
				      (unsigned long long)r,
				      (unsigned long long)lfp_cntr_read(g->cntr),
				      stress_seconds_since(t_write),
				      w == RW_SREAD ? "is still in lfp_cntr_wait(that "
				      "value, no timeout)" : "is not back",
				      W_BYSTANDERS);
			}
			stress_backoff(&spins);
		}
		t_wake = atomic_load(&g->k_t_wake);
		w_note_wake(g, t_wake > t_write ? t_wake - t_write : 0);
		CHECK(atomic_load(&g->k_value) == r, "2 %s: counter round %llu: the "
		      "waiter read %llu", obj_name(g->obj), (unsigned long long)r,
		      (unsigned long long)atomic_load(&g->k_value));
		atomic_fetch_add(&g->k_rounds_done, 1);
	}
	atomic_store(&g->kd_where, DW_DONE);
	return NULL;
}

/* Backstop: a driver stuck inside the library, where its own limit cannot
 * fire. */
struct w_wd_state {
	struct w_group *g;
	uint64_t mark, since;
};

static int w_wd_check(void *arg, char *msg, size_t len)
{
	struct w_wd_state *s = (struct w_wd_state *)arg;
	struct w_group *g = s->g;
	uint64_t now = stress_now_ns();
	uint64_t m = atomic_load(&g->q_rounds_done) + atomic_load(&g->k_rounds_done);

	if (m != s->mark || !s->since) {
		s->mark = m;
		s->since = now;
		return 0;
	}
	if ((double)(now - s->since) / 1e9 < stall_limit_s + wake_limit_s)
		return 0;
	if (atomic_load(&g->qd_where) == DW_DONE && atomic_load(&g->kd_where) == DW_DONE)
		return 0;
	snprintf(msg, len, "no round finished for %.1f s", (double)(now - s->since) / 1e9);
	return 1;
}

static void w_wd_report(void *arg)
{
	struct w_group *g = ((struct w_wd_state *)arg)->g;

	fprintf(stderr, "  %s, after %.1f s: CQ round %llu (%s): driver %s; "
	        "poller %s; sread waiter %s; %llu bystander calls\n",
	        obj_name(g->obj), stress_seconds_since(g->t0),
	        (unsigned long long)(atomic_load(&g->q_round_kind) / 2),
	        atomic_load(&g->q_round_kind) % 2 == K_POLLER ? "poller" : "sread",
	        dw_name(atomic_load(&g->qd_where)), aw_name(atomic_load(&g->a_where)),
	        rw_name(atomic_load(&g->r_where)),
	        (unsigned long long)atomic_load(&g->q_by_calls));
	fprintf(stderr, "  counter round %llu: driver %s; waiter %s; value %llu; "
	        "%llu bystander calls\n", (unsigned long long)atomic_load(&g->k_round),
	        dw_name(atomic_load(&g->kd_where)),
	        atomic_load(&g->w_where) == RW_SREAD ? "in lfp_cntr_wait" :
	        atomic_load(&g->w_where) == RW_GOT ? "woken" : "idle",
	        (unsigned long long)lfp_cntr_read(g->cntr),
	        (unsigned long long)atomic_load(&g->k_by_calls));
}

static void scenario_waiters(enum lfp_wait_obj obj, double seconds)
{
	static struct w_group g;
	struct w_wd_state wds;
	struct lfp_cq_attr qa;
	struct lfp_cntr_attr ka;
	struct w_thread wt[2 * W_BYSTANDERS + 6];
	pthread_t qby[W_BYSTANDERS], kby[W_BYSTANDERS], poller, sreader, signaller,
	          qdrv, kwaiter, kdrv;
	struct soak_wd wd;
	char what[64];
	unsigned i;
	int ret;

	memset(&g, 0, sizeof(g));
	g.obj = obj;
	g.fd = -1;
	g.t0 = stress_now_ns();
	g.seconds = seconds;
	atomic_store(&g.q_quiet, 1);
	memset(&qa, 0, sizeof(qa));
	qa.size = W_CQ_SIZE;
	qa.format = LFP_CQ_FORMAT_DATA;
	qa.wait_cond = LFP_CQ_COND_THRESHOLD; /* bystanders wait for 8 */
	qa.wait_obj = obj;
	ret = lfp_cq_open(&qa, &g.cq, NULL);
	CHECK(ret == 0, "2 %s: lfp_cq_open = %d", obj_name(obj), ret);
	memset(&ka, 0, sizeof(ka));
	ka.wait_obj = obj;
	ret = lfp_cntr_open(&ka, &g.cntr, NULL);
	CHECK(ret == 0, "2 %s: lfp_cntr_open = %d", obj_name(obj), ret);
	if (obj == LFP_WAIT_FD || obj == LFP_WAIT_UNSPEC) {
		ret = lfp_control(&g.cq->fid, LFP_GETWAIT, &g.fd);
		CHECK(ret == 0 && g.fd >= 0, "2 %s: LFP_GETWAIT = %d", obj_name(obj), ret);
	} else if (obj == LFP_WAIT_MUTEX_COND) {
		ret = lfp_control(&g.cq->fid, LFP_GETWAIT, &g.mc);
		CHECK(ret == 0 && g.mc.mutex && g.mc.cond, "2 %s: LFP_GETWAIT = %d",
		      obj_name(obj), ret);
	}
	for (i = 0; i < sizeof(wt) / sizeof(wt[0]); i++) {
		wt[i].g = &g;
		wt[i].id = i;
	}

	memset(&wds, 0, sizeof(wds));
	wds.g = &g;
	snprintf(what, sizeof(what), "2 (mixed waiters, %s)", obj_name(obj));
	soak_wd_start(&wd, what, w_wd_check, w_wd_report, &wds);
	for (i = 0; i < W_BYSTANDERS; i++) {
		stress_spawn(&qby[i], w_cq_bystander_main, &wt[i]);
		stress_spawn(&kby[i], w_cntr_bystander_main, &wt[W_BYSTANDERS + i]);
	}
	stress_spawn(&poller, w_poller_main, &wt[2 * W_BYSTANDERS]);
	stress_spawn(&sreader, w_sread_main, &wt[2 * W_BYSTANDERS + 1]);
	stress_spawn(&signaller, w_signaller_main, &wt[2 * W_BYSTANDERS + 2]);
	stress_spawn(&kwaiter, w_cntr_waiter_main, &wt[2 * W_BYSTANDERS + 3]);
	stress_spawn(&qdrv, w_cq_driver_main, &wt[2 * W_BYSTANDERS + 4]);
	stress_spawn(&kdrv, w_cntr_driver_main, &wt[2 * W_BYSTANDERS + 5]);

	sleep_us((unsigned)(seconds * 1e6));
	atomic_store(&g.stop_drivers, 1);
	stress_join(qdrv);
	stress_join(kdrv);
	/* The waiters are idle between rounds now; no wakeup needed. */
	atomic_store(&g.stop_bystanders, 1);
	for (i = 0; i < W_BYSTANDERS; i++) {
		stress_join(qby[i]);
		stress_join(kby[i]);
	}
	atomic_store(&g.stop_waiters, 1);
	stress_join(poller);
	stress_join(sreader);
	stress_join(signaller);
	stress_join(kwaiter);
	soak_wd_stop(&wd);

	CHECK(lfp_cntr_read(g.cntr) == atomic_load(&g.k_rounds_done), "2 %s: "
	      "counter at %llu after %llu increments", obj_name(obj),
	      (unsigned long long)lfp_cntr_read(g.cntr),
	      (unsigned long long)atomic_load(&g.k_rounds_done));
	CHECK(lfp_cq_close(g.cq) == 0, "2: cq close");
	CHECK(lfp_cntr_close(g.cntr) == 0, "2: cntr close");
	CHECK(atomic_load(&g.q_rounds_done) > 0 && atomic_load(&g.k_rounds_done) > 0,
	      "2 %s: no round completed", obj_name(obj));
	total.rounds += atomic_load(&g.q_rounds_done) + atomic_load(&g.k_rounds_done);
	total.entries += atomic_load(&g.q_rounds_done);
	total.increments += atomic_load(&g.k_rounds_done);
	total.wakes += atomic_load(&g.wakes);
	if (atomic_load(&g.max_wake_ns) > total.max_wake_ns)
		total.max_wake_ns = atomic_load(&g.max_wake_ns);
	total.signals += atomic_load(&g.q_signals);
	total.bystander_calls += atomic_load(&g.q_by_calls) + atomic_load(&g.k_by_calls);
}

/* ================================================================ main */

int main(void)
{
	static const enum lfp_wait_obj objs[] = {
		LFP_WAIT_FD, LFP_WAIT_UNSPEC, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD
	};
	const char *s = getenv("LFP_SOAK_SECONDS"), *only = getenv("LFP_SOAK_ONLY");
	const char *pre = getenv("LFP_SOAK_PREEMPT");
	int do_poll = 1, do_waiters = 1, one = -1;
	uint64_t t0 = stress_now_ns();
	double share;
	unsigned i;

	/* Not scaled by LFP_STRESS=long: make soak sets its own length. */
	soak_seconds = STRESS_TSAN ? 4 : 6 * stress_share();
	if (s && *s) {
		soak_seconds = atof(s);
		CHECK(soak_seconds > 0, "LFP_SOAK_SECONDS=%s: not a positive number", s);
	}
	if (only && *only) {
		do_poll = strcmp(only, "poll") == 0;
		do_waiters = strcmp(only, "waiters") == 0;
		for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
			if (strcmp(only, obj_name(objs[i])) == 0)
				one = (int)i;
		do_waiters |= one >= 0;
		CHECK(do_poll || do_waiters, "LFP_SOAK_ONLY=%s: poll, waiters, FD, "
		      "UNSPEC, MUTEX_COND or YIELD", only);
	}
	if (pre && strcmp(pre, "0") == 0)
		soak_preempt = 0;
	/* Generous: these turn hangs into failures, they time nothing. */
	wake_limit_s = STRESS_TSAN ? 4 : 2;
	stall_limit_s = STRESS_TSAN ? 10 : 5;

	share = do_poll && do_waiters ? 0.5 : 1.0;
	if (do_poll)
		scenario_poll(soak_seconds * share);
	if (do_waiters)
		for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
			if (one < 0 || one == (int)i)
				scenario_waiters(objs[i], soak_seconds *
				                 (1 - (do_poll ? share : 0)) / (one < 0 ? 4 : 1));

	printf("stress_soak: PASS: %llu CQ entries and %llu counter increments each "
	       "accounted for once (%llu poll-set reports, %llu empty lfp_poll, %llu "
	       "blocks in poll(2)); %llu waiter rounds, %llu wakes, max wake latency "
	       "%.2f ms, %llu lfp_cq_signal, %llu bystander waits (%.1f s)\n",
	       (unsigned long long)total.entries, (unsigned long long)total.increments,
	       (unsigned long long)total.reports, (unsigned long long)total.polls_empty,
	       (unsigned long long)total.blocks, (unsigned long long)total.rounds,
	       (unsigned long long)total.wakes, ms_of(total.max_wake_ns),
	       (unsigned long long)total.signals,
	       (unsigned long long)total.bystander_calls, stress_seconds_since(t0));
	return 0;
}
