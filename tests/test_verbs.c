/*
 * tests/test_verbs.c: liblfpoll_verbs (bindings/verbs) against the REAL
 * libibverbs, driven without hardware by the fake context of
 * support/vf/vf.h (method: docs/verbs.md, "Testing without hardware"; contract: docs/verbs.md and lfp_verbs(3)).
 *
 * Suite "verbs" holds only the canary and sorts before every other suite
 * ("verbs_*"); every other suite's .init checks the canary too, so a
 * libibverbs whose private-ops slots cannot be discovered fails everything
 * with the reason instead of crashing. Each test ends with finish(), which
 * checks that no fake context, channel or object is left alive.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs/suite.h"

static const struct lfp_verbs_cq_attr FD_ATTR = { .wait_obj = LFP_WAIT_FD };

/* ------------------------------------------------------------ helpers */

static unsigned async_acked(pthread_mutex_t *m, const uint32_t *counter)
{
	unsigned v;

	pthread_mutex_lock(m);
	v = *counter;
	pthread_mutex_unlock(m);
	return v;
}

/* One context, one channel, one CQ, optionally a binding object. */
struct rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct lfp_verbs_cq *vcq;
	int marker;
};

static void rig_up(struct rig *r, int depth)
{
	memset(r, 0, sizeof(*r));
	r->ctx = vf_ctx_create();
	cr_assert_not_null(r->ctx);
	r->ch = vf_channel_create(r->ctx);
	cr_assert_not_null(r->ch);
	r->cq = vf_cq_create(r->ctx, r->ch, NULL, depth);
	cr_assert_not_null(r->cq);
}

/* attr NULL: FD mode (the binding's own NULL default is NONE). */
static void rig_open(struct rig *r, int depth, const struct lfp_verbs_cq_attr *attr)
{
	rig_up(r, depth);
	if (!attr)
		attr = &FD_ATTR;
	cr_assert_eq(lfp_verbs_cq_open(r->cq, r->ch, attr, &r->vcq, &r->marker), 0);
}

/* Close the binding (if open), then destroy must not wait for any ack. */
static void rig_down(struct rig *r)
{
	if (r->vcq)
		cr_assert_eq(lfp_verbs_cq_close(r->vcq), 0);
	cr_assert_eq(vf_cq_destroy(r->cq, 1000), 0,
		     "ibv_destroy_cq would hang: acks missing after close");
	cr_assert_eq(ibv_destroy_comp_channel(r->ch), 0);
	finish(r->ctx);
}

static void push(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st, int sol)
{
	cr_assert_eq(vf_cq_push(cq, wr_id, st, sol), 0, "vf_cq_push %llu",
		     (unsigned long long)wr_id);
}

/* Reads one completion (n = 1) and checks its wr_id. */
static void read_next(struct lfp_verbs_cq *vcq, uint64_t wr_id)
{
	struct ibv_wc wc;
	int n = lfp_verbs_cq_read(vcq, &wc, 1);

	cr_assert_eq(n, 1, "read %d, want a completion", n);
	cr_assert_eq(wc.wr_id, wr_id, "wr_id %llu, want %llu",
		     (unsigned long long)wc.wr_id, (unsigned long long)wr_id);
}

/* Reads exactly one completion (nothing else is there) and checks it. */
static void read_one(struct lfp_verbs_cq *vcq, uint64_t wr_id)
{
	struct ibv_wc wc[4];
	int n = lfp_verbs_cq_read(vcq, wc, 4);

	cr_assert_eq(n, 1, "read %d completions, want exactly 1", n);
	cr_assert_eq(wc[0].wr_id, wr_id, "wr_id %llu, want %llu",
		     (unsigned long long)wc[0].wr_id, (unsigned long long)wr_id);
}

/* ------------------------------------------------------------- canary */

Test(verbs, canary)
{
	const char *why = vf_priv_canary();

	cr_assert_null(why, "libibverbs private-ops slot discovery failed, so no "
		       "verbs test can run: %s", why);
}

/* --------------------------------------------------------------- open */

TestSuite(verbs_open, .init = need_fake, .timeout = 30);

Test(verbs_open, null_arguments_are_einval)
{
	struct rig r;
	struct lfp_verbs_cq *v = NULL;

	rig_up(&r, 4);
	cr_assert_eq(lfp_verbs_cq_open(NULL, r.ch, NULL, &v, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, NULL, NULL, &v, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, NULL, NULL), -EINVAL);
	cr_assert_null(v);
	cr_assert_eq(lfp_verbs_cq_close(NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_read(NULL, NULL, 1), -EINVAL);
	cr_assert_eq(stats(r.cq).arm_calls, 0, "a failed open must not arm");
	rig_down(&r);
}

Test(verbs_open, bad_wait_objects_are_einval)
{
	static const enum lfp_wait_obj bad[] = {
		LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD, LFP_WAIT_POLLFD, (enum lfp_wait_obj)99
	};
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_wait_attr mca = { .wait_obj = LFP_WAIT_MUTEX_COND };
	struct lfp_verbs_cq_attr a;
	struct lfp_verbs_cq *v = NULL;
	struct lfp_wait *ws, *mc;
	struct rig r;
	size_t i;

	rig_up(&r, 4);
	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	cr_assert_eq(lfp_wait_open(&mca, &mc), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.wait_obj = bad[i];
		cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &a, &v, NULL), -EINVAL,
			     "wait_obj %d", (int)bad[i]);
	}
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &a, &v, NULL), -EINVAL,
		     "SET without a wait set");
	a.wait_obj = LFP_WAIT_FD;
	a.wait_set = ws;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &a, &v, NULL), -EINVAL,
		     "a wait set without SET");
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = mc;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &a, &v, NULL), -EINVAL,
		     "a MUTEX_COND set cannot watch the channel fd");
	cr_assert_null(v);
	cr_assert_eq(stats(r.cq).arm_calls, 0, "a failed open must not arm");
	/* Nothing half-registered: the same CQ opens fine now. */
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &v, NULL), 0);
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(lfp_wait_close(ws), 0, "no fd or member left in the set");
	cr_assert_eq(lfp_wait_close(mc), 0);
	rig_down(&r);
}

Test(verbs_open, a_second_binding_on_the_same_cq_is_eexist)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr set = { .wait_obj = LFP_WAIT_SET };
	struct lfp_verbs_cq *v2 = NULL;
	struct lfp_wait *ws;
	struct rig r;

	rig_open(&r, 4, NULL);
	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	set.wait_set = ws;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &v2, NULL), -EEXIST);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &set, &v2, NULL), -EEXIST);
	cr_assert_null(v2);
	cr_assert_eq(lfp_wait_close(ws), 0, "the refused open left the set untouched");
	rig_down(&r);
}

/*
 * The binding library was built with one set of lfpoll headers; a program
 * may pass objects built with others.  Objects carry their LFP_ABI_VERSION
 * and the binding refuses a foreign one (-EPROTO) instead of misreading its
 * layout; nothing is left behind.
 */
Test(verbs_open, objects_built_with_other_headers_are_eproto)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr set = { .wait_obj = LFP_WAIT_SET };
	struct lfp_eq_attr ea = { .size = 8,
	                          .entry_size = sizeof(struct lfp_verbs_async_entry) };
	struct lfp_verbs_async *va = NULL;
	struct lfp_verbs_cq *v = NULL;
	struct lfp_wait *ws;
	struct lfp_eq *eq;
	struct rig r;

	rig_up(&r, 4);
	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	set.wait_set = ws;
	ws->fid.abi = LFP_ABI_VERSION + 1;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &set, &v, NULL), -EPROTO);
	cr_assert_null(v);
	ws->fid.abi = LFP_ABI_VERSION;
	cr_assert_eq(lfp_wait_close(ws), 0, "the refused open left the set untouched");

	cr_assert_eq(lfp_eq_open(&ea, &eq, NULL), 0);
	eq->fid.abi = LFP_ABI_VERSION - 1;
	cr_assert_eq(lfp_verbs_async_open(r.ctx, eq, &va, NULL), -EPROTO);
	cr_assert_null(va);
	eq->fid.abi = LFP_ABI_VERSION;
	cr_assert_eq(lfp_eq_close(eq), 0, "the refused open kept a hold on the EQ");
	rig_down(&r);
}

Test(verbs_open, cqs_of_every_wait_object_share_one_channel)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr fd = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr un = { .wait_obj = LFP_WAIT_UNSPEC };
	struct lfp_verbs_cq_attr set = { .wait_obj = LFP_WAIT_SET };
	struct lfp_verbs_cq_attr none = { .wait_obj = LFP_WAIT_NONE };
	struct lfp_verbs_cq *v[5];
	struct ibv_cq *cq[5];
	struct lfp_wait *ws, *ws2;
	struct rig r;
	int i;

	rig_open(&r, 4, &fd);
	for (i = 0; i < 5; i++)
		cq[i] = vf_cq_create(r.ctx, r.ch, NULL, 4);
	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	cr_assert_eq(lfp_wait_open(&wa, &ws2), 0);
	cr_assert_eq(lfp_verbs_cq_open(cq[0], r.ch, &fd, &v[0], NULL), 0, "a second FD CQ");
	cr_assert_eq(lfp_verbs_cq_open(cq[1], r.ch, &un, &v[1], NULL), 0, "UNSPEC is FD");
	set.wait_set = ws;
	cr_assert_eq(lfp_verbs_cq_open(cq[2], r.ch, &set, &v[2], NULL), 0, "a set member");
	set.wait_set = ws2;
	cr_assert_eq(lfp_verbs_cq_open(cq[3], r.ch, &set, &v[3], NULL), 0, "another set's");
	cr_assert_eq(lfp_verbs_cq_open(cq[4], r.ch, &none, &v[4], NULL), 0, "a NONE CQ");
	for (i = 0; i < 5; i++)
		cr_assert_eq(stats(cq[i]).armed, VF_ARM_NEXT, "CQ %d armed at open", i);
	cr_assert_neq(getwait_fd(&v[0]->fid), getwait_fd(&v[1]->fid),
		      "each FD CQ has its own fd");
	cr_assert_neq(getwait_fd(&v[0]->fid), getwait_fd(&r.vcq->fid));
	cr_assert_eq(lfp_verbs_cq_open(cq[0], r.ch, &fd, &v[0], NULL), -EEXIST,
		     "still one binding object per CQ");
	for (i = 4; i >= 0; i--) {
		cr_assert_eq(lfp_verbs_cq_close(v[i]), 0);
		cr_assert_eq(vf_cq_destroy(cq[i], 1000), 0);
	}
	cr_assert_eq(lfp_wait_close(ws), 0, "the channel fd left the first set");
	cr_assert_eq(lfp_wait_close(ws2), 0, "and the second");
	rig_down(&r);
}

