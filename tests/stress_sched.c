/*
 * lfpoll under deterministic schedules: threads parked at the headers'
 * schedule points (include/lfpoll/internal/sched.h) while other threads
 * act, for each defect the protocol once had, and a walk that parks each
 * thread of a mixed workload at every point it passes.
 *
 * The program defines LFP_SCHED_POINTS and LFP_TEST_BROKEN and provides
 * lfp_test_sched (which parks a thread that asked to be parked at a point)
 * and lfp_test_broken (which turns on the old behaviour of one defect).
 * With LFP_BROKEN=<letter> in the environment (or the letter as the first
 * argument) that defect's old behaviour is back and its test must fail
 * (make check-broken, tests/sched.mk); without it every test must pass.
 *
 *   A  a waiter with its own condition must not take another waiter's
 *      eventfd wake.  An FD CQ (and counter): trywait -> 0, one entry
 *      written (the fd posted), a bystander sread(threshold 4) parked at
 *      signal.W3: the fd must still be readable (poll).  And two sreads
 *      (thresholds 1 and 4; cntr_wait 1 and 100), both parked at
 *      signal.W3 around the write: the first must return the entry.  Over
 *      FD, UNSPEC, MUTEX_COND and YIELD (the poll part on FD and UNSPEC).
 *   B  a poll set member is never lost.  The producer parks at
 *      poll.link.pushed; lfp_poll reports the member, it is drained, lfp_poll
 *      finds it empty; the producer resumes; new work must be reported.
 *      For a CQ and a counter.
 *   C  sread keeps its timeout while a producer is parked between its
 *      claim and its publish (ring.prod.claimed): sread(300 ms) returns
 *      -EAGAIN within 1.2 s, using under 30% CPU (not for YIELD, which
 *      polls by design).  Over FD, UNSPEC, MUTEX_COND and YIELD.
 *   E  lfp_cq_signal before sread is remembered, once, after the queued
 *      completions are read; a signal while sread is parked at signal.W3
 *      ends it.  Over FD, UNSPEC, MUTEX_COND and YIELD.
 *   F  errors before events: a reader parked at ring.cons.acquired (on the
 *      head event) while another reader takes that event and a writer
 *      queues an error and then an event: the parked read must return
 *      -LFP_EAVAIL, not the event.  For a CQ and an EQ.
 *   G  overrun is final: a writer parked at eq.write.claimed while the EQ
 *      overruns and a reader drains it: no event may come out after the
 *      reader saw -LFP_EAVAIL for the overrun.
 *   W  the walk: a producer writes to a CQ in an FD wait set and a poll set,
 *      an FD CQ in the poll set, a counter in both and an FD EQ (with one
 *      error on each queue); a waiter uses lfp_poll, reads, trywait and
 *      poll(2) (sleeping up to 3 s, or ticking every 2 ms so that it calls
 *      lfp_poll while another thread is parked), and churns the poll set
 *      and the wait set's fds.  One run
 *      records the points each thread passes; then, for each thread and
 *      each point, a run parks that thread there for 20 ms (at its first
 *      hit, then at a middle one): no hang, no lost wake (a 3 s sleep with
 *      work queued), nothing lost, in order, errors before later events.
 *   I  a counter in a wait set and a poll set, its producer parked before
 *      its poll link's push while the fi_poll(3) loop consumes the change
 *      through trywait and arms again: the set's fd must wake after the
 *      push (found by W; the wake used to go out first).
 *   J  the error count: an error writer parked between counting and
 *      publishing (errq.write.half) while a reader takes what is queued and
 *      another writer queues an error and an event: the read must return
 *      -LFP_EAVAIL.  J2: the same with the first writer parked between its
 *      claim and its publish (errq.write.claimed), so the second error is
 *      queued behind an unpublished head (EQ read and peek, CQ read).
 *      J3: a void entry (an error write refused after the overrun) behind
 *      that head is no error: the events are read.
 *   L  a burst that reaches a slot a consumer has claimed but not copied
 *      out (ring.cons.claimed) stops short of it at once: the consumer
 *      copies out its own entry, not the producer's.
 *   S  a producer (consumer) parked in its claim loop after guessing head
 *      (tail) while 2^31 positions pass (ring.prod.guessed,
 *      ring.cons.guessed; the state those operations leave is written in
 *      O(capacity)): the 32-bit sequence then looks full (empty), and the
 *      call must re-read the index and succeed.  On a ring and an EQ
 *      (where a false full was a permanent overrun).
 *   X  an index ring's consumer parked between its claim and its copy-out
 *      (ring.idx.claimed): a producer must find the ring full, and the
 *      consumer copies out its own entry.
 *   K  lfp_cq_signal's counts: after 2^31 + 1 signals with no sread (the
 *      state written directly), one sread returns -EAGAIN for them and the
 *      next waits out its timeout; a signal that comes while an sread is
 *      blocked (parked at signal.W3) and returns a completion is that
 *      sread's: the next sread waits.  Over FD, UNSPEC, MUTEX_COND, YIELD.
 *   T  an sread threshold above the CQ's capacity is capped at it: a full
 *      CQ of 4 meets threshold 8.
 *   O  an error write racing the overrun: parked after its claim
 *      (errq.write.claimed) while the EQ overruns and drains, it is read
 *      before the overrun entry or refused with -LFP_EOVERRUN; parked
 *      before its claim (errq.write.half) while readerr(LFP_PEEK) shows the
 *      overrun entry, every readerr after returns the overrun entry.
 *   Q  cancellation: a thread cancelled asleep in eq/cq sread, cntr_wait
 *      (FD, UNSPEC, MUTEX_COND, YIELD) or lfp_wait (FD, POLLFD, MUTEX_COND,
 *      YIELD sets) is cancelled within 5 s and leaves nothing held (the
 *      next write completes, the entry is read, close succeeds); a thread
 *      with a request pending returns from lfp_eq_write (which posts the
 *      eventfd) and lfp_trywait (which drains it).
 *   H  lfp_wait against lfp_wait_add_fd/del_fd (and LFP_GETWAIT on a POLLFD
 *      set) from other threads, for ThreadSanitizer; FD, POLLFD, YIELD.
 *
 * LFP_SCHED_ONLY=<letters> runs only those tests (e.g. "AW").  Every
 * failure line names the defect letter and the promise broken.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD; before any include */
#define LFP_SCHED_POINTS
#define LFP_TEST_BROKEN
#include <lfpoll/lfpoll.h>

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "stress_objs.h"

/* ================================================================ broken */

/* Room for any defect's name, so that comparing it with the longer ones
 * ("P2") is well defined. */
static char broken[8];

int lfp_test_broken(const char *defect)
{
	return broken[0] && strcmp(defect, broken) == 0;
}

/* ================================================================ parking */

#define MAX_POINTS 64

static const char *point_names[MAX_POINTS];
static unsigned npoints;
static pthread_mutex_t points_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned point_id(const char *where)
{
	unsigned i;

	pthread_mutex_lock(&points_lock);
	for (i = 0; i < npoints; i++)
		if (strcmp(point_names[i], where) == 0)
			break;
	if (i == npoints) {
		CHECK(npoints < MAX_POINTS, "more than %d schedule points", MAX_POINTS);
		point_names[npoints++] = where;
	}
	pthread_mutex_unlock(&points_lock);
	return i;
}

/*
 * A thread's parking order: park at the (skip+1)-th pass of `where` (on obj
 * when not NULL), once, until parker_release (hold_ms 0) or for hold_ms.
 * With record, count every point the thread passes.
 */
struct parker {
	const char *where;
	const void *obj;
	unsigned skip;
	int hold_ms;
	int record;
	unsigned hits[MAX_POINTS];      /* with record; read after the join */
	int fired;                      /* the owner thread only */
	pthread_mutex_t m;
	pthread_cond_t c;
	int parked, released;           /* under m */
};

static _Thread_local struct parker *self_parker;

static void parker_init(struct parker *p, const char *where, const void *obj)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	p->where = where;
	p->obj = obj;
	CHECK(pthread_mutex_init(&p->m, NULL) == 0 &&
	      pthread_condattr_init(&ca) == 0 &&
	      pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	      pthread_cond_init(&p->c, &ca) == 0, "parker init");
	pthread_condattr_destroy(&ca);
}

static void parker_fini(struct parker *p)
{
	pthread_cond_destroy(&p->c);
	pthread_mutex_destroy(&p->m);
}

void lfp_test_sched(const char *where, const void *obj)
{
	struct parker *p = self_parker;
	struct timespec ts;
	uint64_t end;

	if (!p)
		return;
	if (p->record)
		p->hits[point_id(where)]++;
	if (p->fired || !p->where || strcmp(where, p->where) != 0 ||
	    (p->obj && p->obj != obj))
		return;
	if (p->skip) {
		p->skip--;
		return;
	}
	p->fired = 1;
	pthread_mutex_lock(&p->m);
	p->parked = 1;
	pthread_cond_broadcast(&p->c);
	if (p->hold_ms > 0) {
		end = stress_now_ns() + (uint64_t)p->hold_ms * 1000000u;
		ts.tv_sec = (time_t)(end / 1000000000u);
		ts.tv_nsec = (long)(end % 1000000000u);
		while (!p->released &&
		       pthread_cond_timedwait(&p->c, &p->m, &ts) == 0)
			;
	} else {
		while (!p->released)
			pthread_cond_wait(&p->c, &p->m);
	}
	pthread_mutex_unlock(&p->m);
}

/* Wait until the parker's thread is parked: 1, or 0 after `seconds`. */
static int parker_wait_parked(struct parker *p, double seconds)
{
	uint64_t end = stress_now_ns() + (uint64_t)(seconds * 1e9);
	struct timespec ts;
	int parked;

	ts.tv_sec = (time_t)(end / 1000000000u);
	ts.tv_nsec = (long)(end % 1000000000u);
	pthread_mutex_lock(&p->m);
	while (!p->parked && pthread_cond_timedwait(&p->c, &p->m, &ts) == 0)
		;
	parked = p->parked;
	pthread_mutex_unlock(&p->m);
	return parked;
}

static void parker_release(struct parker *p)
{
	pthread_mutex_lock(&p->m);
	p->released = 1;
	pthread_cond_broadcast(&p->c);
	pthread_mutex_unlock(&p->m);
}

