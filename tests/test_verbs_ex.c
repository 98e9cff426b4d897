/*
 * tests/test_verbs_ex.c: extended CQs (ibv_create_cq_ex) in the verbs
 * binding, over the REAL libibverbs on the device-free context of
 * support/vf/vf.h, whose fake extended CQ serves ibv_start_poll,
 * ibv_next_poll, ibv_end_poll and the ibv_wc_read_* ops, and leaves NULL
 * the read ops of fields not asked for at creation (as providers may).
 *
 * What is promised and checked (lfp_verbs(3), "Extended CQs"): the entry
 * carries the fields asked for, timestamps included, and the binding
 * calls no read op for another field; error completions carry what
 * ibv_poll_cq(3) defines for them; the arm race, acks and close rules,
 * sread, poll sets and wait sets (shared with plain CQs) work as for a
 * plain CQ; a plain CQ's calls refuse an extended CQ and back.
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

TestSuite(verbs_ex, .init = need_fake, .timeout = 30);

#define ALL_FIELDS ((uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS)

struct xrig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;             /* ibv_cq_ex_to_cq(cqx) */
	struct lfp_verbs_cq *vcq;
	int marker;
};

/* The real ibv_create_cq_ex on the test context, with wc_flags. */
static struct ibv_cq_ex *create_ex(struct ibv_context *ctx, struct ibv_comp_channel *ch,
				   int depth, uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_cq_ex *cqx;

	memset(&ca, 0, sizeof(ca));
	ca.cqe = (uint32_t)depth;
	ca.channel = ch;
	ca.wc_flags = wc_flags;
	cqx = ibv_create_cq_ex(ctx, &ca);
	cr_assert_not_null(cqx, "ibv_create_cq_ex: %s", strerror(errno));
	return cqx;
}

static void xrig_up(struct xrig *r, int depth, uint64_t wc_flags, enum lfp_wait_obj obj,
		    unsigned ack_batch)
{
	struct lfp_verbs_cq_ex_attr a;

	memset(r, 0, sizeof(*r));
	r->ctx = vf_ctx_create();
	cr_assert_not_null(r->ctx);
	r->ch = vf_channel_create(r->ctx);
	cr_assert_not_null(r->ch);
	r->cqx = create_ex(r->ctx, r->ch, depth, wc_flags);
	r->cq = ibv_cq_ex_to_cq(r->cqx);
	memset(&a, 0, sizeof(a));
	a.cq.wait_obj = obj;
	a.cq.ack_batch = ack_batch;
	a.wc_flags = wc_flags;
	cr_assert_eq(lfp_verbs_cq_ex_open(r->cqx, r->ch, &a, &r->vcq, &r->marker), 0);
}

/* Close, then the REAL ibv_destroy_cq must not wait for any ack. */
static void xrig_down(struct xrig *r)
{
	if (r->vcq)
		cr_assert_eq(lfp_verbs_cq_close(r->vcq), 0);
	vf_ctx_set_destroy_timeout(r->ctx, 1000);
	cr_assert_eq(ibv_destroy_cq(r->cq), 0, "ibv_destroy_cq would hang: acks missing");
	cr_assert_eq(ibv_destroy_comp_channel(r->ch), 0);
	finish(r->ctx);
}

static void push_id(struct ibv_cq *cq, uint64_t wr_id)
{
	cr_assert_eq(vf_cq_push(cq, wr_id, IBV_WC_SUCCESS, 0), 0);
}

/* One completion with every field set from seed. */
static void push_full(struct ibv_cq *cq, uint64_t seed, enum ibv_wc_status st)
{
	struct ibv_wc wc;
	struct vf_cqe_ex ex;

	memset(&wc, 0, sizeof(wc));
	memset(&ex, 0, sizeof(ex));
	wc.wr_id = seed;
	wc.status = st;
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.vendor_err = (uint32_t)(seed + 1);
	wc.byte_len = (uint32_t)(seed + 2);
	wc.imm_data = (uint32_t)(seed + 3);
	wc.qp_num = (uint32_t)(seed + 4);
	wc.src_qp = (uint32_t)(seed + 5);
	wc.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH;
	wc.slid = (uint16_t)(seed + 6);
	wc.sl = (uint8_t)(seed + 7);
	wc.dlid_path_bits = (uint8_t)(seed + 8);
	ex.completion_ts = seed * 1000 + 9;
	ex.completion_wallclock_ns = seed * 1000000 + 10;
	ex.cvlan = (uint16_t)(seed + 11);
	ex.flow_tag = (uint32_t)(seed + 12);
	ex.tm_info.tag = seed + 13;
	ex.tm_info.priv = (uint32_t)(seed + 14);
	cr_assert_eq(vf_cq_push_ex(cq, &wc, &ex, 0), 0);
}

