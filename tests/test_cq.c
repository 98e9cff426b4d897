/*
 * lfpoll completion queue: single-threaded behaviour of every call in cq.h.
 *
 * Open-time validation, the four entry formats (FIFO, short and long reads),
 * a full CQ, the error queue and its err_data rules, sread's threshold and
 * timeouts, lfp_cq_signal in one thread, lfp_control, close while in a poll
 * set, and the "no system call without a waiter" promise (LFP_STATS).  The
 * multi-threaded properties (lfp_cq_signal waking an sread in another
 * thread, no lost completions) are in stress_sets.c, which also runs under
 * ThreadSanitizer.
 */
#include <lfpoll/cq.h>

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "support.h"

static struct lfp_cq *open_cq(enum lfp_cq_format fmt, enum lfp_wait_obj obj,
                              size_t size)
{
	struct lfp_cq_attr a = {
		.format = fmt, .wait_obj = obj, .size = size,
		.wait_cond = LFP_CQ_COND_THRESHOLD /* the sread tests pass thresholds */
	};

	return open_cq_attr(&a, NULL);
}

/* The formats are prefixes of one another; the generic helpers rely on it. */
_Static_assert(offsetof(struct lfp_cq_msg_entry, flags) ==
               offsetof(struct lfp_cq_tagged_entry, flags), "prefix");
_Static_assert(offsetof(struct lfp_cq_data_entry, data) ==
               offsetof(struct lfp_cq_tagged_entry, data), "prefix");
_Static_assert(offsetof(struct lfp_cq_data_entry, buf) ==
               offsetof(struct lfp_cq_tagged_entry, buf), "prefix");

static size_t fmt_size(enum lfp_cq_format f)
{
	switch (f) {
	case LFP_CQ_FORMAT_CONTEXT: return sizeof(struct lfp_cq_entry);
	case LFP_CQ_FORMAT_MSG:     return sizeof(struct lfp_cq_msg_entry);
	case LFP_CQ_FORMAT_DATA:    return sizeof(struct lfp_cq_data_entry);
	default:                    return sizeof(struct lfp_cq_tagged_entry);
	}
}

/* Entry i of format f at p: every field of the format holds a value of i. */
static void fill_entry(enum lfp_cq_format f, void *p, unsigned i)
{
	struct lfp_cq_tagged_entry t;

	memset(&t, 0, sizeof(t));
	t.op_context = (void *)(uintptr_t)(0x1000 + i);
	t.flags = 0x100000000ull + i;
	t.len = 7 * (size_t)i + 1;
	t.buf = (void *)(uintptr_t)(0x9000 + 8 * i);
	t.data = 0xdead0000ull + i;
	t.tag = 0x7a90000000ull + i;
	memcpy(p, &t, fmt_size(f));
}

static void check_entry(enum lfp_cq_format f, const void *p, unsigned i)
{
	unsigned char want[sizeof(struct lfp_cq_tagged_entry)];

	fill_entry(f, want, i);
	cr_assert(memcmp(p, want, fmt_size(f)) == 0,
	          "format %d: entry %u read back differs from what was written",
	          (int)f, i);
}

/* ------------------------------------------------------------ open */

Test(cq, open_null_attr_gives_defaults)
{
	struct lfp_cq *cq = NULL;
	enum lfp_wait_obj obj = LFP_WAIT_FD;
	struct lfp_cq_entry e[LFP_CQ_DEFAULT_SIZE + 1];
	unsigned i;

	cr_assert_eq(lfp_cq_open(NULL, &cq, (void *)0x42), 0);
	cr_assert_eq(cq->fid.fclass, LFP_CLASS_CQ);
	cr_assert_eq(cq->fid.context, (void *)0x42);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_NONE, "default wait object is %d", (int)obj);
	/* Default format CONTEXT and at least the default size. */
	for (i = 0; i <= LFP_CQ_DEFAULT_SIZE; i++)
		e[i].op_context = (void *)(uintptr_t)(i + 1);
	cr_assert_geq(lfp_cq_write(cq, e, LFP_CQ_DEFAULT_SIZE), LFP_CQ_DEFAULT_SIZE);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, open_rejects_bad_arguments)
{
	struct lfp_cq_attr a;
	struct lfp_wait *ws;
	struct lfp_cq *cq = NULL;

	cr_assert_eq(lfp_cq_open(NULL, NULL, NULL), -EINVAL);

	memset(&a, 0, sizeof(a));
	a.format = (enum lfp_cq_format)17;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "bad format");

	memset(&a, 0, sizeof(a));
	a.wait_obj = (enum lfp_wait_obj)99;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "bad wait object");

	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_POLLFD; /* a wait-set object only */
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "POLLFD on a CQ");

	memset(&a, 0, sizeof(a));
	a.flags = 1ull << 40;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "unknown flag");

	memset(&a, 0, sizeof(a));
	a.flags = LFP_PEEK;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "LFP_PEEK is no open flag");

	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "SET without a wait set");

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_FD;
	a.wait_set = ws;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL, "a wait set without SET");
	cr_assert_eq(lfp_wait_close(ws), 0, "no failed open stayed a member");
	cr_assert_null(cq, "no failed open wrote the result");

	memset(&a, 0, sizeof(a));
	a.flags = LFP_AFFINITY;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), 0, "LFP_AFFINITY is accepted");
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, open_every_wait_object)
{
	static const enum lfp_wait_obj objs[] = {
		LFP_WAIT_NONE, LFP_WAIT_UNSPEC, LFP_WAIT_FD, LFP_WAIT_MUTEX_COND,
		LFP_WAIT_YIELD
	};
	size_t i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		cr_assert_eq(lfp_cq_close(open_cq(LFP_CQ_FORMAT_CONTEXT, objs[i], 0)), 0);
}