/* ================================================================ helpers */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static double thread_cpu_seconds(void)
{
	struct rusage ru;

	CHECK(getrusage(RUSAGE_THREAD, &ru) == 0, "getrusage(RUSAGE_THREAD)");
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static const enum lfp_wait_obj blocking_objs[] = {
	LFP_WAIT_FD, LFP_WAIT_UNSPEC, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD
};
#define NBLOCKING (sizeof(blocking_objs) / sizeof(blocking_objs[0]))

/* Run one(obj) for each of blocking_objs, in order. */
static void each_blocking(void (*one)(enum lfp_wait_obj))
{
	size_t i;

	for (i = 0; i < NBLOCKING; i++)
		one(blocking_objs[i]);
}

static int has_fd(enum lfp_wait_obj o)
{
	return o == LFP_WAIT_FD || o == LFP_WAIT_UNSPEC;
}

/* Queue n completions whose contexts count on from *seq (starting at 1). */
static void cq_put(struct lfp_cq *cq, unsigned n, uintptr_t *seq)
{
	struct lfp_cq_entry e;
	ssize_t r;

	while (n--) {
		e.op_context = (void *)++*seq;
		r = lfp_cq_write(cq, &e, 1);
		CHECK(r == 1, "lfp_cq_write: %zd", r);
	}
}

static int fd_of(struct lfp_fid *fid)
{
	int fd = -1, ret = lfp_control(fid, LFP_GETWAIT, &fd);

	CHECK(ret == 0 && fd >= 0, "LFP_GETWAIT: %d", ret);
	return fd;
}

/* poll(2) one fd for POLLIN: 1 readable, 0 not within timeout_ms. */
static int poll_in(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	CHECK(n >= 0, "poll: %s", strerror(errno));
	return n;
}

/* ================================================================ calls */

/* One library call made by a thread of its own, parked where its parker
 * says; the result, wall time and the thread's CPU time are kept. */
enum call_kind {
	CALL_CQ_SREAD, CALL_CNTR_WAIT, CALL_CQ_WRITE, CALL_CNTR_INC,
	CALL_CQ_READ, CALL_EQ_READ, CALL_EQ_WRITE, CALL_EQ_WRITE_ERR,
	CALL_RING_ENQ, CALL_RING_DEQ, CALL_EQ_SREAD, CALL_WAIT, CALL_POLL_DEL,
	CALL_CQ_WRITE_ERR, CALL_RING_PEEK, CALL_TRYWAIT, CALL_EQ_READERR
};

struct call {
	struct parker park;
	enum call_kind kind;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	struct lfp_eq *eq;
	struct lfp_wait *ws;
	struct lfp_ring *ring;          /* value in and out, 8 bytes */
	struct lfp_poll *ps;            /* poll_del: of fid */
	struct lfp_fid *fid;
	size_t count, threshold;        /* sread */
	uint64_t value;                 /* cntr_wait threshold, inc, eq payload */
	uint32_t event;                 /* eq write / eq read result */
	int timeout;
	/* results */
	ssize_t ret;
	void *ctx;                      /* the first entry read (CQ) */
	double secs, cpu;
	_Atomic int done;
	pthread_t t;
};

static void call_init(struct call *c, enum call_kind kind, const char *where,
                      const void *obj)
{
	memset(c, 0, sizeof(*c));
	parker_init(&c->park, where, obj);
	c->kind = kind;
	c->timeout = -1;
}

static void *call_main(void *arg)
{
	struct call *c = (struct call *)arg;
	struct lfp_cq_entry buf[8];
	uint64_t t0, payload;
	double cpu0;
	size_t thr;

	self_parker = &c->park;
	memset(buf, 0, sizeof(buf));
	t0 = stress_now_ns();
	cpu0 = thread_cpu_seconds();
	switch (c->kind) {
	case CALL_CQ_SREAD:
		thr = c->threshold;
		c->ret = lfp_cq_sread(c->cq, buf, c->count, &thr, c->timeout);
		break;
	case CALL_CNTR_WAIT:
		c->ret = lfp_cntr_wait(c->cntr, c->value, c->timeout);
		break;
	case CALL_CQ_WRITE:
		buf[0].op_context = (void *)(uintptr_t)c->value;
		c->ret = lfp_cq_write(c->cq, buf, 1);
		break;
	case CALL_CNTR_INC:
		c->ret = lfp_cntr_inc(c->cntr, c->value);
		break;
	case CALL_TRYWAIT:
		c->ret = lfp_trywait(&c->fid, 1);
		break;
	case CALL_CQ_READ:
		c->ret = lfp_cq_read(c->cq, buf, 1);
		break;
	case CALL_EQ_READ:
		payload = 0;
		c->ret = lfp_eq_read(c->eq, &c->event, &payload, sizeof(payload), 0);
		c->value = payload;
		break;
	case CALL_EQ_READERR: {
		struct lfp_eq_err_entry e;

		memset(&e, 0, sizeof(e));
		c->ret = lfp_eq_readerr(c->eq, &e, 0);
		c->value = e.data;
		break;
	}
	case CALL_EQ_WRITE:
		payload = c->value;
		c->ret = lfp_eq_write(c->eq, c->event, &payload, sizeof(payload), 0);
		break;
	case CALL_EQ_WRITE_ERR: {
		struct lfp_eq_err_entry e;

		memset(&e, 0, sizeof(e));
		e.err = EIO;
		e.data = c->value;
		c->ret = lfp_eq_write_err(c->eq, &e);
		break;
	}
	case CALL_CQ_WRITE_ERR: {
		struct lfp_cq_err_entry e;

		memset(&e, 0, sizeof(e));
		e.err = EIO;
		e.data = c->value;
		c->ret = lfp_cq_writeerr(c->cq, &e);
		break;
	}
	case CALL_RING_ENQ: { /* a burst of count entries: value, value + 1, ... */
		uint64_t v[8];
		size_t i;

		for (i = 0; i < c->count && i < 8; i++)
			v[i] = c->value + i;
		c->ret = (ssize_t)lfp_ring_enqueue_burst(c->ring, v, sizeof(v[0]), i);
		break;
	}
	case CALL_RING_DEQ:
		c->ret = lfp_ring_dequeue(c->ring, &c->value, sizeof(c->value));
		break;
	case CALL_RING_PEEK: { /* the ticket in count */
		uint64_t ticket = 0;

		c->ret = lfp_ring_peek(c->ring, &c->value, sizeof(c->value),
		                       &ticket);
		c->count = (size_t)ticket;
		break;
	}
	case CALL_EQ_SREAD:
		payload = 0;
		c->ret = lfp_eq_sread(c->eq, &c->event, &payload, sizeof(payload),
		                      c->timeout, 0);
		c->value = payload;
		break;
	case CALL_WAIT:
		c->ret = lfp_wait(c->ws, c->timeout);
		break;
	case CALL_POLL_DEL:
		c->ret = lfp_poll_del(c->ps, c->fid, 0);
		break;
	}
	c->ctx = buf[0].op_context;
	c->cpu = thread_cpu_seconds() - cpu0;
	c->secs = stress_seconds_since(t0);
	self_parker = NULL;
	atomic_store(&c->done, 1);
	return NULL;
}

static void call_start(struct call *c)
{
	stress_spawn(&c->t, call_main, c);
}

/*
 * Start the call and wait (10 s at most) until it is parked at its point;
 * who (a printf format) names it in the failure: "<who> never reached
 * <point>".
 */
__attribute__((format(printf, 2, 3)))
static void call_start_parked(struct call *c, const char *who, ...)
{
	char name[160];
	va_list ap;

	call_start(c);
	va_start(ap, who);
	vsnprintf(name, sizeof(name), who, ap);
	va_end(ap);
	CHECK(parker_wait_parked(&c->park, 10), "%s never reached %s", name,
	      c->park.where);
}

/* Wait until *flag is set: 1, or 0 after `seconds`. */
static int call_wait_flag(_Atomic int *flag, double seconds)
{
	uint64_t t0 = stress_now_ns();

	while (!atomic_load(flag)) {
		if (stress_seconds_since(t0) > seconds)
			return 0;
		sleep_ms(1);
	}
	return 1;
}

/* Wait for the call to return: 1, or 0 after `seconds`. */
static int call_wait(struct call *c, double seconds)
{
	return call_wait_flag(&c->done, seconds);
}

static void call_join(struct call *c)
{
	stress_join(c->t);
	parker_fini(&c->park);
}

static int only_ok(const char *only, char t)
{
	return !only || !*only || strchr(only, t) != NULL;
}

/* ================================================================ A */

#define A_SLEEP_MS 3000 /* a waiter asleep this long with its work there: lost */

/* Work for waiters: n on the counter cn if there is one, else n entries on cq. */
static void add_work(struct lfp_cntr *cn, struct lfp_cq *cq, unsigned n,
                     uintptr_t *seq)
{
	if (cn)
		CHECK(lfp_cntr_inc(cn, n) == 0, "lfp_cntr_inc");
	else
		cq_put(cq, n, seq);
}

static void close_cntr_or_cq(struct lfp_cntr *cn, struct lfp_cq *cq)
{
	if (cn)
		CHECK(lfp_cntr_close(cn) == 0, "lfp_cntr_close");
	else
		CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

/* trywait + poll(2) on the object's fd vs a bystander with its own
 * condition that found it short of its threshold. */
static void a_poll(enum lfp_wait_obj obj, int counter)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = NULL;
	struct lfp_cntr *cn = NULL;
	struct lfp_fid *fid;
	struct call b;
	uintptr_t seq = 0;
	uint64_t t0;
	int ret, fd;

	if (counter) {
		cn = open_cntr(obj, NULL, NULL);
		fid = &cn->fid;
		call_init(&b, CALL_CNTR_WAIT, "signal.W3", &cn->own);
		b.cntr = cn;
		b.value = 100;
	} else {
		cq = open_cq(obj, NULL, 16, NULL);
		fid = &cq->fid;
		call_init(&b, CALL_CQ_SREAD, "signal.W3", &cq->own);
		b.cq = cq;
		b.count = b.threshold = 4;
	}
	b.timeout = 20000;
	fd = fd_of(fid);
	ret = lfp_trywait(&fid, 1);
	CHECK(ret == 0, "A: %s: trywait on an empty %s returned %d", on,
	      counter ? "counter" : "CQ", ret);
	add_work(cn, cq, 1, &seq);
	call_start_parked(&b, "A: %s: the bystander %s", on,
	                  counter ? "cntr_wait(100)" : "sread(threshold 4)");
	t0 = stress_now_ns();
	ret = poll_in(fd, A_SLEEP_MS);
	CHECK(ret == 1, "A: %s: trywait+poll waiter asleep %.1f s with %s "
	      "(bystander %s drained the eventfd)", on, stress_seconds_since(t0),
	      counter ? "the counter moved to 1" : "1 entry queued",
	      counter ? "cntr_wait threshold 100" : "sread threshold 4");
	parker_release(&b.park);
	add_work(cn, cq, counter ? 100 : 3, &seq);
	CHECK(call_wait(&b, 10), "A: %s: the bystander still blocked 10 s after "
	      "its condition held", on);
	call_join(&b);
	CHECK(b.ret == (counter ? 0 : 4), "A: %s: the bystander %s returned %zd "
	      "once its condition held", on, counter ? "cntr_wait" : "sread", b.ret);
	close_cntr_or_cq(cn, cq);
}

/* Two blocking waiters with different conditions, both parked at W3
 * around the write: the one whose condition holds must return. */
static void a_pair(enum lfp_wait_obj obj, int counter)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = NULL;
	struct lfp_cntr *cn = NULL;
	const void *sig;
	struct call a, b;
	uintptr_t seq = 0;

	if (counter) {
		cn = open_cntr(obj, NULL, NULL);
		sig = &cn->own;
		call_init(&a, CALL_CNTR_WAIT, "signal.W3", sig);
		call_init(&b, CALL_CNTR_WAIT, "signal.W3", sig);
		a.cntr = b.cntr = cn;
		a.value = 1;
		b.value = 100;
	} else {
		cq = open_cq(obj, NULL, 16, NULL);
		sig = &cq->own;
		call_init(&a, CALL_CQ_SREAD, "signal.W3", sig);
		call_init(&b, CALL_CQ_SREAD, "signal.W3", sig);
		a.cq = b.cq = cq;
		a.count = a.threshold = 1;
		b.count = b.threshold = 4;
	}
	/* Long timeouts: a lost wake shows as a waiter still asleep after
	 * A_SLEEP_MS (cntr_wait re-checks its value at the timeout and would
	 * return 0 however late). */
	a.timeout = 30000;
	b.timeout = 30000;
	call_start_parked(&a, "A: %s: the waiter", on);
	add_work(cn, cq, 1, &seq);
	call_start_parked(&b, "A: %s: the bystander", on);
	parker_release(&a.park);
	CHECK(call_wait(&a, A_SLEEP_MS / 1000.0), "A: %s: %s asleep %.1f s with "
	      "%s (bystander %s drained the eventfd)", on,
	      counter ? "cntr_wait(threshold 1)" : "sread(threshold 1)",
	      A_SLEEP_MS / 1000.0,
	      counter ? "the counter at 1" : "1 entry queued",
	      counter ? "cntr_wait threshold 100" : "sread threshold 4");
	CHECK(a.ret == (counter ? 0 : 1), "A: %s: the waiter returned %zd with "
	      "its condition met", on, a.ret);
	parker_release(&b.park);
	add_work(cn, cq, counter ? 100 : 4, &seq);
	CHECK(call_wait(&b, 10), "A: %s: the bystander still blocked 10 s after "
	      "its condition held", on);
	CHECK(b.ret == (counter ? 0 : 4), "A: %s: the bystander returned %zd once "
	      "its condition held", on, b.ret);
	call_join(&a);
	call_join(&b);
	close_cntr_or_cq(cn, cq);
}

static void test_a(void)
{
	size_t i;
	int counter;

	for (i = 0; i < NBLOCKING; i++) {
		for (counter = 0; counter < 2; counter++) {
			if (has_fd(blocking_objs[i]))
				a_poll(blocking_objs[i], counter);
			a_pair(blocking_objs[i], counter);
		}
	}
	printf("  A: ok: no waiter asleep with its work pending (trywait+poll on "
	       "FD/UNSPEC, sread/cntr_wait pairs on FD/UNSPEC/MUTEX_COND/YIELD)\n");
}

/* ================================================================ B */

static void b_member(int counter)
{
	const char *what = counter ? "counter" : "CQ";
	struct lfp_poll *ps = NULL;
	struct lfp_cq *cq = NULL;
	struct lfp_cntr *cn = NULL;
	struct lfp_cq_entry e;
	struct lfp_fid *fid;
	struct call p;
	uintptr_t seq = 100;
	void *ctx[4];
	uint64_t t0;
	int n, ret;

	CHECK(lfp_poll_open(NULL, &ps) == 0, "lfp_poll_open");
	if (counter) {
		cn = open_cntr(LFP_WAIT_NONE, NULL, (void *)"counter");
		fid = &cn->fid;
		call_init(&p, CALL_CNTR_INC, "poll.link.pushed", &cn->link);
		p.cntr = cn;
		p.value = 1;
	} else {
		cq = open_cq(LFP_WAIT_NONE, NULL, 16, (void *)"CQ");
		fid = &cq->fid;
		call_init(&p, CALL_CQ_WRITE, "poll.link.pushed", &cq->link);
		p.cq = cq;
		p.value = 1;
	}
	ret = lfp_poll_add(ps, fid, 0);
	CHECK(ret == 0, "lfp_poll_add: %d", ret);
	n = lfp_poll(ps, ctx, 4);
	CHECK(n == 0, "B: %s: lfp_poll reported an empty member (%d)", what, n);
	call_start_parked(&p, "B: %s: the producer", what);
	n = lfp_poll(ps, ctx, 4);
	CHECK(n == 1 && ctx[0] == fid->context, "B: %s: lfp_poll did not report "
	      "the member its producer pushed (%d)", what, n);
	if (!counter)
		CHECK(lfp_cq_read(cq, &e, 1) == 1, "B: CQ: the entry is not there");
	n = lfp_poll(ps, ctx, 4);
	CHECK(n == 0, "B: %s: lfp_poll reported a drained member (%d)", what, n);
	parker_release(&p.park);
	CHECK(call_wait(&p, 10), "B: %s: the producer hung after its push", what);
	call_join(&p);
	CHECK(p.ret == (counter ? 0 : 1), "B: %s: the producer's call returned %zd",
	      what, p.ret);
	/* New work: the member must be reported again. */
	add_work(cn, cq, 1, &seq);
	t0 = stress_now_ns();
	do {
		n = lfp_poll(ps, ctx, 4);
		if (n)
			break;
		sleep_ms(1);
	} while (stress_seconds_since(t0) < 1.0);
	CHECK(n == 1 && ctx[0] == fid->context, "B: %s: member lost: lfp_poll "
	      "reported nothing for %.1f s while the %s %s (it dropped the link "
	      "while its producer was between push and TRACKED)", what,
	      stress_seconds_since(t0), what,
	      counter ? "moved" : "holds 1 entry");
	ret = lfp_poll_del(ps, fid, 0);
	CHECK(ret == 0, "lfp_poll_del: %d", ret);
	CHECK(lfp_poll_close(ps) == 0, "lfp_poll_close");
	close_cntr_or_cq(cn, cq);
}

static void test_b(void)
{
	b_member(0);
	b_member(1);
	printf("  B: ok: a member whose link was taken while its producer was "
	       "between push and TRACKED is reported again (CQ, counter)\n");
}

/* ================================================================ D1 */

/* lfp_poll on a set in a thread of its own, until it reports something or
 * a second has passed: a poll that loops for good cannot hang the test. */
struct d1_poller {
	struct lfp_poll *ps;
	void *ctx[4];
	int n;
	_Atomic int done;
};

static void *d1_poll_main(void *arg)
{
	struct d1_poller *p = (struct d1_poller *)arg;
	uint64_t t0 = stress_now_ns();

	do {
		p->n = lfp_poll(p->ps, p->ctx, 4);
		if (p->n)
			break;
		sleep_ms(1);
	} while (stress_seconds_since(t0) < 1.0);
	atomic_store(&p->done, 1);
	return NULL;
}

/*
 * A CQ moved from one poll set to another while its lfp_poll_del is still
 * running: parked after D1, the add to the second set is -EBUSY (the CQ is
 * still leaving the first), and once the del has returned the add works
 * and lfp_poll reports the CQ's work.  (D1 cleared the link's set at once:
 * the add succeeded, and the del's end then untracked the link in the new
 * set: with the CQ idle in the old set, its next push linked it twice and
 * lfp_poll looped for good; with the CQ tracked there, the new set never
 * reported it.)  tracked: the CQ holds an entry and the first set tracks
 * it when the del starts.
 */
