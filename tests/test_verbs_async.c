/*
 * tests/test_verbs_async.c: a device's async events through the verbs
 * binding, in the order the device sent them (lfp_verbs(3), "Async
 * events"; docs/verbs.md), over the REAL libibverbs on the device-free
 * context of support/vf/vf.h.
 *
 * What is promised and checked here:
 *   - a reader that follows the documented loop (lfp_eq_read until
 *     -EAGAIN, lfp_eq_readerr on -LFP_EAVAIL) sees every event in device
 *     order, across classes: fixed sequences, a port-state tracker, and
 *     seeded random sequences of every type, pushed, moved and read in
 *     random batches;
 *   - each entry's err gives its class (0, EIO, ENODEV for DEVICE_FATAL);
 *   - the no-loss rules keep that order: a full EQ with back-pressure
 *     holds one event and the fd the rest; without it the EQ overruns,
 *     what it queued comes out in order, then its overrun entry.
 * Each test ends with finish(): no fake object is left alive.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "verbs/suite.h"

TestSuite(verbs_order, .init = need_fake, .timeout = 60);

/* A context, its affiliated objects, an EQ and the async object. */
struct orig {
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_wq *wq;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
};

static void orig_up(struct orig *o, size_t size, uint64_t flags)
{
	struct lfp_eq_attr attr = { .size = size, .flags = flags,
				    .wait_obj = LFP_WAIT_FD };

	memset(o, 0, sizeof(*o));
	o->ctx = vf_ctx_create();
	cr_assert_not_null(o->ctx);
	o->cq = vf_cq_create(o->ctx, NULL, NULL, 1);
	o->qp = vf_qp_create(o->ctx);
	o->srq = vf_srq_create(o->ctx);
	o->wq = vf_wq_create(o->ctx);
	cr_assert(o->cq && o->qp && o->srq && o->wq);
	cr_assert_eq(lfp_eq_open(&attr, &o->eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(o->ctx, o->eq, &o->va, NULL), 0);
}

static void orig_down(struct orig *o)
{
	cr_assert_eq(lfp_verbs_async_close(o->va), 0);
	cr_assert_eq(lfp_eq_close(o->eq), 0);
	cr_assert_eq(vf_cq_destroy(o->cq, 1000), 0, "an async event left unacked");
	cr_assert_eq(vf_qp_destroy(o->qp, 1000), 0, "an async event left unacked");
	cr_assert_eq(vf_srq_destroy(o->srq, 1000), 0, "an async event left unacked");
	cr_assert_eq(vf_wq_destroy(o->wq, 1000), 0, "an async event left unacked");
	finish(o->ctx);
}

/* What the device sent: a type and the element it names. */
struct sent {
	int type;
	uint64_t element;
};

/* The element the kernel record of type carries in o (a port otherwise). */
static uint64_t element_of(struct orig *o, int type, int port)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return VF_ELEM(o->cq);
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		return VF_ELEM(o->qp);
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		return VF_ELEM(o->srq);
	case IBV_EVENT_WQ_FATAL:
		return VF_ELEM(o->wq);
	case IBV_EVENT_DEVICE_FATAL:
		return 0;
	default:
		return (uint64_t)port;
	}
}

/* The class lfp_verbs(3) gives each type. */
static int class_of(int type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR: case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_PORT_ERR: case IBV_EVENT_SRQ_ERR: case IBV_EVENT_WQ_FATAL:
		return EIO;
	case IBV_EVENT_DEVICE_FATAL:
		return ENODEV;
	default:
		return 0;
	}
}

static uint64_t element_read(const struct lfp_verbs_async_entry *e)
{
	switch ((int)e->type) {
	case IBV_EVENT_CQ_ERR:
		return VF_ELEM(e->element.cq);
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		return VF_ELEM(e->element.srq);
	case IBV_EVENT_WQ_FATAL:
		return VF_ELEM(e->element.wq);
	case IBV_EVENT_DEVICE_FATAL:
		return 0;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		return VF_ELEM(e->element.qp);
	default:
		return (uint64_t)e->element.port_num;
	}
}

static void send_event(struct orig *o, struct sent *s, int type, int port)
{
	s->type = type;
	s->element = element_of(o, type, port);
	cr_assert_eq(vf_async_push(o->ctx, (enum ibv_event_type)type, s->element), 0);
}

