/*
 * lfpoll included first, then the C library, in the modes users build in:
 * -std=gnu11, -std=c11 -D_POSIX_C_SOURCE=200809L and C++17 (the C++
 * compilers define _GNU_SOURCE).  lfpoll must not change what the includer's
 * mode shows: a header that defined a feature-test macro would hide the BSD
 * and GNU calls below under gnu11 (implicit declarations, errors with
 * -Werror).  tests/compile.mk builds and runs this file.
 */
#include <lfpoll/lfpoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* What glibc shows by default (_DEFAULT_SOURCE): BSD and XSI calls. */
#if !defined(__STRICT_ANSI__) || defined(_DEFAULT_SOURCE) || defined(_GNU_SOURCE)
#define LFP_TEST_DEFAULT_SOURCE 1
#endif

int main(void)
{
	struct timespec ts = { 0, 1000 };
	char text[] = "first line\nsecond line\n";
	char *line = NULL, *dup;
	size_t cap = 0;
	FILE *f;
	int fail = 0;

	/* POSIX.1-2008: every mode. */
	fail |= clock_gettime(CLOCK_MONOTONIC, &ts) != 0;
	ts.tv_sec = 0;
	ts.tv_nsec = 1000;
	fail |= nanosleep(&ts, NULL) != 0;
	dup = strndup("lfpoll-first", 6);
	fail |= !dup || strcasecmp(dup, "LFPOLL") != 0;
	free(dup);
	f = fmemopen(text, sizeof(text) - 1, "r");
	fail |= !f || getline(&line, &cap, f) != 11 || fileno(f) != -1;
	free(line);
	if (f)
		fclose(f);

#ifdef LFP_TEST_DEFAULT_SOURCE
	{
		struct timeval a = { 1, 500000 }, b = { 0, 600000 }, d;
		char words[] = "a,b", *rest = words;

		fail |= usleep(1) != 0;
		timersub(&a, &b, &d);
		fail |= d.tv_sec != 0 || d.tv_usec != 900000;
		fail |= strcmp(strsep(&rest, ","), "a") != 0;
		srandom(1);
		(void)random();
	}
#endif
#ifdef _GNU_SOURCE
	{
		char *s = NULL;

		fail |= asprintf(&s, "%d", 7) != 1;
		free(s);
	}
#endif
	/* And lfpoll itself works. */
	{
		struct lfp_eq_attr attr;
		struct lfp_eq *eq;
		uint32_t event;
		int v = 7;

		memset(&attr, 0, sizeof(attr));
		attr.size = 4;
		attr.wait_obj = LFP_WAIT_NONE;
		fail |= lfp_eq_open(&attr, &eq, NULL) != 0;
		if (!fail) {
			fail |= lfp_eq_write(eq, LFP_EVENT_USER, &v, sizeof(v), 0) != (ssize_t)sizeof(v);
			v = 0;
			fail |= lfp_eq_read(eq, &event, &v, sizeof(v), 0) != (ssize_t)sizeof(v) || v != 7;
			fail |= lfp_eq_close(eq) != 0;
		}
	}
	/* And a blocking CQ read, whose sleep carries a cancellation cleanup
	 * handler (pthread_cleanup_push differs between C and C++). */
	{
		struct lfp_cq_attr attr;
		struct lfp_cq *cq;
		struct lfp_cq_entry e, out;

		memset(&attr, 0, sizeof(attr));
		memset(&e, 0, sizeof(e));
		attr.size = 4;
		attr.wait_obj = LFP_WAIT_MUTEX_COND;
		fail |= lfp_cq_open(&attr, &cq, NULL) != 0;
		if (!fail) {
			fail |= lfp_cq_sread(cq, &out, 1, NULL, 0) != -EAGAIN;
			fail |= lfp_cq_write(cq, &e, 1) != 1;
			fail |= lfp_cq_sread(cq, &out, 1, NULL, 0) != 1;
			fail |= lfp_cq_close(cq) != 0;
		}
	}
	if (fail)
		fprintf(stderr, "include_first: a C library call failed\n");
	return fail;
}