/* ------------------------------------------------------------ formats */

static void round_trip(enum lfp_cq_format f)
{
	struct lfp_cq *cq = open_cq(f, LFP_WAIT_NONE, 64);
	size_t esz = fmt_size(f);
	unsigned char in[64 * sizeof(struct lfp_cq_tagged_entry)];
	unsigned char out[64 * sizeof(struct lfp_cq_tagged_entry)];
	unsigned i, next = 0;
	ssize_t n;

	for (i = 0; i < 40; i++)
		fill_entry(f, in + i * esz, i);
	/* One at a time, then a batch. */
	cr_assert_eq(lfp_cq_write(cq, in, 1), 1);
	cr_assert_eq(lfp_cq_write(cq, in + esz, 1), 1);
	cr_assert_eq(lfp_cq_write(cq, in + 2 * esz, 38), 38);

	/* Reads in FIFO order, in pieces of different sizes. */
	memset(out, 0xa5, sizeof(out));
	n = lfp_cq_read(cq, out, 1);
	cr_assert_eq(n, 1, "read 1: %zd", n);
	check_entry(f, out, next++);
	/* Nor did the single read, which copies inline. */
	for (i = (unsigned)esz; i < 2 * esz; i++)
		cr_assert_eq(out[i], 0xa5, "byte %u past a single entry written", i);
	n = lfp_cq_read(cq, out, 9);
	cr_assert_eq(n, 9, "read 9: %zd", n);
	for (i = 0; i < 9; i++)
		check_entry(f, out + i * esz, next++);
	/* Asking for more than is queued returns what is there. */
	memset(out, 0xa5, sizeof(out));
	n = lfp_cq_read(cq, out, 64);
	cr_assert_eq(n, 30, "read of 64 with 30 queued: %zd", n);
	for (i = 0; i < 30; i++)
		check_entry(f, out + i * esz, next++);
	/* The read did not write beyond the entries it returned. */
	for (i = 30 * (unsigned)esz; i < 31 * esz; i++)
		cr_assert_eq(out[i], 0xa5, "byte %u past the last entry written", i);
	cr_assert_eq(lfp_cq_read(cq, out, 1), -EAGAIN);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, context_format_round_trip) { round_trip(LFP_CQ_FORMAT_CONTEXT); }
Test(cq, msg_format_round_trip)     { round_trip(LFP_CQ_FORMAT_MSG); }
Test(cq, data_format_round_trip)    { round_trip(LFP_CQ_FORMAT_DATA); }
Test(cq, tagged_format_round_trip)  { round_trip(LFP_CQ_FORMAT_TAGGED); }

Test(cq, typed_tagged_entries_keep_every_field)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_TAGGED, LFP_WAIT_NONE, 8);
	struct lfp_cq_tagged_entry w = { (void *)&w, 1, 2, (void *)&cq, 3, 4 }, r;

	cr_assert_eq(lfp_cq_write(cq, &w, 1), 1);
	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_read(cq, &r, 1), 1);
	cr_assert_eq(r.op_context, (void *)&w);
	cr_assert_eq(r.flags, 1);
	cr_assert_eq(r.len, 2);
	cr_assert_eq(r.buf, (void *)&cq);
	cr_assert_eq(r.data, 3);
	cr_assert_eq(r.tag, 4);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, empty_read_is_eagain)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_MSG, LFP_WAIT_NONE, 0);
	struct lfp_cq_msg_entry e;

	cr_assert_eq(lfp_cq_read(cq, &e, 1), -EAGAIN);
	cr_assert_eq(lfp_cq_read(cq, &e, 16), -EAGAIN);
	cr_assert_eq(lfp_cq_read(cq, NULL, 0), -EINVAL, "count 0: as write and sread");
	cr_assert_eq(lfp_cq_read(cq, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cq_write(cq, NULL, 1), -EINVAL);
	cr_assert_eq(lfp_cq_write(cq, &e, 0), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, full_cq_writes_a_prefix_and_loses_nothing)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_DATA, LFP_WAIT_NONE, 8);
	struct lfp_cq_data_entry in[32], out[32];
	unsigned i, next = 0;
	ssize_t n, queued;

	for (i = 0; i < 32; i++)
		fill_entry(LFP_CQ_FORMAT_DATA, &in[i], i);
	cr_assert_eq(lfp_cq_write(cq, in, 5), 5);
	n = lfp_cq_write(cq, in + 5, 27);
	/* size is a minimum: the capacity may be larger than 8. */
	cr_assert(n >= 3 && n < 27, "write of 27 into a CQ holding 5 of >= 8: %zd", n);
	queued = 5 + n;
	cr_assert_eq(lfp_cq_write(cq, in + queued, 1), -EAGAIN, "full CQ");
	cr_assert_eq(lfp_cq_write(cq, in + queued, 4), -EAGAIN, "full CQ, batch");

	/* Everything that was accepted comes out, in order. */
	n = lfp_cq_read(cq, out, 2);
	cr_assert_eq(n, 2);
	check_entry(LFP_CQ_FORMAT_DATA, &out[0], next++);
	check_entry(LFP_CQ_FORMAT_DATA, &out[1], next++);
	/* Room again: the refused entry goes in and keeps its place. */
	cr_assert_eq(lfp_cq_write(cq, in + queued, 2), 2);
	queued += 2;
	n = lfp_cq_read(cq, out, 32);
	cr_assert_eq(n, queued - 2, "read all: %zd of %zd", n, queued - 2);
	for (i = 0; i < (unsigned)n; i++)
		check_entry(LFP_CQ_FORMAT_DATA, &out[i], next++);
	cr_assert_eq(lfp_cq_read(cq, out, 1), -EAGAIN);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, wraps_many_times_in_order)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 4);
	struct lfp_cq_entry e[3];
	uintptr_t w = 0, r = 0;
	unsigned round, i;
	ssize_t n;

	for (round = 0; round < 1000; round++) {
		for (i = 0; i < 3; i++)
			e[i].op_context = (void *)(w + i);
		n = lfp_cq_write(cq, e, 3);
		cr_assert_eq(n, 3);
		w += 3;
		n = lfp_cq_read(cq, e, 3);
		cr_assert_eq(n, 3);
		for (i = 0; i < 3; i++, r++)
			cr_assert_eq((uintptr_t)e[i].op_context, r);
	}
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* ------------------------------------------------------------ errors */

