/*
 * bench/verbs.c: blocking round trips through the verbs binding against the
 * same round trips written directly with libibverbs, on the test context
 * (support/vf/vf.h: the real libibverbs over pipes and a hardware-like
 * fake CQ; there is no RDMA device on these machines).
 *
 * Two threads on two CPUs ping-pong one completion at a time.  The pinger
 * waits on its own CQ with its own channel.  Each side waits the way its
 * API says:
 *   lfpoll: read, else lfp_trywait on its verbs CQs (drain, arm, re-poll)
 *           == 0, then poll(2) on their LFP_GETWAIT fds;
 *   raw:    poll the CQs, else ibv_req_notify_cq and poll again, then
 *           poll(2) on the channel fd, ibv_get_cq_event, ack each.
 *
 * verbs/rtt     the ponger waits on one CQ with its own channel.
 * verbs/shared  the ponger is a server with a receive and a send CQ on ONE
 *               channel: for each ping it answers, then completes its own
 *               send (a CQE on the send CQ), which it reads in the same
 *               wait loop; events of either CQ come off the one channel.
 * verbs/ex      as rtt, with extended CQs (ibv_create_cq_ex) reporting a
 *               completion timestamp: lfpoll reads struct lfp_verbs_wc_ex,
 *               raw uses ibv_start_poll, ibv_wc_read_completion_ts,
 *               ibv_end_poll.
 * Target for each: lfpoll's round trip <= 1.1x raw (ratio >= 1/1.1).
 * ns/item = one round trip; every wr_id (and timestamp) is checked.
 */
#define _GNU_SOURCE
#include <lfpoll/verbs.h>

#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "vf.h"

enum shape { RTT, SHARED, EX };

struct side {
	struct ibv_cq *in, *out;           /* wait on in, answer on out */
	struct ibv_cq_ex *inx;             /* EX: in as an extended CQ */
	struct ibv_cq *tx;                 /* SHARED server: its send CQ */
	struct ibv_comp_channel *ch_in;    /* in's (and tx's) channel */
	struct lfp_verbs_cq *vin, *vtx;    /* lfpoll only */
	int wfd_in, wfd_tx;                /* their LFP_GETWAIT fds */
	uint64_t tx_next;                  /* SHARED: the next send CQE */
	uint64_t items, max, budget, t0;
	int first;                         /* the pinger starts */
	int raw;
	int ex;
};

struct rt {
	enum shape shape;
	int raw;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch[2];
	struct ibv_cq *cq[3];              /* 0: ponger's in, 1: pinger's in, 2: tx */
	struct lfp_verbs_cq *v[3];
	struct side s[2];
};

/* A completion for cq: an extended CQ's carries a timestamp of wr_id + 1. */
static int push(struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc;
	struct vf_cqe_ex ex;

	memset(&wc, 0, sizeof(wc));
	memset(&ex, 0, sizeof(ex));
	wc.wr_id = wr_id;
	wc.opcode = IBV_WC_RECV;
	ex.completion_ts = wr_id + 1;
	return vf_cq_push_ex(cq, &wc, &ex, 0);
}

/* ------------------------------------------------------------ lfpoll */

/* One completion of s->in: 1, 0 for none, or -1 (failed). */
static int read_lfpoll(struct side *s, uint64_t *wr_id)
{
	struct lfp_verbs_wc_ex e;
	struct ibv_wc wc;
	int r;

	if (s->ex) {
		r = lfp_verbs_cq_ex_read(s->vin, &e, 1);
		if (r == 1) {
			if (e.completion_ts != e.wr_id + 1)
				return bench_fail("timestamp %llu for wr_id %llu",
				                  (unsigned long long)e.completion_ts,
				                  (unsigned long long)e.wr_id);
			*wr_id = e.wr_id;
		}
	} else {
		r = lfp_verbs_cq_read(s->vin, &wc, 1);
		if (r == 1)
			*wr_id = wc.wr_id;
	}
	if (r == 1 || r == -EAGAIN)
		return r == 1;
	return bench_fail("lfp_verbs_cq_read: %d", r);
}

