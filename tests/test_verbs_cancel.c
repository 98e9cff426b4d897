/*
 * tests/test_verbs_cancel.c: thread cancellation and the verbs binding
 * (lfp_verbs(3), CONCURRENCY; docs/verbs.md, "Cancellation"), over the REAL
 * libibverbs on the device-free context of support/vf/vf.h.
 *
 * What is promised and checked here:
 *   - a thread cancelled while asleep in a blocking call of the binding
 *     (lfp_verbs_cq_sread, its _ex_ form, lfp_verbs_async_sread), in
 *     lfp_wait on a set of verbs CQs, or in its own poll() on a CQ's fd
 *     after lfp_trywait, unwinds with nothing held and nothing consumed:
 *     afterwards a completion (or an async event) injected into the fake
 *     is seen by trywait, read by read, wakes another sleeper, and close
 *     returns 0, not -EBUSY;
 *   - a thread with a cancel request pending is not cancelled inside a
 *     call that does not sleep, although those calls read the channel,
 *     the async fd or an eventfd (cancellation points of their own): read,
 *     trywait, progress, lfp_wait and lfp_poll with verbs members, open
 *     and close, and a blocking call that finds work at once.
 * tests/stress_verbs_cancel.c cancels sleepers at random under load.
 * Each test ends with finish(): no fake object is left alive.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "verbs/suite.h"

TestSuite(verbs_cancel, .init = need_fake, .timeout = 60);

/* One context, one channel, one CQ (plain or extended) and its object. */
struct crig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;           /* an extended CQ's ibv_cq_ex_to_cq */
	struct ibv_cq_ex *cqx;       /* or NULL */
	struct lfp_wait *ws;         /* with LFP_WAIT_SET */
	struct lfp_verbs_cq *v;
};

static void crig_up(struct crig *r, enum lfp_wait_obj obj, int ex)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_ex_attr xa;

	memset(r, 0, sizeof(*r));
	memset(&xa, 0, sizeof(xa));
	r->ctx = vf_ctx_create();
	cr_assert_not_null(r->ctx);
	r->ch = vf_channel_create(r->ctx);
	cr_assert_not_null(r->ch);
	xa.cq.wait_obj = obj;
	if (obj == LFP_WAIT_SET) {
		cr_assert_eq(lfp_wait_open(&wa, &r->ws), 0);
		xa.cq.wait_set = r->ws;
	}
	if (ex) {
		r->cqx = vf_cq_ex_create(r->ctx, r->ch, NULL, 16, 0);
		cr_assert_not_null(r->cqx);
		r->cq = ibv_cq_ex_to_cq(r->cqx);
		cr_assert_eq(lfp_verbs_cq_ex_open(r->cqx, r->ch, &xa, &r->v, NULL), 0);
	} else {
		r->cq = vf_cq_create(r->ctx, r->ch, NULL, 16);
		cr_assert_not_null(r->cq);
		cr_assert_eq(lfp_verbs_cq_open(r->cq, r->ch, &xa.cq, &r->v, NULL), 0);
	}
}

static void crig_down(struct crig *r)
{
	cr_assert_eq(lfp_verbs_cq_close(r->v), 0,
		     "close of a CQ nobody is inside of");
	if (r->ws)
		cr_assert_eq(lfp_wait_close(r->ws), 0);
	cr_assert_eq(vf_cq_destroy(r->cq, 1000), 0,
		     "ibv_destroy_cq would hang: acks missing after close");
	cr_assert_eq(ibv_destroy_comp_channel(r->ch), 0);
	finish(r->ctx);
}

/* One completion of r's CQ, whichever kind: its wr_id, or -1. */
static int64_t crig_read(struct crig *r)
{
	struct lfp_verbs_wc_ex x;
	struct ibv_wc wc;

	if (r->cqx)
		return lfp_verbs_cq_ex_read(r->v, &x, 1) == 1 ? (int64_t)x.wr_id : -1;
	return lfp_verbs_cq_read(r->v, &wc, 1) == 1 ? (int64_t)wc.wr_id : -1;
}