static struct lfp_cq_err_entry make_err(unsigned i, const void *data, size_t len)
{
	struct lfp_cq_err_entry e;

	memset(&e, 0, sizeof(e));
	e.op_context = (void *)(uintptr_t)(0x5000 + i);
	e.flags = i;
	e.len = 100 + i;
	e.buf = (void *)(uintptr_t)(0x6000 + i);
	e.data = 200 + i;
	e.tag = 300 + i;
	e.olen = 400 + i;
	e.err = 5 + (int)i;
	e.prov_errno = -(int)(7 + i);
	e.err_data = (void *)data;
	e.err_data_size = len;
	return e;
}

static void check_err_fields(const struct lfp_cq_err_entry *e, unsigned i)
{
	cr_assert_eq(e->op_context, (void *)(uintptr_t)(0x5000 + i));
	cr_assert_eq(e->flags, i);
	cr_assert_eq(e->len, 100 + i);
	cr_assert_eq(e->buf, (void *)(uintptr_t)(0x6000 + i));
	cr_assert_eq(e->data, 200 + i);
	cr_assert_eq(e->tag, 300 + i);
	cr_assert_eq(e->olen, 400 + i);
	cr_assert_eq(e->err, 5 + (int)i);
	cr_assert_eq(e->prov_errno, -(int)(7 + i));
}

