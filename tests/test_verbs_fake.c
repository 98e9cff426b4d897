/*
 * tests/test_verbs_fake.c: the fake verbs context (support/vf/vf.h)
 * driving the REAL libibverbs behaves like hardware and a kernel would.
 * The canary suite sorts first: if the private-ops slots cannot be
 * discovered, it fails with the reason, and so does every other test.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "verbs/suite.h"

/* ------------------------------------------------------------- canary */

Test(canary, priv_slots_are_discovered_and_distinct)
{
	const char *why = vf_priv_canary();
	int i, j;

	cr_assert_null(why, "%s", why);
	for (i = 0; i < VF_SLOT_NUM; i++) {
		int s = vf_priv_slot((enum vf_slot)i);

		cr_assert(s >= 0 && s < VF_PRIV_SLOTS, "slot %s not found",
			  vf_priv_slot_name((enum vf_slot)i));
		cr_log_info("priv slot %3d = %s", s, vf_priv_slot_name((enum vf_slot)i));
		for (j = 0; j < i; j++)
			cr_assert_neq(s, vf_priv_slot((enum vf_slot)j),
				      "%s and %s share slot %d",
				      vf_priv_slot_name((enum vf_slot)i),
				      vf_priv_slot_name((enum vf_slot)j), s);
	}
}

/* ------------------------------------------------------------ context */

TestSuite(fake_ctx, .init = need_fake, .timeout = 30);

Test(fake_ctx, has_the_fields_libibverbs_reads)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct verbs_context *vctx;

	cr_assert_not_null(ctx);
	cr_assert_eq(vf_live(), 1);
	vctx = verbs_get_ctx(ctx);
	cr_assert_not_null(vctx, "abi_compat must mark an extended context");
	cr_assert_eq(vctx->sz, sizeof *vctx);
	cr_assert_not_null(vctx->priv);
	cr_assert_eq(ctx->cmd_fd, -1);
	cr_assert_geq(ctx->async_fd, 0);
	cr_assert_geq(fcntl(ctx->async_fd, F_GETFD), 0);
	cr_assert_not_null(ctx->ops.poll_cq);
	cr_assert_not_null(ctx->ops.req_notify_cq);
	cr_assert_str_eq(ibv_get_device_name(ctx->device), "vf0");
	finish(ctx);
}

Test(fake_ctx, destroy_reports_what_the_test_left_behind)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);

	cr_assert_not_null(vf_cq_create(ctx, ch, NULL, 4));
	cr_assert_not_null(vf_qp_create(ctx));
	/* Everything is freed anyway: ASan and valgrind see no leak. */
	cr_assert_eq(vf_ctx_destroy(ctx), -EBUSY);
	cr_assert_eq(vf_live(), 0);
}

Test(fake_ctx, acks_call_no_private_slot)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_cq *cq = vf_cq_create(ctx, NULL, NULL, 1);
	struct ibv_qp *qp = vf_qp_create(ctx);
	struct ibv_async_event ev;
	unsigned long before;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_QP_FATAL, VF_ELEM(qp)), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	before = vf_priv_hits_total();
	ibv_ack_async_event(&ev);
	ibv_ack_cq_events(cq, 0);
	cr_assert_eq(vf_priv_hits_total(), before);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	finish(ctx);
}

/* -------------------------------------------------------------- async */

enum elem { E_CQ, E_QP, E_SRQ, E_WQ, E_PORT, E_DEVICE };

struct ev_case {
	int number;               /* docs/verbs.md, "Async event types" */
	enum ibv_event_type type;
	enum elem elem;
};