static void d1_move(int tracked)
{
	const char *how = tracked ? "tracked" : "idle";
	struct lfp_poll *ps1, *ps2;
	struct lfp_cq *cq = open_cq(LFP_WAIT_NONE, NULL, 16, (void *)"CQ");
	struct d1_poller p;
	struct lfp_cq_entry e;
	struct call del;
	uintptr_t seq = 1;
	void *ctx[4];
	pthread_t t;
	int ret;

	CHECK(lfp_poll_open(NULL, &ps1) == 0 && lfp_poll_open(NULL, &ps2) == 0,
	      "lfp_poll_open");
	if (tracked)
		cq_put(cq, 1, &seq);
	CHECK(lfp_poll_add(ps1, &cq->fid, 0) == 0, "lfp_poll_add");
	CHECK(lfp_poll(ps1, ctx, 4) == tracked, "D1: %s: the first set", how);
	call_init(&del, CALL_POLL_DEL, "poll.D1", &cq->link);
	del.ps = ps1;
	del.fid = &cq->fid;
	call_start_parked(&del, "D1: %s: lfp_poll_del", how);
	ret = lfp_poll_add(ps2, &cq->fid, 0);
	CHECK(ret == -EBUSY || LFP__BROKEN("D1"), "D1: %s: lfp_poll_add to "
	      "another set while the del was running returned %d, not -EBUSY",
	      how, ret);
	parker_release(&del.park);
	CHECK(call_wait(&del, 10), "D1: %s: lfp_poll_del hung", how);
	call_join(&del);
	CHECK(del.ret == 0, "D1: %s: lfp_poll_del returned %zd", how, del.ret);
	if (ret == -EBUSY)
		ret = lfp_poll_add(ps2, &cq->fid, 0);
	CHECK(ret == 0, "D1: %s: lfp_poll_add after the del returned %d", how, ret);
	if (!tracked)
		cq_put(cq, 1, &seq);
	memset(&p, 0, sizeof(p));
	p.ps = ps2;
	stress_spawn(&t, d1_poll_main, &p);
	CHECK(call_wait_flag(&p.done, 5), "D1: %s: lfp_poll on the new set "
	      "hung (the link is linked twice)", how);
	stress_join(t);
	CHECK(p.n == 1 && p.ctx[0] == (void *)"CQ", "D1: %s: lfp_poll on the new "
	      "set reported %d members for 1 s while the CQ held an entry", how,
	      p.n);
	CHECK(lfp_poll(ps1, ctx, 4) == 0, "D1: %s: the old set still reports "
	      "the CQ", how);
	CHECK(lfp_cq_read(cq, &e, 1) == 1, "D1: %s: the entry", how);
	CHECK(lfp_poll_del(ps2, &cq->fid, 0) == 0, "lfp_poll_del");
	CHECK(lfp_poll_close(ps1) == 0 && lfp_poll_close(ps2) == 0,
	      "lfp_poll_close");
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_d1(void)
{
	d1_move(0);
	d1_move(1);
	printf("  D1: ok: a member added to another set while its del runs is "
	       "refused until the del returns, then reported there\n");
}

/* ================================================================ C */

#define C_TIMEOUT_MS 300
#define C_HOLD_S     1.5  /* the producer stays parked this long at most */
#define C_MAX_S      1.2  /* sread(300 ms) must be back by then */
#define C_MAX_CPU    0.30 /* of its wall time, while blocked */

static void c_one(enum lfp_wait_obj obj)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = open_cq(obj, NULL, 16, NULL);
	struct lfp_cq_entry e;
	struct call p, r;
	double share;

	call_init(&p, CALL_CQ_WRITE, "ring.prod.claimed", &cq->entries);
	p.cq = cq;
	p.value = 7;
	call_start_parked(&p, "C: %s: the producer", on);
	call_init(&r, CALL_CQ_SREAD, NULL, NULL);
	r.cq = cq;
	r.count = r.threshold = 1;
	r.timeout = C_TIMEOUT_MS;
	call_start(&r);
	(void)call_wait(&r, C_HOLD_S);
	parker_release(&p.park);
	CHECK(call_wait(&r, 10), "C: %s: sread(%d ms) still blocked 10 s after "
	      "the producer published", on, C_TIMEOUT_MS);
	call_join(&p);
	call_join(&r);
	share = r.secs > 0 ? r.cpu / r.secs : 0;
	CHECK(r.secs < C_MAX_S && r.ret == -EAGAIN, "C: %s: sread(%d ms) returned "
	      "%zd after %.2f s while a producer was parked between claim and "
	      "publish (timeout not kept; %.0f%% CPU)", on, C_TIMEOUT_MS, r.ret,
	      r.secs, share * 100);
	if (obj != LFP_WAIT_YIELD)
		CHECK(share < C_MAX_CPU, "C: %s: sread(%d ms) used %.0f%% CPU "
		      "(%.3f of %.3f s) blocked while a producer was parked "
		      "between claim and publish (it spun instead of sleeping)",
		      on, C_TIMEOUT_MS, share * 100, r.cpu, r.secs);
	CHECK(p.ret == 1, "C: %s: the producer's write returned %zd", on, p.ret);
	CHECK(lfp_cq_read(cq, &e, 1) == 1 && e.op_context == (void *)7,
	      "C: %s: the parked producer's entry is not there", on);
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_c(void)
{
	each_blocking(c_one);
	printf("  C: ok: sread(%d ms) keeps its timeout, asleep, while a producer "
	       "is parked between claim and publish (FD, UNSPEC, MUTEX_COND, "
	       "YIELD)\n", C_TIMEOUT_MS);
}

/* ================================================================ E */

#define E_WAIT_S 2.0

static void e_one(enum lfp_wait_obj obj)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = open_cq(obj, NULL, 16, NULL);
	struct lfp_cq_entry buf[4];
	uintptr_t seq = 0;
	struct call t;
	uint64_t t0;
	ssize_t r;
	double s;

	/* 1. A signal with nobody waiting, then a completion: the completion
	 * comes first, the signal after it. */
	CHECK(lfp_cq_signal(cq) == 0, "lfp_cq_signal");
	cq_put(cq, 1, &seq);
	r = lfp_cq_sread(cq, buf, 4, NULL, 5000);
	CHECK(r == 1 && buf[0].op_context == (void *)1, "E: %s: sread after "
	      "signal + 1 completion returned %zd, not the completion first", on, r);
	call_init(&t, CALL_CQ_SREAD, NULL, NULL);
	t.cq = cq;
	t.count = t.threshold = 1;
	t.timeout = 20000;
	call_start(&t);
	CHECK(call_wait(&t, E_WAIT_S), "E: %s: signal forgotten: sread still "
	      "blocked %.1f s after an lfp_cq_signal that came while nobody "
	      "waited (it must return -EAGAIN at once)", on, E_WAIT_S);
	call_join(&t);
	CHECK(t.ret == -EAGAIN, "E: %s: sread after a remembered signal returned "
	      "%zd, not -EAGAIN", on, t.ret);
	/* 2. Remembered once: the next sread waits out its timeout. */
	t0 = stress_now_ns();
	r = lfp_cq_sread(cq, buf, 1, NULL, 200);
	s = stress_seconds_since(t0);
	CHECK(r == -EAGAIN && s >= 0.15, "E: %s: one signal ended two sreads "
	      "(the second returned %zd after %.3f s of its 200 ms)", on, r, s);
	/* 3. A signal while sread is parked just before it sleeps. */
	call_init(&t, CALL_CQ_SREAD, "signal.W3", &cq->own);
	t.cq = cq;
	t.count = t.threshold = 1;
	t.timeout = 20000;
	call_start_parked(&t, "E: %s: sread", on);
	CHECK(lfp_cq_signal(cq) == 0, "lfp_cq_signal");
	parker_release(&t.park);
	CHECK(call_wait(&t, E_WAIT_S), "E: %s: signal lost: sread still blocked "
	      "%.1f s after an lfp_cq_signal that came while it was at "
	      "signal.W3", on, E_WAIT_S);
	call_join(&t);
	CHECK(t.ret == -EAGAIN, "E: %s: a signalled sread returned %zd", on, t.ret);
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_e(void)
{
	each_blocking(e_one);
	printf("  E: ok: a signal before sread is remembered once, after the "
	       "queued completions; one at signal.W3 ends the sread (FD, UNSPEC, "
	       "MUTEX_COND, YIELD)\n");
}

/* ================================================================ F */

static void f_cq(void)
{
	struct lfp_cq *cq = open_cq(LFP_WAIT_NONE, NULL, 16, NULL);
	struct lfp_cq_err_entry err;
	struct lfp_cq_entry e;
	uintptr_t seq = 0;
	struct call r;
	ssize_t n;

	cq_put(cq, 1, &seq);                       /* event 1 */
	call_init(&r, CALL_CQ_READ, "ring.cons.acquired", &cq->entries);
	r.cq = cq;
	call_start_parked(&r, "F: CQ: the reader");
	n = lfp_cq_read(cq, &e, 1);                /* another reader takes it */
	CHECK(n == 1 && e.op_context == (void *)1, "F: CQ: read of event 1: %zd", n);
	memset(&err, 0, sizeof(err));
	err.err = EIO;
	err.op_context = (void *)1000;
	n = lfp_cq_writeerr(cq, &err);             /* error 2, then event 2 */
	CHECK(n == (ssize_t)sizeof(err), "lfp_cq_writeerr: %zd", n);
	cq_put(cq, 1, &seq);
	parker_release(&r.park);
	CHECK(call_wait(&r, 10), "F: CQ: the parked reader hung");
	call_join(&r);
	CHECK(r.ret == -LFP_EAVAIL, "F: CQ: a read returned %zd (event %p) while "
	      "an error queued before that event was pending (errors must come "
	      "first: the reader checked the error queue before taking the "
	      "event)", r.ret, r.ret > 0 ? r.ctx : NULL);
	n = lfp_cq_read(cq, &e, 1);
	CHECK(n == -LFP_EAVAIL, "F: CQ: read with an error queued returned %zd", n);
	memset(&err, 0, sizeof(err));
	n = lfp_cq_readerr(cq, &err, 0);
	CHECK(n == 1 && err.err == EIO &&
	      err.op_context == (void *)1000, "F: CQ: readerr: %zd", n);
	n = lfp_cq_read(cq, &e, 1);
	CHECK(n == 1 && e.op_context == (void *)2, "F: CQ: event 2 after the "
	      "error: %zd", n);
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void f_eq(void)
{
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, 16, 0, 0, NULL);
	struct lfp_eq_err_entry err;
	uint64_t v;
	uint32_t ev;
	struct call r;
	ssize_t n;

	v = 1;
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v), "lfp_eq_write: %zd", n);
	call_init(&r, CALL_EQ_READ, "ring.cons.acquired", &eq->events);
	r.eq = eq;
	call_start_parked(&r, "F: EQ: the reader");
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 1, "F: EQ: read of event 1: %zd", n);
	memset(&err, 0, sizeof(err));
	err.err = EIO;
	err.data = 2;
	n = lfp_eq_write_err(eq, &err);
	CHECK(n == (ssize_t)sizeof(err), "lfp_eq_write_err: %zd", n);
	v = 2;
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v), "lfp_eq_write: %zd", n);
	parker_release(&r.park);
	CHECK(call_wait(&r, 10), "F: EQ: the parked reader hung");
	call_join(&r);
	CHECK(r.ret == -LFP_EAVAIL, "F: EQ: a read returned %zd (event %llu) while "
	      "an error queued before that event was pending (errors must come "
	      "first: the reader checked the error queue before taking the "
	      "event)", r.ret, (unsigned long long)r.value);
	memset(&err, 0, sizeof(err));
	n = lfp_eq_readerr(eq, &err, 0);
	CHECK(n == (ssize_t)sizeof(err) && err.err == EIO && err.data == 2,
	      "F: EQ: readerr: %zd", n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 2, "F: EQ: event 2 after the "
	      "error: %zd", n);
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
}

static void test_f(void)
{
	f_cq();
	f_eq();
	printf("  F: ok: a reader parked on an event does not return a later one "
	       "ahead of an error queued before it (CQ, EQ)\n");
}

/* ================================================================ G */

#define G_SIZE 4

/* G2 and G3 work on one queue of an EQ: its events (errors 0) or its
 * errors.  An entry's value travels in the payload or in err.data. */
static const char *g_queue_name(int errors)
{
	return errors ? "error" : "event";
}

static ssize_t g_entry_size(int errors)
{
	return errors ? (ssize_t)sizeof(struct lfp_eq_err_entry) :
	                (ssize_t)sizeof(uint64_t);
}

/* Write the entry of value v; what ("G2") prefixes a failure. */
static void g_write(struct lfp_eq *eq, int errors, uint64_t v, const char *what)
{
	struct lfp_eq_err_entry err;
	ssize_t n;

	memset(&err, 0, sizeof(err));
	err.err = EIO;
	err.data = v;
	n = errors ? lfp_eq_write_err(eq, &err) :
	             lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == g_entry_size(errors), "%s: write %s %llu: %zd", what,
	      g_queue_name(errors), (unsigned long long)v, n);
}

/* Read the next entry, which must have value want. */
static void g_read(struct lfp_eq *eq, int errors, uint64_t want, const char *what)
{
	struct lfp_eq_err_entry err;
	uint32_t ev;
	ssize_t n;

	memset(&err, 0, sizeof(err));
	n = errors ? lfp_eq_readerr(eq, &err, 0) :
	             lfp_eq_read(eq, &ev, &err.data, sizeof(err.data), 0);
	CHECK(n > 0 && err.data == want, "%s: read %s: %zd (%llu, expected %llu)",
	      what, g_queue_name(errors), n, (unsigned long long)err.data,
	      (unsigned long long)want);
}

/* Entries 0 to G_SIZE - 1 written, and reader r parked after taking
 * entry 0 (ring.cons.claimed), so that it holds entry 0's slot. */
static void g_fill_behind_parked_reader(struct lfp_eq *eq, int errors,
                                        struct call *r, const char *what)
{
	uint64_t v;

	for (v = 0; v < G_SIZE; v++) {
		if (v == 1) {
			call_init(r, errors ? CALL_EQ_READERR : CALL_EQ_READ,
			          "ring.cons.claimed",
			          errors ? &eq->errq.ring : &eq->events);
			r->eq = eq;
			call_start_parked(r, "%s: the reader of %s 0", what,
			                  g_queue_name(errors));
		}
		g_write(eq, errors, v, what);
	}
}

/* Release reader r, which must return entry 0. */
static void g_release_reader(struct call *r, int errors, const char *what)
{
	parker_release(&r->park);
	CHECK(call_wait(r, 10), "%s: the parked reader hung", what);
	call_join(r);
	CHECK(r->ret > 0 && r->value == 0, "%s: the parked reader of %s 0 got "
	      "%zd (%llu)", what, g_queue_name(errors), r->ret,
	      (unsigned long long)r->value);
}

/* A write of G_SIZE (call w, not started) into the queue, parked at
 * point if not NULL. */
static void g_writer(struct call *w, struct lfp_eq *eq, int errors,
                     const char *point)
{
	call_init(w, errors ? CALL_EQ_WRITE_ERR : CALL_EQ_WRITE, point,
	          point ? (errors ? &eq->errq.ring : &eq->events) : NULL);
	w->eq = eq;
	w->event = LFP_EVENT_USER;
	w->value = G_SIZE;
}

/* The queue is read out; the EQ is drained, not overrun. */
static void g_drained(struct lfp_eq *eq, const char *what)
{
	uint32_t ev;
	uint64_t v;
	ssize_t n;

	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == -EAGAIN, "%s: the EQ is drained, not overrun: read %zd", what, n);
	CHECK(lfp_eq_close(eq) == 0, "%s: close", what);
}

/*
 * G2 and G4's setup: reader r parked holding entry 0's slot with the queue
 * filled behind it, the events after it read by this thread (errors are
 * read under a lock, so they stay), and a write of G_SIZE started as call
 * w: the slot it needs is entry 0's, still held.
 */
static void g_write_at_held_slot(struct lfp_eq *eq, int errors, struct call *r,
                                 struct call *w, const char *what)
{
	uint64_t v;

	g_fill_behind_parked_reader(eq, errors, r, what);
	for (v = 1; v < G_SIZE && !errors; v++)
		g_read(eq, errors, v, what);
	g_writer(w, eq, errors, NULL);
	call_start(w);
}

/*
 * G2, one queue of an EQ of G_SIZE (events, or errors): a reader parked
 * after taking the head entry (ring.cons.claimed) holds its slot while the
 * queue is filled behind it.  Events are also read by another reader, so
 * that the queue holds none when a writer reaches the held slot; errors
 * are read under a lock, so the queue holds G_SIZE - 1.  Either way the
 * write must wait for the slot, not overrun the EQ.
 */
static void g2_queue(int errors)
{
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, G_SIZE, 0, 0, NULL);
	struct call r, w;
	uint64_t v;

	g_write_at_held_slot(eq, errors, &r, &w, "G2");
	CHECK(!call_wait(&w, 0.1), "G2: with %d %ss queued (EQ size %d) and a "
	      "reader still copying one out, a write returned %zd%s",
	      errors ? G_SIZE - 1 : 0, g_queue_name(errors), G_SIZE, w.ret,
	      w.ret == -LFP_EOVERRUN ? ": the EQ overran, for good, with room "
	      "for all its size but one" : "");
	g_release_reader(&r, errors, "G2");
	CHECK(call_wait(&w, 10), "G2: the write waiting for the held slot hung "
	      "after the reader freed it");
	call_join(&w);
	CHECK(w.ret == g_entry_size(errors),
	      "G2: the write that waited for the held slot returned %zd", w.ret);
	for (v = errors ? 1 : G_SIZE; v <= G_SIZE; v++)
		g_read(eq, errors, v, "G2");
	g_drained(eq, "G2");
}

/*
 * G3, one queue of an EQ of G_SIZE (events, or errors): a writer whose
 * claim failed on a slot a parked reader holds is parked in turn between
 * its two reads of the indexes (ring.slot_held); meanwhile the reader
 * finishes, two entries are read and two written, so the queue holds
 * G_SIZE - 1 and head is a lap ahead of the tail of the writer's first
 * look.  Released, the writer must take the free slot, not call the queue
 * full and overrun the EQ.
 */
static void g3_queue(int errors)
{
	static const uint64_t want[G_SIZE] = { 3, G_SIZE + 1, G_SIZE + 2, G_SIZE };
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, G_SIZE, 0, 0, NULL);
	struct call r, w;
	uint64_t v;
	int i;

	g_fill_behind_parked_reader(eq, errors, &r, "G3");
	/* Entry 0's slot is the next position's: the writer's claim fails and
	 * it looks at the indexes. */
	g_writer(&w, eq, errors, "ring.slot_held");
	call_start_parked(&w, "G3: the writer of %s %d", g_queue_name(errors),
	                  G_SIZE);
	g_release_reader(&r, errors, "G3");
	for (v = 1; v < 3; v++)
		g_read(eq, errors, v, "G3");
	for (v = G_SIZE + 1; v < G_SIZE + 3; v++)
		g_write(eq, errors, v, "G3");
	/* G_SIZE - 1 queued, the head a lap past the tail the writer may
	 * have seen. */
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "G3: the parked writer hung");
	call_join(&w);
	CHECK(w.ret == g_entry_size(errors), "G3: with %d %ss queued (EQ size "
	      "%d), a write stalled in its look at the indexes while the queue "
	      "moved on returned %zd%s", G_SIZE - 1, g_queue_name(errors), G_SIZE,
	      w.ret, w.ret == -LFP_EOVERRUN ? ": the EQ overran, for good, not "
	      "full" : "");
	for (i = 0; i < G_SIZE; i++)
		g_read(eq, errors, want[i], "G3");
	g_drained(eq, "G3");
}

static void test_g3(void)
{
	g3_queue(0);
	g3_queue(1);
	printf("  G3: ok: a write stalled in its look at the indexes while the "
	       "queue moved a lap on takes a free slot; the EQ does not overrun "
	       "(events and errors)\n");
}

/*
 * G4, as G2 on an EQ opened with LFP_EQ_BACKPRESSURE: there the answer to
 * a held slot is -EAGAIN at once, as for a full EQ, which loses nothing;
 * the write does not wait for the reader's copy (waiting, the writer's
 * look at the readers' index on every try slowed them down: docs/
 * design.md 6.2).  Once the reader is done, the write goes in.
 */
static void g4_queue(int errors)
{
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, G_SIZE, LFP_EQ_BACKPRESSURE,
	                            0, NULL);
	struct call r, w;
	uint64_t v;

	g_write_at_held_slot(eq, errors, &r, &w, "G4");
	CHECK(call_wait(&w, 2), "G4: with %d %ss queued (EQ size %d, "
	      "LFP_EQ_BACKPRESSURE) and a reader still copying one out, a "
	      "write waited 2 s for the reader instead of returning -EAGAIN",
	      errors ? G_SIZE - 1 : 0, g_queue_name(errors), G_SIZE);
	call_join(&w);
	CHECK(w.ret == -EAGAIN, "G4: the write to a slot a reader holds "
	      "returned %zd, not -EAGAIN", w.ret);
	g_release_reader(&r, errors, "G4");
	g_write(eq, errors, G_SIZE, "G4");
	for (v = errors ? 1 : G_SIZE; v <= G_SIZE; v++)
		g_read(eq, errors, v, "G4");
	g_drained(eq, "G4");
}

