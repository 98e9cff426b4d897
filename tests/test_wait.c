/*
 * lfpoll wait set: single-threaded behaviour of wait.h.
 *
 * lfp_wait_open's validation and wait objects; EQs, CQs and counters joined
 * with wait_obj = LFP_WAIT_SET under every wait object (lfp_wait returns 0
 * at once when a member has work, -ETIMEDOUT after the timeout otherwise);
 * LFP_GETWAIT for FD (one fd, readable after trywait 0 and a member write,
 * or when an external fd is readable), POLLFD (the change_index protocol)
 * and MUTEX_COND; external fds; close with members; a set of 1,000 CQs.
 * Threads blocked in lfp_wait are in stress_sets.c; lfp_trywait over mixed
 * arrays is in test_trywait.c.
 */
#include <lfpoll/wait.h>

#include <lfpoll/cntr.h>
#include <lfpoll/cq.h>
#include <lfpoll/eq.h>

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

static struct lfp_cq *member_cq(struct lfp_wait *ws, void *ctx)
{
	struct lfp_cq_attr a = { .size = 16, .wait_obj = LFP_WAIT_SET, .wait_set = ws };

	return open_cq_attr(&a, ctx);
}

static struct lfp_eq *member_eq(struct lfp_wait *ws)
{
	struct lfp_eq_attr a = { .size = 16, .wait_obj = LFP_WAIT_SET, .wait_set = ws };

	return open_eq_attr(&a, NULL);
}

static struct lfp_cntr *member_cntr(struct lfp_wait *ws)
{
	struct lfp_cntr_attr a = { .wait_obj = LFP_WAIT_SET, .wait_set = ws };

	return open_cntr_attr(&a, NULL);
}

/* lfp_wait with nothing to report: -ETIMEDOUT, not before the timeout. */
static void expect_timeout(struct lfp_wait *ws, int ms, const char *what)
{
	int64_t t0 = now_ms(), dt;
	int ret = lfp_wait(ws, ms);

	dt = now_ms() - t0;
	cr_assert_eq(ret, -ETIMEDOUT, "%s: lfp_wait(%d) = %d", what, ms, ret);
	cr_assert_geq(dt, ms, "%s: returned after %lld of %d ms", what, (long long)dt, ms);
}

/* lfp_wait with work pending: 0 at once (no clock check beyond "not the
 * full timeout": a huge timeout would hang the test instead). */
static void expect_ready(struct lfp_wait *ws, const char *what)
{
	int ret = lfp_wait(ws, 10000);

	cr_assert_eq(ret, 0, "%s: lfp_wait = %d", what, ret);
	ret = lfp_wait(ws, 0);
	cr_assert_eq(ret, 0, "%s: lfp_wait(0) = %d", what, ret);
}

/* ------------------------------------------------------------ open */

Test(wait, open_defaults_and_bad_arguments)
{
	struct lfp_wait_attr a;
	struct lfp_wait *ws = NULL;
	enum lfp_wait_obj obj = LFP_WAIT_NONE;
	int fd = -1;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	cr_assert_eq(ws->fid.fclass, LFP_CLASS_WAIT);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_FD, "NULL attr: %d", (int)obj);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(lfp_wait_close(ws), 0);

	ws = NULL;
	cr_assert_eq(lfp_wait_open(NULL, NULL), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_NONE;
	cr_assert_eq(lfp_wait_open(&a, &ws), -EINVAL, "NONE");
	a.wait_obj = LFP_WAIT_SET;
	cr_assert_eq(lfp_wait_open(&a, &ws), -EINVAL, "SET");
	a.wait_obj = (enum lfp_wait_obj)77;
	cr_assert_eq(lfp_wait_open(&a, &ws), -EINVAL, "invalid");
	a.wait_obj = LFP_WAIT_FD;
	a.flags = 1;
	cr_assert_eq(lfp_wait_open(&a, &ws), -EINVAL, "flags");
	cr_assert_null(ws);
	cr_assert_eq(lfp_wait_close(NULL), -EINVAL);
	cr_assert_eq(lfp_wait(NULL, 0), -EINVAL);
}

