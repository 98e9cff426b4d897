/*
 * lfpoll ring: single-threaded behaviour of every call in ring.h, and
 * lfp_strerror from common.h.  The multi-threaded properties (exactly-once,
 * per-producer FIFO, untorn peeks under contention) are in stress_ring.c,
 * which also runs under ThreadSanitizer.
 *
 * lfp_ring_create's allocator calls are routed through a counting wrapper
 * (the two #defines below, active only while ring.h is read) so that tests
 * can prove that bad input never allocates, that destroy frees exactly what
 * create took, and that an allocation failure leaks nothing.
 *
 * Every test runs in each ring mode: this file is the default mode, and
 * test_ring_sp.c, test_ring_sc.c and test_ring_index.c include it with
 * RING_FLAGS set (LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER, both).
 */
#define _POSIX_C_SOURCE 200809L /* before any include: -std=c11 hides POSIX */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <criterion/criterion.h>

static int counting_posix_memalign(void **p, size_t align, size_t size);
static void counting_free(void *p);
#define posix_memalign counting_posix_memalign
#define free counting_free
#include <lfpoll/ring.h>
#undef posix_memalign
#undef free

#include "support.h" /* after ring.h: its allocator calls are counted */

/* The mode under test: the plain calls for the default mode, the _flags
 * forms for the others. */
#ifndef RING_FLAGS
#  define RING_FLAGS 0
#endif
#if RING_FLAGS == 0
#  define ring_create(c, s, r)  lfp_ring_create(c, s, r)
#  define ring_init(r, m, c, s) lfp_ring_init(r, m, c, s)
#  define ring_memsize(c, s)    lfp_ring_memsize(c, s)
#else
#  define ring_create(c, s, r)  lfp_ring_create_flags(c, s, RING_FLAGS, r)
#  define ring_init(r, m, c, s) lfp_ring_init_flags(r, m, c, s, RING_FLAGS)
#  define ring_memsize(c, s)    lfp_ring_memsize_flags(c, s, RING_FLAGS)
#endif
#define RING_INDEX (RING_FLAGS == (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER))
/* Bytes of memory an entry needs beside its payload: a slot word, or in an
 * index ring its metadata. */
#define RING_ENTRY_OVERHEAD (RING_INDEX ? 4 : 8)

static int alloc_calls;   /* posix_memalign calls made by ring.h */
static int alloc_ok;      /* ... of which succeeded */
static int free_calls;    /* free calls made by ring.h */
static int fail_alloc_at; /* make the n-th call fail with ENOMEM (0: never) */

static int counting_posix_memalign(void **p, size_t align, size_t size)
{
	if (++alloc_calls == fail_alloc_at)
		return ENOMEM;
	if (posix_memalign(p, align, size) != 0)
		return ENOMEM;
	alloc_ok++;
	return 0;
}

static void counting_free(void *p)
{
	free_calls++;
	free(p);
}

static void reset_alloc_counts(void)
{
	alloc_calls = alloc_ok = free_calls = fail_alloc_at = 0;
}

/* -------------------------------------------------------------- helpers */

static struct lfp_ring *make_ring(size_t capacity, size_t slot_size)
{
	struct lfp_ring *r = NULL;
	int ret = ring_create(capacity, slot_size, &r);

	cr_assert_eq(ret, 0, "lfp_ring_create(%zu, %zu) = %d", capacity,
	             slot_size, ret);
	cr_assert_not_null(r);
	return r;
}

/*
 * A struct lfp_ring for a ring over caller memory, on the heap: gcc 12 -O2
 * reports lfp_ring_destroy() of a stack or static struct with
 * -Wfree-nonheap-object (it cannot see that owns_mem is 0 there), which
 * -Werror turns into a build failure.
 */
static struct lfp_ring *ring_struct(void)
{
	struct lfp_ring *r = aligned_alloc(LFP_CACHELINE_PAIR, sizeof(*r));

	cr_assert_not_null(r);
	return r;
}

static void put(struct lfp_ring *r, unsigned seed, size_t len)
{
	unsigned char src[512];
	int ret;

	cr_assert_leq(len, sizeof(src));
	pattern(src, len, seed);
	ret = lfp_ring_enqueue(r, src, len);
	cr_assert_eq(ret, 0, "enqueue seed %u len %zu = %d", seed, len, ret);
}

/* Dequeue with a roomy buffer and check length and every byte. */
static void take(struct lfp_ring *r, unsigned seed, size_t len)
{
	unsigned char want[512], got[512];
	ssize_t n;

	cr_assert_leq(len, sizeof(want));
	pattern(want, len, seed);
	memset(got, 0xEE, sizeof(got));
	n = lfp_ring_dequeue(r, got, sizeof(got));
	cr_assert_eq(n, (ssize_t)len, "dequeue seed %u: got %zd, want %zu",
	             seed, n, len);
	cr_assert_arr_eq(got, want, len, "dequeue seed %u: payload differs", seed);
	cr_assert_eq(got[len], 0xEE, "dequeue wrote past the entry's length");
}

static void expect_empty(struct lfp_ring *r)
{
	unsigned char buf[16];
	uint64_t t = 0;

	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), -EAGAIN);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), -EAGAIN);
	cr_assert_eq(lfp_ring_count(r), 0);
}

/* A hang (a corrupted slot word can make a claim loop spin) fails the test. */
TestSuite(ring, .timeout = 60);
TestSuite(strerror, .timeout = 60);

/* -------------------------------------------------------------- empty/full */

Test(ring, empty_ring_has_nothing_to_take)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char buf[16], untouched[16];
	uint64_t t = 0;

	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_ring_count(r), 0);
	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), -EAGAIN);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), -EAGAIN);
	cr_assert_eq(lfp_ring_dequeue_burst(r, buf, 4, 4), 0);
	cr_assert_arr_eq(buf, untouched, sizeof(buf), "an empty ring wrote to dst");

	/* Emptied again after one entry went through. */
	put(r, 1, 5);
	cr_assert_eq(lfp_ring_count(r), 1);
	take(r, 1, 5);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/*
 * A peek that fails still writes its ticket, one that names no entry:
 * lfp_ring_consume refuses it and takes nothing (and a caller's compiler
 * sees the ticket written on every path: tests/compile/user_ring.c).
 */
#define UNWRITTEN ((uint64_t)1 << 62) /* no position these tests reach */

Test(ring, a_failed_peek_leaves_a_ticket_that_consumes_nothing)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char buf[16];
	uint64_t t;
	int i;

	for (i = 0; i < 3; i++) { /* tail at 0, then after some laps */
		t = UNWRITTEN;
		cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), -EAGAIN);
		cr_assert_neq(t, UNWRITTEN, "an empty peek left its ticket as it was");
		cr_assert_eq(lfp_ring_consume(r, t), -ESTALE, "lap %d", i);
		put(r, 1, 16);
		t = UNWRITTEN;
		cr_assert_eq(lfp_ring_peek(r, buf, 8, &t), -LFP_ETOOSMALL);
		cr_assert_neq(t, UNWRITTEN, "a short peek left its ticket as it was");
		cr_assert_eq(lfp_ring_consume(r, t), -ESTALE, "lap %d", i);
		cr_assert_eq(lfp_ring_count(r), 1, "the entry stays");
		take(r, 1, 16);
		put(r, 2, 5);
		take(r, 2, 5);
	}
	lfp_ring_destroy(r);
}

