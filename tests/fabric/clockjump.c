/*
 * clockjump: a clock that has always just moved on, for fabdiff.
 *
 * Preloaded (LD_PRELOAD) into fabdiff, it makes every clock_gettime
 * answer 5 ms later than the one before.  A timed wait of libfabric's
 * utility code reads the clock when it starts and again before it checks
 * a CQ's signal or waits on its wait object; with this clock that second
 * read is always past a timeout of 1 or 2 ms, so every such wait ends
 * without a scan.  That is the outcome a preemption, or a millisecond
 * boundary met early, gives a baseline now and then; fabdiff's shadow has
 * to allow for it (struct sh_timing in fabdiff.c), and under this clock
 * it meets it on every timed wait.  The lfpoll provider's single-threaded
 * answers do not depend on the clock: nothing changes while it waits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

#define JUMP_NS 5000000ull

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static uint64_t offset;
	uint64_t off, ns;
	int ret;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	if (!real)
		return -1;
	ret = real(id, ts);
	if (ret == 0) {
		off = __atomic_add_fetch(&offset, JUMP_NS, __ATOMIC_RELAXED);
		ns = (uint64_t)ts->tv_nsec + off % 1000000000u;
		ts->tv_sec += (time_t)(off / 1000000000u + ns / 1000000000u);
		ts->tv_nsec = (long)(ns % 1000000000u);
	}
	return ret;
}