Test(wait, getwaitobj_for_every_wait_object)
{
	static const struct { enum lfp_wait_obj in, out; } t[] = {
		{ LFP_WAIT_FD, LFP_WAIT_FD },
		{ LFP_WAIT_POLLFD, LFP_WAIT_POLLFD },
		{ LFP_WAIT_MUTEX_COND, LFP_WAIT_MUTEX_COND },
		{ LFP_WAIT_YIELD, LFP_WAIT_YIELD },
		{ LFP_WAIT_UNSPEC, LFP_WAIT_FD },
	};
	struct lfp_wait *ws;
	enum lfp_wait_obj obj;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ws = open_ws(t[i].in);
		cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAITOBJ, &obj), 0);
		cr_assert_eq(obj, t[i].out, "opened %d, reports %d", (int)t[i].in, (int)obj);
		cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAITOBJ, NULL), -EINVAL);
		if (t[i].out == LFP_WAIT_YIELD)
			cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd), -ENODATA);
		cr_assert_eq(lfp_control(&ws->fid, 4242, &fd), -ENOSYS);
		cr_assert_eq(lfp_wait_close(ws), 0);
	}
}

/* ------------------------------------------------------------ members */

static void members_under(enum lfp_wait_obj obj)
{
	struct lfp_wait *ws = open_ws(obj);
	struct lfp_eq *eq = member_eq(ws);
	struct lfp_cq *cq = member_cq(ws, NULL);
	struct lfp_cntr *c = member_cntr(ws);
	struct lfp_cq_entry ce = { &ce };
	struct lfp_cq_err_entry cerr;
	struct lfp_eq_err_entry eerr;
	uint32_t ev;
	uint64_t payload = 7;

	expect_timeout(ws, 30, "idle members");

	cr_assert_eq(lfp_eq_write(eq, LFP_NOTIFY, &payload, sizeof(payload), 0), 8);
	expect_ready(ws, "EQ event");
	cr_assert_eq(lfp_eq_read(eq, &ev, &payload, sizeof(payload), 0), 8);
	expect_timeout(ws, 30, "EQ drained");

	memset(&eerr, 0, sizeof(eerr));
	eerr.err = EIO;
	cr_assert_eq(lfp_eq_write_err(eq, &eerr), (ssize_t)sizeof(eerr));
	expect_ready(ws, "EQ error");
	cr_assert_eq(lfp_eq_readerr(eq, &eerr, 0), (ssize_t)sizeof(eerr));
	expect_timeout(ws, 20, "EQ error read");

	cr_assert_eq(lfp_cq_write(cq, &ce, 1), 1);
	expect_ready(ws, "CQ completion");
	cr_assert_eq(lfp_cq_read(cq, &ce, 1), 1);
	expect_timeout(ws, 30, "CQ drained");

	memset(&cerr, 0, sizeof(cerr));
	cerr.err = EIO;
	cr_assert_eq(lfp_cq_writeerr(cq, &cerr), (ssize_t)sizeof(cerr));
	expect_ready(ws, "CQ error");
	cr_assert_eq(lfp_cq_readerr(cq, &cerr, 0), 1);
	expect_timeout(ws, 20, "CQ error read");

	/* A counter is reported once per change. */
	cr_assert_eq(lfp_cntr_inc(c, 1), 0);
	cr_assert_eq(lfp_wait(ws, 10000), 0, "counter inc");
	expect_timeout(ws, 30, "counter inc seen");
	cr_assert_eq(lfp_cntr_incerr(c, 1), 0);
	cr_assert_eq(lfp_wait(ws, 10000), 0, "counter incerr");
	expect_timeout(ws, 20, "counter incerr seen");

	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "members");
	cr_assert_eq(lfp_eq_close(eq), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "a counter is still a member");
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(wait, members_fd)         { members_under(LFP_WAIT_FD); }
Test(wait, members_pollfd)     { members_under(LFP_WAIT_POLLFD); }
Test(wait, members_mutex_cond) { members_under(LFP_WAIT_MUTEX_COND); }
Test(wait, members_yield)      { members_under(LFP_WAIT_YIELD); }
Test(wait, members_unspec)     { members_under(LFP_WAIT_UNSPEC); }