/* A ring in raw memory at less than its type's alignment is refused: on a
 * 32-bit target its positions could cross a cache line. */
Test(ring, init_refuses_a_ring_not_8_byte_aligned)
{
	static unsigned char raw[sizeof(struct lfp_ring) + 8]
		__attribute__((aligned(64)));
	static uint64_t mem[1024];
	size_t off;

	cr_assert_geq(_Alignof(struct lfp_ring), 8);
	cr_assert_leq(lfp_ring_memsize(8, 16), sizeof(mem));
	for (off = 1; off < 8; off++)
		cr_assert_eq(ring_init((struct lfp_ring *)(void *)(raw + off), mem,
		                       8, 16), -EINVAL, "r at 8k + %zu", off);
	cr_assert_eq(ring_init((struct lfp_ring *)(void *)(raw + 8), mem, 8, 16), 0);
}

Test(ring, full_ring_refuses_enqueue_and_overwrites_nothing)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char extra[16];
	unsigned i;

	cr_assert_eq(lfp_ring_capacity(r), 8);
	for (i = 0; i < 8; i++) {
		put(r, i, i + 1);
		cr_assert_eq(lfp_ring_count(r), i + 1);
	}
	pattern(extra, sizeof(extra), 99);
	cr_assert_eq(lfp_ring_enqueue(r, extra, 3), -EAGAIN);
	cr_assert_eq(lfp_ring_enqueue_burst(r, extra, 4, 2), 0);
	cr_assert_eq(lfp_ring_count(r), 8);

	/* One slot freed: exactly one more fits. */
	take(r, 0, 1);
	put(r, 8, 9);
	cr_assert_eq(lfp_ring_enqueue(r, extra, 3), -EAGAIN);
	cr_assert_eq(lfp_ring_count(r), 8);

	for (i = 1; i <= 8; i++)
		take(r, i, i + 1);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, wraps_around_many_times_keeping_order)
{
	struct lfp_ring *r = make_ring(4, 16);
	unsigned char extra[1] = { 0 };
	unsigned i;

	/* Pairs on an otherwise empty ring. */
	for (i = 0; i < 100000; i++) {
		put(r, i, i % 17);
		cr_assert_eq(lfp_ring_count(r), 1);
		take(r, i, i % 17);
	}
	expect_empty(r);

	/* Pairs on a ring kept full: every enqueue lands in the slot that the
	 * previous dequeue freed, one lap behind. */
	for (i = 0; i < 3; i++)
		put(r, i, i % 17);
	for (i = 0; i < 100000; i++) {
		put(r, i + 3, (i + 3) % 17);
		cr_assert_eq(lfp_ring_count(r), 4);
		cr_assert_eq(lfp_ring_enqueue(r, extra, 1), -EAGAIN);
		take(r, i, i % 17);
	}
	for (i = 100000; i < 100003; i++)
		take(r, i, i % 17);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, every_slot_size_round_trips_every_length)
{
	unsigned char src[257 + 16], want[257 + 16], dst[257 + 16];
	size_t slot, len, cap;
	ssize_t n;
	uint64_t t = 0;

	for (slot = 1; slot <= 256; slot++) {
		struct lfp_ring *r = make_ring(4, slot);

		cr_assert_eq(lfp_ring_slot_size(r), slot);
		cr_assert_eq(lfp_ring_capacity(r), 4);
		for (len = 0; len <= slot; len++) {
			unsigned seed = (unsigned)(slot * 1000 + len);

			pattern(src, len, seed);
			memcpy(want, src, len);
			memset(dst, 0xEE, sizeof(dst));
			cr_assert_eq(lfp_ring_enqueue(r, src, len), 0,
			             "slot %zu len %zu", slot, len);
			/* Alternate roomy and exact buffers, dequeue and peek. */
			cap = (len % 2) ? len : slot;
			if ((len / 2) % 2 == 0) {
				n = lfp_ring_dequeue(r, dst, cap);
			} else {
				n = lfp_ring_peek(r, dst, cap, &t);
				cr_assert_eq(n, (ssize_t)len, "slot %zu len %zu: "
				             "peek = %zd", slot, len, n);
				cr_assert_eq(lfp_ring_consume(r, t), 0);
			}
			cr_assert_eq(n, (ssize_t)len, "slot %zu len %zu cap %zu: "
			             "got %zd", slot, len, cap, n);
			cr_assert_arr_eq(dst, want, len, "slot %zu len %zu: "
			                 "payload differs", slot, len);
			cr_assert_eq(dst[len], 0xEE, "slot %zu len %zu: wrote "
			             "past the entry", slot, len);
		}
		pattern(src, slot + 1, 7);
		cr_assert_eq(lfp_ring_enqueue(r, src, slot + 1), -EMSGSIZE,
		             "slot %zu: oversize accepted", slot);
		expect_empty(r);
		lfp_ring_destroy(r);
	}
}

/* Lines of LFP_CACHELINE bytes that [p, p + n) touches. */
#if !RING_INDEX
static size_t lines_touched(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;

	return (a + n - 1) / LFP_CACHELINE - a / LFP_CACHELINE + 1;
}

/*
 * The layout rule (docs/design.md, "Ring layout"): on line-aligned memory
 * (lfp_ring_create) no payload touches more lines than its size needs, and
 * a payload that fits one line with its slot word shares that line with it.
 */
Test(ring, no_payload_straddles_a_line)
{
	struct lfp__ring_geo g;
	size_t slot, i, need;

	for (slot = 1; slot <= 256; slot++) {
		struct lfp_ring *r = make_ring(8, slot);

		g = lfp__ring_geo(r);
		need = (slot + LFP_CACHELINE - 1) / LFP_CACHELINE;
		for (i = 0; i < 8; i++) {
			const unsigned char *d = lfp__ring_data(&g, i);
			const unsigned char *w = (const unsigned char *)lfp__slot_wordp(&g, i);

			cr_assert_eq(lines_touched(d, slot), need, "slot size %zu, "
			             "slot %zu: the payload at line offset %zu "
			             "touches %zu lines, needs %zu", slot, i,
			             (size_t)((uintptr_t)d % LFP_CACHELINE),
			             lines_touched(d, slot), need);
			cr_assert_eq(lines_touched(w, 8), 1, "slot size %zu: the "
			             "slot word straddles a line", slot);
			if (slot + 8 <= LFP_CACHELINE)
				cr_assert_eq(lines_touched(w < d ? w : d, slot + 8),
				             1, "slot size %zu: word and payload "
				             "fit a line but are split", slot);
		}
		lfp_ring_destroy(r);
	}
}
#else
/* An index ring packs its payloads at a multiple of 8 bytes, so a burst of
 * entries of that size is one contiguous copy. */
