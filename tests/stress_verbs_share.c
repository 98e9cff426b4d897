/*
 * stress_verbs_share: opens, failed opens and closes of verbs CQs that share
 * one completion channel, half of them in one wait set, the others in FD
 * or NONE mode, from several threads at once, on the test context (no
 * hardware).
 *
 * Each worker owns a few CQs on the shared channel and, every round, opens
 * or closes each of them at random, with a random wait object: an open is
 * made to fail at its arm (vf_cq_fail_next_arm) a third of the time, and an
 * open CQ sometimes gets a completion first, whose channel event another
 * CQ's close or an FD CQ's trywait may read and credit (the credit posts
 * to an FD CQ's own eventfd, or wakes the set), while the named CQ may be
 * closing.  Set members run the set's trywait, whose re-check may run the
 * steps of the set's members (a CQ another worker is opening joins only
 * after its arm, so its failed open must leave nothing to a re-check);
 * closed CQs sometimes get a completion, taken at once, whose event (the
 * former open's arm may still be outstanding) names a CQ with no binding
 * object, or one being reopened.  Between rounds the workers stop at a barrier and the main thread
 * checks the invariant of lfp_verbs(3): the channel fd is in the wait set
 * (LFP_GETWAIT on a POLLFD set), exactly once, if and only if some binding
 * CQ of that set uses the channel (FD and NONE CQs do not count).
 *
 * Asserts: an open returns 0, or exactly the injected arm error (never
 * -EEXIST or -EBUSY: no two workers touch one CQ, and any wait objects
 * may share a channel);
 * every close returns 0; the invariant holds after every round; at the end
 * every CQ can be destroyed at once (every channel event read was acked).
 */
#include <lfpoll/lfpoll.h>
#include <lfpoll/verbs.h>

#include "stress.h"
#include "vf.h"

#define WORKERS 4
#define PER     3

struct worker {
	struct rig *r;
	unsigned idx;
	uint64_t seed;
	struct ibv_cq *cq[PER];
	struct lfp_verbs_cq *v[PER];
	enum lfp_wait_obj mode[PER];   /* of each open CQ */
	unsigned long opens, failed, closes, trywaits, set_trywaits, closed_pushes;
};

struct rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_wait *ws;
	pthread_barrier_t go, done;
	uint64_t rounds;
	struct worker w[WORKERS];
	struct stress_watchdog dog;
};

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	static const enum lfp_wait_obj objs[4] = {
		LFP_WAIT_SET, LFP_WAIT_SET, LFP_WAIT_FD, LFP_WAIT_NONE
	};
	struct lfp_verbs_cq_attr a;
	struct lfp_fid *f;
	struct ibv_wc wc[4];
	uint64_t round, x;
	unsigned k;
	int ret;

	for (round = 0; round < w->r->rounds; round++) {
		pthread_barrier_wait(&w->r->go);
		for (k = 0; k < PER; k++) {
			x = stress_rand(&w->seed);
			if (x & 1)
				continue; /* this CQ sits the round out */
			memset(&a, 0, sizeof(a));
			a.wait_obj = objs[(x >> 8) % 4];
			a.wait_set = a.wait_obj == LFP_WAIT_SET ? w->r->ws : NULL;
			if (w->v[k] && w->mode[k] != LFP_WAIT_NONE && (x >> 16) % 2) {
				/* An FD CQ's trywait drains the channel and
				 * credits other workers' CQs, closing or not; a
				 * set member's runs the set's re-check, the
				 * trywait step of every member of the set.  The
				 * CQ stays open this round. */
				int set = w->mode[k] == LFP_WAIT_SET;

				f = set ? &w->r->ws->fid : &w->v[k]->fid;
				ret = lfp_trywait(&f, 1);
				CHECK(ret == 0 || ret == -EAGAIN, "%strywait: %d",
				      set ? "set " : "", ret);
				while ((ret = lfp_verbs_cq_read(w->v[k], wc, 4)) > 0)
					;
				CHECK(ret == -EAGAIN, "read: %d", ret);
				if (set)
					w->set_trywaits++;
				else
					w->trywaits++;
				continue;
			}
			if (!w->v[k] && (x >> 20) % 2) {
				/* A completion on a closed CQ: if a former open's
				 * arm is still outstanding, its event names a CQ
				 * with no binding object, for whoever reads it to
				 * ack, or for a set's re-check of this CQ's next
				 * open to read.  The CQE itself is taken here. */
				ret = vf_cq_push(w->cq[k], round, IBV_WC_SUCCESS, 0);
				CHECK(ret == 0, "vf_cq_push: %d", ret);
				CHECK(ibv_poll_cq(w->cq[k], 4, wc) == 1, "raw poll");
				w->closed_pushes++;
			}
			if (w->v[k]) {
				if ((x >> 1) % 4 == 0) {
					/* An event on the channel for close
					 * (ours or another's) to read. */
					ret = vf_cq_push(w->cq[k], round, IBV_WC_SUCCESS, 0);
					CHECK(ret == 0, "vf_cq_push: %d", ret);
					ret = lfp_verbs_cq_read(w->v[k], wc, 4);
					CHECK(ret == 1, "read: %d", ret);
				}
				ret = lfp_verbs_cq_close(w->v[k]);
				CHECK(ret == 0, "worker %u CQ %u: close %d", w->idx, k, ret);
				w->v[k] = NULL;
				w->closes++;
			} else if ((x >> 1) % 3 == 0) {
				/* The open's own arm takes the fault: no
				 * re-check of a set runs the step of a CQ
				 * before it has joined, after its arm. */
				vf_cq_fail_next_arm(w->cq[k], EIO);
				ret = lfp_verbs_cq_open(w->cq[k], w->r->ch, &a, &w->v[k], NULL);
				CHECK(ret == -EIO, "worker %u CQ %u: open with a failing "
				      "arm gave %d, want -EIO", w->idx, k, ret);
				CHECK(w->v[k] == NULL, "a failed open set *vcq");
				w->failed++;
			} else {
				ret = lfp_verbs_cq_open(w->cq[k], w->r->ch, &a, &w->v[k], NULL);
				CHECK(ret == 0, "worker %u CQ %u: open %d", w->idx, k, ret);
				w->mode[k] = a.wait_obj;
				w->opens++;
			}
		}
		pthread_barrier_wait(&w->r->done);
	}
	return NULL;
}

