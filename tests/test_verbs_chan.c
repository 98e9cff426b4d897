/*
 * tests/test_verbs_chan.c: several binding CQs sharing one completion
 * channel, with any wait objects (lfp_verbs(3), "Shared channels"), over
 * the REAL libibverbs on the device-free context of support/vf/vf.h.
 *
 * What is promised and checked here:
 *   - each FD-mode CQ's LFP_GETWAIT fd is readable while an unread event
 *     is on the channel, an event another CQ read was credited to it, or
 *     a wake a trywait that found work put back waits for the next
 *     trywait, and not otherwise: after a trywait of that CQ returned 0, a
 *     completion for it always makes its fd readable, whoever reads the
 *     channel;
 *   - lfp_trywait over any subset of the CQs, one by one or together;
 *   - an event read through one CQ is acked on the CQ it names, never on
 *     the reader (ibv_destroy_cq of the named CQ does not wait);
 *   - closes in every order leave no event unacked;
 *   - a trywait that finds work leaves the wake it took to the CQ's other
 *     waiters (FD and SET);
 *   - two threads reading two CQs of one channel lose nothing (the
 *     standalone tests/stress_verbs_chan.c does the same under TSan).
 * Each test ends with finish(): no fake object is left alive.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "verbs/suite.h"

TestSuite(verbs_chan, .init = need_fake, .timeout = 60);

#define MAXQ 6

/* One context, one channel, n CQs on it with the given wait objects. */
struct chan_rig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_wait *ws;         /* for LFP_WAIT_SET members */
	int n;
	struct ibv_cq *cq[MAXQ];
	struct lfp_verbs_cq *v[MAXQ];
	enum lfp_wait_obj obj[MAXQ];
};

static void chan_up(struct chan_rig *r, int n, const enum lfp_wait_obj *obj,
		    unsigned ack_batch)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr a;
	int i;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->ctx = vf_ctx_create();
	cr_assert_not_null(r->ctx);
	r->ch = vf_channel_create(r->ctx);
	cr_assert_not_null(r->ch);
	cr_assert_eq(lfp_wait_open(&wa, &r->ws), 0);
	for (i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		a.ack_batch = ack_batch;
		a.wait_obj = obj[i];
		if (obj[i] == LFP_WAIT_SET)
			a.wait_set = r->ws;
		r->obj[i] = obj[i];
		r->cq[i] = vf_cq_create(r->ctx, r->ch, NULL, 64);
		cr_assert_not_null(r->cq[i]);
		cr_assert_eq(lfp_verbs_cq_open(r->cq[i], r->ch, &a, &r->v[i], NULL), 0,
			     "CQ %d (wait object %d) on the shared channel", i, (int)obj[i]);
	}
}

/* Close what is open, destroy every CQ (none may wait), then the rest. */
static void chan_down(struct chan_rig *r)
{
	int i;

	for (i = 0; i < r->n; i++) {
		if (r->v[i])
			cr_assert_eq(lfp_verbs_cq_close(r->v[i]), 0, "close CQ %d", i);
		if (r->cq[i])
			cr_assert_eq(vf_cq_destroy(r->cq[i], 1000), 0,
				     "CQ %d: ibv_destroy_cq would hang", i);
	}
	cr_assert_eq(lfp_wait_close(r->ws), 0, "the channel fd left the set");
	cr_assert_eq(ibv_destroy_comp_channel(r->ch), 0);
	finish(r->ctx);
}

static void push(struct ibv_cq *cq, uint64_t wr_id)
{
	cr_assert_eq(vf_cq_push(cq, wr_id, IBV_WC_SUCCESS, 0), 0, "vf_cq_push %llu",
		     (unsigned long long)wr_id);
}

static int readable(struct lfp_verbs_cq *v)
{
	return fd_readable(getwait_fd(&v->fid), 0);
}

static int channel_unread(struct chan_rig *r)
{
	return vf_fd_pending(r->ch->fd) > 0;
}

/* ------------------------------------------------------------ FD mirrors */