Test(ring, index_ring_packs_payloads)
{
	struct lfp__ring_geo g;
	size_t slot, i;

	for (slot = 1; slot <= 256; slot++) {
		struct lfp_ring *r = make_ring(8, slot);

		g = lfp__ring_geo(r);
		for (i = 1; i < 8; i++)
			cr_assert_eq(lfp__ring_data(&g, i) - lfp__ring_data(&g, i - 1),
			             (ptrdiff_t)((slot + 7) & ~(size_t)7),
			             "slot size %zu: payloads not packed", slot);
		lfp_ring_destroy(r);
	}
}
#endif

/* -------------------------------------------------------------- short buffers */

Test(ring, short_buffer_keeps_entry)
{
	struct lfp_ring *r = make_ring(4, 32);
	unsigned char buf[32], untouched[32];

	put(r, 1, 10);
	put(r, 2, 5);
	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_ring_dequeue(r, buf, 9), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_ring_dequeue(r, buf, 0), -LFP_ETOOSMALL);
	cr_assert_arr_eq(buf, untouched, sizeof(buf), "a refused dequeue wrote");
	cr_assert_eq(lfp_ring_count(r), 2);
	take(r, 1, 10);
	take(r, 2, 5);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, short_buffer_keeps_entry_for_peek)
{
	struct lfp_ring *r = make_ring(4, 32);
	unsigned char buf[32], untouched[32], want[10];
	uint64_t t = 0;

	put(r, 1, 10);
	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_ring_peek(r, buf, 9, &t), -LFP_ETOOSMALL);
	cr_assert_arr_eq(buf, untouched, sizeof(buf), "a refused peek wrote");
	cr_assert_eq(lfp_ring_count(r), 1);

	pattern(want, sizeof(want), 1);
	cr_assert_eq(lfp_ring_peek(r, buf, 10, &t), 10);
	cr_assert_arr_eq(buf, want, 10);
	cr_assert_eq(lfp_ring_consume(r, t), 0);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/* -------------------------------------------------------------- oversize */

Test(ring, oversize_enqueue_writes_nothing)
{
	struct lfp_ring *r = make_ring(4, 8);
	unsigned char big[64];

	put(r, 1, 8);
	put(r, 2, 3);
	pattern(big, sizeof(big), 3);
	cr_assert_eq(lfp_ring_enqueue(r, big, 9), -EMSGSIZE);
	cr_assert_eq(lfp_ring_enqueue(r, big, sizeof(big)), -EMSGSIZE);
	/* A length whose low 32 bits are small must not slip through. */
	cr_assert_eq(lfp_ring_enqueue(r, big, opaque_size(((size_t)1 << 32) + 1)),
	             -EMSGSIZE);
	cr_assert_eq(lfp_ring_count(r), 2);
	take(r, 1, 8);
	take(r, 2, 3);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/* An entry that can never fit is -EMSGSIZE even on a full ring, so that a
 * caller retrying on -EAGAIN cannot spin forever on it. */
Test(ring, oversize_enqueue_on_full_ring_is_emsgsize)
{
	struct lfp_ring *r = make_ring(2, 8);
	unsigned char big[9] = { 0 };

	put(r, 1, 8);
	put(r, 2, 8);
	cr_assert_eq(lfp_ring_enqueue(r, big, 9), -EMSGSIZE);
	cr_assert_eq(lfp_ring_count(r), 2);
	take(r, 1, 8);
	take(r, 2, 8);
	lfp_ring_destroy(r);
}

/* -------------------------------------------------------------- peek/consume */

Test(ring, peek_does_not_consume)
{
	struct lfp_ring *r = make_ring(4, 16);
	unsigned char buf[16], want[7];
	uint64_t t1 = 1, t2 = 2;

	put(r, 1, 7);
	put(r, 2, 9);
	pattern(want, sizeof(want), 1);

	memset(buf, 0, sizeof(buf));
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t1), 7);
	cr_assert_arr_eq(buf, want, 7);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t2), 7);
	cr_assert_arr_eq(buf, want, 7);
	cr_assert_eq(t1, t2, "two peeks of one entry gave tickets %llu and %llu",
	             (unsigned long long)t1, (unsigned long long)t2);
	cr_assert_eq(lfp_ring_count(r), 2);

	cr_assert_eq(lfp_ring_consume(r, t1), 0);
	cr_assert_eq(lfp_ring_count(r), 1);
	cr_assert_eq(lfp_ring_consume(r, t1), -ESTALE);
	cr_assert_eq(lfp_ring_count(r), 1);
	take(r, 2, 9);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, consume_after_another_consumer_took_entry_is_stale)
{
	struct lfp_ring *r = make_ring(4, 16);
	unsigned char buf[16];
	uint64_t t = 0, t2 = 0;

	/* The other consumer dequeues. */
	put(r, 1, 7);
	put(r, 2, 9);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), 7);
	take(r, 1, 7);
	cr_assert_eq(lfp_ring_consume(r, t), -ESTALE);
	cr_assert_eq(lfp_ring_count(r), 1, "a stale consume took an entry");
	take(r, 2, 9);
	expect_empty(r);

	/* The other consumer peeks and consumes first. */
	put(r, 3, 4);
	put(r, 4, 5);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), 4);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t2), 4);
	cr_assert_eq(lfp_ring_consume(r, t2), 0);
	cr_assert_eq(lfp_ring_consume(r, t), -ESTALE);
	cr_assert_eq(lfp_ring_count(r), 1);
	take(r, 4, 5);

	/* The other consumer takes a burst. */
	put(r, 5, 4);
	put(r, 6, 4);
	put(r, 7, 4);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), 4);
	cr_assert_eq(lfp_ring_dequeue_burst(r, buf, 4, 2), 2);
	cr_assert_eq(lfp_ring_consume(r, t), -ESTALE);
	take(r, 7, 4);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/* The slot of a stale ticket already holds the next lap's entry. */
Test(ring, stale_ticket_from_previous_lap_takes_nothing)
{
	struct lfp_ring *r = make_ring(2, 16);
	unsigned char buf[16];
	uint64_t t = 0;

	put(r, 1, 3);
	put(r, 2, 3);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), 3);
	take(r, 1, 3);
	take(r, 2, 3);
	put(r, 3, 5); /* same slot as entry 1 */
	put(r, 4, 6);
	cr_assert_eq(lfp_ring_consume(r, t), -ESTALE);
	cr_assert_eq(lfp_ring_count(r), 2);
	take(r, 3, 5);
	take(r, 4, 6);
	lfp_ring_destroy(r);
}

#if RING_INDEX
/*
 * An index ring whose positions cross 2^64 (placed there as stress_sched's
 * ring_skip places a ring: an empty ring's positions set): a burst of
 * 8-byte entries must stop at the 64-byte entry at position 0, whose run
 * began after the 8-byte ones.  The run check once compared positions
 * directly and took it, writing 64 bytes into an 8-byte stride.
 */
