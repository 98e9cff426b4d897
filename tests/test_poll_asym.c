/*
 * A CQ with no wait object whose writes make no fence while it is in no
 * poll set (fid.asym, docs/design.md 4.1): what the process-wide barrier's
 * absence does.  Each test runs in a process of its own (Criterion forks),
 * so a seccomp filter installed by one refuses membarrier(2) to that test
 * alone, as a sandbox would.
 *
 * - With the barrier: a CQ with no wait object is asym, one with a wait
 *   object is not (LFP_NO_MEMBARRIER: test_poll_no_membarrier.c).
 * - Refused after the CQ was opened: lfp_poll_add still succeeds, the link
 *   becomes sticky, and every completion written is reported, each time.
 * - Refused before the open: the registration in this translation unit
 *   happened before (the first test's open), so a new CQ is asym too, and
 *   behaves as above.
 */
#define _GNU_SOURCE
#include <lfpoll/cq.h>
#include <lfpoll/poll.h>

#include <errno.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/criterion.h>

static struct lfp_cq *open_cq(enum lfp_wait_obj obj, void *ctx)
{
	struct lfp_cq_attr a = { .size = 16, .wait_obj = obj };
	struct lfp_cq *cq = NULL;

	cr_assert_eq(lfp_cq_open(&a, &cq, ctx), 0);
	return cq;
}

static int barrier_available(void)
{
	return syscall(SYS_membarrier, 0 /* QUERY */, 0, 0) > 0;
}

/* Every membarrier(2) call from now on fails with EPERM. */
static void refuse_membarrier(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		cr_skip_test("no seccomp filters here (errno %d): the refusal "
		             "cannot be staged", errno);
	cr_assert_eq(syscall(SYS_membarrier, 1 << 3 /* PRIVATE_EXPEDITED */, 0, 0), -1);
	cr_assert_eq(errno, EPERM);
}

/* n rounds of: write one completion, lfp_poll reports the CQ, read it,
 * lfp_poll reports nothing. */
static void reported_each_time(struct lfp_cq *cq, struct lfp_poll *ps, void *ctx, int n)
{
	struct lfp_cq_entry e = { 0 };
	void *got[2];
	int i;

	for (i = 0; i < n; i++) {
		e.op_context = (void *)(uintptr_t)(i + 1);
		cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, got, 2), 1, "round %d: not reported", i);
		cr_assert_eq(got[0], ctx);
		cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
		cr_assert_eq(e.op_context, (void *)(uintptr_t)(i + 1));
		cr_assert_eq(lfp_poll(ps, got, 2), 0, "round %d: reported empty", i);
	}
}

Test(poll_asym, only_cqs_with_no_wait_object)
{
	struct lfp_cq *none, *fd;
	int ctx;

	none = open_cq(LFP_WAIT_NONE, &ctx);
	fd = open_cq(LFP_WAIT_FD, &ctx);
	cr_assert_eq(none->fid.asym, (uint32_t)barrier_available());
	cr_assert_eq(fd->fid.asym, 0);
	lfp_cq_close(none);
	lfp_cq_close(fd);
}

Test(poll_asym, barrier_refused_after_open)
{
	struct lfp_poll *ps = NULL;
	struct lfp_cq *cq;
	int ctx;

	if (!barrier_available())
		cr_skip_test("membarrier(2) is not available here");
	cq = open_cq(LFP_WAIT_NONE, &ctx);
	cr_assert_eq(cq->fid.asym, 1);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	refuse_membarrier();
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(cq->link.sticky, 1, "the add's barrier failed: the link "
	             "must be checked on every lfp_poll");
	reported_each_time(cq, ps, &ctx, 5);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(poll_asym, barrier_refused_before_open)
{
	struct lfp_poll *ps = NULL;
	struct lfp_cq *first, *cq;
	int ctx;

	if (!barrier_available())
		cr_skip_test("membarrier(2) is not available here");
	first = open_cq(LFP_WAIT_NONE, &ctx);   /* registers this unit */
	refuse_membarrier();
	cq = open_cq(LFP_WAIT_NONE, &ctx);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert(!cq->fid.asym || cq->link.sticky);
	reported_each_time(cq, ps, &ctx, 5);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_cq_close(first), 0);
}