Test(wait, timeout_zero_does_not_block)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_MUTEX_COND);
	struct lfp_cq *cq = member_cq(ws, NULL);
	struct lfp_cq_entry e = { &e };

	cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_wait(ws, 0), 0);
	cr_assert_eq(lfp_wait(ws, -1), 0, "infinite timeout with work pending");
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

/* ------------------------------------------------------------ GETWAIT */

Test(wait, fd_set_fd_readable_after_trywait_and_member_write)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_cq *cq = member_cq(ws, NULL);
	struct lfp_fid *f = &ws->fid;
	struct lfp_cq_entry e = { &e };
	int fd = -1, fd2 = -1;

	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd2), 0);
	cr_assert_eq(fd, fd2, "one fd for the set");
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0), "idle set: fd readable");
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert(fd_readable(fd, 0), "member write after trywait 0: fd not readable");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	cr_assert(fd_readable(fd, 0), "trywait that found work cleared the fd");
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0), "trywait 0 after the drain: fd still readable");

	/* The member's own trywait goes through the set. */
	f = &cq->fid;
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert(fd_readable(fd, 0), "member write after member trywait 0");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);

	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(wait, fd_set_external_fd)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_fid *f = &ws->fid;
	int p[2], fd = -1;
	char c = 'x';

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd), 0);
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, (void *)0x77), 0);
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, NULL), -EEXIST);
	cr_assert_eq(lfp_wait_add_fd(ws, -1, POLLIN, NULL), -EINVAL);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0), "empty pipe: set fd readable");
	expect_timeout(ws, 20, "empty external pipe");
	cr_assert_eq(write(p[1], &c, 1), 1);
	cr_assert(fd_readable(fd, 0), "a byte in the external pipe: set fd not readable");
	cr_assert_eq(lfp_wait(ws, 10000), 0, "lfp_wait with a readable external fd");
	cr_assert_eq(read(p[0], &c, 1), 1);
	cr_assert(!fd_readable(fd, 0) || lfp_trywait(&f, 1) == 0, "drained pipe");

	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "an external fd is a member");
	cr_assert_eq(lfp_wait_del_fd(ws, p[1]), -ENOENT, "not a member");
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), 0);
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), -ENOENT, "second del");
	cr_assert_eq(write(p[1], &c, 1), 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0), "a removed fd still signals the set");
	cr_assert_eq(lfp_wait_close(ws), 0);
	close(p[0]);
	close(p[1]);
}

/* lfp_wait(ws, 0) sees a readable external fd as a ready member, as any
 * longer timeout does, on every kind that takes fds. */
static void external_fd_timeout_zero(enum lfp_wait_obj obj)
{
	struct lfp_wait *ws = open_ws(obj);
	struct lfp_cntr *cn = member_cntr(ws);
	struct lfp_fid *f = &ws->fid;
	int p[2], idle[8][2], i;
	char c = 'z';

	/* Quiet external fds, one more at a time: none may count as ready,
	 * however many the set holds. */
	for (i = 0; i < 8; i++) {
		cr_assert_eq(pipe(idle[i]), 0);
		cr_assert_eq(lfp_wait_add_fd(ws, idle[i][0], POLLIN, NULL), 0);
		cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT, "%d quiet fds", i + 1);
	}
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, NULL), 0);
	/* A member's signal to an armed set that its work no longer backs
	 * (the change taken) leaves the set's own fd readable: that fd is
	 * not a member. */
	if (obj != LFP_WAIT_YIELD)
		cr_assert_eq(lfp_trywait(&f, 1), 0, "arm");
	cr_assert_eq(lfp_cntr_inc(cn, 1), 0);
	cr_assert_eq(lfp_wait(ws, 0), 0, "a counter's change");
	cr_assert_eq(lfp_cntr_read(cn), 1);
	cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT, "empty pipe, the change read");
	cr_assert_eq(write(p[1], &c, 1), 1);
	cr_assert_eq(lfp_wait(ws, 0), 0, "timeout 0, a byte in the external pipe");
	cr_assert_eq(lfp_wait(ws, 0), 0, "still there");
	cr_assert_eq(read(p[0], &c, 1), 1);
	cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT, "read: nothing ready");
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), 0);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(lfp_wait_del_fd(ws, idle[i][0]), 0);
		close(idle[i][0]);
		close(idle[i][1]);
	}
	cr_assert_eq(lfp_cntr_close(cn), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	close(p[0]);
	close(p[1]);
}