Test(verbs_open, open_arms_the_cq_and_sets_up_the_fid)
{
	struct lfp_verbs_cq_attr sol = { .solicited_only = 1, .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr un = { .wait_obj = LFP_WAIT_UNSPEC };
	enum lfp_wait_obj obj = LFP_WAIT_NONE;
	struct vf_cq_stats st;
	struct rig r, s;

	rig_open(&r, 4, &un);
	st = stats(r.cq);
	cr_assert_eq(st.arms, 1, "open arms the CQ");
	cr_assert_eq(st.armed, VF_ARM_NEXT);
	cr_assert_eq(r.vcq->fid.context, &r.marker);
	cr_assert_eq(r.vcq->fid.fclass, LFP_CLASS_VERBS_CQ);
	cr_assert_eq(lfp_control(&r.vcq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_FD, "UNSPEC resolves to FD");
	cr_assert_neq(getwait_fd(&r.vcq->fid), r.ch->fd,
		      "the CQ's own mirror, not the channel fd another CQ may share");
	cr_assert(fcntl(r.ch->fd, F_GETFL) & O_NONBLOCK);
	cr_assert_eq(lfp_control(&r.vcq->fid, LFP_GETWAIT, NULL), -EINVAL);
	rig_down(&r);

	rig_open(&s, 4, &sol);
	st = stats(s.cq);
	cr_assert_eq(st.arms, 1);
	cr_assert_eq(st.armed, VF_ARM_SOLICITED, "solicited_only is honoured at open");
	rig_down(&s);
}

Test(verbs_open, a_failing_arm_at_open_is_negative_errno_and_leaves_nothing)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr set = { .wait_obj = LFP_WAIT_SET };
	struct lfp_verbs_cq *v = NULL;
	struct lfp_wait *ws;
	struct rig r;

	rig_up(&r, 4);
	vf_cq_fail_next_arm(r.cq, EIO);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &v, NULL), -EIO);
	cr_assert_null(v);
	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	set.wait_set = ws;
	vf_cq_fail_next_arm(r.cq, ENOMEM);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &set, &v, NULL), -ENOMEM);
	cr_assert_eq(lfp_wait_close(ws), 0, "the failed open left the set");
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &v, NULL), 0, "not registered");
	r.vcq = v;
	rig_down(&r);
}

Test(verbs_open, null_attr_is_wait_obj_none_which_has_no_wait_object)
{
	enum lfp_wait_obj obj = LFP_WAIT_FD;
	struct ibv_wc wc;
	int fd;
	struct rig r;

	rig_up(&r, 4);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, NULL, &r.vcq, NULL), 0);
	cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT, "NONE is armed at open too");
	cr_assert_eq(lfp_control(&r.vcq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_NONE);
	cr_assert_eq(lfp_control(&r.vcq->fid, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_eq(trywait1(&r.vcq->fid), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 1, 0), -ENOSYS);
	push(r.cq, 5, IBV_WC_SUCCESS, 0);
	read_one(r.vcq, 5);
	rig_down(&r);
}

/* ---------------------------------------------------------- read path */

TestSuite(verbs_cq, .init = need_fake, .timeout = 30);

Test(verbs_cq, read_returns_completions_as_polled_error_status_kept)
{
	static const enum ibv_wc_status sts[] = {
		IBV_WC_SUCCESS, IBV_WC_LOC_LEN_ERR, IBV_WC_WR_FLUSH_ERR,
		IBV_WC_REM_ACCESS_ERR, IBV_WC_SUCCESS, IBV_WC_GENERAL_ERR
	};
	struct ibv_wc in[6], out[8];
	struct rig r;
	int i, n;

	rig_open(&r, 16, NULL);
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, out, 8), -EAGAIN, "empty");
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, out, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, NULL, 1), -EINVAL);
	for (i = 0; i < 6; i++) {
		memset(&in[i], 0, sizeof(in[i]));
		in[i].wr_id = 1000 + (uint64_t)i;
		in[i].status = sts[i];
		in[i].opcode = i % 2 ? IBV_WC_RECV : IBV_WC_SEND;
		in[i].vendor_err = sts[i] == IBV_WC_SUCCESS ? 0 : 0x40u + (uint32_t)i;
		in[i].byte_len = 64u * (uint32_t)i;
		in[i].qp_num = 7;
		in[i].wc_flags = i == 4 ? IBV_WC_WITH_IMM : 0;
		in[i].imm_data = i == 4 ? 0xabcd : 0;
		cr_assert_eq(vf_cq_push_wc(r.cq, &in[i], 0), 0);
	}
	n = lfp_verbs_cq_read(r.vcq, out, 2);
	cr_assert_eq(n, 2, "at most n");
	n += lfp_verbs_cq_read(r.vcq, out + 2, 8);
	cr_assert_eq(n, 6);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(out[i].wr_id, in[i].wr_id, "order kept");
		cr_assert_eq(out[i].status, in[i].status, "status of %d kept", i);
		cr_assert_eq(memcmp(&out[i], &in[i], sizeof(in[i])), 0,
			     "completion %d comes back exactly as polled", i);
	}
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, out, 8), -EAGAIN);
	rig_down(&r);
}

Test(verbs_cq, a_failing_poll_is_negative_errno)
{
	struct ibv_wc wc;
	struct rig r;

	rig_open(&r, 4, NULL);
	vf_cq_fail_next_poll(r.cq, EIO);
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EIO);
	cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EAGAIN);
	rig_down(&r);
}

Test(verbs_cq, trywait_empty_is_0_and_the_fd_turns_readable_exactly_at_the_next_cqe)
{
	struct rig r;
	int fd, i;

	rig_open(&r, 8, NULL);
	fd = getwait_fd(&r.vcq->fid);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(trywait1(&r.vcq->fid), 0, "round %d: empty, armed", i);
		cr_assert_not(fd_readable(fd, 0), "round %d: nothing pending yet", i);
		cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT, "round %d: armed", i);
		push(r.cq, (uint64_t)i, IBV_WC_SUCCESS, 0);
		cr_assert(fd_readable(fd, 0), "round %d: the CQE makes the fd readable", i);
		cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "round %d: read first", i);
		read_one(r.vcq, (uint64_t)i);
	}
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_not(fd_readable(fd, 0), "every event was drained");
	rig_down(&r);
}

Test(verbs_cq, trywait_with_solicited_only_waits_for_a_solicited_or_error_cqe)
{
	struct lfp_verbs_cq_attr sol = { .solicited_only = 1, .ack_batch = 1,
					 .wait_obj = LFP_WAIT_FD };
	struct rig r;
	int fd;

	rig_open(&r, 8, &sol);
	fd = getwait_fd(&r.vcq->fid);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	push(r.cq, 1, IBV_WC_SUCCESS, 0);
	cr_assert_not(fd_readable(fd, 0), "an unsolicited success does not qualify");
	push(r.cq, 2, IBV_WC_SUCCESS, 1);
	cr_assert(fd_readable(fd, 0), "a solicited CQE does");
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	read_next(r.vcq, 1);
	read_one(r.vcq, 2);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_eq(stats(r.cq).armed, VF_ARM_SOLICITED, "re-armed solicited-only");
	cr_assert_not(fd_readable(fd, 0));
	push(r.cq, 3, IBV_WC_REM_OP_ERR, 0);
	cr_assert(fd_readable(fd, 0), "an error CQE qualifies");
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	read_one(r.vcq, 3);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	rig_down(&r);
}

Test(verbs_cq, a_cqe_queued_before_open_is_found_by_trywait)
{
	struct rig r;

	rig_up(&r, 8);
	push(r.cq, 77, IBV_WC_SUCCESS, 0); /* unarmed: no event, ever */
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &FD_ATTR, &r.vcq, NULL), 0);
	cr_assert_eq(stats(r.cq).events_written, 0);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "blocking now would sleep forever");
	read_one(r.vcq, 77);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	rig_down(&r);
}

/* Hook: one CQE, once. */
struct hook_push {
	uint64_t wr_id;
	int solicited;
	int fired;
};

static void hook_push_once(struct ibv_cq *cq, int solicited_only, void *arg)
{
	struct hook_push *h = arg;

	(void)solicited_only;
	cr_assert_eq(vf_cq_push(cq, h->wr_id, IBV_WC_SUCCESS, h->solicited), 0);
	h->fired++;
	vf_cq_set_hooks(cq, NULL, NULL, NULL);
}

/* Make the binding's next trywait arm: have it read the open's event. */
static void consume_the_arm(struct rig *r, uint64_t wr_id)
{
	push(r->cq, wr_id, IBV_WC_SUCCESS, 0);
	cr_assert_eq(trywait1(&r->vcq->fid), -EAGAIN);
	read_one(r->vcq, wr_id);
	cr_assert_eq(stats(r->cq).armed, VF_ARM_NONE);
}

Test(verbs_cq, arm_race_a_cqe_between_the_last_empty_poll_and_the_arm_is_not_lost)
{
	struct hook_push h = { .wr_id = 99 };
	struct vf_cq_stats st;
	unsigned long written;
	struct rig r;
	int fd;

	rig_open(&r, 8, NULL);
	fd = getwait_fd(&r.vcq->fid);
	consume_the_arm(&r, 1);
	written = stats(r.cq).events_written;
	vf_cq_set_hooks(r.cq, hook_push_once, NULL, &h);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN,
		     "the CQE that beat the arm raised no event: trywait must see it");
	cr_assert_eq(h.fired, 1, "the hook ran inside the binding's arm");
	st = stats(r.cq);
	cr_assert_eq(st.events_written, written, "no event for it");
	/* Nothing on the channel.  (The fd itself is readable: this trywait
	 * took the wake consume_the_arm's trywait put back, found work, and
	 * put it back in turn, for any other waiter: design.md 2.2.) */
	cr_assert_eq(vf_fd_pending(r.ch->fd), 0, "no event for it on the channel");
	read_one(r.vcq, 99);
	{
		struct ibv_wc wc;

		cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EAGAIN);
	}
	/* Still armed from that arm: the next CQE wakes. */
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT);
	push(r.cq, 100, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(fd, 0));
	rig_down(&r);
}

Test(verbs_cq, an_event_whose_cqe_the_repoll_took_is_drained_later)
{
	struct hook_push h = { .wr_id = 42 };
	struct rig r;
	int fd;

	rig_open(&r, 8, NULL);
	fd = getwait_fd(&r.vcq->fid);
	consume_the_arm(&r, 1);
	vf_cq_set_hooks(r.cq, NULL, hook_push_once, &h);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "the re-poll after the arm finds it");
	cr_assert_eq(h.fired, 1);
	cr_assert(fd_readable(fd, 0), "and its event is pending");
	read_one(r.vcq, 42);
	/* An event for a drained CQ: trywait drains it and may block. */
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_not(fd_readable(fd, 0), "the spurious event was read");
	cr_assert_eq(stats(r.cq).events_read, stats(r.cq).events_written);
	push(r.cq, 43, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(fd, 0), "re-armed");
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	read_one(r.vcq, 43);
	rig_down(&r);
}

