/*
 * fork() (docs/contract.md, "fork"): a child may close its copies of the
 * parent's objects, exit, or exec; the parent's objects keep working, its
 * waiters wake, nothing is lost.  Every descriptor lfpoll opens is
 * close-on-exec.
 */
#define _GNU_SOURCE /* pipe2 */

#include <lfpoll/lfpoll.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

struct objs {
	struct lfp_eq *eq;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	struct lfp_wait *ws;
	struct lfp_cq *member;
	struct lfp_poll *ps;
};

static void open_all(struct objs *o)
{
	struct lfp_eq_attr ea = { .wait_obj = LFP_WAIT_FD };
	struct lfp_cq_attr ca = { .wait_obj = LFP_WAIT_FD };
	struct lfp_cntr_attr na = { .wait_obj = LFP_WAIT_MUTEX_COND };
	struct lfp_cq_attr ma = { .wait_obj = LFP_WAIT_SET };

	o->eq = open_eq_attr(&ea, NULL);
	o->cq = open_cq_attr(&ca, (void *)0x1);
	o->cntr = open_cntr_attr(&na, (void *)0x2);
	o->ws = open_ws(LFP_WAIT_FD);
	ma.wait_set = o->ws;
	o->member = open_cq_attr(&ma, (void *)0x3);
	cr_assert_eq(lfp_poll_open(NULL, &o->ps), 0);
	cr_assert_eq(lfp_poll_add(o->ps, &o->cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_add(o->ps, &o->cntr->fid, 0), 0);
}

static int close_all(struct objs *o)
{
	int bad = 0;

	bad |= lfp_poll_del(o->ps, &o->cq->fid, 0);
	bad |= lfp_poll_del(o->ps, &o->cntr->fid, 0);
	bad |= lfp_poll_close(o->ps);
	bad |= lfp_cq_close(o->member);
	bad |= lfp_wait_close(o->ws);
	bad |= lfp_eq_close(o->eq);
	bad |= lfp_cq_close(o->cq);
	bad |= lfp_cntr_close(o->cntr);
	return bad;
}

/* Arm the parent's waiters as an application would before it sleeps. */
static void arm(struct objs *o)
{
	struct lfp_fid *fids[3] = { &o->eq->fid, &o->cq->fid, &o->ws->fid };

	cr_assert_eq(lfp_trywait(fids, 3), 0, "trywait found work");
}

/* Everything the parent does with its objects after the child is gone. */
static void parent_uses(struct objs *o)
{
	struct lfp_cq_entry e = { (void *)7 }, out;
	uint64_t v = 5, got = 0;
	void *ctx[4];
	uint32_t ev;

	cr_assert_eq(lfp_eq_write(o->eq, 1, &v, sizeof(v), 0), (ssize_t)sizeof(v));
	cr_assert(fd_readable(getwait_fd(&o->eq->fid), 1000),
	          "the EQ's fd stayed quiet after a write");
	cr_assert_eq(lfp_eq_read(o->eq, &ev, &got, sizeof(got), 0), (ssize_t)sizeof(got));
	cr_assert_eq(got, 5);
	cr_assert_eq(lfp_cq_write(o->cq, &e, 1), 1);
	cr_assert(fd_readable(getwait_fd(&o->cq->fid), 1000),
	          "the CQ's fd stayed quiet after a write");
	cr_assert_eq(lfp_cq_write(o->member, &e, 1), 1);
	cr_assert_eq(lfp_wait(o->ws, 1000), 0, "the wait set did not wake");
	cr_assert(fd_readable(getwait_fd(&o->ws->fid), 0));
	cr_assert_eq(lfp_cntr_inc(o->cntr, 1), 0);
	cr_assert_eq(lfp_poll(o->ps, ctx, 4), 2, "the poll set lost a member");
	cr_assert_eq(lfp_cq_read(o->cq, &out, 1), 1);
	cr_assert_eq(out.op_context, (void *)7);
	cr_assert_eq(lfp_cq_read(o->member, &out, 1), 1);
	cr_assert_eq(lfp_cntr_wait(o->cntr, 1, 1000), 0);
}

static void child_then_parent(int child_closes)
{
	struct objs o;
	int status;
	pid_t pid;
	uint64_t v = 9, got = 0;
	uint32_t ev;

	open_all(&o);
	arm(&o);
	/* A wake on its way when the child starts: the child must not take
	 * it (its close must not drain the shared eventfd). */
	cr_assert_eq(lfp_eq_write(o.eq, 1, &v, sizeof(v), 0), (ssize_t)sizeof(v));
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child_closes ? (close_all(&o) ? 3 : 0) : 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	          "the child's close failed");
	cr_assert(fd_readable(getwait_fd(&o.eq->fid), 0),
	          "the child took the parent's wake");
	cr_assert_eq(lfp_eq_read(o.eq, &ev, &got, sizeof(got), 0), (ssize_t)sizeof(got));
	cr_assert_eq(got, 9);
	arm(&o);
	parent_uses(&o);
	cr_assert_eq(close_all(&o), 0);
}

TestSuite(fork, .timeout = 60);

Test(fork, a_child_that_closes_its_copies_leaves_the_parents_objects_working)
{
	child_then_parent(1);
}

Test(fork, a_child_that_exits_leaves_the_parents_objects_working)
{
	child_then_parent(0);
}

/* Every descriptor lfpoll opens is close-on-exec: an exec'd child
 * inherits none of them. */
Test(fork, every_descriptor_is_close_on_exec)
{
	struct objs o;
	int fds[3], i, fl;

	open_all(&o);
	fds[0] = getwait_fd(&o.eq->fid);
	fds[1] = getwait_fd(&o.cq->fid);
	fds[2] = getwait_fd(&o.ws->fid);
	for (i = 0; i < 3; i++) {
		fl = fcntl(fds[i], F_GETFD);
		cr_assert(fl >= 0 && (fl & FD_CLOEXEC), "fd %d is not close-on-exec",
		          fds[i]);
	}
	cr_assert_eq(close_all(&o), 0);
}
