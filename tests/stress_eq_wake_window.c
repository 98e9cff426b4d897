/*
 * lfpoll FD wait object: the window between a producer's eventfd write and
 * its bookkeeping of the signal state (internal/wait_fd.h, lfp__wait_fd_post).
 *
 * lfp_trywait must clear the object's notification before it re-checks
 * (docs/contract.md, "Trywait"), so that a thread that then blocks on the fd sleeps
 * until the next event.  Here the producer is held, deterministically, just
 * after its write(2) to the eventfd (the order of a design that wrote before
 * it recorded the post): the state
 * it is in whenever the kernel's wake-up preemption switches to the woken
 * waiter on the same CPU.  The consumer takes the event, finds the EQ empty
 * and calls lfp_trywait, which returns 0.  The fd must then be quiet:
 *   - poll(2) with timeout 0 on the LFP_GETWAIT fd finds it not readable;
 *   - lfp_eq_sread with a 20 ms timeout sleeps in poll(2) a handful of
 *     times, not thousands (a spin that lasts as long as the producer is
 *     descheduled).
 * The producer's write(2) and the FD kind's poll(2) are routed through wrappers
 * here (the two #defines around the include) to hold the producer and to
 * count the sleeps; nothing else changes.  Counts only: no timing threshold.
 */
#define _POSIX_C_SOURCE 200809L /* before any include: -std=c11 hides POSIX */

#include <poll.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t held_write(int fd, const void *buf, size_t n);
static ssize_t held_read(int fd, void *buf, size_t n);
static int counted_poll(struct pollfd *fds, nfds_t nfds, int timeout);
#define write held_write
#define read held_read
#define poll counted_poll
#include <lfpoll/eq.h>
#undef write
#undef read
#undef poll

#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>

#include "stress.h"

static _Atomic int hold_fd = -1;      /* hold after the next write(2) to it */
static _Atomic int hold_read_fd = -1; /* hold before the next read(2) of it */
static sem_t written, release;
static _Atomic unsigned long polls;

static ssize_t held_write(int fd, const void *buf, size_t n)
{
	ssize_t r = write(fd, buf, n);
	int want = fd;

	if (atomic_compare_exchange_strong(&hold_fd, &want, -1)) {
		sem_post(&written);
		while (sem_wait(&release) != 0)
			;
	}
	return r;
}

static ssize_t held_read(int fd, void *buf, size_t n)
{
	int want = fd;

	if (atomic_compare_exchange_strong(&hold_read_fd, &want, -1)) {
		sem_post(&written);
		while (sem_wait(&release) != 0)
			;
	}
	return read(fd, buf, n);
}

static int counted_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	atomic_fetch_add(&polls, 1);
	return poll(fds, nfds, timeout);
}

static void *producer(void *arg)
{
	struct lfp_eq *eq = arg;
	unsigned char b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	ssize_t n = lfp_eq_write(eq, LFP_EVENT_USER, b, sizeof(b), 0);

	CHECK(n == (ssize_t)sizeof(b), "write = %zd", n);
	return NULL;
}

struct timed_sread {
	struct lfp_eq *eq;
	ssize_t ret;
	_Atomic int done;
};

static void *sreader(void *arg)
{
	struct timed_sread *ts = arg;
	unsigned char buf[64];
	uint32_t ev;

	ts->ret = lfp_eq_sread(ts->eq, &ev, buf, sizeof(buf), 20, 0);
	atomic_store(&ts->done, 1);
	return NULL;
}

static void *trywaiter(void *arg)
{
	struct lfp_fid *fid = arg;
	int ret = lfp_trywait(&fid, 1);

	CHECK(ret == 0, "second waiter: trywait on the empty EQ = %d", ret);
	return NULL;
}

static int readable(int fd)
{
	struct pollfd p;

	p.fd = fd;
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, 0) > 0;
}

static struct lfp_eq *open_fd_eq(int *fd)
{
	struct lfp_eq_attr attr;
	struct lfp_eq *eq = NULL;

	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = LFP_WAIT_FD;
	attr.size = 8;
	CHECK(lfp_eq_open(&attr, &eq, NULL) == 0, "lfp_eq_open");
	CHECK(lfp_control(&eq->fid, LFP_GETWAIT, fd) == 0 && *fd >= 0,
	      "LFP_GETWAIT");
	return eq;
}

static void await_held(void)
{
	struct stress_deadline d = stress_deadline_in(60, "holding a thread");

	while (sem_trywait(&written) != 0) {
		CHECK_DEADLINE(&d);
		sched_yield();
	}
}

struct seen {
	unsigned long still_readable; /* of 1000 trywait() == 0 */
	int sread_returned;           /* a 20 ms sread, within 10 s */
	unsigned long sleeps;         /* its poll(2) calls */
};

/*
 * The EQ is empty and another thread is held: trywait must leave the fd
 * quiet, and a 20 ms sread must sleep and time out.  The sread runs in a
 * thread, so that a hang is seen (10 s: a hang check, not a timing one).
 */