Test(verbs_cq, a_spurious_event_for_an_already_drained_cq_is_legal)
{
	struct rig r;
	int fd, i, ret;

	rig_open(&r, 8, NULL);
	fd = getwait_fd(&r.vcq->fid);
	push(r.cq, 5, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(fd, 0));
	read_one(r.vcq, 5); /* drained without looking at the channel */
	/* A first trywait may say -EAGAIN once (it found the event); it must
	 * never find a completion, and must settle at 0. */
	for (i = 0; i < 3 && (ret = trywait1(&r.vcq->fid)) != 0; i++) {
		struct ibv_wc wc;

		cr_assert_eq(ret, -EAGAIN);
		cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EAGAIN);
	}
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_not(fd_readable(fd, 0));
	cr_assert_eq(stats(r.cq).events_read, 1);
	/* A raw record naming the CQ with nothing behind it at all. */
	{
		struct { uint64_t cq_handle; } rec = { (uintptr_t)r.cq };

		cr_assert_eq(write(vf_channel_wfd(r.ch), &rec, sizeof(rec)), 8);
	}
	cr_assert(fd_readable(fd, 0));
	ret = trywait1(&r.vcq->fid);
	cr_assert(ret == 0 || ret == -EAGAIN, "trywait %d", ret);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	cr_assert_not(fd_readable(fd, 0));
	push(r.cq, 6, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(fd, 0), "still armed");
	rig_down(&r);
}

/* One event per round: push (armed, so it fires), trywait reads it. */
static void event_round(struct rig *r, uint64_t wr_id)
{
	push(r->cq, wr_id, IBV_WC_SUCCESS, 0);
	cr_assert_eq(trywait1(&r->vcq->fid), -EAGAIN);
	read_one(r->vcq, wr_id);
	cr_assert_eq(trywait1(&r->vcq->fid), 0, "round %llu re-arms",
		     (unsigned long long)wr_id);
}

Test(verbs_cq, ack_batch_4_lags_then_close_flushes)
{
	struct lfp_verbs_cq_attr a = { .ack_batch = 4, .wait_obj = LFP_WAIT_FD };
	struct vf_cq_stats st;
	unsigned done;
	struct rig r;
	int i;

	rig_open(&r, 8, &a);
	for (i = 1; i <= 10; i++) {
		event_round(&r, (uint64_t)i);
		done = acked(r.cq);
		cr_assert_eq(done, (unsigned)(i / 4 * 4),
			     "after %d events, %u acked: acks go in batches of 4", i, done);
	}
	st = stats(r.cq);
	cr_assert_eq(st.events_read, 10);
	cr_assert_lt(acked(r.cq), 10u, "batched: the ack lags");
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), 0);
	r.vcq = NULL;
	cr_assert_eq(acked(r.cq), 10u, "close acks every event read");
	cr_assert_eq(acked(r.cq), stats(r.cq).events_read);
	rig_down(&r);
}

Test(verbs_cq, ack_batch_1_acks_each_event)
{
	struct lfp_verbs_cq_attr a = { .ack_batch = 1, .wait_obj = LFP_WAIT_FD };
	struct rig r;
	int i;

	rig_open(&r, 8, &a);
	for (i = 1; i <= 6; i++) {
		event_round(&r, (uint64_t)i);
		cr_assert_eq(acked(r.cq), (unsigned)i);
		cr_assert_eq(acked(r.cq), stats(r.cq).events_read);
	}
	rig_down(&r);
}

Test(verbs_cq, ack_batch_0_is_the_default_batch)
{
	struct rig r;
	int i;

	rig_open(&r, 8, NULL);
	for (i = 1; i <= 10; i++)
		event_round(&r, (uint64_t)i);
	cr_assert_lt(acked(r.cq), 10u, "LFP_VERBS_ACK_BATCH (%d) > 10", LFP_VERBS_ACK_BATCH);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), 0);
	r.vcq = NULL;
	cr_assert_eq(acked(r.cq), 10u);
	rig_down(&r);
}

Test(verbs_cq, destroy_after_close_does_not_block)
{
	struct rig r;
	int i;

	rig_open(&r, 8, NULL);
	for (i = 1; i <= 3; i++)
		event_round(&r, (uint64_t)i);
	/* One more event left unread on the channel at close. */
	push(r.cq, 4, IBV_WC_SUCCESS, 0);
	cr_assert_eq(vf_fd_pending(r.ch->fd), 8);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), 0);
	r.vcq = NULL;
	/* Nobody acks from here on: an unacked event would time this out. */
	cr_assert_eq(vf_cq_destroy(r.cq, 2000), 0, "close left events unacked");
	r.cq = vf_cq_create(r.ctx, r.ch, NULL, 1); /* for rig_down */
	rig_down(&r);
}

Test(verbs_cq, real_ibv_create_and_destroy_cq_around_the_binding)
{
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct lfp_verbs_cq *v;
	struct ibv_cq *cq;
	int i;

	vf_ctx_set_destroy_timeout(ctx, 1000);
	cq = ibv_create_cq(ctx, 8, NULL, ch, 0);
	cr_assert_not_null(cq);
	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &FD_ATTR, &v, NULL), 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(trywait1(&v->fid), 0);
		push(cq, (uint64_t)i, IBV_WC_SUCCESS, 0);
		cr_assert_eq(trywait1(&v->fid), -EAGAIN);
		read_one(v, (uint64_t)i);
	}
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0, "the real ibv_destroy_cq found every event acked");
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(verbs_cq, sread_times_out_with_eagain_after_at_least_the_timeout)
{
	struct ibv_wc wc;
	struct rig r;
	long t0, dt;

	rig_open(&r, 4, NULL);
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 1, 0), -EAGAIN, "timeout 0");
	t0 = now_ms();
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 1, 80), -EAGAIN);
	dt = now_ms() - t0;
	cr_assert_geq(dt, 80, "returned after %ld ms of an 80 ms timeout", dt);
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 0, 10), -EINVAL);
	cr_assert_eq(lfp_verbs_cq_sread(NULL, &wc, 1, 10), -EINVAL);
	rig_down(&r);
}

Test(verbs_cq, sread_returns_a_cqe_pushed_before)
{
	struct ibv_wc wc[4];
	struct rig r;

	rig_open(&r, 4, NULL);
	push(r.cq, 11, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, wc, 4, -1), 1);
	cr_assert_eq(wc[0].wr_id, 11);
	/* And one that beat the arm (no event): the re-poll finds it. */
	consume_the_arm(&r, 12);
	{
		struct hook_push h = { .wr_id = 13 };

		vf_cq_set_hooks(r.cq, hook_push_once, NULL, &h);
		cr_assert_eq(lfp_verbs_cq_sread(r.vcq, wc, 4, 5000), 1);
		cr_assert_eq(h.fired, 1);
		cr_assert_eq(wc[0].wr_id, 13);
	}
	rig_down(&r);
}

struct late_push {
	struct ibv_cq *cq;
	int delay_ms;
	uint64_t wr_id;
};

static void *late_pusher(void *arg)
{
	struct late_push *p = arg;

	usleep((useconds_t)p->delay_ms * 1000);
	return (void *)(intptr_t)vf_cq_push(p->cq, p->wr_id, IBV_WC_SUCCESS, 0);
}

Test(verbs_cq, sread_is_woken_by_a_cqe_pushed_while_it_sleeps)
{
	struct late_push p;
	struct ibv_wc wc;
	pthread_t t;
	void *ret;
	struct rig r;

	rig_open(&r, 4, NULL);
	consume_the_arm(&r, 1); /* sread must arm itself */
	p.cq = r.cq;
	p.delay_ms = 100;
	p.wr_id = 2;
	cr_assert_eq(pthread_create(&t, NULL, late_pusher, &p), 0);
	/* No timeout: only the CQE's event can end it (else the suite's
	 * timeout fails the test). */
	cr_assert_eq(lfp_verbs_cq_sread(r.vcq, &wc, 1, -1), 1);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_null(ret);
	rig_down(&r);
}

Test(verbs_cq, channel_read_faults_eintr_retried_eagain_empty_eio_reported)
{
	struct lfp_verbs_cq_attr a = { .ack_batch = 1, .wait_obj = LFP_WAIT_FD };
	struct rig r;

	rig_open(&r, 8, &a);
	push(r.cq, 1, IBV_WC_SUCCESS, 0);
	cr_assert_eq(vf_inject_read(r.ch->fd, EINTR, 2), 0);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	cr_assert_eq(stats(r.cq).events_read, 1, "EINTR retried: the event was read");
	read_one(r.vcq, 1);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);

	push(r.cq, 2, IBV_WC_SUCCESS, 0);
	cr_assert_eq(vf_inject_read(r.ch->fd, EAGAIN, 1), 0);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN, "EAGAIN is 'no more events'; "
		     "the completion is still found");
	cr_assert_eq(stats(r.cq).events_read, 1);
	read_one(r.vcq, 2);
	cr_assert_eq(trywait1(&r.vcq->fid), 0, "reads the event now");
	cr_assert_eq(stats(r.cq).events_read, 2);

	push(r.cq, 3, IBV_WC_SUCCESS, 0);
	cr_assert_eq(vf_inject_read(r.ch->fd, EIO, 1), 0);
	cr_assert_eq(trywait1(&r.vcq->fid), -EIO);
	read_one(r.vcq, 3);
	{
		struct ibv_wc wc;

		cr_assert_eq(lfp_verbs_cq_read(r.vcq, &wc, 1), -EIO,
			     "EIO means the device is gone: reads say so once empty");
	}
	rig_down(&r);
}

Test(verbs_cq, a_failing_arm_in_trywait_is_negative_errno)
{
	struct rig r;

	rig_open(&r, 8, NULL);
	consume_the_arm(&r, 1);
	vf_cq_fail_next_arm(r.cq, EINVAL);
	cr_assert_eq(trywait1(&r.vcq->fid), -EINVAL, "positive errno from the provider, negated");
	cr_assert_eq(trywait1(&r.vcq->fid), 0, "the next trywait arms");
	cr_assert_eq(stats(r.cq).armed, VF_ARM_NEXT);
	rig_down(&r);
}

Test(verbs_cq, device_gone_is_reported_not_a_hang)
{
	struct ibv_wc wc[4];
	struct rig r;
	int ret;

	rig_open(&r, 8, NULL);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	vf_ctx_device_gone(r.ctx, 0);
	ret = trywait1(&r.vcq->fid);
	cr_assert_eq(ret, -EIO, "trywait %d", ret);
	ret = lfp_verbs_cq_sread(r.vcq, wc, 4, 5000);
	cr_assert_eq(ret, -EIO, "sread %d", ret);
	rig_down(&r);
}