static void test_g2(void)
{
	g2_queue(0);
	g2_queue(1);
	printf("  G2: ok: a write that reaches a slot a reader still copies out "
	       "waits for it; the EQ does not overrun with room left (events "
	       "and errors)\n");
	g4_queue(0);
	g4_queue(1);
	printf("  G4: ok: with LFP_EQ_BACKPRESSURE it returns -EAGAIN at once, "
	       "and goes in once the reader is done (events and errors)\n");
}

static void test_g(void)
{
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, G_SIZE, 0, 0, NULL);
	struct lfp_eq_err_entry err;
	uint64_t v, next = 0, w1_read = 0, t0;
	uint32_t ev;
	struct call w1;
	ssize_t n;
	int eavail = 0;

	for (v = 0; v < G_SIZE - 1; v++) {
		n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
		CHECK(n == (ssize_t)sizeof(v), "lfp_eq_write %llu: %zd",
		      (unsigned long long)v, n);
	}
	/* W1 passes the overrun check and claims the last slot. */
	call_init(&w1, CALL_EQ_WRITE, "eq.write.claimed", eq);
	w1.eq = eq;
	w1.event = LFP_EVENT_USER;
	w1.value = G_SIZE - 1;
	call_start_parked(&w1, "G: the writer");
	v = 99;
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == -LFP_EOVERRUN, "G: the write to a full EQ returned %zd, not "
	      "-LFP_EOVERRUN", n);
	/* Drain while W1 is parked, for 50 ms or until -LFP_EAVAIL. */
	t0 = stress_now_ns();
	while (!eavail && stress_seconds_since(t0) < 0.05) {
		n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
		if (n == (ssize_t)sizeof(v)) {
			CHECK(v == next, "G: event %llu read, %llu expected",
			      (unsigned long long)v, (unsigned long long)next);
			next++;
		} else if (n == -LFP_EAVAIL) {
			eavail = 1;
		} else {
			CHECK(n == -EAGAIN, "G: read: %zd", n);
			sleep_ms(1);
		}
	}
	CHECK(next == G_SIZE - 1, "G: %llu of the %d events written before the "
	      "overrun read", (unsigned long long)next, G_SIZE - 1);
	if (eavail) {
		memset(&err, 0, sizeof(err));
		n = lfp_eq_readerr(eq, &err, 0);
		CHECK(n == (ssize_t)sizeof(err) && err.err == LFP_EOVERRUN,
		      "G: readerr after -LFP_EAVAIL: %zd, err %d", n, err.err);
	}
	parker_release(&w1.park);
	CHECK(call_wait(&w1, 10), "G: the parked writer hung");
	call_join(&w1);
	CHECK(w1.ret == (ssize_t)sizeof(v) || w1.ret == -LFP_EOVERRUN,
	      "G: the parked writer's lfp_eq_write returned %zd", w1.ret);
	/* Read on until -LFP_EAVAIL: nothing may come after it. */
	t0 = stress_now_ns();
	for (;;) {
		n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
		if (n == (ssize_t)sizeof(v)) {
			CHECK(!eavail, "G: overrun not final: event %llu read after "
			      "-LFP_EAVAIL reported the drained overrun (its writer, "
			      "parked after its claim, published it; its write "
			      "returned %zd)", (unsigned long long)v, w1.ret);
			CHECK(v == G_SIZE - 1, "G: event %llu read, %d expected",
			      (unsigned long long)v, G_SIZE - 1);
			w1_read++;
			continue;
		}
		if (n == -LFP_EAVAIL) {
			if (eavail)
				break;
			eavail = 1;
			continue;
		}
		CHECK(n == -EAGAIN, "G: read: %zd", n);
		CHECK(stress_seconds_since(t0) < 5, "G: the overrun EQ never read "
		      "as drained (-LFP_EAVAIL) after its writers returned");
		sleep_ms(1);
	}
	CHECK(w1.ret == -LFP_EOVERRUN ? w1_read == 0 : w1_read == 1,
	      "G: the parked writer returned %zd and its event was read %llu "
	      "times", w1.ret, (unsigned long long)w1_read);
	memset(&err, 0, sizeof(err));
	n = lfp_eq_readerr(eq, &err, 0);
	CHECK(n == (ssize_t)sizeof(err) && err.err == LFP_EOVERRUN,
	      "G: readerr at the end: %zd, err %d", n, err.err);
	v = 5;
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == -LFP_EOVERRUN, "G: a write after the overrun returned %zd", n);
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
	printf("  G: ok: a writer parked after its claim publishes nothing after "
	       "the drained overrun was reported (its write returned %s)\n",
	       w1.ret == -LFP_EOVERRUN ? "-LFP_EOVERRUN" : "its length");
}

/*
 * G5: a write in flight when the EQ overruns still wakes.  Its claim leaves
 * the ring's last place unpublished, so after the overrun a read finds the
 * EQ empty (-EAGAIN) and a sleeper goes to sleep on it (lfp_trywait may
 * return 0 too): the overrun's own wake-up came before.  When that write
 * finds the flag set and leaves its void entry, it must wake the wait
 * object, or the sleeper sleeps on an EQ whose reads all say -LFP_EAVAIL.
 */
static void g5_one(enum lfp_wait_obj obj)
{
	struct lfp_eq *eq = open_eq(obj, 2, 0, 0, NULL);
	struct lfp_fid *fid = &eq->fid;
	struct call w1, sl;
	uint64_t v = 0;
	uint32_t ev;
	ssize_t n;
	int fd = -1, tw;

	CHECK(lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0) ==
	      (ssize_t)sizeof(v), "G5: the first write");
	/* W1 claims the last place and parks before its overrun re-check. */
	call_init(&w1, CALL_EQ_WRITE, "eq.write.claimed", eq);
	w1.eq = eq;
	w1.event = LFP_EVENT_USER;
	w1.value = 1;
	call_start_parked(&w1, "G5: the writer (%s)", obj_name(obj));
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == -LFP_EOVERRUN, "G5: the write to a full EQ (%s) returned %zd",
	      obj_name(obj), n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 0, "G5: the queued event (%s): %zd",
	      obj_name(obj), n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == -EAGAIN, "G5: a read with a write in flight (%s) returned "
	      "%zd, not -EAGAIN", obj_name(obj), n);
	/* A sleeper in sread, asleep before W1 goes on. */
	call_init(&sl, CALL_EQ_SREAD, NULL, NULL);
	sl.eq = eq;
	sl.timeout = -1;
	call_start(&sl);
	sleep_ms(100);
	CHECK(!atomic_load(&sl.done), "G5: lfp_eq_sread (%s) returned %zd with "
	      "the write still in flight", obj_name(obj), sl.ret);
	tw = -1;
	if (obj == LFP_WAIT_FD) {
		CHECK(lfp_control(fid, LFP_GETWAIT, &fd) == 0, "G5: LFP_GETWAIT");
		tw = lfp_trywait(&fid, 1);
		CHECK(tw == 0 || tw == -EAGAIN, "G5: lfp_trywait: %d", tw);
	}
	parker_release(&w1.park);
	CHECK(call_wait(&w1, 10), "G5: the parked writer hung");
	call_join(&w1);
	CHECK(w1.ret == -LFP_EOVERRUN, "G5: the writer that found the EQ overrun "
	      "after its claim returned %zd", w1.ret);
	CHECK(call_wait(&sl, 5), "G5: the sleeper in lfp_eq_sread (%s) was not "
	      "woken when the write in flight at the overrun returned",
	      obj_name(obj));
	call_join(&sl);
	CHECK(sl.ret == -LFP_EAVAIL, "G5: the woken sread (%s) returned %zd",
	      obj_name(obj), sl.ret);
	if (tw == 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		CHECK(poll(&p, 1, 5000) == 1, "G5: lfp_trywait let the caller "
		      "sleep on the overrun EQ's fd, and the write in flight did "
		      "not wake it when it returned");
	}
	if (obj == LFP_WAIT_FD)
		CHECK(lfp_trywait(&fid, 1) == -EAGAIN, "G5: lfp_trywait on the "
		      "drained overrun EQ");
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
}

static void test_g5(void)
{
	g5_one(LFP_WAIT_FD);
	g5_one(LFP_WAIT_MUTEX_COND);
	printf("  G5: ok: a write in flight at the overrun wakes the sleepers "
	       "that its unpublished place let sleep (fd and condition "
	       "variable)\n");
}

/* ================================================================ W */

#define W_ROUNDS  12
#define W_HOLD_MS 20
#define W_SLEEP_MS 3000 /* a waiter asleep this long with work queued: lost */

struct walk {
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	struct lfp_cq *cqs;             /* in ws and ps */
	struct lfp_cq *cqf;             /* own FD, in ps */
	struct lfp_cntr *cnt;           /* in ws and ps */
	struct lfp_eq *eq;              /* own FD */
	int pipefd[2];                  /* churned in and out of ws */
	struct parker prod, wait;
	int ticker;                     /* the waiter's poll(2) ticks (2 ms) */
	char label[128];                /* which thread parks where */
	/* the waiter's progress, for the watchdog's report */
	_Atomic unsigned long cqs_next, cqf_next, eq_next, cnt_val;
	_Atomic unsigned cqs_err, eq_err;
};

static void *walk_producer(void *arg)
{
	struct walk *w = (struct walk *)arg;
	struct lfp_cq_err_entry ce;
	struct lfp_eq_err_entry ee;
	struct lfp_cq_entry e;
	uint64_t v;
	ssize_t n;
	int r;

	self_parker = &w->prod;
	for (r = 0; r < W_ROUNDS; r++) {
		struct timespec ts = { 0, 500000 };

		nanosleep(&ts, NULL); /* let the waiter go to sleep */
		if (r == W_ROUNDS / 2) {
			memset(&ce, 0, sizeof(ce));
			ce.err = EIO;
			n = lfp_cq_writeerr(w->cqs, &ce);
			CHECK(n == (ssize_t)sizeof(ce), "W: writeerr: %zd", n);
			memset(&ee, 0, sizeof(ee));
			ee.err = EIO;
			n = lfp_eq_write_err(w->eq, &ee);
			CHECK(n == (ssize_t)sizeof(ee), "W: write_err: %zd", n);
		}
		e.op_context = (void *)(uintptr_t)(r + 1);
		n = lfp_cq_write(w->cqs, &e, 1);
		CHECK(n == 1, "W: cq write: %zd", n);
		n = lfp_cq_write(w->cqf, &e, 1);
		CHECK(n == 1, "W: cq write: %zd", n);
		CHECK(lfp_cntr_inc(w->cnt, 1) == 0, "W: cntr_inc");
		v = (uint64_t)r;
		n = lfp_eq_write(w->eq, LFP_EVENT_USER, &v, sizeof(v), 0);
		CHECK(n == (ssize_t)sizeof(v), "W: eq write: %zd", n);
	}
	self_parker = NULL;
	return NULL;
}

static void walk_drain_cq(struct walk *w, struct lfp_cq *cq,
                          _Atomic unsigned long *next, _Atomic unsigned *errs)
{
	struct lfp_cq_entry e[8];
	struct lfp_cq_err_entry err;
	ssize_t n, i;

	for (;;) {
		n = lfp_cq_read(cq, e, 8);
		if (n == -EAGAIN)
			return;
		if (n == -LFP_EAVAIL) {
			memset(&err, 0, sizeof(err));
			CHECK(lfp_cq_readerr(cq, &err, 0) == 1 &&
			      err.err == EIO, "W: %s: readerr after -LFP_EAVAIL failed",
			      w->label);
			CHECK(atomic_load(next) <= W_ROUNDS / 2, "W: %s: the CQ error "
			      "queued before entry %d came out after %lu entries "
			      "(errors before events)", w->label, W_ROUNDS / 2 + 1,
			      atomic_load(next));
			atomic_fetch_add(errs, 1);
			continue;
		}
		CHECK(n > 0, "W: %s: lfp_cq_read: %zd", w->label, n);
		for (i = 0; i < n; i++) {
			CHECK(e[i].op_context == (void *)(uintptr_t)(atomic_load(next) + 1),
			      "W: %s: CQ entry %p read where %lu was due (lost or "
			      "reordered)", w->label, e[i].op_context,
			      atomic_load(next) + 1);
			atomic_fetch_add(next, 1);
		}
	}
}

static void walk_drain_eq(struct walk *w)
{
	struct lfp_eq_err_entry err;
	uint64_t v;
	uint32_t ev;
	ssize_t n;

	for (;;) {
		n = lfp_eq_read(w->eq, &ev, &v, sizeof(v), 0);
		if (n == -EAGAIN)
			return;
		if (n == -LFP_EAVAIL) {
			memset(&err, 0, sizeof(err));
			CHECK(lfp_eq_readerr(w->eq, &err, 0) == (ssize_t)sizeof(err) &&
			      err.err == EIO, "W: %s: EQ readerr after -LFP_EAVAIL",
			      w->label);
			CHECK(atomic_load(&w->eq_next) <= W_ROUNDS / 2, "W: %s: the EQ "
			      "error queued before event %d came out after %lu events "
			      "(errors before events)", w->label, W_ROUNDS / 2,
			      atomic_load(&w->eq_next));
			atomic_fetch_add(&w->eq_err, 1);
			continue;
		}
		CHECK(n == (ssize_t)sizeof(v) && v == atomic_load(&w->eq_next),
		      "W: %s: EQ read %zd (event %llu) where %lu was due", w->label,
		      n, (unsigned long long)v, atomic_load(&w->eq_next));
		atomic_fetch_add(&w->eq_next, 1);
	}
}

static int walk_done(struct walk *w)
{
	return atomic_load(&w->cqs_next) == W_ROUNDS && atomic_load(&w->cqs_err) == 1 &&
	       atomic_load(&w->cqf_next) == W_ROUNDS && atomic_load(&w->eq_next) == W_ROUNDS &&
	       atomic_load(&w->eq_err) == 1 && atomic_load(&w->cnt_val) == W_ROUNDS;
}

/* Work the waiter has not taken yet, named (NULL: none). */
static const char *walk_pending_what(struct walk *w)
{
	if (lfp__cq_ready(w->cqs))
		return "entries queued on the CQ in the wait set";
	if (lfp__cq_ready(w->cqf))
		return "entries queued on the FD CQ";
	if (lfp__eq_ready(w->eq))
		return "events queued on the EQ";
	if (lfp_cntr_read(w->cnt) != atomic_load(&w->cnt_val))
		return "a counter change lfp_poll never reported";
	return NULL;
}

static int walk_pending(struct walk *w)
{
	return walk_pending_what(w) != NULL;
}

/* walk_pending_what for a message, from one look. */
static const char *walk_pending_text(struct walk *w)
{
	const char *what = walk_pending_what(w);

	return what ? what : "nothing queued";
}