Test(verbs_chan, a_cq_is_woken_for_its_event_when_another_cq_read_it)
{
	static const enum lfp_wait_obj fd3[] = { LFP_WAIT_FD, LFP_WAIT_FD, LFP_WAIT_FD };
	struct chan_rig r;
	struct ibv_wc wc[4];
	int i;

	chan_up(&r, 3, fd3, 1);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(trywait1(&r.v[i]->fid), 0, "CQ %d: empty, armed", i);
		cr_assert_not(readable(r.v[i]), "CQ %d: nothing pending", i);
	}
	push(r.cq[1], 7);
	/* Unread on the channel: it may be anyone's, every mirror says so. */
	for (i = 0; i < 3; i++)
		cr_assert(readable(r.v[i]), "CQ %d: an unread event may be its", i);
	/* CQ 0 reads it and credits CQ 1: only CQ 1 stays readable. */
	cr_assert_eq(trywait1(&r.v[0]->fid), 0, "CQ 0 has nothing");
	cr_assert_not(channel_unread(&r), "CQ 0's trywait drained the channel");
	cr_assert_not(readable(r.v[0]), "CQ 0: nothing of its own");
	cr_assert_not(readable(r.v[2]), "CQ 2: nothing of its own");
	cr_assert(readable(r.v[1]), "CQ 1 must wake: its event was read by CQ 0");
	cr_assert_eq(acked(r.cq[0]), 0, "never acked on the reader");
	cr_assert_eq(trywait1(&r.v[2]->fid), 0);
	cr_assert(readable(r.v[1]), "another CQ's trywait does not clear CQ 1's wake");
	cr_assert_eq(trywait1(&r.v[1]->fid), -EAGAIN, "CQ 1 has a completion");
	cr_assert_eq(acked(r.cq[1]), 1, "acked on the CQ it names (ack_batch 1)");
	cr_assert_eq(lfp_verbs_cq_read(r.v[1], wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(trywait1(&r.v[1]->fid), 0);
	cr_assert_eq(stats(r.cq[1]).armed, VF_ARM_NEXT, "CQ 1 re-armed");
	for (i = 0; i < 3; i++)
		cr_assert_not(readable(r.v[i]), "CQ %d: all quiet again", i);
	chan_down(&r);
}

Test(verbs_chan, sread_on_one_cq_returns_its_event_read_by_another)
{
	static const enum lfp_wait_obj fd2[] = { LFP_WAIT_FD, LFP_WAIT_FD };
	struct chan_rig r;
	struct ibv_wc wc;

	chan_up(&r, 2, fd2, 0);
	cr_assert_eq(lfp_verbs_cq_sread(r.v[1], &wc, 1, 0), -EAGAIN);
	push(r.cq[1], 3);
	cr_assert_eq(trywait1(&r.v[0]->fid), 0, "CQ 0 takes CQ 1's event");
	cr_assert_eq(lfp_verbs_cq_sread(r.v[1], &wc, 1, 2000), 1,
		     "CQ 1's sleeper sees its completion");
	cr_assert_eq(wc.wr_id, 3);
	chan_down(&r);
}

Test(verbs_chan, an_fd_cq_holds_two_fds_which_close_and_a_failed_open_give_back)
{
	struct lfp_verbs_cq_attr fd = { .wait_obj = LFP_WAIT_FD };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *cq = vf_cq_create(ctx, ch, NULL, 4);
	struct lfp_verbs_cq *v = NULL;
	int base = count_fds();

	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &fd, &v, NULL), 0);
	cr_assert_eq(count_fds(), base + 2, "the mirror: an epoll fd and an eventfd");
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(count_fds(), base, "close gives both back");
	vf_cq_fail_next_arm(cq, EIO);
	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &fd, &v, NULL), -EIO);
	cr_assert_eq(count_fds(), base, "a failed open leaves no fd behind");
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

/* ------------------------------------------------------------ acks */