/* An entry read from a push_full(seed) with the fields asked for. */
static void check_full(const struct lfp_verbs_wc_ex *e, uint64_t seed, uint64_t asked)
{
	cr_assert_eq(e->wr_id, seed);
	cr_assert_eq(e->status, IBV_WC_SUCCESS);
	cr_assert_eq(e->opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(e->wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	cr_assert_eq(e->vendor_err, 0, "vendor_err only with an error status");
	cr_assert_eq(e->fields, asked, "fields %#llx, asked %#llx",
		     (unsigned long long)e->fields, (unsigned long long)asked);
#define FIELD(flag, member, want) \
	cr_assert_eq((uint64_t)e->member, (asked & (flag)) ? (uint64_t)(want) : 0, \
		     #member ": %llu (asked: %d)", (unsigned long long)e->member, \
		     !!(asked & (flag)))
	FIELD(IBV_WC_EX_WITH_BYTE_LEN, byte_len, (uint32_t)(seed + 2));
	FIELD(IBV_WC_EX_WITH_IMM, imm_data, (uint32_t)(seed + 3));
	FIELD(IBV_WC_EX_WITH_QP_NUM, qp_num, (uint32_t)(seed + 4));
	FIELD(IBV_WC_EX_WITH_SRC_QP, src_qp, (uint32_t)(seed + 5));
	FIELD(IBV_WC_EX_WITH_SLID, slid, (uint16_t)(seed + 6));
	FIELD(IBV_WC_EX_WITH_SL, sl, (uint8_t)(seed + 7));
	FIELD(IBV_WC_EX_WITH_DLID_PATH_BITS, dlid_path_bits, (uint8_t)(seed + 8));
	FIELD(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, completion_ts, seed * 1000 + 9);
	FIELD(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, completion_wallclock_ns,
	      seed * 1000000 + 10);
	FIELD(IBV_WC_EX_WITH_CVLAN, cvlan, (uint16_t)(seed + 11));
	FIELD(IBV_WC_EX_WITH_FLOW_TAG, flow_tag, (uint32_t)(seed + 12));
	FIELD(IBV_WC_EX_WITH_TM_INFO, tm_info.tag, seed + 13);
	FIELD(IBV_WC_EX_WITH_TM_INFO, tm_info.priv, (uint32_t)(seed + 14));
#undef FIELD
}

/* ------------------------------------------------------------ open */

Test(verbs_ex, open_checks_its_arguments_and_the_kinds_do_not_mix)
{
	struct lfp_verbs_cq_ex_attr a = { .cq = { .wait_obj = LFP_WAIT_FD } };
	struct lfp_verbs_cq_attr pa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq *v = NULL, *p = NULL;
	struct ibv_comp_channel *ch2;
	struct lfp_verbs_wc_ex e;
	struct ibv_cq *plain;
	struct ibv_wc wc;
	struct xrig r;

	xrig_up(&r, 8, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, LFP_WAIT_FD, 0);
	cr_assert_eq(r.vcq->fid.fclass, LFP_CLASS_VERBS_CQ_EX);
	cr_assert_eq(r.vcq->fid.context, &r.marker);
	cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT, "armed at open");
	cr_assert_eq(lfp_verbs_cq_ex_open(NULL, r.ch, &a, &v, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_open(r.cqx, NULL, &a, &v, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_open(r.cqx, r.ch, &a, NULL, NULL), -EINVAL);
	ch2 = vf_channel_create(r.ctx);
	cr_assert_eq(lfp_verbs_cq_ex_open(r.cqx, ch2, &a, &v, NULL), -EINVAL,
		     "not the CQ's channel");
	a.wc_flags = ALL_FIELDS << 1;
	cr_assert_eq(lfp_verbs_cq_ex_open(r.cqx, r.ch, &a, &v, NULL), -EINVAL,
		     "fields the binding cannot read");
	a.wc_flags = 0;
	cr_assert_eq(lfp_verbs_cq_ex_open(r.cqx, r.ch, &a, &v, NULL), -EEXIST);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &pa, &v, NULL), -EEXIST,
		     "its plain view is the same CQ");
	cr_assert_null(v);
	/* A plain CQ's reads refuse an extended CQ, and back. */
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 1, 0), -EINVAL);
	plain = vf_cq_create(r.ctx, r.ch, NULL, 4);
	cr_assert_eq(lfp_verbs_cq_open(plain, r.ch, &pa, &p, NULL), 0);
	cr_assert_eq(lfp_verbs_cq_ex_read(p, &e, 1), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_sread(p, &e, 1, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_close(p), 0);
	cr_assert_eq(vf_cq_destroy(plain, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch2), 0);
	xrig_down(&r);
}