Test(ring, an_index_burst_stops_at_a_longer_entry_across_2_to_the_64)
{
	struct lfp_ring *r = make_ring(4, 64);
	unsigned char e8[8], e64[64], out[2 * 8 + 64];
	uint64_t pos = UINT64_MAX - 1;

	r->head = r->tail = r->tail_seen = r->head_seen = pos;
	r->len_change = r->change_seen = pos;
	r->last_meta = 0;
	memset(e8, 'a', sizeof(e8));
	memset(e64, 'B', sizeof(e64));
	cr_assert_eq(lfp_ring_enqueue(r, e8, 8), 0);   /* at 2^64 - 2 */
	cr_assert_eq(lfp_ring_enqueue(r, e8, 8), 0);   /* at 2^64 - 1 */
	cr_assert_eq(lfp_ring_enqueue(r, e64, 64), 0); /* at 0 */
	cr_assert_eq(lfp_ring_dequeue_burst(r, out, 8, 1), 1);
	memset(out, '.', sizeof(out));
	cr_assert_eq(lfp_ring_dequeue_burst(r, out, 8, 2), 1,
	             "the 64-byte entry was taken into an 8-byte stride");
	cr_assert_eq(out[8], '.', "written past the one entry taken");
	cr_assert_eq(lfp_ring_count(r), 1);
	cr_assert_eq(lfp_ring_dequeue(r, out, 64), 64);
	lfp_ring_destroy(r);
}
#endif

Test(ring, consume_forged_ticket_is_stale_and_takes_nothing)
{
	struct lfp_ring *r = make_ring(4, 16);
	const uint64_t forged[] = {
		1,                       /* not yet published */
		4,                       /* slot 0, next lap */
		(uint64_t)1 << 32,       /* slot 0, same 32-bit sequence */
		((uint64_t)1 << 32) + 4,
		UINT64_MAX,
		UINT64_MAX - 3,          /* slot 0, previous lap */
	};
	unsigned char buf[16];
	uint64_t t = 0;
	size_t i;

	cr_assert_eq(lfp_ring_consume(r, 0), -ESTALE, "consumed from an empty ring");
	cr_assert_eq(lfp_ring_count(r), 0);

	put(r, 1, 6); /* position 0 */
	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		cr_assert_eq(lfp_ring_consume(r, forged[i]), -ESTALE,
		             "forged ticket %llu accepted",
		             (unsigned long long)forged[i]);
		cr_assert_eq(lfp_ring_count(r), 1);
	}
	/* Published but not the head: still not consumable. */
	put(r, 2, 7); /* position 1 */
	cr_assert_eq(lfp_ring_consume(r, 1), -ESTALE);
	cr_assert_eq(lfp_ring_count(r), 2);

	/* The genuine ticket still works, and takes the head. */
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), &t), 6);
	cr_assert_eq(lfp_ring_consume(r, t), 0);
	take(r, 2, 7);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/* -------------------------------------------------------------- bursts */

Test(ring, enqueue_burst_stops_when_full)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char src[10 * 12];
	unsigned i;

	for (i = 0; i < 5; i++)
		put(r, i, 16);
	for (i = 0; i < 10; i++)
		pattern(src + i * 12, 12, 100 + i);
	cr_assert_eq(lfp_ring_enqueue_burst(r, src, 12, 10), 3);
	cr_assert_eq(lfp_ring_count(r), 8);
	cr_assert_eq(lfp_ring_enqueue_burst(r, src, 12, 10), 0);
	for (i = 0; i < 5; i++)
		take(r, i, 16);
	for (i = 0; i < 3; i++)
		take(r, 100 + i, 12);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, dequeue_burst_takes_what_is_there)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char dst[10 * 8], want[8];
	unsigned i;

	put(r, 1, 8);
	put(r, 2, 3); /* shorter than len_each: lands at its stride */
	put(r, 3, 8);
	memset(dst, 0xEE, sizeof(dst));
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 10), 3);
	for (i = 0; i < 3; i++) {
		size_t len = i == 1 ? 3 : 8;

		pattern(want, len, i + 1);
		cr_assert_arr_eq(dst + i * 8, want, len, "burst entry %u", i);
	}
	cr_assert_eq(dst[8 + 3], 0xEE, "wrote past a short entry");
	cr_assert_eq(dst[3 * 8], 0xEE, "wrote past the last entry");
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 10), 0);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, burst_longer_than_slot_enqueues_nothing)
{
	struct lfp_ring *r = make_ring(8, 8);
	unsigned char src[4 * 9];

	pattern(src, sizeof(src), 1);
	cr_assert_eq(lfp_ring_enqueue_burst(r, src, 9, 4), 0);
	cr_assert_eq(lfp_ring_count(r), 0);
	cr_assert_eq(lfp_ring_enqueue_burst(r, src, 8, 0), 0);
	cr_assert_eq(lfp_ring_count(r), 0);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, dequeue_burst_stops_before_long_entry)
{
	struct lfp_ring *r = make_ring(8, 16);
	unsigned char dst[4 * 8], want[8];

	put(r, 1, 4);
	put(r, 2, 8);
	put(r, 3, 12);
	put(r, 4, 4);
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 4), 2);
	pattern(want, 4, 1);
	cr_assert_arr_eq(dst, want, 4);
	pattern(want, 8, 2);
	cr_assert_arr_eq(dst + 8, want, 8);
	cr_assert_eq(lfp_ring_count(r), 2);

	/* The head is too long for the burst: nothing taken, entry kept. */
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 4), 0);
	cr_assert_eq(lfp_ring_count(r), 2);
	take(r, 3, 12);
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 4), 1);
	pattern(want, 4, 4);
	cr_assert_arr_eq(dst, want, 4);
	expect_empty(r);
	lfp_ring_destroy(r);
}

/*
 * A burst checks every entry's length (docs/design.md, I5 for the index
 * ring): a run of entries of the caller's length, then one longer or one
 * shorter.
 */
Test(ring, dequeue_burst_sees_a_length_change_after_a_run)
{
	struct lfp_ring *r = make_ring(16, 16);
	unsigned char dst[8 * 8], want[8];
	unsigned i;

	for (i = 0; i < 3; i++)
		put(r, i, 8);
	take(r, 0, 8);          /* the consumer has seen head: 3 entries */
	put(r, 3, 12);          /* longer than the burst's 8 */
	put(r, 4, 3);           /* shorter */
	put(r, 5, 8);
	memset(dst, 0xEE, sizeof(dst));
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 2,
	             "a burst ran into the longer entry");
	for (i = 0; i < 2; i++) {
		pattern(want, 8, i + 1);
		cr_assert_arr_eq(dst + i * 8, want, 8, "entry %u", i + 1);
	}
	cr_assert_eq(dst[2 * 8], 0xEE, "wrote past the run");
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 0,
	             "took the longer entry");
	take(r, 3, 12);
	memset(dst, 0xEE, sizeof(dst));
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 2);
	pattern(want, 3, 4);
	cr_assert_arr_eq(dst, want, 3);
	cr_assert_eq(dst[3], 0xEE, "wrote past a short entry");
	pattern(want, 8, 5);
	cr_assert_arr_eq(dst + 8, want, 8);

	/* A run, a shorter entry and a run again, all in one burst. */
	for (i = 6; i < 12; i++)
		put(r, i, i == 8 ? 5 : 8);
	memset(dst, 0xEE, sizeof(dst));
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 6);
	for (i = 0; i < 6; i++) {
		size_t len = i == 2 ? 5 : 8;

		pattern(want, len, i + 6);
		cr_assert_arr_eq(dst + i * 8, want, len, "entry %u", i + 6);
	}
	cr_assert_eq(dst[2 * 8 + 5], 0xEE, "wrote past a short entry");
	expect_empty(r);
	lfp_ring_destroy(r);
}