Test(verbs_chan, an_event_read_through_one_cq_is_acked_on_the_cq_it_names)
{
	static const enum lfp_wait_obj mix[] = {
		LFP_WAIT_FD, LFP_WAIT_SET, LFP_WAIT_NONE, LFP_WAIT_FD
	};
	struct chan_rig r;
	struct ibv_wc wc[4];
	int wsfd;

	chan_up(&r, 4, mix, 1);
	wsfd = getwait_fd(&r.ws->fid);
	cr_assert_eq(trywait1(&r.ws->fid), 0);
	cr_assert_eq(trywait1(&r.v[3]->fid), 0);
	/* Events for the set member (1), the NONE CQ (2) and CQ 3, all read
	 * by CQ 0. */
	push(r.cq[1], 1);
	push(r.cq[2], 2);
	push(r.cq[3], 3);
	cr_assert_eq(stats(r.cq[1]).events_written, 1);
	cr_assert_eq(stats(r.cq[2]).events_written, 1);
	cr_assert_eq(trywait1(&r.v[0]->fid), 0);
	cr_assert_eq(acked(r.cq[0]), 0, "nothing acked on the reader");
	cr_assert(fd_readable(wsfd, 0), "the set of CQ 1 is woken");
	cr_assert(readable(r.v[3]), "CQ 3's mirror is woken");
	/* The NONE CQ acks what it was credited when it is read. */
	cr_assert_eq(lfp_verbs_cq_read(r.v[2], wc, 4), 1);
	cr_assert_eq(acked(r.cq[2]), 1, "acked on CQ 2 at its read");
	/* The set member and CQ 3 ack theirs in their trywait. */
	cr_assert_eq(trywait1(&r.ws->fid), -EAGAIN);
	cr_assert_eq(acked(r.cq[1]), 1);
	cr_assert_eq(lfp_verbs_cq_read(r.v[1], wc, 4), 1);
	/* CQ 3 is closed and destroyed at once: its credited event is acked. */
	cr_assert_eq(lfp_verbs_cq_close(r.v[3]), 0);
	r.v[3] = NULL;
	cr_assert_eq(acked(r.cq[3]), 1, "close acked the credited event");
	cr_assert_eq(vf_cq_destroy(r.cq[3], 1000), 0, "destroy does not wait");
	r.cq[3] = NULL;
	cr_assert_eq(acked(r.cq[0]), 0, "still nothing acked on the reader");
	chan_down(&r);
}

/*
 * Every order of closing three CQs (FD, SET, NONE) on one channel, with
 * each CQ's event left unread, or read by the first CQ to close, or by the
 * last: each CQ is destroyed right after its close, which must not wait.
 */
Test(verbs_chan, closes_in_every_order_leave_no_event_unacked)
{
	static const enum lfp_wait_obj mix[] = { LFP_WAIT_FD, LFP_WAIT_SET, LFP_WAIT_NONE };
	static const int perm[6][3] = {
		{ 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 }
	};
	struct chan_rig r;
	int p, mode, k, i, reader;

	for (p = 0; p < 6; p++) {
		for (mode = 0; mode < 3; mode++) {
			chan_up(&r, 3, mix, 0);
			for (i = 0; i < 3; i++)
				push(r.cq[i], (uint64_t)i);
			/* mode 0: unread; 1: read by the first to close; 2: by
			 * the last (a NONE CQ cannot trywait: use the set's). */
			reader = mode == 1 ? perm[p][0] : perm[p][2];
			if (mode) {
				struct lfp_fid *f = reader == 1 ? &r.ws->fid :
				                    &r.v[reader]->fid;

				if (reader != 2)
					(void)trywait1(f);
				else
					(void)trywait1(&r.v[0]->fid);
				cr_assert_not(channel_unread(&r),
					      "perm %d mode %d: drained", p, mode);
			}
			for (k = 0; k < 3; k++) {
				i = perm[p][k];
				cr_assert_eq(lfp_verbs_cq_close(r.v[i]), 0);
				r.v[i] = NULL;
				cr_assert_eq(vf_cq_destroy(r.cq[i], 1000), 0,
					     "perm %d mode %d: CQ %d closed %d-th would "
					     "hang in ibv_destroy_cq", p, mode, i, k);
				r.cq[i] = NULL;
			}
			chan_down(&r);
		}
	}
}

