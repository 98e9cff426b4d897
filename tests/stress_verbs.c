/*
 * tests/stress_verbs.c: the verbs binding under a randomized multi-threaded
 * load, on the fake context of support/vf/vf.h (the REAL libibverbs,
 * pipes, a hardware-like CQ). Standalone (no Criterion) so that it also runs
 * under ThreadSanitizer.
 *
 * Per round:
 *   CQs 0..2 share one completion channel through a wait set (FD in round 0,
 *   POLLFD in round 1); CQ 2 is solicited-only and is opened while traffic
 *   already runs. CQs 3 and 4 are FD-mode CQs with their own channels; CQ 4
 *   is solicited-only. ack_batch differs per CQ.
 *   One producer pushes N CQEs (random CQ, random solicited flag, about one
 *   in eight with an error status) and pauses at random so waiters sleep.
 *   Waiters loop { lfp_trywait == 0 -> poll the GETWAIT fd with no timeout;
 *   read until -EAGAIN }: two on the set, two on CQ 3, one trywait waiter
 *   and one lfp_verbs_cq_sread(-1) waiter on CQ 4. A poller thread has CQ 0
 *   in a poll set and reads what lfp_poll reports, so CQ 0's checks drain
 *   the shared channel concurrently with the set's waiters (events for
 *   CQs 1 and 2 are then credited across CQs).
 *   Every CQ has the fake's arm hooks set to widen the two arm races at
 *   random: a pause before the arm (CQEs land between the last empty poll
 *   and the arm) and after it (its event is read, by this thread or
 *   another, before the arming thread carries on).
 * Checked: every wr_id is read exactly once, from the CQ it was pushed to,
 * with its status; all are read before a generous deadline (waiters sleep
 * with no timeout, so a lost wakeup fails the deadline instead of being
 * papered over by a poll timeout); after close, every CQ's acks equal the
 * events read for it and vf_cq_destroy succeeds at once.
 *
 * LFP_STRESS=long multiplies N by 10.
 */
#define _GNU_SOURCE

#include <lfpoll/verbs.h>

#include "stress.h"
#include "vf.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <unistd.h>

#define NCQ       5
#define NSET      3          /* CQs 0..NSET-1 share the set's channel */
#define LATE_CQ   2          /* opened while traffic runs */
#define POLL_CQ   0          /* in a poll set served by the poller thread */
#define SMALL_DEPTH 64
#define SENTINEL  UINT64_MAX /* pushed at the end to wake sleepers */
#define MAXTHR    16

static const int solicited_only[NCQ] = { 0, 0, 1, 0, 1 };
static const unsigned ack_batch[NCQ] = { 1, 0, 3, 2, 0 };

struct round {
	enum lfp_wait_obj set_obj;
	uint64_t n;                       /* CQEs pushed */
	uint64_t seed;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch[NCQ]; /* ch[0..NSET-1] are the same */
	struct ibv_cq *cq[NCQ];
	_Atomic(struct lfp_verbs_cq *) vcq[NCQ];
	struct lfp_wait *ws;
	struct lfp_poll *ps;
	uint8_t *want_cq;                 /* per wr_id, written before the push */
	uint8_t *want_status;
	atomic_uchar *seen;
	atomic_ulong pushed[NCQ], got[NCQ], total;
	atomic_int stop, producer_done, exited;
	atomic_ulong sleeps, wakes;
	struct stress_deadline dl;
};

/* ------------------------------------------------------------ consuming */

static void take(struct round *r, int k, const struct ibv_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t id = wc[i].wr_id;

		if (id == SENTINEL)
			continue;
		CHECK(id < r->n, "CQ %d: wr_id %llu was never pushed", k,
		      (unsigned long long)id);
		CHECK(r->want_cq[id] == k, "wr_id %llu pushed to CQ %d came out of CQ %d",
		      (unsigned long long)id, r->want_cq[id], k);
		CHECK(wc[i].status == r->want_status[id],
		      "wr_id %llu: status %d, pushed %d (must come back as polled)",
		      (unsigned long long)id, wc[i].status, r->want_status[id]);
		CHECK(atomic_fetch_add(&r->seen[id], 1) == 0,
		      "wr_id %llu read twice", (unsigned long long)id);
		atomic_fetch_add(&r->got[k], 1);
		atomic_fetch_add(&r->total, 1);
	}
}