Test(cq, error_blocks_reads_until_readerr)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_MSG, LFP_WAIT_NONE, 16);
	struct lfp_cq_msg_entry in[3], out[3];
	struct lfp_cq_err_entry e, r;
	static const char blob[] = "provider-error-data";
	unsigned i;

	for (i = 0; i < 3; i++)
		fill_entry(LFP_CQ_FORMAT_MSG, &in[i], i);
	cr_assert_eq(lfp_cq_write(cq, in, 2), 2);
	e = make_err(1, blob, sizeof(blob));
	cr_assert_eq(lfp_cq_writeerr(cq, &e), (ssize_t)sizeof(e));
	cr_assert_eq(lfp_cq_write(cq, in + 2, 1), 1);

	cr_assert_eq(lfp_cq_read(cq, out, 3), -LFP_EAVAIL);
	cr_assert_eq(lfp_cq_read(cq, out, 1), -LFP_EAVAIL);

	/* PEEK: the entry stays; CQ-owned data when err_data_size is 0. */
	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_readerr(cq, &r, LFP_PEEK), 1);
	check_err_fields(&r, 1);
	cr_assert_eq(r.err_data_size, sizeof(blob));
	cr_assert_not_null(r.err_data);
	cr_assert(r.err_data != (void *)blob, "err_data must be a copy");
	cr_assert(memcmp(r.err_data, blob, sizeof(blob)) == 0);
	cr_assert_eq(lfp_cq_read(cq, out, 1), -LFP_EAVAIL, "a peek consumed the error");

	/* A caller buffer too short for the data (fi_cq(3)): a peek copies
	 * what fits and keeps the entry; a read copies what fits, says how
	 * much in err_data_size, and consumes the entry. */
	{
		char small[5];

		memset(&r, 0, sizeof(r));
		memset(small, 0xEE, sizeof(small));
		r.err_data = small;
		r.err_data_size = sizeof(small);
		cr_assert_eq(lfp_cq_readerr(cq, &r, LFP_PEEK), 1);
		cr_assert_eq(r.err_data_size, sizeof(small), "the bytes copied");
		cr_assert(memcmp(small, blob, sizeof(small)) == 0);
		cr_assert_eq(lfp_cq_read(cq, out, 1), -LFP_EAVAIL, "a peek consumed it");
		memset(&r, 0, sizeof(r));
		memset(small, 0xEE, sizeof(small));
		r.err_data = small;
		r.err_data_size = sizeof(small);
		cr_assert_eq(lfp_cq_readerr(cq, &r, 0), 1);
		check_err_fields(&r, 1);
		cr_assert_eq(r.err_data, (void *)small, "caller's buffer is kept");
		cr_assert_eq(r.err_data_size, sizeof(small), "the bytes copied");
		cr_assert(memcmp(small, blob, sizeof(small)) == 0);
	}
	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_readerr(cq, &r, 0), -EAGAIN, "error queue empty");
	cr_assert_eq(lfp_cq_readerr(cq, &r, LFP_PEEK), -EAGAIN);

	/* Reads resume, and the completions around the error are intact. */
	cr_assert_eq(lfp_cq_read(cq, out, 3), 3);
	for (i = 0; i < 3; i++)
		check_entry(LFP_CQ_FORMAT_MSG, &out[i], i);
	cr_assert_eq(lfp_cq_read(cq, out, 1), -EAGAIN);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, readerr_copies_into_large_buffer_and_owns_data_otherwise)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 16);
	struct lfp_cq_err_entry e, r;
	unsigned char d1[LFP_CQ_ERR_DATA_MAX], big[2 * LFP_CQ_ERR_DATA_MAX];
	unsigned i;

	for (i = 0; i < sizeof(d1); i++)
		d1[i] = (unsigned char)(i * 3 + 1);
	e = make_err(0, d1, sizeof(d1));
	cr_assert_eq(lfp_cq_writeerr(cq, &e), (ssize_t)sizeof(e));
	memset(d1, 0, sizeof(d1)); /* the CQ copied it at write time */
	e = make_err(2, NULL, 0);
	cr_assert_eq(lfp_cq_writeerr(cq, &e), (ssize_t)sizeof(e));

	memset(&r, 0, sizeof(r));
	memset(big, 0xee, sizeof(big));
	r.err_data = big;
	r.err_data_size = sizeof(big);
	cr_assert_eq(lfp_cq_readerr(cq, &r, 0), 1);
	check_err_fields(&r, 0);
	cr_assert_eq(r.err_data, (void *)big);
	cr_assert_eq(r.err_data_size, LFP_CQ_ERR_DATA_MAX, "bytes copied");
	for (i = 0; i < LFP_CQ_ERR_DATA_MAX; i++)
		cr_assert_eq(big[i], (unsigned char)(i * 3 + 1));
	cr_assert_eq(big[LFP_CQ_ERR_DATA_MAX], 0xee, "copied past the data");

	/* An error without data: no data pointer, size 0. */
	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_readerr(cq, &r, 0), 1);
	check_err_fields(&r, 2);
	cr_assert_eq(r.err_data_size, 0);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), -EAGAIN, "no error left, no entry");
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, writeerr_and_readerr_reject_bad_arguments)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 16);
	struct lfp_cq_err_entry e, r;
	unsigned char big[LFP_CQ_ERR_DATA_MAX + 1];

	memset(big, 1, sizeof(big));
	e = make_err(0, NULL, 0);
	e.err = 0;
	cr_assert_eq(lfp_cq_writeerr(cq, &e), -EINVAL, "err 0");
	e = make_err(0, NULL, 4);
	cr_assert_eq(lfp_cq_writeerr(cq, &e), -EINVAL, "size without data");
	e = make_err(0, big, sizeof(big));
	cr_assert_eq(lfp_cq_writeerr(cq, &e), -EMSGSIZE, "data beyond the maximum");
	cr_assert_eq(lfp_cq_writeerr(cq, NULL), -EINVAL);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), -EAGAIN, "nothing was queued");

	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_readerr(cq, &r, 1ull << 3), -EINVAL, "unknown flag");
	r.err_data_size = 4;
	cr_assert_eq(lfp_cq_readerr(cq, &r, 0), -EINVAL, "size without buffer");
	cr_assert_eq(lfp_cq_readerr(cq, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, error_queue_full_is_eagain_and_keeps_order)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 4);
	struct lfp_cq_err_entry e, r;
	unsigned i, n = 0;

	for (i = 0; i < 1000; i++) {
		e = make_err(i, NULL, 0);
		if (lfp_cq_writeerr(cq, &e) != (ssize_t)sizeof(e))
			break;
		n++;
	}
	cr_assert(n >= 4 && n < 1000, "error queue took %u entries", n);
	e = make_err(n, NULL, 0);
	cr_assert_eq(lfp_cq_writeerr(cq, &e), -EAGAIN);
	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		cr_assert_eq(lfp_cq_readerr(cq, &r, 0), 1);
		check_err_fields(&r, i);
	}
	memset(&r, 0, sizeof(r));
	cr_assert_eq(lfp_cq_readerr(cq, &r, 0), -EAGAIN);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* ------------------------------------------------------------ sread */

Test(cq, sread_on_none_and_set_is_enosys)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);
	struct lfp_cq_attr a;
	struct lfp_cq_entry e = { &e };
	struct lfp_wait *ws;

	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_sread(cq, &e, 1, NULL, 0), -ENOSYS);
	cr_assert_eq(lfp_cq_sread(cq, &e, 1, NULL, 10), -ENOSYS);
	cr_assert_eq(lfp_cq_close(cq), 0);

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	a = (struct lfp_cq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_sread(cq, &e, 1, NULL, 10), -ENOSYS);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