/*
 * Every way of enqueueing keeps the index ring's record of the last change
 * of length (I5): the inline enqueue of a constant length, a burst of one
 * and a longer burst, each after a run of the burst's length; and a
 * change right after the consumer's tail.  Each case ends with a burst
 * that must stop before the longer entry.
 */
Test(ring, every_enqueue_keeps_the_burst_lengths_right)
{
	struct lfp_ring *r = make_ring(16, 16);
	unsigned char src[4 * 12], dst[8 * 8];
	unsigned i;

	for (i = 0; i < 4; i++) /* four copies of one 12-byte entry */
		pattern(src + i * 12, 12, 7);
	/* A run of 8, then the inline enqueue of a constant 12. */
	cr_assert_eq(lfp_ring_enqueue_burst(r, src, 8, 3), 3);
	cr_assert_eq(lfp_ring_enqueue(r, src, 12), 0);
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 3,
	             "took the inline enqueue's longer entry");
	take(r, 7, 12);
	expect_empty(r);

	/* A single 8, then a burst of one 12; again with a burst of two. */
	for (i = 1; i <= 2; i++) {
		unsigned j;

		put(r, i, 8);
		cr_assert_eq(lfp_ring_enqueue_burst(r, src, 12, i), i);
		cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 1,
		             "took the longer entry of a burst of %u", i);
		for (j = 0; j < i; j++)
			take(r, 7, 12);
		expect_empty(r);
	}

	/* The change right after tail: 8, 8, 12, the first taken alone. */
	put(r, 2, 8);
	put(r, 3, 8);
	put(r, 4, 12);
	take(r, 2, 8);
	cr_assert_eq(lfp_ring_dequeue_burst(r, dst, 8, 8), 1,
	             "took the entry after the run");
	take(r, 4, 12);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, bursts_round_trip_across_wrap)
{
	struct lfp_ring *r = make_ring(8, 24);
	unsigned char src[8 * 24], dst[8 * 24], want[24];
	unsigned i, j, seq = 0, next = 0;

	for (i = 0; i < 5000; i++) {
		size_t k = i % 8 + 1, len = 1 + i % 24;

		for (j = 0; j < k; j++)
			pattern(src + j * len, len, seq + j);
		cr_assert_eq(lfp_ring_enqueue_burst(r, src, len, k), k);
		seq += (unsigned)k;
		cr_assert_eq(lfp_ring_count(r), k);
		memset(dst, 0xEE, sizeof(dst));
		cr_assert_eq(lfp_ring_dequeue_burst(r, dst, len, 8), k);
		for (j = 0; j < k; j++, next++) {
			pattern(want, len, next);
			cr_assert_arr_eq(dst + j * len, want, len,
			                 "round %u entry %u", i, j);
		}
	}
	expect_empty(r);
	lfp_ring_destroy(r);
}

/* -------------------------------------------------------------- typed */

struct ev {
	uint32_t id;
	uint16_t kind;
	unsigned char tag[10];
};

LFP_RING_PROTOTYPE(ev, struct ev)

static struct ev make_ev(uint32_t id)
{
	struct ev e;

	memset(&e, 0, sizeof(e));
	e.id = id;
	e.kind = (uint16_t)(id * 3);
	pattern(e.tag, sizeof(e.tag), id);
	return e;
}

static void assert_ev(const struct ev *e, uint32_t id)
{
	struct ev want = make_ev(id);

	cr_assert_eq(e->id, id, "event id %u, want %u", e->id, id);
	cr_assert_eq(e->kind, want.kind);
	cr_assert_arr_eq(e->tag, want.tag, sizeof(want.tag));
}

Test(ring, typed_front_end_round_trips)
{
	struct lfp_ring *r = make_ring(8, sizeof(struct ev));
	struct ev in[12], out[12], e;
	uint32_t i, lap, id = 0, next = 0;

	for (i = 0; i < 8; i++) {
		e = make_ev(id++);
		cr_assert_eq(lfp_ring_enqueue_ev(r, &e), 0);
	}
	cr_assert_eq(lfp_ring_enqueue_ev(r, &e), -EAGAIN);
	cr_assert_eq(lfp_ring_count(r), 8);
	for (i = 0; i < 8; i++) {
		memset(&e, 0, sizeof(e));
		cr_assert_eq(lfp_ring_dequeue_ev(r, &e), 0);
		assert_ev(&e, next++);
	}
	cr_assert_eq(lfp_ring_dequeue_ev(r, &e), -EAGAIN);

	/* Bursts, partial at both ends, over many laps. */
	for (lap = 0; lap < 100; lap++) {
		for (i = 0; i < 12; i++)
			in[i] = make_ev(id + i);
		cr_assert_eq(lfp_ring_enqueue_burst_ev(r, in, 12), 8);
		id += 8;
		cr_assert_eq(lfp_ring_enqueue_burst_ev(r, in, 12), 0);
		cr_assert_eq(lfp_ring_dequeue_burst_ev(r, out, 3), 3);
		cr_assert_eq(lfp_ring_dequeue_burst_ev(r, out + 3, 12), 5);
		cr_assert_eq(lfp_ring_dequeue_burst_ev(r, out, 12), 0);
		for (i = 0; i < 8; i++)
			assert_ev(&out[i], next++);
	}
	cr_assert_eq(lfp_ring_count(r), 0);
	lfp_ring_destroy(r);
}

Test(ring, typed_dequeue_keeps_longer_entry)
{
	struct lfp_ring *r = make_ring(4, 32);
	struct ev e[2];

	put(r, 1, sizeof(struct ev) + 4);
	cr_assert_eq(lfp_ring_dequeue_ev(r, &e[0]), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_ring_dequeue_burst_ev(r, e, 2), 0);
	cr_assert_eq(lfp_ring_count(r), 1);
	take(r, 1, sizeof(struct ev) + 4);
	lfp_ring_destroy(r);
}

/*
 * A typed call on a ring whose slots are smaller than the type must refuse
 * (as lfp_ring_enqueue does with -EMSGSIZE), not write past the slot into
 * the next slot's header (which wedges the ring) and beyond the ring's
 * memory.  The ring sits at the
 * start of a larger buffer so that an overrun shows as changed guard bytes
 * instead of a crash.
 */