ParameterizedTestParameters(fake_async, each_type_decodes_its_element_and_acks)
{
	static struct ev_case cases[] = {
		{ 0, IBV_EVENT_CQ_ERR, E_CQ },
		{ 1, IBV_EVENT_QP_FATAL, E_QP },
		{ 2, IBV_EVENT_QP_REQ_ERR, E_QP },
		{ 3, IBV_EVENT_QP_ACCESS_ERR, E_QP },
		{ 4, IBV_EVENT_COMM_EST, E_QP },
		{ 5, IBV_EVENT_SQ_DRAINED, E_QP },
		{ 6, IBV_EVENT_PATH_MIG, E_QP },
		{ 7, IBV_EVENT_PATH_MIG_ERR, E_QP },
		{ 8, IBV_EVENT_DEVICE_FATAL, E_DEVICE },
		{ 9, IBV_EVENT_PORT_ACTIVE, E_PORT },
		{ 10, IBV_EVENT_PORT_ERR, E_PORT },
		{ 11, IBV_EVENT_LID_CHANGE, E_PORT },
		{ 12, IBV_EVENT_PKEY_CHANGE, E_PORT },
		{ 13, IBV_EVENT_SM_CHANGE, E_PORT },
		{ 14, IBV_EVENT_SRQ_ERR, E_SRQ },
		{ 15, IBV_EVENT_SRQ_LIMIT_REACHED, E_SRQ },
		{ 16, IBV_EVENT_QP_LAST_WQE_REACHED, E_QP },
		{ 17, IBV_EVENT_CLIENT_REREGISTER, E_PORT },
		{ 18, IBV_EVENT_GID_CHANGE, E_PORT },
		{ 19, IBV_EVENT_WQ_FATAL, E_WQ },
	};

	return cr_make_param_array(struct ev_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct ev_case *c, fake_async, each_type_decodes_its_element_and_acks,
		  .init = need_fake, .timeout = 30)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_cq *cq = vf_cq_create(ctx, NULL, NULL, 1);
	struct ibv_qp *qp = vf_qp_create(ctx);
	struct ibv_srq *srq = vf_srq_create(ctx);
	struct ibv_wq *wq = vf_wq_create(ctx);
	int async_slot = vf_priv_slot(VF_SLOT_ASYNC_EVENT);
	unsigned long hits = vf_priv_hits(async_slot);
	uint32_t port = 1 + (uint32_t)c->number % 2;
	struct ibv_async_event ev;
	uint64_t element = 0;

	cr_assert_eq((int)c->type, c->number, "enum value of event %d", c->number);
	switch (c->elem) {
	case E_CQ: element = VF_ELEM(cq); break;
	case E_QP: element = VF_ELEM(qp); break;
	case E_SRQ: element = VF_ELEM(srq); break;
	case E_WQ: element = VF_ELEM(wq); break;
	case E_PORT: element = port; break;
	case E_DEVICE: element = 0; break;
	}
	cr_assert_eq(vf_async_push(ctx, c->type, element), 0);

	memset(&ev, 0xa5, sizeof ev);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_assert_eq(ev.event_type, c->type);
	cr_assert_eq(vf_priv_hits(async_slot), hits + 1, "async_event slot fires once");
	switch (c->elem) {
	case E_CQ: cr_assert_eq(ev.element.cq, cq); break;
	case E_QP: cr_assert_eq(ev.element.qp, qp); break;
	case E_SRQ: cr_assert_eq(ev.element.srq, srq); break;
	case E_WQ: cr_assert_eq(ev.element.wq, wq); break;
	case E_PORT: cr_assert_eq(ev.element.port_num, (int)port); break;
	case E_DEVICE: cr_assert_eq(ev.element.port_num, 0); break;
	}

	ibv_ack_async_event(&ev);
	cr_assert_eq(cq->async_events_completed, c->elem == E_CQ ? 1u : 0u);
	cr_assert_eq(cq->comp_events_completed, 0u, "CQ_ERR acks the async count only");
	cr_assert_eq(qp->events_completed, c->elem == E_QP ? 1u : 0u);
	cr_assert_eq(srq->events_completed, c->elem == E_SRQ ? 1u : 0u);
	cr_assert_eq(wq->events_completed, c->elem == E_WQ ? 1u : 0u);

	/* Acked, so every destroy completes at once. */
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(vf_srq_destroy(srq, 1000), 0);
	cr_assert_eq(vf_wq_destroy(wq, 1000), 0);
	finish(ctx);
}

TestSuite(fake_async, .init = need_fake, .timeout = 30);

Test(fake_async, unknown_type_20_passes_through_with_its_number)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_async_event ev;

	/* rdma-core 62 names 20 DEVICE_SPEED_CHANGE; 44.0 does not know it. */
	cr_assert_eq(vf_async_push(ctx, (enum ibv_event_type)20, 0x1234), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_assert_eq((int)ev.event_type, 20);
	cr_assert_eq(ev.element.port_num, 0x1234, "unknown types decode as port_num");
	ibv_ack_async_event(&ev); /* a no-op, must not crash */
	finish(ctx);
}

