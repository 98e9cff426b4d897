/*
 * bench/rtt.c: the blocking round trip through lfpoll's EQ against
 * libfabric's EQ and the floors of a blocking wake (bench/peer_wake.h),
 * between the same two threads on two CPUs in one run.
 *
 * Cases (round-robin rounds, see harness.h; the records keep the EQ
 * benchmark's name, "eq"):
 *   eq/rtt-p50    blocking round trip: sread ping-pong between two EQs on
 *                 two threads on different CPUs, for lfpoll FD (the
 *                 subject), MUTEX_COND and UNSPEC and libfabric udp/tcp with
 *                 FI_WAIT_FD and FI_WAIT_UNSPEC; ns/item is each round's
 *                 median round trip.  Floors between the same two threads in
 *                 the same run: raw eventfd + poll, futex, condvar
 *   eq/rtt-p99    the same, ns/item is each round's 99th percentile
 *   eq/rtt-block-p50, -p99   the same with lfpoll as built with
 *                 LFP_SPIN_COUNT=0 (no bounded spin before it arms and
 *                 sleeps): in a tight ping-pong the default spin catches
 *                 nearly every reply, so eq/rtt-p* hardly sleeps; these two
 *                 time lfpoll's wake path itself
 *
 * The ping-pongs check that every reply carries the sequence number just
 * sent; a lost wakeup is reported as a stall after 10 s.
 */
#define _GNU_SOURCE

/*
 * LFP_SPIN_COUNT is lfpoll's documented knob (lfpoll(3)): how many times a
 * blocking call re-checks before it arms and sleeps, default 128.  It is
 * routed through a variable so that one build times lfp_eq_sread both as
 * shipped and as built with -DLFP_SPIN_COUNT=0 (eq/rtt-block-*).
 */
#ifdef LFP_SPIN_COUNT
enum { BENCH_SPIN_DEFAULT = LFP_SPIN_COUNT }; /* the value given at build */
#  undef LFP_SPIN_COUNT
#else
enum { BENCH_SPIN_DEFAULT = 128 }; /* lfpoll's default, docs/man/lfpoll.3.md */
#endif
static int bench_spin_count = BENCH_SPIN_DEFAULT;
#define LFP_SPIN_COUNT bench_spin_count

#include "eq_queue.h"
#include "peer_wake.h"

#include <stdio.h>
#include <stdlib.h>

#define RTT_TIMEOUT   1000           /* ms, per blocking call; loops on expiry */
#define RTT_MAX_LAT   (1u << 20)     /* latency samples kept per round */
#define STOP_SEQ      UINT64_MAX

static struct fab fab_udp = FAB_UDP, fab_tcp = FAB_TCP;

/* ------------------------------------------------------------ ping-pong */

/*
 * Two threads, two channels: A (CPU 0) sends n on channel 0 and blocks for
 * the reply on channel 1; B (CPU 1) blocks on channel 0 and sends what it
 * got back on channel 1.  A times each round trip.  Channels are EQs read
 * with sread, or the floors: an eventfd + poll, a futex word, a condvar.
 * Every blocking call has a RTT_TIMEOUT ms timeout so that a lost wakeup
 * shows as a stall, not a hang.
 */
/* One direction of a ping-pong: an EQ, or one of the floors' objects. */
struct chan {
	struct q q;
	struct wake_chan w;
} __attribute__((aligned(128)));

/* The floor a kind stands for (K_EFD, K_FUTEX, K_COND). */
static enum wake_kind wake_of(enum kind k)
{
	return k == K_EFD ? WAKE_EFD : k == K_FUTEX ? WAKE_FUTEX : WAKE_COND;
}

struct rctx {
	const struct rtt_def *d;
	int pct;                /* 50 or 99: what a round reports */
	int nospin;             /* lfpoll: LFP_SPIN_COUNT 0 (no spin before sleeping) */
	sr_fn sread;
	wr_fn write;
	struct chan ch[2];
	uint64_t msgs, sigs;    /* lfpoll: messages and producer signals */
	int failed;
	uint32_t *lat;
	uint64_t nlat;
	const struct bench_round *round;
} __attribute__((aligned(128)));

struct rtt_def {
	const char *name;
	enum kind kind;
	struct fab *fab;
	enum wobj wobj;
};

static const struct rtt_def rtts[] = {
	{ "lfpoll_fd", K_LFP, NULL, WO_FD },
	{ "lfpoll_mcond", K_LFP, NULL, WO_MCOND },
	{ "lfpoll_unsp", K_LFP, NULL, WO_UNSPEC },
	{ "fi_udp_fd", K_FI, &fab_udp, WO_FD },
	{ "fi_udp_unsp", K_FI, &fab_udp, WO_UNSPEC },
	{ "fi_tcp_fd", K_FI, &fab_tcp, WO_FD },
	{ "fi_tcp_unsp", K_FI, &fab_tcp, WO_UNSPEC },
	{ "eventfd_poll", K_EFD, NULL, WO_NONE },
	{ "futex", K_FUTEX, NULL, WO_NONE },
	{ "condvar", K_COND, NULL, WO_NONE },
};
#define NRTT BENCH_LEN(rtts)

