/*
 * Helpers shared by the standalone stress programs, tests/stress_*.c.
 *
 * A stress program is a plain C program with its own main(), not a
 * Criterion suite, so that it also runs under ThreadSanitizer (make check
 * SANITIZE=thread), where Criterion's runner cannot start.  It exits 0 when
 * every invariant held and 1 at the first that did not (CHECK), and prints
 * one summary line; tests/run-tests counts it as one test.
 *
 * Under -std=c11, build with -D_POSIX_C_SOURCE=200809L (the Makefile does)
 * or define _GNU_SOURCE before any include: these helpers use
 * clock_gettime, sched_yield and pthreads.
 *
 *   CHECK(cond, fmt, ...)      on failure print file:line, the condition and
 *                              the message, and exit 1 (from any thread)
 *   stress_scale()             1, or 10 when LFP_STRESS=long (make stress)
 *   stress_share()             the share of a plain run's work this run
 *                              makes: 1/2 under ASan or LFP_STRESS=short
 *   STRESS_TSAN, stress_tsan() 1 in a ThreadSanitizer build, else 0
 *   STRESS_ASAN             1 in an AddressSanitizer build, else 0
 *   stress_count(n, n_tsan)    a default count: n (n_tsan under TSan) times
 *                              stress_share() and stress_scale()
 *   stress_seconds(s)          a default phase length: s seconds times
 *                              stress_share() and stress_scale()
 *   stress_now_ns()            CLOCK_MONOTONIC in nanoseconds
 *   stress_seconds_since(t0)   seconds elapsed since stress_now_ns() gave t0
 *   stress_deadline_in(s, what), CHECK_DEADLINE(&d)
 *                              fail with a message, instead of hanging, once
 *                              s seconds have passed
 *   stress_watchdog_start(), stress_watchdog_stop()
 *                              a thread that fails the program if the work
 *                              between the two calls outlives a deadline,
 *                              even when it hangs inside the code under test
 *   stress_backoff(&spins)     a waiting loop's pause: spin briefly, then
 *                              yield the CPU, then sleep (threads outnumber
 *                              cores, and the machine may be busy)
 *   stress_rand(&state)        a small, seedable PRNG (splitmix64)
 *   stress_checksum(h, p, n)   FNV-1a over n bytes, chained through h
 *   stress_spawn(), stress_join()  pthread_create/join that CHECK
 *   stress_await(v, want, d, what)
 *                              back off until *v >= want; past the deadline
 *                              d, fail saying how far it got
 *   struct stress_crew         a phase's threads, of one or more kinds, over
 *                              one shared state (see "crews" below)
 *
 * Never put a wall-clock performance threshold in a stress test: deadlines
 * here only turn a hang into a failure, and should be generous.
 */
#ifndef LFP_TESTS_STRESS_H
#define LFP_TESTS_STRESS_H

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ failing */

__attribute__((noreturn, format(printf, 4, 5)))
static inline void stress_fail(const char *file, int line, const char *cond,
                               const char *fmt, ...)
{
	va_list ap;

	flockfile(stderr);
	fprintf(stderr, "%s:%d: CHECK(%s) failed: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
	fflush(NULL);
	/* _Exit, not exit: other threads are still running, and exit() would
	 * run atexit handlers and destructors underneath them. */
	_Exit(1);
}

/* ------------------------------------------------------------ broken */

/*
 * The broken builds of the stress programs (make check-broken; the table
 * in tests/sched.mk): compiled with -DLFP_TEST_BROKEN -DLFP_STRESS_BROKEN,
 * a program brings back the one fixed defect that LFP_BROKEN names
 * (LFP__BROKEN in include/lfpoll/internal/sched.h) and must then fail.
 * The name is read once, before main, so that the hot paths that ask pay
 * a compare and no getenv.  With a defect named, every deadline is at most
 * STRESS_BROKEN_LIMIT seconds: a lost wake-up is then reported in seconds
 * (the phases take well under one each), not after the minutes a loaded
 * machine may need for a healthy run.  A program whose healthy phases are
 * longer runs shorter ones when stress_broken_run() says a defect is named.
 */
#define STRESS_BROKEN_LIMIT 5.0
#ifdef LFP_STRESS_BROKEN
static char stress_broken[8];

__attribute__((constructor)) static void stress_broken_init(void)
{
	const char *b = getenv("LFP_BROKEN");

	if (b)
		snprintf(stress_broken, sizeof(stress_broken), "%s", b);
}

int lfp_test_broken(const char *defect)
{
	return stress_broken[0] && strcmp(defect, stress_broken) == 0;
}

static int stress_broken_uncapped;

static inline double stress_broken_limit(double seconds)
{
	return stress_broken[0] && !stress_broken_uncapped &&
	       seconds > STRESS_BROKEN_LIMIT ? STRESS_BROKEN_LIMIT : seconds;
}

/*
 * Lift the limit, before any deadline or watchdog is set: for a program
 * whose defect shows only when two threads meet in a rare window, so that
 * its search may need longer than STRESS_BROKEN_LIMIT (stress_poll_asym).
 */
static inline void stress_broken_uncap(void)
{
	stress_broken_uncapped = 1;
}

/* Whether a defect is named: a program may then run shorter phases. */
static inline int stress_broken_run(void)
{
	return stress_broken[0] != 0;
}
#else
static inline double stress_broken_limit(double seconds)
{
	return seconds;
}

static inline void stress_broken_uncap(void)
{
}

static inline int stress_broken_run(void)
{
	return 0;
}
#endif

/*
 * CHECK(cond, fmt, ...): the format and its arguments are mandatory, so
 * that every failure says what was expected and what was seen.
 */
#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond))                                                    \
			stress_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);    \
	} while (0)

