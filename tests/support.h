/*
 * Helpers shared by the Criterion suites, tests/test_*.c.
 *
 * Include it after the lfpoll headers a suite includes first (test_ring.c
 * reads ring.h through its counting allocator before anything else; the
 * build defines the POSIX level every includer needs).  Each helper asserts with
 * Criterion, so a failure stops the test that called it.
 *
 *   now_ms()                  CLOCK_MONOTONIC in milliseconds
 *   fd_readable(fd, ms)       whether fd is readable within ms (0: right now);
 *                             a poll(2) error fails the test
 *   count_fds()               how many file descriptors this process has open
 *   getwait_fd(fid)           the object's fd from LFP_GETWAIT (must succeed)
 *   trywait1(fid)             lfp_trywait over that one object
 *   open_eq_attr(a, ctx)      lfp_eq_open, lfp_cq_open, lfp_cntr_open with
 *   open_cq_attr(a, ctx)      the caller's attributes: must succeed; the
 *   open_cntr_attr(a, ctx)    message names the attributes
 *   open_ws(obj)              lfp_wait_open of a set with wait object obj
 *   opaque_ptr(p), opaque_size(n)
 *                             p and n through a volatile, so that gcc cannot
 *                             propagate them into the headers and warn
 *                             (-Wnonnull, -Warray-bounds) about paths the
 *                             headers' own checks make unreachable: the tests
 *                             are about what happens at run time
 *   pattern(buf, len, seed)   a byte pattern that differs for every
 *                             (seed, index)
 *
 * Suites keep their own wrappers where a file always opens with the same
 * attributes (test_cq.c's thresholds, test_wait.c's members).
 */
#ifndef LFP_TESTS_SUPPORT_H
#define LFP_TESTS_SUPPORT_H

#include <lfpoll/lfpoll.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

static inline int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int n = poll(&p, 1, timeout_ms);

	cr_assert_geq(n, 0, "poll: %s", strerror(errno));
	return n > 0 && (p.revents & POLLIN);
}

static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "opendir(/proc/self/fd): %s", strerror(errno));
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static inline int getwait_fd(struct lfp_fid *fid)
{
	int fd = -1, ret = lfp_control(fid, LFP_GETWAIT, &fd);

	cr_assert_eq(ret, 0, "LFP_GETWAIT = %d", ret);
	cr_assert_geq(fd, 0, "LFP_GETWAIT gave fd %d", fd);
	return fd;
}

static inline int trywait1(struct lfp_fid *fid)
{
	return lfp_trywait(&fid, 1);
}

static inline struct lfp_eq *open_eq_attr(const struct lfp_eq_attr *a, void *ctx)
{
	struct lfp_eq *eq = NULL;
	int ret = lfp_eq_open(a, &eq, ctx);

	cr_assert_eq(ret, 0, "lfp_eq_open(size %zu, flags %#llx, wait %d, "
	             "entry_size %zu) = %d", a->size, (unsigned long long)a->flags,
	             (int)a->wait_obj, a->entry_size, ret);
	cr_assert_not_null(eq);
	return eq;
}

static inline struct lfp_cq *open_cq_attr(const struct lfp_cq_attr *a, void *ctx)
{
	struct lfp_cq *cq = NULL;
	int ret = lfp_cq_open(a, &cq, ctx);

	cr_assert_eq(ret, 0, "lfp_cq_open(format %d, wait %d, size %zu): %d",
	             (int)a->format, (int)a->wait_obj, a->size, ret);
	cr_assert_not_null(cq);
	return cq;
}

static inline struct lfp_cntr *open_cntr_attr(const struct lfp_cntr_attr *a,
                                              void *ctx)
{
	struct lfp_cntr *c = NULL;
	int ret = lfp_cntr_open(a, &c, ctx);

	cr_assert_eq(ret, 0, "lfp_cntr_open(wait %d): %d", (int)a->wait_obj, ret);
	cr_assert_not_null(c);
	return c;
}

static inline struct lfp_wait *open_ws(enum lfp_wait_obj obj)
{
	struct lfp_wait_attr a = { obj, 0 };
	struct lfp_wait *ws = NULL;
	int ret = lfp_wait_open(&a, &ws);

	cr_assert_eq(ret, 0, "lfp_wait_open(%d): %d", (int)obj, ret);
	cr_assert_not_null(ws);
	return ws;
}

static inline void *opaque_ptr(void *p)
{
	void *volatile v = p;

	return v;
}

static inline size_t opaque_size(size_t n)
{
	volatile size_t v = n;

	return v;
}

/* A byte pattern that differs for every (seed, index). */
static inline void pattern(unsigned char *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed * 131u + i * 7u + 1u + (seed >> 8));
}

#endif /* LFP_TESTS_SUPPORT_H */