Test(wait, external_fd_timeout_zero_fd)     { external_fd_timeout_zero(LFP_WAIT_FD); }
Test(wait, external_fd_timeout_zero_pollfd) { external_fd_timeout_zero(LFP_WAIT_POLLFD); }
Test(wait, external_fd_timeout_zero_unspec) { external_fd_timeout_zero(LFP_WAIT_UNSPEC); }
Test(wait, external_fd_timeout_zero_yield)  { external_fd_timeout_zero(LFP_WAIT_YIELD); }

static int has_fd(const struct lfp_wait_pollfd *w, int fd)
{
	size_t i;

	for (i = 0; i < w->nfds; i++)
		if (w->fd[i].fd == fd)
			return 1;
	return 0;
}

Test(wait, pollfd_set_change_index_protocol)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_POLLFD);
	struct lfp_cq *cq = member_cq(ws, NULL);
	struct lfp_fid *f = &ws->fid;
	struct lfp_cq_entry e = { &e };
	struct pollfd fds[8];
	struct lfp_wait_pollfd w;
	uint64_t ci0;
	size_t n0, i;
	int p[2], q[2], own = -1;
	char c = 'x';

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(pipe(q), 0);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, NULL), -EINVAL);
	/* nfds = 0: the cheap check; the set has its own fd(s). */
	w.change_index = 0;
	w.nfds = 0;
	w.fd = NULL;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), -LFP_ETOOSMALL);
	cr_assert_geq(w.nfds, 1, "a POLLFD set has at least one fd");
	cr_assert_leq(w.nfds, 8);
	ci0 = w.change_index;
	n0 = w.nfds;
	w.nfds = 8;
	w.fd = fds;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), 0);
	cr_assert_eq(w.nfds, n0);
	cr_assert_eq(w.change_index, ci0);
	own = fds[0].fd;

	/* Clear then re-check: after trywait 0 a member write makes one of
	 * the array's fds readable. */
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	for (i = 0; i < w.nfds; i++)
		fds[i].revents = 0;
	cr_assert_eq(poll(fds, w.nfds, 0), 0, "idle set: a pollfd is readable");
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_geq(poll(fds, w.nfds, 0), 1, "member write after trywait 0");
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(poll(fds, w.nfds, 0), 0, "drained and trywait 0");

	/* An external fd bumps change_index and appears in the array. */
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, NULL), 0);
	w.nfds = 0;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), -LFP_ETOOSMALL);
	cr_assert_eq(w.nfds, n0 + 1);
	cr_assert_gt(w.change_index, ci0, "add_fd did not bump change_index");
	w.nfds = n0; /* one short */
	w.fd = fds;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), -LFP_ETOOSMALL);
	cr_assert_eq(w.nfds, n0 + 1);
	w.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), 0);
	cr_assert_eq(w.nfds, n0 + 1);
	cr_assert(has_fd(&w, p[0]), "external fd missing from the array");
	cr_assert(has_fd(&w, own), "the set's own fd is gone");
	ci0 = w.change_index;

	/* The external fd's readiness shows in the array.  (add_fd wakes
	 * current waiters, so the set's own fd may be readable: clear it.) */
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(poll(fds, w.nfds, 0), 0);
	cr_assert_eq(write(p[1], &c, 1), 1);
	cr_assert_eq(poll(fds, w.nfds, 0), 1);
	for (i = 0; i < w.nfds; i++)
		cr_assert_eq(!!(fds[i].revents & POLLIN), fds[i].fd == p[0]);
	cr_assert_eq(lfp_wait(ws, 10000), 0, "lfp_wait with a readable external fd");

	/* A second external fd, then deletes. */
	cr_assert_eq(lfp_wait_add_fd(ws, q[0], POLLIN, NULL), 0);
	w.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), 0);
	cr_assert_eq(w.change_index, ci0 + 1);
	cr_assert_eq(w.nfds, n0 + 2);
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), 0);
	cr_assert_eq(lfp_wait_del_fd(ws, p[1]), -ENOENT);
	cr_assert_eq(lfp_wait_del_fd(ws, own), -ENOENT, "the set's own fd is no external fd");
	w.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &w), 0);
	cr_assert_eq(w.change_index, ci0 + 2, "failed dels bumped change_index");
	cr_assert_eq(w.nfds, n0 + 1);
	cr_assert(!has_fd(&w, p[0]));
	cr_assert(has_fd(&w, q[0]));
	cr_assert_eq(lfp_wait_del_fd(ws, q[0]), 0);

	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