/* ------------------------------------------------------------ sizing */

/* Whether the environment has LFP_STRESS=value ("long", "short"). */
static inline int stress_env_is(const char *value)
{
	const char *s = getenv("LFP_STRESS");

	return s && strcmp(s, value) == 0;
}

/* 1 by default; 10 when the environment has LFP_STRESS=long.  It lengthens
 * deadlines as well as the work. */
static inline unsigned stress_scale(void)
{
	return stress_env_is("long") ? 10 : 1;
}

#if defined(__SANITIZE_THREAD__)
#  define STRESS_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define STRESS_TSAN 1
#  endif
#endif
#ifndef STRESS_TSAN
#  define STRESS_TSAN 0
#endif
/* 1 in an AddressSanitizer build: it cannot follow the unwinding of a
 * cancelled thread (the C cleanup handlers' jump leaves the dead frames'
 * stack poisoned, and the thread's exit then trips on it), so the tests
 * that cancel threads run in the plain and the ThreadSanitizer builds. */
#if defined(__SANITIZE_ADDRESS__)
#  define STRESS_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define STRESS_ASAN 1
#  endif
#endif
#ifndef STRESS_ASAN
#  define STRESS_ASAN 0
#endif

/* 1 when built with -fsanitize=thread (gcc or clang). */
static inline int stress_tsan(void)
{
	return STRESS_TSAN;
}

/*
 * The share of a plain run's rounds and seconds that this run makes (its
 * deadlines stay as they are).  Half in two runs that are not there for
 * the races, which the plain and TSan runs hunt at full length:
 *  - the ASan+UBSan build looks for memory and undefined-behaviour faults,
 *    which any schedule shows;
 *  - LFP_STRESS=short, which make check-arm64 sets: under qemu-user on an
 *    x86 host the emulated CPU orders memory as the host does
 *    (tests/arm64/README.md), so that run shows that the aarch64 code
 *    paths work, and a longer run there finds no reordering.
 */
static inline double stress_share(void)
{
	return STRESS_ASAN || stress_env_is("short") ? 0.5 : 1.0;
}

/*
 * A default iteration count: n, or n_tsan in a TSan build (TSan runs
 * threaded code 5-20 times slower), times stress_share() and
 * stress_scale().
 */
static inline uint64_t stress_count(uint64_t n, uint64_t n_tsan)
{
	return (uint64_t)((STRESS_TSAN ? n_tsan : n) * stress_share()) *
	       stress_scale();
}

/* A default phase length in seconds: s times stress_share() and
 * stress_scale(). */
static inline double stress_seconds(double s)
{
	return s * stress_share() * stress_scale();
}

/* ------------------------------------------------------------ time */

static inline uint64_t stress_now_ns(void)
{
	struct timespec ts;

	CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0, "clock_gettime failed");
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double stress_seconds_since(uint64_t t0_ns)
{
	return (double)(stress_now_ns() - t0_ns) / 1e9;
}

struct stress_deadline {
	uint64_t end_ns;
	double seconds;
	const char *what;
};

