/*
 * stress_verbs_async_sread: several threads in lfp_verbs_async_sread on one
 * device, some cancelled at random, on the test context (no hardware), so
 * that it also runs under ThreadSanitizer.
 *
 * A pusher sends async events of both classes (PORT_ACTIVE and PORT_ERR,
 * numbered by their port number) into a small back-pressure EQ, so that the
 * binding often holds one; reader threads loop in sread with no timeout; a
 * mover thread calls lfp_verbs_async_progress now and then, so events reach
 * the EQ through another thread than the sleeping readers; in the first
 * half the main thread cancels a random reader every millisecond or so and
 * starts a new one.  A reader's loop has no cancellation point but the
 * binding's sleep.  The pusher stops at random quiet points until every
 * event pushed has been read.
 *
 * Asserts: every event is read exactly once, with its class; each reader
 * reads in increasing order (the EQ's FIFO is the device's order); nothing
 * is lost to a cancelled reader, or left in the EQ or held while every
 * reader sleeps (a quiet point that is not reached fails); at the end the
 * async object closes (0, no count left raised) and the EQ with it.
 */
#include <lfpoll/lfpoll.h>
#include <lfpoll/verbs.h>

#include "stress.h"
#include "stress_objs.h"
#include "vf.h"

#define READERS 3

struct rig {
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
	int n;
	_Atomic unsigned char *seen;      /* times each event was read */
	_Atomic int nseen;
	_Atomic int stop;
};

struct reader {
	struct rig *r;
	int last;                         /* the reader's last event */
};

static enum ibv_event_type type_of(int k)
{
	return k % 3 ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
}

static void *reader_main(void *arg)
{
	struct reader *rd = (struct reader *)arg;
	struct lfp_verbs_async_entry e;
	uint32_t code;
	ssize_t n;
	int k;

	for (;;) {
		n = lfp_verbs_async_sread(rd->r->va, &code, &e, sizeof(e), -1, 0);
		CHECK(n == (ssize_t)sizeof(e), "sread: %zd", n);
		k = e.element.port_num;
		CHECK(code == LFP_VERBS_ASYNC && k >= 1 && k <= rd->r->n,
		      "event code %u port %d", code, k);
		CHECK(e.type == type_of(k) && e.err == (k % 3 ? 0 : EIO),
		      "event %d: type %d err %d", k, (int)e.type, e.err);
		CHECK(k > rd->last, "a reader read %d after %d", k, rd->last);
		rd->last = k;
		CHECK(atomic_fetch_add(&rd->r->seen[k], 1) == 0, "event %d read twice", k);
		(void)atomic_fetch_add(&rd->r->nseen, 1);
	}
	return NULL;
}

/*
 * Pushes every event in random batches, and now and then stops at a quiet
 * point until every event pushed has been read: with readers asleep and
 * nothing more coming, an event left in the EQ or held by the binding with
 * no reader awake would stay there, and the quiet point fails.
 */
static void *pusher_main(void *arg)
{
	struct rig *r = (struct rig *)arg;
	struct stress_deadline d;
	uint64_t seed = 3;
	unsigned spins = 0;
	int k = 1, end, ret;

	while (k <= r->n) {
		end = k + 1 + (int)(stress_rand(&seed) % 32);
		for (; k < end && k <= r->n; k++) {
			/* Keep the fake's pipe from filling: it would block. */
			while (k - atomic_load(&r->nseen) > 200)
				stress_backoff(&spins);
			ret = vf_async_push(r->ctx, type_of(k), (uint64_t)k);
			CHECK(ret == 0, "vf_async_push: %d", ret);
		}
		if (stress_rand(&seed) % 4)
			continue;
		d = stress_deadline_in(30, "a quiet point: every event pushed read");
		while (atomic_load(&r->nseen) < k - 1) {
			stress_backoff(&spins);
			CHECK_DEADLINE(&d);
		}
	}
	return NULL;
}

