/*
 * stress_verbs_chan: several CQs of one completion channel, each read by
 * its own thread, on the test context (no hardware).
 *
 * Five CQs share one channel: one in FD mode whose thread blocks in
 * lfp_verbs_cq_sread, two in FD mode whose threads run lfp_trywait and
 * poll(2) on their LFP_GETWAIT fds (pausing at random in between, as an
 * application may; one of them is an extended CQ read with its completion
 * timestamps), one in a wait set whose thread runs lfp_wait, and one that
 * its thread polls and arms itself, with an events object (FD mode) for
 * its channel events.  A producer pushes completions to random CQs with
 * random pauses; whichever thread drains the channel reads events that
 * name the others, so every wakeup of a CQ other than the reader's goes
 * through the binding's credit (the mirror eventfd, or the set's signal).
 *
 * Before every arm the fake pauses now and then, so that completions land
 * between a reader's last empty poll and its arm.
 *
 * Asserts: every completion arrives exactly once, from the CQ it was pushed
 * to; no reader sleeps 10 s with its completions pending (a wait times out,
 * or at one of the producer's quiet points, where it stops until every
 * reader has all it was sent, a reader never gets there: a lost wakeup
 * that later traffic would otherwise hide); at the end every
 * CQ's acks equal the events read that name it, and every CQ is destroyed
 * at once after its close.
 */
#define _GNU_SOURCE
#include <lfpoll/lfpoll.h>
#include <lfpoll/verbs.h>

#include <poll.h>
#include <unistd.h>

#include "stress.h"
#include "vf.h"

#define NQ 5
#define EXQ 2 /* an extended CQ (ibv_cq_ex) with completion timestamps */
enum mode { M_SREAD, M_POLL, M_SET, M_OWNER };

struct reader {
	struct rig *r;
	int idx;
	enum mode mode;
	int ex;                      /* an extended CQ (lfp_verbs_cq_ex_read) */
	uint64_t want, got;
	uint64_t seed;
	unsigned char *seen;
};

struct rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_wait *ws;
	struct ibv_cq *cq[NQ];
	struct lfp_verbs_cq *v[NQ];
	struct reader rd[NQ];
	uint64_t per;                /* completions per CQ */
	_Atomic uint64_t progress[NQ];
	struct stress_watchdog dog;
};

static const enum mode modes[NQ] = { M_SREAD, M_POLL, M_POLL, M_SET, M_OWNER };

/* The fake's hook before every arm: now and then a pause, so that
 * completions land between a reader's last empty poll and its arm (the
 * arm race, docs/verbs.md), which must raise no lost wakeup. */
static atomic_ulong arm_calls;

static void before_arm(struct ibv_cq *cq, int so, void *arg)
{
	uint64_t x = atomic_fetch_add(&arm_calls, 1) * 0x9E3779B97F4A7C15u;

	(void)cq, (void)so, (void)arg;
	x ^= x >> 29;
	if (x % 16 == 0)
		usleep((useconds_t)(x >> 40) % 50);
	else if (x % 4 == 1)
		sched_yield();
}

/*
 * The owner of a CQ the binding does not poll: its own poll, and, when
 * empty, its channel events taken, its arm, a poll again (a completion
 * before the arm raised no event), then trywait and a sleep on the events
 * object's fd.  Returns the completions polled, or 0 after a wake.
 */
static int owner_round(struct reader *d, struct ibv_wc *wc, int fd)
{
	struct lfp_fid *f = &d->r->v[d->idx]->fid;
	struct ibv_cq *cq = d->r->cq[d->idx];
	struct pollfd pfd;
	int n = ibv_poll_cq(cq, 8, wc), ret;

	if (n)
		return n;
	ret = lfp_verbs_cq_events_read(d->r->v[d->idx]);
	CHECK(ret > 0 || ret == -EAGAIN, "events_read: %d", ret);
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "the owner's arm");
	n = ibv_poll_cq(cq, 8, wc);
	if (n || lfp_trywait(&f, 1))
		return n;
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	CHECK(poll(&pfd, 1, 10000) > 0, "reader %d: its events object's fd slept "
	      "10 s with %llu of %llu (lost wakeup)", d->idx,
	      (unsigned long long)d->got, (unsigned long long)d->want);
	return 0;
}

static void take(struct reader *d, const uint64_t *ids, int n)
{
	int j;
	uint64_t k;

	for (j = 0; j < n; j++) {
		CHECK(ids[j] % NQ == (uint64_t)d->idx,
		      "reader %d got wr_id %llu of CQ %llu", d->idx,
		      (unsigned long long)ids[j], (unsigned long long)(ids[j] % NQ));
		k = ids[j] / NQ;
		CHECK(k < d->want, "wr_id %llu out of range", (unsigned long long)ids[j]);
		CHECK(!d->seen[k], "reader %d: wr_id %llu twice", d->idx,
		      (unsigned long long)ids[j]);
		d->seen[k] = 1;
	}
	d->got += (uint64_t)n;
	/* Release: the producer's quiet-point wait reads it (acquire); the
	 * seen[] marks themselves are read only after the join. */
	atomic_store_explicit(&d->r->progress[d->idx], d->got, memory_order_release);
}