Test(verbs_cq, lfp_trywait_over_two_fd_cqs)
{
	struct rig a, b;
	struct lfp_fid *f[2];

	rig_open(&a, 4, NULL);
	rig_open(&b, 4, NULL);
	f[0] = &a.vcq->fid;
	f[1] = &b.vcq->fid;
	cr_assert_eq(lfp_trywait(f, 2), 0);
	push(b.cq, 1, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(b.ch->fd, 0));
	cr_assert_eq(lfp_trywait(f, 2), -EAGAIN);
	read_one(b.vcq, 1);
	cr_assert_eq(lfp_trywait(f, 2), 0);
	cr_assert_eq(lfp_verbs_cq_close(b.vcq), 0);
	cr_assert_eq(vf_cq_destroy(b.cq, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(b.ch), 0);
	cr_assert_eq(vf_ctx_destroy(b.ctx), 0);
	rig_down(&a);
}

/* ----------------------------------------------------------- wait set */

TestSuite(verbs_set, .init = need_fake, .timeout = 30);

#define NSET 3

struct set_rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_wait *ws;
	struct ibv_cq *cq[NSET];
	struct lfp_verbs_cq *vcq[NSET];
	int marker[NSET];
};

static void set_up(struct set_rig *s, enum lfp_wait_obj obj, unsigned ack_batch)
{
	struct lfp_wait_attr wa;
	struct lfp_verbs_cq_attr a;
	int i;

	memset(s, 0, sizeof(*s));
	memset(&wa, 0, sizeof(wa));
	wa.wait_obj = obj;
	s->ctx = vf_ctx_create();
	s->ch = vf_channel_create(s->ctx);
	cr_assert_eq(lfp_wait_open(&wa, &s->ws), 0);
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = s->ws;
	a.ack_batch = ack_batch;
	for (i = 0; i < NSET; i++) {
		s->cq[i] = vf_cq_create(s->ctx, s->ch, NULL, 16);
		cr_assert_not_null(s->cq[i]);
		cr_assert_eq(lfp_verbs_cq_open(s->cq[i], s->ch, &a, &s->vcq[i],
					       &s->marker[i]), 0, "CQ %d", i);
	}
}

static void set_down(struct set_rig *s)
{
	int i;

	for (i = 0; i < NSET; i++) {
		if (s->vcq[i])
			cr_assert_eq(lfp_verbs_cq_close(s->vcq[i]), 0);
		cr_assert_eq(vf_cq_destroy(s->cq[i], 1000), 0, "CQ %d: acks missing", i);
	}
	cr_assert_eq(lfp_wait_close(s->ws), 0, "the channel fd left the set");
	cr_assert_eq(ibv_destroy_comp_channel(s->ch), 0);
	finish(s->ctx);
}

/* Reads every CQ of the set; returns the completions read, checks where. */
static int set_read_all(struct set_rig *s, const int *expect_cq)
{
	struct ibv_wc wc[16];
	int i, j, n, total = 0;

	for (i = 0; i < NSET; i++) {
		if (!s->vcq[i])
			continue;
		while ((n = lfp_verbs_cq_read(s->vcq[i], wc, 16)) > 0) {
			for (j = 0; j < n; j++) {
				if (expect_cq)
					cr_assert_eq(expect_cq[wc[j].wr_id], i,
						     "wr_id %llu came out of CQ %d",
						     (unsigned long long)wc[j].wr_id, i);
			}
			total += n;
		}
		cr_assert_eq(n, -EAGAIN);
	}
	return total;
}

Test(verbs_set, events_are_credited_to_the_cq_they_name)
{
	struct set_rig s;
	int owner[64], wsfd, i, k, read = 0, pushed = 0, ret;

	set_up(&s, LFP_WAIT_FD, 1);
	wsfd = getwait_fd(&s.ws->fid);
	for (k = 0; k < 30; k++) {
		/* Let every CQ settle at 0 (armed, drained). */
		for (i = 0; i < 10 && (ret = trywait1(&s.ws->fid)) != 0; i++) {
			cr_assert_eq(ret, -EAGAIN);
			read += set_read_all(&s, owner);
		}
		cr_assert_eq(trywait1(&s.ws->fid), 0, "round %d", k);
		cr_assert_not(fd_readable(wsfd, 0), "round %d: nothing pending", k);
		/* One or two CQEs on a CQ chosen by k. */
		owner[pushed] = k % NSET;
		push(s.cq[k % NSET], (uint64_t)pushed, IBV_WC_SUCCESS, 0);
		pushed++;
		if (k % 4 == 3) {
			owner[pushed] = (k + 1) % NSET;
			push(s.cq[(k + 1) % NSET], (uint64_t)pushed, IBV_WC_SUCCESS, 0);
			pushed++;
		}
		cr_assert(fd_readable(wsfd, 0), "round %d: the set's fd wakes", k);
		cr_assert_eq(trywait1(&s.ws->fid), -EAGAIN);
		read += set_read_all(&s, owner);
	}
	/* Settle, then every CQ's acks equal the events read for it. */
	while (trywait1(&s.ws->fid) != 0)
		read += set_read_all(&s, owner);
	cr_assert_eq(read, pushed, "no completion lost");
	for (i = 0; i < NSET; i++) {
		struct vf_cq_stats st = stats(s.cq[i]);

		cr_assert_gt(st.events_read, 0, "CQ %d got events", i);
		cr_assert_eq(acked(s.cq[i]), st.events_read,
			     "CQ %d: %u acked, %lu events naming it read (ack_batch 1)",
			     i, acked(s.cq[i]), st.events_read);
	}
	set_down(&s);
}

Test(verbs_set, closing_one_cq_leaves_the_others_working)
{
	struct set_rig s;
	int wsfd, i, ret;

	set_up(&s, LFP_WAIT_FD, 0);
	wsfd = getwait_fd(&s.ws->fid);
	/* Events for CQ 0 pending on the channel when it closes. */
	push(s.cq[0], 1, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_verbs_cq_close(s.vcq[0]), 0);
	s.vcq[0] = NULL;
	cr_assert_eq(vf_cq_destroy(s.cq[0], 1000), 0, "closed CQ's events acked");
	s.cq[0] = vf_cq_create(s.ctx, s.ch, NULL, 1); /* for set_down */
	for (i = 0; i < 5 && (ret = trywait1(&s.ws->fid)) != 0; i++)
		set_read_all(&s, NULL);
	cr_assert_eq(trywait1(&s.ws->fid), 0);
	push(s.cq[2], 2, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(wsfd, 0), "the channel is still in the set");
	cr_assert_eq(trywait1(&s.ws->fid), -EAGAIN);
	cr_assert_eq(set_read_all(&s, NULL), 1);
	cr_assert_eq(lfp_wait(s.ws, 0), -ETIMEDOUT);
	push(s.cq[1], 3, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_wait(s.ws, 1000), 0);
	cr_assert_eq(set_read_all(&s, NULL), 1);
	set_down(&s);
}

static int pollfd_has(const struct lfp_wait_pollfd *p, int fd)
{
	size_t i;
	int n = 0;

	for (i = 0; i < p->nfds; i++)
		n += p->fd[i].fd == fd;
	return n;
}