/* ------------------------------------------------- cancelled sleepers */

enum sleep_kind { SLEEP_SREAD, SLEEP_SET_WAIT, SLEEP_APP_POLL };

struct sleeper {
	struct crig *r;
	enum sleep_kind kind;
	int ret;
	uint64_t wr_id;
};

/* The blocking call, with no timeout: only a wake or a cancel ends it. */
static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct lfp_verbs_wc_ex x;
	struct ibv_wc wc;
	struct pollfd pfd;

	switch (s->kind) {
	case SLEEP_SREAD:
		if (s->r->cqx) {
			s->ret = lfp_verbs_cq_ex_sread(s->r->v, &x, 1, -1);
			s->wr_id = x.wr_id;
		} else {
			s->ret = lfp_verbs_cq_sread(s->r->v, &wc, 1, -1);
			s->wr_id = wc.wr_id;
		}
		break;
	case SLEEP_SET_WAIT:
		s->ret = lfp_wait(s->r->ws, -1);
		break;
	case SLEEP_APP_POLL:
		/* The application's own sleep, after the binding's trywait. */
		s->ret = trywait1(&s->r->v->fid);
		if (s->ret)
			break;
		pfd.fd = getwait_fd(&s->r->v->fid);
		pfd.events = POLLIN;
		s->ret = poll(&pfd, 1, -1);
		break;
	}
	return s;
}

/*
 * Start a sleeper and return once it is asleep: it has polled the CQ (the
 * trywait step's two polls, after sread's read) and some time has passed.
 * Where it is cancelled does not depend on that timing when the binding
 * keeps its promise: its only cancellation point is the sleep.
 */
static void start_sleeper(pthread_t *t, struct sleeper *s, struct crig *r,
			  enum sleep_kind kind)
{
	unsigned long polls = stats(r->cq).polls;
	int i;

	memset(s, 0, sizeof(*s));
	s->r = r;
	s->kind = kind;
	s->ret = 12345;
	cr_assert_eq(pthread_create(t, NULL, sleeper_main, s), 0);
	for (i = 0; i < 5000 && stats(r->cq).polls < polls + 2; i++)
		usleep(1000);
	cr_assert_geq(stats(r->cq).polls, polls + 2, "the sleeper never polled");
	usleep(30000);
}

/* The CQ's wait object shows work within a second. */
static int crig_woken(struct crig *r)
{
	if (r->ws)
		return lfp_wait(r->ws, 1000) == 0;
	return fd_readable(getwait_fd(&r->v->fid), 1000);
}