static void *reader_main(void *arg)
{
	struct reader *d = (struct reader *)arg;
	struct lfp_verbs_cq *v = d->r->v[d->idx];
	struct lfp_fid *f = &v->fid;
	struct ibv_wc wc[8];
	struct lfp_verbs_wc_ex xe[8];
	uint64_t ids[8];
	struct pollfd pfd;
	int n, j, fd = -1;

	if (d->mode == M_POLL || d->mode == M_OWNER)
		CHECK(lfp_control(f, LFP_GETWAIT, &fd) == 0, "LFP_GETWAIT");
	while (d->got < d->want) {
		if (d->mode == M_OWNER) {
			n = owner_round(d, wc, fd);
			CHECK(n >= 0, "reader %d: ibv_poll_cq %d", d->idx, n);
			if (n == 0)
				continue;
		} else if (d->mode == M_SREAD) {
			n = lfp_verbs_cq_sread(v, wc, 8, 10000);
			CHECK(n != -EAGAIN, "reader %d slept 10 s with %llu of %llu "
			      "(lost wakeup)", d->idx, (unsigned long long)d->got,
			      (unsigned long long)d->want);
		} else {
			n = d->ex ? lfp_verbs_cq_ex_read(v, xe, 8) :
			            lfp_verbs_cq_read(v, wc, 8);
			if (n == -EAGAIN) {
				if (d->mode == M_POLL && lfp_trywait(&f, 1) == 0) {
					/* An application may do anything between
					 * its trywait and its sleep: meanwhile the
					 * other readers drain our events. */
					if (stress_rand(&d->seed) % 2)
						usleep((unsigned)(stress_rand(&d->seed) % 50));
					pfd.fd = fd;
					pfd.events = POLLIN;
					pfd.revents = 0;
					CHECK(poll(&pfd, 1, 10000) > 0, "reader %d: its fd "
					      "slept 10 s with %llu of %llu (lost wakeup)",
					      d->idx, (unsigned long long)d->got,
					      (unsigned long long)d->want);
				} else if (d->mode == M_SET) {
					int ret = lfp_wait(d->r->ws, 10000);

					CHECK(ret == 0, "reader %d: lfp_wait %d (-ETIMEDOUT: "
					      "a lost wakeup) with %llu of %llu", d->idx, ret,
					      (unsigned long long)d->got,
					      (unsigned long long)d->want);
				}
				continue;
			}
		}
		CHECK(n > 0, "reader %d: read %d", d->idx, n);
		for (j = 0; j < n; j++) {
			if (d->ex) {
				CHECK(xe[j].status == IBV_WC_SUCCESS &&
				      xe[j].completion_ts == xe[j].wr_id + 1,
				      "reader %d: status %d, timestamp %llu for wr_id %llu",
				      d->idx, (int)xe[j].status,
				      (unsigned long long)xe[j].completion_ts,
				      (unsigned long long)xe[j].wr_id);
				ids[j] = xe[j].wr_id;
			} else {
				CHECK(wc[j].status == IBV_WC_SUCCESS, "reader %d: "
				      "status %d", d->idx, (int)wc[j].status);
				ids[j] = wc[j].wr_id;
			}
		}
		take(d, ids, n);
	}
	return NULL;
}

static void report(void *arg)
{
	struct rig *r = (struct rig *)arg;
	int i;

	for (i = 0; i < NQ; i++)
		fprintf(stderr, "reader %d: %llu of %llu\n", i,
		        (unsigned long long)atomic_load_explicit(&r->progress[i],
		                                                 memory_order_relaxed),
		        (unsigned long long)r->per);
}