Test(verbs_set, the_channel_fd_enters_a_pollfd_set_once)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_POLLFD };
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_SET };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *c1 = vf_cq_create(ctx, ch, NULL, 4);
	struct ibv_cq *c2 = vf_cq_create(ctx, ch, NULL, 4);
	struct lfp_verbs_cq *v1, *v2;
	struct pollfd fds[8];
	struct lfp_wait_pollfd p;
	struct lfp_wait *ws;
	uint64_t c0;

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	a.wait_set = ws;
	p.nfds = 8;
	p.fd = fds;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	c0 = p.change_index;
	cr_assert_eq(pollfd_has(&p, ch->fd), 0);

	cr_assert_eq(lfp_verbs_cq_open(c1, ch, &a, &v1, NULL), 0);
	p.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	cr_assert_gt(p.change_index, c0, "the first CQ on the channel adds its fd");
	cr_assert_eq(pollfd_has(&p, ch->fd), 1);
	c0 = p.change_index;

	cr_assert_eq(lfp_verbs_cq_open(c2, ch, &a, &v2, NULL), 0);
	p.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	cr_assert_eq(p.change_index, c0, "the second CQ on the channel changes nothing");
	cr_assert_eq(pollfd_has(&p, ch->fd), 1, "the fd is in the set once");

	cr_assert_eq(lfp_verbs_cq_close(v1), 0);
	p.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	cr_assert_eq(p.change_index, c0, "still used by the second CQ");
	cr_assert_eq(pollfd_has(&p, ch->fd), 1);

	cr_assert_eq(lfp_verbs_cq_close(v2), 0);
	p.nfds = 8;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	cr_assert_gt(p.change_index, c0, "the last CQ's close removes the fd");
	cr_assert_eq(pollfd_has(&p, ch->fd), 0);

	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(vf_cq_destroy(c1, 1000), 0);
	cr_assert_eq(vf_cq_destroy(c2, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(verbs_set, a_pollfd_set_sees_the_channel_readable_after_trywait)
{
	struct set_rig s;
	struct pollfd fds[8];
	struct lfp_wait_pollfd p;
	int n;

	set_up(&s, LFP_WAIT_POLLFD, 0);
	p.nfds = 8;
	p.fd = fds;
	cr_assert_eq(lfp_control(&s.ws->fid, LFP_GETWAIT, &p), 0);
	cr_assert_eq(trywait1(&s.ws->fid), 0);
	cr_assert_eq(poll(p.fd, p.nfds, 0), 0);
	push(s.cq[1], 0, IBV_WC_SUCCESS, 0);
	n = poll(p.fd, p.nfds, 0);
	cr_assert_eq(n, 1, "exactly the channel fd is readable");
	cr_assert_eq(trywait1(&s.ws->fid), -EAGAIN);
	cr_assert_eq(set_read_all(&s, NULL), 1);
	set_down(&s);
}

Test(verbs_set, sread_on_a_set_member_is_enosys)
{
	struct set_rig s;
	struct ibv_wc wc;
	enum lfp_wait_obj obj;
	int fd;

	set_up(&s, LFP_WAIT_FD, 0);
	cr_assert_eq(lfp_verbs_cq_sread(s.vcq[0], &wc, 1, 10), -ENOSYS);
	cr_assert_eq(lfp_control(&s.vcq[0]->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_SET);
	cr_assert_eq(lfp_control(&s.vcq[0]->fid, LFP_GETWAIT, &fd), -ENODATA);
	/* trywait on a member is trywait on its set. */
	cr_assert_eq(trywait1(&s.vcq[0]->fid), 0);
	push(s.cq[2], 1, IBV_WC_SUCCESS, 0);
	cr_assert_eq(trywait1(&s.vcq[0]->fid), -EAGAIN);
	cr_assert_eq(set_read_all(&s, NULL), 1);
	set_down(&s);
}

/*
 * A waiter's trywait on the set runs while a CQ is being opened into it:
 * here, from the hook right after open's arm, a CQE fires that arm. The
 * CQ joins the set only after its arm, so that trywait may say "safe to
 * block", but then the set's fd must be readable (the channel fd, in the
 * set, holds the event): the waiter does not sleep. Whoever reads the event
 * leaves the CQ unarmed; the binding must not believe it armed, or the next
 * trywait says "safe to block" and the next CQE raises no event: a lost
 * wakeup.
 */
struct open_race {
	struct lfp_wait *ws;
	int fired, tw, readable;
};

static void hook_open_race(struct ibv_cq *cq, int solicited_only, void *arg)
{
	struct open_race *o = arg;
	struct lfp_fid *f = &o->ws->fid;

	(void)solicited_only;
	vf_cq_set_hooks(cq, NULL, NULL, NULL);
	cr_assert_eq(vf_cq_push(cq, 1, IBV_WC_SUCCESS, 0), 0);
	o->tw = lfp_trywait(&f, 1);
	o->readable = fd_readable(getwait_fd(f), 0);
	o->fired++;
}

Test(verbs_set, an_event_read_while_the_cq_is_being_opened_does_not_leave_it_unarmed)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_SET };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *cq = vf_cq_create(ctx, ch, NULL, 8);
	struct open_race o = { 0 };
	struct lfp_verbs_cq *v;
	struct lfp_fid *f;
	int wsfd;

	cr_assert_eq(lfp_wait_open(&wa, &o.ws), 0);
	f = &o.ws->fid;
	a.wait_set = o.ws;
	wsfd = getwait_fd(f);
	vf_cq_set_hooks(cq, NULL, hook_open_race, &o);
	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &a, &v, NULL), 0);
	cr_assert_eq(o.fired, 1);
	cr_assert(o.tw == -EAGAIN || (o.tw == 0 && o.readable), "the concurrent "
		  "trywait returned %d with the set's fd %s while the CQE's event "
		  "was on the channel", o.tw, o.readable ? "readable" : "quiet");
	read_one(v, 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_neq(stats(cq).armed, VF_ARM_NONE,
		      "trywait said 'safe to block' with the CQ unarmed");
	push(cq, 2, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(wsfd, 0), "lost wakeup: the CQE raised no event");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	read_one(v, 2);
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(lfp_wait_close(o.ws), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

/*
 * The same race in trywait: CQ B re-arms while another thread polls CQ A
 * (same channel, in a poll set), which reads B's fresh event and credits it
 * to B between B's arm and B's note that it is armed.
 */
struct cross_race {
	struct lfp_poll *ps;
	int fired;
};

static void hook_cross_race(struct ibv_cq *cq, int solicited_only, void *arg)
{
	struct cross_race *c = arg;
	void *ctxs[4];

	(void)solicited_only;
	vf_cq_set_hooks(cq, NULL, NULL, NULL);
	cr_assert_eq(vf_cq_push(cq, 9, IBV_WC_SUCCESS, 0), 0);
	(void)lfp_poll(c->ps, ctxs, 4); /* drains the shared channel through A */
	c->fired++;
}

Test(verbs_set, an_event_credited_by_another_cq_during_the_arm_does_not_leave_it_unarmed)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_SET };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *ca = vf_cq_create(ctx, ch, NULL, 8);
	struct ibv_cq *cb = vf_cq_create(ctx, ch, NULL, 8);
	struct cross_race c = { 0 };
	struct lfp_verbs_cq *va, *vb;
	struct lfp_wait *ws;
	struct lfp_fid *f;
	int wsfd;

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	cr_assert_eq(lfp_poll_open(NULL, &c.ps), 0);
	f = &ws->fid;
	a.wait_set = ws;
	a.ack_batch = 1;
	wsfd = getwait_fd(f);
	cr_assert_eq(lfp_verbs_cq_open(ca, ch, &a, &va, NULL), 0);
	cr_assert_eq(lfp_verbs_cq_open(cb, ch, &a, &vb, NULL), 0);
	cr_assert_eq(lfp_poll_add(c.ps, &va->fid, 0), 0);
	/* B reads the event of open's arm, so its next trywait arms. */
	push(cb, 1, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	read_one(vb, 1);
	cr_assert_eq(stats(cb).armed, VF_ARM_NONE);
	vf_cq_set_hooks(cb, NULL, hook_cross_race, &c);
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN, "B's re-poll found CQE 9");
	cr_assert_eq(c.fired, 1);
	read_one(vb, 9);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_neq(stats(cb).armed, VF_ARM_NONE,
		      "trywait said 'safe to block' with CQ B unarmed");
	push(cb, 10, IBV_WC_SUCCESS, 0);
	cr_assert(fd_readable(wsfd, 0), "lost wakeup: the CQE raised no event");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	read_one(vb, 10);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(acked(cb), stats(cb).events_read, "A's read of B's event acked on B");
	cr_assert_eq(lfp_poll_del(c.ps, &va->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(c.ps), 0);
	cr_assert_eq(lfp_verbs_cq_close(va), 0);
	cr_assert_eq(lfp_verbs_cq_close(vb), 0);
	cr_assert_eq(vf_cq_destroy(ca, 1000), 0);
	cr_assert_eq(vf_cq_destroy(cb, 1000), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(verbs_set, device_gone_reaches_the_reader_of_a_set_member)
{
	struct set_rig s;
	struct ibv_wc wc[4];
	int i, k, n, got = 0, err = 0;

	set_up(&s, LFP_WAIT_FD, 0);
	cr_assert_eq(trywait1(&s.ws->fid), 0);
	push(s.cq[1], 1, IBV_WC_SUCCESS, 0);
	push(s.cq[1], 2, IBV_WC_SUCCESS, 0);
	vf_ctx_device_gone(s.ctx, 0);
	/* The application's loop: trywait, then read every member. A gone
	 * device must surface as an error, not as an endless -EAGAIN. */
	for (i = 0; i < 50 && !err; i++) {
		int ret = trywait1(&s.ws->fid);

		cr_assert(ret == 0 || ret == -EAGAIN || ret == -EIO, "trywait %d", ret);
		if (ret == 0)
			cr_assert(fd_readable(getwait_fd(&s.ws->fid), 1000),
				  "trywait said block on a gone device");
		if (ret == -EIO)
			err = ret;
		for (k = 0; k < NSET; k++) {
			while ((n = lfp_verbs_cq_read(s.vcq[k], wc, 4)) > 0)
				got += n;
			if (n != -EAGAIN)
				err = n;
		}
	}
	cr_assert_eq(got, 2, "queued completions come out first");
	cr_assert_eq(err, -EIO, "the device loss was never reported (%d)", err);
	set_down(&s);
}

/*
 * A thread that serves one member only (trywait on it, then read it) must
 * see the loss too: the set's look may stop at another member, whose drain
 * meets the failing channel first.
 */
Test(verbs_set, device_gone_reaches_a_reader_of_one_member_only)
{
	struct set_rig s;
	struct ibv_wc wc[4];
	struct lfp_fid *f;
	int i, k, n;

	set_up(&s, LFP_WAIT_FD, 0);
	cr_assert_eq(trywait1(&s.ws->fid), 0);
	vf_ctx_device_gone(s.ctx, 0);
	for (k = 0; k < NSET; k++) {
		f = &s.vcq[k]->fid;
		n = -EAGAIN;
		for (i = 0; i < 50 && n == -EAGAIN; i++) {
			int ret = lfp_trywait(&f, 1);

			cr_assert(ret == 0 || ret == -EAGAIN || ret == -EIO,
			          "member %d: trywait %d", k, ret);
			n = lfp_verbs_cq_read(s.vcq[k], wc, 4);
		}
		cr_assert_eq(n, -EIO, "member %d: after %d laps, read %d: the "
		             "device loss never reached its reader", k, i, n);
	}
	set_down(&s);
}

/* ----------------------------------------------------------- poll set */

TestSuite(verbs_poll, .init = need_fake, .timeout = 30);

Test(verbs_poll, reports_the_cq_while_it_has_completions)
{
	struct lfp_poll *ps;
	void *ctxs[4];
	struct rig r;

	rig_open(&r, 8, NULL);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &r.vcq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 0);
	push(r.cq, 1, IBV_WC_SUCCESS, 0);
	push(r.cq, 2, IBV_WC_WR_FLUSH_ERR, 0);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 1);
	cr_assert_eq(ctxs[0], &r.marker);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 1, "reported again while non-empty");
	read_next(r.vcq, 1);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 1);
	read_one(r.vcq, 2);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 0);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 0);
	push(r.cq, 3, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_poll(ps, ctxs, 4), 1, "sticky: found with no producer push");
	read_one(r.vcq, 3);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), -EBUSY, "still in the poll set");
	cr_assert_eq(lfp_close(&r.vcq->fid), -EBUSY);
	cr_assert_eq(lfp_poll_del(ps, &r.vcq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	/* The poll set's checks read and acked what they found. */
	rig_down(&r);
}

/* -------------------------------------------------------------- async */

enum elem { E_CQ, E_QP, E_SRQ, E_WQ, E_PORT, E_DEVICE };

struct ev_case {
	int number;
	enum elem elem;
	int error;
	const char *name;
};

/* Criterion hands parameters to a re-executed worker by value: no pointers. */
struct ev_param {
	int number;
};

static const struct ev_case ev_table[] = {
	{ 0, E_CQ, 1, "CQ_ERR" },
	{ 1, E_QP, 1, "QP_FATAL" },
	{ 2, E_QP, 1, "QP_REQ_ERR" },
	{ 3, E_QP, 1, "QP_ACCESS_ERR" },
	{ 4, E_QP, 0, "COMM_EST" },
	{ 5, E_QP, 0, "SQ_DRAINED" },
	{ 6, E_QP, 0, "PATH_MIG" },
	{ 7, E_QP, 1, "PATH_MIG_ERR" },
	{ 8, E_DEVICE, 1, "DEVICE_FATAL" },
	{ 9, E_PORT, 0, "PORT_ACTIVE" },
	{ 10, E_PORT, 1, "PORT_ERR" },
	{ 11, E_PORT, 0, "LID_CHANGE" },
	{ 12, E_PORT, 0, "PKEY_CHANGE" },
	{ 13, E_PORT, 0, "SM_CHANGE" },
	{ 14, E_SRQ, 1, "SRQ_ERR" },
	{ 15, E_SRQ, 0, "SRQ_LIMIT_REACHED" },
	{ 16, E_QP, 0, "QP_LAST_WQE_REACHED" },
	{ 17, E_PORT, 0, "CLIENT_REREGISTER" },
	{ 18, E_PORT, 0, "GID_CHANGE" },
	{ 19, E_WQ, 1, "WQ_FATAL" },
};

struct arig {
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
	int marker;
};

static void arig_up(struct arig *a, const struct lfp_eq_attr *attr)
{
	memset(a, 0, sizeof(*a));
	a->ctx = vf_ctx_create();
	cr_assert_not_null(a->ctx);
	cr_assert_eq(lfp_eq_open(attr, &a->eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(a->ctx, a->eq, &a->va, &a->marker), 0);
}

static void arig_down(struct arig *a)
{
	cr_assert_eq(lfp_verbs_async_close(a->va), 0);
	cr_assert_eq(lfp_eq_close(a->eq), 0);
	finish(a->ctx);
}

/* Reads one info event; returns its entry. */
static struct lfp_verbs_async_entry eq_info(struct lfp_eq *eq)
{
	struct lfp_verbs_async_entry e;
	uint32_t code = 0;
	ssize_t r;

	memset(&e, 0, sizeof(e));
	r = lfp_eq_read(eq, &code, &e, sizeof(e), 0);
	cr_assert_eq(r, (ssize_t)sizeof(e), "lfp_eq_read %zd", r);
	cr_assert_eq(code, LFP_VERBS_ASYNC);
	return e;
}

ParameterizedTestParameters(verbs_async, every_event_type_of_the_table)
{
	static struct ev_param params[sizeof(ev_table) / sizeof(ev_table[0])];
	size_t i;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		params[i].number = (int)i;
	return cr_make_param_array(struct ev_param, params,
				   sizeof(params) / sizeof(params[0]));
}

ParameterizedTest(struct ev_param *p, verbs_async, every_event_type_of_the_table,
		  .init = need_fake, .timeout = 30)
{
	const struct ev_case *c = &ev_table[p->number];
	struct arig a;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_wq *wq;
	struct lfp_verbs_async_entry e;
	uint64_t element = 0;
	int port = 1 + c->number % 2;

	arig_up(&a, NULL);
	cq = vf_cq_create(a.ctx, NULL, NULL, 1);
	qp = vf_qp_create(a.ctx);
	srq = vf_srq_create(a.ctx);
	wq = vf_wq_create(a.ctx);
	switch (c->elem) {
	case E_CQ: element = VF_ELEM(cq); break;
	case E_QP: element = VF_ELEM(qp); break;
	case E_SRQ: element = VF_ELEM(srq); break;
	case E_WQ: element = VF_ELEM(wq); break;
	case E_PORT: element = (uint64_t)port; break;
	case E_DEVICE: element = 0; break;
	}
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0, "nothing yet");
	cr_assert_eq(vf_async_push(a.ctx, (enum ibv_event_type)c->number, element), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "%s moved", c->name);

	/* Every class is an EQ event, in device order; err gives the class. */
	e = eq_info(a.eq);
	cr_assert_eq(e.err, c->error ? (c->elem == E_DEVICE ? ENODEV : EIO) : 0,
		     "%s: err %d (lfp_verbs(3): 0 info, EIO error class, "
		     "ENODEV DEVICE_FATAL)", c->name, e.err);
	{
		struct lfp_eq_err_entry err;

		memset(&err, 0, sizeof(err));
		cr_assert_eq(lfp_eq_readerr(a.eq, &err, 0), -EAGAIN,
			     "%s: nothing on the EQ's error queue", c->name);
	}
	cr_assert_eq((int)e.type, c->number);
	cr_assert_eq(e.fid, &a.va->fid);
	cr_assert_eq(e.context, &a.marker);
	switch (c->elem) {
	case E_CQ: cr_assert_eq(e.element.cq, cq); break;
	case E_QP: cr_assert_eq(e.element.qp, qp); break;
	case E_SRQ: cr_assert_eq(e.element.srq, srq); break;
	case E_WQ: cr_assert_eq(e.element.wq, wq); break;
	case E_PORT: cr_assert_eq(e.element.port_num, port); break;
	case E_DEVICE: break;
	}
	cr_assert_str_eq(lfp_verbs_event_str((enum ibv_event_type)c->number), c->name);
	{
		uint32_t code;

		cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), -EAGAIN,
			     "exactly one entry");
	}

	/* Acked right after the copy. */
	cr_assert_eq(async_acked(&cq->mutex, &cq->async_events_completed),
		     c->elem == E_CQ ? 1u : 0u);
	cr_assert_eq(acked(cq), 0u, "CQ_ERR is not a completion event");
	cr_assert_eq(async_acked(&qp->mutex, &qp->events_completed), c->elem == E_QP ? 1u : 0u);
	cr_assert_eq(async_acked(&srq->mutex, &srq->events_completed), c->elem == E_SRQ ? 1u : 0u);
	cr_assert_eq(async_acked(&wq->mutex, &wq->events_completed), c->elem == E_WQ ? 1u : 0u);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(vf_srq_destroy(srq, 1000), 0);
	cr_assert_eq(vf_wq_destroy(wq, 1000), 0);

	if (c->elem == E_DEVICE) {
		unsigned long reads = vf_fd_reads(a.ctx->async_fd);

		cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
		cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV,
			     "DEVICE_FATAL: the device is gone");
		cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
		cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads, "and reading stopped");
	} else {
		cr_assert_eq(lfp_verbs_async_progress(a.va), 0);
	}
	arig_down(&a);
}