Test(wait, mutex_cond_set)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_MUTEX_COND);
	struct lfp_mutex_cond mc = { NULL, NULL };
	int p[2];

	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &mc), 0);
	cr_assert_not_null(mc.mutex);
	cr_assert_not_null(mc.cond);
	cr_assert_eq(pthread_mutex_lock(mc.mutex), 0);
	cr_assert_eq(pthread_mutex_unlock(mc.mutex), 0);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, NULL), -EINVAL);
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), -ENOENT);
	cr_assert_eq(lfp_wait_close(ws), 0, "the refused fd is no member");
	close(p[0]);
	close(p[1]);
}

Test(wait, yield_set_external_fd)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_YIELD);
	int p[2], dead;
	char c = 'y';

	cr_assert_eq(pipe(p), 0);
	/* A closed fd is refused, as an FD set's epoll refuses it: polled,
	 * it would end every lfp_wait at once (POLLNVAL). */
	dead = dup(p[0]);
	cr_assert_geq(dead, 0);
	cr_assert_eq(close(dead), 0);
	cr_assert_eq(lfp_wait_add_fd(ws, dead, POLLIN, NULL), -EBADF,
	             "YIELD: a closed fd");
	cr_assert_eq(lfp_wait_add_fd(ws, p[0], POLLIN, NULL), 0);
	expect_timeout(ws, 20, "YIELD, empty pipe");
	cr_assert_eq(write(p[1], &c, 1), 1);
	cr_assert_eq(lfp_wait(ws, 10000), 0, "YIELD, a byte in the pipe");
	cr_assert_eq(lfp_wait_close(ws), -EBUSY);
	cr_assert_eq(lfp_wait_del_fd(ws, p[0]), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	close(p[0]);
	close(p[1]);
}

/* ------------------------------------------------------------ close */

Test(wait, close_with_member_is_ebusy)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_eq *eq = member_eq(ws);
	uint32_t ev = 0;

	cr_assert_eq(lfp_eq_write(eq, LFP_NOTIFY, NULL, 0, 0), 0);
	cr_assert_eq(lfp_wait_close(ws), -EBUSY);
	cr_assert_eq(lfp_close(&ws->fid), -EBUSY);
	cr_assert_eq(lfp_eq_read(eq, &ev, NULL, 0, 0), 0, "the EQ still works");
	cr_assert_eq(lfp_eq_close(eq), 0);
	cr_assert_eq(lfp_close(&ws->fid), 0);
}

Test(wait, closing_a_member_leaves_the_others)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_cq *a = member_cq(ws, NULL), *b = member_cq(ws, NULL),
	              *c = member_cq(ws, NULL);
	struct lfp_cq_entry e = { &e };

	cr_assert_eq(lfp_cq_write(b, &e, 1), 1);
	cr_assert_eq(lfp_cq_close(b), 0, "closing a member with queued work");
	expect_timeout(ws, 20, "b closed");
	cr_assert_eq(lfp_cq_write(c, &e, 1), 1);
	expect_ready(ws, "c after b closed");
	cr_assert_eq(lfp_cq_write(a, &e, 1), 1);
	cr_assert_eq(lfp_cq_close(c), 0);
	expect_ready(ws, "a after c closed");
	cr_assert_eq(lfp_cq_close(a), 0);
	expect_timeout(ws, 20, "no members");
	cr_assert_eq(lfp_wait_close(ws), 0);
}

