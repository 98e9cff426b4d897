/* Every public open call used the way a user writes it: the handle is
 * used only after a 0 return.  tests/compile.mk builds it at -O2 and -O3
 * with -Werror under gcc and clang, so no call leaves the compiler room
 * to think a handle may be uninitialized. */
#include <lfpoll/lfpoll.h>

static int use_ring(void)
{
	struct lfp_ring *r;
	int v = 7, out = 0;

	if (lfp_ring_create(8, sizeof(v), &r))
		return 1;
	if (lfp_ring_enqueue(r, &v, sizeof(v)) ||
	    lfp_ring_dequeue(r, &out, sizeof(out)) != (ssize_t)sizeof(out))
		out = -1;
	lfp_ring_destroy(r);
	return out != 7;
}

static int use_eq(void)
{
	struct lfp_eq_attr attr = { .size = 8, .wait_obj = LFP_WAIT_FD };
	struct lfp_eq *eq;
	uint32_t event;
	char msg[8];

	if (lfp_eq_open(&attr, &eq, NULL))
		return 1;
	if (lfp_eq_write(eq, LFP_EVENT_USER, "hi", 3, 0) != 3 ||
	    lfp_eq_sread(eq, &event, msg, sizeof(msg), 0, 0) != 3)
		return lfp_eq_close(eq) ? 1 : 1;
	return lfp_eq_close(eq) ? 1 : 0;
}

static int use_cq_cntr_sets(void)
{
	struct lfp_wait_attr wattr = { .wait_obj = LFP_WAIT_FD };
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	struct lfp_cq *cq;
	struct lfp_cntr *c;
	struct lfp_cq_attr cattr = { .size = 8 };
	struct lfp_cntr_attr kattr = { .wait_obj = LFP_WAIT_SET };
	struct lfp_cq_entry e = { NULL }, out;
	void *ctx[2];
	int ret = 1;

	if (lfp_wait_open(&wattr, &ws))
		return 1;
	if (lfp_poll_open(NULL, &ps))
		goto out_ws;
	cattr.wait_obj = LFP_WAIT_SET;
	cattr.wait_set = ws;
	kattr.wait_set = ws;
	if (lfp_cq_open(&cattr, &cq, &ret))
		goto out_ps;
	if (lfp_cntr_open(&kattr, &c, NULL))
		goto out_cq;
	if (lfp_poll_add(ps, &cq->fid, 0) == 0 &&
	    lfp_cq_write(cq, &e, 1) == 1 && lfp_cntr_inc(c, 1) == 0 &&
	    lfp_poll(ps, ctx, 2) == 1 && lfp_cq_read(cq, &out, 1) == 1 &&
	    lfp_cntr_read(c) == 1)
		ret = 0;
	(void)lfp_poll_del(ps, &cq->fid, 0);
	(void)lfp_cntr_close(c);
out_cq:
	(void)lfp_cq_close(cq);
out_ps:
	(void)lfp_poll_close(ps);
out_ws:
	(void)lfp_wait_close(ws);
	return ret;
}

/* A ticket written out as a constant: the consume's store of ticket + 1
 * (a single consumer's) once did not assemble for one from 2^31 - 1 to
 * 2^32 - 2 (movq takes no such immediate). */
static int use_ring_ticket(void)
{
	struct lfp_ring *r;
	int ret;

	if (lfp_ring_create_flags(8, 8, LFP_SINGLE_CONSUMER, &r))
		return 1;
	ret = lfp_ring_consume(r, 0xfffffffeu); /* never peeked: stale */
	lfp_ring_destroy(r);
	return ret != -ESTALE;
}

/* The blocking CQ read: its sleep carries a cancellation cleanup handler. */
static int use_cq_sread(void)
{
	struct lfp_cq_attr attr = { .size = 8, .wait_obj = LFP_WAIT_FD };
	struct lfp_cq *cq;
	struct lfp_cq_entry e = { NULL }, out;
	size_t threshold = 1;
	int ret = 1;

	if (lfp_cq_open(&attr, &cq, NULL))
		return 1;
	if (lfp_cq_sread(cq, &out, 1, &threshold, 1) == -EAGAIN &&
	    lfp_cq_write(cq, &e, 1) == 1 &&
	    lfp_cq_sread(cq, &out, 1, &threshold, -1) == 1)
		ret = 0;
	return lfp_cq_close(cq) ? 1 : ret;
}

int main(void)
{
	return use_ring() || use_ring_ticket() || use_eq() || use_cq_cntr_sets() ||
	       use_cq_sread();
}