Test(verbs_ex, null_attr_is_wait_obj_none_with_no_optional_field)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq_ex *cqx = create_ex(ctx, ch, 4, 0);
	struct lfp_verbs_cq *v;
	struct lfp_verbs_wc_ex e;
	enum lfp_wait_obj obj = LFP_WAIT_FD;

	cr_assert_eq(lfp_verbs_cq_ex_open(cqx, ch, NULL, &v, NULL), 0);
	cr_assert_eq(lfp_control(&v->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_NONE);
	push_full(ibv_cq_ex_to_cq(cqx), 4, IBV_WC_SUCCESS);
	cr_assert_eq(lfp_verbs_cq_ex_read(v, &e, 1), 1);
	check_full(&e, 4, 0);
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

/* ------------------------------------------------------------ fields */

Test(verbs_ex, every_field_asked_for_is_read_timestamps_included)
{
	struct lfp_verbs_wc_ex e[4];
	struct xrig r;
	int i;

	xrig_up(&r, 8, ALL_FIELDS, LFP_WAIT_FD, 0);
	for (i = 0; i < 3; i++)
		push_full(r.cq, 100 + (uint64_t)i, IBV_WC_SUCCESS);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, e, 4), 3);
	for (i = 0; i < 3; i++)
		check_full(&e[i], 100 + (uint64_t)i, ALL_FIELDS);
	xrig_down(&r);
}

/*
 * Only what was asked for: the fake leaves every other read op NULL, so a
 * binding that read another field would crash here.
 */
Test(verbs_ex, only_the_fields_asked_for_are_read)
{
	static const uint64_t sets[] = {
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
		IBV_WC_STANDARD_FLAGS,
		IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG | IBV_WC_EX_WITH_TM_INFO,
		IBV_WC_EX_WITH_CVLAN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct lfp_verbs_wc_ex e;
	struct xrig r;
	size_t k;

	for (k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		xrig_up(&r, 4, sets[k], LFP_WAIT_FD, 0);
		push_full(r.cq, 7 + k, IBV_WC_SUCCESS);
		cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
		check_full(&e, 7 + k, sets[k]);
		xrig_down(&r);
	}
}

Test(verbs_ex, an_error_completion_carries_vendor_err_and_qp_num_only)
{
	struct lfp_verbs_wc_ex e;
	struct xrig r;
	uint64_t f;

	for (f = 0; f < 2; f++) {
		xrig_up(&r, 4, ALL_FIELDS & ~(f ? 0 : (uint64_t)IBV_WC_EX_WITH_QP_NUM),
			LFP_WAIT_FD, 0);
		push_full(r.cq, 50, IBV_WC_REM_ACCESS_ERR);
		cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
		cr_assert_eq(e.wr_id, 50);
		cr_assert_eq(e.status, IBV_WC_REM_ACCESS_ERR, "status kept");
		cr_assert_eq(e.vendor_err, 51);
		cr_assert_eq(e.fields, f ? (uint64_t)IBV_WC_EX_WITH_QP_NUM : 0);
		cr_assert_eq(e.qp_num, f ? 54u : 0u);
		cr_assert_eq(e.completion_ts, 0, "not defined for a failed completion");
		cr_assert_eq(e.byte_len, 0);
		xrig_down(&r);
	}
}

Test(verbs_ex, a_failing_start_poll_is_negative_errno)
{
	struct lfp_verbs_wc_ex e;
	struct xrig r;

	xrig_up(&r, 4, 0, LFP_WAIT_FD, 0);
	vf_cq_fail_next_poll(r.cq, EIO);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), -EIO);
	push_id(r.cq, 1);
	vf_cq_fail_next_poll(r.cq, ENOMEM);
	cr_assert_eq(trywait1(&r.vcq->fid), -ENOMEM);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
	xrig_down(&r);
}