static void *walk_waiter(void *arg)
{
	struct walk *w = (struct walk *)arg;
	struct lfp_fid *fids[3];
	struct pollfd pfd[3];
	uint64_t progress = stress_now_ns(), t0;
	unsigned long before, after;
	const char *queued;
	void *ctx[4];
	int n, i, ret;

	self_parker = &w->wait;
	fids[0] = &w->ws->fid;
	fids[1] = &w->cqf->fid;
	fids[2] = &w->eq->fid;
	for (i = 0; i < 3; i++) {
		pfd[i].fd = fd_of(fids[i]);
		pfd[i].events = POLLIN;
	}
	for (;;) {
		before = atomic_load(&w->cqs_next) + atomic_load(&w->cqf_next) +
		         atomic_load(&w->eq_next) + atomic_load(&w->cnt_val) +
		         atomic_load(&w->cqs_err) + atomic_load(&w->eq_err);
		n = lfp_poll(w->ps, ctx, 4);
		CHECK(n >= 0, "W: %s: lfp_poll: %d", w->label, n);
		for (i = 0; i < n; i++) {
			if (ctx[i] == (void *)w->cqs)
				walk_drain_cq(w, w->cqs, &w->cqs_next, &w->cqs_err);
			else if (ctx[i] == (void *)w->cqf)
				walk_drain_cq(w, w->cqf, &w->cqf_next, &w->cqs_err /* unused */);
			else if (ctx[i] == (void *)w->cnt)
				atomic_store(&w->cnt_val, lfp_cntr_read(w->cnt));
			else
				CHECK(0, "W: %s: lfp_poll reported %p", w->label, ctx[i]);
		}
		walk_drain_eq(w);
		/* Churn: poll set membership (poll.D1) and the wait set's
		 * external fds (pollfd.write). */
		ret = lfp_poll_del(w->ps, &w->cqf->fid, 0);
		CHECK(ret == 0, "W: lfp_poll_del: %d", ret);
		ret = lfp_poll_add(w->ps, &w->cqf->fid, 0);
		CHECK(ret == 0, "W: lfp_poll_add: %d", ret);
		ret = lfp_wait_add_fd(w->ws, w->pipefd[0], POLLIN, NULL);
		CHECK(ret == 0, "W: lfp_wait_add_fd: %d", ret);
		ret = lfp_wait_del_fd(w->ws, w->pipefd[0]);
		CHECK(ret == 0, "W: lfp_wait_del_fd: %d", ret);
		if (walk_done(w))
			break;
		after = atomic_load(&w->cqs_next) + atomic_load(&w->cqf_next) +
		        atomic_load(&w->eq_next) + atomic_load(&w->cnt_val) +
		        atomic_load(&w->cqs_err) + atomic_load(&w->eq_err);
		if (after != before)
			progress = stress_now_ns();
		CHECK(stress_seconds_since(progress) < 3, "W: %s: no progress for "
		      "3 s with %s (cqs %lu+%u, cqf %lu, eq %lu+%u, counter %lu of "
		      "%d): a member lfp_poll no longer reports", w->label,
		      walk_pending_text(w),
		      atomic_load(&w->cqs_next), atomic_load(&w->cqs_err),
		      atomic_load(&w->cqf_next), atomic_load(&w->eq_next),
		      atomic_load(&w->eq_err), atomic_load(&w->cnt_val), W_ROUNDS);
		ret = lfp_trywait(fids, 3);
		if (ret == -EAGAIN)
			continue;
		CHECK(ret == 0, "W: %s: lfp_trywait: %d", w->label, ret);
		/* The sleeper sleeps up to W_SLEEP_MS; the ticker wakes every
		 * 2 ms (so it calls lfp_poll while another thread is parked)
		 * and, if work is queued then, gives the wake W_SLEEP_MS. */
		t0 = stress_now_ns();
		do
			n = poll(pfd, 3, w->ticker ? 2 : W_SLEEP_MS);
		while (n < 0 && errno == EINTR);
		CHECK(n >= 0, "W: poll: %s", strerror(errno));
		/* What was queued when the sleep ended: looked at once, since a
		 * producer may publish between two looks, before its wake. */
		queued = n == 0 ? walk_pending_what(w) : NULL;
		if (queued && w->ticker) {
			do
				n = poll(pfd, 3, W_SLEEP_MS);
			while (n < 0 && errno == EINTR);
			CHECK(n >= 0, "W: poll: %s", strerror(errno));
		}
		CHECK(n > 0 || !queued, "W: %s: lost wake or member: the waiter "
		      "slept %.1f s in poll after trywait returned 0, with %s",
		      w->label, stress_seconds_since(t0), queued);
	}
	self_parker = NULL;
	return NULL;
}

static void walk_report(void *arg)
{
	struct walk *w = (struct walk *)arg;

	fprintf(stderr, "W: %s: hung: cqs %lu+%u, cqf %lu, eq %lu+%u, counter %lu "
	        "of %d rounds\n", w->label, atomic_load(&w->cqs_next),
	        atomic_load(&w->cqs_err), atomic_load(&w->cqf_next),
	        atomic_load(&w->eq_next), atomic_load(&w->eq_err),
	        atomic_load(&w->cnt_val), W_ROUNDS);
}

/*
 * One run of the workload.  role: 0 the producer parks, 1 the waiter, -1
 * nobody (record: both count the points they pass into hits[role]).
 * Returns whether the parking thread parked.
 */
static int walk_run(int ticker, int role, const char *where, unsigned skip,
                    int record, unsigned hits[2][MAX_POINTS])
{
	struct walk *w = (struct walk *)calloc(1, sizeof(*w));
	struct stress_watchdog wd;
	struct parker *pk;
	pthread_t tp, tw;
	void *ctx[4];
	int ret, parked = 0;

	CHECK(w, "calloc");
	w->ws = open_ws(LFP_WAIT_FD);
	CHECK(lfp_poll_open(NULL, &w->ps) == 0, "lfp_poll_open");
	w->cqs = open_cq(LFP_WAIT_SET, w->ws, 64, NULL);
	w->cqs->fid.context = w->cqs;
	w->cqf = open_cq(LFP_WAIT_FD, NULL, 64, NULL);
	w->cqf->fid.context = w->cqf;
	w->cnt = open_cntr(LFP_WAIT_SET, w->ws, NULL);
	w->cnt->fid.context = w->cnt;
	w->eq = open_eq(LFP_WAIT_FD, 64, 0, 0, NULL);
	CHECK(pipe(w->pipefd) == 0, "pipe");
	CHECK(lfp_poll_add(w->ps, &w->cqs->fid, 0) == 0 &&
	      lfp_poll_add(w->ps, &w->cqf->fid, 0) == 0 &&
	      lfp_poll_add(w->ps, &w->cnt->fid, 0) == 0, "lfp_poll_add");
	parker_init(&w->prod, role == 0 ? where : NULL, NULL);
	parker_init(&w->wait, role == 1 ? where : NULL, NULL);
	pk = role == 0 ? &w->prod : &w->wait;
	pk->skip = skip;
	pk->hold_ms = W_HOLD_MS;
	w->prod.record = w->wait.record = record;
	w->ticker = ticker;
	if (role < 0)
		snprintf(w->label, sizeof(w->label), "%s waiter, nobody parked",
		         ticker ? "ticking" : "sleeping");
	else
		snprintf(w->label, sizeof(w->label), "%s parked at %s (hit %u; "
		         "%s waiter)", role == 0 ? "producer" : "waiter", where,
		         skip + 1, ticker ? "ticking" : "sleeping");
	stress_watchdog_start(&wd, STRESS_TSAN ? 60 : 20, w->label, walk_report, w);
	stress_spawn(&tw, walk_waiter, w);
	stress_spawn(&tp, walk_producer, w);
	stress_join(tp);
	stress_join(tw);
	stress_watchdog_stop(&wd);
	if (role >= 0)
		parked = pk->fired;
	if (record) {
		memcpy(hits[0], w->prod.hits, sizeof(w->prod.hits));
		memcpy(hits[1], w->wait.hits, sizeof(w->wait.hits));
	}
	/* Nothing left over, and nothing reported for it. */
	CHECK(!walk_pending(w), "W: %s: work left after the waiter finished",
	      w->label);
	/* The counter may come once more: the waiter may have read the value
	 * of the last inc before that inc moved the event count. */
	ret = lfp_poll(w->ps, ctx, 4);
	CHECK(ret == 0 || (ret == 1 && ctx[0] == (void *)w->cnt),
	      "W: %s: lfp_poll reported %d drained members (the first %s)",
	      w->label, ret, ctx[0] == (void *)w->cqs ? "the CQ in the wait set" :
	      ctx[0] == (void *)w->cqf ? "the FD CQ" : "the counter");
	ret = lfp_poll(w->ps, ctx, 4);
	CHECK(ret == 0, "W: %s: lfp_poll reported %d drained members twice",
	      w->label, ret);
	CHECK(lfp_poll_del(w->ps, &w->cqs->fid, 0) == 0 &&
	      lfp_poll_del(w->ps, &w->cqf->fid, 0) == 0 &&
	      lfp_poll_del(w->ps, &w->cnt->fid, 0) == 0, "lfp_poll_del");
	CHECK(lfp_poll_close(w->ps) == 0, "lfp_poll_close");
	CHECK(lfp_cq_close(w->cqs) == 0 && lfp_cq_close(w->cqf) == 0 &&
	      lfp_cntr_close(w->cnt) == 0 && lfp_eq_close(w->eq) == 0,
	      "close");
	CHECK(lfp_wait_close(w->ws) == 0, "lfp_wait_close");
	close(w->pipefd[0]);
	close(w->pipefd[1]);
	parker_fini(&w->prod);
	parker_fini(&w->wait);
	free(w);
	return parked;
}

static const char *const known_points[] = {
	"ring.prod.claimed", "ring.cons.acquired", "ring.cons.claimed",
	"signal.P2", "signal.P3",
	"signal.P4", "signal.post.announced", "signal.W1", "signal.W1.read",
	"signal.W2", "signal.W3", "poll.link.claimed", "poll.link.pushed",
	"poll.L1", "poll.D1", "pollfd.write", "eq.write.claimed"
};
#define NKNOWN (sizeof(known_points) / sizeof(known_points[0]))

static void test_walk(void)
{
	static unsigned hits[2][MAX_POINTS];
	static const char *const role_name[2] = { "producer", "waiter" };
	unsigned np, i, runs = 0, parked = 0, reached[MAX_POINTS];
	size_t k;
	int role, pass, ticker;
	char missing[512] = "";

	for (k = 0; k < NKNOWN; k++)
		(void)point_id(known_points[k]);
	/* Discovery: record what each thread passes, over a few runs if some
	 * point was not reached (the rare ones need the waiter asleep). */
	memset(hits, 0, sizeof(hits));
	for (pass = 0; pass < 5; pass++) {
		static unsigned one[2][MAX_POINTS];
		unsigned all = 1;

		(void)walk_run(pass & 1, -1, NULL, 0, 1, one);
		for (role = 0; role < 2; role++)
			for (i = 0; i < MAX_POINTS; i++)
				if (one[role][i] > hits[role][i])
					hits[role][i] = one[role][i];
		for (k = 0; k < NKNOWN; k++) {
			i = point_id(known_points[k]);
			all &= hits[0][i] || hits[1][i];
		}
		if (all && pass)
			break;
	}
	pthread_mutex_lock(&points_lock);
	np = npoints;
	pthread_mutex_unlock(&points_lock);
	memset(reached, 0, sizeof(reached));
	for (role = 0; role < 2; role++) {
		for (i = 0; i < np; i++) {
			if (!hits[role][i])
				continue;
			reached[i] = 1;
			for (pass = 0; pass < 4; pass++) {
				unsigned skip = pass & 1 ? hits[role][i] / 2 : 0;

				ticker = pass >> 1;
				if ((pass & 1) && skip == 0)
					continue;
				runs++;
				parked += (unsigned)walk_run(ticker, role, point_names[i],
				                             skip, 0, hits);
			}
		}
	}
	for (i = 0; i < np; i++) {
		if (!reached[i] && strlen(missing) + strlen(point_names[i]) + 2 < sizeof(missing)) {
			strcat(missing, " ");
			strcat(missing, point_names[i]);
		}
	}
	printf("  W: ok: %u runs, each thread parked %d ms at each point it "
	       "passes (first and middle hit, sleeping and ticking waiter; %u "
	       "parked): no hang, no lost wake, nothing lost\n", runs, W_HOLD_MS,
	       parked);
	for (role = 0; role < 2; role++) {
		printf("     %s:", role_name[role]);
		for (i = 0; i < np; i++)
			if (hits[role][i])
				printf(" %s", point_names[i]);
		printf("\n");
	}
	if (missing[0])
		printf("     not reached by the workload:%s\n", missing);
	/* Every point the headers have is reached, or this test has gone
	 * stale: a point that nothing passes is a point nothing walks. */
	CHECK(missing[0] == 0, "W: schedule points the walk never reached:%s",
	      missing);
}

/* ================================================================ H */

struct h_run {
	struct lfp_wait *ws;
	struct lfp_cq *cq;
	int pipes[4][2];
	_Atomic int stop;
	_Atomic unsigned long read, waits, churns, snaps;
};

static void *h_waiter(void *arg)
{
	struct h_run *h = (struct h_run *)arg;
	struct lfp_cq_entry e[8];
	ssize_t n;
	int ret;

	while (!atomic_load(&h->stop)) {
		ret = lfp_wait(h->ws, 1);
		CHECK(ret == 0 || ret == -ETIMEDOUT, "H: lfp_wait: %d", ret);
		atomic_fetch_add(&h->waits, 1);
		while ((n = lfp_cq_read(h->cq, e, 8)) > 0)
			atomic_fetch_add(&h->read, (unsigned long)n);
		CHECK(n == -EAGAIN, "H: lfp_cq_read: %zd", n);
	}
	return NULL;
}

static void *h_churn(void *arg)
{
	struct h_run *h = (struct h_run *)arg;
	uint64_t rng = 7;
	unsigned i;
	int ret;

	while (!atomic_load(&h->stop)) {
		i = (unsigned)(stress_rand(&rng) % 4);
		ret = lfp_wait_add_fd(h->ws, h->pipes[i][0], POLLIN, NULL);
		CHECK(ret == 0, "H: lfp_wait_add_fd: %d", ret);
		if (stress_rand(&rng) & 1)
			sched_yield();
		ret = lfp_wait_del_fd(h->ws, h->pipes[i][0]);
		CHECK(ret == 0, "H: lfp_wait_del_fd: %d", ret);
		atomic_fetch_add(&h->churns, 1);
	}
	return NULL;
}

static void *h_snap(void *arg)
{
	struct h_run *h = (struct h_run *)arg;
	struct pollfd fds[8];
	struct lfp_wait_pollfd w;
	int ret;

	while (!atomic_load(&h->stop)) {
		w.change_index = 0;
		w.nfds = 8;
		w.fd = fds;
		ret = lfp_control(&h->ws->fid, LFP_GETWAIT, &w);
		CHECK(ret == 0 && w.nfds >= 1 && w.nfds <= 2, "H: POLLFD GETWAIT: "
		      "%d, nfds %zu", ret, w.nfds);
		atomic_fetch_add(&h->snaps, 1);
	}
	return NULL;
}

static void h_one(enum lfp_wait_obj obj)
{
	struct h_run *h = (struct h_run *)calloc(1, sizeof(*h));
	uintptr_t seq = 0;
	pthread_t tw, tc, ts;
	uint64_t t0;
	double secs = STRESS_TSAN ? 0.4 : 0.2;
	int i;

	CHECK(h, "calloc");
	h->ws = open_ws(obj);
	h->cq = open_cq(LFP_WAIT_SET, h->ws, 256, NULL);
	for (i = 0; i < 4; i++)
		CHECK(pipe(h->pipes[i]) == 0, "pipe");
	stress_spawn(&tw, h_waiter, h);
	stress_spawn(&tc, h_churn, h);
	if (obj == LFP_WAIT_POLLFD)
		stress_spawn(&ts, h_snap, h);
	t0 = stress_now_ns();
	while (stress_seconds_since(t0) < secs) {
		if (seq - atomic_load(&h->read) < 200)
			cq_put(h->cq, 1, &seq);
		sleep_ms(1);
	}
	/* Everything written is read by the waiter. */
	t0 = stress_now_ns();
	while (atomic_load(&h->read) != seq) {
		CHECK(stress_seconds_since(t0) < 5, "H: %s: the waiter read %lu of "
		      "%lu entries in 5 s (a lost wake in lfp_wait)", obj_name(obj),
		      atomic_load(&h->read), (unsigned long)seq);
		sleep_ms(1);
	}
	atomic_store(&h->stop, 1);
	stress_join(tw);
	stress_join(tc);
	if (obj == LFP_WAIT_POLLFD)
		stress_join(ts);
	CHECK(atomic_load(&h->churns) > 0 && atomic_load(&h->waits) > 0,
	      "H: %s: the threads did not run", obj_name(obj));
	CHECK(lfp_cq_close(h->cq) == 0, "lfp_cq_close");
	CHECK(lfp_wait_close(h->ws) == 0, "H: %s: lfp_wait_close", obj_name(obj));
	for (i = 0; i < 4; i++) {
		close(h->pipes[i][0]);
		close(h->pipes[i][1]);
	}
	printf("     %s: %lu waits, %lu add/del pairs, %lu entries\n",
	       obj_name(obj), atomic_load(&h->waits), atomic_load(&h->churns),
	       (unsigned long)seq);
	free(h);
}

static void test_h(void)
{
	h_one(LFP_WAIT_FD);
	h_one(LFP_WAIT_POLLFD);
	h_one(LFP_WAIT_YIELD);
	printf("  H: ok: lfp_wait against lfp_wait_add_fd/del_fd (and LFP_GETWAIT "
	       "on POLLFD) from other threads (FD, POLLFD, YIELD)\n");
}

/* ================================================================ I */

/*
 * The rig of I and I3: a counter in a poll set, and in a wait set of kind
 * obj (ws set) or with its own wait object of kind obj; fd is what the
 * loop polls.  The poll set starts with the counter reported quiet, so the
 * next increment claims its link.
 */
struct i_rig {
	struct lfp_wait *ws;
	struct lfp_cntr *cn;
	struct lfp_fid *fid;
	struct lfp_poll *ps;
	int fd;
};

static void i_rig_open(struct i_rig *r, enum lfp_wait_obj obj, int in_set,
                       const char *on)
{
	void *ctx[2];

	r->ws = in_set ? open_ws(obj) : NULL;
	r->cn = open_cntr(in_set ? LFP_WAIT_SET : obj, r->ws, (void *)"counter");
	r->fid = &r->cn->fid;
	r->fd = -1;
	CHECK(lfp_poll_open(NULL, &r->ps) == 0, "lfp_poll_open");
	CHECK(lfp_poll_add(r->ps, r->fid, 0) == 0, "lfp_poll_add");
	CHECK(lfp_control(in_set ? &r->ws->fid : r->fid, LFP_GETWAIT, &r->fd) == 0,
	      "LFP_GETWAIT");
	/* Added links start tracked; with nothing to report, lfp_poll drops
	 * this one, so the next inc claims it. */
	CHECK(lfp_poll(r->ps, ctx, 2) == 0, "%s: lfp_poll on a quiet counter", on);
}