Test(ring, typed_enqueue_larger_than_slot_is_refused)
{
	struct lfp_ring *r = ring_struct();
	size_t size = ring_memsize(2, 4), i;
	unsigned char *mem = aligned_alloc(64, 512);
	struct ev e[2];
	int ret;
	size_t k;

	cr_assert_not_null(mem);
	cr_assert_leq(size, 512);
	cr_assert_lt(4, sizeof(struct ev), "the slots must be smaller than the type");
	memset(mem, 0x5A, 512);
	cr_assert_eq(ring_init(r, mem, 2, 4), 0);
	e[0] = make_ev(1);
	e[1] = make_ev(2);

	ret = lfp_ring_enqueue_ev(r, &e[0]);
	cr_expect_eq(ret, -EMSGSIZE, "typed enqueue of %zu bytes into %zu-byte "
	             "slots returned %d", sizeof(struct ev), (size_t)4, ret);
	ret = lfp_ring_enqueue_ev(r, &e[1]);
	cr_expect_eq(ret, -EMSGSIZE, "second typed enqueue returned %d", ret);
	k = lfp_ring_enqueue_burst_ev(r, e, 2);
	cr_expect_eq(k, 0, "typed burst enqueued %zu oversize entries", k);
	for (i = size; i < 512; i++)
		cr_assert_eq(mem[i], 0x5A, "typed enqueue wrote byte %zu, past "
		             "the ring's %zu bytes", i, size);
	/* Nothing was queued and no slot header was overwritten: the ring
	 * still takes and returns capacity entries. */
	cr_assert_eq(lfp_ring_count(r), 0, "oversize typed entries were queued");
	put(r, 1, 4);
	put(r, 2, 4);
	take(r, 1, 4);
	take(r, 2, 4);
	lfp_ring_destroy(r);
	free(mem);
	free(r);
}

/* -------------------------------------------------------------- memory */

/*
 * No burst writes outside the memory lfp_ring_memsize asks for, and every
 * entry comes back whole: bursts of every count across the wrap, each
 * entry distinct, on rings of 2, 4 and 8 slots over caller memory with
 * guard bytes right after it.  bursts_in_and_out runs that for entries of
 * esz bytes through enq and deq: the untyped calls with 8-byte entries
 * (one memcpy a run), and the typed calls of LINE_SIZED, which put each
 * type's calls behind one signature with the entry size a constant inside
 * them, for entries from just over half a line to two lines (copied in
 * one at a time on an index ring, LFP__IDX_COPY_EACH).
 */
#define LINE_SIZED(T, n)                                                       \
	struct T { unsigned char b[n]; };                                      \
	LFP_RING_PROTOTYPE(T, struct T)                                        \
	static size_t enq_##T(struct lfp_ring *r, const void *v, size_t k)     \
	{                                                                      \
		return lfp_ring_enqueue_burst_##T(r, (const struct T *)v, k);  \
	}                                                                      \
	static size_t deq_##T(struct lfp_ring *r, void *v, size_t k)           \
	{                                                                      \
		return lfp_ring_dequeue_burst_##T(r, (struct T *)v, k);        \
	}
LINE_SIZED(ev56, 56)
LINE_SIZED(ev64, 64)
LINE_SIZED(ev128, 128)

static void bursts_in_and_out(size_t esz,
                              size_t (*enq)(struct lfp_ring *,
                                            const void *, size_t),
                              size_t (*deq)(struct lfp_ring *, void *,
                                            size_t))
{
	static const size_t caps[] = { 2, 4, 8 };
	unsigned char *mem, src[8 * 128], dst[8 * 128];
	struct lfp_ring *r = ring_struct();
	size_t c, cap, size, i, j, k;
	unsigned seq = 0;

	for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		cap = caps[c];
		size = ring_memsize(cap, esz);
		mem = aligned_alloc(64, (size + 64 + 63) & ~(size_t)63);
		cr_assert_not_null(mem);
		memset(mem + size, 0xA5, 64);
		cr_assert_eq(ring_init(r, mem, cap, esz), 0);
		for (i = 0; i < 200; i++) {
			k = i % cap + 1;
			for (j = 0; j < k; j++)
				pattern(src + j * esz, esz, seq + (unsigned)j);
			memset(dst, 0, sizeof(dst));
			cr_assert_eq(enq(r, src, k), k);
			cr_assert_eq(deq(r, dst, 8), k);
			cr_assert_arr_eq(dst, src, k * esz, "%zu-byte entries, "
			                 "capacity %zu, round %zu", esz, cap, i);
			seq += (unsigned)k;
		}
		for (i = 0; i < 64; i++)
			cr_assert_eq(mem[size + i], 0xA5, "%zu-byte entries, "
			             "capacity %zu: byte %zu past the ring's "
			             "memory written", esz, cap, i);
		lfp_ring_destroy(r);
		free(mem);
	}
	free(r);
}

static size_t enq_8(struct lfp_ring *r, const void *v, size_t k)
{
	return lfp_ring_enqueue_burst(r, v, 8, k);
}

static size_t deq_8(struct lfp_ring *r, void *v, size_t k)
{
	return lfp_ring_dequeue_burst(r, v, 8, k);
}

Test(ring, bursts_stay_inside_the_ring_memory)
{
	bursts_in_and_out(8, enq_8, deq_8);
}

Test(ring, typed_bursts_of_line_sized_entries_round_trip_inside_memory)
{
	bursts_in_and_out(sizeof(struct ev56), enq_ev56, deq_ev56);
	bursts_in_and_out(sizeof(struct ev64), enq_ev64, deq_ev64);
	bursts_in_and_out(sizeof(struct ev128), enq_ev128, deq_ev128);
}

Test(ring, caller_memory_is_used_and_not_freed)
{
	struct lfp_ring *r = ring_struct();
	size_t size = ring_memsize(16, 24), i, j;
	size_t alloc = (size + 63) & ~(size_t)63;
	unsigned char *mem, marker[24];
	int found = 0;

	cr_assert_geq(size, 16 * (24 + RING_ENTRY_OVERHEAD), "memsize %zu too small",
	              size);
	mem = aligned_alloc(64, alloc);
	cr_assert_not_null(mem);
	reset_alloc_counts();
	cr_assert_eq(ring_init(r, mem, 16, 24), 0);
	cr_assert_eq(lfp_ring_capacity(r), 16);
	cr_assert_eq(lfp_ring_slot_size(r), 24);

	/* The entries live in mem. */
	pattern(marker, sizeof(marker), 4242);
	cr_assert_eq(lfp_ring_enqueue(r, marker, sizeof(marker)), 0);
	for (i = 0; i + sizeof(marker) <= size && !found; i++)
		found = memcmp(mem + i, marker, sizeof(marker)) == 0;
	cr_assert(found, "the entry is not in the caller's memory");
	take(r, 4242, 24);
	for (i = 0; i < 40; i++) {
		for (j = 0; j < 16; j++)
			put(r, (unsigned)(i * 16 + j), (i + j) % 25);
		for (j = 0; j < 16; j++)
			take(r, (unsigned)(i * 16 + j), (i + j) % 25);
	}

	lfp_ring_destroy(r);
	cr_assert_eq(alloc_calls, 0, "init over caller memory allocated");
	cr_assert_eq(free_calls, 0, "destroy freed caller memory");
	/* Still ours: writable, reusable, and freed once (ASan checks). */
	memset(mem, 0, alloc);
	cr_assert_eq(ring_init(r, mem, 16, 24), 0);
	put(r, 1, 24);
	take(r, 1, 24);
	lfp_ring_destroy(r);
	free(mem);
	free(r);
}

