/*
 * lfpoll poll set: single-threaded behaviour of poll.h.
 *
 * Membership rules (EQs and sets refused, one poll set per object, -EEXIST,
 * -ENOENT, -EBUSY on close), CQs reported while non-empty or holding an
 * error and not after they are drained, a too-small context array that
 * loses nothing, and sets of 1 to 1,024 members with exactly one ready.
 * Counter-specific rules are in test_cntr.c; adds, deletes and polls racing
 * with producers are in stress_sets.c.
 */
#include <lfpoll/poll.h>

#include <lfpoll/cntr.h>
#include <lfpoll/cq.h>
#include <lfpoll/eq.h>
#include <lfpoll/wait.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "support.h"

static struct lfp_cq *open_cq(void *ctx, enum lfp_wait_obj obj)
{
	struct lfp_cq_attr a = { .size = 16, .wait_obj = obj };

	return open_cq_attr(&a, ctx);
}

static struct lfp_poll *open_ps(void)
{
	struct lfp_poll *ps = NULL;

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_not_null(ps);
	return ps;
}

/* How many times ctx appears in out[0..n). */
static int occurrences(void **out, int n, void *ctx)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += out[i] == ctx;
	return k;
}

/* ------------------------------------------------------------ membership */

Test(poll, open_and_membership_errors)
{
	struct lfp_poll_attr pa = { 1 };
	struct lfp_poll *ps = NULL, *ps2;
	struct lfp_cq *cq = open_cq((void *)1, LFP_WAIT_NONE);
	struct lfp_cntr *c;
	struct lfp_eq *eq;
	struct lfp_wait *ws;

	cr_assert_eq(lfp_poll_open(&pa, &ps), -EINVAL, "flags");
	cr_assert_null(ps);
	cr_assert_eq(lfp_poll_open(NULL, NULL), -EINVAL);
	pa.flags = 0;
	cr_assert_eq(lfp_poll_open(&pa, &ps), 0);
	cr_assert_eq(ps->fid.fclass, LFP_CLASS_POLL);
	ps2 = open_ps();
	cr_assert_eq(lfp_cntr_open(NULL, &c, (void *)2), 0);
	cr_assert_eq(lfp_eq_open(NULL, &eq, NULL), 0);
	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);

	cr_assert_eq(lfp_poll_add(ps, &eq->fid, 0), -EINVAL, "EQ");
	cr_assert_eq(lfp_poll_add(ps, &ws->fid, 0), -EINVAL, "wait set");
	cr_assert_eq(lfp_poll_add(ps, &ps2->fid, 0), -EINVAL, "poll set");
	cr_assert_eq(lfp_poll_add(ps, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 1), -EINVAL, "flags");
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), -ENOENT, "never added");
	cr_assert_eq(lfp_poll_del(ps, &eq->fid, 0), -EINVAL, "EQ del");

	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), -EEXIST);
	cr_assert_eq(lfp_poll_add(ps, &c->fid, 0), -EEXIST);
	cr_assert_eq(lfp_poll_add(ps2, &cq->fid, 0), -EBUSY, "in another poll set");
	cr_assert_eq(lfp_poll_add(ps2, &c->fid, 0), -EBUSY);
	cr_assert_eq(lfp_poll_del(ps2, &cq->fid, 0), -ENOENT, "member of the other set");
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 1), -EINVAL, "del flags");

	cr_assert_eq(lfp_poll_close(ps), -EBUSY);
	cr_assert_eq(lfp_close(&ps->fid), -EBUSY);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), -ENOENT, "second del");
	cr_assert_eq(lfp_poll_close(ps), -EBUSY, "a counter is still a member");
	cr_assert_eq(lfp_poll_del(ps, &c->fid, 0), 0);

	/* Free again: the other set takes them. */
	cr_assert_eq(lfp_poll_add(ps2, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_add(ps2, &c->fid, 0), 0);
	cr_assert_eq(lfp_poll_del(ps2, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_del(ps2, &c->fid, 0), 0);

	cr_assert_eq(lfp_close(&ps->fid), 0);
	cr_assert_eq(lfp_poll_close(ps2), 0);
	cr_assert_eq(lfp_poll_close(NULL), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_eq_close(eq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(poll, poll_rejects_bad_arguments)
{
	struct lfp_poll *ps = open_ps();
	void *out[1];

	cr_assert_eq(lfp_poll(NULL, out, 1), -EINVAL);
	cr_assert_eq(lfp_poll(ps, out, -1), -EINVAL);
	cr_assert_eq(lfp_poll(ps, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_poll(ps, NULL, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 1), 0, "empty set");
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* ------------------------------------------------------------ CQs */

static void cq_reported_while_nonempty(enum lfp_wait_obj obj)
{
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq = open_cq((void *)0xa1, obj);
	struct lfp_cq_entry e[3] = { { e }, { e }, { e } };
	struct lfp_cq_err_entry err;
	void *out[4];

	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "empty CQ");

	cr_assert_eq(lfp_cq_write(cq, e, 3), 3);
	cr_assert_eq(lfp_poll(ps, out, 4), 1);
	cr_assert_eq(out[0], (void *)0xa1);
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "still non-empty: reported again");
	cr_assert_eq(lfp_cq_read(cq, e, 2), 2);
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "one left");
	cr_assert_eq(lfp_cq_read(cq, e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "drained");
	cr_assert_eq(lfp_poll(ps, out, 4), 0);

	memset(&err, 0, sizeof(err));
	err.err = EIO;
	cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "an error is work");
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "the error is still queued");
	cr_assert_eq(lfp_cq_readerr(cq, &err, LFP_PEEK), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 1, "a peek leaves it queued");
	cr_assert_eq(lfp_cq_readerr(cq, &err, 0), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "error read");

	/* Work again after the CQ went idle: a fresh event is reported. */
	cr_assert_eq(lfp_cq_write(cq, e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 1);
	cr_assert_eq(lfp_cq_read(cq, e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 4), 0);

	/* lfp_cq_signal is no completion. */
	cr_assert_eq(lfp_cq_signal(cq), 0);
	cr_assert_eq(lfp_poll(ps, out, 4), 0, "a signal is not work");

	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(poll, cq_reported_while_nonempty_none) { cq_reported_while_nonempty(LFP_WAIT_NONE); }
Test(poll, cq_reported_while_nonempty_fd)   { cq_reported_while_nonempty(LFP_WAIT_FD); }

Test(poll, cq_reported_while_nonempty_in_wait_set)
{
	struct lfp_wait *ws;
	struct lfp_poll *ps = open_ps();
	struct lfp_cq_attr a;
	struct lfp_cq *cq;
	struct lfp_cq_entry e = { &e };
	void *out[2];

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	a = (struct lfp_cq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_cq_open(&a, &cq, (void *)0xa2), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_wait(ws, 10000), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1);
	cr_assert_eq(out[0], (void *)0xa2);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(poll, work_queued_before_add_is_reported)
{
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq = open_cq((void *)0xa3, LFP_WAIT_NONE);
	struct lfp_cq_entry e = { &e };
	void *out[2];

	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1);
	cr_assert_eq(out[0], (void *)0xa3);

	/* Deleted with work queued, work added while out, added back. */
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 0, "a deleted CQ is not reported");
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 2), 0, "a deleted CQ is not reported");
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);

	/* Deleted while idle and pushed (a write, then del before a poll). */
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, out, 2), 1);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);

	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/*
 * Deleting one link that sits in the middle of the ready stack leaves the
 * others reported: del takes the stack apart and must put the rest back.
 */