static void *mover_main(void *arg)
{
	struct rig *r = (struct rig *)arg;
	uint64_t seed = 7;
	int ret;

	while (!atomic_load(&r->stop)) {
		ret = lfp_verbs_async_progress(r->va);
		CHECK(ret >= 0, "progress: %d", ret);
		if (stress_rand(&seed) % 4 == 0)
			sleep_us((unsigned)(stress_rand(&seed) % 200));
		else
			sched_yield();
	}
	return NULL;
}

static void report(void *arg)
{
	struct rig *r = (struct rig *)arg;

	fprintf(stderr, "stress_verbs_async_sread: %d of %d events read\n",
	        atomic_load(&r->nseen), r->n);
}

int main(void)
{
	struct lfp_eq_attr attr = { .size = 8, .flags = LFP_EQ_BACKPRESSURE,
	                            .wait_obj = LFP_WAIT_FD };
	struct reader rd[READERS];
	pthread_t tr[READERS], tp, tm;
	struct stress_watchdog w;
	uint64_t seed = 11, t0 = stress_now_ns();
	int i, cancels = 0;
	void *res;
	const char *why = vf_priv_canary();
	struct rig r;

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	memset(&r, 0, sizeof(r));
	memset(rd, 0, sizeof(rd));
	r.n = stress_count(20000, 3000);
	r.seen = calloc((size_t)r.n + 1, 1);
	CHECK(r.seen != NULL, "calloc");
	r.ctx = vf_ctx_create();
	CHECK(r.ctx != NULL, "vf_ctx_create");
	CHECK(lfp_eq_open(&attr, &r.eq, NULL) == 0, "lfp_eq_open");
	CHECK(lfp_verbs_async_open(r.ctx, r.eq, &r.va, NULL) == 0, "async_open");
	stress_watchdog_start(&w, stress_tsan() ? 240 : 120, "async sread", report, &r);
	for (i = 0; i < READERS; i++) {
		rd[i].r = &r;
		stress_spawn(&tr[i], reader_main, &rd[i]);
	}
	stress_spawn(&tm, mover_main, &r);
	stress_spawn(&tp, pusher_main, &r);
	/* Cancels in the first half; in the second only wakes end a sleep,
	 * so a lost one is not hidden by a restarted reader's first read. */
	while (atomic_load(&r.nseen) < r.n / 2) {
		sleep_us((unsigned)(stress_rand(&seed) % 1000));
		i = (int)(stress_rand(&seed) % READERS);
		CHECK(pthread_cancel(tr[i]) == 0, "pthread_cancel");
		CHECK(pthread_join(tr[i], &res) == 0, "pthread_join");
		CHECK(res == PTHREAD_CANCELED, "reader %d ended without its cancel", i);
		cancels++;
		rd[i].last = 0; /* a new reader: its own order starts again */
		stress_spawn(&tr[i], reader_main, &rd[i]);
	}
	stress_join(tp);
	atomic_store(&r.stop, 1);
	stress_join(tm);
	for (i = 0; i < READERS; i++) {
		CHECK(pthread_cancel(tr[i]) == 0, "pthread_cancel");
		CHECK(pthread_join(tr[i], &res) == 0 && res == PTHREAD_CANCELED,
		      "reader %d", i);
	}
	stress_watchdog_stop(&w);
	for (i = 1; i <= r.n; i++)
		CHECK(atomic_load(&r.seen[i]) == 1, "event %d read %u times", i,
		      atomic_load(&r.seen[i]));
	CHECK(lfp_verbs_async_close(r.va) == 0, "async_close: a count left raised");
	CHECK(lfp_eq_close(r.eq) == 0, "eq_close");
	CHECK(vf_ctx_destroy(r.ctx) == 0, "objects left alive");
	free((void *)r.seen);
	printf("stress_verbs_async_sread: PASS %d events of both classes, each read "
	       "once in order by %d sread threads, %d readers cancelled (%.1f s)\n",
	       r.n, READERS, cancels, stress_seconds_since(t0));
	return 0;
}