/* The server's send completions, in order. */
static int drain_tx_lfpoll(struct side *s)
{
	struct ibv_wc wc[8];
	int r, i;

	while ((r = lfp_verbs_cq_read(s->vtx, wc, 8)) > 0)
		for (i = 0; i < r; i++)
			if (wc[i].wr_id != s->tx_next++)
				return bench_fail("send CQE %llu out of order",
				                  (unsigned long long)wc[i].wr_id);
	return r == -EAGAIN ? 0 : bench_fail("lfp_verbs_cq_read (tx): %d", r);
}

/* Wait for one completion on s->in (serving s->tx too), the binding's way. */
static int wait_lfpoll(struct side *s, uint64_t *wr_id)
{
	struct lfp_fid *f[2] = { &s->vin->fid, s->vtx ? &s->vtx->fid : NULL };
	struct pollfd pfd[2];
	int r, n = s->vtx ? 2 : 1;

	for (;;) {
		r = read_lfpoll(s, wr_id);
		if (r)
			return r < 0 ? -1 : 0;
		if (s->vtx && drain_tx_lfpoll(s))
			return -1;
		if (lfp_trywait(f, (size_t)n) == 0) {
			pfd[0].fd = s->wfd_in;
			pfd[1].fd = s->wfd_tx;
			pfd[0].events = pfd[1].events = POLLIN;
			pfd[0].revents = pfd[1].revents = 0;
			if (poll(pfd, (nfds_t)n, 5000) == 0)
				return bench_fail("lfpoll: no wake in 5 s (lost wakeup)");
		}
		if (bench_failed())
			return -1;
	}
}

/* ------------------------------------------------------------ raw */

/* One completion of cq (extended when x): 1, 0, or -1. */
static int poll_raw(struct ibv_cq *cq, struct ibv_cq_ex *x, uint64_t *wr_id)
{
	struct ibv_poll_cq_attr pa;
	struct ibv_wc wc;
	uint64_t ts;
	int r;

	if (!x) {
		r = ibv_poll_cq(cq, 1, &wc);
		if (r == 1)
			*wr_id = wc.wr_id;
		return r < 0 ? bench_fail("ibv_poll_cq: %d", r) : r;
	}
	memset(&pa, 0, sizeof(pa));
	r = ibv_start_poll(x, &pa);
	if (r == ENOENT)
		return 0;
	if (r)
		return bench_fail("ibv_start_poll: %d", r);
	*wr_id = x->wr_id;
	ts = ibv_wc_read_completion_ts(x);
	ibv_end_poll(x);
	if (ts != *wr_id + 1)
		return bench_fail("raw: timestamp %llu for wr_id %llu",
		                  (unsigned long long)ts, (unsigned long long)*wr_id);
	return 1;
}

/* The server's send completions, in order; 0 or -1. */
static int drain_tx_raw(struct side *s)
{
	uint64_t id = 0;
	int r;

	while ((r = poll_raw(s->tx, NULL, &id)) == 1)
		if (id != s->tx_next++)
			return bench_fail("raw: send CQE %llu out of order",
			                  (unsigned long long)id);
	return r < 0 ? -1 : 0;
}

/* The same with libibverbs directly: poll, arm, poll, sleep, get, ack. */
static int wait_raw(struct side *s, uint64_t *wr_id)
{
	struct pollfd pfd;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int r;

	for (;;) {
		r = poll_raw(s->in, s->inx, wr_id);
		if (r)
			return r < 0 ? -1 : 0;
		if (s->tx && drain_tx_raw(s))
			return -1;
		if (ibv_req_notify_cq(s->in, 0) || (s->tx && ibv_req_notify_cq(s->tx, 0)))
			return bench_fail("ibv_req_notify_cq");
		r = poll_raw(s->in, s->inx, wr_id);
		if (r)
			return r < 0 ? -1 : 0;
		if (s->tx && drain_tx_raw(s))
			return -1;
		pfd.fd = s->ch_in->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 5000) == 0)
			return bench_fail("raw: no wake in 5 s");
		/* Acked on the CQ each event names. */
		while (ibv_get_cq_event(s->ch_in, &ev_cq, &ev_ctx) == 0)
			ibv_ack_cq_events(ev_cq, 1);
		if (bench_failed())
			return -1;
	}
}

/* ------------------------------------------------------------ the run */

