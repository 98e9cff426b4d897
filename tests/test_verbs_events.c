/*
 * tests/test_verbs_events.c: a CQ the application polls and arms itself on
 * a channel that binding CQs share (lfp_verbs(3), "CQs the binding does not
 * poll"), over the REAL libibverbs on the device-free context of
 * support/vf/vf.h.
 *
 * What is promised and checked here:
 *   - without a binding object, such a CQ's event read by a binding CQ is
 *     acked and dropped (its owner never sees it, but its destroy does not
 *     wait); with an events object (lfp_verbs_cq_events_open) the event is
 *     handed to the owner, whichever binding object read the channel, and
 *     acked by the binding;
 *   - the events object's wait object wakes for it (FD: its own fd; SET:
 *     its wait set), trywait reports it, poll sets report it, and
 *     lfp_verbs_cq_events_read counts it once;
 *   - the binding never polls or arms that CQ: its completions are the
 *     owner's;
 *   - one binding object per CQ (-EEXIST), and the CQ read calls refuse an
 *     events object (-EINVAL); close acks what is left.
 * Each test ends with finish(): no fake object is left alive.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "verbs/suite.h"

TestSuite(verbs_events, .init = need_fake, .timeout = 30);

/* One channel: a binding CQ b and a CQ r that the application polls. */
struct erig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_wait *ws;
	struct ibv_cq *bcq, *rcq;
	struct lfp_verbs_cq *b, *r;   /* r: the events object, or NULL */
};

/* with_r: open the events object over r, with wait object robj. */
static void erig_up(struct erig *e, int with_r, enum lfp_wait_obj robj)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr ba = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr ra = { .wait_obj = robj };

	memset(e, 0, sizeof(*e));
	e->ctx = vf_ctx_create();
	cr_assert_not_null(e->ctx);
	e->ch = vf_channel_create(e->ctx);
	cr_assert_not_null(e->ch);
	e->bcq = vf_cq_create(e->ctx, e->ch, NULL, 16);
	e->rcq = vf_cq_create(e->ctx, e->ch, NULL, 16);
	cr_assert(e->bcq && e->rcq);
	if (robj == LFP_WAIT_SET) {
		cr_assert_eq(lfp_wait_open(&wa, &e->ws), 0);
		ra.wait_set = e->ws;
	}
	cr_assert_eq(lfp_verbs_cq_open(e->bcq, e->ch, &ba, &e->b, NULL), 0);
	if (with_r)
		cr_assert_eq(lfp_verbs_cq_events_open(e->rcq, e->ch, &ra, &e->r, NULL), 0);
}

static void erig_down(struct erig *e)
{
	cr_assert_eq(lfp_verbs_cq_close(e->b), 0);
	if (e->r)
		cr_assert_eq(lfp_verbs_cq_close(e->r), 0);
	if (e->ws)
		cr_assert_eq(lfp_wait_close(e->ws), 0);
	cr_assert_eq(vf_cq_destroy(e->bcq, 1000), 0, "acks missing after close");
	cr_assert_eq(vf_cq_destroy(e->rcq, 1000), 0, "acks missing after close");
	cr_assert_eq(ibv_destroy_comp_channel(e->ch), 0);
	finish(e->ctx);
}

/* The owner's own arm and poll, as with a raw channel. */
static void owner_arm(struct ibv_cq *cq)
{
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
}

static int owner_poll(struct ibv_cq *cq, uint64_t *wr_id)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(cq, 1, &wc);

	if (n == 1)
		*wr_id = wc.wr_id;
	return n;
}

Test(verbs_events, without_an_events_object_a_raw_cq_s_event_is_acked_and_dropped)
{
	struct lfp_verbs_cq_attr ba = { .wait_obj = LFP_WAIT_FD };
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq *bcq, *rcq;
	struct lfp_verbs_cq *b;

	ctx = vf_ctx_create();
	ch = vf_channel_create(ctx);
	bcq = vf_cq_create(ctx, ch, NULL, 16);
	rcq = vf_cq_create(ctx, ch, NULL, 16);
	cr_assert_eq(lfp_verbs_cq_open(bcq, ch, &ba, &b, NULL), 0);
	owner_arm(rcq);
	cr_assert_eq(vf_cq_push(rcq, 5, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(trywait1(&b->fid), 0, "the binding CQ has nothing");
	cr_assert_eq(stats(rcq).events_read, 1ul, "it read the raw CQ's event");
	cr_assert_eq(acked(rcq), 1u, "and acked it: the raw CQ's destroy never waits");
	cr_assert_eq(vf_fd_pending(ch->fd), 0, "its owner can no longer read it");
	cr_assert_eq(lfp_verbs_cq_close(b), 0);
	cr_assert_eq(vf_cq_destroy(bcq, 1000), 0);
	cr_assert_eq(vf_cq_destroy(rcq, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

static void handed_over(enum lfp_wait_obj robj)
{
	uint64_t wr_id = 0;
	struct erig e;

	erig_up(&e, 1, robj);
	cr_assert_eq(stats(e.rcq).arm_calls, 0ul, "the binding does not arm it");
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), -EAGAIN);
	if (robj != LFP_WAIT_NONE)
		cr_assert_eq(trywait1(&e.r->fid), 0, "nothing for it yet");
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 5, IBV_WC_SUCCESS, 0), 0);
	/* The binding CQ drains the channel: the event is credited. */
	cr_assert_eq(trywait1(&e.b->fid), 0, "the binding CQ has nothing");
	cr_assert_eq(vf_fd_pending(e.ch->fd), 0);
	if (robj == LFP_WAIT_FD)
		cr_assert(fd_readable(getwait_fd(&e.r->fid), 0),
			  "the events object's fd woke for the event");
	if (robj == LFP_WAIT_SET)
		cr_assert_eq(lfp_wait(e.ws, 0), 0, "its set woke for the event");
	if (robj != LFP_WAIT_NONE)
		cr_assert_eq(trywait1(&e.r->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), 1, "handed over, once");
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), -EAGAIN);
	/* The completion is still the owner's: the binding polled nothing. */
	cr_assert_eq(stats(e.rcq).polls, 0ul);
	cr_assert_eq(owner_poll(e.rcq, &wr_id), 1);
	cr_assert_eq(wr_id, 5u);
	if (robj != LFP_WAIT_NONE)
		cr_assert_eq(trywait1(&e.r->fid), 0);
	cr_assert_eq(stats(e.rcq).arm_calls, 1ul, "only the owner's arm");
	erig_down(&e); /* acked by close (batch 64): destroy does not wait */
}