Test(fake_async, port_num_is_the_low_32_bits_of_element)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_async_event ev;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_PORT_ERR, 0x100000002ull), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_assert_eq(ev.element.port_num, 2);
	ibv_ack_async_event(&ev);
	finish(ctx);
}

Test(fake_async, affiliated_push_needs_a_live_object_of_the_right_kind)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_context *other = vf_ctx_create();
	struct ibv_cq *cq = vf_cq_create(ctx, NULL, NULL, 1);
	struct ibv_qp *qp = vf_qp_create(ctx);
	struct ibv_qp *foreign = vf_qp_create(other);

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_QP_FATAL, VF_ELEM(cq)), -EINVAL);
	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_CQ_ERR, VF_ELEM(qp)), -EINVAL);
	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_SRQ_ERR, 0), -EINVAL);
	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_QP_FATAL, VF_ELEM(foreign)), -EINVAL);
	cr_assert_eq(vf_fd_pending(ctx->async_fd), 0);
	cr_assert_eq(vf_qp_destroy(foreign, 1000), 0);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(vf_ctx_destroy(other), 0);
	finish(ctx);
}

Test(fake_async, qp_destroy_waits_for_the_ack_and_refuses_new_events)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_qp *qp = vf_qp_create(ctx);
	struct ibv_async_event ev;
	long t0;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_COMM_EST, VF_ELEM(qp)), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	t0 = now_ms();
	cr_assert_eq(vf_qp_destroy(qp, 50), -ETIMEDOUT);
	cr_assert_geq(now_ms() - t0, 40);
	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_QP_FATAL, VF_ELEM(qp)), -ESHUTDOWN);
	ibv_ack_async_event(&ev);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	finish(ctx);
}

Test(fake_async, cq_err_ack_is_what_cq_destroy_waits_for)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_cq *cq = vf_cq_create(ctx, NULL, NULL, 1);
	struct ibv_async_event ev;
	struct vf_cq_stats st;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_CQ_ERR, VF_ELEM(cq)), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	vf_cq_stats(cq, &st);
	cr_assert_eq(st.async_written, 1);
	cr_assert_eq(st.async_read, 1);
	cr_assert_eq(vf_cq_destroy(cq, 30), -ETIMEDOUT);
	ibv_ack_async_event(&ev);
	cr_assert_eq(cq->async_events_completed, 1u);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	finish(ctx);
}

Test(fake_async, unread_record_of_a_destroyed_qp_is_purged)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_qp *qp = vf_qp_create(ctx);
	unsigned long purged = vf_records_discarded();
	struct ibv_async_event ev;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_QP_FATAL, VF_ELEM(qp)), 0);
	/* The kernel reports only events read: nothing to wait for. */
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(vf_fd_set_nonblock(ctx->async_fd, 1), 0);
	errno = 0;
	cr_assert_eq(ibv_get_async_event(ctx, &ev), -1);
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(vf_records_discarded(), purged + 1);
	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	ibv_ack_async_event(&ev);
	finish(ctx);
}

/* ------------------------------------------------------------ channel */

TestSuite(fake_channel, .init = need_fake, .timeout = 30);

Test(fake_channel, real_destroy_is_ebusy_while_a_cq_uses_it_then_closes_both_ends)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *cq = vf_cq_create(ctx, ch, NULL, 4);
	int rfd = ch->fd, wfd = vf_channel_wfd(ch);

	cr_assert_eq(ch->refcnt, 1);
	cr_assert_eq(ch->context, ctx);
	cr_assert_geq(wfd, 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), EBUSY, "positive errno, not -1");
	cr_assert_geq(fcntl(rfd, F_GETFD), 0, "EBUSY leaves the fd open");
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(ch->refcnt, 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	errno = 0;
	cr_assert_eq(fcntl(rfd, F_GETFD), -1);
	cr_assert_eq(errno, EBADF);
	errno = 0;
	cr_assert_eq(fcntl(wfd, F_GETFD), -1, "the fake closes its write end");
	cr_assert_eq(errno, EBADF);
	finish(ctx);
}

/* ----------------------------------------------------------------- CQ */

TestSuite(fake_cq, .init = need_fake, .timeout = 30);

struct rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	int marker;
};

static void rig_up(struct rig *r, int depth)
{
	r->ctx = vf_ctx_create();
	cr_assert_not_null(r->ctx);
	r->ch = vf_channel_create(r->ctx);
	cr_assert_not_null(r->ch);
	r->cq = vf_cq_create(r->ctx, r->ch, &r->marker, depth);
	cr_assert_not_null(r->cq);
}