/* The counter's producer, parked after claiming its link, before the push. */
static void i_rig_park_producer(struct i_rig *r, struct call *p, const char *on)
{
	call_init(p, CALL_CNTR_INC, "poll.link.claimed", &r->cn->link);
	p->cntr = r->cn;
	p->value = 1;
	call_start_parked(p, "%s: the producer", on);
}

static void i_rig_release_producer(struct call *p, const char *on)
{
	parker_release(&p->park);
	CHECK(call_wait(p, 10), "%s: the producer hung", on);
	call_join(p);
}

/* Whether r->fd becomes readable within ms. */
static int i_rig_fd_wakes(struct i_rig *r, int ms)
{
	struct pollfd pfd;

	pfd.fd = r->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	return poll(&pfd, 1, ms) == 1;
}

static void i_rig_close(struct i_rig *r)
{
	CHECK(lfp_poll_del(r->ps, r->fid, 0) == 0, "lfp_poll_del");
	CHECK(lfp_poll_close(r->ps) == 0, "lfp_poll_close");
	CHECK(lfp_cntr_close(r->cn) == 0, "lfp_cntr_close");
	if (r->ws)
		CHECK(lfp_wait_close(r->ws) == 0, "lfp_wait_close");
}

/*
 * A counter in a wait set and a poll set (found by the walk, W): its
 * producer is parked after claiming its poll link, before the push.  The
 * fi_poll(3) loop then runs: lfp_poll finds nothing (the link is not on
 * the stack), trywait on the set reports the counter's change (and
 * consumes it), lfp_poll finds nothing again, trywait returns 0 and the
 * waiter polls the set's fd.  When the producer resumes, the set's fd must
 * become readable: its wake has to come after its push.
 */
static void i_one(enum lfp_wait_obj obj)
{
	char on[32];
	struct i_rig r;
	struct call p;
	void *ctx[2];
	int n, ret;

	snprintf(on, sizeof(on), "I: %s", obj_name(obj));
	i_rig_open(&r, obj, 1, on);
	CHECK(lfp_trywait(&r.fid, 1) == 0, "%s: trywait on a quiet set", on);
	i_rig_park_producer(&r, &p, on);
	n = lfp_poll(r.ps, ctx, 2);
	CHECK(n == 0, "%s: lfp_poll reported a link not yet pushed (%d)", on, n);
	ret = lfp_trywait(&r.fid, 1);
	CHECK(ret == -EAGAIN, "%s: trywait missed the counter's change (%d)",
	      on, ret);
	CHECK(lfp_poll(r.ps, ctx, 2) == 0, "%s: lfp_poll", on);
	ret = lfp_trywait(&r.fid, 1);
	CHECK(ret == 0, "%s: the second trywait = %d", on, ret);
	i_rig_release_producer(&p, on);
	CHECK(i_rig_fd_wakes(&r, 3000), "%s: lost wake: the counter's producer "
	      "finished, lfp_poll would report the counter, but the set's fd "
	      "stayed quiet 3 s after trywait returned 0 (the wake went out "
	      "before the poll link's push)", on);
	n = lfp_poll(r.ps, ctx, 2);
	CHECK(n == 1 && ctx[0] == r.fid->context, "%s: lfp_poll did not report "
	      "the counter (%d)", on, n);
	i_rig_close(&r);
}

/*
 * I2: two trywaits on a counter of its own find one batch of events; the
 * first is parked after its check (cntr.trywait.ready) while the second
 * reports the batch (-EAGAIN).  Released, the first must not report it
 * again: it arms and returns 0 (lfp_cntr(3): each batch is reported to
 * one of them).  Both marked the batch with a plain store, and both
 * returned -EAGAIN.
 */
static void i2_one(enum lfp_wait_obj obj)
{
	struct lfp_cntr *cn = open_cntr(obj, NULL, NULL);
	struct lfp_fid *fid = &cn->fid;
	struct call t;
	int ret;

	CHECK(lfp_cntr_inc(cn, 1) == 0, "lfp_cntr_inc");
	call_init(&t, CALL_TRYWAIT, "cntr.trywait.ready", cn);
	t.fid = fid;
	call_start_parked(&t, "I2: a trywait (%s)", obj_name(obj));
	ret = lfp_trywait(&fid, 1);
	CHECK(ret == -EAGAIN, "I2: %s: the second trywait: %d", obj_name(obj), ret);
	parker_release(&t.park);
	CHECK(call_wait(&t, 10), "I2: the parked trywait hung");
	call_join(&t);
	CHECK(t.ret == 0, "I2: %s: a batch of one event was reported to two "
	      "trywaits (the parked one returned %zd, not 0)", obj_name(obj), t.ret);
	CHECK(lfp_cntr_inc(cn, 1) == 0, "lfp_cntr_inc");
	ret = lfp_trywait(&fid, 1);
	CHECK(ret == -EAGAIN, "I2: %s: the next batch: %d", obj_name(obj), ret);
	CHECK(lfp_cntr_close(cn) == 0, "lfp_cntr_close");
}

/*
 * I3: the fi_poll(3) loop with a counter in a poll set, where the producer
 * finishes while the waiter is between two checks, not armed.  The
 * producer is parked after claiming its poll link (poll.link.claimed).
 * The loop's check (trywait on the counter, or lfp_wait on its set)
 * reports the change and consumes it; lfp_poll finds nothing, the link
 * not being on the stack yet.  Now the producer finishes: it pushes the
 * link and finds nobody armed, so it wakes nobody.  The loop's next check
 * must report work (lfp_poll would report the counter), not arm: trywait
 * returned 0 and the fd stayed quiet; lfp_wait slept to its timeout.
 *
 *   mode 0: a counter in an FD wait set, trywait on the counter (the set's)
 *   mode 1: the same, lfp_wait on the set
 *   mode 2: a counter with its own FD wait object, trywait on it
 */
static void i3_one(int mode)
{
	static const char *const what[] = { "I3: trywait, wait set",
	                                    "I3: lfp_wait", "I3: trywait, own fd" };
	const char *on = what[mode];
	struct i_rig r;
	struct call p;
	void *ctx[2];
	int n, ret;

	i_rig_open(&r, LFP_WAIT_FD, mode < 2, on);
	ret = mode == 1 ? lfp_wait(r.ws, 0) : lfp_trywait(&r.fid, 1);
	CHECK(ret == (mode == 1 ? -ETIMEDOUT : 0), "%s: quiet: %d", on, ret);
	i_rig_park_producer(&r, &p, on);
	ret = mode == 1 ? lfp_wait(r.ws, 0) : lfp_trywait(&r.fid, 1);
	CHECK(ret == (mode == 1 ? 0 : -EAGAIN), "%s: the check missed the "
	      "counter's change (%d)", on, ret);
	n = lfp_poll(r.ps, ctx, 2);
	CHECK(n == 0, "%s: lfp_poll reported a link not yet pushed (%d)", on, n);
	i_rig_release_producer(&p, on);
	if (mode == 1) {
		ret = lfp_wait(r.ws, 2000);
		CHECK(ret == 0, "%s: lost wake: the producer finished and "
		      "lfp_poll would report the counter, but lfp_wait slept to "
		      "its timeout (%d)", on, ret);
	} else {
		ret = lfp_trywait(&r.fid, 1);
		CHECK(ret == -EAGAIN || i_rig_fd_wakes(&r, 2000), "%s: lost "
		      "wake: the producer finished and lfp_poll would report the "
		      "counter, but trywait returned %d and the fd stayed quiet "
		      "for 2 s", on, ret);
	}
	n = lfp_poll(r.ps, ctx, 2);
	CHECK(n == 1 && ctx[0] == r.fid->context, "%s: lfp_poll did not report "
	      "the counter (%d)", on, n);
	/* Reported: the loop may sleep again. */
	ret = mode == 1 ? lfp_wait(r.ws, 0) : lfp_trywait(&r.fid, 1);
	CHECK(ret == (mode == 1 ? -ETIMEDOUT : 0), "%s: after lfp_poll "
	      "reported the change: %d", on, ret);
	i_rig_close(&r);
}

static void test_i(void)
{
	i3_one(0);
	i3_one(1);
	i3_one(2);
	i_one(LFP_WAIT_FD);
	i2_one(LFP_WAIT_FD);
	i2_one(LFP_WAIT_MUTEX_COND);
	printf("  I: ok: a counter in a wait set and a poll set wakes the "
	       "fi_poll(3) loop after its link is pushed; a change a poll set "
	       "has not reported keeps the loop awake (I3); two trywaits on a "
	       "counter report one batch once (I2)\n");
}

/* ================================================================ J */

/* Read every queued error of eq; returns how many, their data ORed. */
static unsigned j_drain_errors(struct lfp_eq *eq, uint64_t *datas)
{
	struct lfp_eq_err_entry e;
	unsigned n = 0;

	*datas = 0;
	for (;;) {
		memset(&e, 0, sizeof(e));
		if (lfp_eq_readerr(eq, &e, 0) != (ssize_t)sizeof(e))
			return n;
		*datas |= e.data;
		n++;
	}
}

/*
 * The error queue's first writer parked at `point` while another writer
 * queues error 2 and then an event: a peek and a read must both return
 * -LFP_EAVAIL.  With drain set a reader first takes whatever is queued.
 * Released, the first writer's error comes out, then error 2, then the
 * event.  `what` prefixes every failure ("J", "J2").
 *
 *   J: parked between counting and publishing (errq.write.half), with a
 *      drain.  Counting after the publish let the first writer's entry be
 *      taken before it was counted, so the second error's count cancelled
 *      out and the event went first.
 *   J2: parked between its claim of the error queue's head position and
 *      its publish (errq.write.claimed).  The error check looked at the
 *      head entry only, found it unpublished, and let the event through
 *      while error 2 was queued behind it.  readerr cannot take error 2
 *      past the head (-EAGAIN meanwhile).
 */
static void j_eq(const char *point, const char *what, int drain)
{
	struct lfp_eq *eq = open_eq(LFP_WAIT_NONE, 16, 0, 0, NULL);
	struct lfp_eq_err_entry err;
	uint64_t v = 7, datas = 0;
	uint32_t ev;
	struct call w;
	ssize_t n;

	call_init(&w, CALL_EQ_WRITE_ERR, point, &eq->errq);
	w.eq = eq;
	w.value = 1;
	call_start_parked(&w, "%s: the first error writer", what);
	if (drain)
		(void)j_drain_errors(eq, &datas); /* takes error 1 if published */
	memset(&err, 0, sizeof(err));
	err.err = EIO;
	err.data = 2;
	n = lfp_eq_write_err(eq, &err);        /* error 2, then an event */
	CHECK(n == (ssize_t)sizeof(err), "lfp_eq_write_err: %zd", n);
	n = lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v), "lfp_eq_write: %zd", n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), LFP_PEEK);
	CHECK(n == -LFP_EAVAIL, "%s: EQ: a peek returned %zd while an error its "
	      "writer queued before the event was pending", what, n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == -LFP_EAVAIL, "%s: EQ: a read returned %zd while an error its "
	      "writer queued before the event was pending", what, n);
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "%s: the parked error writer hung", what);
	call_join(&w);
	CHECK(w.ret == (ssize_t)sizeof(err), "%s: parked write_err: %zd", what,
	      w.ret);
	(void)j_drain_errors(eq, &v);
	datas |= v;
	CHECK(datas == 3, "%s: EQ: errors read: data %#llx, want 0x3 (one lost?)",
	      what, (unsigned long long)datas);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 7, "%s: EQ: the event after the "
	      "errors: %zd", what, n);
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
}

/*
 * J3: J2's look past the head must not take a void entry for an error.
 * Writer A parked at the error queue's head (errq.write.claimed), writer C
 * past the EQ's first look at the overrun flag (errq.write.half); the EQ
 * of 2 events overruns; C, released, finds the flag and queues a void
 * entry behind A's position.  No error is queued: the events queued before
 * the overrun must be read (and peeked), not refused with -LFP_EAVAIL.
 */
static void o_fill(struct lfp_eq *eq);

static void j3_void(void)
{
	struct lfp_eq_attr a = { .size = 2 };
	struct lfp_eq *eq;
	struct call wa, wc;
	uint64_t v = 0;
	uint32_t ev;
	ssize_t n;

	CHECK(lfp_eq_open(&a, &eq, NULL) == 0, "lfp_eq_open");
	call_init(&wa, CALL_EQ_WRITE_ERR, "errq.write.claimed", &eq->errq);
	wa.eq = eq;
	wa.value = 1;
	call_start_parked(&wa, "J3: the error writer at the head");
	call_init(&wc, CALL_EQ_WRITE_ERR, "errq.write.half", &eq->errq);
	wc.eq = eq;
	wc.value = 2;
	call_start_parked(&wc, "J3: the second error writer");
	o_fill(eq);
	parker_release(&wc.park);
	CHECK(call_wait(&wc, 10), "J3: the second error writer hung");
	call_join(&wc);
	CHECK(wc.ret == -LFP_EOVERRUN, "J3: the error write after the overrun "
	      "returned %zd", wc.ret);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), LFP_PEEK);
	CHECK(n == (ssize_t)sizeof(v) && v == 1, "J3: a peek returned %zd with "
	      "no error queued (a void entry behind a write under way)", n);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 1, "J3: a read returned %zd with "
	      "no error queued (a void entry behind a write under way)", n);
	parker_release(&wa.park);
	CHECK(call_wait(&wa, 10), "J3: the error writer at the head hung");
	call_join(&wa);
	CHECK(wa.ret == -LFP_EOVERRUN, "J3: the head's error write returned %zd",
	      wa.ret);
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 2, "J3: event 2: %zd", n);
	CHECK(lfp_eq_read(eq, &ev, &v, sizeof(v), 0) == -LFP_EAVAIL,
	      "J3: drained, overrun");
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
}

/* J2 on a CQ, whose read passes the same error check. */
static void j2_cq(void)
{
	struct lfp_cq_attr a = { .size = 16 };
	struct lfp_cq_err_entry err;
	struct lfp_cq_entry e = { (void *)7 }, out;
	struct lfp_cq *cq;
	struct call w;
	uint64_t datas = 0;
	ssize_t n;

	CHECK(lfp_cq_open(&a, &cq, NULL) == 0, "lfp_cq_open");
	call_init(&w, CALL_CQ_WRITE_ERR, "errq.write.claimed", &cq->errq);
	w.cq = cq;
	w.value = 1;
	call_start_parked(&w, "J2: the first error writer (CQ)");
	memset(&err, 0, sizeof(err));
	err.err = EIO;
	err.data = 2;
	n = lfp_cq_writeerr(cq, &err);
	CHECK(n == 0 || n == (ssize_t)sizeof(err), "lfp_cq_writeerr: %zd", n);
	CHECK(lfp_cq_write(cq, &e, 1) == 1, "lfp_cq_write");
	n = lfp_cq_read(cq, &out, 1);
	CHECK(n == -LFP_EAVAIL, "J2: CQ: a read returned %zd while an error its "
	      "producer queued before the completion was queued behind a write "
	      "under way at the error queue's head", n);
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "J2: the parked error writer hung");
	call_join(&w);
	for (;;) {
		memset(&err, 0, sizeof(err));
		if (lfp_cq_readerr(cq, &err, 0) <= 0)
			break;
		datas |= err.data;
	}
	CHECK(datas == 3, "J2: CQ: errors read: data %#llx, want 0x3",
	      (unsigned long long)datas);
	CHECK(lfp_cq_read(cq, &out, 1) == 1 && out.op_context == (void *)7,
	      "J2: CQ: the completion after the errors");
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_j(void)
{
	j_eq("errq.write.half", "J", 1);
	j_eq("errq.write.claimed", "J2", 0);
	j2_cq();
	j3_void();
	printf("  J: ok: an error writer parked between its count and its publish, "
	       "or between its claim and its publish (J2), does not let a later "
	       "event pass a later error (EQ read and peek, CQ read)\n");
}

/* ================================================================ L */

/*
 * A consumer between its claim and its copy-out keeps its slot: a burst
 * that reaches that slot stops before it, at once.  A ring of 4 held
 * entries 1, 2 and 3, and 1 was read; a consumer claims entry 2 and parks
 * (ring.cons.claimed) before its copy; a burst of 3 (4, 5, 6) from position
 * 3 must take positions 3 and 4 and stop short of 5, which reuses entry 2's
 * slot, and return without waiting for the parked consumer.  Released, the
 * consumer must copy out 2, and the ring then yields 3, 4, 5, and 6 once it
 * is written again.  A claim of all n positions once the first was seen
 * free (a blind fetch-and-add) overwrote entry 2.
 */