TestSuite(verbs_async, .init = need_fake, .timeout = 30);

Test(verbs_async, open_and_close_arguments)
{
	struct lfp_eq_attr small = { .entry_size = sizeof(struct lfp_verbs_async_entry) - 1 };
	struct lfp_eq_attr exact = { .entry_size = sizeof(struct lfp_verbs_async_entry) };
	struct ibv_context *ctx = vf_ctx_create();
	struct lfp_verbs_async *va = NULL;
	struct lfp_eq *eq;

	cr_assert_eq(lfp_eq_open(&small, &eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(ctx, eq, &va, NULL), -EMSGSIZE,
		     "the EQ cannot hold an entry");
	cr_assert_null(va);
	cr_assert_eq(lfp_eq_close(eq), 0, "the refused open did not hold the EQ");
	cr_assert_eq(lfp_eq_open(&exact, &eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(NULL, eq, &va, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_async_open(ctx, NULL, &va, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_async_open(ctx, eq, NULL, NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_async_progress(NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_async_close(NULL), -EINVAL);
	cr_assert_eq(lfp_verbs_async_open(ctx, eq, &va, NULL), 0);
	cr_assert(fcntl(ctx->async_fd, F_GETFL) & O_NONBLOCK);
	cr_assert_eq(va->fid.fclass, LFP_CLASS_VERBS_ASYNC);
	cr_assert_eq(lfp_verbs_async_progress(va), 0);
	cr_assert_eq(lfp_eq_close(eq), -EBUSY, "held by the async object");
	cr_assert_eq(lfp_verbs_async_close(va), 0);
	cr_assert_eq(lfp_eq_close(eq), 0);
	finish(ctx);
}

/*
 * The next calloc of this thread fails: this program is linked with
 * -Wl,--wrap=calloc (tests/verbs.mk), which reaches the static binding's
 * calls and nothing in the shared libraries.
 */
static _Thread_local int calloc_fail;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail) {
		calloc_fail = 0;
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

Test(verbs_async, failed_open_leaves_the_fd_as_it_was)
{
	struct lfp_eq_attr attr = { .entry_size = sizeof(struct lfp_verbs_async_entry) };
	struct ibv_context *ctx = vf_ctx_create();
	struct lfp_verbs_async *va = NULL;
	struct lfp_eq *eq;
	int fl = fcntl(ctx->async_fd, F_GETFL);

	cr_assert_geq(fl, 0);
	cr_assert_not(fl & O_NONBLOCK, "a fresh async fd blocks");
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	calloc_fail = 1;
	cr_assert_eq(lfp_verbs_async_open(ctx, eq, &va, NULL), -ENOMEM);
	cr_assert_eq(calloc_fail, 0, "the open made no allocation");
	cr_assert_null(va);
	cr_assert_eq(fcntl(ctx->async_fd, F_GETFL), fl,
		     "a failed open left O_NONBLOCK set on the async fd");
	cr_assert_eq(lfp_eq_close(eq), 0, "the failed open did not hold the EQ");
	finish(ctx);
}

Test(verbs_async, unknown_type_20_passes_through_with_its_number)
{
	struct lfp_verbs_async_entry e;
	struct arig a;

	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, (enum ibv_event_type)20, 3), 0);
	cr_assert_eq(vf_async_push(a.ctx, (enum ibv_event_type)57, 0), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 2, "never dropped");
	e = eq_info(a.eq);
	cr_assert_eq((int)e.type, 20);
	cr_assert_eq(e.element.port_num, 3,
		     "the element libibverbs decoded (port_num) passes through");
	e = eq_info(a.eq);
	cr_assert_eq((int)e.type, 57);
	cr_assert_not_null(lfp_verbs_event_str((enum ibv_event_type)20));
	cr_assert_not_null(lfp_verbs_event_str((enum ibv_event_type)-1));
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0, "not gone");
	arig_down(&a);
}

Test(verbs_async, events_arrive_in_order_and_device_fatal_stops_reading)
{
	struct lfp_verbs_async_entry e;
	unsigned long reads;
	uint32_t code;
	struct arig a;

	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_LID_CHANGE, 2), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_DEVICE_FATAL, 0), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ERR, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 3, "stops after DEVICE_FATAL");
	cr_assert_eq(vf_fd_pending(a.ctx->async_fd), 16, "PORT_ERR left unread");
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads, "no re-reading in a loop");
	/* In device order, DEVICE_FATAL last, as an event of its class. */
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(e.element.port_num, 1);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_LID_CHANGE);
	cr_assert_eq(e.element.port_num, 2);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_DEVICE_FATAL);
	cr_assert_eq(e.err, ENODEV);
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), -EAGAIN);
	arig_down(&a);
}

Test(verbs_async, eio_on_the_async_fd_means_gone)
{
	unsigned long reads;
	struct arig a;

	arig_up(&a, NULL);
	cr_assert_eq(vf_inject_read(a.ctx->async_fd, EIO, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV, "gone stays gone");
	cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads);
	arig_down(&a);
}

Test(verbs_async, device_gone_delivers_the_queued_events_then_stops)
{
	struct lfp_verbs_async_entry e;
	struct arig a;
	int r;

	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_SM_CHANGE, 1), 0);
	vf_ctx_device_gone(a.ctx, 0); /* no DEVICE_FATAL record: EIO after the queue */
	r = lfp_verbs_async_progress(a.va);
	cr_assert_eq(r, 1, "the queued event first (%d)", r);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_SM_CHANGE);
	arig_down(&a);
}

