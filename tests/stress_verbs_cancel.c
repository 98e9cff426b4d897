/*
 * stress_verbs_cancel: threads cancelled at random while they read verbs
 * CQs with lfp_verbs_cq_sread, on the test context (no hardware), so that
 * it also runs under ThreadSanitizer.
 *
 * Two FD-mode CQs share one channel, so each reader's drain also credits
 * the other CQ.  In every round a pusher puts completions on both at
 * random, while a reader loops in sread on each CQ and the main thread
 * cancels each reader at a random moment.  A reader's loop has no
 * cancellation point but the binding's sleep, so it is cancelled either
 * asleep or at its next sleep, never with a completion taken and not
 * recorded.  After the round the main thread reads what is left.
 *
 * Asserts: every completion pushed is read exactly once, by a reader or by
 * the final reads; after every round trywait on each CQ works (0 or
 * -EAGAIN, never a hang on a lock a cancelled thread kept); at the end
 * both closes return 0 (no count left raised by a cancelled sleeper) and
 * both CQs are destroyed without waiting for an ack.
 */
#include <lfpoll/lfpoll.h>
#include <lfpoll/verbs.h>

#include "stress.h"
#include "stress_objs.h"
#include "vf.h"

#define PER_ROUND 40

struct rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[2];
	struct lfp_verbs_cq *v[2];
	uint64_t next_id;                 /* main thread only, between rounds */
	_Atomic unsigned char *seen;      /* times each wr_id was read */
	uint64_t seed;
	int round;
};

struct reader {
	struct rig *r;
	int i;
};

static void record(struct rig *r, const struct ibv_wc *wc, int n)
{
	int k;

	for (k = 0; k < n; k++)
		(void)atomic_fetch_add(&r->seen[wc[k].wr_id], 1);
}

/* Reads CQ i until cancelled: the binding's sleep is the only
 * cancellation point of this loop. */
static void *reader_main(void *arg)
{
	struct reader *rd = (struct reader *)arg;
	struct ibv_wc wc[4];
	int n;

	for (;;) {
		n = lfp_verbs_cq_sread(rd->r->v[rd->i], wc, 4, -1);
		CHECK(n > 0, "sread on CQ %d: %d", rd->i, n);
		record(rd->r, wc, n);
	}
	return NULL;
}

struct pusher {
	struct rig *r;
	uint64_t first;
	uint64_t seed;
};

static void *pusher_main(void *arg)
{
	struct pusher *p = (struct pusher *)arg;
	uint64_t k;
	int ret, i;

	for (k = 0; k < PER_ROUND; k++) {
		i = (int)(stress_rand(&p->seed) & 1);
		ret = vf_cq_push(p->r->cq[i], p->first + k, IBV_WC_SUCCESS, 0);
		CHECK(ret == 0, "vf_cq_push: %d", ret);
		if (stress_rand(&p->seed) % 4 == 0)
			sleep_us((unsigned)(stress_rand(&p->seed) % 300));
	}
	return NULL;
}

static void round_once(struct rig *r)
{
	struct reader rd[2] = { { r, 0 }, { r, 1 } };
	struct pusher p = { r, r->next_id, stress_rand(&r->seed) };
	struct ibv_wc wc[8];
	pthread_t tr[2], tp;
	void *res;
	int i, n, ret;

	stress_spawn(&tr[0], reader_main, &rd[0]);
	stress_spawn(&tr[1], reader_main, &rd[1]);
	stress_spawn(&tp, pusher_main, &p);
	for (i = 0; i < 2; i++) {
		sleep_us((unsigned)(stress_rand(&r->seed) % 3000));
		CHECK(pthread_cancel(tr[i]) == 0, "pthread_cancel");
	}
	stress_join(tp);
	for (i = 0; i < 2; i++) {
		CHECK(pthread_join(tr[i], &res) == 0, "pthread_join");
		CHECK(res == PTHREAD_CANCELED, "reader %d ended without its cancel", i);
	}
	/* What the readers left: the stash and the CQ, through read.  The
	 * trywait proves no lock was left held, and returns whether more
	 * waits (a completion another read's poll raced). */
	for (i = 0; i < 2; i++) {
		for (;;) {
			n = lfp_verbs_cq_read(r->v[i], wc, 8);
			if (n > 0) {
				record(r, wc, n);
				continue;
			}
			CHECK(n == -EAGAIN, "read CQ %d: %d", i, n);
			ret = lfp_trywait(&(struct lfp_fid *){ &r->v[i]->fid }, 1);
			CHECK(ret == 0 || ret == -EAGAIN, "trywait CQ %d: %d", i, ret);
			if (ret == 0)
				break;
		}
	}
	for (n = 0; n < PER_ROUND; n++)
		CHECK(atomic_load(&r->seen[r->next_id + (uint64_t)n]) == 1,
		      "completion %llu read %u times",
		      (unsigned long long)(r->next_id + (uint64_t)n),
		      atomic_load(&r->seen[r->next_id + (uint64_t)n]));
	r->next_id += PER_ROUND;
}

static void report(void *arg)
{
	struct rig *r = (struct rig *)arg;

	fprintf(stderr, "stress_verbs_cancel: stuck in round %d (a cancelled "
	        "reader left a lock held?)\n", r->round);
}

int main(void)
{
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_FD };
	uint64_t t0 = stress_now_ns();
	int rounds = stress_count(400, 60), k, i;
	const char *why = vf_priv_canary();
	struct stress_watchdog w;
	struct rig r;

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	memset(&r, 0, sizeof(r));
	r.seed = 0x5eedcafeULL;
	r.seen = calloc((size_t)rounds * PER_ROUND, 1);
	CHECK(r.seen != NULL, "calloc");
	r.ctx = vf_ctx_create();
	CHECK(r.ctx != NULL, "vf_ctx_create");
	r.ch = vf_channel_create(r.ctx);
	CHECK(r.ch != NULL, "vf_channel_create");
	for (i = 0; i < 2; i++) {
		r.cq[i] = vf_cq_create(r.ctx, r.ch, NULL, 2 * PER_ROUND);
		CHECK(r.cq[i] != NULL, "vf_cq_create");
		CHECK(lfp_verbs_cq_open(r.cq[i], r.ch, &a, &r.v[i], NULL) == 0, "open");
	}
	stress_watchdog_start(&w, stress_tsan() ? 240 : 120, "cancel rounds",
	                      report, &r);
	for (k = 0; k < rounds; k++) {
		r.round = k;
		round_once(&r);
	}
	for (i = 0; i < 2; i++) {
		CHECK(lfp_verbs_cq_close(r.v[i]) == 0,
		      "close CQ %d: a cancelled sleeper left its count", i);
		CHECK(vf_cq_destroy(r.cq[i], 2000) == 0, "destroy CQ %d waits", i);
	}
	stress_watchdog_stop(&w);
	CHECK(ibv_destroy_comp_channel(r.ch) == 0, "destroy channel");
	CHECK(vf_ctx_destroy(r.ctx) == 0, "objects left alive");
	free((void *)r.seen);
	printf("stress_verbs_cancel: PASS %d rounds, %d readers cancelled, "
	       "%d completions each read once (%.1f s)\n", rounds, 2 * rounds,
	       rounds * PER_ROUND, stress_seconds_since(t0));
	return 0;
}