Test(poll, del_from_the_ready_stack_keeps_the_others)
{
	enum { N = 6 };
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq[N];
	struct lfp_cq_entry e = { &e };
	void *out[N];
	int i, n;

	for (i = 0; i < N; i++) {
		cq[i] = open_cq((void *)(uintptr_t)(i + 1), LFP_WAIT_NONE);
		cr_assert_eq(lfp_poll_add(ps, &cq[i]->fid, 0), 0);
	}
	cr_assert_eq(lfp_poll(ps, out, N), 0, "all idle: every link untracked");
	for (i = 0; i < N; i++)
		cr_assert_eq(lfp_cq_write(cq[i], &e, 1), 1); /* each pushes itself */
	cr_assert_eq(lfp_poll_del(ps, &cq[2]->fid, 0), 0);
	cr_assert_eq(lfp_poll_del(ps, &cq[5]->fid, 0), 0);
	n = lfp_poll(ps, out, N);
	cr_assert_eq(n, N - 2, "%d reported", n);
	for (i = 0; i < N; i++)
		cr_assert_eq(occurrences(out, n, (void *)(uintptr_t)(i + 1)),
		             i == 2 || i == 5 ? 0 : 1, "CQ %d", i);
	for (i = 0; i < N; i++) {
		if (i != 2 && i != 5)
			cr_assert_eq(lfp_poll_del(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_cq_close(cq[i]), 0);
	}
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* n CQs (contexts 1..n) and n counters (n+1..2n) in ps, none with work. */
static void members_open(struct lfp_poll *ps, struct lfp_cq **cq,
                         struct lfp_cntr **c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		cq[i] = open_cq((void *)(uintptr_t)(i + 1), LFP_WAIT_NONE);
		cr_assert_eq(lfp_cntr_open(NULL, &c[i], (void *)(uintptr_t)(n + i + 1)), 0);
		cr_assert_eq(lfp_poll_add(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_poll_add(ps, &c[i]->fid, 0), 0);
	}
}

/* Take them out of ps, close them and ps. */
static void members_close(struct lfp_poll *ps, struct lfp_cq **cq,
                          struct lfp_cntr **c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		cr_assert_eq(lfp_poll_del(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_poll_del(ps, &c[i]->fid, 0), 0);
		cr_assert_eq(lfp_cq_close(cq[i]), 0);
		cr_assert_eq(lfp_cntr_close(c[i]), 0);
	}
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* ------------------------------------------------------------ small arrays */

Test(poll, small_context_array_loses_nothing)
{
	enum { N = 7 };
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq[N];
	struct lfp_cntr *c[N];
	struct lfp_cq_entry e = { &e };
	void *out[2];
	int seen[2 * N] = { 0 };
	int i, n, k, calls = 0, total = 0;

	members_open(ps, cq, c, N);
	cr_assert_eq(lfp_poll(ps, out, 2), 0);
	for (i = 0; i < N; i++) {
		cr_assert_eq(lfp_cq_write(cq[i], &e, 1), 1);
		cr_assert_eq(lfp_cntr_inc(c[i], 1), 0);
	}
	/* Each call returns at most 2; the application drains what it is
	 * told about.  Every member must come up, each exactly once. */
	while ((n = lfp_poll(ps, out, 2)) > 0) {
		cr_assert_leq(n, 2);
		cr_assert_lt(++calls, 100, "lfp_poll keeps returning");
		for (k = 0; k < n; k++) {
			i = (int)(uintptr_t)out[k] - 1;
			cr_assert(i >= 0 && i < 2 * N, "context %p", out[k]);
			cr_assert_eq(seen[i], 0, "member %d reported after it was drained", i);
			seen[i] = 1;
			total++;
			if (i < N)
				cr_assert_eq(lfp_cq_read(cq[i], &e, 1), 1);
		}
	}
	cr_assert_eq(n, 0);
	cr_assert_eq(total, 2 * N, "%d of %d members reported", total, 2 * N);
	members_close(ps, cq, c, N);
}

/* ------------------------------------------------------------ scale */

static void one_ready_among(int members)
{
	struct lfp_poll *ps = open_ps();
	struct lfp_cq **cq = calloc((size_t)members, sizeof(*cq));
	struct lfp_cq_entry e = { &e };
	void *out[8];
	int i, n, k;

	cr_assert_not_null(cq);
	for (i = 0; i < members; i++) {
		cq[i] = open_cq((void *)(uintptr_t)(i + 1), LFP_WAIT_NONE);
		cr_assert_eq(lfp_poll_add(ps, &cq[i]->fid, 0), 0);
	}
	cr_assert_eq(lfp_poll(ps, out, 8), 0, "%d idle members", members);
	for (k = 0; k < 3; k++) {
		int which = k == 0 ? 0 : k == 1 ? members / 2 : members - 1;

		cr_assert_eq(lfp_cq_write(cq[which], &e, 1), 1);
		n = lfp_poll(ps, out, 8);
		cr_assert_eq(n, 1, "%d members, CQ %d ready: %d reported", members, which, n);
		cr_assert_eq(out[0], (void *)(uintptr_t)(which + 1),
		             "%d members: reported %p, ready %d", members, out[0], which);
		cr_assert_eq(lfp_cq_read(cq[which], &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, out, 8), 0, "%d members, all drained", members);
	}
	for (i = 0; i < members; i++) {
		cr_assert_eq(lfp_poll_del(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_cq_close(cq[i]), 0);
	}
	cr_assert_eq(lfp_poll_close(ps), 0);
	free(cq);
}

Test(poll, one_ready_among_1)    { one_ready_among(1); }
Test(poll, one_ready_among_16)   { one_ready_among(16); }
Test(poll, one_ready_among_256)  { one_ready_among(256); }
Test(poll, one_ready_among_1024) { one_ready_among(1024); }

Test(poll, mixed_cqs_and_counters_report_exactly_the_ready_ones)
{
	enum { N = 32 };
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq[N];
	struct lfp_cntr *c[N];
	struct lfp_cq_entry e = { &e };
	void *out[2 * N];
	int i, n;

	members_open(ps, cq, c, N);
	for (i = 0; i < N; i += 3)
		cr_assert_eq(lfp_cq_write(cq[i], &e, 1), 1);
	for (i = 1; i < N; i += 5)
		cr_assert_eq(lfp_cntr_inc(c[i], 1), 0);
	n = lfp_poll(ps, out, 2 * N);
	cr_assert_eq(n, (N + 2) / 3 + (N + 3) / 5, "%d reported", n);
	for (i = 0; i < N; i++) {
		cr_assert_eq(occurrences(out, n, (void *)(uintptr_t)(i + 1)), i % 3 == 0,
		             "CQ %d", i);
		cr_assert_eq(occurrences(out, n, (void *)(uintptr_t)(N + i + 1)), i % 5 == 1,
		             "counter %d", i);
	}
	members_close(ps, cq, c, N);
}

/*
 * lfp_poll(3): "Members with work that do not fit in count stay tracked and
 * are reported by a later call; nothing is lost."  Here every CQ stays
 * busy: the application handles one completion of each reported CQ per
 * call and new completions keep arriving on it, as in a steady flow.  The
 * members that did not fit must still come up within a few calls; a set
 * that always returns the same first members starves the others forever.
 */
Test(poll, busy_members_that_did_not_fit_are_reported_later)
{
	enum { N = 3, CALLS = 12 };
	struct lfp_poll *ps = open_ps();
	struct lfp_cq *cq[N];
	struct lfp_cq_entry e[2] = { { e }, { e } };
	void *out[1];
	int reported[N] = { 0 };
	int i, call, n;

	for (i = 0; i < N; i++) {
		cq[i] = open_cq((void *)(uintptr_t)(i + 1), LFP_WAIT_NONE);
		cr_assert_eq(lfp_poll_add(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_cq_write(cq[i], e, 2), 2);
	}
	for (call = 0; call < CALLS; call++) {
		n = lfp_poll(ps, out, 1);
		cr_assert_eq(n, 1, "call %d: %d", call, n);
		i = (int)(uintptr_t)out[0] - 1;
		cr_assert(i >= 0 && i < N);
		reported[i]++;
		cr_assert_eq(lfp_cq_read(cq[i], e, 1), 1);  /* handle one */
		cr_assert_eq(lfp_cq_write(cq[i], e, 1), 1); /* one more arrives */
	}
	for (i = 0; i < N; i++) { /* before the verdict: no leak */
		cr_assert_eq(lfp_poll_del(ps, &cq[i]->fid, 0), 0);
		cr_assert_eq(lfp_cq_close(cq[i]), 0);
	}
	cr_assert_eq(lfp_poll_close(ps), 0);
	for (i = 0; i < N; i++)
		cr_assert_gt(reported[i], 0, "CQ %d, busy from the start, was never "
		             "reported in %d calls with count 1 (reports: %d %d %d)",
		             i, CALLS, reported[0], reported[1], reported[2]);
}