/* How many times fd is in the POLLFD set's array. */
static int in_set(struct lfp_wait *ws, int fd)
{
	struct pollfd fds[8];
	struct lfp_wait_pollfd p;
	size_t i;
	int n = 0, ret;

	p.nfds = 8;
	p.fd = fds;
	ret = lfp_control(&ws->fid, LFP_GETWAIT, &p);
	CHECK(ret == 0, "LFP_GETWAIT: %d", ret);
	for (i = 0; i < p.nfds; i++)
		n += p.fd[i].fd == fd;
	return n;
}

int main(void)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_POLLFD };
	struct rig r;
	pthread_t t[WORKERS];
	uint64_t round, base, t0 = stress_now_ns();
	unsigned long opens = 0, failed = 0, closes = 0, shared = 0, trywaits = 0;
	unsigned long set_trywaits = 0, closed_pushes = 0;
	unsigned i, k, open, in_ws;
	int n;
	const char *why = vf_priv_canary();

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	memset(&r, 0, sizeof(r));
	r.rounds = stress_count(3000, 600);
	base = (uint64_t)t0;
	r.ctx = vf_ctx_create();
	CHECK(r.ctx != NULL, "vf_ctx_create");
	r.ch = vf_channel_create(r.ctx);
	CHECK(r.ch != NULL, "vf_channel_create");
	CHECK(lfp_wait_open(&wa, &r.ws) == 0, "lfp_wait_open");
	CHECK(pthread_barrier_init(&r.go, NULL, WORKERS + 1) == 0, "barrier");
	CHECK(pthread_barrier_init(&r.done, NULL, WORKERS + 1) == 0, "barrier");
	for (i = 0; i < WORKERS; i++) {
		r.w[i].r = &r;
		r.w[i].idx = i;
		r.w[i].seed = base + i;
		for (k = 0; k < PER; k++) {
			r.w[i].cq[k] = vf_cq_create(r.ctx, r.ch, NULL, 8);
			CHECK(r.w[i].cq[k] != NULL, "vf_cq_create");
		}
	}
	stress_watchdog_start(&r.dog, stress_tsan() ? 170 : 60, "share rounds",
	                      NULL, NULL);
	for (i = 0; i < WORKERS; i++)
		stress_spawn(&t[i], worker_main, &r.w[i]);
	for (round = 0; round < r.rounds; round++) {
		pthread_barrier_wait(&r.go);
		pthread_barrier_wait(&r.done);
		/* Quiescent: the workers wait at the next round's barrier. */
		open = in_ws = 0;
		for (i = 0; i < WORKERS; i++)
			for (k = 0; k < PER; k++)
				if (r.w[i].v[k]) {
					open++;
					in_ws += r.w[i].mode[k] == LFP_WAIT_SET;
				}
		n = in_set(r.ws, r.ch->fd);
		CHECK(n == (in_ws ? 1 : 0), "round %llu (seed %llu): %u CQs open on "
		      "the channel, %u of them in the set, its fd is in the set %d "
		      "times", (unsigned long long)round, (unsigned long long)base,
		      open, in_ws, n);
		shared += open > 1;
	}
	for (i = 0; i < WORKERS; i++)
		stress_join(t[i]);
	stress_watchdog_stop(&r.dog);
	for (i = 0; i < WORKERS; i++) {
		opens += r.w[i].opens;
		trywaits += r.w[i].trywaits;
		set_trywaits += r.w[i].set_trywaits;
		closed_pushes += r.w[i].closed_pushes;
		failed += r.w[i].failed;
		closes += r.w[i].closes;
		for (k = 0; k < PER; k++) {
			if (r.w[i].v[k])
				CHECK(lfp_verbs_cq_close(r.w[i].v[k]) == 0, "final close");
			CHECK(vf_cq_destroy(r.w[i].cq[k], 1000) == 0,
			      "destroy waited: an event read was never acked");
		}
	}
	CHECK(in_set(r.ws, r.ch->fd) == 0, "the fd outlived the last CQ");
	CHECK(lfp_wait_close(r.ws) == 0, "lfp_wait_close");
	CHECK(ibv_destroy_comp_channel(r.ch) == 0, "destroy channel");
	CHECK(vf_ctx_destroy(r.ctx) == 0, "objects left alive");
	pthread_barrier_destroy(&r.go);
	pthread_barrier_destroy(&r.done);
	printf("stress_verbs_share: PASS %llu rounds, %lu opens, %lu failed "
	       "opens, %lu closes, %lu FD and %lu set trywaits, %lu completions "
	       "on closed CQs by %d threads on one channel; the fd was in the set "
	       "iff a CQ of the set used it (%lu rounds shared) (%.1f s)\n",
	       (unsigned long long)r.rounds, opens, failed, closes,
	       trywaits, set_trywaits, closed_pushes, WORKERS, shared,
	       stress_seconds_since(t0));
	return 0;
}