/*
 * The documented reader's loop: lfp_eq_read until -EAGAIN, lfp_eq_readerr
 * on -LFP_EAVAIL.  Appends what it read to got (at most max in all),
 * returns how many, and sets *overrun when the EQ reported its overrun.
 */
static int read_loop(struct lfp_eq *eq, struct lfp_verbs_async_entry *got,
		     int have, int max, int *overrun)
{
	struct lfp_eq_err_entry err;
	uint32_t code;
	ssize_t r;

	for (;;) {
		cr_assert_lt(have, max, "more events than the device sent");
		r = lfp_eq_read(eq, &code, &got[have], sizeof(got[have]), 0);
		if (r == -EAGAIN)
			return have;
		if (r == -LFP_EAVAIL) {
			memset(&err, 0, sizeof(err));
			cr_assert_eq(lfp_eq_readerr(eq, &err, 0), (ssize_t)sizeof(err));
			cr_assert_eq(err.err, LFP_EOVERRUN,
				     "the binding queued an error entry (err %d, "
				     "prov_errno %d): its events are not in "
				     "device order", err.err, err.prov_errno);
			*overrun = 1;
			return have;
		}
		cr_assert_eq(r, (ssize_t)sizeof(got[have]), "lfp_eq_read %zd", r);
		cr_assert_eq(code, LFP_VERBS_ASYNC);
		have++;
	}
}

static void expect_order(const struct sent *sent, int n,
			 const struct lfp_verbs_async_entry *got, int have)
{
	int i;

	cr_assert_eq(have, n, "read %d of %d events", have, n);
	for (i = 0; i < n; i++) {
		cr_assert_eq((int)got[i].type, sent[i].type,
			     "event %d: %s, the device sent %s", i,
			     lfp_verbs_event_str(got[i].type),
			     lfp_verbs_event_str((enum ibv_event_type)sent[i].type));
		cr_assert_eq(element_read(&got[i]), sent[i].element,
			     "event %d (%s): another element", i,
			     lfp_verbs_event_str(got[i].type));
		cr_assert_eq(got[i].err, class_of(sent[i].type),
			     "event %d (%s): err %d", i,
			     lfp_verbs_event_str(got[i].type), got[i].err);
	}
}

Test(verbs_order, port_events_of_both_classes_read_back_in_device_order)
{
	static const int seq[] = {
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR, IBV_EVENT_LID_CHANGE,
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE,
		IBV_EVENT_PORT_ERR,
	};
	struct lfp_verbs_async_entry got[16];
	struct sent sent[16];
	int n = (int)(sizeof(seq) / sizeof(seq[0])), i, have, overrun = 0, up = 0;
	struct orig o;

	orig_up(&o, 64, 0);
	for (i = 0; i < n; i++)
		send_event(&o, &sent[i], seq[i], 1);
	cr_assert_eq(lfp_verbs_async_progress(o.va), n);
	have = read_loop(o.eq, got, 0, 16, &overrun);
	expect_order(sent, n, got, have);
	/* A port-state tracker following the loop ends where the device is. */
	for (i = 0; i < have; i++)
		if (got[i].type == IBV_EVENT_PORT_ACTIVE || got[i].type == IBV_EVENT_PORT_ERR)
			up = got[i].type == IBV_EVENT_PORT_ACTIVE;
	cr_assert_eq(up, 0, "the tracker thinks the port is up; the device's "
		     "last word was PORT_ERR");
	cr_assert_not(overrun);
	orig_down(&o);
}

/* splitmix64: a small seedable generator. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Every known type but DEVICE_FATAL, and two the binding does not know. */
static const int any_type[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 57,
};

/*
 * A seeded random sequence, pushed, moved and read in random batches into
 * an EQ of size (with back-pressure when bp): every event, in device order.
 */
static void random_order(uint64_t seed, size_t size, int bp)
{
	struct lfp_verbs_async_entry got[200];
	struct sent sent[200];
	int n = 20 + (int)(rnd(&seed) % 150), pushed = 0, have = 0;
	int overrun = 0, k, r;
	struct orig o;

	orig_up(&o, size, bp ? LFP_EQ_BACKPRESSURE : 0);
	while (have < n) {
		k = (int)(rnd(&seed) % 8);
		for (; k > 0 && pushed < n; k--, pushed++)
			send_event(&o, &sent[pushed],
				   any_type[rnd(&seed) %
					    (sizeof(any_type) / sizeof(any_type[0]))],
				   1 + (int)(rnd(&seed) % 4));
		r = lfp_verbs_async_progress(o.va);
		cr_assert_geq(r, 0, "progress %d (seed %llu)", r, (unsigned long long)seed);
		if (rnd(&seed) % 2 || pushed == n)
			have = read_loop(o.eq, got, have, n + 1, &overrun);
		cr_assert_not(overrun, "an EQ of %zu overran", size);
	}
	expect_order(sent, n, got, have);
	cr_assert_eq(lfp_verbs_async_progress(o.va), 0);
	orig_down(&o);
}