/* ------------------------------------------------------ randomized */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Random pushes across four FD CQs of one channel, trywaits on random
 * subsets (one CQ, or several through one lfp_trywait), random reads.
 * After every step: a CQ whose last trywait returned 0 (its waiter would
 * be asleep on its fd) and that has an unread completion must have a
 * readable fd.  At the end every completion came out exactly once, from
 * the CQ it was pushed to, and acks equal events read.
 */
Test(verbs_chan, randomized_pushes_and_trywaits_never_leave_a_sleeper_behind)
{
	static const enum lfp_wait_obj fd4[] = {
		LFP_WAIT_FD, LFP_WAIT_FD, LFP_WAIT_FD, LFP_WAIT_FD
	};
	enum { Q = 4, STEPS = 3000, MAXID = 4096 };
	static int owner[MAXID], seen[MAXID];
	struct chan_rig r;
	struct lfp_fid *f[Q];
	struct ibv_wc wc[8];
	int sleeping[Q], pending[Q], idx[Q];
	uint64_t seed = 0x5eed1234;
	int step, pushed = 0, got = 0, i, j, n, k, ret, rounds;

	chan_up(&r, Q, fd4, 3);
	memset(sleeping, 0, sizeof(sleeping));
	memset(pending, 0, sizeof(pending));
	memset(seen, 0, sizeof(seen));
	for (step = 0; step < STEPS; step++) {
		uint64_t x = rnd(&seed);

		switch (x % 4) {
		case 0: /* push */
		case 1:
			if (pushed == MAXID)
				break;
			i = (int)((x >> 8) % Q);
			if (pending[i] >= 60)
				break;
			owner[pushed] = i;
			push(r.cq[i], (uint64_t)pushed);
			pushed++;
			pending[i]++;
			break;
		case 2: /* trywait on a random subset, in a random order */
			n = 1 + (int)((x >> 8) % Q);
			for (i = 0; i < Q; i++)
				idx[i] = i;
			for (i = Q - 1; i > 0; i--) {
				j = (int)(rnd(&seed) % (uint64_t)(i + 1));
				k = idx[i];
				idx[i] = idx[j];
				idx[j] = k;
			}
			for (i = 0; i < n; i++)
				f[i] = &r.v[idx[i]]->fid;
			ret = n == 1 ? trywait1(f[0]) : lfp_trywait(f, (size_t)n);
			cr_assert(ret == 0 || ret == -EAGAIN, "step %d: trywait %d", step, ret);
			for (i = 0; i < n; i++)
				sleeping[idx[i]] = ret == 0;
			break;
		default: /* a woken CQ reads */
			i = (int)((x >> 8) % Q);
			sleeping[i] = 0;
			while ((n = lfp_verbs_cq_read(r.v[i], wc, 8)) > 0) {
				for (j = 0; j < n; j++) {
					cr_assert_lt(wc[j].wr_id, (uint64_t)pushed);
					cr_assert_eq(owner[wc[j].wr_id], i,
						     "step %d: wr_id %llu out of CQ %d",
						     step, (unsigned long long)wc[j].wr_id, i);
					cr_assert_eq(seen[wc[j].wr_id]++, 0, "read twice");
				}
				got += n;
				pending[i] -= n;
			}
			cr_assert_eq(n, -EAGAIN);
			break;
		}
		for (i = 0; i < Q; i++)
			if (sleeping[i] && pending[i] > 0)
				cr_assert(readable(r.v[i]),
					  "step %d: CQ %d sleeps with %d completions "
					  "and a fd that is not readable (lost wakeup)",
					  step, i, pending[i]);
	}
	/* Settle: every CQ trywaits to 0, reading what it finds. */
	for (rounds = 0; rounds < 100; rounds++) {
		for (i = 0; i < Q; i++)
			f[i] = &r.v[i]->fid;
		if (lfp_trywait(f, Q) == 0)
			break;
		for (i = 0; i < Q; i++)
			while ((n = lfp_verbs_cq_read(r.v[i], wc, 8)) > 0) {
				for (j = 0; j < n; j++) {
					cr_assert_eq(owner[wc[j].wr_id], i);
					cr_assert_eq(seen[wc[j].wr_id]++, 0, "read twice");
				}
				got += n;
			}
	}
	cr_assert_lt(rounds, 100, "the CQs never settled");
	cr_assert_eq(got, pushed, "%d completions pushed, %d read", pushed, got);
	for (i = 0; i < Q; i++) {
		cr_assert_not(readable(r.v[i]), "CQ %d quiet at the end", i);
		cr_assert_eq(lfp_verbs_cq_close(r.v[i]), 0);
		r.v[i] = NULL;
		cr_assert_eq(acked(r.cq[i]), stats(r.cq[i]).events_read,
			     "CQ %d: acks equal events read", i);
	}
	chan_down(&r);
}