static void sread_returns_queued(enum lfp_wait_obj obj)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, obj, 8);
	struct lfp_cq_entry in[4], out[8];
	unsigned i;

	for (i = 0; i < 4; i++)
		in[i].op_context = (void *)(uintptr_t)(i + 1);
	cr_assert_eq(lfp_cq_write(cq, in, 4), 4);
	cr_assert_eq(lfp_cq_sread(cq, out, 8, NULL, -1), 4, "infinite timeout, work queued");
	for (i = 0; i < 4; i++)
		cr_assert_eq(out[i].op_context, in[i].op_context);
	cr_assert_eq(lfp_cq_sread(cq, out, 8, NULL, 0), -EAGAIN, "timeout 0, empty");
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, sread_returns_queued_fd)         { sread_returns_queued(LFP_WAIT_FD); }
Test(cq, sread_returns_queued_mutex_cond) { sread_returns_queued(LFP_WAIT_MUTEX_COND); }
Test(cq, sread_returns_queued_yield)      { sread_returns_queued(LFP_WAIT_YIELD); }
Test(cq, sread_returns_queued_unspec)     { sread_returns_queued(LFP_WAIT_UNSPEC); }

static void sread_times_out(enum lfp_wait_obj obj)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, obj, 16);
	struct lfp_cq_entry in[2] = { { &in[0] }, { &in[1] } }, out[8];
	size_t threshold = 3;
	int64_t t0, dt;
	ssize_t n;

	/* Empty. */
	t0 = now_ms();
	n = lfp_cq_sread(cq, out, 8, NULL, 50);
	dt = now_ms() - t0;
	cr_assert_eq(n, -EAGAIN, "empty CQ, 50 ms: %zd", n);
	cr_assert_geq(dt, 50, "returned after %lld ms", (long long)dt);

	/* Fewer than the threshold. */
	cr_assert_eq(lfp_cq_write(cq, in, 2), 2);
	t0 = now_ms();
	n = lfp_cq_sread(cq, out, 8, &threshold, 50);
	dt = now_ms() - t0;
	cr_assert_eq(n, -EAGAIN, "2 queued, threshold 3: %zd", n);
	cr_assert_geq(dt, 50, "returned after %lld ms", (long long)dt);
	cr_assert_eq(lfp_ring_count(&cq->entries), 2, "nothing was consumed");

	/* Threshold reached: all of them come back. */
	cr_assert_eq(lfp_cq_write(cq, in, 1), 1);
	n = lfp_cq_sread(cq, out, 8, &threshold, 50);
	cr_assert_eq(n, 3, "3 queued, threshold 3: %zd", n);
	cr_assert_eq(out[0].op_context, (void *)&in[0]);
	cr_assert_eq(out[1].op_context, (void *)&in[1]);
	cr_assert_eq(out[2].op_context, (void *)&in[0]);

	/* A threshold above count is capped at count. */
	cr_assert_eq(lfp_cq_write(cq, in, 2), 2);
	threshold = 100;
	n = lfp_cq_sread(cq, out, 2, &threshold, 1000);
	cr_assert_eq(n, 2, "threshold 100 with count 2: %zd", n);

	/* A threshold of 0 acts as 1. */
	cr_assert_eq(lfp_cq_write(cq, in, 1), 1);
	threshold = 0;
	cr_assert_eq(lfp_cq_sread(cq, out, 8, &threshold, 1000), 1);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, sread_times_out_fd)         { sread_times_out(LFP_WAIT_FD); }
Test(cq, sread_times_out_mutex_cond) { sread_times_out(LFP_WAIT_MUTEX_COND); }
Test(cq, sread_times_out_yield)      { sread_times_out(LFP_WAIT_YIELD); }