Test(verbs_order, random_sequences_of_every_type_read_back_in_device_order)
{
	uint64_t seed;

	for (seed = 1; seed <= 30; seed++)
		random_order(seed, 256, 0);
}

Test(verbs_order, random_sequences_through_a_full_backpressure_eq_keep_device_order)
{
	uint64_t seed;

	for (seed = 100; seed <= 130; seed++)
		random_order(seed, 2 + seed % 3 * 2, 1);
}

Test(verbs_order, a_full_backpressure_eq_holds_one_event_and_the_fd_the_rest)
{
	static const int seq[] = {
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_QP_FATAL, IBV_EVENT_COMM_EST,
		IBV_EVENT_PORT_ERR, IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_CQ_ERR,
	};
	struct lfp_verbs_async_entry got[8];
	struct sent sent[8];
	int n = (int)(sizeof(seq) / sizeof(seq[0])), i, have = 0, overrun = 0;
	struct orig o;

	orig_up(&o, 2, LFP_EQ_BACKPRESSURE);
	for (i = 0; i < n; i++)
		send_event(&o, &sent[i], seq[i], 2);
	cr_assert_eq(lfp_verbs_async_progress(o.va), 2, "two fit");
	cr_assert_eq(vf_fd_pending(o.ctx->async_fd), 16 * (n - 3),
		     "one event held, the rest in the fd");
	cr_assert_eq(lfp_verbs_async_close(o.va), -EBUSY, "an event is held");
	/* Each round makes room for two, and progress fills it. */
	while (have < n) {
		have = read_loop(o.eq, got, have, 8, &overrun);
		cr_assert_eq(lfp_verbs_async_progress(o.va), have + 2 <= n ? 2 : n - have);
	}
	expect_order(sent, n, got, have);
	cr_assert_not(overrun);
	orig_down(&o);
}

Test(verbs_order, an_overrun_eq_gives_what_it_queued_in_order_then_its_overrun)
{
	static const int seq[] = {
		IBV_EVENT_QP_FATAL, IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR,
		IBV_EVENT_COMM_EST, IBV_EVENT_WQ_FATAL, IBV_EVENT_SRQ_ERR,
		IBV_EVENT_GID_CHANGE,
	};
	struct lfp_verbs_async_entry got[8];
	struct sent sent[8];
	int n = (int)(sizeof(seq) / sizeof(seq[0])), i, have, overrun = 0;
	struct orig o;

	orig_up(&o, 4, 0);
	for (i = 0; i < n; i++)
		send_event(&o, &sent[i], seq[i], 1);
	cr_assert_eq(lfp_verbs_async_progress(o.va), -LFP_EOVERRUN);
	cr_assert_eq(vf_fd_pending(o.ctx->async_fd), 0, "the rest read, acked, dropped");
	have = read_loop(o.eq, got, 0, 8, &overrun);
	cr_assert(overrun, "the EQ reports its overrun after what it queued");
	expect_order(sent, 4, got, have);
	/* A DEVICE_FATAL that meets the overrun still marks the device gone. */
	send_event(&o, &sent[0], IBV_EVENT_DEVICE_FATAL, 0);
	cr_assert_eq(lfp_verbs_async_progress(o.va), -ENODEV);
	orig_down(&o); /* every affiliated event was acked: destroys do not wait */
}

Test(verbs_order, device_fatal_comes_after_what_preceded_it_and_ends_the_reading)
{
	static const int seq[] = {
		IBV_EVENT_SM_CHANGE, IBV_EVENT_QP_ACCESS_ERR, IBV_EVENT_PORT_ERR,
		IBV_EVENT_DEVICE_FATAL, IBV_EVENT_PORT_ACTIVE,
	};
	struct lfp_verbs_async_entry got[8];
	struct sent sent[8];
	int i, have, overrun = 0;
	struct orig o;

	orig_up(&o, 64, 0);
	for (i = 0; i < 5; i++)
		send_event(&o, &sent[i], seq[i], 1);
	cr_assert_eq(lfp_verbs_async_progress(o.va), 4);
	cr_assert_eq(lfp_verbs_async_progress(o.va), -ENODEV);
	have = read_loop(o.eq, got, 0, 8, &overrun);
	expect_order(sent, 4, got, have);
	orig_down(&o);
}