static void rig_down(struct rig *r)
{
	if (r->cq)
		cr_assert_eq(vf_cq_destroy(r->cq, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(r->ch), 0);
	finish(r->ctx);
}

static unsigned long written(struct ibv_cq *cq)
{
	struct vf_cq_stats st;

	vf_cq_stats(cq, &st);
	return st.events_written;
}

Test(fake_cq, event_names_the_cq_and_its_context_and_ack_lets_destroy_finish)
{
	struct rig r;
	struct ibv_cq *got = NULL;
	void *got_ctx = NULL;
	struct ibv_wc wc;
	struct vf_cq_stats st;
	int slot = vf_priv_slot(VF_SLOT_CQ_EVENT);
	unsigned long hits = vf_priv_hits(slot);

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 42, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 8, "one whole 8-byte record");
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	cr_assert_eq(got, r.cq);
	cr_assert_eq(got_ctx, &r.marker);
	cr_assert_eq(vf_priv_hits(slot), hits + 1, "cq_event slot fires once");
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 42);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.events_written, 1);
	cr_assert_eq(st.events_read, 1);
	ibv_ack_cq_events(r.cq, 1);
	cr_assert_eq(r.cq->comp_events_completed, 1u);
	rig_down(&r);
}

Test(fake_cq, destroy_without_the_ack_times_out_instead_of_hanging)
{
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;
	long t0;

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	t0 = now_ms();
	cr_assert_eq(vf_cq_destroy(r.cq, 100), -ETIMEDOUT);
	cr_assert_geq(now_ms() - t0, 90);
	cr_assert_lt(now_ms() - t0, 5000);
	/* No record for a CQ being destroyed. */
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 2, IBV_WC_SUCCESS, 0), -ESHUTDOWN);
	cr_assert_eq(written(r.cq), 1);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 0);
	ibv_ack_cq_events(r.cq, 1);
	rig_down(&r);
}

Test(fake_cq, real_ibv_destroy_cq_waits_for_acks_then_drops_the_channel_ref)
{
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;
	int slot = vf_priv_slot(VF_SLOT_DESTROY_CQ);
	unsigned long hits = vf_priv_hits(slot);

	rig_up(&r, 8);
	vf_ctx_set_destroy_timeout(r.ctx, 50);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	cr_assert_eq(ibv_destroy_cq(r.cq), ETIMEDOUT);
	cr_assert_eq(r.ch->refcnt, 1, "a failed destroy keeps the channel ref");
	ibv_ack_cq_events(r.cq, 1);
	cr_assert_eq(ibv_destroy_cq(r.cq), 0);
	cr_assert_eq(vf_priv_hits(slot), hits + 2);
	cr_assert_eq(r.ch->refcnt, 0);
	r.cq = NULL;
	rig_down(&r);
}

