/*
 * bench/verbs.c: the blocking round trip through the verbs binding against
 * the same round trip written directly with libibverbs, on the test context
 * (support/vf/vf.h: the real libibverbs over pipes and a hardware-like
 * fake CQ; there is no RDMA device on these machines).
 *
 * verbs/rtt   two threads on two CPUs ping-pong one completion through two
 *             CQs with their own channels.  Each side waits the way its
 *             API says:
 *               lfpoll: lfp_verbs_cq_read, else lfp_trywait on the verbs CQ
 *                       (drain, arm, re-poll) == 0, then poll(2) on the
 *                       CQ's LFP_GETWAIT fd;
 *               raw:    ibv_poll_cq, else ibv_req_notify_cq, ibv_poll_cq
 *                       again, then poll(2), ibv_get_cq_event, ack.
 *             Target: lfpoll's round trip <= 1.1x raw (ratio >= 0.91).
 *             ns/item = one round trip; every wr_id is checked.
 */
#define _GNU_SOURCE
#include <lfpoll/verbs.h>

#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "vf.h"

struct side {
	struct ibv_cq *in, *out;           /* wait on in, answer on out */
	struct ibv_comp_channel *ch_in;
	struct lfp_verbs_cq *vin;          /* lfpoll only */
	int wfd_in;                        /* vin's LFP_GETWAIT fd */
	uint64_t items, max, budget, t0;
	int first;                         /* the pinger starts */
	int raw;
	int fail;
};

struct rt {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch[2];
	struct ibv_cq *cq[2];
	struct lfp_verbs_cq *v[2];
	int raw;
	struct side s[2];
};

/* Wait for one completion on s->in, the binding's way. */
static int wait_lfpoll(struct side *s, uint64_t *wr_id)
{
	struct ibv_wc wc;
	struct pollfd pfd;
	struct lfp_fid *f = &s->vin->fid;
	int r;

	for (;;) {
		r = lfp_verbs_cq_read(s->vin, &wc, 1);
		if (r == 1) {
			*wr_id = wc.wr_id;
			return 0;
		}
		if (r != -EAGAIN)
			return bench_fail("lfp_verbs_cq_read: %d", r);
		if (lfp_trywait(&f, 1) == 0) {
			pfd.fd = s->wfd_in;
			pfd.events = POLLIN;
			pfd.revents = 0;
			if (poll(&pfd, 1, 5000) == 0)
				return bench_fail("lfpoll: no wake in 5 s (lost wakeup)");
		}
		if (bench_failed())
			return -1;
	}
}

/* The same with libibverbs directly: poll, arm, poll, sleep, get, ack. */
static int wait_raw(struct side *s, uint64_t *wr_id)
{
	struct ibv_wc wc;
	struct pollfd pfd;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int r;

	for (;;) {
		r = ibv_poll_cq(s->in, 1, &wc);
		if (r == 1)
			break;
		if (ibv_req_notify_cq(s->in, 0))
			return bench_fail("ibv_req_notify_cq");
		r = ibv_poll_cq(s->in, 1, &wc);
		if (r == 1)
			break;
		pfd.fd = s->ch_in->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 5000) == 0)
			return bench_fail("raw: no wake in 5 s");
		while (ibv_get_cq_event(s->ch_in, &ev_cq, &ev_ctx) == 0)
			ibv_ack_cq_events(ev_cq, 1);
		if (bench_failed())
			return -1;
	}
	*wr_id = wc.wr_id;
	return 0;
}

static void *side_main(void *arg)
{
	struct side *s = arg;
	uint64_t i, got = 0;

	for (i = 0; i < s->max; i++) {
		if (s->first && ((i & 63) == 0) &&
		    (bench_now_ns() - s->t0 > s->budget || bench_failed())) {
			/* The pinger decides when to stop: it sends a last
			 * marker so the ponger returns too. */
			vf_cq_push(s->out, UINT64_MAX, IBV_WC_SUCCESS, 0);
			break;
		}
		if (s->first && vf_cq_push(s->out, i, IBV_WC_SUCCESS, 0)) {
			bench_fail("push");
			break;
		}
		if ((s->raw ? wait_raw(s, &got) : wait_lfpoll(s, &got)) < 0)
			break;
		if (got == UINT64_MAX)
			break;
		if (got != i) {
			bench_fail("round trip %llu answered %llu",
			           (unsigned long long)i, (unsigned long long)got);
			break;
		}
		if (!s->first && vf_cq_push(s->out, i, IBV_WC_SUCCESS, 0)) {
			bench_fail("push");
			break;
		}
		s->items = i + 1;
	}
	if (s->first && i == s->max)
		vf_cq_push(s->out, UINT64_MAX, IBV_WC_SUCCESS, 0);
	return NULL;
}