static void *side_main(void *arg)
{
	struct side *s = arg;
	uint64_t i, got = 0;

	for (i = 0; i < s->max; i++) {
		if (s->first && ((i & 63) == 0) &&
		    (bench_now_ns() - s->t0 > s->budget || bench_failed())) {
			/* The pinger decides when to stop: it sends a last
			 * marker so the ponger returns too. */
			push(s->out, UINT64_MAX - 1);
			break;
		}
		if (s->first && push(s->out, i)) {
			bench_fail("push");
			break;
		}
		if ((s->raw ? wait_raw(s, &got) : wait_lfpoll(s, &got)) < 0)
			break;
		if (got == UINT64_MAX - 1)
			break;
		if (got != i) {
			bench_fail("round trip %llu answered %llu",
			           (unsigned long long)i, (unsigned long long)got);
			break;
		}
		/* The server answers, then its own send completes. */
		if (!s->first && (push(s->out, i) || (s->tx && push(s->tx, i)))) {
			bench_fail("push");
			break;
		}
		s->items = i + 1;
	}
	if (s->first && i == s->max)
		push(s->out, UINT64_MAX - 1);
	return NULL;
}

static int rt_open(struct rt *t, int i, struct ibv_comp_channel *ch)
{
	struct lfp_verbs_cq_ex_attr a;
	struct ibv_cq_ex *x = NULL;
	int ret;

	memset(&a, 0, sizeof(a));
	a.cq.ack_batch = 16;
	a.cq.wait_obj = LFP_WAIT_FD;
	a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	if (t->shape == EX && i < 2) {
		x = vf_cq_ex_create(t->ctx, ch, NULL, 1024, a.wc_flags);
		t->cq[i] = x ? ibv_cq_ex_to_cq(x) : NULL;
	} else {
		t->cq[i] = vf_cq_create(t->ctx, ch, NULL, 1024);
	}
	if (!t->cq[i])
		return bench_fail("fake CQ");
	if (t->raw)
		return 0;
	ret = x ? lfp_verbs_cq_ex_open(x, ch, &a, &t->v[i], NULL) :
	          lfp_verbs_cq_open(t->cq[i], ch, &a.cq, &t->v[i], NULL);
	return ret ? bench_fail("lfp_verbs_cq_open: %d", ret) : 0;
}

static int rt_setup(void *arg)
{
	struct rt *t = arg;
	int i;

	t->ctx = vf_ctx_create();
	if (!t->ctx)
		return bench_fail("vf_ctx_create");
	for (i = 0; i < 2; i++) {
		t->ch[i] = vf_channel_create(t->ctx);
		if (!t->ch[i])
			return bench_fail("fake channel");
		if (t->raw)
			vf_fd_set_nonblock(t->ch[i]->fd, 1);
		if (rt_open(t, i, t->ch[i]))
			return -1;
	}
	/* The server's send CQ shares its receive CQ's channel. */
	if (t->shape == SHARED && rt_open(t, 2, t->ch[0]))
		return -1;
	return 0;
}

static void rt_teardown(void *arg)
{
	struct rt *t = arg;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int i;

	for (i = 0; i < 3; i++)
		if (t->v[i])
			lfp_verbs_cq_close(t->v[i]);
	for (i = 0; i < 2; i++)
		if (t->raw && t->ch[i])
			while (ibv_get_cq_event(t->ch[i], &ev_cq, &ev_ctx) == 0)
				ibv_ack_cq_events(ev_cq, 1);
	for (i = 0; i < 3; i++)
		if (t->cq[i])
			vf_cq_destroy(t->cq[i], 2000);
	for (i = 0; i < 2; i++)
		if (t->ch[i])
			ibv_destroy_comp_channel(t->ch[i]);
	vf_ctx_destroy(t->ctx);
	memset(t->v, 0, sizeof(t->v));
	memset(t->cq, 0, sizeof(t->cq));
	memset(t->ch, 0, sizeof(t->ch));
}

/* What a round leaves behind (the stop marker, a last send CQE): read. */
static void rt_drain(struct rt *t)
{
	struct lfp_verbs_wc_ex e;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 3; i++) {
		if (!t->cq[i])
			continue;
		if (t->v[i] && t->shape == EX && i < 2)
			while (lfp_verbs_cq_ex_read(t->v[i], &e, 1) > 0)
				;
		else if (t->v[i])
			while (lfp_verbs_cq_read(t->v[i], &wc, 1) > 0)
				;
		else
			while (ibv_poll_cq(t->cq[i], 1, &wc) > 0)
				;
	}
}