Test(fake_cq, real_ibv_create_cq_builds_a_fake_cq)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	int slot = vf_priv_slot(VF_SLOT_CREATE_CQ);
	unsigned long hits = vf_priv_hits(slot);
	struct ibv_cq *cq, *got;
	void *got_ctx;
	struct ibv_wc wc;
	int marker;

	cq = ibv_create_cq(ctx, 4, &marker, ch, 0);
	cr_assert_not_null(cq);
	cr_assert_eq(vf_priv_hits(slot), hits + 1);
	cr_assert_eq(cq->context, ctx);
	cr_assert_eq(cq->channel, ch);
	cr_assert_eq(cq->cq_context, &marker);
	cr_assert_eq(cq->cqe, 4);
	cr_assert_eq(ch->refcnt, 1);
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	cr_assert_eq(vf_cq_push(cq, 7, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(ibv_get_cq_event(ch, &got, &got_ctx), 0);
	cr_assert_eq(got, cq);
	cr_assert_eq(got_ctx, &marker);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
	ibv_ack_cq_events(cq, 1);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ch->refcnt, 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(fake_cq, real_ibv_create_cq_ex_builds_an_extended_cq_polled_like_hardware)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq_init_attr_ex ca;
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct vf_cqe_ex ex = { .completion_ts = 1234, .completion_wallclock_ns = 99 };
	struct ibv_wc wc;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq, *got;
	void *got_ctx;
	int marker;

	memset(&ca, 0, sizeof(ca));
	ca.cqe = 4;
	ca.cq_context = &marker;
	ca.channel = ch;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cqx = ibv_create_cq_ex(ctx, &ca);
	cr_assert_not_null(cqx);
	cq = ibv_cq_ex_to_cq(cqx);
	cr_assert_eq(cq->channel, ch);
	cr_assert_eq(cq->cq_context, &marker);
	cr_assert_eq(ch->refcnt, 1);
	cr_assert_not_null(cqx->read_byte_len, "asked for");
	cr_assert_not_null(cqx->read_completion_ts, "asked for");
	cr_assert_null(cqx->read_completion_wallclock_ns, "not asked for: no op");
	cr_assert_null(cqx->read_qp_num, "not asked for: no op");
	cr_assert_eq(ibv_start_poll(cqx, &pa), ENOENT, "empty");
	cr_assert_eq(stats(cq).polls, 1);
	/* The arm rules are the plain CQ's. */
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = 5;
	wc.byte_len = 64;
	cr_assert_eq(vf_cq_push_ex(cq, &wc, &ex, 0), 0);
	wc.wr_id = 6;
	wc.status = IBV_WC_REM_ACCESS_ERR;
	wc.vendor_err = 0x33;
	cr_assert_eq(vf_cq_push_ex(cq, &wc, NULL, 0), 0);
	cr_assert_eq(stats(cq).events_written, 1, "one event for the armed CQ");
	cr_assert_eq(ibv_get_cq_event(ch, &got, &got_ctx), 0);
	cr_assert_eq(got, cq, "the record names the CQ as ibv_cq_ex_to_cq does");
	ibv_ack_cq_events(cq, 1);
	cr_assert_eq(ibv_start_poll(cqx, &pa), 0);
	cr_assert_eq(cqx->wr_id, 5);
	cr_assert_eq(cqx->status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_wc_read_byte_len(cqx), 64);
	cr_assert_eq(ibv_wc_read_completion_ts(cqx), 1234);
	cr_assert_eq(ibv_next_poll(cqx), 0);
	cr_assert_eq(cqx->wr_id, 6);
	cr_assert_eq(cqx->status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(ibv_wc_read_vendor_err(cqx), 0x33);
	ibv_end_poll(cqx);
	cr_assert_eq(stats(cq).queued, 0, "end_poll consumed the current entry");
	cr_assert_eq(stats(cq).cqes_polled, 2);
	/* A poll fault comes out of start_poll as its errno. */
	vf_cq_fail_next_poll(cq, EIO);
	cr_assert_eq(ibv_start_poll(cqx, &pa), EIO);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ch->refcnt, 0);
	ca.wc_flags = (uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS << 1;
	errno = 0;
	cr_assert_null(ibv_create_cq_ex(ctx, &ca));
	cr_assert_eq(errno, EOPNOTSUPP, "unknown wc_flags are refused");
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(fake_cq, arming_with_a_cqe_already_queued_produces_no_event)
{
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;
	struct ibv_wc wc;

	rig_up(&r, 8);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 1), 0);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(written(r.cq), 0, "the queued CQE must not fire the arm");
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1);
	cr_assert_eq(errno, EAGAIN);
	/* Still armed: the next CQE fires. */
	cr_assert_eq(vf_cq_push(r.cq, 2, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(written(r.cq), 1);
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	ibv_ack_cq_events(r.cq, 1);
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 1);
	rig_down(&r);
}

Test(fake_cq, arm_is_one_shot)
{
	struct rig r;
	struct vf_cq_stats st;

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.armed, VF_ARM_NEXT);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 2, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 3, IBV_WC_GENERAL_ERR, 1), 0);
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.events_written, 1);
	cr_assert_eq(st.armed, VF_ARM_NONE);
	cr_assert_eq(st.queued, 3);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 8);
	/* Re-arming fires once more, on a new CQE only. */
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(written(r.cq), 1);
	cr_assert_eq(vf_cq_push(r.cq, 4, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(written(r.cq), 2);
	/* Unread events are purged by destroy, as the kernel does. */
	rig_down(&r);
}

Test(fake_cq, solicited_only_fires_on_solicited_or_error_cqes)
{
	struct rig r;

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 1), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(written(r.cq), 0, "unsolicited success does not fire");
	cr_assert_eq(vf_cq_push(r.cq, 2, IBV_WC_SUCCESS, 1), 0);
	cr_assert_eq(written(r.cq), 1, "solicited fires");

	cr_assert_eq(ibv_req_notify_cq(r.cq, 1), 0);
	cr_assert_eq(vf_cq_push(r.cq, 3, IBV_WC_WR_FLUSH_ERR, 0), 0);
	cr_assert_eq(written(r.cq), 2, "an error CQE fires");
	rig_down(&r);
}