/* Reads CQ k until -EAGAIN (an unpublished CQ is skipped). */
static void drain(struct round *r, int k)
{
	struct lfp_verbs_cq *v = atomic_load(&r->vcq[k]);
	struct ibv_wc wc[16];
	int n;

	if (!v)
		return;
	while ((n = lfp_verbs_cq_read(v, wc, 16)) > 0)
		take(r, k, wc, n);
	CHECK(n == -EAGAIN, "lfp_verbs_cq_read(CQ %d): %d", k, n);
}

static void sleep_on(struct round *r, struct pollfd *p, nfds_t n)
{
	int ret;

	atomic_fetch_add(&r->sleeps, 1);
	do
		ret = poll(p, n, -1); /* no timeout: a lost wakeup must not heal */
	while (ret < 0 && errno == EINTR);
	CHECK(ret > 0, "poll: %d (%s)", ret, strerror(errno));
	atomic_fetch_add(&r->wakes, 1);
}

struct waiter {
	struct round *r;
	int cq;      /* an FD-mode CQ, or -1 for the set */
	int sread;   /* use lfp_verbs_cq_sread(-1) */
};

static void *set_waiter(struct round *r)
{
	struct lfp_fid *f = &r->ws->fid;
	struct pollfd fds[8];
	struct lfp_wait_pollfd pf;
	int k, ret, wsfd = -1;

	if (r->set_obj == LFP_WAIT_FD)
		CHECK(lfp_control(f, LFP_GETWAIT, &wsfd) == 0, "GETWAIT of the set");
	while (!atomic_load(&r->stop)) {
		ret = lfp_trywait(&f, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "lfp_trywait(set): %d", ret);
		if (ret == 0) {
			if (r->set_obj == LFP_WAIT_FD) {
				fds[0].fd = wsfd;
				fds[0].events = POLLIN;
				fds[0].revents = 0;
				sleep_on(r, fds, 1);
			} else {
				pf.nfds = 8;
				pf.fd = fds;
				ret = lfp_control(f, LFP_GETWAIT, &pf);
				CHECK(ret == 0, "GETWAIT of the POLLFD set: %d", ret);
				sleep_on(r, fds, pf.nfds);
			}
		}
		for (k = 0; k < NSET; k++)
			drain(r, k);
	}
	return NULL;
}

static void *fd_waiter(struct round *r, int k, int use_sread)
{
	struct lfp_verbs_cq *v = atomic_load(&r->vcq[k]);
	struct ibv_wc wc[16];
	struct pollfd p;
	int ret, fd;

	CHECK(lfp_control(&v->fid, LFP_GETWAIT, &fd) == 0, "GETWAIT of CQ %d", k);
	while (!atomic_load(&r->stop)) {
		if (use_sread) {
			ret = lfp_verbs_cq_sread(v, wc, 16, -1);
			CHECK(ret > 0, "lfp_verbs_cq_sread(CQ %d, -1): %d", k, ret);
			take(r, k, wc, ret);
			continue;
		}
		ret = lfp_trywait((struct lfp_fid *[]){ &v->fid }, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "lfp_trywait(CQ %d): %d", k, ret);
		if (ret == 0) {
			p.fd = fd;
			p.events = POLLIN;
			p.revents = 0;
			sleep_on(r, &p, 1);
		}
		drain(r, k);
	}
	return NULL;
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	if (w->cq < 0)
		set_waiter(w->r);
	else
		fd_waiter(w->r, w->cq, w->sread);
	atomic_fetch_add(&w->r->exited, 1);
	return NULL;
}