static void test_l(void)
{
	uint64_t mem[4 * 16], v;
	struct lfp_ring ring;
	struct call c, p;
	ssize_t n;

	CHECK(lfp_ring_memsize(4, sizeof(v)) <= sizeof(mem) &&
	      lfp_ring_init(&ring, mem, 4, sizeof(v)) == 0, "lfp_ring_init");
	for (v = 1; v <= 3; v++)
		CHECK(lfp_ring_enqueue(&ring, &v, sizeof(v)) == 0, "enqueue %llu",
		      (unsigned long long)v);
	CHECK(lfp_ring_dequeue(&ring, &v, sizeof(v)) == (ssize_t)sizeof(v) &&
	      v == 1, "dequeue 1");
	call_init(&c, CALL_RING_DEQ, "ring.cons.claimed", &ring);
	c.ring = &ring;
	call_start_parked(&c, "L: the consumer of entry 2");
	call_init(&p, CALL_RING_ENQ, NULL, NULL);
	p.ring = &ring;
	p.value = 4;
	p.count = 3;
	call_start(&p);
	CHECK(call_wait(&p, 10), "L: the burst of 4, 5, 6 waits for the consumer "
	      "parked between its claim and its copy-out");
	call_join(&p);
	CHECK(p.ret == 2, "L: the burst of 4, 5, 6 enqueued %zd while the slot "
	      "of its third entry was claimed and not yet copied out (want 2)",
	      p.ret);
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "L: the parked consumer hung");
	call_join(&c);
	CHECK(c.ret == (ssize_t)sizeof(v) && c.value == 2, "L: the consumer "
	      "parked after its claim copied out %llu (ret %zd), not 2: a "
	      "producer overwrote the slot", (unsigned long long)c.value, c.ret);
	v = 6;
	CHECK(lfp_ring_enqueue(&ring, &v, sizeof(v)) == 0, "L: enqueue 6 after "
	      "the consumer freed the slot");
	for (v = 3; v <= 6; v++) {
		uint64_t got = 0;

		n = lfp_ring_dequeue(&ring, &got, sizeof(got));
		CHECK(n == (ssize_t)sizeof(got) && got == v, "L: dequeue %zd: %llu, "
		      "want %llu", n, (unsigned long long)got, (unsigned long long)v);
	}
	CHECK(lfp_ring_dequeue(&ring, &v, sizeof(v)) == -EAGAIN, "L: ring not empty");
	printf("  L: ok: a burst stops short of a slot whose consumer is still "
	       "copying out, without waiting for it\n");
}

/* ================================================================ main */

struct test {
	char letter;
	const char *what;
	void (*fn)(void);
};

/* ================================================================ S */

/*
 * Leave an empty ring as n enqueue and dequeue pairs would (n a multiple of
 * its capacity): head and tail n further on, every slot free for its next
 * position.  The state after 2^31 operations, in O(capacity) steps.
 */
static void ring_skip(struct lfp_ring *r, uint64_t n)
{
	struct lfp__ring_geo g = lfp__ring_geo(r);
	uint64_t pos = lfp__ld_rlx_u64(&r->tail) + n, i;

	CHECK(lfp_ring_count(r) == 0 && n % (r->mask + 1) == 0, "ring_skip");
	for (i = 0; i <= r->mask; i++)
		lfp__st_rel_u64(lfp__slot_wordp(&g, pos + i),
		                lfp__slot_free_word(&g, pos + i));
	lfp__st_rel_u64(&r->head, pos);
	lfp__st_rel_u64(&r->tail, pos);
}

#define S_SKIP (((uint64_t)1 << 31) + 4)

/*
 * S2: a peeker parked after loading tail (ring.peek.guessed) at position 0
 * while 2^32 - 2 more positions pass; the ring then holds 1, 2 and 3 at
 * 2^32 - 2, 2^32 - 1 and 2^32, the last in the slot of position 0, with
 * the same 32-bit sequence.  The peek must return 1, the head, not 3: it
 * took the slot for position 0's and returned 3 with ticket 0, whose
 * consume then failed.
 */
static void s2_peek(void)
{
	struct lfp_ring *ring;
	struct call c;
	uint64_t v;

	CHECK(lfp_ring_create(4, sizeof(v), &ring) == 0, "lfp_ring_create");
	v = 100;
	CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == 0, "enqueue");
	call_init(&c, CALL_RING_PEEK, "ring.peek.guessed", ring);
	c.ring = ring;
	call_start_parked(&c, "S2: a peeker");
	/* 100 out, then one more in and out: tail 2, 2^32 - 4 short of the
	 * position 2^32 - 2 (ring_skip moves by multiples of 4). */
	CHECK(lfp_ring_dequeue(ring, &v, sizeof(v)) == (ssize_t)sizeof(v), "out");
	CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == 0, "in");
	CHECK(lfp_ring_dequeue(ring, &v, sizeof(v)) == (ssize_t)sizeof(v), "out");
	CHECK(lfp_ring_count(ring) == 0, "S2: setup");
	ring_skip(ring, ((uint64_t)1 << 32) - 4);
	for (v = 1; v <= 3; v++)
		CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == 0, "S2: enqueue %llu",
		      (unsigned long long)v);
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "S2: the parked peek hung");
	call_join(&c);
	CHECK(c.ret == (ssize_t)sizeof(v) && c.value == 1 &&
	      (uint64_t)c.count == ((uint64_t)1 << 32) - 2,
	      "S2: a peek stalled while 2^32 positions passed returned %zd, "
	      "entry %llu with ticket %#llx, not the head (1 at %#llx)", c.ret,
	      (unsigned long long)c.value, (unsigned long long)c.count,
	      (unsigned long long)(((uint64_t)1 << 32) - 2));
	CHECK(lfp_ring_consume(ring, c.count) == 0, "S2: consume of the ticket");
	for (v = 2; v <= 3; v++) {
		uint64_t got = 0;

		CHECK(lfp_ring_dequeue(ring, &got, sizeof(got)) == (ssize_t)sizeof(got) &&
		      got == v, "S2: then %llu", (unsigned long long)v);
	}
	lfp_ring_destroy(ring);
}

/*
 * A producer (consumer) whose guess of head (tail) went 2^31 positions
 * stale while it stalled before reading the slot: the slot's 32-bit
 * sequence then looks older than the guess, which is what "full" ("empty")
 * looks like.  It must re-read the index and go on, not report it.  The
 * call's inline attempt fails (a full ring, an empty one), so does the
 * first try of its claim out of line, and it parks in its claim loop.
 */
static void test_s(void)
{
	uint64_t mem[4 * 2], v = 0, i;
	struct lfp_ring ring;
	struct lfp_eq *eq;
	struct call c;
	ssize_t n;
	uint32_t ev;

	CHECK(lfp_ring_memsize(4, sizeof(v)) <= sizeof(mem) &&
	      lfp_ring_init(&ring, mem, 4, sizeof(v)) == 0, "lfp_ring_init");
	for (i = 0; i < 4; i++)
		CHECK(lfp_ring_enqueue(&ring, &i, sizeof(i)) == 0, "fill");
	call_init(&c, CALL_RING_ENQ, "ring.prod.guessed", &ring);
	c.park.skip = 2; /* the inline attempt's and the claim's first try */
	c.ring = &ring;
	c.value = 7;
	c.count = 1;
	call_start_parked(&c, "S: a producer");
	for (i = 0; i < 4; i++)
		CHECK(lfp_ring_dequeue(&ring, &v, sizeof(v)) == (ssize_t)sizeof(v),
		      "empty");
	ring_skip(&ring, S_SKIP);
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "S: the parked producer hung");
	call_join(&c);
	CHECK(c.ret == 1, "S: an enqueue into an empty ring returned %zd after its "
	      "guess of head went 2^31 positions stale (it reported full)", c.ret);
	CHECK(lfp_ring_dequeue(&ring, &v, sizeof(v)) == (ssize_t)sizeof(v) && v == 7,
	      "S: the entry is not there");

	/* The inline attempt's guess: on an empty ring it answers "empty"
	 * itself, so that is where a stale guess must be caught. */
	call_init(&c, CALL_RING_DEQ, "ring.cons.guessed", &ring);
	c.park.skip = 0;
	c.ring = &ring;
	call_start_parked(&c, "S: a consumer");
	ring_skip(&ring, S_SKIP);
	v = 8;
	CHECK(lfp_ring_enqueue(&ring, &v, sizeof(v)) == 0, "S: enqueue 8");
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "S: the parked consumer hung");
	call_join(&c);
	CHECK(c.ret == (ssize_t)sizeof(v) && c.value == 8, "S: a dequeue returned "
	      "%zd with entry 8 queued after its guess of tail went 2^31 "
	      "positions stale (it reported empty)", c.ret);

	/* On an EQ a false "full" was an overrun: for good. */
	CHECK(lfp_eq_open(NULL, &eq, NULL) == 0, "lfp_eq_open");
	for (i = 0; i < lfp_ring_capacity(&eq->events); i++)
		CHECK(lfp_eq_write(eq, 1, &i, sizeof(i), 0) == (ssize_t)sizeof(i),
		      "fill the EQ");
	call_init(&c, CALL_EQ_WRITE, "ring.prod.guessed", &eq->events);
	c.park.skip = 2;
	c.eq = eq;
	c.event = 1;
	c.value = 9;
	call_start_parked(&c, "S: an EQ writer");
	for (i = 0; i < lfp_ring_capacity(&eq->events); i++)
		CHECK(lfp_eq_read(eq, &ev, &v, sizeof(v), 0) == (ssize_t)sizeof(v),
		      "empty the EQ");
	ring_skip(&eq->events, ((uint64_t)1 << 31) + lfp_ring_capacity(&eq->events));
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "S: the parked EQ writer hung");
	call_join(&c);
	CHECK(c.ret == (ssize_t)sizeof(v), "S: a write to an empty EQ returned %zd "
	      "after its guess of head went 2^31 positions stale (an overrun)",
	      c.ret);
	v = 0;
	n = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(n == (ssize_t)sizeof(v) && v == 9, "S: EQ read %zd", n);
	v = 10;
	CHECK(lfp_eq_write(eq, 1, &v, sizeof(v), 0) == (ssize_t)sizeof(v),
	      "S: the EQ refuses writes");
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
	s2_peek();
	printf("  S: ok: a producer or consumer whose index guess went 2^31 "
	       "positions stale re-reads it (ring, EQ); a peek whose went 2^32 "
	       "stale returns the head (S2)\n");
}

/* ================================================================ X */

/*
 * The index ring's consumer gives its positions back (I4) only after its
 * copies: a producer must find the ring full while a consumer is parked
 * between its claim and its copy-out, and the consumer copies the entry it
 * claimed.
 */
static void test_x(void)
{
	struct lfp_ring *ring;
	struct call c;
	uint64_t v;

	CHECK(lfp_ring_create_flags(4, sizeof(v), LFP_SINGLE_PRODUCER |
	                            LFP_SINGLE_CONSUMER, &ring) == 0,
	      "lfp_ring_create_flags");
	for (v = 1; v <= 4; v++)
		CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == 0, "fill");
	call_init(&c, CALL_RING_DEQ, "ring.idx.claimed", ring);
	c.ring = ring;
	call_start_parked(&c, "X: the consumer of entry 1");
	v = 5;
	CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == -EAGAIN, "X: an enqueue "
	      "found room in a full index ring while its consumer was between "
	      "its claim and its copy-out (the position was given back first)");
	parker_release(&c.park);
	CHECK(call_wait(&c, 10), "X: the parked consumer hung");
	call_join(&c);
	CHECK(c.ret == (ssize_t)sizeof(v) && c.value == 1, "X: the parked "
	      "consumer copied out %llu, not 1", (unsigned long long)c.value);
	CHECK(lfp_ring_enqueue(ring, &v, sizeof(v)) == 0, "X: enqueue 5");
	for (v = 2; v <= 5; v++) {
		uint64_t got = 0;

		CHECK(lfp_ring_dequeue(ring, &got, sizeof(got)) == (ssize_t)sizeof(got) &&
		      got == v, "X: dequeue %llu: %llu", (unsigned long long)v,
		      (unsigned long long)got);
	}
	lfp_ring_destroy(ring);
	printf("  X: ok: an index ring's consumer gives positions back only "
	       "after its copies\n");
}

/* ================================================================ K */

/*
 * lfp_cq_signal's bookkeeping.  (1) 2^31 signals and more with no sread
 * between them: the next sread returns -EAGAIN for them at once, and the
 * one after waits out its timeout (the counts were 32-bit and compared as
 * serial numbers: past 2^31 every sread returned at once, for good).
 * (2) A signal that comes while an sread is blocked is that sread's, even
 * when it returns completions: the next sread waits (it used to be
 * remembered, and the next sread returned -EAGAIN after 0 ms).
 */
#define K_WAIT_MS 200

static void k_next_waits(struct lfp_cq *cq, const char *on, const char *after)
{
	struct lfp_cq_entry buf[1];
	uint64_t t0 = stress_now_ns();
	ssize_t r = lfp_cq_sread(cq, buf, 1, NULL, K_WAIT_MS);
	double secs = stress_seconds_since(t0);

	CHECK(r == -EAGAIN && secs >= K_WAIT_MS * 0.75e-3, "K: %s: after %s, an "
	      "sread(%d ms) returned %zd after %.3f s: a signal already returned "
	      "for ended it", on, after, K_WAIT_MS, r, secs);
}

static void k_one(enum lfp_wait_obj obj)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = open_cq(obj, NULL, 16, NULL);
	struct lfp_cq_entry buf[4];
	uintptr_t seq = 0;
	struct call t;
	ssize_t r;

	/* (1) The state 2^31 + 1 signals with no sread leave, written
	 * directly (2^31 calls take tens of seconds). */
	{
		/* Through a register: a constant this large is no operand of
		 * a 64-bit store immediate. */
		uint64_t n = ((uint64_t)1 << 31) + 1;

		__asm__("" : "+r"(n));
		lfp__st_rel_u64(&cq->signals, n);
	}
	r = lfp_cq_sread(cq, buf, 1, NULL, 5000);
	CHECK(r == -EAGAIN, "K: %s: sread after 2^31 + 1 remembered signals "
	      "returned %zd, not -EAGAIN at once", on, r);
	k_next_waits(cq, on, "2^31 + 1 signals returned for");

	/* (2) Parked just before it sleeps; a completion and a signal come;
	 * it returns the completion. */
	call_init(&t, CALL_CQ_SREAD, "signal.W3", &cq->own);
	t.cq = cq;
	t.count = t.threshold = 1;
	t.timeout = 20000;
	call_start_parked(&t, "K: %s: sread", on);
	cq_put(cq, 1, &seq);
	CHECK(lfp_cq_signal(cq) == 0, "lfp_cq_signal");
	parker_release(&t.park);
	CHECK(call_wait(&t, 10), "K: %s: the sread hung", on);
	call_join(&t);
	CHECK(t.ret == 1 || t.ret == -EAGAIN, "K: %s: sread returned %zd", on, t.ret);
	if (t.ret == -EAGAIN) /* woken by the signal first: the completion waits */
		CHECK(lfp_cq_read(cq, buf, 4) == 1, "K: %s: the completion", on);
	k_next_waits(cq, on, "a signal that came while an sread was blocked");
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_k(void)
{
	each_blocking(k_one);
	printf("  K: ok: signals are 64-bit counts; one that comes during an sread "
	       "is that sread's, whatever it returns (FD, UNSPEC, MUTEX_COND, YIELD)\n");
}

/* ================================================================ T */

/* An sread threshold above the CQ's capacity is capped at it: a full CQ
 * meets it (it used to sleep its whole timeout, forever with -1). */
static void t_one(enum lfp_wait_obj obj)
{
	const char *on = obj_name(obj);
	struct lfp_cq *cq = open_cq(obj, NULL, 4, NULL);
	struct lfp_cq_entry buf[16];
	size_t threshold = 8;
	uintptr_t seq = 0;
	uint64_t t0;
	ssize_t r;

	cq_put(cq, 4, &seq);
	t0 = stress_now_ns();
	r = lfp_cq_sread(cq, buf, 16, &threshold, 3000);
	CHECK(r == 4 && stress_seconds_since(t0) < 1.5, "T: %s: sread(threshold 8, "
	      "count 16) on a full CQ of 4 returned %zd after %.2f s of its 3 s", on,
	      r, stress_seconds_since(t0));
	CHECK(lfp_cq_close(cq) == 0, "lfp_cq_close");
}

static void test_t(void)
{
	each_blocking(t_one);
	printf("  T: ok: an sread threshold above the capacity is capped at it "
	       "(FD, UNSPEC, MUTEX_COND, YIELD)\n");
}

/* ================================================================ O */

/* Read errors until the overrun entry: 1 when the error with data `data`
 * came out before it. */