/* init makes any memory an empty ring: every slot free for its first lap,
 * whatever the memory held. */
Test(ring, init_over_dirty_memory_starts_empty)
{
	struct lfp_ring *r = ring_struct();
	size_t size = ring_memsize(8, 16), i;
	unsigned char *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);

	cr_assert_not_null(mem);
	for (i = 0; i < 2; i++) {
		memset(mem, i ? 0x00 : 0xFF, size);
		cr_assert_eq(ring_init(r, mem, 8, 16), 0);
		expect_empty(r);
		put(r, 7, 16);
		take(r, 7, 16);
		expect_empty(r);
	}
	free(mem);
	free(r);
}

Test(ring, memory_aligned_to_8_bytes_is_enough)
{
	struct lfp_ring *r = ring_struct();
	size_t size = ring_memsize(4, 8);
	unsigned char *mem = aligned_alloc(64, 128 + 64);

	cr_assert_not_null(mem);
	cr_assert_leq(size, 128);
	cr_assert_eq(ring_init(r, mem + 8, 4, 8), 0);
	put(r, 1, 8);
	take(r, 1, 8);
	lfp_ring_destroy(r);
	free(mem);
	free(r);
}

Test(ring, destroy_frees_what_create_took)
{
	struct lfp_ring *r;

	reset_alloc_counts();
	r = make_ring(64, 100);
	cr_assert_gt(alloc_ok, 0);
	cr_assert_eq(free_calls, 0);
	put(r, 1, 100);
	lfp_ring_destroy(r);
	cr_assert_eq(free_calls, alloc_ok, "create took %d blocks, destroy "
	             "freed %d", alloc_ok, free_calls);
}

Test(ring, create_out_of_memory_leaks_nothing)
{
	struct lfp_ring *sentinel = (struct lfp_ring *)(uintptr_t)0x1000;
	struct lfp_ring *r;
	int k, ret;

	for (k = 1;; k++) {
		cr_assert_lt(k, 10, "create kept allocating");
		reset_alloc_counts();
		fail_alloc_at = k;
		r = sentinel;
		ret = ring_create(16, 32, &r);
		if (ret == 0) {
			cr_assert_gt(k, 1, "create succeeded without allocating");
			lfp_ring_destroy(r);
			break;
		}
		cr_assert_eq(ret, -ENOMEM, "allocation %d failed: create = %d",
		             k, ret);
		cr_assert_eq(r, sentinel, "a failed create wrote *rp");
		cr_assert_eq(free_calls, alloc_ok, "allocation %d failed: %d "
		             "blocks taken, %d freed", k, alloc_ok, free_calls);
	}
}

/* -------------------------------------------------------------- bad input */

Test(ring, null_pointers_to_init_and_create_are_einval)
{
	unsigned char *mem = aligned_alloc(64, 256);
	struct lfp_ring r;

	cr_assert_not_null(mem);
	reset_alloc_counts();
	cr_assert_eq(ring_init(NULL, mem, 4, 8), -EINVAL);
	cr_assert_eq(ring_init(&r, NULL, 4, 8), -EINVAL);
	cr_assert_eq(ring_create(4, 8, NULL), -EINVAL);
	cr_assert_eq(alloc_calls, 0, "bad input allocated");
	free(mem);
}

/* Every (capacity, slot size) here is invalid: memsize 0, init and create
 * -EINVAL, no allocation, no write to the caller's ring or memory. */
static void assert_rejected(size_t capacity, size_t slot_size)
{
	static _Alignas(64) unsigned char mem[4096];
	struct lfp_ring ring, ring_before;
	struct lfp_ring *sentinel = (struct lfp_ring *)(uintptr_t)0x1000;
	struct lfp_ring *r = sentinel;
	size_t i;
	int ret;

	reset_alloc_counts();
	memset(mem, 0xA5, sizeof(mem));
	memset(&ring, 0xA5, sizeof(ring));
	memcpy(&ring_before, &ring, sizeof(ring));
	cr_assert_eq(ring_memsize(capacity, slot_size), 0,
	             "memsize(%zu, %zu) = %zu", capacity, slot_size,
	             ring_memsize(capacity, slot_size));
	ret = ring_init(&ring, mem, capacity, slot_size);
	cr_assert_eq(ret, -EINVAL, "init(%zu, %zu) = %d", capacity, slot_size, ret);
	ret = ring_create(capacity, slot_size, &r);
	cr_assert_eq(ret, -EINVAL, "create(%zu, %zu) = %d", capacity, slot_size, ret);
	cr_assert_eq(r, sentinel, "create(%zu, %zu) wrote *rp", capacity, slot_size);
	cr_assert_eq(alloc_calls, 0, "create(%zu, %zu) allocated", capacity,
	             slot_size);
	cr_assert_arr_eq(&ring, &ring_before, sizeof(ring), "init(%zu, %zu) "
	                 "changed the ring", capacity, slot_size);
	for (i = 0; i < sizeof(mem); i++)
		cr_assert_eq(mem[i], 0xA5, "init(%zu, %zu) wrote to mem",
		             capacity, slot_size);
}

Test(ring, bad_capacity_is_einval)
{
	const size_t caps[] = {
		0, 1, 3, 6, 12, 100, 1000,
		LFP_RING_MAX_CAPACITY + 1, LFP_RING_MAX_CAPACITY * 2,
		LFP_RING_MAX_CAPACITY - 1, (size_t)1 << 40, SIZE_MAX,
		(SIZE_MAX >> 1) + 1,
	};
	size_t i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		assert_rejected(caps[i], 8);
	/* The bounds themselves are valid (sized only: no allocation). */
	cr_assert_gt(ring_memsize(2, 8), 0);
	cr_assert_gt(ring_memsize(LFP_RING_MAX_CAPACITY, 8), 0);
}

Test(ring, zero_slot_size_is_einval)
{
	assert_rejected(4, 0);
	assert_rejected(0, 0);
}

Test(ring, size_overflow_is_einval)
{
	size_t n;

	assert_rejected((size_t)1 << 30, SIZE_MAX / 4);
	assert_rejected(2, SIZE_MAX);
	assert_rejected(2, SIZE_MAX - 7); /* header + slot wraps to 0 */
	assert_rejected(4, SIZE_MAX / 2);
	assert_rejected((size_t)1 << 20, SIZE_MAX >> 10);

	/* Large but representable: memsize does not wrap. */
	n = ring_memsize((size_t)1 << 30, (size_t)1 << 20);
	cr_assert_geq(n / ((size_t)1 << 30), ((size_t)1 << 20) + RING_ENTRY_OVERHEAD,
	              "memsize(2^30, 2^20) = %zu wrapped", n);
}

