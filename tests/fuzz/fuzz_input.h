/*
 * Shared helpers for the lfpoll fuzz targets (tests/fuzz/fuzz_*.c): a byte
 * stream decoder, the mismatch report, and a payload pattern.
 *
 * Include it after the lfpoll headers (the build defines the POSIX level
 * they need).
 *
 * Every target decodes its input into a bounded sequence of operations,
 * applies each one both to lfpoll and to a plain sequential model written in
 * the target, and calls abort() with a message on the first difference.
 * An exhausted input reads as zero bytes, so every input is valid.
 *
 * Set LFP_FUZZ_TRACE=1 in the environment to print every operation (handy
 * when reducing a crash: build-fuzz/fuzz_eq crash-file).
 */
#ifndef LFP_FUZZ_INPUT_H
#define LFP_FUZZ_INPUT_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operations per input: keeps every run short and execs/s high. */
#define FUZZ_MAX_OPS 256

struct fin {
	const uint8_t *p;
	size_t n;
};

static inline size_t fin_left(const struct fin *f)
{
	return f->n;
}

static inline uint8_t fin_u8(struct fin *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static inline uint16_t fin_u16(struct fin *f)
{
	uint16_t v = fin_u8(f);

	return (uint16_t)(v | (uint16_t)fin_u8(f) << 8);
}

static inline uint32_t fin_u32(struct fin *f)
{
	uint32_t v = fin_u16(f);

	return v | (uint32_t)fin_u16(f) << 16;
}

static inline uint64_t fin_u64(struct fin *f)
{
	uint64_t v = fin_u32(f);

	return v | (uint64_t)fin_u32(f) << 32;
}

/* ------------------------------------------------------------- reporting */

static int fuzz_trace_on = -1;

static inline int fuzz_tracing(void)
{
	if (fuzz_trace_on < 0) {
		const char *e = getenv("LFP_FUZZ_TRACE");

		fuzz_trace_on = e && *e && *e != '0';
	}
	return fuzz_trace_on;
}

#define TRACE(...)                                                           \
	do {                                                                 \
		if (fuzz_tracing()) {                                        \
			fprintf(stderr, "  ");                               \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
		}                                                            \
	} while (0)

#define FUZZ_FAIL(...)                                                       \
	do {                                                                 \
		fprintf(stderr, "\nlfpoll fuzz: model mismatch at %s:%d: ",  \
		        __FILE__, __LINE__);                                 \
		fprintf(stderr, __VA_ARGS__);                                \
		fputc('\n', stderr);                                         \
		abort();                                                     \
	} while (0)

/* Compare two integers (any width) and abort with both values. */
#define CHECK_EQ(got, want, ...)                                             \
	do {                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);     \
		if (g_ != w_) {                                              \
			fprintf(stderr, "\nlfpoll fuzz: ");                  \
			fprintf(stderr, __VA_ARGS__);                        \
			FUZZ_FAIL("got %lld, the model says %lld", g_, w_);  \
		}                                                            \
	} while (0)

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond))                                                 \
			FUZZ_FAIL(__VA_ARGS__);                              \
	} while (0)

/* ------------------------------------------------------------- broken */

#ifdef LFP_TEST_BROKEN
/*
 * Built with -DLFP_TEST_BROKEN (make fuzz-broken): the defect named by the
 * environment variable LFP_FUZZ_BROKEN is back
 * (include/lfpoll/internal/sched.h), e.g. LFP_FUZZ_BROKEN=A.  The name is
 * matched whole, as stress.h does: "P" does not turn on "P2".
 */
int lfp_test_broken(const char *defect)
{
	static const char *on;
	static int read_env;

	if (!read_env) {
		on = getenv("LFP_FUZZ_BROKEN");
		read_env = 1;
	}
	return on && strcmp(defect, on) == 0;
}
#endif

/* ------------------------------------------------------------- payloads */

/* A byte pattern that differs for every (seed, index). */
/*
 * poll(2) one fd for POLLIN with no timeout: poll's result, *revents set.
 * libFuzzer's -timeout runs on SIGALRM, which can interrupt even a poll
 * that does not wait: EINTR is retried, as lfpoll's own sleeps do.
 */
static inline int fuzz_poll_now(int fd, short *revents)
{
	struct pollfd p;
	int n;

	do {
		p.fd = fd;
		p.events = POLLIN;
		p.revents = 0;
		n = poll(&p, 1, 0);
	} while (n < 0 && errno == EINTR);
	*revents = p.revents;
	return n;
}

static inline void fuzz_pattern(unsigned char *b, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131u + i * 7u + 1u + (seed >> 8));
}

#define FUZZ_CANARY 0xA5

/* Whether b[from..to) still holds the canary. */
static inline int fuzz_canary_ok(const unsigned char *b, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		if (b[i] != FUZZ_CANARY)
			return 0;
	return 1;
}

/* A heap buffer of exactly n bytes (so ASan sees any overflow, even of a
 * zero-byte buffer), filled with the canary; NULL for n == 0 unless
 * nonnull is set. */
static inline unsigned char *fuzz_buf(size_t n, int nonnull)
{
	unsigned char *b;

	if (n == 0 && !nonnull)
		return NULL;
	b = (unsigned char *)malloc(n);
	if (!b && n == 0)
		b = (unsigned char *)malloc(1);
	if (!b)
		abort();
	if (n)
		memset(b, FUZZ_CANARY, n);
	return b;
}

#endif /* LFP_FUZZ_INPUT_H */