/* Reads what lfp_poll reports, checking now and then. */
static void *poller_main(void *arg)
{
	struct round *r = arg;
	void *ctxs[4];
	int i, n;

	while (!atomic_load(&r->stop)) {
		n = lfp_poll(r->ps, ctxs, 4);
		CHECK(n >= 0 && n <= 1, "lfp_poll: %d (one member)", n);
		for (i = 0; i < n; i++) {
			CHECK(ctxs[i] == &r->cq[POLL_CQ], "lfp_poll context %p", ctxs[i]);
			drain(r, POLL_CQ);
		}
		usleep(n ? 0 : 300);
	}
	return NULL;
}

static void report(struct round *r, const char *what);

/* ------------------------------------------------------------ arm hooks */

static atomic_ulong hook_calls;

static void widen(int wide)
{
	uint64_t x = atomic_fetch_add(&hook_calls, 1) * 0x9E3779B97F4A7C15u;

	x ^= x >> 29;
	if (x % 8 == 0)
		usleep(wide ? (useconds_t)(x >> 40) % 100 : 1);
	else if (x % 8 < 3)
		sched_yield();
}

static void before_arm(struct ibv_cq *cq, int so, void *arg)
{
	(void)cq, (void)so, (void)arg;
	widen(0);
}

static void after_arm(struct ibv_cq *cq, int so, void *arg)
{
	(void)cq, (void)so, (void)arg;
	widen(1);
}

/* ------------------------------------------------------------ producing */

static void *producer_main(void *arg)
{
	struct round *r = arg;
	uint64_t rs = r->seed, i, x;
	unsigned spins = 0;
	int k, sol, ret;
	struct ibv_wc wc;

	for (i = 0; i < r->n; i++) {
		x = stress_rand(&rs);
		/* The last NCQ CQEs: one solicited per CQ, so that every
		 * solicited-only CQ ends with a CQE that raises an event. */
		if (i >= r->n - NCQ) {
			k = (int)(i - (r->n - NCQ));
			sol = 1;
		} else {
			k = (int)(x % NCQ);
			sol = (x >> 8) % 4 == 0;
		}
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = i;
		wc.opcode = IBV_WC_RECV;
		wc.status = (x >> 16) % 8 == 0 ? IBV_WC_WR_FLUSH_ERR :
			    (x >> 16) % 8 == 1 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS;
		wc.byte_len = (uint32_t)(x >> 32);
		r->want_cq[i] = (uint8_t)k;
		r->want_status[i] = (uint8_t)wc.status;
		while ((ret = vf_cq_push_wc(r->cq[k], &wc, sol)) == -ENOSPC) {
			if (stress_deadline_passed(&r->dl)) {
				fprintf(stderr, "CQ %d stays full: nobody was woken to read it\n", k);
				report(r, "producer");
				CHECK_DEADLINE(&r->dl);
			}
			stress_backoff(&spins);
		}
		CHECK(ret == 0, "vf_cq_push_wc(CQ %d): %d", k, ret);
		spins = 0;
		atomic_fetch_add(&r->pushed[k], 1);
		/* Random pauses, long enough for waiters to go to sleep. */
		if ((x >> 40) % 64 == 0)
			usleep((useconds_t)((x >> 48) % 200));
		else if ((x >> 40) % 8 == 0)
			sched_yield();
	}
	atomic_store(&r->producer_done, 1);
	return NULL;
}

/* ------------------------------------------------------------ one round */

static void open_cq(struct round *r, int k)
{
	struct lfp_verbs_cq_attr a;
	struct lfp_verbs_cq *v;
	int ret;

	memset(&a, 0, sizeof(a));
	a.ack_batch = ack_batch[k];
	a.solicited_only = solicited_only[k];
	if (k < NSET) {
		a.wait_obj = LFP_WAIT_SET;
		a.wait_set = r->ws;
	} else {
		a.wait_obj = LFP_WAIT_FD;
	}
	ret = lfp_verbs_cq_open(r->cq[k], r->ch[k], &a, &v, &r->cq[k]);
	CHECK(ret == 0, "lfp_verbs_cq_open(CQ %d): %d", k, ret);
	atomic_store(&r->vcq[k], v);
}