/* ------------------------------------------------------------ threads */

struct reader {
	struct chan_rig *r;
	int idx;
	int use_sread;               /* else trywait + poll on LFP_GETWAIT */
	int want;                    /* completions to receive */
	int got;
	int lost;                    /* a wait timed out with work pending */
	int wrong;                   /* a completion of another CQ */
};

static void *reader_main(void *arg)
{
	struct reader *d = arg;
	struct lfp_verbs_cq *v = d->r->v[d->idx];
	struct lfp_fid *f = &v->fid;
	struct ibv_wc wc[8];
	struct pollfd pfd;
	int n, j, fd = -1;

	(void)lfp_control(f, LFP_GETWAIT, &fd);
	while (d->got < d->want && !d->lost) {
		if (d->use_sread) {
			n = lfp_verbs_cq_sread(v, wc, 8, 5000);
		} else {
			n = lfp_verbs_cq_read(v, wc, 8);
			if (n == -EAGAIN && lfp_trywait(&f, 1) == 0) {
				pfd.fd = fd;
				pfd.events = POLLIN;
				pfd.revents = 0;
				if (poll(&pfd, 1, 5000) == 0)
					d->lost = 1;
				continue;
			}
		}
		if (n == -EAGAIN) {
			if (d->use_sread)
				d->lost = 1;
			continue;
		}
		if (n < 0) {
			d->lost = 1;
			break;
		}
		for (j = 0; j < n; j++)
			if ((int)(wc[j].wr_id % 2) != d->idx)
				d->wrong++;
		d->got += n;
	}
	return NULL;
}

Test(verbs_chan, two_threads_reading_two_cqs_of_one_channel_lose_nothing)
{
	static const enum lfp_wait_obj fd2[] = { LFP_WAIT_FD, LFP_WAIT_FD };
	enum { N = 2000 };
	struct chan_rig r;
	struct reader d[2];
	pthread_t t[2];
	uint64_t seed = 42, id[2] = { 0, 1 };
	int i, mode, spins;

	for (mode = 0; mode < 2; mode++) {
		chan_up(&r, 2, fd2, 0);
		for (i = 0; i < 2; i++) {
			memset(&d[i], 0, sizeof(d[i]));
			d[i].r = &r;
			d[i].idx = i;
			d[i].use_sread = mode == 0 ? 1 : i;
			d[i].want = N;
			cr_assert_eq(pthread_create(&t[i], NULL, reader_main, &d[i]), 0);
		}
		/* wr_id parity names the CQ. */
		id[0] = 0;
		id[1] = 1;
		while (id[0] < 2 * N || id[1] < 2 * N) {
			uint64_t x = rnd(&seed);

			i = id[0] >= 2 * N ? 1 : id[1] >= 2 * N ? 0 : (int)(x & 1);
			for (spins = 0; vf_cq_push(r.cq[i], id[i], IBV_WC_SUCCESS, 0) ==
			     -ENOSPC; spins++) {
				/* The CQ stays full while its reader is stuck. */
				cr_assert_lt(spins, 50000, "mode %d: CQ %d full for 5 s: "
					     "its reader is asleep (lost wakeup)", mode, i);
				usleep(100);
			}
			id[i] += 2;
			if ((x >> 8) % 16 == 0)
				usleep((unsigned)((x >> 16) % 200));
		}
		for (i = 0; i < 2; i++) {
			cr_assert_eq(pthread_join(t[i], NULL), 0);
			cr_assert_not(d[i].lost, "mode %d: reader %d slept with work pending "
				      "or failed (%d of %d)", mode, i, d[i].got, N);
			cr_assert_eq(d[i].wrong, 0, "mode %d: reader %d got another CQ's", mode, i);
			cr_assert_eq(d[i].got, N);
		}
		chan_down(&r);
	}
}