static struct rctx rctxs[4][NRTT]; /* [rtt case][impl] */

static int is_floor(const struct rctx *c)
{
	return c->d->kind == K_EFD || c->d->kind == K_FUTEX ||
	       c->d->kind == K_COND;
}

static int ch_send(struct rctx *c, int ch, uint64_t v)
{
	struct chan *k = &c->ch[ch];
	ent_t e;
	int ret;

	if (is_floor(c))
		return wake_send(&k->w, wake_of(c->d->kind), v);
	ent_make(&e, (uint32_t)ch, v);
	ret = c->write(&k->q, &e);
	if (ret)
		return bench_fail("ping-pong write: %s",
		                  ret > 0 ? "full" : err_str(ret));
	return 0;
}

/* One blocking receive: 1 with *v, 0 when the timeout expired, or < 0. */
static int ch_recv_once(struct rctx *c, int ch, uint64_t *v)
{
	struct chan *k = &c->ch[ch];
	ent_t e;
	int ret;

	if (is_floor(c))
		return wake_recv_once(&k->w, wake_of(c->d->kind), v,
		                      RTT_TIMEOUT);
	ret = c->sread(&k->q, &e, RTT_TIMEOUT);
	if (ret == 1) {
		if (ent_writer(&e, 2) != ch)
			return bench_fail("ping-pong: torn event");
		*v = e.data;
	} else if (ret < 0) {
		return bench_fail("sread: %s", err_str(ret));
	}
	return ret;
}

/* Block until a message arrives; < 0 on a failure anywhere or a stall. */
static int ch_recv(struct rctx *c, int ch, uint64_t *v)
{
	uint64_t t0 = 0;
	int ret;

	for (;;) {
		ret = ch_recv_once(c, ch, v);
		if (ret)
			return ret < 0 ? -1 : 0;
		if (bench_failed())
			return -1;
		if (!t0) {
			t0 = bench_now_ns();
		} else if (bench_now_ns() - t0 > 10ull * 1000000000u) {
			return bench_fail("no message for 10 s on channel %d "
			                  "(lost wakeup?)", ch);
		}
	}
}

static void *pinger(void *arg)
{
	struct rctx *c = arg;
	const struct bench_round *r = c->round;
	uint64_t n = 0, t0, t, v;

	t0 = bench_now_ns();
	while (n < RTT_MAX_LAT && !bench_round_over(r, n, t0)) {
		t = bench_now_ns();
		if (ch_send(c, 0, n) || ch_recv(c, 1, &v))
			break;
		t = bench_now_ns() - t;
		if (v != n) {
			bench_fail("round trip %llu came back as %llu",
			           (unsigned long long)n, (unsigned long long)v);
			break;
		}
		c->lat[n++] = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
	}
	c->nlat = n;
	ch_send(c, 0, STOP_SEQ);
	return NULL;
}