Test(verbs_async, eintr_is_retried_and_eagain_is_nothing_more)
{
	struct lfp_verbs_async_entry e;
	struct arig a;

	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_inject_read(a.ctx->async_fd, EINTR, 3), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "EINTR retried");
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE);

	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_GID_CHANGE, 2), 0);
	cr_assert_eq(vf_inject_read(a.ctx->async_fd, EAGAIN, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0, "EAGAIN: nothing more now");
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "read on the next call");
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_GID_CHANGE);
	cr_assert_eq(e.element.port_num, 2);
	arig_down(&a);
}

Test(verbs_async, a_full_backpressure_eq_keeps_the_event_for_later)
{
	struct lfp_eq_attr attr = { .size = 2, .flags = LFP_EQ_BACKPRESSURE };
	struct lfp_verbs_async_entry e;
	struct ibv_qp *qp;
	struct arig a;
	uint32_t code;
	int r, got = 0;

	arig_up(&a, &attr);
	qp = vf_qp_create(a.ctx);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), -EAGAIN, "full");
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_COMM_EST, VF_ELEM(qp)), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_SM_CHANGE, 2), 0);
	r = lfp_verbs_async_progress(a.va);
	cr_assert(r == -EAGAIN || r == 0, "full EQ: %d", r);
	r = lfp_verbs_async_progress(a.va);
	cr_assert(r == -EAGAIN || r == 0, "still full: %d", r);
	/* Already acked (the copy is kept): the QP can go. */
	cr_assert_eq(async_acked(&qp->mutex, &qp->events_completed), 1u);
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	cr_assert_eq(lfp_eq_read(a.eq, &code, NULL, 0, 0), 0);
	cr_assert_eq(code, LFP_EVENT_USER);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "one slot: one event");
	cr_assert_eq(lfp_eq_read(a.eq, &code, NULL, 0, 0), 0);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_COMM_EST, "nothing lost, order kept");
	cr_assert_eq(e.element.qp, qp);
	while (got < 2) {
		r = lfp_verbs_async_progress(a.va);
		cr_assert_geq(r, 1, "progress %d", r);
		got += r;
	}
	cr_assert_eq(got, 2);
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_SM_CHANGE);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0);
	arig_down(&a);
}

Test(verbs_async, the_async_fid_waits_on_the_async_fd)
{
	enum lfp_wait_obj obj;
	struct arig a;
	int fd;

	arig_up(&a, NULL);
	cr_assert_eq(lfp_control(&a.va->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_FD);
	fd = getwait_fd(&a.va->fid);
	cr_assert_eq(fd, a.ctx->async_fd);
	cr_assert_eq(trywait1(&a.va->fid), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert(fd_readable(fd, 0));
	cr_assert_eq(trywait1(&a.va->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1);
	cr_assert_eq(trywait1(&a.va->fid), 0);
	(void)eq_info(a.eq);
	arig_down(&a);
}

/* ------------------------------------- sharing, full EQs, close and misuse */

TestSuite(verbs_share, .init = need_fake, .timeout = 30);

static int fd_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	cr_assert_geq(fl, 0, "F_GETFL: %s", strerror(errno));
	return fl;
}

/* The channel fd in a POLLFD set's array: how many times. */
static int set_has_fd(struct lfp_wait *ws, int fd)
{
	struct pollfd fds[16];
	struct lfp_wait_pollfd p;

	p.nfds = 16;
	p.fd = fds;
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &p), 0);
	return pollfd_has(&p, fd);
}

/* Opens a second CQ on the same channel and set while the first one's open
 * arms (and that arm is about to fail). */
struct second_open {
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	struct lfp_verbs_cq_attr attr;
	struct lfp_verbs_cq *v;
	int ret, fired;
};

static void hook_second_open(struct ibv_cq *cq, int solicited_only, void *arg)
{
	struct second_open *s = arg;

	(void)solicited_only;
	vf_cq_set_hooks(cq, NULL, NULL, NULL);
	s->ret = lfp_verbs_cq_open(s->cq, s->ch, &s->attr, &s->v, NULL);
	s->fired++;
}

Test(verbs_share, a_failed_open_leaves_the_channel_fd_to_a_sharer_that_opened_meanwhile)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_POLLFD };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *c1 = vf_cq_create(ctx, ch, NULL, 4);
	struct ibv_cq *c2 = vf_cq_create(ctx, ch, NULL, 4);
	struct second_open s;
	struct lfp_verbs_cq *v1 = NULL;
	struct lfp_wait *ws;

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	memset(&s, 0, sizeof(s));
	s.cq = c2;
	s.ch = ch;
	s.attr.wait_obj = LFP_WAIT_SET;
	s.attr.wait_set = ws;
	vf_cq_set_hooks(c1, hook_second_open, NULL, &s);
	vf_cq_fail_next_arm(c1, EIO);
	cr_assert_eq(lfp_verbs_cq_open(c1, ch, &s.attr, &v1, NULL), -EIO);
	cr_assert_null(v1);
	cr_assert_eq(s.fired, 1);
	cr_assert_eq(s.ret, 0, "the second open, during the first one's arm: %d", s.ret);
	cr_assert_eq(set_has_fd(ws, ch->fd), 1,
		     "the failed open took the fd of the surviving sharer out of the set");
	/* And it works: a completion wakes the set. */
	cr_assert_eq(lfp_trywait(&(struct lfp_fid *){ &ws->fid }, 1), 0);
	push(c2, 7, IBV_WC_SUCCESS, 0);
	cr_assert_eq(lfp_wait(ws, 5000), 0);
	cr_assert_eq(lfp_trywait(&(struct lfp_fid *){ &ws->fid }, 1), -EAGAIN);
	read_one(s.v, 7);
	/* The failed CQ can be opened now; the last close takes the fd out. */
	cr_assert_eq(lfp_verbs_cq_open(c1, ch, &s.attr, &v1, NULL), 0);
	cr_assert_eq(set_has_fd(ws, ch->fd), 1);
	cr_assert_eq(lfp_verbs_cq_close(s.v), 0);
	cr_assert_eq(set_has_fd(ws, ch->fd), 1, "one sharer left");
	cr_assert_eq(lfp_verbs_cq_close(v1), 0);
	cr_assert_eq(set_has_fd(ws, ch->fd), 0, "the last sharer took it out");
	cr_assert_eq(vf_cq_destroy(c1, 1000), 0);
	cr_assert_eq(vf_cq_destroy(c2, 1000), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

Test(verbs_share, a_failed_open_leaves_the_channel_fd_flags_as_they_were)
{
	struct lfp_wait_attr mc = { .wait_obj = LFP_WAIT_MUTEX_COND };
	struct lfp_verbs_cq_attr set = { .wait_obj = LFP_WAIT_SET };
	struct lfp_verbs_cq *v = NULL, *v2 = NULL;
	struct lfp_wait *ws;
	struct rig r;
	int fl;

	rig_up(&r, 4);
	fl = fd_flags(r.ch->fd);
	cr_assert_not(fl & O_NONBLOCK, "a fresh channel fd blocks");
	/* The arm fails. */
	vf_cq_fail_next_arm(r.cq, EIO);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &FD_ATTR, &v, NULL), -EIO);
	cr_assert_eq(fd_flags(r.ch->fd), fl, "a failed arm left O_NONBLOCK set");
	/* The set cannot take fds (MUTEX_COND): lfp_wait_add_fd fails. */
	cr_assert_eq(lfp_wait_open(&mc, &ws), 0);
	set.wait_set = ws;
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &set, &v, NULL), -EINVAL);
	cr_assert_null(v);
	cr_assert_eq(fd_flags(r.ch->fd), fl, "a failed add_fd left O_NONBLOCK set");
	cr_assert_eq(lfp_wait_close(ws), 0);
	/* -EEXIST: the check comes before the change. */
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &FD_ATTR, &v, NULL), 0);
	cr_assert(fd_flags(r.ch->fd) & O_NONBLOCK, "open sets O_NONBLOCK");
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 0), 0);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &FD_ATTR, &v2, NULL), -EEXIST);
	cr_assert_not(fd_flags(r.ch->fd) & O_NONBLOCK,
		      "an -EEXIST open changed the channel fd");
	cr_assert_eq(vf_fd_set_nonblock(r.ch->fd, 1), 0);
	r.vcq = v;
	rig_down(&r);
}

/* Closes the CQ in arg while another open arms (that arm is about to fail). */
static void hook_close_sharer(struct ibv_cq *cq, int solicited_only, void *arg)
{
	(void)solicited_only;
	vf_cq_set_hooks(cq, NULL, NULL, NULL);
	cr_assert_eq(lfp_verbs_cq_close((struct lfp_verbs_cq *)arg), 0);
}

/*
 * An open that fails leaves the fd as it found it, also when it fails as
 * the channel's last user: here the first CQ set O_NONBLOCK and closed
 * while the second one armed, and that arm failed.
 */
Test(verbs_share, a_failed_open_that_found_o_nonblock_set_leaves_it_set)
{
	struct ibv_cq *c2;
	struct lfp_verbs_cq *v2 = NULL;
	struct rig r;

	rig_up(&r, 4);
	c2 = vf_cq_create(r.ctx, r.ch, NULL, 4);
	cr_assert_not_null(c2);
	cr_assert_eq(lfp_verbs_cq_open(r.cq, r.ch, &FD_ATTR, &r.vcq, NULL), 0);
	cr_assert(fd_flags(r.ch->fd) & O_NONBLOCK, "open sets O_NONBLOCK");
	vf_cq_set_hooks(c2, hook_close_sharer, NULL, r.vcq);
	vf_cq_fail_next_arm(c2, EIO);
	cr_assert_eq(lfp_verbs_cq_open(c2, r.ch, &FD_ATTR, &v2, NULL), -EIO);
	cr_assert(fd_flags(r.ch->fd) & O_NONBLOCK, "the failed open, which found "
	          "O_NONBLOCK set, cleared it");
	cr_assert_eq(vf_cq_destroy(c2, 1000), 0);
	r.vcq = NULL; /* closed by the hook */
	rig_down(&r);
}

struct blocked_sread {
	struct lfp_verbs_cq *vcq;
	struct ibv_wc wc;
	int ret;
};

static void *sread_thread(void *arg)
{
	struct blocked_sread *b = arg;

	b->ret = lfp_verbs_cq_sread(b->vcq, &b->wc, 1, 10000);
	return NULL;
}

/* sread_thread as a thread scheduled late after each wake (vf_poll_late). */
static void *late_sread_thread(void *arg)
{
	vf_poll_late(200);
	return sread_thread(arg);
}