Test(cq, sread_reports_error_as_eavail)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_FD, 8);
	struct lfp_cq_entry out[4];
	struct lfp_cq_err_entry e = make_err(0, NULL, 0);
	size_t threshold = 4;

	cr_assert_eq(lfp_cq_writeerr(cq, &e), (ssize_t)sizeof(e));
	cr_assert_eq(lfp_cq_sread(cq, out, 4, NULL, 1000), -LFP_EAVAIL);
	cr_assert_eq(lfp_cq_sread(cq, out, 4, &threshold, 1000), -LFP_EAVAIL,
	             "an error ends a threshold wait");
	cr_assert_eq(lfp_cq_sread(cq, out, 4, NULL, 0), -LFP_EAVAIL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, sread_rejects_bad_arguments)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_FD, 8);
	struct lfp_cq_entry out;

	cr_assert_eq(lfp_cq_sread(cq, NULL, 1, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_cq_sread(cq, &out, 0, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_cq_sread(NULL, &out, 1, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/*
 * lfp_cq_signal in one thread.  As in libfabric, a signal that no sread
 * has returned for is remembered: the next sread returns -EAGAIN at once
 * (this is what makes "signal the reader to shut down" race-free), after
 * the completions already queued.  Several signals before one sread are
 * one wake.  The cross-thread wake is in stress_sets.c.
 */
static void signal_before_sread(enum lfp_wait_obj obj)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, obj, 8);
	struct lfp_cq_entry e = { &e }, out[2];
	int64_t t0, dt;
	ssize_t n;

	cr_assert_eq(lfp_cq_signal(cq), 0);
	cr_assert_eq(lfp_cq_signal(cq), 0);
	t0 = now_ms();
	n = lfp_cq_sread(cq, out, 2, NULL, 5000);
	dt = now_ms() - t0;
	cr_assert_eq(n, -EAGAIN, "%zd", n);
	cr_assert_lt(dt, 2500, "a remembered signal still slept %lld ms", (long long)dt);
	/* Both signals were returned for: the next sread waits. */
	t0 = now_ms();
	n = lfp_cq_sread(cq, out, 2, NULL, 50);
	dt = now_ms() - t0;
	cr_assert_eq(n, -EAGAIN, "%zd", n);
	cr_assert_geq(dt, 50, "a signal already returned for cut the wait to %lld ms",
	              (long long)dt);
	/* Queued completions come before a remembered signal. */
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_signal(cq), 0);
	cr_assert_eq(lfp_cq_sread(cq, out, 2, NULL, 1000), 1, "queued entry after a signal");
	cr_assert_eq(out[0].op_context, (void *)&e);
	t0 = now_ms();
	cr_assert_eq(lfp_cq_sread(cq, out, 2, NULL, 5000), -EAGAIN);
	cr_assert_lt(now_ms() - t0, 2500, "the signal behind the entry was forgotten");
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, signal_before_sread_is_remembered_fd)         { signal_before_sread(LFP_WAIT_FD); }
Test(cq, signal_before_sread_is_remembered_mutex_cond) { signal_before_sread(LFP_WAIT_MUTEX_COND); }
Test(cq, signal_before_sread_is_remembered_yield)      { signal_before_sread(LFP_WAIT_YIELD); }

/*
 * A signal that comes while an sread sleeps is that sread's.  Cancelled in
 * its sleep, the sread ends as if it had timed out (docs/contract.md,
 * "Cancellation"): the signal is used up, and the next sread waits out its
 * timeout.  (The cancelled sread left the signal "remembered", so the next
 * sread returned -EAGAIN at once.)  The signal's wake and the cancellation
 * race: the sleeper may return for the signal before the request lands,
 * which ends the same way; here the cancellation lands first in every
 * round.  (A YIELD sleeper is not in this test: it polls the signal count
 * between yields and saw the signal before the request in every round.)
 */
static void *sread_until_cancelled(void *arg)
{
	struct lfp_cq_entry out[1];

	(void)lfp_cq_sread((struct lfp_cq *)arg, out, 1, NULL, -1);
	return arg;
}

static void cancelled_sread_takes_its_signal(enum lfp_wait_obj obj)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, obj, 8);
	const struct timespec asleep = { 0, 20 * 1000 * 1000 };
	struct lfp_cq_entry out[1];
	int round, cancelled = 0;

	for (round = 0; round < 10; round++) {
		pthread_t th;
		void *res = NULL;
		int64_t t0, dt;
		ssize_t n;

		cr_assert_eq(pthread_create(&th, NULL, sread_until_cancelled, cq), 0);
		nanosleep(&asleep, NULL); /* asleep by now, or it will be */
		cr_assert_eq(lfp_cq_signal(cq), 0);
		cr_assert_eq(pthread_cancel(th), 0);
		cr_assert_eq(pthread_join(th, &res), 0);
		cancelled += res == PTHREAD_CANCELED;
		t0 = now_ms();
		n = lfp_cq_sread(cq, out, 1, NULL, 50);
		dt = now_ms() - t0;
		cr_assert_eq(n, -EAGAIN, "%zd", n);
		cr_assert_geq(dt, 50, "round %d: the signal of an sread %s came back "
		              "to end the next one after %lld ms", round,
		              res == PTHREAD_CANCELED ? "cancelled in its sleep" :
		              "that returned for it", (long long)dt);
	}
	cr_assert_eq(lfp_cq_close(cq), 0);
	/* Every round also checks a signal an sread returned for; but the
	 * case this test is for is a cancel in the sleep, which a C library
	 * need not act on once the wake came. */
	if (cancelled == 0)
		cr_skip_test("no sread of 10 was cancelled in its sleep: "
		             "this C library let each return for the signal");
	cr_log_info("%d of 10 sreads cancelled in their sleep", cancelled);
}

Test(cq, cancelled_sread_takes_its_signal_fd)
{ cancelled_sread_takes_its_signal(LFP_WAIT_FD); }
Test(cq, cancelled_sread_takes_its_signal_mutex_cond)
{ cancelled_sread_takes_its_signal(LFP_WAIT_MUTEX_COND); }

Test(cq, signal_on_none_is_harmless)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);

	cr_assert_eq(lfp_cq_signal(cq), 0);
	cr_assert_eq(lfp_cq_signal(NULL), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* An armed FD CQ (trywait 0): lfp_cq_signal makes its fd readable. */
Test(cq, signal_after_trywait_makes_fd_readable)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_FD, 8);
	struct lfp_fid *f = &cq->fid;
	int fd = -1;

	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &fd), 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0));
	cr_assert_eq(lfp_cq_signal(cq), 0);
	cr_assert(fd_readable(fd, 0), "signal after trywait did not signal the fd");
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* ------------------------------------------------------------ control */

