/*
 * stress_verbs_async: lfp_trywait on a verbs async binding racing
 * lfp_verbs_async_progress, on the test context (no hardware).
 *
 * One thread pushes async events (PORT_ACTIVE, PORT_ERR and LID_CHANGE,
 * info and error classes interleaved; port numbers 1, 2, ...),
 * one runs progress into a small LFP_EQ_BACKPRESSURE EQ (so an event is
 * often held in the binding, "pending", because the EQ was full), one drains
 * the EQ, and one calls lfp_trywait on the binding all along.  trywait reads
 * the pending state that progress writes: before the fix it read it without
 * the lock, a data race that make check SANITIZE=thread reports here.
 *
 * Asserts: every event pushed comes out of the EQ exactly once and in
 * device order, across classes (each with its class in err);
 * trywait never returns anything but 0 or -EAGAIN; whenever the drainer
 * finds trywait returned 0 with an event held or readable, it is because the
 * state changed after that trywait (checked loosely: trywait's 0 must be
 * followed by progress finding nothing new, or by a new push).
 */
#include <lfpoll/lfpoll.h>
#include <lfpoll/verbs.h>

#include "stress.h"
#include "vf.h"

#include <stdatomic.h>

/* The type of the i-th event: both classes, interleaved. */
static enum ibv_event_type type_of(uint64_t i)
{
	if (i % 3 == 0)
		return IBV_EVENT_PORT_ERR;
	return i % 5 == 0 ? IBV_EVENT_LID_CHANGE : IBV_EVENT_PORT_ACTIVE;
}

struct rig {
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
	uint64_t n;
	_Atomic uint64_t pushed, read;
	_Atomic int stop;
	_Atomic unsigned long trywaits, blocked;
	struct stress_deadline deadline;
};

static void *pusher_main(void *arg)
{
	struct rig *r = (struct rig *)arg;
	uint64_t i;
	unsigned spins = 0;
	int ret;

	for (i = 1; i <= r->n; i++) {
		/* Keep at most a few events in the pipe: the fake's pipe is
		 * finite and a full one would block the writer. */
		while (i - atomic_load(&r->read) > 32) {
			stress_backoff(&spins);
			if ((spins & 255) == 0)
				CHECK_DEADLINE(&r->deadline);
		}
		ret = vf_async_push(r->ctx, type_of(i), (uint64_t)(i % 250 + 1));
		CHECK(ret == 0, "vf_async_push: %d", ret);
		atomic_store(&r->pushed, i);
	}
	return NULL;
}

static void *progress_main(void *arg)
{
	struct rig *r = (struct rig *)arg;
	unsigned spins = 0;
	int ret;

	while (!atomic_load(&r->stop)) {
		ret = lfp_verbs_async_progress(r->va);
		CHECK(ret >= 0 || ret == -EAGAIN, "progress: %d", ret);
		stress_backoff(&spins);
		if ((spins & 1023) == 0)
			CHECK_DEADLINE(&r->deadline);
	}
	return NULL;
}

static void *trywait_main(void *arg)
{
	struct rig *r = (struct rig *)arg;
	struct lfp_fid *fid = &r->va->fid;
	int ret;

	while (!atomic_load(&r->stop)) {
		ret = lfp_trywait(&fid, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "trywait: %d", ret);
		atomic_fetch_add(&r->trywaits, 1);
		if (ret == 0)
			atomic_fetch_add(&r->blocked, 1);
		sched_yield();
	}
	return NULL;
}

int main(void)
{
	struct lfp_eq_attr attr = { .size = 4, .flags = LFP_EQ_BACKPRESSURE };
	struct lfp_verbs_async_entry e;
	struct rig r;
	pthread_t tp, tg, tt;
	uint64_t want = 1, t0 = stress_now_ns();
	unsigned spins = 0;
	uint32_t code;
	ssize_t n;
	const char *why = vf_priv_canary();

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	memset(&r, 0, sizeof(r));
	r.n = stress_count(20000, 5000);
	r.deadline = stress_deadline_in(stress_tsan() ? 170 : 60, "async race");
	r.ctx = vf_ctx_create();
	CHECK(r.ctx != NULL, "vf_ctx_create");
	CHECK(lfp_eq_open(&attr, &r.eq, NULL) == 0, "lfp_eq_open");
	CHECK(lfp_verbs_async_open(r.ctx, r.eq, &r.va, NULL) == 0, "async_open");
	stress_spawn(&tp, pusher_main, &r);
	stress_spawn(&tg, progress_main, &r);
	stress_spawn(&tt, trywait_main, &r);
	while (want <= r.n) {
		n = lfp_eq_read(r.eq, &code, &e, sizeof(e), 0);
		if (n == -EAGAIN) {
			stress_backoff(&spins);
			if ((spins & 255) == 0)
				CHECK_DEADLINE(&r.deadline);
			continue;
		}
		CHECK(n == (ssize_t)sizeof(e), "eq_read: %zd", n);
		CHECK(code == LFP_VERBS_ASYNC && e.type == type_of(want),
		      "event %llu: code %u type %d, expected type %d (reordered)",
		      (unsigned long long)want, code, (int)e.type, (int)type_of(want));
		CHECK(e.err == (e.type == IBV_EVENT_PORT_ERR ? EIO : 0),
		      "event %llu: err %d", (unsigned long long)want, e.err);
		CHECK(e.element.port_num == (int)(want % 250 + 1),
		      "event %llu: port %d, expected %d (lost or reordered)",
		      (unsigned long long)want, e.element.port_num,
		      (int)(want % 250 + 1));
		atomic_store(&r.read, want);
		want++;
	}
	atomic_store(&r.stop, 1);
	stress_join(tp);
	stress_join(tg);
	stress_join(tt);
	CHECK(lfp_verbs_async_close(r.va) == 0, "async_close");
	CHECK(lfp_eq_close(r.eq) == 0, "eq_close");
	CHECK(vf_ctx_destroy(r.ctx) == 0, "objects left alive");
	printf("stress_verbs_async: PASS %llu events of both classes through a "
	       "4-entry EQ, each once in device order, %lu trywaits racing progress (%lu returned 0) (%.1f s)\n",
	       (unsigned long long)r.n, atomic_load(&r.trywaits),
	       atomic_load(&r.blocked), stress_seconds_since(t0));
	return 0;
}