/* ------------------------------------------------ lfp_verbs_async_sread */

TestSuite(verbs_async_sread, .init = need_fake, .timeout = 60);

static void expect_sread(struct orig *o, int type, int port, int timeout)
{
	struct lfp_verbs_async_entry e;
	uint32_t code = 0;
	ssize_t r;

	memset(&e, 0, sizeof(e));
	r = lfp_verbs_async_sread(o->va, &code, &e, sizeof(e), timeout, 0);
	cr_assert_eq(r, (ssize_t)sizeof(e), "sread %zd, want %s", r,
		     lfp_verbs_event_str((enum ibv_event_type)type));
	cr_assert_eq(code, LFP_VERBS_ASYNC);
	cr_assert_eq((int)e.type, type, "%s, want %s", lfp_verbs_event_str(e.type),
		     lfp_verbs_event_str((enum ibv_event_type)type));
	cr_assert_eq(e.element.port_num, port);
	cr_assert_eq(e.err, class_of(type));
}

Test(verbs_async_sread, arguments_and_an_eq_without_an_fd)
{
	struct lfp_eq_attr none = { .wait_obj = LFP_WAIT_NONE };
	struct lfp_verbs_async *va;
	struct lfp_verbs_async_entry e;
	struct lfp_eq *eq;
	uint32_t code;
	struct orig o;

	orig_up(&o, 16, 0);
	cr_assert_eq(lfp_verbs_async_sread(NULL, &code, &e, sizeof(e), 0, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_async_sread(o.va, NULL, &e, sizeof(e), 0, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, NULL, sizeof(e), 0, 0), -EINVAL);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 0, 2), -EINVAL,
		     "an unknown flag");
	orig_down(&o);

	/* An EQ with no wait object of its own has nothing to sleep on. */
	o.ctx = vf_ctx_create();
	cr_assert_eq(lfp_eq_open(&none, &eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(o.ctx, eq, &va, NULL), 0);
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(lfp_verbs_async_sread(va, &code, &e, sizeof(e), 0, 0), -ENOSYS);
	cr_assert_eq(lfp_verbs_async_progress(va), 1, "the event is still there");
	cr_assert_eq(lfp_verbs_async_close(va), 0);
	cr_assert_eq(lfp_eq_close(eq), 0);
	finish(o.ctx);
}

Test(verbs_async_sread, the_timeout_is_kept)
{
	struct lfp_verbs_async_entry e;
	uint32_t code;
	struct orig o;
	long t0, dt;

	orig_up(&o, 16, 0);
	t0 = now_ms();
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 0, 0), -EAGAIN);
	cr_assert_lt(now_ms() - t0, 1000, "timeout 0 does not block");
	t0 = now_ms();
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 80, 0), -EAGAIN);
	dt = now_ms() - t0;
	cr_assert_geq(dt, 80, "returned after %ld ms of an 80 ms timeout", dt);
	orig_down(&o);
}

Test(verbs_async_sread, reads_queued_events_in_device_order_and_peeks)
{
	static const int seq[] = {
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_PORT_ERR, IBV_EVENT_LID_CHANGE,
		IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE,
	};
	struct lfp_verbs_async_entry e;
	uint32_t code;
	struct orig o;
	int i;

	orig_up(&o, 16, 0);
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_SM_CHANGE, 3), 0);
	cr_assert_eq(lfp_verbs_async_progress(o.va), 1, "one already in the EQ");
	for (i = 0; i < 5; i++)
		cr_assert_eq(vf_async_push(o.ctx, (enum ibv_event_type)seq[i], 1 + i), 0);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 0, LFP_PEEK),
		     (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_SM_CHANGE, "a peek shows the head");
	expect_sread(&o, IBV_EVENT_SM_CHANGE, 3, 0);
	for (i = 0; i < 5; i++)
		expect_sread(&o, seq[i], 1 + i, i % 2 ? 0 : -1);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 0, 0), -EAGAIN);
	orig_down(&o);
}

struct later {
	struct orig *o;
	int delay_ms;
	int app;                     /* write to the EQ instead of the device */
};