Test(fake_cq, a_next_completion_arm_widens_a_solicited_arm)
{
	struct rig r;
	struct vf_cq_stats st;

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 1), 0);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 1), 0);
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.armed, VF_ARM_NEXT);
	cr_assert_eq(st.arm_calls, 3);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(written(r.cq), 1);
	rig_down(&r);
}

static void push_one(struct ibv_cq *cq, int solicited_only, void *arg)
{
	int *pushed = arg;

	(void)solicited_only;
	cr_assert_eq(vf_cq_push(cq, 99, IBV_WC_SUCCESS, 0), 0);
	++*pushed;
	vf_cq_set_hooks(cq, NULL, NULL, NULL); /* once */
}

Test(fake_cq, a_cqe_landing_between_the_last_empty_poll_and_the_arm_gets_no_event)
{
	struct rig r;
	struct ibv_wc wc;
	int pushed = 0;

	rig_up(&r, 8);
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 0, "drained");
	vf_cq_set_hooks(r.cq, push_one, NULL, &pushed);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(pushed, 1);
	cr_assert_eq(written(r.cq), 0);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 0, "blocking now would sleep forever");
	/* Only the poll after the arm finds it. */
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 99);
	rig_down(&r);
}

Test(fake_cq, an_event_can_arrive_with_its_cqe_already_drained)
{
	struct rig r;
	struct ibv_wc wc;
	struct ibv_cq *got;
	void *got_ctx;
	struct vf_cq_stats st;
	int pushed = 0;

	rig_up(&r, 8);
	vf_cq_set_hooks(r.cq, NULL, push_one, &pushed);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(pushed, 1);
	cr_assert_eq(written(r.cq), 1);
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 1, "the re-poll after the arm drains it");
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	cr_assert_eq(got, r.cq);
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 0, "legal: event, empty CQ");
	ibv_ack_cq_events(r.cq, 1);
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.polls, 2);
	cr_assert_eq(st.cqes_polled, 1);
	rig_down(&r);
}

Test(fake_cq, unread_event_of_a_destroyed_cq_is_purged)
{
	struct rig r;
	struct ibv_cq *cq2, *got;
	void *got_ctx;
	unsigned long purged = vf_records_discarded();

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 8);
	/* Nothing read, nothing to ack: the destroy completes at once. */
	cr_assert_eq(vf_cq_destroy(r.cq, 1000), 0);
	r.cq = NULL;
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1,
		     "a record naming the freed CQ must never reach libibverbs");
	cr_assert_eq(errno, EAGAIN);
	cr_assert_eq(vf_records_discarded(), purged + 1);

	cq2 = vf_cq_create(r.ctx, r.ch, NULL, 2);
	cr_assert_eq(ibv_req_notify_cq(cq2, 0), 0);
	cr_assert_eq(vf_cq_push(cq2, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	cr_assert_eq(got, cq2);
	ibv_ack_cq_events(cq2, 1);
	cr_assert_eq(vf_cq_destroy(cq2, 1000), 0);
	rig_down(&r);
}

Test(fake_cq, a_full_cq_refuses_the_cqe)
{
	struct rig r;

	rig_up(&r, 2);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 2, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 3, IBV_WC_SUCCESS, 0), -ENOSPC);
	rig_down(&r);
}

Test(fake_cq, arm_and_poll_failures_use_the_providers_conventions)
{
	struct rig r;
	struct ibv_wc wc;
	struct vf_cq_stats st;

	rig_up(&r, 2);
	vf_cq_fail_next_arm(r.cq, EIO);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), EIO, "positive errno");
	vf_cq_stats(r.cq, &st);
	cr_assert_eq(st.armed, VF_ARM_NONE);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	vf_cq_fail_next_poll(r.cq, EIO);
	cr_assert_lt(ibv_poll_cq(r.cq, 1, &wc), 0, "negative");
	cr_assert_eq(ibv_poll_cq(r.cq, 1, &wc), 0);
	rig_down(&r);
}