/* ------------------------------------------------------------ waiting */

Test(verbs_ex, trywait_empty_is_0_and_the_fd_turns_readable_exactly_at_the_next_cqe)
{
	struct lfp_verbs_wc_ex e[4];
	struct xrig r;
	int fd, i;

	xrig_up(&r, 8, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, LFP_WAIT_FD, 1);
	fd = getwait_fd(&r.vcq->fid);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(trywait1(&r.vcq->fid), 0, "round %d: empty, armed", i);
		cr_assert_not(fd_readable(fd, 0), "round %d", i);
		cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT);
		push_full(r.cq, (uint64_t)i, IBV_WC_SUCCESS);
		cr_assert(fd_readable(fd, 0), "round %d: the CQE makes the fd readable", i);
		cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
		cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, e, 4), 1);
		check_full(&e[0], (uint64_t)i, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	}
	cr_assert_eq(acked(r.cq), stats(r.cq).events_read, "ack_batch 1 acks each");
	xrig_down(&r);
}

static void hook_push_once(struct ibv_cq *cq, int solicited_only, void *arg)
{
	int *left = arg;

	(void)solicited_only;
	if (*left > 0) {
		(*left)--;
		push_full(cq, 77, IBV_WC_SUCCESS);
	}
}

Test(verbs_ex, arm_race_a_cqe_between_the_last_empty_poll_and_the_arm_is_not_lost)
{
	struct lfp_verbs_wc_ex e;
	struct xrig r;
	int left = 0;

	xrig_up(&r, 8, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, LFP_WAIT_FD, 0);
	/* Consume the open's arm: a CQE, its event, a read. */
	push_id(r.cq, 1);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
	cr_assert_eq(stats(r.cq).armed, VF_ARM_NONE);
	/* The CQE lands just before the re-arm: it raises no event. */
	left = 1;
	vf_cq_set_hooks(r.cq, hook_push_once, NULL, &left);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "the re-poll after the arm finds it");
	vf_cq_set_hooks(r.cq, NULL, NULL, NULL);
	cr_assert_eq(stats(r.cq).events_written, 1, "no event for the raced CQE");
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
	check_full(&e, 77, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	xrig_down(&r);
}

Test(verbs_ex, the_stash_serves_entries_in_order_across_reads)
{
	struct lfp_verbs_wc_ex e[5];
	struct xrig r;
	int i, n, got = 0;

	xrig_up(&r, 32, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, LFP_WAIT_FD, 0);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	for (i = 0; i < 20; i++)
		push_full(r.cq, (uint64_t)i, IBV_WC_SUCCESS);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "the trywait stashes what it polled");
	cr_assert_eq(stats(r.cq).queued, 0, "all 20 taken into the stash");
	while ((n = lfp_verbs_cq_ex_read(r.vcq, e, 3 + got % 3)) > 0)
		for (i = 0; i < n; i++, got++)
			check_full(&e[i], (uint64_t)got, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	cr_assert_eq(n, -EAGAIN);
	cr_assert_eq(got, 20);
	xrig_down(&r);
}

static void *late_push(void *arg)
{
	struct xrig *r = arg;

	usleep(50000);
	push_full(r->cq, 9, IBV_WC_SUCCESS);
	return NULL;
}

