/*
 * lfpoll counter: single-threaded behaviour of cntr.h.
 *
 * Values after every update call, lfp_cntr_wait's return codes and
 * timeouts, lfp_control, trywait on a counter's own fd, and counters in poll
 * sets under fi_poll(3)'s rule: a counter is reported when inc/incerr moved
 * it since this set last returned it, not after the application's own
 * add/set, and a change is consumed only when its context was returned.
 * Waking lfp_cntr_wait from another thread is in stress_sets.c.
 */
#include <lfpoll/cntr.h>

#include <lfpoll/cq.h>
#include <lfpoll/poll.h>

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "support.h"

static struct lfp_cntr *open_cntr(enum lfp_wait_obj obj, void *context)
{
	struct lfp_cntr_attr a = { .wait_obj = obj };

	return open_cntr_attr(&a, context);
}

/* ------------------------------------------------------------ open */

Test(cntr, open_null_attr_and_bad_arguments)
{
	struct lfp_cntr_attr a;
	struct lfp_cntr *c = NULL;
	struct lfp_wait *ws;
	enum lfp_wait_obj obj = LFP_WAIT_FD;

	cr_assert_eq(lfp_cntr_open(NULL, &c, (void *)7), 0);
	cr_assert_eq(c->fid.fclass, LFP_CLASS_CNTR);
	cr_assert_eq(c->fid.context, (void *)7);
	cr_assert_eq(lfp_control(&c->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_NONE);
	cr_assert_eq(lfp_cntr_read(c), 0);
	cr_assert_eq(lfp_cntr_readerr(c), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);

	c = NULL;
	cr_assert_eq(lfp_cntr_open(NULL, NULL, NULL), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.flags = 1;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL, "flags");
	memset(&a, 0, sizeof(a));
	a.wait_obj = (enum lfp_wait_obj)42;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL, "bad wait object");
	a.wait_obj = LFP_WAIT_POLLFD;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL, "POLLFD on a counter");
	a.wait_obj = LFP_WAIT_SET;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL, "SET without a set");
	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	a.wait_obj = LFP_WAIT_MUTEX_COND;
	a.wait_set = ws;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL, "a set without SET");
	cr_assert_null(c);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(lfp_cntr_close(NULL), -EINVAL);
}

/* ------------------------------------------------------------ values */