static void cancel_a_sleeper(enum lfp_wait_obj obj, int ex, enum sleep_kind kind)
{
	struct sleeper s, s2;
	struct crig r;
	pthread_t t;
	void *res;

	crig_up(&r, obj, ex);
	start_sleeper(&t, &s, &r, kind);
	cr_assert_eq(pthread_cancel(t), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_eq(res, PTHREAD_CANCELED, "the sleeper returned %d instead", s.ret);

	/* Nothing held: the CQ is as after a timeout.  A completion injected
	 * now wakes its wait object and is read, exactly once. */
	cr_assert_eq(trywait1(&r.v->fid), 0, "nothing pending after the cancel");
	cr_assert_eq(vf_cq_push(r.cq, 7, IBV_WC_SUCCESS, 0), 0);
	cr_assert(crig_woken(&r), "the CQ's wait object missed the completion");
	cr_assert_eq(trywait1(&r.v->fid), -EAGAIN);
	cr_assert_eq(crig_read(&r), 7);
	cr_assert_eq(crig_read(&r), -1, "read once");
	cr_assert_eq(trywait1(&r.v->fid), 0);

	/* Another sleeper of the same kind is woken as before. */
	start_sleeper(&t, &s2, &r, kind);
	cr_assert_eq(vf_cq_push(r.cq, 8, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_eq(res, &s2);
	if (kind == SLEEP_SREAD) {
		cr_assert_eq(s2.ret, 1, "sread %d", s2.ret);
		cr_assert_eq(s2.wr_id, 8);
	} else {
		cr_assert_geq(s2.ret, 0, "wait %d", s2.ret);
		cr_assert_eq(crig_read(&r), 8);
	}
	crig_down(&r); /* close is 0, not -EBUSY */
}

Test(verbs_cancel, a_thread_cancelled_asleep_in_sread_leaves_the_cq_usable)
{
	cancel_a_sleeper(LFP_WAIT_FD, 0, SLEEP_SREAD);
}

Test(verbs_cancel, a_thread_cancelled_asleep_in_ex_sread_leaves_the_cq_usable)
{
	cancel_a_sleeper(LFP_WAIT_FD, 1, SLEEP_SREAD);
}

Test(verbs_cancel, a_thread_cancelled_in_its_poll_after_trywait_leaves_the_cq_usable)
{
	cancel_a_sleeper(LFP_WAIT_FD, 0, SLEEP_APP_POLL);
}

Test(verbs_cancel, a_thread_cancelled_asleep_in_lfp_wait_leaves_a_set_member_usable)
{
	cancel_a_sleeper(LFP_WAIT_SET, 0, SLEEP_SET_WAIT);
}

/* --------------------------------------- a cancel request already pending */

struct pending {
	int (*call)(struct pending *p);
	struct crig *r;
	struct lfp_verbs_async *va;
	struct lfp_poll *ps;
	int ret;
};

/*
 * Run p->call with a cancel request pending (deferred, the default type).
 * Its calls must act on it only in a sleep: the thread returns p, not
 * PTHREAD_CANCELED.  Cancellation is disabled before the thread's own exit
 * so that the request never fires afterwards.
 */
static void *pending_main(void *arg)
{
	struct pending *p = arg;
	int old;

	(void)pthread_cancel(pthread_self());
	p->ret = p->call(p);
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return p;
}

static int run_pending(struct pending *p, const char *what)
{
	pthread_t t;
	void *res;

	p->ret = 12345;
	cr_assert_eq(pthread_create(&t, NULL, pending_main, p), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_eq(res, p, "%s was cancelled inside the call", what);
	return p->ret;
}

/* An event on the channel for r's CQ (re-armed first, by a trywait). */
static void event_waiting(struct crig *r, uint64_t wr_id)
{
	if (stats(r->cq).armed != VF_ARM_NEXT)
		cr_assert_eq(trywait1(&r->v->fid), 0);
	cr_assert_eq(stats(r->cq).armed, VF_ARM_NEXT);
	cr_assert_eq(vf_cq_push(r->cq, wr_id, IBV_WC_SUCCESS, 0), 0);
	cr_assert_gt(vf_fd_pending(r->ch->fd), 0, "the event is on the channel");
}

static int call_trywait(struct pending *p)
{
	return trywait1(&p->r->v->fid);
}

static int call_read(struct pending *p)
{
	return (int)crig_read(p->r);
}

static int call_sread(struct pending *p)
{
	struct ibv_wc wc;
	int ret = lfp_verbs_cq_sread(p->r->v, &wc, 1, -1);

	return ret == 1 ? (int)wc.wr_id : ret;
}

static int call_wait(struct pending *p)
{
	return lfp_wait(p->r->ws, 0);
}

static int call_poll(struct pending *p)
{
	void *ctx[2];

	return lfp_poll(p->ps, ctx, 2);
}

static int call_close(struct pending *p)
{
	return lfp_verbs_cq_close(p->r->v);
}

static int call_open(struct pending *p)
{
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_FD };

	return lfp_verbs_cq_open(p->r->cq, p->r->ch, &a, &p->r->v, NULL);
}

Test(verbs_cancel, trywait_read_and_sread_with_work_are_not_cancellation_points)
{
	struct pending p = { .call = call_trywait };
	struct crig r;

	crig_up(&r, LFP_WAIT_FD, 0);
	p.r = &r;
	event_waiting(&r, 1);
	cr_assert_eq(run_pending(&p, "lfp_trywait"), -EAGAIN,
		     "trywait read the event and found the completion");
	p.call = call_read;
	cr_assert_eq(run_pending(&p, "lfp_verbs_cq_read"), 1);
	event_waiting(&r, 2);
	p.call = call_sread;
	cr_assert_eq(run_pending(&p, "lfp_verbs_cq_sread with work"), 2,
		     "an sread that finds work does not sleep");
	cr_assert_eq(trywait1(&r.v->fid), 0, "the CQ's lock is free");
	crig_down(&r);
}

Test(verbs_cancel, a_set_re_check_and_a_poll_of_verbs_members_are_not_cancellation_points)
{
	struct pending p = { .call = call_wait };
	struct crig r;
	void *ctx;

	crig_up(&r, LFP_WAIT_SET, 0);
	p.r = &r;
	event_waiting(&r, 1);
	cr_assert_eq(run_pending(&p, "lfp_wait"), 0, "the member has work");
	cr_assert_eq(crig_read(&r), 1);
	cr_assert_eq(lfp_poll_open(NULL, &p.ps), 0);
	cr_assert_eq(lfp_poll_add(p.ps, &r.v->fid, 0), 0);
	event_waiting(&r, 2);
	p.call = call_poll;
	cr_assert_eq(run_pending(&p, "lfp_poll"), 1, "the member is reported");
	cr_assert_eq(crig_read(&r), 2);
	cr_assert_eq(lfp_poll(p.ps, &ctx, 1), 0, "the CQ's lock is free");
	cr_assert_eq(lfp_poll_del(p.ps, &r.v->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(p.ps), 0);
	crig_down(&r);
}

Test(verbs_cancel, open_and_close_with_a_cancel_pending_run_to_the_end)
{
	struct pending p = { .call = call_close };
	struct lfp_verbs_cq *v2;
	struct crig r;

	crig_up(&r, LFP_WAIT_FD, 0);
	p.r = &r;
	event_waiting(&r, 1);
	cr_assert_eq(run_pending(&p, "lfp_verbs_cq_close"), 0);
	cr_assert_eq(acked(r.cq), 1u, "close read and acked the event");
	p.call = call_open;
	cr_assert_eq(run_pending(&p, "lfp_verbs_cq_open"), 0);
	/* The registry and its lock are as they should be: a second object
	 * for the CQ is refused, and close works. */
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &v2, NULL), -EEXIST);
	cr_assert_eq(crig_read(&r), 1);
	crig_down(&r);
}

/* ------------------------------------------------------------ async */

struct arig {
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
};

static void arig_up(struct arig *a)
{
	struct lfp_eq_attr attr = { .size = 16, .wait_obj = LFP_WAIT_FD };

	memset(a, 0, sizeof(*a));
	a->ctx = vf_ctx_create();
	cr_assert_not_null(a->ctx);
	cr_assert_eq(lfp_eq_open(&attr, &a->eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(a->ctx, a->eq, &a->va, NULL), 0);
}

static int call_progress(struct pending *p)
{
	return lfp_verbs_async_progress(p->va);
}

static int call_async_trywait(struct pending *p)
{
	return trywait1(&p->va->fid);
}

static int call_async_close(struct pending *p)
{
	return lfp_verbs_async_close(p->va);
}

Test(verbs_cancel, async_progress_trywait_and_close_are_not_cancellation_points)
{
	struct pending p = { .call = call_async_trywait };
	struct lfp_verbs_async_entry e;
	struct arig a;
	uint32_t code;

	arig_up(&a);
	p.va = a.va;
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(run_pending(&p, "lfp_trywait on the async object"), -EAGAIN);
	p.call = call_progress;
	cr_assert_eq(run_pending(&p, "lfp_verbs_async_progress"), 1);
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_LID_CHANGE, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "its lock is free");
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), (ssize_t)sizeof(e));
	p.call = call_async_close;
	cr_assert_eq(run_pending(&p, "lfp_verbs_async_close"), 0);
	cr_assert_eq(lfp_eq_close(a.eq), 0);
	finish(a.ctx);
}