int main(void)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_ex_attr a;
	struct vf_cqe_ex ex;
	struct ibv_wc wc;
	pthread_t t[NQ];
	uint64_t t0 = stress_now_ns(), seed = t0, sent[NQ] = { 0 }, total = 0, x;
	unsigned long full = 0, quiet = 0;
	struct stress_deadline d;
	static struct rig r;
	struct vf_cq_stats st;
	const char *why = vf_priv_canary();
	int i, ret;

	CHECK(why == NULL, "the fake verbs context cannot run: %s", why);
	/* A broken build's run (make check-broken) is short, as under TSan:
	 * one that outlives the capped deadlines has lost a wake-up. */
	r.per = stress_broken_run() ? 3000 : stress_count(20000, 3000);
	r.ctx = vf_ctx_create();
	CHECK(r.ctx != NULL, "vf_ctx_create");
	r.ch = vf_channel_create(r.ctx);
	CHECK(r.ch != NULL, "vf_channel_create");
	CHECK(lfp_wait_open(&wa, &r.ws) == 0, "lfp_wait_open");
	for (i = 0; i < NQ; i++) {
		memset(&a, 0, sizeof(a));
		a.cq.ack_batch = (unsigned)i * 5; /* 0 (the default), 5, 10, 15 */
		a.cq.wait_obj = modes[i] == M_SET ? LFP_WAIT_SET : LFP_WAIT_FD;
		a.cq.ack_batch = modes[i] == M_OWNER ? 3 : a.cq.ack_batch;
		a.cq.wait_set = modes[i] == M_SET ? r.ws : NULL;
		a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		r.rd[i].ex = i == EXQ;
		if (r.rd[i].ex) {
			struct ibv_cq_ex *x = vf_cq_ex_create(r.ctx, r.ch, NULL, 32,
			                                      a.wc_flags);

			CHECK(x != NULL, "vf_cq_ex_create");
			r.cq[i] = ibv_cq_ex_to_cq(x);
			ret = lfp_verbs_cq_ex_open(x, r.ch, &a, &r.v[i], NULL);
		} else {
			r.cq[i] = vf_cq_create(r.ctx, r.ch, NULL, 32);
			CHECK(r.cq[i] != NULL, "vf_cq_create");
			ret = modes[i] == M_OWNER ?
			      lfp_verbs_cq_events_open(r.cq[i], r.ch, &a.cq, &r.v[i], NULL) :
			      lfp_verbs_cq_open(r.cq[i], r.ch, &a.cq, &r.v[i], NULL);
		}
		CHECK(ret == 0, "open CQ %d on the shared channel: %d", i, ret);
		vf_cq_set_hooks(r.cq[i], before_arm, NULL, NULL);
		r.rd[i].r = &r;
		r.rd[i].idx = i;
		r.rd[i].mode = modes[i];
		r.rd[i].want = r.per;
		r.rd[i].seed = seed + (uint64_t)i;
		r.rd[i].seen = calloc(r.per, 1);
		CHECK(r.rd[i].seen != NULL, "calloc");
	}
	stress_watchdog_start(&r.dog, stress_tsan() ? 240 : 90, "shared channel readers",
	                      report, &r);
	for (i = 0; i < NQ; i++)
		stress_spawn(&t[i], reader_main, &r.rd[i]);
	while (total < NQ * r.per) {
		x = stress_rand(&seed);
		i = (int)(x % NQ);
		if (sent[i] == r.per)
			continue;
		memset(&wc, 0, sizeof(wc));
		memset(&ex, 0, sizeof(ex));
		wc.wr_id = sent[i] * NQ + (uint64_t)i;
		wc.opcode = IBV_WC_RECV;
		ex.completion_ts = wc.wr_id + 1;
		ret = vf_cq_push_ex(r.cq[i], &wc, &ex, (int)((x >> 8) & 1));
		if (ret == -ENOSPC) {
			/* Full: its reader is behind.  The watchdog fails the
			 * run if it never catches up (asleep with work). */
			full++;
			usleep(50);
			continue;
		}
		CHECK(ret == 0, "vf_cq_push: %d", ret);
		sent[i]++;
		total++;
		/* Pauses, so readers go to sleep between completions. */
		if ((x >> 16) % 8 == 0)
			usleep((unsigned)((x >> 24) % 50));
		/* Now and then a quiet point: no more traffic until every
		 * reader has all it was sent.  A reader asleep with its
		 * completion pending is not woken by later pushes here. */
		if ((x >> 32) % 16 == 0) {
			d = stress_deadline_in(10, "quiet point");
			for (i = 0; i < NQ; i++)
				stress_await(&r.progress[i], sent[i], &d, "a reader's completions");
			quiet++;
		}
	}
	for (i = 0; i < NQ; i++)
		stress_join(t[i]);
	stress_watchdog_stop(&r.dog);
	for (i = 0; i < NQ; i++) {
		CHECK(r.rd[i].got == r.per, "reader %d: %llu of %llu", i,
		      (unsigned long long)r.rd[i].got, (unsigned long long)r.per);
		CHECK(lfp_verbs_cq_close(r.v[i]) == 0, "close CQ %d", i);
		vf_cq_stats(r.cq[i], &st);
		pthread_mutex_lock(&r.cq[i]->mutex);
		ret = (int)(r.cq[i]->comp_events_completed == st.events_read);
		pthread_mutex_unlock(&r.cq[i]->mutex);
		CHECK(ret, "CQ %d: acks differ from the %lu events read naming it",
		      i, st.events_read);
		CHECK(vf_cq_destroy(r.cq[i], 1000) == 0,
		      "CQ %d: destroy waited: an event read was never acked", i);
		free(r.rd[i].seen);
	}
	CHECK(lfp_wait_close(r.ws) == 0, "lfp_wait_close");
	CHECK(ibv_destroy_comp_channel(r.ch) == 0, "destroy channel");
	CHECK(vf_ctx_destroy(r.ctx) == 0, "objects left alive");
	printf("stress_verbs_chan: PASS %llu completions through %d CQs of one "
	       "channel (1 sread, 2 trywait+poll of which 1 extended, 1 wait set, "
	       "1 polled by its owner), each exactly once; "
	       "CQ full %lu times, %lu quiet points (%.1f s)\n",
	       (unsigned long long)(NQ * r.per), NQ, full, quiet,
	       stress_seconds_since(t0));
	return 0;
}