Test(cntr, update_calls_give_expected_values)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_NONE, NULL);

	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_cntr_inc(c, 5), 0);
	cr_assert_eq(lfp_cntr_read(c), 6);
	cr_assert_eq(lfp_cntr_readerr(c), 0);
	cr_assert_eq(lfp_cntr_add(c, 10), 0);
	cr_assert_eq(lfp_cntr_read(c), 16);
	cr_assert_eq(lfp_cntr_incerr(c, 2), 0);
	cr_assert_eq(lfp_cntr_adderr(c, 3), 0);
	cr_assert_eq(lfp_cntr_readerr(c), 5);
	cr_assert_eq(lfp_cntr_read(c), 16, "error updates leave the value");
	cr_assert_eq(lfp_cntr_set(c, 100), 0);
	cr_assert_eq(lfp_cntr_read(c), 100);
	cr_assert_eq(lfp_cntr_readerr(c), 5, "set leaves the error count");
	cr_assert_eq(lfp_cntr_seterr(c, 1), 0);
	cr_assert_eq(lfp_cntr_readerr(c), 1);
	cr_assert_eq(lfp_cntr_read(c), 100);
	cr_assert_eq(lfp_cntr_set(c, 0), 0);
	cr_assert_eq(lfp_cntr_read(c), 0, "set can lower the value");
	cr_assert_eq(lfp_cntr_inc(c, UINT64_MAX), 0);
	cr_assert_eq(lfp_cntr_read(c), UINT64_MAX);
	cr_assert_eq(lfp_cntr_inc(c, 2), 0);
	cr_assert_eq(lfp_cntr_read(c), 1, "64-bit wrap");
	cr_assert_eq(lfp_cntr_inc(c, 0), 0, "inc by 0 is legal");

	cr_assert_eq(lfp_cntr_inc(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_incerr(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_add(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_adderr(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_set(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_seterr(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cntr_read(NULL), 0);
	cr_assert_eq(lfp_cntr_readerr(NULL), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
}

/* ------------------------------------------------------------ wait */

static void wait_codes(enum lfp_wait_obj obj)
{
	struct lfp_cntr *c = open_cntr(obj, NULL);
	int64_t t0, dt;
	int ret;

	cr_assert_eq(lfp_cntr_wait(c, 0, 0), 0, "threshold 0 is always reached");
	cr_assert_eq(lfp_cntr_inc(c, 3), 0);
	cr_assert_eq(lfp_cntr_wait(c, 3, 0), 0);
	cr_assert_eq(lfp_cntr_wait(c, 2, -1), 0, "reached, infinite timeout");
	cr_assert_eq(lfp_cntr_wait(c, 4, 0), -ETIMEDOUT, "timeout 0, not reached");

	t0 = now_ms();
	ret = lfp_cntr_wait(c, 4, 50);
	dt = now_ms() - t0;
	cr_assert_eq(ret, -ETIMEDOUT, "%d", ret);
	cr_assert_geq(dt, 50, "returned after %lld ms", (long long)dt);

	/* The error count is taken at entry: an earlier error does not count. */
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	t0 = now_ms();
	ret = lfp_cntr_wait(c, 4, 50);
	dt = now_ms() - t0;
	cr_assert_eq(ret, -ETIMEDOUT, "error before the call: %d", ret);
	cr_assert_geq(dt, 50, "returned after %lld ms", (long long)dt);

	/* Reached by the application's own add and set as well. */
	cr_assert_eq(lfp_cntr_add(c, 1), 0);
	cr_assert_eq(lfp_cntr_wait(c, 4, 50), 0);
	cr_assert_eq(lfp_cntr_set(c, 1000), 0);
	cr_assert_eq(lfp_cntr_wait(c, 999, 50), 0);
	cr_assert_eq(lfp_cntr_wait(NULL, 1, 0), -EINVAL);
	cr_assert_eq(lfp_cntr_close(c), 0);
}

Test(cntr, wait_codes_fd)         { wait_codes(LFP_WAIT_FD); }
Test(cntr, wait_codes_mutex_cond) { wait_codes(LFP_WAIT_MUTEX_COND); }
Test(cntr, wait_codes_yield)      { wait_codes(LFP_WAIT_YIELD); }
Test(cntr, wait_codes_unspec)     { wait_codes(LFP_WAIT_UNSPEC); }

Test(cntr, wait_on_none_and_set_is_enosys)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_NONE, NULL);
	struct lfp_cntr_attr a;
	struct lfp_wait *ws;

	cr_assert_eq(lfp_cntr_inc(c, 5), 0);
	cr_assert_eq(lfp_cntr_wait(c, 1, 0), -ENOSYS);
	cr_assert_eq(lfp_cntr_wait(c, 100, 10), -ENOSYS);
	cr_assert_eq(lfp_cntr_close(c), 0);

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = ws;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), 0);
	cr_assert_eq(lfp_cntr_inc(c, 5), 0);
	cr_assert_eq(lfp_cntr_wait(c, 1, 10), -ENOSYS);
	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "a counter is a member");
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

/* ------------------------------------------------------------ control */

Test(cntr, control_and_trywait)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_FD, NULL);
	struct lfp_fid *f = &c->fid;
	struct lfp_mutex_cond mc = { NULL, NULL };
	enum lfp_wait_obj obj;
	int fd = -1;

	cr_assert_eq(lfp_control(f, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_FD);
	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0, "idle counter");
	cr_assert(!fd_readable(fd, 0));
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert(fd_readable(fd, 0), "inc after trywait 0: fd not readable");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN, "the inc is pending");
	cr_assert_eq(lfp_trywait(&f, 1), 0, "the inc was reported once");
	cr_assert(!fd_readable(fd, 0));
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert(fd_readable(fd, 0), "incerr after trywait 0: fd not readable");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN, "the incerr is pending");
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(lfp_control(f, 999, &fd), -ENOSYS);
	cr_assert_eq(lfp_cntr_close(c), 0);

	c = open_cntr(LFP_WAIT_MUTEX_COND, NULL);
	cr_assert_eq(lfp_control(&c->fid, LFP_GETWAIT, &mc), 0);
	cr_assert_not_null(mc.mutex);
	cr_assert_not_null(mc.cond);
	cr_assert_eq(lfp_cntr_close(c), 0);

	c = open_cntr(LFP_WAIT_YIELD, NULL);
	cr_assert_eq(lfp_control(&c->fid, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_eq(lfp_cntr_close(c), 0);

	c = open_cntr(LFP_WAIT_NONE, NULL);
	f = &c->fid;
	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_eq(lfp_trywait(&f, 1), -EINVAL, "trywait on NONE");
	cr_assert_eq(lfp_cntr_close(c), 0);
}

/* ------------------------------------------------------------ poll sets */

static int poll_has(struct lfp_poll *ps, void *ctx, int count)
{
	void *out[64];
	int n, i, found = 0;

	cr_assert_leq(count, 64);
	n = lfp_poll(ps, out, count);
	cr_assert_geq(n, 0, "lfp_poll: %d", n);
	cr_assert_leq(n, count);
	for (i = 0; i < n; i++)
		found += out[i] == ctx;
	cr_assert_leq(found, 1, "a context reported twice in one call");
	return found;
}

Test(cntr, poll_reports_inc_and_incerr_once)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_NONE, (void *)0xc1);
	struct lfp_poll *ps;
	void *out[4];

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "a fresh counter has not changed");

	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 1);
	cr_assert_eq(out[0], (void *)0xc1);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "reported once per change");

	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert(poll_has(ps, (void *)0xc1, 4), "incerr must be reported");
	cr_assert_eq(lfp_poll(ps, out, 4), 0);

	/* Several changes between polls: one report. */
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 0);

	cr_assert_eq(lfp_cntr_close(c), -EBUSY, "closing a poll-set member");
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(cntr, poll_does_not_report_application_add_or_set)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_FD, (void *)0xc2);
	struct lfp_poll *ps;
	void *out[4];

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);

	cr_assert_eq(lfp_cntr_add(c, 5), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "add is the application's change");
	cr_assert_eq(lfp_cntr_set(c, 9), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "set is the application's change");
	cr_assert_eq(lfp_cntr_adderr(c, 1), 0);
	cr_assert_eq(lfp_cntr_seterr(c, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "adderr/seterr");

	/* fi_poll(3): reported if changed since the last fi_poll, fi_cntr_set
	 * or fi_cntr_add: an inc followed by the application's set is reset. */
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_cntr_set(c, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "inc then set: reset");
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert_eq(lfp_cntr_add(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "incerr then add: reset");

	/* And an inc after the reset is reported again. */
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 1);
	cr_assert_eq(out[0], (void *)0xc2);

	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/*
 * fi_poll(3) resets a counter's change at fi_poll, fi_cntr_set and
 * fi_cntr_add only.  An application that clears or bumps its error count
 * must not hide a completion that came before: the poll set still
 * reports it, and a wait set still wakes for it.
 */
Test(cntr, error_changes_hide_no_earlier_completion)
{
	struct lfp_cntr_attr a;
	struct lfp_cntr *c, *m;
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	struct lfp_fid *wf;
	void *out[4];

	c = open_cntr(LFP_WAIT_FD, (void *)0xc6);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);

	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_cntr_adderr(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "inc then adderr: the inc was hidden");
	cr_assert_eq(out[0], (void *)0xc6);
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert_eq(lfp_cntr_seterr(c, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "incerr then seterr: the incerr was hidden");
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "each completion is reported once");
	cr_assert_eq(lfp_cntr_adderr(c, 2), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "adderr alone is no event");

	/* A wait set's member: the set's waiter must not sleep through it. */
	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	wf = &ws->fid;
	a = (struct lfp_cntr_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_cntr_open(&a, &m, (void *)0xc7), 0);
	cr_assert_eq(lfp_trywait(&wf, 1), 0);
	cr_assert_eq(lfp_cntr_inc(m, 1), 0);
	cr_assert_eq(lfp_cntr_seterr(m, 5), 0);
	cr_assert_eq(lfp_trywait(&wf, 1), -EAGAIN,
	             "inc then seterr: the set would sleep with the inc pending");
	cr_assert_eq(lfp_trywait(&wf, 1), 0, "the inc was reported once");

	cr_assert_eq(lfp_cntr_close(m), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(cntr, poll_consumes_change_only_when_returned)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_NONE, (void *)0xc3);
	struct lfp_poll *ps;
	void *out[2];

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_poll(ps, NULL, 0), 0, "count 0 returns nothing");
	cr_assert_eq(lfp_poll(ps, out, 0), 0, "count 0 returns nothing");
	cr_assert_eq(lfp_poll(ps, out, 1), 1, "the change was not consumed by count 0");
	cr_assert_eq(out[0], (void *)0xc3);
	cr_assert_eq(lfp_poll(ps, out, 1), 0);
	cr_assert_eq(lfp_poll(ps, out, -1), -EINVAL);
	cr_assert_eq(lfp_poll(ps, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(cntr, poll_with_count_one_reports_every_changed_counter)
{
	enum { N = 8 };
	struct lfp_cntr *c[N];
	struct lfp_poll *ps;
	void *out[1];
	int seen[N] = { 0 };
	int i, n, round;

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	for (i = 0; i < N; i++) {
		c[i] = open_cntr(LFP_WAIT_NONE, (void *)(uintptr_t)(i + 1));
		cr_assert_eq(lfp_poll_add(ps, &c[i]->fid, 0), 0);
	}
	/* Counters 1, 3, 4 and 6 change (inc or incerr). */
	cr_assert_eq(lfp_cntr_inc(c[1], 1), 0);
	cr_assert_eq(lfp_cntr_incerr(c[3], 1), 0);
	cr_assert_eq(lfp_cntr_inc(c[4], 2), 0);
	cr_assert_eq(lfp_cntr_inc(c[6], 1), 0);
	cr_assert_eq(lfp_cntr_incerr(c[6], 1), 0);
	for (round = 0; round < 4; round++) {
		n = lfp_poll(ps, out, 1);
		cr_assert_eq(n, 1, "round %d: %d", round, n);
		i = (int)(uintptr_t)out[0] - 1;
		cr_assert(i >= 0 && i < N, "unknown context %p", out[0]);
		cr_assert_eq(seen[i], 0, "counter %d reported twice", i);
		seen[i] = 1;
	}
	cr_assert(seen[1] && seen[3] && seen[4] && seen[6],
	          "changed counters not all reported: %d %d %d %d",
	          seen[1], seen[3], seen[4], seen[6]);
	cr_assert_eq(lfp_poll(ps, out, 1), 0, "nothing left");
	for (i = 0; i < N; i++) {
		cr_assert_eq(lfp_poll_del(ps, &c[i]->fid, 0), 0);
		cr_assert_eq(lfp_cntr_close(c[i]), 0);
	}
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(cntr, poll_reports_change_made_before_the_add)
{
	struct lfp_cntr *c = open_cntr(LFP_WAIT_NONE, (void *)0xc4);
	struct lfp_poll *ps;
	void *out[2];

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1, "an inc before the add is reported");
	cr_assert_eq(lfp_poll(ps, out, 2), 0);

	/* After a del and a new add, only new incs count (false positives
	 * are allowed, so only the absence of a false negative is checked). */
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1, "an inc while out of the set");
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* A counter in a poll set and a wait set: the two keep separate state. */
Test(cntr, poll_set_and_wait_set_track_separately)
{
	struct lfp_cntr_attr a;
	struct lfp_cntr *c;
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	struct lfp_fid *wf;
	void *out[2];

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	wf = &ws->fid;
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	a = (struct lfp_cntr_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_cntr_open(&a, &c, (void *)0xc5), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);

	cr_assert_eq(lfp_trywait(&wf, 1), 0);
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_trywait(&wf, 1), -EAGAIN, "the wait set sees the inc");
	cr_assert_eq(lfp_poll(ps, out, 2), 1, "the poll set still sees the inc");
	cr_assert_eq(out[0], (void *)0xc5);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	cr_assert_eq(lfp_trywait(&wf, 1), 0);

	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* fi_cntr(3)'s events attribute: completions are what a counter counts. */
Test(cntr, events_attribute_accepts_completions_only)
{
	struct lfp_cntr_attr a;
	struct lfp_cntr *c = NULL;

	memset(&a, 0, sizeof(a));
	a.events = LFP_CNTR_EVENTS_COMP;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), 0);
	cr_assert_eq(lfp_cntr_inc(c, 3), 0);
	cr_assert_eq(lfp_cntr_read(c), 3);
	cr_assert_eq(lfp_cntr_close(c), 0);
	a.events = (enum lfp_cntr_events)1;
	c = NULL;
	cr_assert_eq(lfp_cntr_open(&a, &c, NULL), -EINVAL);
	cr_assert_null(c);
}

/* A NULL counter reads 0 and says why in errno. */
Test(cntr, read_of_null_sets_errno)
{
	errno = 0;
	cr_assert_eq(lfp_cntr_read(NULL), 0);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(lfp_cntr_readerr(NULL), 0);
	cr_assert_eq(errno, EINVAL);
}
