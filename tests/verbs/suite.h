/*
 * tests/verbs/suite.h: what the verbs Criterion suites (tests/test_verbs*.c)
 * share on top of tests/support.h and the fake context (fake.h).
 *
 *   need_fake()   a suite's .init: fails, with the reason, when the fake
 *                 context cannot run (libibverbs's private-ops slots were
 *                 not discovered), instead of crashing
 *   finish(ctx)   destroys the test's last context and checks that nothing
 *                 vf is left (a leaked one stays reachable, so valgrind would
 *                 not say); Criterion 2.4 ignores failures in .fini, hence a
 *                 call at the end of each test
 *   acked(cq)     the completion events acked on cq so far
 *   stats(cq)     the fake CQ's counters (vf_cq_stats)
 */
#ifndef LFP_TESTS_VERBS_SUITE_H
#define LFP_TESTS_VERBS_SUITE_H

#include <criterion/criterion.h>

#include "support.h"
#include "vf.h"

static inline void need_fake(void)
{
	const char *why = vf_priv_canary();

	cr_assert_null(why, "the fake verbs context cannot run: %s", why);
}

static inline void finish(struct ibv_context *ctx)
{
	cr_assert_eq(vf_ctx_destroy(ctx), 0, "vf_ctx_destroy found objects left alive");
	cr_assert_eq(vf_live(), 0, "%d vf contexts, channels or objects left alive",
		     vf_live());
}

/* cq->comp_events_completed, read under cq->mutex as ibv_ack_cq_events
 * writes it. */
static inline unsigned acked(struct ibv_cq *cq)
{
	unsigned v;

	pthread_mutex_lock(&cq->mutex);
	v = cq->comp_events_completed;
	pthread_mutex_unlock(&cq->mutex);
	return v;
}

static inline struct vf_cq_stats stats(struct ibv_cq *cq)
{
	struct vf_cq_stats st;

	vf_cq_stats(cq, &st);
	return st;
}

#endif /* LFP_TESTS_VERBS_SUITE_H */