Test(verbs_events, an_events_object_fd_is_handed_the_event_a_binding_cq_read)
{
	handed_over(LFP_WAIT_FD);
}

Test(verbs_events, an_events_object_in_a_set_is_handed_the_event_a_binding_cq_read)
{
	handed_over(LFP_WAIT_SET);
}

Test(verbs_events, an_events_object_with_no_wait_object_is_handed_the_event)
{
	handed_over(LFP_WAIT_NONE);
}

Test(verbs_events, its_own_read_drains_the_channel_and_credits_the_binding_cq)
{
	struct ibv_wc wc;
	struct erig e;

	erig_up(&e, 1, LFP_WAIT_FD);
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(vf_cq_push(e.bcq, 2, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), 1);
	cr_assert(fd_readable(getwait_fd(&e.b->fid), 0),
		  "the binding CQ's fd woke for its event");
	cr_assert_eq(trywait1(&e.b->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_read(e.b, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 2u);
	/* Events of several arms are counted. */
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 3, IBV_WC_SUCCESS, 0), 0);
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 4, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), 2);
	cr_assert_eq(acked(e.rcq), 0u, "acked in batches");
	erig_down(&e);
}

Test(verbs_events, a_poll_set_reports_it_while_an_event_waits)
{
	struct lfp_poll *ps;
	void *ctx[2];
	struct erig e;

	erig_up(&e, 1, LFP_WAIT_FD);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &e.r->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, ctx, 2), 0);
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(lfp_poll(ps, ctx, 2), 1);
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), 1);
	cr_assert_eq(lfp_poll(ps, ctx, 2), 0);
	cr_assert_eq(lfp_verbs_cq_close(e.r), -EBUSY, "in a poll set");
	cr_assert_eq(lfp_poll_del(ps, &e.r->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	(void)owner_poll(e.rcq, &(uint64_t){ 0 });
	erig_down(&e);
}

Test(verbs_events, arguments_kinds_and_one_object_per_cq)
{
	struct lfp_verbs_cq_attr sol = { .solicited_only = 1 };
	struct lfp_verbs_cq *x;
	struct ibv_wc wc;
	uint32_t fclass;
	struct erig e;

	erig_up(&e, 1, LFP_WAIT_FD);
	fclass = e.r->fid.fclass;
	cr_assert_eq(fclass, LFP_CLASS_VERBS_CQ_EVENTS);
	cr_assert_eq(lfp_verbs_cq_events_open(e.rcq, e.ch, NULL, &x, NULL), -EEXIST);
	cr_assert_eq(lfp_verbs_cq_open(e.rcq, e.ch, NULL, &x, NULL), -EEXIST);
	cr_assert_eq(lfp_verbs_cq_events_open(e.bcq, e.ch, NULL, &x, NULL), -EEXIST);
	cr_assert_eq(lfp_verbs_cq_read(e.r, &wc, 1), -EINVAL, "not a CQ to read");
	cr_assert_eq(lfp_verbs_cq_sread(e.r, &wc, 1, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_events_read(e.b), -EINVAL, "not an events object");
	cr_assert_eq(lfp_verbs_cq_events_read(NULL), -EINVAL);
	erig_down(&e);

	erig_up(&e, 0, LFP_WAIT_NONE); /* no events object */
	cr_assert_eq(lfp_verbs_cq_events_open(e.rcq, e.ch, &sol, &x, NULL), -EINVAL,
		     "the owner arms the CQ: solicited_only means nothing here");
	cr_assert_eq(lfp_verbs_cq_events_open(NULL, e.ch, NULL, &x, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_events_open(e.rcq, NULL, NULL, &x, NULL), -EINVAL);
	erig_down(&e);
}

Test(verbs_events, close_acks_what_was_handed_over_and_what_was_not)
{
	struct erig e;

	erig_up(&e, 1, LFP_WAIT_FD);
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 1, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(lfp_verbs_cq_events_read(e.r), 1);
	owner_arm(e.rcq);
	cr_assert_eq(vf_cq_push(e.rcq, 2, IBV_WC_SUCCESS, 0), 0);
	cr_assert_eq(trywait1(&e.b->fid), 0, "credited, not yet handed over");
	cr_assert_eq(lfp_verbs_cq_close(e.r), 0);
	e.r = NULL;
	cr_assert_eq(acked(e.rcq), 2u, "both acked at close");
	erig_down(&e);
}