Test(ring, misaligned_memory_is_einval)
{
	static _Alignas(64) unsigned char mem[256 + 64];
	struct lfp_ring r;
	size_t off, i;

	cr_assert_leq(ring_memsize(4, 8), 256);
	for (off = 1; off < 8; off++) {
		memset(mem, 0xA5, sizeof(mem));
		cr_assert_eq(ring_init(&r, mem + off, 4, 8), -EINVAL,
		             "mem + %zu accepted", off);
		for (i = 0; i < sizeof(mem); i++)
			cr_assert_eq(mem[i], 0xA5, "init at mem + %zu wrote", off);
	}
}

Test(ring, null_arguments_are_rejected)
{
	struct lfp_ring *r = make_ring(4, 8);
	unsigned char buf[8] = { 0 };
	uint64_t t = 0;

	cr_assert_eq(lfp_ring_enqueue(NULL, buf, 1), -EINVAL);
	cr_assert_eq(lfp_ring_enqueue(r, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_ring_count(r), 0);
	cr_assert_eq(lfp_ring_enqueue_burst(NULL, buf, 1, 1), 0);
	cr_assert_eq(lfp_ring_enqueue_burst(r, NULL, 1, 1), 0);
	cr_assert_eq(lfp_ring_count(r), 0);

	put(r, 1, 4);
	cr_assert_eq(lfp_ring_dequeue(NULL, buf, sizeof(buf)), -EINVAL);
	cr_assert_eq(lfp_ring_dequeue(r, NULL, sizeof(buf)), -EINVAL);
	cr_assert_eq(lfp_ring_peek(NULL, buf, sizeof(buf), &t), -EINVAL);
	cr_assert_eq(lfp_ring_peek(r, NULL, sizeof(buf), &t), -EINVAL);
	cr_assert_eq(lfp_ring_peek(r, buf, sizeof(buf), NULL), -EINVAL);
	cr_assert_eq(lfp_ring_consume(NULL, 0), -EINVAL);
	cr_assert_eq(lfp_ring_dequeue_burst(NULL, buf, 4, 1), 0);
	cr_assert_eq(lfp_ring_dequeue_burst(r, NULL, 4, 1), 0);
	cr_assert_eq(lfp_ring_count(NULL), 0);
	cr_assert_eq(lfp_ring_count(r), 1, "a rejected call took the entry");
	take(r, 1, 4);
	lfp_ring_destroy(r);
}

Test(ring, destroy_null_is_harmless)
{
	reset_alloc_counts();
	lfp_ring_destroy(NULL);
	cr_assert_eq(free_calls, 0);
}

/*
 * Zero-length entries with NULL buffers: the argument checks accept NULL
 * when the length is 0 (only "!src && len" is refused), so the copy must not
 * hand NULL to memcpy nor do arithmetic on it; both are undefined behaviour
 * that -fsanitize=undefined reports (make check SANITIZE=address: gcc
 * reports the memcpy, clang also reports NULL + 0 in the burst loops).
 */
Test(ring, zero_length_entry_from_null_source)
{
	struct lfp_ring *r = make_ring(4, 8);
	unsigned char buf[8];

	cr_assert_eq(lfp_ring_enqueue(r, opaque_ptr(NULL), 0), 0);
	cr_assert_eq(lfp_ring_enqueue_burst(r, opaque_ptr(NULL), 0, 2), 2);
	cr_assert_eq(lfp_ring_count(r), 3);
	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), 0);
	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), 0);
	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), 0);
	expect_empty(r);
	lfp_ring_destroy(r);
}

Test(ring, zero_length_entry_into_null_destination)
{
	struct lfp_ring *r = make_ring(4, 8);
	unsigned char *null = opaque_ptr(NULL), buf[8] = { 0 };
	uint64_t t = 0;

	put(r, 1, 0);
	put(r, 2, 0);
	put(r, 3, 0);
	cr_assert_eq(lfp_ring_peek(r, null, 0, &t), 0);
	cr_assert_eq(lfp_ring_consume(r, t), 0);
	cr_assert_eq(lfp_ring_dequeue(r, null, 0), 0);
	cr_assert_eq(lfp_ring_dequeue_burst(r, null, 0, 2), 1);
	cr_assert_eq(lfp_ring_count(r), 0);
	/* A non-empty entry is too big for a NULL, zero-length buffer. */
	put(r, 4, 1);
	cr_assert_eq(lfp_ring_dequeue(r, null, 0), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_ring_dequeue(r, buf, sizeof(buf)), 1);
	lfp_ring_destroy(r);
}

/* -------------------------------------------------------------- strerror */

Test(strerror, names_lfpoll_errors_with_either_sign)
{
	const int errs[] = { LFP_ETOOSMALL, LFP_EAVAIL, LFP_EOVERRUN };
	const char *unknown = lfp_strerror(100000);
	size_t i, j;

	cr_assert_eq(LFP_ETOOSMALL, 257);
	cr_assert_eq(LFP_EAVAIL, 259);
	cr_assert_eq(LFP_EOVERRUN, 268);
	for (i = 0; i < 3; i++) {
		const char *pos = lfp_strerror(errs[i]);
		const char *neg = lfp_strerror(-errs[i]);

		cr_assert_not_null(pos);
		cr_assert_not_null(neg);
		cr_assert_str_eq(pos, neg);
		cr_assert_str_neq(pos, unknown, "error %d has no name", errs[i]);
		cr_assert_str_neq(pos, "");
		for (j = 0; j < i; j++)
			cr_assert_str_neq(pos, lfp_strerror(errs[j]),
			                  "errors %d and %d share a name",
			                  errs[i], errs[j]);
	}
}

Test(strerror, standard_errors_match_strerror)
{
	const int errs[] = { EAGAIN, EINVAL, ENOMEM, EMSGSIZE, ESTALE, EBUSY,
	                     ETIMEDOUT, ENODATA, ENOSYS };
	char want[256];
	size_t i;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		snprintf(want, sizeof(want), "%s", strerror(errs[i]));
		cr_assert_str_eq(lfp_strerror(errs[i]), want);
		cr_assert_str_eq(lfp_strerror(-errs[i]), want);
	}
	cr_assert_not_null(lfp_strerror(0));
	cr_assert_str_neq(lfp_strerror(0), "");
}

Test(strerror, never_returns_null)
{
	const int odd[] = { 100000, -100000, 256, 258, 260, 267, 269, 4095,
	                    INT_MAX, -INT_MAX, INT_MAX - 1 };
	const char *s;
	size_t i;
	int e;

	for (e = -1000; e <= 1000; e++) {
		s = lfp_strerror(e);
		cr_assert_not_null(s, "lfp_strerror(%d) is NULL", e);
		cr_assert_neq(s[0], '\0', "lfp_strerror(%d) is empty", e);
	}
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		s = lfp_strerror(odd[i]);
		cr_assert_not_null(s, "lfp_strerror(%d) is NULL", odd[i]);
		cr_assert_neq(s[0], '\0', "lfp_strerror(%d) is empty", odd[i]);
	}
}

/* -INT_MIN does not fit in an int: negating it is undefined behaviour,
 * which -fsanitize=undefined reports (make check SANITIZE=address). */
Test(strerror, int_min_is_not_undefined)
{
	const char *s = lfp_strerror(INT_MIN);

	cr_assert_not_null(s);
	cr_assert_neq(s[0], '\0');
}