/* A deadline s seconds from now; what names the work in the message. */
static inline struct stress_deadline stress_deadline_in(double seconds,
                                                        const char *what)
{
	struct stress_deadline d;

	seconds = stress_broken_limit(seconds);
	d.end_ns = stress_now_ns() + (uint64_t)(seconds * 1e9);
	d.seconds = seconds;
	d.what = what;
	return d;
}

static inline int stress_deadline_passed(const struct stress_deadline *d)
{
	return stress_now_ns() > d->end_ns;
}

/* Fail, naming the caller's file and line, once the deadline has passed. */
#define CHECK_DEADLINE(d)                                                       \
	CHECK(!stress_deadline_passed(d), "%s: not done after %.0f s "          \
	      "(a hang, or a lost wake-up or entry)", (d)->what, (d)->seconds)

/*
 * A watchdog: a thread that waits for stress_watchdog_stop() and, if the
 * deadline comes first, calls report(arg) (when not NULL) to print the
 * state of the work and fails the program.  Unlike CHECK_DEADLINE, it also
 * catches a thread stuck inside the code under test.
 */
struct stress_watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	struct stress_deadline deadline;
	void (*report)(void *arg);
	void *arg;
};

static inline void *stress__watchdog_main(void *arg)
{
	struct stress_watchdog *w = (struct stress_watchdog *)arg;
	struct timespec ts;

	ts.tv_sec = (time_t)(w->deadline.end_ns / 1000000000u);
	ts.tv_nsec = (long)(w->deadline.end_ns % 1000000000u);
	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) != 0 &&
		    !w->stop && stress_deadline_passed(&w->deadline)) {
			if (w->report)
				w->report(w->arg);
			stress_fail(__FILE__, __LINE__, "watchdog", "%s: not done "
			            "after %.0f s (a hang, or a lost wake-up or "
			            "entry)", w->deadline.what, w->deadline.seconds);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static inline void stress_watchdog_start(struct stress_watchdog *w,
                                         double seconds, const char *what,
                                         void (*report)(void *arg), void *arg)
{
	pthread_condattr_t ca;
	int ret;

	w->stop = 0;
	w->report = report;
	w->arg = arg;
	w->deadline = stress_deadline_in(seconds, what);
	CHECK(pthread_mutex_init(&w->lock, NULL) == 0, "pthread_mutex_init");
	/* The deadline is on CLOCK_MONOTONIC, and so is the wait. */
	CHECK(pthread_condattr_init(&ca) == 0 &&
	      pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	      pthread_cond_init(&w->cond, &ca) == 0, "watchdog condition");
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&w->thread, NULL, stress__watchdog_main, w);
	CHECK(ret == 0, "pthread_create: %s", strerror(ret));
}

static inline void stress_watchdog_stop(struct stress_watchdog *w)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	ret = pthread_join(w->thread, NULL);
	CHECK(ret == 0, "pthread_join: %s", strerror(ret));
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

/* ------------------------------------------------------------ waiting */

/*
 * One round of a waiting loop.  Start *spins at 0 and reset it after
 * progress.  The first rounds spin; then each round yields, because the
 * thread being waited for may need this CPU (a 2-core machine running eight
 * threads); after that each round sleeps 50 us, so that a loaded machine
 * still runs the thread being waited for (a preempted producer holds up
 * every consumer behind its slot).
 */
static inline void stress_backoff(unsigned *spins)
{
	struct timespec ts = { 0, 50000 };

	if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__asm__ __volatile__("pause" ::: "memory");
#else
		__asm__ __volatile__("" ::: "memory");
#endif
		return;
	}
	if (*spins < 256) {
		sched_yield();
		return;
	}
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ data */

/* splitmix64: seed *state with anything, including 0. */
static inline uint64_t stress_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

#define STRESS_CHECKSUM_INIT 2166136261u

/* FNV-1a: start with STRESS_CHECKSUM_INIT, chain by passing the result. */
static inline uint32_t stress_checksum(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* ------------------------------------------------------------ threads */

static inline void stress_spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int ret = pthread_create(t, NULL, fn, arg);

	CHECK(ret == 0, "pthread_create: %s", strerror(ret));
}

static inline void stress_join(pthread_t t)
{
	int ret = pthread_join(t, NULL);

	CHECK(ret == 0, "pthread_join: %s", strerror(ret));
}

/*
 * Wait, with a deadline, until *v reaches want; what names the count in the
 * failure message (with the deadline's own what and how far it got).
 */