static void *later_main(void *arg)
{
	struct later *l = arg;

	usleep((useconds_t)l->delay_ms * 1000);
	if (l->app)
		return (void *)(intptr_t)lfp_eq_write(l->o->eq, LFP_EVENT_USER, "x", 1, 0);
	return (void *)(intptr_t)vf_async_push(l->o->ctx, IBV_EVENT_PORT_ERR, 2);
}

/* Starts a thread that sends an event (the device's, or the
 * application's into the EQ with app) 100 ms from now. */
static void start_later(pthread_t *t, struct later *l, struct orig *o, int app)
{
	l->o = o;
	l->delay_ms = 100;
	l->app = app;
	cr_assert_eq(pthread_create(t, NULL, later_main, l), 0);
}

Test(verbs_async_sread, wakes_for_an_event_the_device_sends_while_it_sleeps)
{
	struct later l;
	pthread_t t;
	struct orig o;
	void *ret;

	orig_up(&o, 16, 0);
	start_later(&t, &l, &o, 0);
	/* No timeout: only the event can end it (else the suite's timeout). */
	expect_sread(&o, IBV_EVENT_PORT_ERR, 2, -1);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_null(ret);
	orig_down(&o);
}

Test(verbs_async_sread, wakes_for_an_event_another_thread_writes_to_the_eq)
{
	char buf[sizeof(struct lfp_verbs_async_entry)];
	struct later l;
	uint32_t code;
	pthread_t t;
	struct orig o;
	void *ret;

	orig_up(&o, 16, 0);
	start_later(&t, &l, &o, 1);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, buf, sizeof(buf), -1, 0), 1);
	cr_assert_eq(code, LFP_EVENT_USER);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_eq((intptr_t)ret, 1);
	orig_down(&o);
}

/* Several readers, one device: each event read once, each reader in order. */
#define READERS 4
#define EVENTS 400

struct sreader {
	struct orig *o;
	int got[EVENTS];
	int n;
	int ret;
};

static void *sreader_main(void *arg)
{
	struct sreader *r = arg;
	struct lfp_verbs_async_entry e;
	uint32_t code;
	ssize_t n;

	for (;;) {
		n = lfp_verbs_async_sread(r->o->va, &code, &e, sizeof(e), 10000, 0);
		if (n != (ssize_t)sizeof(e)) {
			r->ret = (int)n;
			return NULL;
		}
		if (e.type == IBV_EVENT_SM_CHANGE)
			return NULL; /* one stop event per reader */
		r->got[r->n++] = e.element.port_num;
	}
}

Test(verbs_async_sread, several_readers_each_get_distinct_events)
{
	static struct sreader rd[READERS];
	static unsigned char seen[EVENTS + 1];
	pthread_t t[READERS];
	struct orig o;
	int i, k;

	orig_up(&o, 64, LFP_EQ_BACKPRESSURE);
	memset(rd, 0, sizeof(rd));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < READERS; i++) {
		rd[i].o = &o;
		cr_assert_eq(pthread_create(&t[i], NULL, sreader_main, &rd[i]), 0);
	}
	for (k = 1; k <= EVENTS; k++) {
		cr_assert_eq(vf_async_push(o.ctx, k % 3 ? IBV_EVENT_PORT_ACTIVE :
					   IBV_EVENT_PORT_ERR, (uint64_t)k), 0);
		if (k % 16 == 0)
			usleep(200); /* let the readers sleep now and then */
	}
	for (i = 0; i < READERS; i++)
		cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_SM_CHANGE, 0), 0);
	for (i = 0; i < READERS; i++) {
		cr_assert_eq(pthread_join(t[i], NULL), 0);
		cr_assert_eq(rd[i].ret, 0, "reader %d: sread %d", i, rd[i].ret);
		for (k = 0; k < rd[i].n; k++) {
			cr_assert(rd[i].got[k] >= 1 && rd[i].got[k] <= EVENTS);
			cr_assert_eq(seen[rd[i].got[k]]++, 0, "event %d read twice",
				     rd[i].got[k]);
			if (k)
				cr_assert_gt(rd[i].got[k], rd[i].got[k - 1],
					     "reader %d read %d after %d", i,
					     rd[i].got[k], rd[i].got[k - 1]);
		}
	}
	for (k = 1; k <= EVENTS; k++)
		cr_assert_eq(seen[k], 1, "event %d lost", k);
	orig_down(&o);
}

