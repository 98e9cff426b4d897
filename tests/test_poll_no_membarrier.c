/*
 * LFP_NO_MEMBARRIER (lfpoll(3)): a CQ with no wait object opened in this
 * translation unit fences its writes (fid.asym is 0), and in a poll set it
 * is reported as any CQ.  The other side, an asym CQ added here, is
 * test_poll_asym.c's barrier_refused_after_open: this unit's barrier call
 * fails as a refused one does.
 */
#define LFP_NO_MEMBARRIER
#include <lfpoll/cq.h>
#include <lfpoll/poll.h>

#include <criterion/criterion.h>

Test(poll_no_membarrier, cq_fences_and_is_reported)
{
	struct lfp_cq_attr a = { .size = 16, .wait_obj = LFP_WAIT_NONE };
	struct lfp_cq_entry e = { 0 };
	struct lfp_poll *ps = NULL;
	struct lfp_cq *cq = NULL;
	void *got[2];
	int ctx, i;

	cr_assert_eq(lfp_cq_open(&a, &cq, &ctx), 0);
	cr_assert_eq(cq->fid.asym, 0);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(cq->link.sticky, 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, got, 2), 1);
		cr_assert_eq(got[0], (void *)&ctx);
		cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, got, 2), 0);
	}
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
}