static void *ponger(void *arg)
{
	struct rctx *c = arg;
	uint64_t v;

	for (;;) {
		if (ch_recv(c, 0, &v) || v == STOP_SEQ)
			break;
		if (ch_send(c, 1, v))
			break;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static uint64_t lfp_signals(struct rctx *c)
{
#ifdef LFP_STATS
	if (c->d->kind == K_LFP)
		return lfp__eq_stat_signals(c->ch[0].q.leq) +
		       lfp__eq_stat_signals(c->ch[1].q.leq);
#else
	(void)c;
#endif
	return 0;
}

struct rtt_thr {
	void *(*fn)(void *);
	struct rctx *c;
};

static void *rtt_thread(void *p)
{
	struct rtt_thr *t = p;

	return t->fn(t->c);
}

static int rtt_run(void *arg, struct bench_round *r)
{
	struct rctx *c = arg;
	struct rtt_thr t[2] = { { pinger, c }, { ponger, c } };
	void *args[2] = { &t[0], &t[1] };
	static const int cpus[2] = { 0, 1 };
	uint64_t s0, n, rank;

	c->round = r;
	c->nlat = 0;
	/* Before the threads start: they only read it. */
	bench_spin_count = c->nospin ? 0 : BENCH_SPIN_DEFAULT;
	s0 = lfp_signals(c);
	bench_threads(2, rtt_thread, args, cpus);
	bench_spin_count = BENCH_SPIN_DEFAULT;
	if (bench_failed()) {
		c->failed = 1;
		return -1;
	}
	n = c->nlat;
	c->msgs += 2 * n + 1;   /* + the stop message */
	c->sigs += lfp_signals(c) - s0;
	if (!n)
		return bench_fail("no round trip completed");
	/* Nearest rank: the smallest sample with pct % of them at or below. */
	qsort(c->lat, n, sizeof(c->lat[0]), cmp_u32);
	rank = (n * (uint64_t)c->pct + 99) / 100;
	r->items = n;
	r->ns = (uint64_t)c->lat[rank ? rank - 1 : 0] * n;
	return 0;
}

static void rctx_teardown(void *arg)
{
	struct rctx *c = arg;
	int i;

	for (i = 0; i < 2; i++) {
		q_close(&c->ch[i].q);
		if (is_floor(c))
			wake_close(&c->ch[i].w, wake_of(c->d->kind));
	}
	free(c->lat);
	c->lat = NULL;
}

static int rctx_setup(void *arg)
{
	struct rctx *c = arg;
	int i, ret = 0;

	memset(c->ch, 0, sizeof(c->ch));
	c->msgs = c->sigs = 0;
	c->failed = 0;
	c->sread = NULL;
	c->write = NULL;
	if (c->d->kind == K_LFP) {
		c->sread = op_lfp_sread;
		c->write = op_lfp_write;
	}
#ifdef HAVE_FABRIC
	if (c->d->kind == K_FI) {
		c->sread = op_fi_sread;
		c->write = op_fi_write;
	}
#endif
	/* Both floors' channels first, so that teardown can close both. */
	for (i = 0; i < 2 && is_floor(c); i++)
		ret |= wake_open(&c->ch[i].w, wake_of(c->d->kind));
	c->lat = malloc(RTT_MAX_LAT * sizeof(c->lat[0]));
	if (ret || !c->lat)
		goto fail;
	for (i = 0; i < 2 && !is_floor(c); i++)
		if (q_open(&c->ch[i].q, c->d->kind, c->d->fab, c->d->wobj, 0))
			goto fail;
	return 0;
fail:
	if (!bench_failed())
		bench_fail("out of memory");
	rctx_teardown(c);
	return -1;
}

/* lfpoll FD within 10 % of the raw eventfd + poll floor (lower is better:
 * the harness ratio is floor ns / lfpoll ns, so >= 1 / 1.1). */
static const struct bench_target t_rtt[] = {
	{ "eventfd_poll", BENCH_AT_MOST(1.1), NULL, NULL }
};
static const struct rtt_case {
	const char *name, *label;
	int pct, nospin;
	const struct bench_target *targets;
	size_t n_targets;
} rtt_cases[] = {
	{ "eq/rtt-p50", "blocking round trip: sread ping-pong on 2 EQs between 2 "
	  "threads on 2 CPUs, ns/item = the round's median (unsp = "
	  "WAIT_UNSPEC, mcond = WAIT_MUTEX_COND; floors: eventfd_poll, futex, "
	  "condvar)", 50, 0, t_rtt, BENCH_LEN(t_rtt) },
	{ "eq/rtt-p99", "as eq/rtt-p50, ns/item = the round's 99th percentile",
	  99, 0, NULL, 0 },
	{ "eq/rtt-block-p50", "as eq/rtt-p50 with lfpoll's LFP_SPIN_COUNT = 0 "
	  "(every wait arms and sleeps: the wake path), ns/item = median",
	  50, 1, t_rtt, BENCH_LEN(t_rtt) },
	{ "eq/rtt-block-p99", "as eq/rtt-block-p50, ns/item = the round's 99th "
	  "percentile", 99, 1, NULL, 0 },
};
#define NRTTCASE BENCH_LEN(rtt_cases)
_Static_assert(BENCH_LEN(rtt_cases) == BENCH_LEN(rctxs),
               "one row of rctxs per ping-pong case");

static void run_rtt_case(size_t which)
{
	const struct rtt_case *rc = &rtt_cases[which];
	struct bench_impl bi[NRTT];
	struct bench_case bc = {
		.name = rc->name,
		.label = rc->label,
		.threads = 2,
		.impls = bi,
		.n_impls = NRTT,
		.targets = rc->targets,
		.n_targets = rc->n_targets,
	};
	size_t ii;
	int any = 0;

	for (ii = 0; ii < NRTT; ii++) {
		struct rctx *c = &rctxs[which][ii];

		c->d = &rtts[ii];
		c->pct = rc->pct;
		c->nospin = rc->nospin;
		c->msgs = c->sigs = 0;
		bi[ii] = (struct bench_impl){
			.name = rtts[ii].name,
			.skip = rtts[ii].fab ? rtts[ii].fab->skip : NULL,
			.arg = c,
			.run = rtt_run,
			.setup = rctx_setup,
			.teardown = rctx_teardown,
		};
	}
	bench_case_run(&bc);
	for (ii = 0; ii < NRTT; ii++) {
		struct rctx *c = &rctxs[which][ii];

		if (c->d->kind != K_LFP || !c->msgs || c->failed)
			continue;
		if (!any)
			printf("# %s: lfpoll wakeups (producer system calls) "
			       "per message:", rc->name);
		printf("%s %s %.3f", any ? "," : "", c->d->name,
		       (double)c->sigs / (double)c->msgs);
		any = 1;
	}
	if (any)
		printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t ci;
	int status;

	bench_init("eq", argc, argv);
	fab_open_eq(&fab_udp, &fab_tcp);
	for (ci = 0; ci < NRTTCASE; ci++)
		run_rtt_case(ci);
	status = bench_finish();
	fab_close_eq(&fab_udp, &fab_tcp);
	return status;
}