/* ------------------------------------------------- async sread cancelled */

struct async_sleeper {
	struct arig *a;
	struct lfp_verbs_async_entry e;
	uint32_t code;
	ssize_t ret;
};

static void *async_sleeper_main(void *arg)
{
	struct async_sleeper *s = arg;

	s->ret = lfp_verbs_async_sread(s->a->va, &s->code, &s->e, sizeof(s->e), -1, 0);
	return s;
}

/* Start an async sread and return once it has read the (empty) async fd. */
static void start_async_sleeper(pthread_t *t, struct async_sleeper *s, struct arig *a)
{
	unsigned long reads = vf_fd_reads(a->ctx->async_fd);
	int i;

	memset(s, 0, sizeof(*s));
	s->a = a;
	s->ret = 12345;
	cr_assert_eq(pthread_create(t, NULL, async_sleeper_main, s), 0);
	for (i = 0; i < 5000 && vf_fd_reads(a->ctx->async_fd) == reads; i++)
		usleep(1000);
	cr_assert_gt(vf_fd_reads(a->ctx->async_fd), reads, "the sleeper never read");
	usleep(30000);
}

Test(verbs_cancel, a_thread_cancelled_asleep_in_async_sread_leaves_the_object_usable)
{
	struct lfp_verbs_async_entry e;
	struct async_sleeper s, s2;
	struct arig a;
	uint32_t code;
	pthread_t t;
	void *res;

	arig_up(&a);
	start_async_sleeper(&t, &s, &a);
	cr_assert_eq(pthread_cancel(t), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_eq(res, PTHREAD_CANCELED, "the sleeper returned %zd instead", s.ret);

	/* Nothing held or consumed: an event the device sends now is seen by
	 * trywait, moved by progress and read, once. */
	cr_assert_eq(trywait1(&a.va->fid), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ERR, 1), 0);
	cr_assert_eq(trywait1(&a.va->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "its lock is free");
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_PORT_ERR);
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), -EAGAIN);

	/* Another sleeper is woken as before. */
	start_async_sleeper(&t, &s2, &a);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 2), 0);
	cr_assert_eq(pthread_join(t, &res), 0);
	cr_assert_eq(res, &s2);
	cr_assert_eq(s2.ret, (ssize_t)sizeof(e), "sread %zd", s2.ret);
	cr_assert_eq(s2.e.type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(lfp_verbs_async_close(a.va), 0, "no count left raised");
	cr_assert_eq(lfp_eq_close(a.eq), 0);
	finish(a.ctx);
}

static int call_async_sread(struct pending *p)
{
	struct lfp_verbs_async_entry e;
	uint32_t code;

	return (int)lfp_verbs_async_sread(p->va, &code, &e, sizeof(e), -1, 0);
}

Test(verbs_cancel, an_async_sread_that_finds_an_event_is_not_cancelled)
{
	struct pending p = { .call = call_async_sread };
	struct arig a;

	arig_up(&a);
	p.va = a.va;
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(run_pending(&p, "lfp_verbs_async_sread with an event"),
		     (int)sizeof(struct lfp_verbs_async_entry));
	cr_assert_eq(lfp_verbs_async_close(a.va), 0);
	cr_assert_eq(lfp_eq_close(a.eq), 0);
	finish(a.ctx);
}
