/*
 * tests/test_verbs_fork.c: fork() and the verbs binding (lfp_verbs(3),
 * NOTES; docs/verbs.md, "fork()"), over the REAL libibverbs on the
 * device-free context of support/vf/vf.h.
 *
 * What is promised and checked here: a child uses none of the objects it
 * inherits; one that exits, or execs, or sleeps and exits while the parent
 * works and sleeps in the binding's blocking calls, leaves the parent's
 * CQs and async object working (completions and events wake, are read
 * once, close returns 0, destroy does not wait); the binding's own fds are
 * close-on-exec, so an exec'd program does not hold them.
 * Each test ends with finish(): no fake object is left alive.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <lfpoll/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs/suite.h"

TestSuite(verbs_fork, .init = need_fake, .timeout = 30);

struct frig {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct lfp_verbs_cq *v;
	struct lfp_eq *eq;
	struct lfp_verbs_async *va;
};

static void frig_up(struct frig *f)
{
	struct lfp_verbs_cq_attr ca = { .wait_obj = LFP_WAIT_FD };
	struct lfp_eq_attr ea = { .size = 16, .wait_obj = LFP_WAIT_FD };

	memset(f, 0, sizeof(*f));
	f->ctx = vf_ctx_create();
	cr_assert_not_null(f->ctx);
	f->ch = vf_channel_create(f->ctx);
	f->cq = vf_cq_create(f->ctx, f->ch, NULL, 16);
	cr_assert(f->ch && f->cq);
	cr_assert_eq(lfp_verbs_cq_open(f->cq, f->ch, &ca, &f->v, NULL), 0);
	cr_assert_eq(lfp_eq_open(&ea, &f->eq, NULL), 0);
	cr_assert_eq(lfp_verbs_async_open(f->ctx, f->eq, &f->va, NULL), 0);
}

static void frig_down(struct frig *f)
{
	cr_assert_eq(lfp_verbs_async_close(f->va), 0);
	cr_assert_eq(lfp_eq_close(f->eq), 0);
	cr_assert_eq(lfp_verbs_cq_close(f->v), 0);
	cr_assert_eq(vf_cq_destroy(f->cq, 1000), 0, "acks missing after close");
	cr_assert_eq(ibv_destroy_comp_channel(f->ch), 0);
	finish(f->ctx);
}

/* The parent's objects work: a completion and an event, each read once. */
static void parent_works(struct frig *f, uint64_t wr_id)
{
	struct lfp_verbs_async_entry e;
	struct ibv_wc wc;
	uint32_t code;

	cr_assert_eq(trywait1(&f->v->fid), 0);
	cr_assert_eq(vf_cq_push(f->cq, wr_id, IBV_WC_SUCCESS, 0), 0);
	cr_assert(fd_readable(getwait_fd(&f->v->fid), 1000), "the CQ's fd woke");
	cr_assert_eq(lfp_verbs_cq_sread(f->v, &wc, 1, 1000), 1);
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(lfp_verbs_cq_read(f->v, &wc, 1), -EAGAIN, "read once");
	cr_assert_eq(vf_async_push(f->ctx, IBV_EVENT_PORT_ERR, 1), 0);
	cr_assert_eq(lfp_verbs_async_sread(f->va, &code, &e, sizeof(e), 1000, 0),
		     (ssize_t)sizeof(e));
	cr_assert_eq(e.type, IBV_EVENT_PORT_ERR);
	cr_assert_eq(lfp_verbs_async_sread(f->va, &code, &e, sizeof(e), 0, 0), -EAGAIN);
}

static void reap(pid_t pid, int want)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the child did not exit");
	cr_assert_eq(WEXITSTATUS(st), want, "the child's status");
}

Test(verbs_fork, a_child_that_exits_leaves_the_parent_s_objects_working)
{
	struct frig f;
	pid_t pid;

	frig_up(&f);
	parent_works(&f, 1);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0); /* touches nothing it inherited */
	reap(pid, 0);
	parent_works(&f, 2);
	frig_down(&f);
}

struct late {
	struct frig *f;
	int delay_ms;
};

static void *late_push(void *arg)
{
	struct late *l = arg;

	usleep((useconds_t)l->delay_ms * 1000);
	return (void *)(intptr_t)vf_cq_push(l->f->cq, 7, IBV_WC_SUCCESS, 0);
}

Test(verbs_fork, a_child_that_exits_while_the_parent_sleeps_in_sread_wakes_nobody_wrongly)
{
	struct late l;
	struct ibv_wc wc;
	struct frig f;
	pthread_t t;
	pid_t pid;
	void *ret;

	frig_up(&f);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		usleep(50000); /* the parent is asleep by now */
		_exit(3);
	}
	l.f = &f;
	l.delay_ms = 200;
	cr_assert_eq(pthread_create(&t, NULL, late_push, &l), 0);
	cr_assert_eq(lfp_verbs_cq_sread(f.v, &wc, 1, -1), 1,
		     "the sleep outlived the child and woke for the completion");
	cr_assert_eq(wc.wr_id, 7u);
	cr_assert_eq(pthread_join(t, &ret), 0);
	cr_assert_null(ret);
	reap(pid, 3);
	parent_works(&f, 8);
	frig_down(&f);
}

/* Marks in open[] the fds open now, below 256. */
static void open_fds(unsigned char *open)
{
	int fd;

	for (fd = 0; fd < 256; fd++)
		open[fd] = fcntl(fd, F_GETFD) >= 0;
}

Test(verbs_fork, the_binding_s_fds_are_close_on_exec)
{
	struct lfp_verbs_cq_attr ca = { .wait_obj = LFP_WAIT_FD };
	unsigned char before[256], after[256];
	char cmd[256];
	size_t len;
	struct frig f;
	int fd, made = 0;
	pid_t pid;

	frig_up(&f);
	/* The fds an FD-mode open makes: its mirror's epoll fd and eventfd. */
	cr_assert_eq(lfp_verbs_cq_close(f.v), 0);
	open_fds(before);
	cr_assert_eq(lfp_verbs_cq_open(f.cq, f.ch, &ca, &f.v, NULL), 0);
	open_fds(after);
	len = (size_t)snprintf(cmd, sizeof(cmd), "for f in");
	for (fd = 0; fd < 256; fd++) {
		if (!after[fd] || before[fd])
			continue;
		made++;
		cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC, "fd %d is not close-on-exec", fd);
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " %d", fd);
	}
	cr_assert_eq(made, 2, "an FD-mode open makes two fds, made %d", made);
	snprintf(cmd + len, sizeof(cmd) - len,
		 "; do test ! -e /proc/self/fd/$f || exit 1; done");
	/* An exec'd program does not hold them. */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	reap(pid, 0);
	parent_works(&f, 1);
	frig_down(&f);
}