/*
 * CQ A asleep in sread; a completion lands on A, CQ B's trywait reads A's
 * channel event (and credits A), the device goes.  When A's sread looks,
 * the drained channel says POLLERR, as the kernel's does: the completion
 * comes first, then -EIO.
 */
Test(verbs_share, sread_gives_a_pending_completion_before_the_device_loss)
{
	struct lfp_verbs_cq *vb;
	struct blocked_sread b;
	struct ibv_wc wc;
	struct ibv_cq *cb;
	struct rig a;
	pthread_t t;

	rig_open(&a, 8, NULL);
	cb = vf_cq_create(a.ctx, a.ch, NULL, 8);
	cr_assert_not_null(cb);
	cr_assert_eq(lfp_verbs_cq_open(cb, a.ch, &FD_ATTR, &vb, NULL), 0);
	memset(&b, 0, sizeof(b));
	b.vcq = a.vcq;
	cr_assert_eq(pthread_create(&t, NULL, late_sread_thread, &b), 0);
	usleep(100 * 1000); /* A asleep */
	push(a.cq, 42, IBV_WC_SUCCESS, 0);
	cr_assert_eq(trywait1(&vb->fid), 0, "B reads A's event");
	vf_ctx_device_gone(a.ctx, 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(b.ret, 1, "sread returned %d with A's completion pending",
	             b.ret);
	cr_assert_eq(b.wc.wr_id, 42);
	cr_assert_eq(lfp_verbs_cq_sread(a.vcq, &wc, 1, 1000), -EIO);
	cr_assert_eq(lfp_verbs_cq_close(vb), 0);
	cr_assert_eq(vf_cq_destroy(cb, 1000), 0, "an event left unacked");
	rig_down(&a);
}

Test(verbs_share, close_while_a_thread_is_inside_sread_is_ebusy)
{
	struct blocked_sread b;
	unsigned long polls;
	pthread_t t;
	struct rig r;
	int i;

	rig_open(&r, 4, NULL);
	consume_the_arm(&r, 1);
	memset(&b, 0, sizeof(b));
	b.vcq = r.vcq;
	polls = stats(r.cq).polls;
	cr_assert_eq(pthread_create(&t, NULL, sread_thread, &b), 0);
	/* Inside sread once it has polled the CQ at least twice (the read and
	 * trywait's polls); then it sleeps on the channel. */
	for (i = 0; i < 5000 && stats(r.cq).polls < polls + 3; i++)
		usleep(1000);
	cr_assert_geq(stats(r.cq).polls, polls + 3, "sread never polled");
	usleep(20000);
	cr_assert_eq(lfp_verbs_cq_close(r.vcq), -EBUSY,
		     "close freed the CQ under a thread sleeping in sread");
	push(r.cq, 2, IBV_WC_SUCCESS, 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(b.ret, 1, "sread %d", b.ret);
	cr_assert_eq(b.wc.wr_id, 2);
	rig_down(&r); /* the close succeeds once sread has returned */
}

struct spinning_progress {
	struct lfp_verbs_async *va;
	int ret;
};

static void *progress_thread(void *arg)
{
	struct spinning_progress *p = arg;

	p->ret = lfp_verbs_async_progress(p->va);
	return NULL;
}

Test(verbs_share, async_close_while_a_thread_is_inside_progress_is_ebusy)
{
	struct spinning_progress p;
	unsigned long reads;
	pthread_t t;
	struct arig a;
	int i;

	arig_up(&a, NULL);
	/* EINTR for ever: progress retries, so it stays inside. */
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(vf_inject_read(a.ctx->async_fd, EINTR, VF_FOREVER), 0);
	p.va = a.va;
	p.ret = -1;
	cr_assert_eq(pthread_create(&t, NULL, progress_thread, &p), 0);
	for (i = 0; i < 5000 && vf_fd_reads(a.ctx->async_fd) < reads + 2; i++)
		usleep(1000);
	cr_assert_geq(vf_fd_reads(a.ctx->async_fd), reads + 2, "progress never read");
	cr_assert_eq(lfp_verbs_async_close(a.va), -EBUSY,
		     "close freed the async object under a thread in progress");
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_inject_read(a.ctx->async_fd, 0, 0), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(p.ret, 1, "progress %d", p.ret);
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_PORT_ACTIVE);
	arig_down(&a); /* the close succeeds once progress has returned */
}

Test(verbs_share, a_held_event_makes_close_ebusy_until_the_eq_has_room)
{
	struct lfp_eq_attr attr = { .size = 2, .flags = LFP_EQ_BACKPRESSURE };
	struct lfp_verbs_async_entry e;
	unsigned long reads;
	struct arig a;
	uint32_t code;

	arig_up(&a, &attr);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(a.eq, LFP_EVENT_USER, NULL, 0, 0), -EAGAIN, "full");
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_LID_CHANGE, 2), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0, "full: nothing moved");
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 0, "still full");
	cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads, "nothing more read while held");
	cr_assert_eq(vf_fd_pending(a.ctx->async_fd), 16, "LID_CHANGE waits in the fd");
	cr_assert_eq(lfp_verbs_async_close(a.va), -EBUSY,
		     "close dropped an acked event the EQ had refused");
	cr_assert_eq(lfp_eq_close(a.eq), -EBUSY, "still held by the async object");
	/* Room: close delivers the held event, then succeeds. */
	cr_assert_eq(lfp_eq_read(a.eq, &code, NULL, 0, 0), 0);
	cr_assert_eq(code, LFP_EVENT_USER);
	cr_assert_eq(lfp_verbs_async_close(a.va), 0);
	cr_assert_eq(lfp_eq_read(a.eq, &code, NULL, 0, 0), 0);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE, "the held event, not lost");
	cr_assert_eq(lfp_eq_read(a.eq, &code, &e, sizeof(e), 0), -EAGAIN);
	cr_assert_eq(lfp_eq_close(a.eq), 0);
	finish(a.ctx);
}

Test(verbs_share, an_overrun_eq_keeps_the_async_fd_drained_and_sees_device_fatal)
{
	struct lfp_eq_attr attr = { .size = 2 };
	struct lfp_eq_err_entry err;
	struct ibv_qp *qp;
	unsigned long reads;
	struct arig a;
	int i, r;

	arig_up(&a, &attr);
	qp = vf_qp_create(a.ctx);
	for (i = 0; i < 3; i++)
		cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_COMM_EST, VF_ELEM(qp)), 0);
	r = lfp_verbs_async_progress(a.va);
	cr_assert_eq(r, -LFP_EOVERRUN, "the overrun is reported once: %d", r);
	cr_assert_eq(vf_fd_pending(a.ctx->async_fd), 0, "the async fd was drained");
	cr_assert_eq(async_acked(&qp->mutex, &qp->events_completed), 1u,
		     "an event the EQ could not take was still acked");
	cr_assert_eq(vf_qp_destroy(qp, 1000), 0);
	/* Later events are read and acked too, never left in the fd. */
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_SM_CHANGE, 1), 0);
	r = lfp_verbs_async_progress(a.va);
	cr_assert_eq(r, 0, "nothing moved into an overrun EQ: %d", r);
	cr_assert_eq(vf_fd_pending(a.ctx->async_fd), 0);
	cr_assert_not(fd_readable(a.ctx->async_fd, 0), "the fd stays readable unread");
	cr_assert_eq(trywait1(&a.va->fid), 0);
	/* DEVICE_FATAL still marks the device gone. */
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_DEVICE_FATAL, 0), 0);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ERR, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads, "reading stopped");
	/* The EQ itself says it overran. */
	memset(&err, 0, sizeof(err));
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(lfp_eq_read(a.eq, &(uint32_t){ 0 }, NULL, 0, 0), -LFP_EAVAIL);
	cr_assert_eq(lfp_eq_readerr(a.eq, &err, 0), (ssize_t)sizeof(err));
	cr_assert_eq(err.err, LFP_EOVERRUN);
	arig_down(&a);
}

Test(verbs_share, eof_on_the_async_fd_means_gone)
{
	unsigned long reads;
	struct arig a;
	int nul;

	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	/* The only write end becomes /dev/null: the async fd reads EOF once
	 * the queued record is read (the fake closes that fd number later). */
	nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert_geq(nul, 0);
	cr_assert_geq(dup2(nul, vf_ctx_async_wfd(a.ctx)), 0);
	cr_assert_eq(close(nul), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1, "the queued event first");
	cr_assert_eq(eq_info(a.eq).type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV, "EOF: the device is gone");
	reads = vf_fd_reads(a.ctx->async_fd);
	cr_assert_eq(lfp_verbs_async_progress(a.va), -ENODEV);
	cr_assert_eq(vf_fd_reads(a.ctx->async_fd), reads, "reading stopped");
	arig_down(&a);
}

/* ------------------------------------------------- no device list needed */

TestSuite(verbs_nodev, .init = need_fake, .timeout = 30);

Test(verbs_nodev, the_binding_works_while_ibv_get_device_list_fails)
{
	struct lfp_verbs_async_entry e;
	struct arig a;
	struct rig r;
	int n = 3;

	vf_device_list_fail(ENOSYS);
	errno = 0;
	cr_assert_null(ibv_get_device_list(&n));
	cr_assert_eq(errno, ENOSYS);
	rig_open(&r, 4, NULL);
	cr_assert_eq(trywait1(&r.vcq->fid), 0);
	push(r.cq, 1, IBV_WC_SUCCESS, 0);
	cr_assert_eq(trywait1(&r.vcq->fid), -EAGAIN);
	read_one(r.vcq, 1);
	rig_down(&r);
	arig_up(&a, NULL);
	cr_assert_eq(vf_async_push(a.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(lfp_verbs_async_progress(a.va), 1);
	e = eq_info(a.eq);
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE);
	arig_down(&a);
	vf_device_list_fail(0);
}

/* ------------------------------------------------------- real hardware */

/* The same timeout as every other suite: with parallel jobs, Criterion 2.4.1
 * leaks a timeout-watchdog entry (48 bytes, seen by ASan) when suites differ. */
TestSuite(verbs_hw, .timeout = 30);

Test(verbs_hw, smoke_on_a_real_device_or_skip)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_verbs_cq *v;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	int n = 0, ret;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		int e = errno;

		if (list)
			ibv_free_device_list(list);
		cr_skip_test("no RDMA device: ibv_get_device_list gave %d device(s) (%s)",
			     n, e ? strerror(e) : "none listed");
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(ctx, "ibv_open_device: %s", strerror(errno));
	ch = ibv_create_comp_channel(ctx);
	cr_assert_not_null(ch);
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	cr_assert_not_null(cq);
	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &FD_ATTR, &v, NULL), 0);
	ret = trywait1(&v->fid);
	cr_assert_eq(ret, 0, "an idle CQ: trywait %d", ret);
	cr_assert_eq(lfp_verbs_cq_read(v, &wc, 1), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_sread(v, &wc, 1, 10), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}