/* ------------------------------------------------------ failed opens */

/* Run by the opening CQ's arm, before it fails: a waiter's re-check of
 * the set (what it returns depends on the channel fd; the test looks at
 * what it did to the CQ). */
static void recheck_set(struct ibv_cq *cq, int solicited_only, void *arg)
{
	struct lfp_wait *ws = arg;

	(void)solicited_only;
	vf_cq_set_hooks(cq, NULL, NULL, NULL); /* once */
	(void)trywait1(&ws->fid);
}

/*
 * An open into a wait set whose arm fails must leave the CQ to the
 * application as it found it.  A waiter's re-check of the set runs while
 * the open arms; the CQ holds a completion and an unread event (from an
 * arm made before the open, say by an earlier binding object on the CQ).
 * The re-check must not have polled the completion (a failed open could
 * only drop it, as it did when the CQ joined the set before its arm) nor
 * read the event, and whatever was read must be acked: ibv_destroy_cq
 * waits for it.
 */
Test(verbs_chan, a_failed_set_open_leaves_the_cq_its_completions_and_events)
{
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_SET };
	struct ibv_context *ctx = vf_ctx_create();
	struct ibv_comp_channel *ch = vf_channel_create(ctx);
	struct ibv_cq *cq = vf_cq_create(ctx, ch, NULL, 4), *ev_cq;
	struct lfp_verbs_cq *v = NULL;
	struct lfp_wait *ws;
	struct ibv_wc wc;
	void *ev_ctx;

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	a.wait_set = ws;
	/* An arm made before the open, and the event it raises, unread. */
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	push(cq, 7);
	cr_assert_eq(stats(cq).events_written, 1);
	vf_cq_set_hooks(cq, recheck_set, NULL, ws);
	vf_cq_fail_next_arm(cq, EIO);
	cr_assert_eq(lfp_verbs_cq_open(cq, ch, &a, &v, NULL), -EIO);
	cr_assert_eq(acked(cq), stats(cq).events_read, "read %lu, acked %u: "
		     "ibv_destroy_cq would hang", (unsigned long)stats(cq).events_read,
		     acked(cq));
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1, "the completion was lost: the "
		     "failed open's set re-check polled it");
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(stats(cq).events_read, 0, "the failed open read the "
		     "application's event");
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_assert_eq(ev_cq, cq);
	ibv_ack_cq_events(cq, 1);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0, "ibv_destroy_cq would hang");
	cr_assert_eq(lfp_wait_close(ws), 0, "the channel fd left the set");
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	finish(ctx);
}

/* ------------------------------------------------------ opens */

/* Run by the opening CQ's arm, before it arms: the CQE of the arm race. */
static void push_before_arm(struct ibv_cq *cq, int solicited_only, void *arg)
{
	(void)solicited_only;
	(void)arg;
	vf_cq_set_hooks(cq, NULL, NULL, NULL); /* once */
	push(cq, 5);
}

/*
 * A waiter of a wait set sleeps (its trywait returned 0) while a CQ joins
 * the set, and a completion lands on the CQ between the join and the open's
 * arm: it raises no event, and nothing polls the CQ afterwards unless the
 * open wakes the set.  The waiter must not sleep with it pending.
 */