Test(verbs_ex, sread_is_woken_by_a_cqe_pushed_while_it_sleeps)
{
	struct lfp_verbs_wc_ex e;
	struct xrig r;
	pthread_t t;

	xrig_up(&r, 4, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, LFP_WAIT_FD, 0);
	cr_assert_eq(lfp_verbs_cq_ex_sread(r.vcq, &e, 1, 10), -EAGAIN);
	cr_assert_eq(pthread_create(&t, NULL, late_push, &r), 0);
	cr_assert_eq(lfp_verbs_cq_ex_sread(r.vcq, &e, 1, 5000), 1);
	cr_assert_eq(pthread_join(t, NULL), 0);
	check_full(&e, 9, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	xrig_down(&r);
}

Test(verbs_ex, close_acks_every_event_so_destroy_does_not_wait)
{
	struct xrig r;
	int i;

	xrig_up(&r, 16, 0, LFP_WAIT_FD, 8);
	for (i = 0; i < 5; i++) {
		struct lfp_verbs_wc_ex e;

		cr_assert_eq(trywait1(&r.vcq->fid), 0);
		push_id(r.cq, (uint64_t)i);
		cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
		cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
	}
	cr_assert_eq(stats(r.cq).events_read, 5);
	cr_assert_eq(acked(r.cq), 0, "ack_batch 8: not yet");
	/* One more event left unread on the channel for close to drain. */
	push_id(r.cq, 5);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), 0);
	r.vcq = NULL;
	cr_assert_eq(acked(r.cq), stats(r.cq).events_read, "close flushed the acks");
	xrig_down(&r);
}

/* ------------------------------------------------------------ sets */

Test(verbs_ex, a_poll_set_reports_the_extended_cq_while_it_has_completions)
{
	struct lfp_verbs_wc_ex e;
	struct lfp_poll *ps;
	void *ctxs[4];
	struct xrig r;

	xrig_up(&r, 4, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, LFP_WAIT_NONE, 0);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &r.vcq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 0, "empty");
	push_full(r.cq, 3, IBV_WC_SUCCESS);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 1);
	cr_assert_eq(ctxs[0], &r.marker);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), -EBUSY, "still in the poll set");
	cr_assert_eq(lfp_verbs_cq_ex_read(r.vcq, &e, 1), 1);
	check_full(&e, 3, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 0, "read");
	cr_assert_eq(lfp_poll_del(ps, &r.vcq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	xrig_down(&r);
}

Test(verbs_ex, an_extended_and_a_plain_cq_share_a_channel_in_a_wait_set)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr pa = { .wait_obj = LFP_WAIT_SET, .ack_batch = 1 };
	struct lfp_verbs_cq_ex_attr xa;
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq_ex *cqx = create_ex(ctx, ch, 8, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	struct ibv_cq *plain = vf_cq_create(ctx, ch, NULL, 8);
	struct lfp_verbs_cq *vx, *vp;
	struct lfp_verbs_wc_ex e;
	struct lfp_fid *f;
	struct lfp_wait *ws;
	struct ibv_wc wc;

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	f = &ws->fid;
	memset(&xa, 0, sizeof(xa));
	xa.cq = pa;
	xa.cq.wait_set = ws;
	xa.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	pa.wait_set = ws;
	cr_assert_eq(lfp_verbs_cq_ex_open(cqx, ch, &xa, &vx, NULL), 0);
	cr_assert_eq(lfp_verbs_cq_open(plain, ch, &pa, &vp, NULL), 0);
	cr_assert_eq(trywait1(f), 0);
	cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT);
	push_full(ibv_cq_ex_to_cq(cqx), 21, IBV_WC_SUCCESS);
	cr_assert_eq(lfp_wait(ws, 1000), 0, "the extended CQ's event wakes the set");
	cr_assert_eq(lfp_verbs_cq_ex_read(vx, &e, 1), 1);
	check_full(&e, 21, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	cr_assert_eq(trywait1(f), 0);
	push_id(plain, 22);
	cr_assert_eq(lfp_wait(ws, 1000), 0);
	cr_assert_eq(lfp_verbs_cq_read(vp, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 22);
	cr_assert_eq(trywait1(f), 0);
	cr_assert_eq(acked(ibv_cq_ex_to_cq(cqx)), 1, "acked on the extended CQ");
	cr_assert_eq(acked(plain), 1);
	cr_assert_eq(lfp_verbs_cq_close(vx), 0);
	cr_assert_eq(lfp_verbs_cq_close(vp), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	cr_assert_eq(vf_cq_destroy(plain, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}