static void observe(struct lfp_eq *eq, int fd, struct timed_sread *ts,
                    pthread_t *r, struct seen *out)
{
	struct lfp_fid *fid = &eq->fid;
	struct stress_deadline sd;
	int i, ret;

	out->still_readable = 0;
	for (i = 0; i < 1000; i++) {
		ret = lfp_trywait(&fid, 1);
		CHECK(ret == 0, "trywait on the drained EQ = %d", ret);
		out->still_readable += readable(fd);
	}
	memset(ts, 0, sizeof(*ts));
	ts->eq = eq;
	atomic_store(&polls, 0);
	stress_spawn(r, sreader, ts);
	sd = stress_deadline_in(10 * (stress_tsan() ? 3 : 1), "sread(20 ms)");
	while (!atomic_load(&ts->done) && !stress_deadline_passed(&sd))
		sched_yield();
	out->sread_returned = atomic_load(&ts->done);
	out->sleeps = atomic_load(&polls);
}

static int ok(const struct seen *s)
{
	return s->still_readable == 0 && s->sread_returned && s->sleeps <= 3;
}

static void report(const char *who, const struct seen *s)
{
	printf("stress_eq_wake_window: %s: trywait()==0 left the fd readable "
	       "%lu/1000 times; sread(20 ms) %s, %lu poll(2) calls: %s\n", who,
	       s->still_readable, s->sread_returned ? "returned" :
	       "still running after the deadline", s->sleeps,
	       ok(s) ? "ok" : "FAIL");
}

int main(void)
{
	struct timed_sread ts;
	struct seen a, b;
	struct lfp_eq *eq;
	struct lfp_fid *fid;
	unsigned char buf[64] = { 0 };
	uint32_t ev;
	ssize_t n;
	pthread_t t, r;
	int fd = -1;

	CHECK(sem_init(&written, 0, 0) == 0 && sem_init(&release, 0, 0) == 0,
	      "sem_init");

	/*
	 * A: the producer is held right after its eventfd write(2), before it
	 * returns from lfp_eq_write (the woken consumer runs meanwhile).
	 */
	eq = open_fd_eq(&fd);
	fid = &eq->fid;
	CHECK(lfp_trywait(&fid, 1) == 0, "trywait on the empty EQ");
	atomic_store(&hold_fd, fd);
	stress_spawn(&t, producer, eq);
	await_held();
	CHECK(readable(fd), "the signalled fd is not readable");
	n = lfp_eq_read(eq, &ev, buf, sizeof(buf), 0);
	CHECK(n == 8 && ev == LFP_EVENT_USER, "read = %zd", n);
	CHECK(lfp_eq_read(eq, &ev, buf, sizeof(buf), 0) == -EAGAIN, "not empty");
	observe(eq, fd, &ts, &r, &a);
	sem_post(&release);
	stress_join(t);
	stress_join(r);
	CHECK(ts.ret == -EAGAIN, "sread on the empty EQ = %zd", ts.ret);
	CHECK(lfp_eq_close(eq) == 0, "close");
	report("producer held after its eventfd write", &a);

	/*
	 * B: a second waiter is held in its own W1, around its read(2)
	 * and before its read(2) of the eventfd.
	 */
	eq = open_fd_eq(&fd);
	fid = &eq->fid;
	CHECK(lfp_trywait(&fid, 1) == 0, "trywait on the empty EQ");
	CHECK(lfp_eq_write(eq, LFP_EVENT_USER, buf, 8, 0) == 8, "write");
	CHECK(readable(fd), "the signalled fd is not readable");
	n = lfp_eq_read(eq, &ev, buf, sizeof(buf), 0);
	CHECK(n == 8, "read = %zd", n);
	atomic_store(&hold_read_fd, fd);
	stress_spawn(&t, trywaiter, fid);
	await_held();
	observe(eq, fd, &ts, &r, &b);
	sem_post(&release);
	stress_join(t);
	stress_join(r);
	CHECK(ts.ret == -EAGAIN, "sread on the empty EQ = %zd", ts.ret);
	CHECK(lfp_eq_close(eq) == 0, "close");
	report("second waiter held inside its drain, around read(2)", &b);

	CHECK(ok(&a) && ok(&b), "an FD wait object stayed readable after "
	      "lfp_trywait returned 0 on an empty EQ, while another thread was "
	      "held inside the signal protocol (wait_fd.h lfp__wait_fd_post / "
	      "lfp__wait_fd_drain): waiters spin in poll(2) instead of sleeping, "
	      "and lfp_eq_sread overruns its timeout (lfp__wait_fd_sleep reports "
	      "-ETIMEDOUT only when poll(2) returns 0), for as long as that "
	      "thread is descheduled");
	printf("stress_eq_wake_window: PASS%s\n", stress_tsan() ? " [tsan]" : "");
	return 0;
}