/* The binding's protocol against a concurrent producer: no lost wakeup. */
struct producer {
	struct ibv_cq *cq;
	int n;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	int i, rc;

	for (i = 0; i < p->n; i++) {
		while ((rc = vf_cq_push(p->cq, (uint64_t)i, IBV_WC_SUCCESS, 0)) == -ENOSPC)
			sched_yield();
		if (rc)
			return (void *)(intptr_t)rc;
		if (i % 7 == 0)
			sched_yield();
	}
	return NULL;
}

Test(fake_cq, drain_arm_repoll_against_a_concurrent_producer_loses_no_wakeup)
{
	struct rig r;
	struct producer p;
	pthread_t t;
	struct ibv_wc wc[16];
	struct ibv_cq *got;
	void *got_ctx, *ret;
	int n, i, next = 0, blocked = 0;
	unsigned acks = 0;

	rig_up(&r, 64);
	p.cq = r.cq;
	p.n = 3000;
	cr_assert_eq(pthread_create(&t, NULL, produce, &p), 0);
	while (next < p.n) {
		while ((n = ibv_poll_cq(r.cq, 16, wc)) > 0)
			for (i = 0; i < n; i++)
				cr_assert_eq(wc[i].wr_id, (uint64_t)next++, "CQEs in order");
		cr_assert_eq(n, 0);
		if (next == p.n)
			break;
		cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
		n = ibv_poll_cq(r.cq, 16, wc);
		if (n > 0) {
			for (i = 0; i < n; i++)
				cr_assert_eq(wc[i].wr_id, (uint64_t)next++);
			continue;
		}
		cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0); /* blocks */
		cr_assert_eq(got, r.cq);
		acks++;
		blocked++;
	}
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_null(ret);
	/* Events left from arms whose CQEs the re-poll took: read and ack. */
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	while (ibv_get_cq_event(r.ch, &got, &got_ctx) == 0)
		acks++;
	cr_assert_eq(errno, EAGAIN);
	ibv_ack_cq_events(r.cq, acks);
	cr_log_info("%d CQEs, blocked %d times, %u events", p.n, blocked, acks);
	rig_down(&r);
}

/* ---------------------------------------------------- fault injection */

TestSuite(fake_inject, .init = need_fake, .timeout = 30);

Test(fake_inject, read_errors_come_out_of_ibv_get_cq_event_as_minus_one_and_errno)
{
	static const int errs[] = { EAGAIN, EINTR, EIO };
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;
	size_t i;

	rig_up(&r, 8);
	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), 0);
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		unsigned long reads = vf_fd_reads(r.ch->fd);

		cr_assert_eq(vf_inject_read(r.ch->fd, errs[i], 1), 0);
		errno = 0;
		cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1);
		cr_assert_eq(errno, errs[i], "errno %d, want %d", errno, errs[i]);
		cr_assert_eq(vf_fd_reads(r.ch->fd), reads + 1);
	}
	cr_assert_eq(vf_fd_pending(r.ch->fd), 8, "injection consumes no data");
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), 0);
	cr_assert_eq(got, r.cq);
	ibv_ack_cq_events(r.cq, 1);
	rig_down(&r);
}

Test(fake_inject, read_errors_come_out_of_ibv_get_async_event_as_minus_one_and_errno)
{
	static const int errs[] = { EAGAIN, EINTR, EIO };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_async_event ev;
	size_t i;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	for (i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		cr_assert_eq(vf_inject_read(ctx->async_fd, errs[i], 1), 0);
		errno = 0;
		cr_assert_eq(ibv_get_async_event(ctx, &ev), -1);
		cr_assert_eq(errno, errs[i]);
	}
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	ibv_ack_async_event(&ev);
	finish(ctx);
}

Test(fake_inject, forever_keeps_failing_until_cleared)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_async_event ev;
	int i;

	cr_assert_eq(vf_async_push(ctx, IBV_EVENT_LID_CHANGE, 1), 0);
	cr_assert_eq(vf_inject_read(ctx->async_fd, EIO, VF_FOREVER), 0);
	for (i = 0; i < 5; i++) {
		errno = 0;
		cr_assert_eq(ibv_get_async_event(ctx, &ev), -1);
		cr_assert_eq(errno, EIO);
	}
	cr_assert_eq(vf_inject_read(ctx->async_fd, 0, 0), 0);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
	ibv_ack_async_event(&ev);
	finish(ctx);
}