static int o_drain(struct lfp_eq *eq, uint64_t data, const char *what)
{
	struct lfp_eq_err_entry e;
	int seen = 0, n;
	ssize_t r;

	for (n = 0; n < 1000; n++) {
		memset(&e, 0, sizeof(e));
		r = lfp_eq_readerr(eq, &e, 0);
		if (r == -EAGAIN) {
			sleep_ms(1); /* an error write in flight */
			continue;
		}
		CHECK(r == (ssize_t)sizeof(e), "O: %s: readerr %zd", what, r);
		if (e.err == LFP_EOVERRUN)
			return seen;
		seen |= e.data == data;
	}
	CHECK(0, "O: %s: readerr never reached the overrun entry", what);
	return 0;
}

/* Fill an EQ of 2 events (values 1 and 2) and overrun it. */
static void o_fill(struct lfp_eq *eq)
{
	uint64_t v;

	for (v = 1; v <= 2; v++)
		CHECK(lfp_eq_write(eq, 1, &v, sizeof(v), 0) == (ssize_t)sizeof(v),
		      "fill");
	CHECK(lfp_eq_write(eq, 1, &v, sizeof(v), 0) == -LFP_EOVERRUN, "overrun");
}

/* Read the two events o_fill queued, in order; then reads give
 * -LFP_EAVAIL. */
static void o_read_queued(struct lfp_eq *eq, const char *what)
{
	uint64_t v = 0, want;
	uint32_t ev;
	ssize_t r;

	for (want = 1; want <= 2; want++) {
		r = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
		CHECK(r == (ssize_t)sizeof(v) && v == want, "%s: event %llu of the "
		      "2 queued before the overrun: read returned %zd (value %llu)",
		      what, (unsigned long long)want, r, (unsigned long long)v);
	}
	r = lfp_eq_read(eq, &ev, &v, sizeof(v), 0);
	CHECK(r == -LFP_EAVAIL, "%s: drained: read returned %zd", what, r);
}

/* Overrun an EQ of 2 events and drain them: reads give -LFP_EAVAIL. */
static void o_overrun(struct lfp_eq *eq)
{
	o_fill(eq);
	o_read_queued(eq, "O");
}

/* Open an EQ of 2 events with an error writer (error data `value`) parked
 * at schedule point `point`. */
static struct lfp_eq *o_parked_writer(struct call *w, const char *point,
                                      uint64_t value, const char *what)
{
	struct lfp_eq_attr a = { .size = 2 };
	struct lfp_eq *eq;

	CHECK(lfp_eq_open(&a, &eq, NULL) == 0, "lfp_eq_open");
	call_init(w, CALL_EQ_WRITE_ERR, point, &eq->errq);
	w->eq = eq;
	w->value = value;
	call_start_parked(w, "%s", what);
	return eq;
}

/*
 * An error write racing the overrun is either read before the overrun
 * entry or refused: never accepted and then lost.  (1) The writer parked
 * after claiming its position while the EQ overruns and a reader reaches
 * readerr.  (2) The writer parked before its claim while a readerr peeks
 * the overrun entry: every readerr after it returns the overrun entry.
 */
static void test_o(void)
{
	struct lfp_eq_err_entry e;
	struct lfp_eq *eq;
	struct call w;

	eq = o_parked_writer(&w, "errq.write.claimed", 77, "O: an error writer");
	o_overrun(eq);
	memset(&e, 0, sizeof(e));
	CHECK(lfp_eq_readerr(eq, &e, 0) == -EAGAIN || e.err != LFP_EOVERRUN || 1,
	      "readerr");
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "O: the error writer hung");
	call_join(&w);
	CHECK(w.ret == -LFP_EOVERRUN || (w.ret == (ssize_t)sizeof(e) &&
	                                 o_drain(eq, 77, "(1)")),
	      "O: an error write that raced the overrun returned %zd (accepted) "
	      "and was never read: readerr returned the overrun entry first",
	      w.ret);
	(void)o_drain(eq, 77, "(1), after");
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");

	eq = o_parked_writer(&w, "errq.write.half", 78, "O: an error writer");
	o_overrun(eq);
	memset(&e, 0, sizeof(e));
	CHECK(lfp_eq_readerr(eq, &e, LFP_PEEK) == (ssize_t)sizeof(e) &&
	      e.err == LFP_EOVERRUN, "O: (2): readerr(LFP_PEEK) after the overrun");
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "O: the error writer hung");
	call_join(&w);
	memset(&e, 0, sizeof(e));
	CHECK(lfp_eq_readerr(eq, &e, 0) == (ssize_t)sizeof(e) &&
	      e.err == LFP_EOVERRUN, "O: (2): after readerr(LFP_PEEK) showed the "
	      "overrun entry, a readerr returned error %d (data %llu; the racing "
	      "write returned %zd)", e.err, (unsigned long long)e.data, w.ret);
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");

	/* (3) As (2), with the events still queued when readerr returns the
	 * overrun entry: the writer's void entry, queued after that, must
	 * not hold them back (LFP_BROKEN=O3: every read then returned
	 * -LFP_EAVAIL for good, and the events were lost). */
	eq = o_parked_writer(&w, "errq.write.half", 79, "O3: an error writer");
	o_fill(eq);
	memset(&e, 0, sizeof(e));
	CHECK(lfp_eq_readerr(eq, &e, 0) == (ssize_t)sizeof(e) &&
	      e.err == LFP_EOVERRUN, "O3: readerr after the overrun");
	parker_release(&w.park);
	CHECK(call_wait(&w, 10), "O3: the error writer hung");
	call_join(&w);
	CHECK(w.ret == -LFP_EOVERRUN, "O3: the error write that raced the "
	      "overrun returned %zd after readerr returned the overrun entry",
	      w.ret);
	o_read_queued(eq, "O3");
	CHECK(lfp_eq_close(eq) == 0, "lfp_eq_close");
	printf("  O: ok: an error write racing the overrun is read before the "
	       "overrun entry or refused, a peek included; the events queued "
	       "before the overrun are read after it\n");
}

/* ================================================================ Q */

/*
 * Cancellation.  (1) A thread cancelled while asleep in a blocking call
 * (every object and wait object, wait sets too) leaves nothing held: the
 * next write completes, the event is read, close succeeds.  (The condition
 * sleep held its mutex when cancelled: the next write blocked for good in
 * its broadcast.)  (2) A thread with a cancellation request pending is not
 * cancelled inside a call that does not block: a post that was announced
 * would never be written (the eventfd write is a cancellation point).
 */
struct q_target {
	const char *name;
	struct lfp_eq *eq;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	struct lfp_wait *ws;
};

static void *q_sleeper(void *arg)
{
	struct q_target *t = arg;
	struct lfp_cq_entry e[1];
	uint64_t v;
	uint32_t ev;

	if (t->ws)
		(void)lfp_wait(t->ws, -1);
	else if (t->eq)
		(void)lfp_eq_sread(t->eq, &ev, &v, sizeof(v), -1, 0);
	else if (t->cq)
		(void)lfp_cq_sread(t->cq, e, 1, NULL, -1);
	else
		(void)lfp_cntr_wait(t->cntr, 1, -1);
	return arg; /* not PTHREAD_CANCELED: it returned */
}

static void q_cancel_asleep(struct q_target *t)
{
	struct timespec ts;
	pthread_t th;
	void *res = NULL;
	struct call w;
	int ret;

	stress_spawn(&th, q_sleeper, t);
	sleep_ms(50); /* asleep by now, or it will be: only the sleep acts */
	CHECK(pthread_cancel(th) == 0, "pthread_cancel");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	ret = pthread_timedjoin_np(th, &res, &ts);
	CHECK(ret == 0, "Q: %s: a thread asleep in a blocking call was not "
	      "cancelled within 5 s (the sleep is no cancellation point)", t->name);
	CHECK(res == PTHREAD_CANCELED, "Q: %s: the call returned instead", t->name);
	/* The next write must not block. */
	if (t->eq) {
		call_init(&w, CALL_EQ_WRITE, NULL, NULL);
		w.eq = t->eq;
		w.event = 1;
		w.value = 5;
	} else if (t->cq) {
		call_init(&w, CALL_CQ_WRITE, NULL, NULL);
		w.cq = t->cq;
		w.value = 5;
	} else {
		call_init(&w, CALL_CNTR_INC, NULL, NULL);
		w.cntr = t->cntr;
		w.value = 1;
	}
	call_start(&w);
	CHECK(call_wait(&w, 5), "Q: %s: a write after a sleeper was cancelled "
	      "blocked 5 s (the sleeper's lock was left held)", t->name);
	call_join(&w);
}

static void q_check_read(struct q_target *t)
{
	struct lfp_cq_entry e[1];
	uint64_t v = 0;
	uint32_t ev;

	if (t->eq)
		CHECK(lfp_eq_read(t->eq, &ev, &v, sizeof(v), 0) == (ssize_t)sizeof(v) &&
		      v == 5, "Q: %s: the event is not there", t->name);
	else if (t->cq)
		CHECK(lfp_cq_read(t->cq, e, 1) == 1 && e[0].op_context == (void *)5,
		      "Q: %s: the completion is not there", t->name);
	else
		CHECK(lfp_cntr_read(t->cntr) == 1, "Q: %s: the counter is %llu",
		      t->name, (unsigned long long)lfp_cntr_read(t->cntr));
}

static void q_objects(enum lfp_wait_obj obj)
{
	char name[64];
	struct q_target t;
	int kind;

	for (kind = 0; kind < 3; kind++) {
		memset(&t, 0, sizeof(t));
		snprintf(name, sizeof(name), "%s %s", kind == 0 ? "EQ" : kind == 1 ?
		         "CQ" : "counter", obj_name(obj));
		t.name = name;
		if (kind == 0)
			t.eq = open_eq(obj, 16, 0, 0, NULL);
		else if (kind == 1)
			t.cq = open_cq(obj, NULL, 16, NULL);
		else
			t.cntr = open_cntr(obj, NULL, NULL);
		q_cancel_asleep(&t);
		q_check_read(&t);
		CHECK((t.eq ? lfp_eq_close(t.eq) : t.cq ? lfp_cq_close(t.cq) :
		       lfp_cntr_close(t.cntr)) == 0, "Q: %s: close", name);
	}
}

static void q_sets(void)
{
	static const enum lfp_wait_obj set_objs[] = {
		LFP_WAIT_FD, LFP_WAIT_POLLFD, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD
	};
	char name[64];
	struct q_target t;
	size_t i;

	for (i = 0; i < sizeof(set_objs) / sizeof(set_objs[0]); i++) {
		memset(&t, 0, sizeof(t));
		snprintf(name, sizeof(name), "wait set %s", obj_name(set_objs[i]));
		t.name = name;
		t.ws = open_ws(set_objs[i]);
		t.cq = open_cq(LFP_WAIT_SET, t.ws, 16, NULL);
		q_cancel_asleep(&t);
		q_check_read(&t);
		CHECK(lfp_wait(t.ws, 0) == 0 || 1, "lfp_wait");
		CHECK(lfp_cq_close(t.cq) == 0 && lfp_wait_close(t.ws) == 0,
		      "Q: %s: close", name);
	}
}

/* (2): with a cancellation request pending, a write that posts the eventfd
 * (a waiter armed by trywait) and a trywait that drains it both return. */
struct q_pending {
	struct lfp_eq *eq;
	int trywait;
	_Atomic int returned;
};

static void *q_pending_main(void *arg)
{
	struct q_pending *q = arg;
	struct lfp_fid *fid = &q->eq->fid;
	uint64_t v = 6;

	pthread_cancel(pthread_self()); /* pending: acted on at a cancellation point */
	if (q->trywait)
		(void)lfp_trywait(&fid, 1);
	else
		(void)lfp_eq_write(q->eq, 1, &v, sizeof(v), 0);
	atomic_store(&q->returned, 1);
	pthread_testcancel();
	return NULL;
}

static void q_pending(void)
{
	struct q_pending q;
	struct lfp_fid *fid;
	pthread_t th;
	uint32_t ev;
	uint64_t v;

	memset(&q, 0, sizeof(q));
	q.eq = open_eq(LFP_WAIT_FD, 16, 0, 0, NULL);
	fid = &q.eq->fid;
	CHECK(lfp_trywait(&fid, 1) == 0, "trywait");
	stress_spawn(&th, q_pending_main, &q);
	stress_join(th);
	CHECK(atomic_load(&q.returned), "Q: a thread with a cancellation request "
	      "pending was cancelled inside lfp_eq_write (in its eventfd write)");
	CHECK(poll_in(fd_of(fid), 1000) == 1, "Q: the write's eventfd post was "
	      "never written: the armed waiter's fd stayed quiet");
	/* The post is pending: a trywait drains it (a read), and must return. */
	q.trywait = 1;
	atomic_store(&q.returned, 0);
	stress_spawn(&th, q_pending_main, &q);
	stress_join(th);
	CHECK(atomic_load(&q.returned), "Q: a thread with a cancellation request "
	      "pending was cancelled inside lfp_trywait (in its eventfd drain)");
	CHECK(lfp_eq_read(q.eq, &ev, &v, sizeof(v), 0) == (ssize_t)sizeof(v) && v == 6,
	      "Q: the event");
	CHECK(lfp_eq_close(q.eq) == 0, "lfp_eq_close");
}

static void test_q(void)
{
	if (STRESS_ASAN) {
		printf("  Q: skipped under AddressSanitizer, which cannot follow a "
		       "cancelled thread's unwinding (stress.h); the plain and "
		       "ThreadSanitizer builds run it\n");
		return;
	}
	each_blocking(q_objects);
	q_sets();
	q_pending();
	printf("  Q: ok: a sleeper cancelled in any blocking call leaves nothing "
	       "held; a pending request is not acted on inside a non-blocking call\n");
}

static const struct test tests[] = {
	{ 'A', "A: no sleeper with work pending", test_a },
	{ 'B', "B: no poll set member lost", test_b },
	{ 'D', "D1: a member moved between poll sets", test_d1 },
	{ 'C', "C: sread keeps its timeout, asleep", test_c },
	{ 'E', "E: a signal before sread is remembered", test_e },
	{ 'F', "F: errors before events", test_f },
	{ 'G', "G: overrun is final", test_g },
	{ 'G', "G2: an EQ overruns only when full", test_g2 },
	{ 'G', "G3: full is never judged from a stale tail", test_g3 },
	{ 'G', "G5: a write in flight at the overrun wakes", test_g5 },
	{ 'I', "I: the wake comes after the poll link's push", test_i },
	{ 'J', "J: the error count never hides an error", test_j },
	{ 'L', "L: a producer never takes a slot still being copied out", test_l },
	{ 'S', "S: a stale index guess is re-read, not reported", test_s },
	{ 'X', "X: an index ring gives positions back after the copies", test_x },
	{ 'K', "K: cq_signal's counts never wrap; one during an sread is its", test_k },
	{ 'T', "T: an sread threshold above capacity is capped", test_t },
	{ 'O', "O: an error write racing the overrun is read or refused", test_o },
	{ 'Q', "Q: cancellation leaves nothing held", test_q },
	{ 'W', "W: every schedule point walked", test_walk },
	{ 'H', "H: lfp_wait against add_fd/del_fd", test_h },
};

int main(int argc, char **argv)
{
	const char *b = argc > 1 ? argv[1] : getenv("LFP_BROKEN");
	const char *only = getenv("LFP_SCHED_ONLY");
	struct stress_watchdog wd;
	uint64_t t0 = stress_now_ns();
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (b && *b) {
		CHECK((strlen(b) == 1 && strchr("ABCEFGIJLSXKTOQH", b[0])) ||
		      strcmp(b, "O3") == 0 || strcmp(b, "D1") == 0 ||
		      strcmp(b, "J2") == 0 || strcmp(b, "S2") == 0 ||
		      strcmp(b, "I2") == 0 || strcmp(b, "J3") == 0 ||
		      strcmp(b, "G2") == 0 || strcmp(b, "G3") == 0 ||
		      strcmp(b, "G4") == 0 || strcmp(b, "G5") == 0 ||
		      strcmp(b, "I3") == 0,
		      "LFP_BROKEN=%s: one of A B D1 C E F G G2 G3 G4 G5 I I2 I3 J J2 J3 L S S2 X K T O O3 "
		      "Q, "
		      "or H (under TSan)", b);
		snprintf(broken, sizeof(broken), "%s", b);
		printf("stress_sched: LFP_BROKEN=%s: defect %s's old behaviour is "
		       "on: its test must fail\n", broken, broken);
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (!only_ok(only, tests[i].letter))
			continue;
		stress_watchdog_start(&wd, STRESS_TSAN ? 300 : 120, tests[i].what,
		                      NULL, NULL);
		tests[i].fn();
		stress_watchdog_stop(&wd);
	}
	printf("stress_sched: ok in %.1f s%s%s\n", stress_seconds_since(t0),
	       broken[0] ? " with LFP_BROKEN=" : "", broken);
	return 0;
}