/* ------------------------------------------------------------ scale */

static void many_members(enum lfp_wait_obj obj)
{
	enum { N = 1000 };
	struct lfp_wait *ws = open_ws(obj);
	struct lfp_cq **cq = calloc(N, sizeof(*cq));
	struct lfp_cq_entry e = { &e };
	struct lfp_fid *f = &ws->fid;
	int i, k;

	cr_assert_not_null(cq);
	for (i = 0; i < N; i++)
		cq[i] = member_cq(ws, (void *)(uintptr_t)i);
	expect_timeout(ws, 20, "1000 idle CQs");
	for (k = 0; k < 3; k++) {
		int which = (int[]){ 0, 517, N - 1 }[k];

		cr_assert_eq(lfp_trywait(&f, 1), 0);
		cr_assert_eq(lfp_cq_write(cq[which], &e, 1), 1);
		cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN, "CQ %d has work", which);
		cr_assert_eq(lfp_wait(ws, 10000), 0, "CQ %d of 1000 has work", which);
		cr_assert_eq(lfp_cq_read(cq[which], &e, 1), 1);
	}
	for (i = 0; i < N; i++)
		cr_assert_eq(lfp_cq_close(cq[i]), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	free(cq);
}

Test(wait, thousand_members_one_ready_fd)         { many_members(LFP_WAIT_FD); }
Test(wait, thousand_members_one_ready_mutex_cond) { many_members(LFP_WAIT_MUTEX_COND); }

/* ------------------------------------------------------------ regressions */

/*
 * Two posts of the set's eventfd overlap around a drain.  The interleaving
 * is emulated step by step through the FD kind's internals (one thread cannot
 * produce it otherwise):
 *   post A (a producer's fire) has announced itself and not written yet;
 *   post B (another fire, or a waiter's restore) announces and writes;
 *   a waiter's W1 (trywait) drains B's write;
 *   A's write lands: the eventfd is readable.
 * A signal-state design that lost track of A (a single "signalled" bit set
 * by both posts and reset by the one drain) then skipped every later drain,
 * so lfp_trywait returned 0 and left the fd readable, and lfp_wait returned
 * at once, until some later post: every waiter of the set, and an
 * application's select loop after trywait, spun.  docs/contract.md,
 * "Trywait": trywait clears the pending notification, arms, then re-checks.
 */
Test(wait, trywait_clears_a_post_that_landed_after_a_drain)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_fid *f = &ws->fid;
	uint64_t one = 1;
	int64_t t0, dt;
	int fd = -1, ret, wret, still;

	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &fd), 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0));

	(void)lfp__faa_u32(&ws->sig.state, LFP__PENDING_ONE);   /* A: announced */
	lfp__wait_fd_post(&ws->sig);                            /* B: whole */
	cr_assert_eq(lfp_trywait(&f, 1), 0);                    /* drains B */
	cr_assert(!fd_readable(fd, 0));
	cr_assert_eq(write(ws->sig.efd, &one, sizeof(one)), (ssize_t)sizeof(one)); /* A lands */
	cr_assert(fd_readable(fd, 0), "A's post must be visible");

	ret = lfp_trywait(&f, 1);
	still = fd_readable(fd, 0);
	t0 = now_ms();
	wret = lfp_wait(ws, 50);
	dt = now_ms() - t0;
	cr_assert_eq(lfp_wait_close(ws), 0); /* before the verdict: no leak */
	cr_assert_eq(ret, 0, "nothing is pending: trywait = %d", ret);
	cr_assert(!still, "lfp_trywait returned 0 and left the set's fd "
	          "readable with nothing pending (a landed post the signal state "
	          "lost track of): every W1 now skips the drain and waiters spin");
	cr_assert_eq(wret, -ETIMEDOUT, "lfp_wait on an idle set = %d after %lld ms",
	             wret, (long long)dt);
}