Test(verbs_async_sread, a_full_backpressure_eq_delivers_the_held_event)
{
	struct orig o;
	int i;

	orig_up(&o, 2, LFP_EQ_BACKPRESSURE);
	for (i = 0; i < 6; i++)
		cr_assert_eq(vf_async_push(o.ctx, i % 2 ? IBV_EVENT_PORT_ERR :
					   IBV_EVENT_PORT_ACTIVE, (uint64_t)i), 0);
	cr_assert_eq(lfp_verbs_async_progress(o.va), 2, "full, one held");
	for (i = 0; i < 6; i++)
		expect_sread(&o, i % 2 ? IBV_EVENT_PORT_ERR : IBV_EVENT_PORT_ACTIVE, i, 0);
	orig_down(&o);
}

Test(verbs_async_sread, an_overrun_eq_gives_its_events_then_eavail_and_the_fd_is_drained)
{
	struct lfp_verbs_async_entry e;
	struct lfp_eq_err_entry err;
	uint32_t code;
	struct orig o;
	int i;

	orig_up(&o, 2, 0);
	for (i = 0; i < 4; i++)
		cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_PORT_ACTIVE, (uint64_t)i), 0);
	expect_sread(&o, IBV_EVENT_PORT_ACTIVE, 0, -1);
	expect_sread(&o, IBV_EVENT_PORT_ACTIVE, 1, -1);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0), -LFP_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(lfp_eq_readerr(o.eq, &err, 0), (ssize_t)sizeof(err));
	cr_assert_eq(err.err, LFP_EOVERRUN);
	/* Later events are still read and acked, never left in the fd. */
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_QP_FATAL, VF_ELEM(o.qp)), 0);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0), -LFP_EAVAIL);
	cr_assert_eq(vf_fd_pending(o.ctx->async_fd), 0, "the async fd was drained");
	orig_down(&o); /* the QP's event was acked: its destroy does not wait */
}

static void *gone_later(void *arg)
{
	struct orig *o = arg;

	usleep(100000);
	vf_ctx_device_gone(o->ctx, 0);
	return NULL;
}

/*
 * An fd hook's write into the EQ: what another thread's progress (or the
 * application) writes between an sread's look at the EQ and its own
 * progress, which then finds the device gone with nothing to move.
 */
static void write_into_eq(int fd, void *arg)
{
	struct lfp_verbs_async_entry e;

	(void)fd;
	memset(&e, 0, sizeof(e));
	e.type = IBV_EVENT_PORT_ACTIVE;
	cr_assert_eq(lfp_eq_write((struct lfp_eq *)arg, LFP_VERBS_ASYNC, &e,
	                          sizeof(e), 0), (ssize_t)sizeof(e));
}

Test(verbs_async_sread, enodev_only_once_what_another_thread_moved_is_read)
{
	struct lfp_verbs_async_entry e;
	uint32_t code;
	struct orig o;

	orig_up(&o, 16, 0);
	vf_ctx_device_gone(o.ctx, 0);
	/* The sread finds the EQ empty; as its progress looks at the async
	 * fd (and finds the device gone) an event lands. */
	cr_assert_eq(vf_fd_hook(o.ctx->async_fd, write_into_eq, o.eq), 0);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 1000, 0),
	             (ssize_t)sizeof(e), "-ENODEV with an event in the EQ");
	cr_assert_eq(e.type, IBV_EVENT_PORT_ACTIVE);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), 1000, 0),
	             -ENODEV);
	orig_down(&o);
}

Test(verbs_async_sread, device_loss_gives_the_queued_events_then_enodev_and_wakes_a_sleeper)
{
	struct lfp_verbs_async_entry e;
	uint32_t code;
	pthread_t t;
	struct orig o;

	orig_up(&o, 16, 0);
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_QP_FATAL, VF_ELEM(o.qp)), 0);
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_DEVICE_FATAL, 0), 0);
	cr_assert_eq(vf_async_push(o.ctx, IBV_EVENT_PORT_ACTIVE, 1), 0);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0),
		     (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_QP_FATAL);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0),
		     (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_DEVICE_FATAL);
	cr_assert_eq(e.err, ENODEV);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0), -ENODEV);
	orig_down(&o);

	/* A sleeper is woken by the loss. */
	orig_up(&o, 16, 0);
	cr_assert_eq(pthread_create(&t, NULL, gone_later, &o), 0);
	cr_assert_eq(lfp_verbs_async_sread(o.va, &code, &e, sizeof(e), -1, 0), -ENODEV);
	cr_assert_eq(pthread_join(t, NULL), 0);
	orig_down(&o);
}