Test(cq, control_getwait_and_getwaitobj)
{
	struct lfp_cq *cq;
	struct lfp_cq_attr a;
	struct lfp_mutex_cond mc = { NULL, NULL };
	struct lfp_wait *ws;
	enum lfp_wait_obj obj;
	int fd = -1;

	cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_FD, 8);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_FD);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert(!fd_readable(fd, 0), "idle CQ's fd is readable");
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, NULL), -EINVAL);
	cr_assert_eq(lfp_control(&cq->fid, 12345, &fd), -ENOSYS);
	cr_assert_eq(lfp_cq_close(cq), 0);

	cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_UNSPEC, 8);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert(obj != LFP_WAIT_UNSPEC && obj != LFP_WAIT_NONE,
	          "UNSPEC reports the object in use, got %d", (int)obj);
	if (obj == LFP_WAIT_FD)
		cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), 0);
	else
		cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_eq(lfp_cq_close(cq), 0);

	cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_MUTEX_COND, 8);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_MUTEX_COND);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &mc), 0);
	cr_assert_not_null(mc.mutex);
	cr_assert_not_null(mc.cond);
	cr_assert_eq(pthread_mutex_lock(mc.mutex), 0, "the mutex is usable");
	cr_assert_eq(pthread_mutex_unlock(mc.mutex), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);

	cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_YIELD, 8);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_YIELD);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_eq(lfp_cq_close(cq), 0);

	cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_NONE);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), -ENODATA);
	cr_assert_lt(lfp_control(&cq->fid, LFP_GETWAIT, NULL), 0,
	             "NONE with a NULL argument: an error, no crash");
	cr_assert_eq(lfp_cq_close(cq), 0);

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	a = (struct lfp_cq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), 0);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAITOBJ, &obj), 0);
	cr_assert_eq(obj, LFP_WAIT_SET);
	cr_assert_eq(lfp_control(&cq->fid, LFP_GETWAIT, &fd), -ENODATA,
	             "a member is waited on through its set");
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

/* The trywait protocol on a CQ's own fd. */
Test(cq, trywait_then_write_makes_fd_readable)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_FD, 8);
	struct lfp_fid *f = &cq->fid;
	struct lfp_cq_entry e = { &e };
	int fd;

	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &fd), 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0));
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert(fd_readable(fd, 0), "write after trywait 0: fd not readable");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN, "a completion is queued");
	cr_assert(fd_readable(fd, 0), "a trywait that found work must leave the fd readable");
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert(!fd_readable(fd, 0), "trywait 0 clears the fd");

	/* An error completion is work too. */
	{
		struct lfp_cq_err_entry err = make_err(0, NULL, 0);

		cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
		cr_assert(fd_readable(fd, 0), "writeerr after trywait 0: fd not readable");
		cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
		cr_assert_eq(lfp_cq_readerr(cq, &err, 0), 1);
		cr_assert_eq(lfp_trywait(&f, 1), 0);
	}
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* ------------------------------------------------------------ close */

Test(cq, close_while_in_poll_set_is_ebusy)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);
	struct lfp_poll *ps;

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_cq_close(cq), -EBUSY);
	cr_assert_eq(lfp_close(&cq->fid), -EBUSY);
	cr_assert_eq(lfp_poll_close(ps), -EBUSY);
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_close(&cq->fid), 0, "generic close after poll_del");
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_cq_close(NULL), -EINVAL);
}

Test(cq, close_discards_queued_completions_and_errors)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_TAGGED, LFP_WAIT_FD, 8);
	struct lfp_cq_tagged_entry e[4];
	struct lfp_cq_err_entry err = make_err(0, "x", 1);

	memset(e, 0, sizeof(e));
	cr_assert_eq(lfp_cq_write(cq, e, 4), 4);
	cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* ------------------------------------------------------------ cost */

static void no_syscall_without_waiter(enum lfp_wait_obj obj)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, obj, 256);
	struct lfp_cq_entry e[64];
	struct lfp_fid *f = &cq->fid;
	unsigned i, k;

	for (i = 0; i < 64; i++)
		e[i].op_context = (void *)(uintptr_t)i;
	for (i = 0; i < 1000000; i += 64) {
		cr_assert_eq(lfp_cq_write(cq, e, 32), 32);
		for (k = 0; k < 32; k++)
			cr_assert_eq(lfp_cq_write(cq, &e[k], 1), 1);
		cr_assert_eq(lfp_cq_read(cq, e, 64), 64);
	}
	cr_assert_eq(lfp__cq_stat_signals(cq), 0,
	             "%llu producer system calls with nobody waiting",
	             (unsigned long long)lfp__cq_stat_signals(cq));

	/* One armed waiter: a run of writes costs one signal, not one each. */
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	for (k = 0; k < 100; k++)
		cr_assert_eq(lfp_cq_write(cq, &e[0], 1), 1);
	cr_assert_eq(lfp__cq_stat_signals(cq), 1, "signals after one arm: %llu",
	             (unsigned long long)lfp__cq_stat_signals(cq));
	cr_assert_eq(lfp_cq_close(cq), 0);
}

Test(cq, no_producer_syscall_without_waiter_fd)
{
	no_syscall_without_waiter(LFP_WAIT_FD);
}

Test(cq, no_producer_syscall_without_waiter_mutex_cond)
{
	no_syscall_without_waiter(LFP_WAIT_MUTEX_COND);
}

/* ------------------------------------------------ porting gaps (fi_cq(3)) */

/* fi_cq_readfrom: each completion carries the source address its producer
 * gave; lfp_cq_write gives none (LFP_ADDR_NOTAVAIL).  Across the ring's
 * wrap, in bursts, with and without an address array on either side. */