static void report(struct round *r, const char *what)
{
	int k;

	fprintf(stderr, "%s: read %lu of %llu (producer %s); %lu sleeps, %lu wakes\n",
		what, atomic_load(&r->total), (unsigned long long)r->n,
		atomic_load(&r->producer_done) ? "done" : "not done",
		atomic_load(&r->sleeps), atomic_load(&r->wakes));
	for (k = 0; k < NCQ; k++) {
		struct vf_cq_stats st;

		vf_cq_stats(r->cq[k], &st);
		fprintf(stderr, "  CQ %d: pushed %lu read %lu queued %u armed %d "
			"events written %lu read %lu\n", k,
			atomic_load(&r->pushed[k]), atomic_load(&r->got[k]), st.queued,
			(int)st.armed, st.events_written, st.events_read);
	}
}

static void run_round(int round_no, enum lfp_wait_obj set_obj, uint64_t n,
		      uint64_t seed, double seconds)
{
	struct lfp_wait_attr wa = { .wait_obj = set_obj };
	struct waiter w[MAXTHR];
	pthread_t t[MAXTHR], prod, poller;
	struct round *r = calloc(1, sizeof(*r));
	int nw = 0, k, i, ret;
	uint64_t t0 = stress_now_ns(), id;

	CHECK(r != NULL, "calloc");
	r->set_obj = set_obj;
	r->n = n;
	r->seed = seed;
	r->dl = stress_deadline_in(seconds, "stress_verbs round");
	r->want_cq = calloc(n, 1);
	r->want_status = calloc(n, 1);
	r->seen = calloc(n, sizeof(*r->seen));
	CHECK(r->want_cq && r->want_status && r->seen, "calloc of %llu", (unsigned long long)n);

	r->ctx = vf_ctx_create();
	CHECK(r->ctx != NULL, "vf_ctx_create");
	CHECK(lfp_wait_open(&wa, &r->ws) == 0, "lfp_wait_open");
	CHECK(lfp_poll_open(NULL, &r->ps) == 0, "lfp_poll_open");
	for (k = 0; k < NCQ; k++) {
		r->ch[k] = k < NSET && k > 0 ? r->ch[0] : vf_channel_create(r->ctx);
		CHECK(r->ch[k] != NULL, "vf_channel_create");
		/* A solicited-only CQ can hold a long run of unsolicited CQEs
		 * that raise no event: room for all of them. */
		r->cq[k] = vf_cq_create(r->ctx, r->ch[k], NULL,
					solicited_only[k] ? (int)n + 64 : SMALL_DEPTH);
		CHECK(r->cq[k] != NULL, "vf_cq_create");
		vf_cq_set_hooks(r->cq[k], before_arm, after_arm, NULL);
		if (k != LATE_CQ)
			open_cq(r, k);
	}
	ret = lfp_poll_add(r->ps, &atomic_load(&r->vcq[POLL_CQ])->fid, 0);
	CHECK(ret == 0, "lfp_poll_add: %d", ret);

	/* Waiters: two on the set, two on CQ 3, trywait + sread on CQ 4. */
	for (i = 0; i < 2; i++)
		w[nw++] = (struct waiter){ r, -1, 0 };
	w[nw++] = (struct waiter){ r, 3, 0 };
	w[nw++] = (struct waiter){ r, 3, 0 };
	w[nw++] = (struct waiter){ r, 4, 0 };
	w[nw++] = (struct waiter){ r, 4, 1 };
	for (i = 0; i < nw; i++)
		stress_spawn(&t[i], waiter_main, &w[i]);
	stress_spawn(&poller, poller_main, r);
	stress_spawn(&prod, producer_main, r);

	/* CQ 2 joins the set while traffic (including to it) runs. */
	usleep(2000);
	open_cq(r, LATE_CQ);

	while (atomic_load(&r->total) < n) {
		if (stress_deadline_passed(&r->dl)) {
			report(r, "reader");
			CHECK_DEADLINE(&r->dl); /* a lost wakeup (or a lost completion) */
		}
		usleep(1000);
	}
	stress_join(prod);

	/* Everyone read everything: wake the sleepers with sentinel CQEs
	 * (solicited, so solicited-only arms fire too) until all have left. */
	atomic_store(&r->stop, 1);
	while (atomic_load(&r->exited) < nw) {
		if (stress_deadline_passed(&r->dl)) {
			fprintf(stderr, "%d of %d waiters left\n", atomic_load(&r->exited), nw);
			CHECK_DEADLINE(&r->dl);
		}
		for (k = 0; k < NCQ; k++) {
			ret = vf_cq_push(r->cq[k], SENTINEL, IBV_WC_SUCCESS, 1);
			CHECK(ret == 0 || ret == -ENOSPC, "sentinel push: %d", ret);
		}
		usleep(5000);
	}
	for (i = 0; i < nw; i++)
		stress_join(t[i]);
	stress_join(poller);

	for (id = 0; id < n; id++)
		CHECK(atomic_load(&r->seen[id]) == 1, "wr_id %llu read %d times",
		      (unsigned long long)id, atomic_load(&r->seen[id]));

	/* Close: every event read must be acked, so destroy does not wait. */
	CHECK(lfp_poll_del(r->ps, &atomic_load(&r->vcq[POLL_CQ])->fid, 0) == 0, "poll_del");
	CHECK(lfp_poll_close(r->ps) == 0, "lfp_poll_close");
	for (k = 0; k < NCQ; k++)
		CHECK(lfp_verbs_cq_close(atomic_load(&r->vcq[k])) == 0, "close CQ %d", k);
	for (k = 0; k < NCQ; k++) {
		struct vf_cq_stats st;
		unsigned acked;

		vf_cq_stats(r->cq[k], &st);
		pthread_mutex_lock(&r->cq[k]->mutex);
		acked = r->cq[k]->comp_events_completed;
		pthread_mutex_unlock(&r->cq[k]->mutex);
		CHECK(acked == st.events_read, "CQ %d: %u events acked of %lu read",
		      k, acked, st.events_read);
		ret = vf_cq_destroy(r->cq[k], 5000);
		CHECK(ret == 0, "vf_cq_destroy(CQ %d): %d (acks missing)", k, ret);
	}
	CHECK(lfp_wait_close(r->ws) == 0, "lfp_wait_close: members or fds left");
	for (k = NSET - 1; k < NCQ; k++) {
		ret = ibv_destroy_comp_channel(r->ch[k]);
		CHECK(ret == 0, "ibv_destroy_comp_channel: %d", ret);
	}
	CHECK(vf_ctx_destroy(r->ctx) == 0, "objects left alive");
	CHECK(vf_live() == 0, "%d vf objects left alive", vf_live());

	printf("  round %d (%s set): %llu CQEs exactly once, %lu sleeps, %lu wakes, "
	       "%.1f s\n", round_no, set_obj == LFP_WAIT_FD ? "FD" : "POLLFD",
	       (unsigned long long)n, atomic_load(&r->sleeps), atomic_load(&r->wakes),
	       stress_seconds_since(t0));
	free(r->want_cq);
	free(r->want_status);
	free(r->seen);
	free(r);
}

int main(void)
{
	const char *why = vf_priv_canary();
	/* A broken build's rounds (make check-broken) are short and many: one
	 * that outlives the capped deadline has lost a wake-up, not time. */
	uint64_t n = stress_broken_run() ? 20000 : stress_count(300000, 150000);
	int rounds = stress_broken_run() ? 40 : 2, i;
	uint64_t seed = stress_now_ns();
	double seconds = stress_tsan() ? 170 : 60;

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("stress_verbs: seed %llu, %llu CQEs per round%s\n",
	       (unsigned long long)seed, (unsigned long long)n,
	       stress_tsan() ? " (TSan)" : "");
	for (i = 0; i < rounds; i++)
		run_round(i, i % 2 ? LFP_WAIT_POLLFD : LFP_WAIT_FD, n,
		          seed ^ (0x5eedull * (uint64_t)i), seconds / 2);
	printf("stress_verbs: ok\n");
	return 0;
}
