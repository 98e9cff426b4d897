/*
 * Extended CQs (ibv_cq_ex) take the plain CQ's path: their events name
 * ibv_cq_ex_to_cq(cq), which is armed, registered and acked as a plain CQ;
 * only the poll differs (start_poll, next_poll, end_poll, and the read ops
 * of the fields asked for at creation), and so the stash's entry size.
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <string.h>

/*
 * The current entry of an extended CQ into e: the fields asked for at
 * creation, or with an error status the ones ibv_poll_cq(3) defines then
 * (wr_id, status, vendor_err, qp_num).  Only ops for fields asked for are
 * called: a provider may leave the others NULL.
 */
static void read_ex(struct vcq *v, struct lfp_verbs_wc_ex *e)
{
	struct ibv_cq_ex *x = v->cqx;
	uint64_t f = v->wc_flags;

	memset(e, 0, sizeof(*e));
	e->wr_id = x->wr_id;
	e->status = x->status;
	if (e->status != IBV_WC_SUCCESS) {
		e->vendor_err = ibv_wc_read_vendor_err(x);
		e->fields = f & IBV_WC_EX_WITH_QP_NUM;
		if (f & IBV_WC_EX_WITH_QP_NUM)
			e->qp_num = ibv_wc_read_qp_num(x);
		return;
	}
	e->opcode = ibv_wc_read_opcode(x);
	e->wc_flags = ibv_wc_read_wc_flags(x);
	e->fields = f;
	if (f & IBV_WC_EX_WITH_BYTE_LEN)
		e->byte_len = ibv_wc_read_byte_len(x);
	if (f & IBV_WC_EX_WITH_IMM)
		e->imm_data = ibv_wc_read_imm_data(x);
	if (f & IBV_WC_EX_WITH_QP_NUM)
		e->qp_num = ibv_wc_read_qp_num(x);
	if (f & IBV_WC_EX_WITH_SRC_QP)
		e->src_qp = ibv_wc_read_src_qp(x);
	if (f & IBV_WC_EX_WITH_SLID)
		e->slid = ibv_wc_read_slid(x);
	if (f & IBV_WC_EX_WITH_SL)
		e->sl = ibv_wc_read_sl(x);
	if (f & IBV_WC_EX_WITH_DLID_PATH_BITS)
		e->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		e->completion_ts = ibv_wc_read_completion_ts(x);
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		e->completion_wallclock_ns = ibv_wc_read_completion_wallclock_ns(x);
	if (f & IBV_WC_EX_WITH_CVLAN)
		e->cvlan = ibv_wc_read_cvlan(x);
	if (f & IBV_WC_EX_WITH_FLOW_TAG)
		e->flow_tag = ibv_wc_read_flow_tag(x);
	if (f & IBV_WC_EX_WITH_TM_INFO)
		ibv_wc_read_tm_info(x, &e->tm_info);
}

/*
 * An extended CQ: ibv_start_poll (ENOENT: empty, and no end_poll), one
 * ibv_next_poll per further entry, ibv_end_poll.  Their errors are
 * positive errnos; one after some entries ends the batch, and the next
 * poll meets it again.
 */
int lfp_verbs__poll_ex(struct vcq *v, void *dst, int n)
{
	struct lfp_verbs_wc_ex *e = (struct lfp_verbs_wc_ex *)dst;
	struct ibv_poll_cq_attr pa;
	int got = 0, ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_start_poll(v->cqx, &pa);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return ret > 0 ? -ret : -EIO;
	for (;;) {
		read_ex(v, &e[got++]);
		if (got == n || ibv_next_poll(v->cqx))
			break;
	}
	ibv_end_poll(v->cqx);
	return got;
}

API int lfp_verbs_cq_ex_open(struct ibv_cq_ex *cq, struct ibv_comp_channel *channel,
                             const struct lfp_verbs_cq_ex_attr *attr,
                             struct lfp_verbs_cq **vcqp, void *context)
{
	struct vcq_src src = { VCQ_EX, NULL, cq, attr ? attr->wc_flags : 0 };

	if (!cq)
		return -EINVAL;
	/* Fields the binding does not know how to read. */
	if (src.wc_flags & ~(uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS)
		return -EINVAL;
	src.cq = ibv_cq_ex_to_cq(cq);
	return lfp_verbs__cq_open(&src, channel, attr ? &attr->cq : NULL, vcqp,
	                          context);
}

API int lfp_verbs_cq_ex_read(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                             int n)
{
	return lfp_verbs__cq_read_api(vcq, wc, n, VCQ_EX);
}

API int lfp_verbs_cq_ex_sread(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                              int n, int timeout)
{
	return lfp_verbs__cq_sread_api(vcq, wc, n, timeout, VCQ_EX);
}