Test(fake_inject, a_short_read_is_minus_one_with_errno_untouched)
{
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;
	static const char half[4];

	rig_up(&r, 2);
	cr_assert_eq(write(vf_channel_wfd(r.ch), half, sizeof half), 4);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1);
	cr_assert_eq(errno, 0, "errno means nothing after a short read");
	rig_down(&r);
}

Test(fake_inject, an_empty_non_blocking_channel_is_eagain)
{
	struct rig r;
	struct ibv_cq *got;
	void *got_ctx;

	rig_up(&r, 2);
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1);
	cr_assert_eq(errno, EAGAIN);
	rig_down(&r);
}

static void *blocked_reader(void *arg)
{
	struct ibv_comp_channel *ch = arg;
	struct ibv_cq *got;
	void *got_ctx;

	errno = 0;
	if (ibv_get_cq_event(ch, &got, &got_ctx) != -1)
		return (void *)(intptr_t)-1;
	return (void *)(intptr_t)errno;
}

Test(fake_inject, device_gone_delivers_what_is_queued_then_eio_everywhere)
{
	struct rig r;
	struct ibv_async_event ev;
	struct ibv_cq *got;
	void *got_ctx, *ret;
	struct pollfd pfd;
	pthread_t t;

	rig_up(&r, 4);
	cr_assert_eq(vf_async_push(r.ctx, IBV_EVENT_PORT_ERR, 1), 0);
	cr_assert_eq(pthread_create(&t, NULL, blocked_reader, r.ch), 0);
	usleep(50 * 1000);
	vf_ctx_device_gone(r.ctx, 1);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_eq((intptr_t)ret, EIO, "a blocked reader wakes with EIO");

	/* Queued records first, then EIO, as the disassociated kernel does;
	 * poll says POLLIN while records are queued, POLLERR after. */
	pfd.fd = r.ctx->async_fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 1);
	cr_assert_eq(pfd.revents, POLLIN, "records queued: POLLIN only, not %#x",
	             (unsigned)pfd.revents);
	cr_assert_eq(ibv_get_async_event(r.ctx, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_PORT_ERR);
	ibv_ack_async_event(&ev);
	cr_assert_eq(ibv_get_async_event(r.ctx, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_DEVICE_FATAL);
	ibv_ack_async_event(&ev);
	errno = 0;
	cr_assert_eq(ibv_get_async_event(r.ctx, &ev), -1);
	cr_assert_eq(errno, EIO);

	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(r.ch, &got, &got_ctx), -1);
	cr_assert_eq(errno, EIO, "non-blocking readers see EIO too");

	pfd.fd = r.ch->fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 1);
	cr_assert_eq(pfd.revents, POLLERR, "drained: POLLERR, as the kernel "
	             "says (the pipe's POLLHUP turned into it), not %#x",
	             (unsigned)pfd.revents);
	pfd.fd = r.ctx->async_fd;
	cr_assert_eq(poll(&pfd, 1, 0), 1);
	cr_assert_eq(pfd.revents, POLLERR, "the async fd, drained: %#x",
	             (unsigned)pfd.revents);

	cr_assert_eq(ibv_req_notify_cq(r.cq, 0), 0);
	cr_assert_eq(vf_cq_push(r.cq, 1, IBV_WC_SUCCESS, 0), -ENODEV);
	cr_assert_eq(vf_async_push(r.ctx, IBV_EVENT_PORT_ACTIVE, 1), -ENODEV);
	rig_down(&r);
}

/* -------------------------------------------------------- device list */

TestSuite(fake_device_list, .init = need_fake, .timeout = 30);

Test(fake_device_list, forced_null_with_enosys)
{
	int n = 5;

	vf_device_list_fail(ENOSYS);
	errno = 0;
	cr_assert_null(ibv_get_device_list(&n));
	cr_assert_eq(errno, ENOSYS);
	cr_assert_eq(n, 0);
	vf_device_list_fail(0);
}

Test(fake_device_list, unforced_is_the_real_function)
{
	struct ibv_device **l;
	int n = -1;

	errno = 0;
	l = ibv_get_device_list(&n);
	if (l) {
		cr_log_info("%d real RDMA device(s)", n);
		ibv_free_device_list(l);
	} else {
		cr_log_info("no RDMA: errno %d (%s)", errno, strerror(errno));
		cr_assert_neq(errno, 0);
		cr_assert_eq(n, 0);
	}
}