static int rt_setup(void *arg)
{
	struct rt *t = arg;
	struct lfp_verbs_cq_attr a = { .ack_batch = 16, .wait_obj = LFP_WAIT_FD };
	int i;

	t->ctx = vf_ctx_create();
	if (!t->ctx)
		return bench_fail("vf_ctx_create");
	for (i = 0; i < 2; i++) {
		t->ch[i] = vf_channel_create(t->ctx);
		t->cq[i] = t->ch[i] ? vf_cq_create(t->ctx, t->ch[i], NULL, 1024) : NULL;
		if (!t->cq[i])
			return bench_fail("fake channel/CQ");
		if (!t->raw) {
			if (lfp_verbs_cq_open(t->cq[i], t->ch[i], &a, &t->v[i], NULL))
				return bench_fail("lfp_verbs_cq_open");
		} else {
			vf_fd_set_nonblock(t->ch[i]->fd, 1);
		}
	}
	return 0;
}

static void rt_teardown(void *arg)
{
	struct rt *t = arg;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int i;

	for (i = 0; i < 2; i++) {
		if (t->v[i])
			lfp_verbs_cq_close(t->v[i]);
		else if (t->ch[i])
			while (ibv_get_cq_event(t->ch[i], &ev_cq, &ev_ctx) == 0)
				ibv_ack_cq_events(ev_cq, 1);
		if (t->cq[i])
			vf_cq_destroy(t->cq[i], 2000);
		if (t->ch[i])
			ibv_destroy_comp_channel(t->ch[i]);
	}
	vf_ctx_destroy(t->ctx);
	memset(t->v, 0, sizeof(t->v));
}

static int rt_run(void *arg, struct bench_round *r)
{
	struct rt *t = arg;
	void *args[2];
	uint64_t ns;
	struct ibv_wc wc;
	int i;

	memset(t->s, 0, sizeof(t->s));
	t->s[0].in = t->cq[1];
	t->s[0].out = t->cq[0];
	t->s[0].ch_in = t->ch[1];
	t->s[0].vin = t->v[1];
	t->s[0].first = 1;
	t->s[1].in = t->cq[0];
	t->s[1].out = t->cq[1];
	t->s[1].ch_in = t->ch[0];
	t->s[1].vin = t->v[0];
	for (i = 0; i < 2; i++)
		if (t->s[i].vin && lfp_control(&t->s[i].vin->fid, LFP_GETWAIT,
		                               &t->s[i].wfd_in))
			return bench_fail("LFP_GETWAIT");
	t->s[0].max = t->s[1].max = r->max_items ? r->max_items : UINT64_MAX;
	t->s[0].budget = r->budget_ns ? r->budget_ns : UINT64_MAX;
	t->s[0].raw = t->s[1].raw = t->raw;
	t->s[0].t0 = bench_now_ns();
	args[0] = &t->s[0];
	args[1] = &t->s[1];
	ns = bench_threads(2, side_main, args, NULL);
	/* The ponger may leave the stop marker unread in the pinger's CQ. */
	while (ibv_poll_cq(t->cq[0], 1, &wc) > 0 || ibv_poll_cq(t->cq[1], 1, &wc) > 0)
		;
	if (t->v[0]) {
		while (lfp_verbs_cq_read(t->v[0], &wc, 1) > 0 ||
		       lfp_verbs_cq_read(t->v[1], &wc, 1) > 0)
			;
	}
	r->items = t->s[0].items;
	r->ns = ns;
	return bench_failed() ? -1 : 0;
}

int main(int argc, char **argv)
{
	static struct rt lf = { .raw = 0 }, raw = { .raw = 1 };
	struct bench_impl impls[] = {
		{ .name = "lfpoll", .run = rt_run, .arg = &lf,
		  .setup = rt_setup, .teardown = rt_teardown },
		{ .name = "raw_ibv", .run = rt_run, .arg = &raw,
		  .setup = rt_setup, .teardown = rt_teardown },
	};
	struct bench_target targets[] = { { "raw_ibv", 0.91 } };
	struct bench_case c = {
		.name = "verbs/rtt",
		.label = "blocking round trip through 2 fake CQs on 2 CPUs: binding "
		         "(trywait + poll + read) vs raw ibv_req_notify_cq/"
		         "ibv_get_cq_event/ibv_poll_cq (target <= 1.1x: ratio >= 0.91)",
		.threads = 2,
		.impls = impls, .n_impls = BENCH_LEN(impls),
		.targets = targets, .n_targets = BENCH_LEN(targets),
	};
	const char *why = NULL;

	bench_init("verbs", argc, argv);
	why = vf_priv_canary();
	if (why) {
		impls[0].skip = impls[1].skip = "the verbs test context cannot drive this libibverbs";
		fprintf(stderr, "verbs: %s\n", why);
	}
	bench_case_run(&c);
	return bench_finish();
}