static inline void stress_await(_Atomic uint64_t *v, uint64_t want,
                                const struct stress_deadline *d,
                                const char *what)
{
	struct timespec ts = { 0, 50000 };
	unsigned spins = 0;

	while (atomic_load(v) < want) {
		if (spins > 200)
			nanosleep(&ts, NULL);
		else
			stress_backoff(&spins);
		spins++;
		CHECK(!stress_deadline_passed(d), "%s: %s: %llu of %llu after "
		      "%.0f s (a lost wake-up or event)", d->what, what,
		      (unsigned long long)atomic_load(v), (unsigned long long)want,
		      d->seconds);
	}
}

/* ------------------------------------------------------------ crews */

/*
 * A crew runs a phase's threads: n threads of a kind at a time, each given
 * its own struct stress_worker (the shared state, and its number 0..n-1
 * among the threads of that kind), all of them able to meet at a start
 * barrier sized for the whole crew.
 *
 *   stress_crew_init(&c, shared, size)  a crew of size threads at most
 *   stress_crew_spawn(&c, n, fn)        n threads running fn(worker);
 *                                       returns the index of the first
 *   stress_crew_start(w)                in a thread: wait until all size
 *                                       threads are there (only if every
 *                                       thread of the crew calls it)
 *   stress_crew_join(&c, first, n)      join n threads from index first
 *   stress_crew_fini(&c)                join the rest; free the barrier
 *   stress_crew_run(&c, shared, kinds)  all of it for a crew that needs no
 *                                       more than to be started and joined:
 *                                       kinds lists {n, fn}, spawned in that
 *                                       order, ending with {0, NULL}
 *
 * The crew must outlive its threads: their workers live in it.
 */
#define STRESS_CREW_MAX 16

struct stress_crew;

struct stress_worker {
	struct stress_crew *crew;
	void *shared;
	unsigned id;
	int joined;
	pthread_t thread;
};

struct stress_crew {
	void *shared;
	unsigned n, size;
	pthread_barrier_t start;
	struct stress_worker w[STRESS_CREW_MAX];
};

static inline void stress_crew_init(struct stress_crew *c, void *shared,
                                    unsigned size)
{
	int ret;

	CHECK(size > 0 && size <= STRESS_CREW_MAX, "a crew of %u threads "
	      "(1 to %d)", size, STRESS_CREW_MAX);
	memset(c, 0, sizeof(*c));
	c->shared = shared;
	c->size = size;
	ret = pthread_barrier_init(&c->start, NULL, size);
	CHECK(ret == 0, "pthread_barrier_init: %s", strerror(ret));
}

static inline unsigned stress_crew_spawn(struct stress_crew *c, unsigned n,
                                         void *(*fn)(void *))
{
	unsigned first = c->n, i;

	CHECK(n <= c->size - c->n, "%u more threads in a crew of %u with %u",
	      n, c->size, c->n);
	for (i = 0; i < n; i++) {
		c->w[first + i].crew = c;
		c->w[first + i].shared = c->shared;
		c->w[first + i].id = i;
		stress_spawn(&c->w[first + i].thread, fn, &c->w[first + i]);
	}
	c->n += n;
	return first;
}

static inline void stress_crew_start(struct stress_worker *w)
{
	pthread_barrier_wait(&w->crew->start);
}

static inline void stress_crew_join(struct stress_crew *c, unsigned first,
                                    unsigned n)
{
	unsigned i;

	CHECK(first + n <= c->n, "join of threads %u..%u of %u", first,
	      first + n, c->n);
	for (i = first; i < first + n; i++) {
		CHECK(!c->w[i].joined, "thread %u joined twice", i);
		stress_join(c->w[i].thread);
		c->w[i].joined = 1;
	}
}

static inline void stress_crew_fini(struct stress_crew *c)
{
	unsigned i;

	for (i = 0; i < c->n; i++)
		if (!c->w[i].joined)
			stress_crew_join(c, i, 1);
	pthread_barrier_destroy(&c->start);
}

struct stress_kind {
	unsigned n;
	void *(*fn)(void *);
};

static inline void stress_crew_run(struct stress_crew *c, void *shared,
                                   const struct stress_kind *kinds)
{
	const struct stress_kind *k;
	unsigned size = 0;

	for (k = kinds; k->n; k++)
		size += k->n;
	stress_crew_init(c, shared, size);
	for (k = kinds; k->n; k++)
		stress_crew_spawn(c, k->n, k->fn);
	stress_crew_fini(c);
}

#endif /* LFP_TESTS_STRESS_H */