static int rt_run(void *arg, struct bench_round *r)
{
	struct rt *t = arg;
	void *args[2];
	uint64_t ns;
	int i;

	memset(t->s, 0, sizeof(t->s));
	for (i = 0; i < 2; i++) {
		/* Side 0 pings and waits on CQ 1; side 1 waits on CQ 0. */
		struct side *s = &t->s[i];

		s->in = t->cq[1 - i];
		s->out = t->cq[i];
		s->ch_in = t->ch[1 - i];
		s->vin = t->v[1 - i];
		s->raw = t->raw;
		s->ex = t->shape == EX;
		s->inx = s->ex && t->raw ? (struct ibv_cq_ex *)(void *)s->in : NULL;
		if (s->vin && lfp_control(&s->vin->fid, LFP_GETWAIT, &s->wfd_in))
			return bench_fail("LFP_GETWAIT");
	}
	t->s[0].first = 1;
	if (t->shape == SHARED) {
		t->s[1].tx = t->cq[2];
		t->s[1].vtx = t->v[2];
		if (t->v[2] && lfp_control(&t->v[2]->fid, LFP_GETWAIT, &t->s[1].wfd_tx))
			return bench_fail("LFP_GETWAIT");
	}
	t->s[0].max = t->s[1].max = r->max_items ? r->max_items : UINT64_MAX;
	t->s[0].budget = r->budget_ns ? r->budget_ns : UINT64_MAX;
	t->s[0].t0 = bench_now_ns();
	args[0] = &t->s[0];
	args[1] = &t->s[1];
	ns = bench_threads(2, side_main, args, NULL);
	rt_drain(t);
	r->items = t->s[0].items;
	r->ns = ns;
	return bench_failed() ? -1 : 0;
}

static void run_shape(enum shape shape, const char *name, const char *label,
                      const char *skip)
{
	static struct rt lf[3], raw[3];
	struct bench_impl impls[2];
	struct bench_target targets[] = {
		{ "raw_ibv", BENCH_AT_MOST(1.1), NULL, NULL }
	};
	struct bench_case c;

	lf[shape].shape = raw[shape].shape = shape;
	raw[shape].raw = 1;
	memset(impls, 0, sizeof(impls));
	impls[0].name = "lfpoll";
	impls[0].arg = &lf[shape];
	impls[1].name = "raw_ibv";
	impls[1].arg = &raw[shape];
	for (int i = 0; i < 2; i++) {
		impls[i].run = rt_run;
		impls[i].setup = rt_setup;
		impls[i].teardown = rt_teardown;
		impls[i].skip = skip;
	}
	memset(&c, 0, sizeof(c));
	c.name = name;
	c.label = label;
	c.threads = 2;
	c.impls = impls;
	c.n_impls = BENCH_LEN(impls);
	c.targets = targets;
	c.n_targets = BENCH_LEN(targets);
	bench_case_run(&c);
}

int main(int argc, char **argv)
{
	const char *why, *skip = NULL;

	bench_init("verbs", argc, argv);
	why = vf_priv_canary();
	if (why) {
		skip = "the verbs test context cannot drive this libibverbs";
		fprintf(stderr, "verbs: %s\n", why);
	}
	run_shape(RTT, "verbs/rtt",
	          "blocking round trip through 2 fake CQs on 2 CPUs: binding "
	          "(trywait + poll + read) vs raw ibv_req_notify_cq/"
	          "ibv_get_cq_event/ibv_poll_cq (target <= 1.1x: ratio >= 1/1.1)", skip);
	run_shape(SHARED, "verbs/shared",
	          "the same, the ponger a server whose receive and send CQs share "
	          "one channel (a send CQE per round trip, read in the same loop) "
	          "(target <= 1.1x: ratio >= 1/1.1)", skip);
	run_shape(EX, "verbs/ex",
	          "the rtt round trip with extended CQs and completion timestamps: "
	          "lfp_verbs_cq_ex_read vs ibv_start_poll/ibv_wc_read_completion_ts/"
	          "ibv_end_poll (target <= 1.1x: ratio >= 1/1.1)", skip);
	return bench_finish();
}