Test(cq, readfrom_returns_each_completions_source_address)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_DATA, LFP_WAIT_FD, 8);
	struct lfp_cq_data_entry in[5], out[5];
	lfp_addr_t src[5], got[5];
	unsigned lap, i;

	for (lap = 0; lap < 7; lap++) {
		for (i = 0; i < 5; i++) {
			memset(&in[i], 0, sizeof(in[i]));
			in[i].data = lap * 10 + i;
			src[i] = 1000 * lap + i;
		}
		cr_assert_eq(lfp_cq_writefrom(cq, in, src, 3), 3);
		cr_assert_eq(lfp_cq_write(cq, in + 3, 2), 2);
		memset(got, 0, sizeof(got));
		cr_assert_eq(lfp_cq_readfrom(cq, out, 2, got), 2);
		cr_assert_eq(lfp_cq_sreadfrom(cq, out + 2, 3, got + 2, NULL, 1000), 3);
		for (i = 0; i < 5; i++) {
			cr_assert_eq(out[i].data, lap * 10 + i, "lap %u entry %u", lap, i);
			cr_assert_eq(got[i], i < 3 ? src[i] : LFP_ADDR_NOTAVAIL,
			             "lap %u entry %u: address %llu", lap, i,
			             (unsigned long long)got[i]);
		}
	}
	/* An address written is not lost by a plain read. */
	cr_assert_eq(lfp_cq_writefrom(cq, in, src, 1), 1);
	cr_assert_eq(lfp_cq_read(cq, out, 1), 1);
	cr_assert_eq(lfp_cq_readfrom(cq, out, 1, got), -EAGAIN);
	cr_assert_eq(lfp_cq_writefrom(NULL, in, src, 1), -EINVAL);
	cr_assert_eq(lfp_cq_readfrom(cq, out, 0, got), -EINVAL);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* Errors come first through readfrom too. */
Test(cq, readfrom_reports_a_queued_error_first)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);
	struct lfp_cq_entry e = { &e }, out;
	struct lfp_cq_err_entry err;
	lfp_addr_t a = 42, got = 0;

	memset(&err, 0, sizeof(err));
	err.err = EIO;
	cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
	cr_assert_eq(lfp_cq_writefrom(cq, &e, &a, 1), 1);
	cr_assert_eq(lfp_cq_readfrom(cq, &out, 1, &got), -LFP_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(lfp_cq_readerr(cq, &err, 0), 1);
	cr_assert_eq(lfp_cq_readfrom(cq, &out, 1, &got), 1);
	cr_assert_eq(got, 42);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* fi_cq_strerror: without a binding the number is the provider's. */
Test(cq, strerror_names_provider_errors)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_CONTEXT, LFP_WAIT_NONE, 8);
	char buf[64], tiny[4];

	cr_assert_str_eq(lfp_cq_strerror(cq, 7, NULL, buf, sizeof(buf)),
	                 "provider error 7");
	cr_assert_eq(lfp_cq_strerror(cq, 7, NULL, tiny, sizeof(tiny)), tiny);
	cr_assert_str_eq(tiny, "pro");
	cr_assert_not_null(lfp_cq_strerror(NULL, 7, NULL, NULL, 0));
	cr_assert_gt(strlen(lfp_cq_strerror(cq, 7, NULL, NULL, 0)), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* FI_CQ_FORMAT_UNSPEC: lfpoll chooses CONTEXT. */
Test(cq, format_unspec_is_context)
{
	struct lfp_cq *cq = open_cq(LFP_CQ_FORMAT_UNSPEC, LFP_WAIT_NONE, 8);
	struct lfp_cq_entry e = { &e }, out[2];

	cr_assert_eq(cq->format, LFP_CQ_FORMAT_CONTEXT);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_read(cq, out, 2), 1);
	cr_assert_eq(out[0].op_context, (void *)&e);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* fi_cq(3)'s wait_cond: with NONE (the default) sread's cond is ignored and
 * any completion ends the wait; with THRESHOLD it is a size_t threshold. */
Test(cq, wait_cond_none_ignores_cond_threshold_honours_it)
{
	struct lfp_cq_attr a;
	struct lfp_cq *cq = NULL;
	struct lfp_cq_entry e = { &e }, out[4];
	size_t threshold = 3;
	int64_t t0;

	memset(&a, 0, sizeof(a));
	a.size = 8;
	a.wait_obj = LFP_WAIT_FD;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), 0);
	cr_assert_eq(cq->wait_cond, LFP_CQ_COND_NONE);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	t0 = now_ms();
	cr_assert_eq(lfp_cq_sread(cq, out, 4, &threshold, 2000), 1,
	             "COND_NONE: cond must be ignored");
	cr_assert_lt(now_ms() - t0, 1000);
	cr_assert_eq(lfp_cq_close(cq), 0);

	a.wait_cond = LFP_CQ_COND_THRESHOLD;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_sread(cq, out, 4, &threshold, 50), -EAGAIN,
	             "COND_THRESHOLD: 1 < 3 must wait out the timeout");
	cr_assert_eq(lfp_cq_write(cq, out, 2), 2);
	cr_assert_eq(lfp_cq_sread(cq, out, 4, &threshold, 1000), 3);
	cr_assert_eq(lfp_cq_close(cq), 0);

	a.wait_cond = (enum lfp_cq_wait_cond)2;
	cq = NULL;
	cr_assert_eq(lfp_cq_open(&a, &cq, NULL), -EINVAL);
	cr_assert_null(cq);
}