Test(verbs_chan, a_set_waiter_is_woken_for_a_cqe_that_lands_before_the_open_arms)
{
	static const enum lfp_wait_obj one_set[] = { LFP_WAIT_SET };
	struct lfp_verbs_cq_attr a = { .wait_obj = LFP_WAIT_SET };
	struct chan_rig r;
	struct ibv_cq *cq;
	struct lfp_verbs_cq *v;
	struct ibv_wc wc[2];
	int wsfd;

	chan_up(&r, 1, one_set, 0);
	a.wait_set = r.ws;
	wsfd = getwait_fd(&r.ws->fid);
	cr_assert_eq(trywait1(&r.ws->fid), 0, "the waiter goes to sleep");
	cq = vf_cq_create(r.ctx, r.ch, NULL, 4);
	vf_cq_set_hooks(cq, push_before_arm, NULL, NULL);
	cr_assert_eq(lfp_verbs_cq_open(cq, r.ch, &a, &v, NULL), 0);
	cr_assert_eq(stats(cq).events_written, 0, "the CQE came before the arm");
	cr_assert(fd_readable(wsfd, 0),
		  "the set's waiter sleeps with the new CQ's completion pending");
	cr_assert_eq(trywait1(&r.ws->fid), -EAGAIN);
	cr_assert_eq(lfp_verbs_cq_read(v, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 5);
	cr_assert_eq(lfp_verbs_cq_close(v), 0);
	cr_assert_eq(vf_cq_destroy(cq, 1000), 0);
	chan_down(&r);
}

/* ------------------------------------------------------ several waiters */

/*
 * Two waiters on one CQ.  The first's trywait returned 0 and it sleeps on
 * the CQ's fd (or the set's).  A wake arrives (the CQ's own event on the
 * channel, or a credit from another CQ's read), and the second waiter's
 * trywait takes it, finds two completions, and its caller reads one.  As
 * for lfpoll's own objects (docs/design.md, 2.2: a drainer that finds work
 * puts the wake back), the first must still see its fd readable: the
 * other completion is pending and nothing else will come.
 */
static void second_waiter_takes_one(struct chan_rig *r, int i, int wfd,
				    const char *how)
{
	struct ibv_wc wc[1];

	cr_assert(fd_readable(wfd, 0), "%s: the wake arrived", how);
	cr_assert_eq(trywait1(r->obj[i] == LFP_WAIT_SET ? &r->ws->fid : &r->v[i]->fid),
		     -EAGAIN, "%s: the second waiter finds work", how);
	cr_assert_eq(lfp_verbs_cq_read(r->v[i], wc, 1), 1);
	cr_assert(fd_readable(wfd, 0), "%s: the first waiter sleeps with a "
		  "completion pending (the second took its wake)", how);
	cr_assert_eq(lfp_verbs_cq_read(r->v[i], wc, 1), 1);
}

Test(verbs_chan, a_trywait_that_finds_work_leaves_the_wake_to_other_waiters)
{
	static const enum lfp_wait_obj mix[] = { LFP_WAIT_FD, LFP_WAIT_FD, LFP_WAIT_SET };
	struct chan_rig r;
	int fd0, wsfd;

	chan_up(&r, 3, mix, 0);
	fd0 = getwait_fd(&r.v[0]->fid);
	wsfd = getwait_fd(&r.ws->fid);

	/* FD CQ 0, its own event on the channel. */
	cr_assert_eq(trywait1(&r.v[0]->fid), 0);
	push(r.cq[0], 1);
	push(r.cq[0], 2);
	second_waiter_takes_one(&r, 0, fd0, "own event");
	cr_assert_eq(trywait1(&r.v[0]->fid), 0, "nothing left: the wake is cleared");
	cr_assert_not(fd_readable(fd0, 0));

	/* FD CQ 0, its event read and credited by CQ 1. */
	push(r.cq[0], 3);
	push(r.cq[0], 4);
	cr_assert_eq(trywait1(&r.v[1]->fid), 0, "CQ 1 reads CQ 0's event");
	cr_assert_not(channel_unread(&r));
	second_waiter_takes_one(&r, 0, fd0, "credited event");
	cr_assert_eq(trywait1(&r.v[0]->fid), 0);
	cr_assert_not(fd_readable(fd0, 0));

	/* The set's CQ 2, its own event on the channel. */
	cr_assert_eq(trywait1(&r.ws->fid), 0);
	push(r.cq[2], 5);
	push(r.cq[2], 6);
	second_waiter_takes_one(&r, 2, wsfd, "set member");
	cr_assert_eq(trywait1(&r.ws->fid), 0);
	cr_assert_not(fd_readable(wsfd, 0));
	chan_down(&r);
}
