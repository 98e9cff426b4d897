/*
 * lfpoll event queue: the single-threaded contract of eq.h (docs/contract.md,
 * "Conventions", "Event queues" and "Trywait", after fi_eq(3) and
 * fi_poll(3)), one test per rule.
 *
 * Every multi-threaded property (exactly-once under contention, no lost
 * wake-up, sleepers woken one event at a time, the trywait + poll(2) loop)
 * lives in stress_eq.c, which also runs under ThreadSanitizer.
 */
#include <lfpoll/eq.h>

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "support.h"

/* -------------------------------------------------------------- helpers */

static struct lfp_eq *open_eq(size_t size, uint64_t flags,
                              enum lfp_wait_obj obj, size_t entry_size)
{
	struct lfp_eq_attr attr = {
		.size = size, .flags = flags, .wait_obj = obj, .entry_size = entry_size
	};

	return open_eq_attr(&attr, NULL);
}

static int open_ret(const struct lfp_eq_attr *attr)
{
	struct lfp_eq *eq = NULL;
	int ret = lfp_eq_open(attr, &eq, NULL);

	if (ret == 0)
		lfp_eq_close(eq);
	return ret;
}

static void close_eq(struct lfp_eq *eq)
{
	int ret = lfp_eq_close(eq);

	cr_assert_eq(ret, 0, "lfp_eq_close = %d", ret);
}

/* Write event `code` with len bytes of pattern(seed). */
static void put(struct lfp_eq *eq, uint32_t code, unsigned seed, size_t len)
{
	unsigned char src[1024];
	ssize_t n;

	cr_assert_leq(len, sizeof(src));
	pattern(src, len, seed);
	n = lfp_eq_write(eq, code, src, len, 0);
	cr_assert_eq(n, (ssize_t)len, "write code %u seed %u len %zu = %zd",
	             code, seed, len, n);
}

/* Read with a roomy buffer (flags: 0 or LFP_PEEK) and check everything. */
static void take(struct lfp_eq *eq, uint32_t code, unsigned seed, size_t len,
                 uint64_t flags)
{
	unsigned char want[1024], got[1025];
	uint32_t ev = 0xDEADBEEF;
	ssize_t n;

	cr_assert_lt(len, sizeof(got));
	pattern(want, len, seed);
	memset(got, 0xEE, sizeof(got));
	n = lfp_eq_read(eq, &ev, got, sizeof(got) - 1, flags);
	cr_assert_eq(n, (ssize_t)len, "read (flags %#llx) seed %u: got %zd, "
	             "want %zu", (unsigned long long)flags, seed, n, len);
	cr_assert_eq(ev, code, "read seed %u: event %u, want %u", seed, ev, code);
	cr_assert_arr_eq(got, want, len, "read seed %u: payload differs", seed);
	cr_assert_eq(got[len], 0xEE, "read wrote past the event's length");
}

static ssize_t read_ret(struct lfp_eq *eq, uint64_t flags)
{
	unsigned char buf[256];
	uint32_t ev;

	return lfp_eq_read(eq, &ev, buf, sizeof(buf), flags);
}

static ssize_t put_err(struct lfp_eq *eq, void *ctx, uint64_t data, int err,
                       int prov, const void *edata, size_t elen)
{
	struct lfp_eq_err_entry e;

	memset(&e, 0, sizeof(e));
	e.fid = &eq->fid;
	e.context = ctx;
	e.data = data;
	e.err = err;
	e.prov_errno = prov;
	e.err_data = (void *)(uintptr_t)edata;
	e.err_data_size = elen;
	return lfp_eq_write_err(eq, &e);
}

/* Fill a two-entry EQ with events 1 (1 byte) and 2 (len2 bytes), overrun
 * it and take both events back: what is left is the overrun entry. */
static void overrun_then_drain(struct lfp_eq *eq, size_t len2)
{
	put(eq, 1, 1, 1);
	put(eq, 2, 2, len2);
	cr_assert_eq(lfp_eq_write(eq, 3, NULL, 0, 0), -LFP_EOVERRUN);
	take(eq, 1, 1, 1, 0);
	take(eq, 2, 2, len2, 0);
}

static enum lfp_wait_obj waitobj(struct lfp_eq *eq)
{
	enum lfp_wait_obj o = (enum lfp_wait_obj)-1;
	int ret = lfp_control(&eq->fid, LFP_GETWAITOBJ, &o);

	cr_assert_eq(ret, 0, "LFP_GETWAITOBJ = %d", ret);
	return o;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const char *wait_name(enum lfp_wait_obj o)
{
	switch (o) {
	case LFP_WAIT_NONE:       return "NONE";
	case LFP_WAIT_UNSPEC:     return "UNSPEC";
	case LFP_WAIT_SET:        return "SET";
	case LFP_WAIT_FD:         return "FD";
	case LFP_WAIT_MUTEX_COND: return "MUTEX_COND";
	case LFP_WAIT_YIELD:      return "YIELD";
	case LFP_WAIT_POLLFD:     return "POLLFD";
	}
	return "?";
}

/* A hang (a lost wake-up, a spinning claim) fails the test. */
TestSuite(eq, .timeout = 60);

/* -------------------------------------------------------------- open */

Test(eq, open_with_null_attr_uses_defaults)
{
	struct lfp_eq *eq = NULL;
	int ctx, fd = 123, ret;
	unsigned char payload[LFP_EQ_DEFAULT_ENTRY_SIZE];
	unsigned i;

	ret = lfp_eq_open(NULL, &eq, &ctx);
	cr_assert_eq(ret, 0, "lfp_eq_open(NULL) = %d", ret);
	cr_assert_not_null(eq);
	cr_assert_eq(eq->fid.fclass, LFP_CLASS_EQ);
	cr_assert_eq(eq->fid.context, &ctx, "fid.context is not the open context");
	cr_assert_eq(waitobj(eq), LFP_WAIT_NONE, "default wait object is %s",
	             wait_name(waitobj(eq)));
	/* NONE has no native object to hand out. */
	cr_assert_eq(lfp_control(&eq->fid, LFP_GETWAIT, &fd), -ENODATA);
	/* The default entry size is at least 64 bytes. */
	cr_assert_geq(LFP_EQ_DEFAULT_ENTRY_SIZE, 64);
	pattern(payload, sizeof(payload), 1);
	cr_assert_eq(lfp_eq_write(eq, LFP_NOTIFY, payload, 64, 0), 64);
	take(eq, LFP_NOTIFY, 1, 64, 0);
	/* The default size holds LFP_EQ_DEFAULT_SIZE events. */
	for (i = 0; i < LFP_EQ_DEFAULT_SIZE; i++)
		put(eq, LFP_EVENT_USER, i, i % 9);
	for (i = 0; i < LFP_EQ_DEFAULT_SIZE; i++)
		take(eq, LFP_EVENT_USER, i, i % 9, 0);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, open_null_result_pointer_is_einval)
{
	struct lfp_eq_attr attr;

	memset(&attr, 0, sizeof(attr));
	cr_assert_eq(lfp_eq_open(NULL, opaque_ptr(NULL), NULL), -EINVAL);
	cr_assert_eq(lfp_eq_open(&attr, opaque_ptr(NULL), NULL), -EINVAL);
	attr.wait_obj = LFP_WAIT_FD;
	cr_assert_eq(lfp_eq_open(&attr, opaque_ptr(NULL), NULL), -EINVAL);
}

Test(eq, open_invalid_wait_object_is_einval)
{
	struct lfp_eq_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = (enum lfp_wait_obj)99;
	cr_assert_eq(open_ret(&attr), -EINVAL, "wait object 99 accepted");
	attr.wait_obj = (enum lfp_wait_obj)-1;
	cr_assert_eq(open_ret(&attr), -EINVAL, "wait object -1 accepted");
	/* POLLFD is a wait-set object, not an EQ's. */
	attr.wait_obj = LFP_WAIT_POLLFD;
	cr_assert_eq(open_ret(&attr), -EINVAL, "wait object POLLFD accepted");
}

Test(eq, open_every_valid_wait_object_is_accepted)
{
	enum lfp_wait_obj ok[] = { LFP_WAIT_NONE, LFP_WAIT_UNSPEC, LFP_WAIT_FD,
	                           LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD };
	struct lfp_eq_attr attr;
	size_t i;

	memset(&attr, 0, sizeof(attr));
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		attr.wait_obj = ok[i];
		cr_assert_eq(open_ret(&attr), 0, "wait object %s refused",
		             wait_name(ok[i]));
	}
}

Test(eq, open_unknown_flag_bits_are_einval)
{
	struct lfp_eq_attr attr;
	unsigned bit;

	memset(&attr, 0, sizeof(attr));
	attr.flags = LFP_WRITE | LFP_AFFINITY | LFP_EQ_BACKPRESSURE |
	             LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER;
	cr_assert_eq(open_ret(&attr), 0, "the documented open flags refused");
	for (bit = 0; bit < 64; bit++) {
		uint64_t f = (uint64_t)1 << bit;

		if (f & (LFP_WRITE | LFP_AFFINITY | LFP_EQ_BACKPRESSURE |
		         LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER))
			continue;
		attr.flags = f;
		cr_assert_eq(open_ret(&attr), -EINVAL, "flag bit %u accepted", bit);
		attr.flags = f | LFP_WRITE;
		cr_assert_eq(open_ret(&attr), -EINVAL, "flag bit %u accepted "
		             "next to LFP_WRITE", bit);
	}
}

Test(eq, open_wait_set_object_without_wait_set_is_einval)
{
	struct lfp_eq_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = LFP_WAIT_SET;
	attr.wait_set = NULL;
	cr_assert_eq(open_ret(&attr), -EINVAL);
}

Test(eq, open_wait_set_with_other_wait_object_is_einval)
{
	enum lfp_wait_obj objs[] = { LFP_WAIT_NONE, LFP_WAIT_UNSPEC, LFP_WAIT_FD,
	                             LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD };
	struct lfp_eq_attr attr;
	struct lfp_wait *ws = NULL;
	size_t i;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	memset(&attr, 0, sizeof(attr));
	attr.wait_set = ws;
	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		attr.wait_obj = objs[i];
		cr_assert_eq(open_ret(&attr), -EINVAL, "wait_set accepted with "
		             "wait object %s", wait_name(objs[i]));
	}
	/* Nothing joined the set. */
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(eq, open_size_is_rounded_up_to_a_power_of_two)
{
	struct lfp_eq *eq = open_eq(5, 0, LFP_WAIT_NONE, 0);
	unsigned i;

	for (i = 0; i < 8; i++)
		put(eq, LFP_EVENT_USER + i, i, i);
	cr_assert_eq(lfp_eq_write(eq, 1, NULL, 0, 0), -LFP_EOVERRUN,
	             "a size-5 EQ took a ninth event");
	for (i = 0; i < 8; i++)
		take(eq, LFP_EVENT_USER + i, i, i, 0);
	close_eq(eq);

	/* Again with back-pressure, so that full is visible without overrun. */
	eq = open_eq(5, LFP_EQ_BACKPRESSURE, LFP_WAIT_NONE, 0);
	for (i = 0; i < 8; i++)
		put(eq, LFP_EVENT_USER, i, 3);
	cr_assert_eq(lfp_eq_write(eq, 1, NULL, 0, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, open_size_out_of_range_is_einval)
{
	struct lfp_eq_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = SIZE_MAX;
	cr_assert_eq(open_ret(&attr), -EINVAL, "size SIZE_MAX accepted");
	attr.size = 0;
	attr.entry_size = SIZE_MAX;
	cr_assert_eq(open_ret(&attr), -EINVAL, "entry_size SIZE_MAX accepted");
}

Test(eq, entry_size_limit_is_max_entry_size)
{
	struct lfp_eq_attr attr;
	struct lfp_eq *eq;

	memset(&attr, 0, sizeof(attr));
	attr.size = 4;
	attr.entry_size = LFP_EQ_MAX_ENTRY_SIZE + 1;
	cr_assert_eq(open_ret(&attr), -EINVAL, "entry_size %zu accepted",
	             attr.entry_size);
	attr.entry_size = LFP_EQ_MAX_ENTRY_SIZE;
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	put(eq, LFP_EQ_MAX_EVENT, 7, 1000);
	take(eq, LFP_EQ_MAX_EVENT, 7, 1000, LFP_PEEK);
	take(eq, LFP_EQ_MAX_EVENT, 7, 1000, 0);
	lfp_eq_close(eq);
}

/* The code shares the slot word with the length: every code up to the
 * largest, with every length, comes back whole. */
Test(eq, event_code_and_length_round_trip)
{
	static const uint32_t codes[] = {
		LFP_NOTIFY, LFP_CONNREQ, LFP_JOIN_COMPLETE, LFP_EVENT_USER,
		0xff, 0x100, 0x1234, LFP_EQ_MAX_EVENT - 1, LFP_EQ_MAX_EVENT,
	};
	struct lfp_eq_attr attr;
	struct lfp_eq *eq;
	unsigned char b = 0;
	size_t i, len;

	memset(&attr, 0, sizeof(attr));
	attr.size = 8;
	attr.entry_size = 24; /* an fi_eq_entry: two slots a line */
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		for (len = 0; len <= 24; len += 8) {
			put(eq, codes[i], (unsigned)(i * 31 + len), len);
			take(eq, codes[i], (unsigned)(i * 31 + len), len, LFP_PEEK);
			take(eq, codes[i], (unsigned)(i * 31 + len), len, 0);
		}
	cr_assert_eq(lfp_eq_write(eq, LFP_EQ_MAX_EVENT + 1, &b, 1, 0), -EINVAL,
	             "a code above LFP_EQ_MAX_EVENT was accepted");
	cr_assert_eq(lfp_eq_write(eq, UINT32_MAX, &b, 1, 0), -EINVAL);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused write queued something");
	lfp_eq_close(eq);
}

Test(eq, open_honours_entry_size)
{
	unsigned char big[301];
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 300);

	put(eq, 7, 1, 300);
	put(eq, 8, 2, 0);
	put(eq, 9, 3, 299);
	pattern(big, sizeof(big), 4);
	cr_assert_eq(lfp_eq_write(eq, 10, big, 301, 0), -EMSGSIZE);
	take(eq, 7, 1, 300, 0);
	take(eq, 8, 2, 0, 0);
	take(eq, 9, 3, 299, 0);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	close_eq(eq);

	/* A small entry size is a limit too, not only a minimum. */
	eq = open_eq(8, 0, LFP_WAIT_NONE, 5);
	put(eq, 1, 5, 5);
	cr_assert_eq(lfp_eq_write(eq, 2, big, 6, 0), -EMSGSIZE);
	take(eq, 1, 5, 5, 0);
	close_eq(eq);
}

/* -------------------------------------------------------------- write */

Test(eq, write_returns_len)
{
	struct lfp_eq *eq = open_eq(16, 0, LFP_WAIT_NONE, 64);
	unsigned char buf[64];
	size_t len;

	pattern(buf, sizeof(buf), 9);
	for (len = 0; len <= 64; len += 8)
		cr_assert_eq(lfp_eq_write(eq, LFP_CONNREQ, buf, len, 0),
		             (ssize_t)len);
	close_eq(eq);
}

Test(eq, write_of_zero_bytes_is_legal)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	uint32_t ev = 0;
	unsigned char buf[8];

	cr_assert_eq(lfp_eq_write(eq, LFP_CONNECTED, opaque_ptr(NULL), 0, 0), 0);
	cr_assert_eq(lfp_eq_write(eq, LFP_SHUTDOWN, buf, 0, 0), 0);
	/* Read into no buffer at all... */
	cr_assert_eq(lfp_eq_read(eq, &ev, opaque_ptr(NULL), 0, 0), 0);
	cr_assert_eq(ev, LFP_CONNECTED);
	/* ... and into a roomy one. */
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, sizeof(buf), 0), 0);
	cr_assert_eq(ev, LFP_SHUTDOWN);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, write_longer_than_entry_size_is_emsgsize_and_writes_nothing)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 16);
	unsigned char buf[17];

	pattern(buf, sizeof(buf), 2);
	cr_assert_eq(lfp_eq_write(eq, 1, buf, 17, 0), -EMSGSIZE);
	cr_assert_eq(lfp_eq_write(eq, 1, buf, opaque_size(SIZE_MAX), 0), -EMSGSIZE);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused write queued something");
	cr_assert_eq(trywait1(&eq->fid), 0, "a refused write left the EQ ready");
	/* The EQ still works. */
	put(eq, 2, 3, 16);
	take(eq, 2, 3, 16, 0);
	close_eq(eq);
}

Test(eq, write_with_flags_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	unsigned char buf[8];
	unsigned bit;

	pattern(buf, sizeof(buf), 1);
	for (bit = 0; bit < 64; bit++)
		cr_assert_eq(lfp_eq_write(eq, 1, buf, sizeof(buf),
		                          (uint64_t)1 << bit), -EINVAL,
		             "write accepted flag bit %u", bit);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused write queued something");
	close_eq(eq);
}

Test(eq, write_null_buf_with_len_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);

	cr_assert_eq(lfp_eq_write(eq, 1, opaque_ptr(NULL), opaque_size(8), 0),
	             -EINVAL);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused write queued something");
	close_eq(eq);
}

/* -------------------------------------------------------------- read */

Test(eq, read_returns_events_in_fifo_order_one_per_call)
{
	struct lfp_eq *eq = open_eq(16, 0, LFP_WAIT_NONE, 64);
	uint32_t codes[] = { LFP_NOTIFY, LFP_CONNREQ, LFP_CONNECTED, LFP_SHUTDOWN,
	                     LFP_MR_COMPLETE, LFP_AV_COMPLETE, LFP_JOIN_COMPLETE,
	                     LFP_EVENT_USER, LFP_EQ_MAX_EVENT };
	size_t n = sizeof(codes) / sizeof(codes[0]), i, round;

	/* Several laps, so that slots are reused. */
	for (round = 0; round < 5; round++) {
		for (i = 0; i < n; i++)
			put(eq, codes[i], (unsigned)(round * 100 + i), (i * 7) % 65);
		for (i = 0; i < n; i++)
			take(eq, codes[i], (unsigned)(round * 100 + i), (i * 7) % 65, 0);
		cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	}
	close_eq(eq);
}

Test(eq, read_on_empty_eq_is_eagain)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	unsigned char buf[64], untouched[64];
	uint32_t ev = 77;

	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, sizeof(buf), 0), -EAGAIN);
	cr_assert_arr_eq(buf, untouched, sizeof(buf), "an empty read wrote to buf");
	cr_assert_eq(ev, 77, "an empty read wrote *event");
	/* Again after one event went through. */
	put(eq, 1, 1, 10);
	take(eq, 1, 1, 10, 0);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, short_buffer_keeps_event)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 64);
	unsigned char buf[64], untouched[64];
	uint32_t ev = 0;

	put(eq, LFP_CONNREQ, 5, 40);
	put(eq, LFP_CONNECTED, 6, 3);
	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, 39, 0), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, 1, 0), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_eq_read(eq, &ev, opaque_ptr(NULL), 0, 0), -LFP_ETOOSMALL);
	cr_assert_arr_eq(buf, untouched, sizeof(buf),
	                 "a -LFP_ETOOSMALL read wrote to buf");
	/* Still the head, in order, with exactly enough room. */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, 40, 0), 40);
	pattern(untouched, 40, 5);
	cr_assert_arr_eq(buf, untouched, 40);
	cr_assert_eq(ev, LFP_CONNREQ);
	take(eq, LFP_CONNECTED, 6, 3, 0);
	close_eq(eq);
}

Test(eq, peek_returns_head_without_consuming)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 64);

	put(eq, LFP_MR_COMPLETE, 11, 24);
	put(eq, LFP_AV_COMPLETE, 12, 8);
	take(eq, LFP_MR_COMPLETE, 11, 24, LFP_PEEK);
	take(eq, LFP_MR_COMPLETE, 11, 24, LFP_PEEK);
	/* The next non-peek read returns the same event. */
	take(eq, LFP_MR_COMPLETE, 11, 24, 0);
	take(eq, LFP_AV_COMPLETE, 12, 8, LFP_PEEK);
	take(eq, LFP_AV_COMPLETE, 12, 8, 0);
	cr_assert_eq(read_ret(eq, LFP_PEEK), -EAGAIN);
	close_eq(eq);
}

Test(eq, peek_on_empty_eq_is_eagain)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);

	cr_assert_eq(read_ret(eq, LFP_PEEK), -EAGAIN);
	close_eq(eq);
}

Test(eq, peek_with_short_buffer_is_etoosmall_and_keeps_event)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 64);
	unsigned char buf[64], untouched[64];
	uint32_t ev = 0;

	put(eq, 3, 7, 33);
	memset(buf, 0xEE, sizeof(buf));
	memset(untouched, 0xEE, sizeof(untouched));
	cr_assert_eq(lfp_eq_read(eq, &ev, buf, 32, LFP_PEEK), -LFP_ETOOSMALL);
	cr_assert_eq(lfp_eq_read(eq, &ev, opaque_ptr(NULL), 0, LFP_PEEK),
	             -LFP_ETOOSMALL);
	cr_assert_arr_eq(buf, untouched, sizeof(buf),
	                 "a -LFP_ETOOSMALL peek wrote to buf");
	take(eq, 3, 7, 33, LFP_PEEK);
	take(eq, 3, 7, 33, 0);
	close_eq(eq);
}

Test(eq, peek_leaves_readiness_alone)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);
	int fd = getwait_fd(&eq->fid);

	cr_assert_eq(trywait1(&eq->fid), 0);
	put(eq, 1, 1, 4);
	cr_assert(fd_readable(fd, 0));
	take(eq, 1, 1, 4, LFP_PEEK);
	/* The event is still there: still readable, still not safe to block. */
	cr_assert(fd_readable(fd, 0), "a peek cleared the fd");
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN, "trywait said block after a peek");
	cr_assert(fd_readable(fd, 0), "trywait on a non-empty EQ cleared the fd");
	take(eq, 1, 1, 4, 0);
	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert(!fd_readable(fd, 0));
	close_eq(eq);
}

Test(eq, read_with_unknown_flags_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	unsigned bit;

	put(eq, 4, 4, 4);
	for (bit = 0; bit < 64; bit++) {
		uint64_t f = (uint64_t)1 << bit;

		if (f == LFP_PEEK)
			continue;
		cr_assert_eq(read_ret(eq, f), -EINVAL, "read accepted flag bit %u",
		             bit);
		cr_assert_eq(read_ret(eq, f | LFP_PEEK), -EINVAL,
		             "read accepted flag bit %u with LFP_PEEK", bit);
	}
	take(eq, 4, 4, 4, 0); /* nothing was consumed */
	close_eq(eq);
}

Test(eq, read_null_event_pointer_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	unsigned char buf[16];

	put(eq, 4, 4, 4);
	cr_assert_eq(lfp_eq_read(eq, opaque_ptr(NULL), buf, sizeof(buf), 0),
	             -EINVAL);
	cr_assert_eq(lfp_eq_read(eq, &(uint32_t){0}, opaque_ptr(NULL),
	                         opaque_size(16), 0), -EINVAL);
	take(eq, 4, 4, 4, 0);
	close_eq(eq);
}

/* -------------------------------------------------------------- errors */

Test(eq, queued_error_makes_read_and_sread_return_eavail)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_FD, 0);
	unsigned char buf[64];
	uint32_t ev = 0;

	put(eq, 1, 1, 8);
	put(eq, 2, 2, 8);
	cr_assert_eq(put_err(eq, NULL, 0, EIO, 0, NULL, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL, "events hid a queued error");
	cr_assert_eq(read_ret(eq, LFP_PEEK), -LFP_EAVAIL);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), -LFP_EAVAIL);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), -LFP_EAVAIL);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 50, LFP_PEEK),
	             -LFP_EAVAIL);
	close_eq(eq);
}

Test(eq, queued_error_on_empty_eq_makes_read_return_eavail)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);

	cr_assert_geq(put_err(eq, NULL, 0, ENOENT, 0, NULL, 0), 0);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	close_eq(eq);
}

Test(eq, readerr_preserves_every_field)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;
	struct lfp_fid other;
	int ctx;

	memset(&other, 0, sizeof(other)); /* whatever the layout */
	memset(&e, 0, sizeof(e));
	e.fid = &other;
	e.context = &ctx;
	e.data = 0x0123456789ABCDEFull;
	e.err = ECONNREFUSED;
	e.prov_errno = -42;
	cr_assert_eq(lfp_eq_write_err(eq, &e),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));

	memset(&e, 0x5A, sizeof(e));
	e.err_data = NULL;
	e.err_data_size = 0;
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.fid, &other);
	cr_assert_eq(e.context, &ctx);
	cr_assert_eq(e.data, 0x0123456789ABCDEFull);
	cr_assert_eq(e.err, ECONNREFUSED);
	cr_assert_eq(e.prov_errno, -42);
	cr_assert_eq(e.err_data_size, 0);
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, readerr_returns_errors_in_fifo_order)
{
	struct lfp_eq *eq = open_eq(16, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;
	int i;

	for (i = 1; i <= 10; i++)
		cr_assert_geq(put_err(eq, NULL, (uint64_t)i * 3, i, -i, NULL, 0), 0);
	for (i = 1; i <= 10; i++) {
		memset(&e, 0, sizeof(e));
		cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
		             (ssize_t)sizeof(struct lfp_eq_err_entry));
		cr_assert_eq(e.err, i, "error %d came back as %d", i, e.err);
		cr_assert_eq(e.prov_errno, -i);
		cr_assert_eq(e.data, (uint64_t)i * 3);
	}
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, readerr_copies_err_data_into_caller_buffer)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 64);
	unsigned char src[10], dst[32], want[32];
	struct lfp_eq_err_entry e;

	pattern(src, sizeof(src), 21);
	cr_assert_geq(put_err(eq, NULL, 1, EIO, 5, src, sizeof(src)), 0);
	memset(src, 0, sizeof(src)); /* the EQ keeps its own copy */
	memset(dst, 0xEE, sizeof(dst));
	memset(&e, 0, sizeof(e));
	e.err_data = dst;
	e.err_data_size = sizeof(dst);
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.err_data, dst, "err_data no longer points at my buffer");
	cr_assert_eq(e.err_data_size, 10, "err_data_size %zu, want the 10 bytes "
	             "copied", e.err_data_size);
	pattern(want, 10, 21);
	memset(want + 10, 0xEE, sizeof(want) - 10);
	cr_assert_arr_eq(dst, want, sizeof(dst), "err_data copy differs or "
	                 "overran the data");
	cr_assert_eq(e.err, EIO);
	cr_assert_eq(e.prov_errno, 5);
	close_eq(eq);
}

/* fi_eq(3): "On output, err_data_size will be set to the number of bytes
 * copied to the err_data buffer."  A short buffer gets the data cut to its
 * size, and the entry is consumed. */
Test(eq, readerr_cuts_the_data_to_a_short_buffer_and_consumes_the_entry)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 64);
	unsigned char src[20], dst[16], want[16];
	struct lfp_eq_err_entry e;

	pattern(src, sizeof(src), 22);
	cr_assert_geq(put_err(eq, NULL, 1, EIO, 5, src, sizeof(src)), 0);
	cr_assert_geq(put_err(eq, NULL, 2, EIO, 6, src, 4), 0);
	memset(dst, 0xEE, sizeof(dst));
	memset(&e, 0, sizeof(e));
	e.err_data = dst;
	e.err_data_size = 8;
	cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.err_data_size, 8, "err_data_size %zu: the bytes copied",
	             e.err_data_size);
	memset(dst, 0xEE, sizeof(dst));
	e.err_data = dst;
	e.err_data_size = 8;
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.err_data, (void *)dst, "the caller's buffer is kept");
	cr_assert_eq(e.err_data_size, 8, "err_data_size %zu: the bytes copied",
	             e.err_data_size);
	cr_assert_eq(e.prov_errno, 5);
	memcpy(want, src, 8);
	memset(want + 8, 0xEE, sizeof(want) - 8);
	cr_assert_arr_eq(dst, want, sizeof(dst), "not the first 8 bytes, or past them");
	/* Consumed: the next readerr returns the second error. */
	memset(&e, 0, sizeof(e));
	e.err_data = dst;
	e.err_data_size = sizeof(dst);
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.prov_errno, 6, "the cut-short entry was not consumed");
	cr_assert_eq(e.err_data_size, 4);
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	lfp_eq_close(eq);
}

Test(eq, readerr_without_buffer_points_at_eq_owned_data)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 64);
	unsigned char src[64], want[64];
	struct lfp_eq_err_entry e;

	pattern(src, sizeof(src), 23);
	memcpy(want, src, sizeof(want));
	cr_assert_geq(put_err(eq, NULL, 1, EPROTO, 9, src, sizeof(src)), 0);
	memset(src, 0, sizeof(src)); /* write_err copied it */
	memset(&e, 0, sizeof(e));
	e.err_data = (void *)0x1; /* ignored: err_data_size is 0 */
	e.err_data_size = 0;
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_not_null(e.err_data);
	cr_assert_neq(e.err_data, (void *)0x1);
	cr_assert_neq(e.err_data, (void *)src, "err_data is the writer's buffer");
	cr_assert_eq(e.err_data_size, 64);
	cr_assert_arr_eq(e.err_data, want, 64, "EQ-owned err_data differs");
	close_eq(eq);
}

Test(eq, readerr_peek_keeps_the_entry)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 64);
	unsigned char src[12], dst[12];
	struct lfp_eq_err_entry e;
	int i;

	pattern(src, sizeof(src), 24);
	cr_assert_geq(put_err(eq, NULL, 77, EBUSY, 1, src, sizeof(src)), 0);
	cr_assert_geq(put_err(eq, NULL, 78, EPERM, 2, NULL, 0), 0);
	for (i = 0; i < 3; i++) {
		memset(&e, 0, sizeof(e));
		memset(dst, 0, sizeof(dst));
		e.err_data = dst;
		e.err_data_size = sizeof(dst);
		cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK),
		             (ssize_t)sizeof(struct lfp_eq_err_entry));
		cr_assert_eq(e.err, EBUSY);
		cr_assert_eq(e.data, 77);
		cr_assert_eq(e.err_data_size, sizeof(src));
		cr_assert_arr_eq(dst, src, sizeof(src));
		cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL,
		             "the peeked error stopped blocking reads");
	}
	/* EQ-owned data with a peek, too. */
	memset(&e, 0, sizeof(e));
	cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.err_data_size, sizeof(src));
	cr_assert_not_null(e.err_data);
	cr_assert_arr_eq(e.err_data, src, sizeof(src));
	/* Now consume both, in order. */
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, EBUSY);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, EPERM);
	cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK), -EAGAIN);
	close_eq(eq);
}

Test(eq, readerr_on_empty_error_queue_is_eagain)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;

	memset(&e, 0, sizeof(e));
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK), -EAGAIN);
	/* Events are not errors. */
	put(eq, 1, 1, 1);
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	take(eq, 1, 1, 1, 0);
	close_eq(eq);
}

Test(eq, readerr_with_unknown_flags_is_einval)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;
	unsigned bit;

	cr_assert_geq(put_err(eq, NULL, 0, EIO, 0, NULL, 0), 0);
	for (bit = 0; bit < 64; bit++) {
		if (((uint64_t)1 << bit) == LFP_PEEK)
			continue;
		memset(&e, 0, sizeof(e));
		cr_assert_eq(lfp_eq_readerr(eq, &e, (uint64_t)1 << bit), -EINVAL,
		             "readerr accepted flag bit %u", bit);
	}
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0); /* still queued */
	cr_assert_eq(e.err, EIO);
	close_eq(eq);
}

Test(eq, read_returns_events_again_after_error_is_read)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;

	put(eq, 1, 1, 5);
	cr_assert_geq(put_err(eq, NULL, 0, EIO, 0, NULL, 0), 0);
	put(eq, 2, 2, 6);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	take(eq, 1, 1, 5, 0);
	take(eq, 2, 2, 6, 0);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, write_err_with_zero_err_is_einval)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;

	cr_assert_eq(put_err(eq, NULL, 0, 0, 5, NULL, 0), -EINVAL);
	cr_assert_eq(lfp_eq_write_err(eq, opaque_ptr(NULL)), -EINVAL);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused error was queued");
	memset(&e, 0, sizeof(e));
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, write_err_with_too_much_err_data_is_emsgsize)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 16);
	unsigned char src[17];
	struct lfp_eq_err_entry e;

	pattern(src, sizeof(src), 3);
	cr_assert_eq(put_err(eq, NULL, 0, EIO, 0, src, 17), -EMSGSIZE);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "a refused error was queued");
	/* Exactly entry_size bytes is fine. */
	cr_assert_eq(put_err(eq, NULL, 0, EIO, 0, src, 16),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err_data_size, 16);
	cr_assert_arr_eq(e.err_data, src, 16);
	close_eq(eq);
}

/* -------------------------------------------------------------- overrun */

Test(eq, full_eq_overruns_and_loses_nothing_queued)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 32);
	struct lfp_eq_err_entry e;
	unsigned i;

	for (i = 0; i < 4; i++)
		put(eq, LFP_EVENT_USER + i, 40 + i, 8 * i);
	cr_assert_eq(lfp_eq_write(eq, 9, NULL, 0, 0), -LFP_EOVERRUN);
	/* Overrun is fatal: every later write fails the same way. */
	cr_assert_eq(lfp_eq_write(eq, 9, NULL, 0, 0), -LFP_EOVERRUN);
	cr_assert_eq(put_err(eq, NULL, 0, EIO, 0, NULL, 0), -LFP_EOVERRUN);
	/* Every queued event comes back intact, peeks included. */
	for (i = 0; i < 4; i++) {
		take(eq, LFP_EVENT_USER + i, 40 + i, 8 * i, LFP_PEEK);
		take(eq, LFP_EVENT_USER + i, 40 + i, 8 * i, 0);
	}
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	cr_assert_eq(read_ret(eq, LFP_PEEK), -LFP_EAVAIL);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	for (i = 0; i < 3; i++) {
		memset(&e, 0x5A, sizeof(e));
		e.err_data_size = 0;
		cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
		             (ssize_t)sizeof(struct lfp_eq_err_entry),
		             "readerr %u after overrun", i);
		cr_assert_eq(e.err, LFP_EOVERRUN, "overrun entry err %d", e.err);
		cr_assert_eq(e.fid, &eq->fid, "overrun entry fid is not the EQ's");
		cr_assert_eq(e.err_data_size, 0);
	}
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL, "overrun cleared by readerr");
	cr_assert_eq(lfp_eq_write(eq, 9, NULL, 0, 0), -LFP_EOVERRUN);
	close_eq(eq);
}

Test(eq, overrun_entry_is_reported_by_readerr_peek)
{
	struct lfp_eq *eq = open_eq(2, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;

	overrun_then_drain(eq, 2);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	/* read says an error entry is available: a peek must see it too. */
	memset(&e, 0, sizeof(e));
	cr_assert_eq(lfp_eq_readerr(eq, &e, LFP_PEEK),
	             (ssize_t)sizeof(struct lfp_eq_err_entry),
	             "readerr(LFP_PEEK) after overrun: read returned -LFP_EAVAIL "
	             "but the peek found no entry");
	cr_assert_eq(e.err, LFP_EOVERRUN);
	cr_assert_eq(e.fid, &eq->fid);
	close_eq(eq);
}

Test(eq, overrun_entry_carries_the_eq_fid_and_context)
{
	struct lfp_eq_attr attr;
	struct lfp_eq *eq = NULL;
	struct lfp_eq_err_entry e;
	int ctx;

	memset(&attr, 0, sizeof(attr));
	attr.size = 2;
	cr_assert_eq(lfp_eq_open(&attr, &eq, &ctx), 0);
	overrun_then_drain(eq, 2);
	memset(&e, 0x5A, sizeof(e));
	e.err_data_size = 0;
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	cr_assert_eq(e.err, LFP_EOVERRUN);
	cr_assert_eq(e.fid, &eq->fid);
	cr_assert_eq(e.context, &ctx, "overrun entry context is not the EQ's");
	cr_assert_eq(e.data, 0);
	cr_assert_eq(e.prov_errno, 0);
	cr_assert_null(e.err_data);
	cr_assert_eq(e.err_data_size, 0);
	close_eq(eq);
}

Test(eq, overrun_entry_comes_after_queued_errors)
{
	struct lfp_eq *eq = open_eq(2, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;

	cr_assert_geq(put_err(eq, NULL, 5, EIO, 0, NULL, 0), 0);
	put(eq, 1, 1, 1);
	put(eq, 2, 2, 2);
	cr_assert_eq(lfp_eq_write(eq, 3, NULL, 0, 0), -LFP_EOVERRUN);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, EIO, "the queued error was replaced by the overrun");
	cr_assert_eq(e.data, 5);
	take(eq, 1, 1, 1, 0);
	take(eq, 2, 2, 2, 0);
	cr_assert_eq(read_ret(eq, 0), -LFP_EAVAIL);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, LFP_EOVERRUN);
	close_eq(eq);
}

Test(eq, full_error_queue_overruns_and_loses_nothing_queued)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 8);
	struct lfp_eq_err_entry e;
	unsigned char d[8];
	ssize_t r = 0;
	int i, n = 0;

	/* Fill whatever the error queue holds; the write that does not fit
	 * must overrun the EQ, not drop or replace an error. */
	for (i = 1; i < 100000; i++) {
		pattern(d, sizeof(d), (unsigned)i);
		r = put_err(eq, NULL, (uint64_t)i, i, 0, d, sizeof(d));
		if (r < 0)
			break;
		n++;
	}
	cr_assert_eq(r, -LFP_EOVERRUN, "write_err to a full error queue = %zd", r);
	cr_assert_gt(n, 0);
	cr_assert_eq(lfp_eq_write(eq, 1, NULL, 0, 0), -LFP_EOVERRUN);
	for (i = 1; i <= n; i++) {
		memset(&e, 0, sizeof(e));
		cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
		cr_assert_eq(e.err, i, "error %d came back as %d", i, e.err);
		pattern(d, sizeof(d), (unsigned)i);
		cr_assert_eq(e.err_data_size, sizeof(d));
		cr_assert_arr_eq(e.err_data, d, sizeof(d));
	}
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, LFP_EOVERRUN);
	close_eq(eq);
}

Test(eq, backpressure_full_eq_returns_eagain_and_stays_usable)
{
	struct lfp_eq *eq = open_eq(4, LFP_EQ_BACKPRESSURE, LFP_WAIT_NONE, 16);
	struct lfp_eq_err_entry e;
	unsigned i;

	for (i = 0; i < 4; i++)
		put(eq, 100 + i, i, i + 1);
	cr_assert_eq(lfp_eq_write(eq, 5, NULL, 0, 0), -EAGAIN);
	cr_assert_eq(lfp_eq_write(eq, 5, NULL, 0, 0), -EAGAIN);
	take(eq, 100, 0, 1, 0);
	put(eq, 104, 4, 5); /* one slot freed: one more fits */
	cr_assert_eq(lfp_eq_write(eq, 5, NULL, 0, 0), -EAGAIN);
	for (i = 1; i < 5; i++)
		take(eq, 100 + i, i, i + 1, 0);
	cr_assert_eq(read_ret(eq, 0), -EAGAIN, "back-pressure left an overrun");
	memset(&e, 0, sizeof(e));
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN);
	put(eq, 200, 9, 16);
	take(eq, 200, 9, 16, 0);
	close_eq(eq);
}

Test(eq, backpressure_full_error_queue_returns_eagain_and_stays_usable)
{
	struct lfp_eq *eq = open_eq(4, LFP_EQ_BACKPRESSURE, LFP_WAIT_NONE, 0);
	struct lfp_eq_err_entry e;
	ssize_t r = 0;
	int i, n = 0;

	for (i = 1; i < 100000; i++) {
		r = put_err(eq, NULL, 0, i, 0, NULL, 0);
		if (r < 0)
			break;
		n++;
	}
	cr_assert_eq(r, -EAGAIN, "write_err to a full error queue = %zd", r);
	put(eq, 1, 1, 1); /* events still flow */
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(e.err, 1);
	cr_assert_eq(put_err(eq, NULL, 0, n + 1, 0, NULL, 0),
	             (ssize_t)sizeof(struct lfp_eq_err_entry));
	for (i = 2; i <= n + 1; i++) {
		memset(&e, 0, sizeof(e));
		cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
		cr_assert_eq(e.err, i);
	}
	cr_assert_eq(lfp_eq_readerr(eq, &e, 0), -EAGAIN, "back-pressure overran");
	take(eq, 1, 1, 1, 0);
	close_eq(eq);
}

/* -------------------------------------------------------------- sread */

static void sread_zero_timeout(enum lfp_wait_obj obj)
{
	struct lfp_eq *eq = open_eq(4, 0, obj, 0);
	unsigned char buf[16];
	uint32_t ev;

	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), -EAGAIN,
	             "%s", wait_name(obj));
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, LFP_PEEK), -EAGAIN,
	             "%s", wait_name(obj));
	close_eq(eq);
}

Test(eq, sread_with_zero_timeout_on_empty_eq_is_eagain)
{
	sread_zero_timeout(LFP_WAIT_FD);
	sread_zero_timeout(LFP_WAIT_MUTEX_COND);
	sread_zero_timeout(LFP_WAIT_YIELD);
	sread_zero_timeout(LFP_WAIT_UNSPEC);
}

/* An empty EQ: sread returns -EAGAIN, and not before the timeout. */
static void sread_times_out(enum lfp_wait_obj obj, int timeout_ms)
{
	struct lfp_eq *eq = open_eq(4, 0, obj, 0);
	unsigned char buf[16];
	uint32_t ev;
	int64_t t0, elapsed;
	ssize_t r;

	t0 = now_ns();
	r = lfp_eq_sread(eq, &ev, buf, sizeof(buf), timeout_ms, 0);
	elapsed = now_ns() - t0;
	cr_assert_eq(r, -EAGAIN, "%s: sread(%d ms) on an empty EQ = %zd",
	             wait_name(obj), timeout_ms, r);
	cr_assert_geq(elapsed, (int64_t)timeout_ms * 1000000,
	              "%s: sread(%d ms) returned after %.3f ms", wait_name(obj),
	              timeout_ms, (double)elapsed / 1e6);
	close_eq(eq);
}

Test(eq, sread_times_out_after_timeout_fd)
{
	sread_times_out(LFP_WAIT_FD, 50);
	sread_times_out(LFP_WAIT_FD, 1);
}

Test(eq, sread_times_out_after_timeout_mutex_cond)
{
	sread_times_out(LFP_WAIT_MUTEX_COND, 50);
	sread_times_out(LFP_WAIT_MUTEX_COND, 1);
}

Test(eq, sread_times_out_after_timeout_yield)
{
	sread_times_out(LFP_WAIT_YIELD, 50);
	sread_times_out(LFP_WAIT_YIELD, 1);
}

Test(eq, sread_times_out_after_timeout_unspec)
{
	sread_times_out(LFP_WAIT_UNSPEC, 50);
	sread_times_out(LFP_WAIT_UNSPEC, 1);
}

/* A leftover signal (fd still readable) is a spurious wake: wait it out. */
Test(eq, sread_waits_out_the_timeout_after_a_stale_signal)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);
	unsigned char buf[16];
	uint32_t ev;
	int64_t t0, elapsed;

	cr_assert_eq(trywait1(&eq->fid), 0);
	put(eq, 1, 1, 1); /* signals the fd */
	take(eq, 1, 1, 1, 0);
	cr_assert(fd_readable(getwait_fd(&eq->fid), 0));
	t0 = now_ns();
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 50, 0), -EAGAIN);
	elapsed = now_ns() - t0;
	cr_assert_geq(elapsed, 50 * 1000000, "sread returned after %.3f ms",
	              (double)elapsed / 1e6);
	close_eq(eq);
}

Test(eq, sread_on_wait_none_is_enosys)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);
	unsigned char buf[16];
	uint32_t ev;

	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), -ENOSYS);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), -ENOSYS);
	put(eq, 1, 1, 1); /* even with an event queued */
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 10, 0), -ENOSYS);
	take(eq, 1, 1, 1, 0);
	close_eq(eq);
}

Test(eq, sread_on_wait_set_member_is_enosys)
{
	struct lfp_eq_attr attr;
	struct lfp_wait *ws = NULL;
	struct lfp_eq *eq = NULL;
	unsigned char buf[16];
	uint32_t ev;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	attr = (struct lfp_eq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	cr_assert_eq(waitobj(eq), LFP_WAIT_SET);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), -ENOSYS);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), -ENOSYS);
	put(eq, 1, 1, 1);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), -ENOSYS);
	take(eq, 1, 1, 1, 0); /* plain reads still work */
	close_eq(eq);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

static void sread_present(enum lfp_wait_obj obj)
{
	struct lfp_eq *eq = open_eq(4, 0, obj, 32);
	unsigned char buf[32], want[32];
	uint32_t ev = 0;

	put(eq, LFP_JOIN_COMPLETE, 60, 32);
	put(eq, LFP_EVENT_USER, 61, 0);
	pattern(want, sizeof(want), 60);
	/* Infinite timeout: a blocking sread would hang (the suite times out). */
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), 32, "%s",
	             wait_name(obj));
	cr_assert_eq(ev, LFP_JOIN_COMPLETE);
	cr_assert_arr_eq(buf, want, 32);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), 0, "%s",
	             wait_name(obj));
	cr_assert_eq(ev, LFP_EVENT_USER);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, 0), -EAGAIN);
	close_eq(eq);
}

Test(eq, sread_returns_a_present_event_at_once)
{
	sread_present(LFP_WAIT_FD);
	sread_present(LFP_WAIT_MUTEX_COND);
	sread_present(LFP_WAIT_YIELD);
	sread_present(LFP_WAIT_UNSPEC);
}

Test(eq, sread_short_buffer_is_etoosmall_and_keeps_event)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 32);
	unsigned char buf[32];
	uint32_t ev = 0;

	put(eq, 1, 1, 20);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, 19, -1, 0), -LFP_ETOOSMALL);
	take(eq, 1, 1, 20, 0);
	close_eq(eq);
}

Test(eq, sread_peek_does_not_consume)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 32);
	unsigned char buf[32], want[32];
	uint32_t ev = 0;

	put(eq, LFP_CONNREQ, 70, 17);
	pattern(want, 17, 70);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, LFP_PEEK), 17);
	cr_assert_eq(ev, LFP_CONNREQ);
	cr_assert_arr_eq(buf, want, 17);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 10, LFP_PEEK), 17);
	/* Still there for a plain sread, which must not block. */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), -1, 0), 17);
	cr_assert_arr_eq(buf, want, 17);
	cr_assert_eq(lfp_eq_sread(eq, &ev, buf, sizeof(buf), 0, LFP_PEEK), -EAGAIN);
	close_eq(eq);
}

/* -------------------------------------------------------------- trywait */

Test(eq, trywait_on_empty_fd_eq_is_zero)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);

	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert_eq(trywait1(&eq->fid), 0, "a second trywait on an idle EQ");
	close_eq(eq);
}

Test(eq, trywait_with_an_event_queued_is_eagain)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);

	put(eq, 1, 1, 1);
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN);
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN);
	take(eq, 1, 1, 1, 0);
	cr_assert_eq(trywait1(&eq->fid), 0);
	close_eq(eq);
}

Test(eq, trywait_with_an_error_queued_is_eagain)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);
	struct lfp_eq_err_entry e;

	cr_assert_geq(put_err(eq, NULL, 0, EIO, 0, NULL, 0), 0);
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(trywait1(&eq->fid), 0);
	close_eq(eq);
}

Test(eq, trywait_after_overrun_is_eagain)
{
	struct lfp_eq *eq = open_eq(2, 0, LFP_WAIT_FD, 0);
	struct lfp_eq_err_entry e;

	overrun_then_drain(eq, 1);
	/* Empty of events, but the overrun is there to be read. */
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN);
	memset(&e, 0, sizeof(e));
	cr_assert_geq(lfp_eq_readerr(eq, &e, 0), 0);
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN, "overrun is permanent");
	close_eq(eq);
}

Test(eq, trywait_on_wait_none_eq_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_NONE, 0);

	cr_assert_eq(trywait1(&eq->fid), -EINVAL);
	close_eq(eq);
}

Test(eq, trywait_null_array_or_zero_count_is_einval)
{
	struct lfp_eq *eq = open_eq(4, 0, LFP_WAIT_FD, 0);
	struct lfp_fid *f = &eq->fid, *fs[2] = { &eq->fid, NULL };

	cr_assert_eq(lfp_trywait(opaque_ptr(NULL), 1), -EINVAL);
	cr_assert_eq(lfp_trywait(&f, 0), -EINVAL);
	cr_assert_eq(lfp_trywait(fs, 2), -EINVAL, "a NULL fid in the array");
	close_eq(eq);
}

Test(eq, trywait_on_several_eqs_reports_any_pending_work)
{
	struct lfp_eq *a = open_eq(4, 0, LFP_WAIT_FD, 0);
	struct lfp_eq *b = open_eq(4, 0, LFP_WAIT_FD, 0);
	struct lfp_fid *fs[2] = { &a->fid, &b->fid };
	int fa = getwait_fd(&a->fid), fb = getwait_fd(&b->fid);

	cr_assert_eq(lfp_trywait(fs, 2), 0);
	cr_assert(!fd_readable(fa, 0));
	cr_assert(!fd_readable(fb, 0));
	/* Both are armed: a write to the second makes its fd readable. */
	put(b, 1, 1, 1);
	cr_assert(fd_readable(fb, 0), "the second fid was not armed");
	cr_assert(!fd_readable(fa, 0));
	cr_assert_eq(lfp_trywait(fs, 2), -EAGAIN);
	take(b, 1, 1, 1, 0);
	cr_assert_eq(lfp_trywait(fs, 2), 0);
	put(a, 2, 2, 2);
	cr_assert(fd_readable(fa, 0), "the first fid was not armed");
	close_eq(a);
	close_eq(b);
}

/* -------------------------------------------------------------- control */

Test(eq, getwait_fd_becomes_readable_only_after_a_write)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_FD, 0);
	int fd = getwait_fd(&eq->fid), i;

	for (i = 0; i < 3; i++) {
		cr_assert_eq(trywait1(&eq->fid), 0, "round %d", i);
		cr_assert(!fd_readable(fd, 0), "round %d: readable after trywait "
		          "returned 0 on an empty EQ", i);
		cr_assert(!fd_readable(fd, 0), "round %d: readable by itself", i);
		put(eq, 1, (unsigned)i, 4);
		cr_assert(fd_readable(fd, 0), "round %d: a write after trywait did "
		          "not make the fd readable (fi_poll(3) guarantee)", i);
		take(eq, 1, (unsigned)i, 4, 0);
		/* Level-triggered until the next trywait clears it. */
		cr_assert(fd_readable(fd, 0));
	}
	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert(!fd_readable(fd, 0), "trywait did not clear the fd");
	close_eq(eq);
}

Test(eq, getwait_fd_becomes_readable_after_write_err)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_FD, 0);
	int fd = getwait_fd(&eq->fid);

	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert(!fd_readable(fd, 0));
	cr_assert_geq(put_err(eq, NULL, 0, EIO, 0, NULL, 0), 0);
	cr_assert(fd_readable(fd, 0), "write_err after trywait did not signal");
	close_eq(eq);
}

Test(eq, getwait_unspec_gives_a_working_fd)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_UNSPEC, 0);
	int fd = getwait_fd(&eq->fid);

	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert(!fd_readable(fd, 0));
	put(eq, 1, 1, 1);
	cr_assert(fd_readable(fd, 0));
	close_eq(eq);
}

Test(eq, getwait_mutex_cond_fills_both_pointers)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_MUTEX_COND, 0);
	struct lfp_mutex_cond mc = { NULL, NULL };

	cr_assert_eq(lfp_control(&eq->fid, LFP_GETWAIT, &mc), 0);
	cr_assert_not_null(mc.mutex);
	cr_assert_not_null(mc.cond);
	/* They are live objects. */
	cr_assert_eq(pthread_mutex_lock(mc.mutex), 0);
	cr_assert_eq(pthread_mutex_unlock(mc.mutex), 0);
	cr_assert_eq(waitobj(eq), LFP_WAIT_MUTEX_COND);
	close_eq(eq);
}

Test(eq, getwait_on_none_and_yield_is_enodata)
{
	struct lfp_eq *none = open_eq(8, 0, LFP_WAIT_NONE, 0);
	struct lfp_eq *yield = open_eq(8, 0, LFP_WAIT_YIELD, 0);
	union { int fd; struct lfp_mutex_cond mc; } u;

	memset(&u, 0, sizeof(u));
	cr_assert_eq(lfp_control(&none->fid, LFP_GETWAIT, &u), -ENODATA);
	cr_assert_eq(lfp_control(&yield->fid, LFP_GETWAIT, &u), -ENODATA);
	cr_assert_eq(waitobj(none), LFP_WAIT_NONE);
	cr_assert_eq(waitobj(yield), LFP_WAIT_YIELD);
	close_eq(none);
	close_eq(yield);
}

Test(eq, getwait_on_wait_set_member_is_enodata)
{
	struct lfp_eq_attr attr;
	struct lfp_wait *ws = NULL;
	struct lfp_eq *eq = NULL;
	int fd = -1;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	attr = (struct lfp_eq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	cr_assert_eq(lfp_control(&eq->fid, LFP_GETWAIT, &fd), -ENODATA);
	close_eq(eq);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(eq, getwaitobj_reports_the_wait_object_in_use)
{
	struct lfp_eq *eq;

	eq = open_eq(8, 0, LFP_WAIT_UNSPEC, 0);
	cr_assert_eq(waitobj(eq), LFP_WAIT_FD, "UNSPEC resolved to %s",
	             wait_name(waitobj(eq)));
	close_eq(eq);
	eq = open_eq(8, 0, LFP_WAIT_FD, 0);
	cr_assert_eq(waitobj(eq), LFP_WAIT_FD);
	close_eq(eq);
}

Test(eq, control_unknown_command_is_enosys)
{
	struct lfp_eq *fd = open_eq(8, 0, LFP_WAIT_FD, 0);
	struct lfp_eq *none = open_eq(8, 0, LFP_WAIT_NONE, 0);
	int arg = 0;

	cr_assert_eq(lfp_control(&fd->fid, 0, &arg), -ENOSYS);
	cr_assert_eq(lfp_control(&fd->fid, 12345, &arg), -ENOSYS);
	cr_assert_eq(lfp_control(&fd->fid, -1, &arg), -ENOSYS);
	cr_assert_eq(lfp_control(&none->fid, 12345, &arg), -ENOSYS);
	close_eq(fd);
	close_eq(none);
}

Test(eq, getwait_with_null_arg_is_einval)
{
	struct lfp_eq *fd = open_eq(8, 0, LFP_WAIT_FD, 0);
	struct lfp_eq *mc = open_eq(8, 0, LFP_WAIT_MUTEX_COND, 0);

	cr_assert_eq(lfp_control(&fd->fid, LFP_GETWAIT, opaque_ptr(NULL)), -EINVAL);
	cr_assert_eq(lfp_control(&mc->fid, LFP_GETWAIT, opaque_ptr(NULL)), -EINVAL);
	cr_assert_eq(lfp_control(&fd->fid, LFP_GETWAITOBJ, opaque_ptr(NULL)),
	             -EINVAL);
	close_eq(fd);
	close_eq(mc);
}

/* -------------------------------------------------------------- system calls */

static void no_waiter_no_signal(enum lfp_wait_obj obj)
{
	struct lfp_eq *eq = open_eq(64, 0, obj, 16);
	unsigned char buf[16];
	uint32_t ev;
	unsigned i;

	memset(buf, 0x11, sizeof(buf));
	for (i = 0; i < 1000000; i++) {
		cr_assert_eq(lfp_eq_write(eq, i & 0xfff, buf, i % 17, 0),
		             (ssize_t)(i % 17));
		cr_assert_eq(lfp_eq_read(eq, &ev, buf, sizeof(buf), 0),
		             (ssize_t)(i % 17));
	}
	cr_assert_eq(lfp__eq_stat_signals(eq), 0, "%s: %llu signals with nobody "
	             "waiting", wait_name(obj),
	             (unsigned long long)lfp__eq_stat_signals(eq));
	close_eq(eq);
}

Test(eq, producers_make_no_system_call_without_a_waiter_fd)
{
	no_waiter_no_signal(LFP_WAIT_FD);
}

Test(eq, producers_make_no_system_call_without_a_waiter_mutex_cond)
{
	no_waiter_no_signal(LFP_WAIT_MUTEX_COND);
}

static void one_trywait_one_signal(enum lfp_wait_obj obj)
{
	struct lfp_eq *eq = open_eq(64, 0, obj, 16);
	unsigned i;

	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert_eq(lfp__eq_stat_signals(eq), 0, "%s: trywait signalled",
	             wait_name(obj));
	put(eq, 1, 1, 1);
	cr_assert_eq(lfp__eq_stat_signals(eq), 1, "%s: the write after trywait "
	             "made %llu signals", wait_name(obj),
	             (unsigned long long)lfp__eq_stat_signals(eq));
	for (i = 0; i < 20; i++)
		put(eq, 2, i, 2);
	cr_assert_eq(lfp__eq_stat_signals(eq), 1, "%s: later writes signalled "
	             "again (%llu)", wait_name(obj),
	             (unsigned long long)lfp__eq_stat_signals(eq));
	/* Reading, and a trywait that finds work, re-arm nothing for free:
	 * after draining, one more trywait costs exactly one more signal. */
	take(eq, 1, 1, 1, 0);
	for (i = 0; i < 20; i++)
		take(eq, 2, i, 2, 0);
	cr_assert_eq(trywait1(&eq->fid), 0);
	put(eq, 3, 3, 3);
	put(eq, 3, 3, 3);
	cr_assert_eq(lfp__eq_stat_signals(eq), 2, "%s: %llu signals after the "
	             "second trywait", wait_name(obj),
	             (unsigned long long)lfp__eq_stat_signals(eq));
	close_eq(eq);
}

Test(eq, one_trywait_costs_exactly_one_signal_fd)
{
	one_trywait_one_signal(LFP_WAIT_FD);
}

Test(eq, one_trywait_costs_exactly_one_signal_mutex_cond)
{
	one_trywait_one_signal(LFP_WAIT_MUTEX_COND);
}

/* -------------------------------------------------------------- strerror */

Test(eq, eq_strerror_returns_text_and_copies_into_buffer)
{
	struct lfp_eq *eq = open_eq(8, 0, LFP_WAIT_NONE, 0);
	const char *s;
	char buf[128], tiny[5];

	/* No binding: prov_errno is the provider's, not an errno, so it is
	 * named as such (not as strerror(5) "Input/output error"). */
	s = lfp_eq_strerror(eq, EIO, NULL, NULL, 0);
	cr_assert_not_null(s);
	cr_assert_gt(strlen(s), 0);
	cr_assert_str_neq(s, lfp_strerror(EIO), "prov_errno read as an errno");

	memset(buf, 'x', sizeof(buf));
	s = lfp_eq_strerror(eq, EIO, NULL, buf, sizeof(buf));
	cr_assert_eq(s, buf, "with a buffer, the buffer is returned");
	cr_assert_str_eq(buf, "provider error 5");

	/* Truncated and still terminated. */
	memset(tiny, 'x', sizeof(tiny));
	s = lfp_eq_strerror(eq, EIO, NULL, tiny, sizeof(tiny));
	cr_assert_eq(s, tiny);
	cr_assert_eq(tiny[sizeof(tiny) - 1], '\0', "not terminated");
	cr_assert_eq(strlen(tiny), sizeof(tiny) - 1);
	cr_assert_eq(strncmp(tiny, "provider error 5", sizeof(tiny) - 1), 0);

	/* opaque: with a constant 1, gcc 12 -O2 warns inside eq.h
	 * (-Wstringop-truncation on strncpy of 0 bytes). */
	memset(tiny, 'x', sizeof(tiny));
	s = lfp_eq_strerror(eq, EIO, NULL, tiny, opaque_size(1));
	cr_assert_eq(tiny[0], '\0');
	cr_assert_eq(tiny[1], 'x', "wrote past len");

	/* eq may be NULL. */
	cr_assert_str_eq(lfp_eq_strerror(NULL, EIO, NULL, NULL, 0),
	                 lfp_eq_strerror(eq, EIO, NULL, NULL, 0));

	/* Any value, including lfpoll's and nonsense, gives text. */
	cr_assert_not_null(lfp_eq_strerror(eq, LFP_EOVERRUN, NULL, NULL, 0));
	cr_assert_not_null(lfp_eq_strerror(eq, 0x7FFFFFF, NULL, NULL, 0));
	cr_assert_not_null(lfp_eq_strerror(eq, -5, NULL, NULL, 0));
	close_eq(eq);
}

Test(eq, strerror_names_lfpoll_errors)
{
	int errs[] = { LFP_EOVERRUN, LFP_EAVAIL, LFP_ETOOSMALL };
	size_t i;

	for (i = 0; i < 3; i++) {
		const char *neg = lfp_strerror(-errs[i]), *pos = lfp_strerror(errs[i]);

		cr_assert_not_null(neg);
		cr_assert_str_eq(neg, pos);
		cr_assert_str_neq(neg, "Unknown error", "%d has no name", errs[i]);
	}
	cr_assert_str_neq(lfp_strerror(-LFP_EOVERRUN), lfp_strerror(-LFP_EAVAIL));
	cr_assert_str_eq(lfp_strerror(-EAGAIN), strerror(EAGAIN));
}

/* -------------------------------------------------------------- close */

Test(eq, close_with_events_queued_discards_them)
{
	struct lfp_eq *eq = open_eq(16, 0, LFP_WAIT_FD, 64);
	unsigned char d[64];
	unsigned i;

	for (i = 0; i < 10; i++)
		put(eq, i, i, 64);
	pattern(d, sizeof(d), 1);
	cr_assert_geq(put_err(eq, NULL, 0, EIO, 0, d, sizeof(d)), 0);
	/* Leaks show under ASan (make check SANITIZE=address). */
	cr_assert_eq(lfp_eq_close(eq), 0);
}

Test(eq, close_of_each_wait_object_returns_zero)
{
	enum lfp_wait_obj objs[] = { LFP_WAIT_NONE, LFP_WAIT_UNSPEC, LFP_WAIT_FD,
	                             LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD };
	size_t i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		struct lfp_eq *eq = open_eq(4, 0, objs[i], 0);

		put(eq, 1, 1, 1);
		cr_assert_eq(lfp_eq_close(eq), 0, "%s", wait_name(objs[i]));
	}
}

Test(eq, close_of_wait_set_member_leaves_the_set)
{
	struct lfp_eq_attr attr;
	struct lfp_wait *ws = NULL;
	struct lfp_eq *a = NULL, *b = NULL;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	memset(&attr, 0, sizeof(attr));
	attr.wait_obj = LFP_WAIT_SET;
	attr.wait_set = ws;
	cr_assert_eq(lfp_eq_open(&attr, &a, NULL), 0);
	cr_assert_eq(lfp_eq_open(&attr, &b, NULL), 0);
	put(a, 1, 1, 1);
	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "wait set closed with members");
	close_eq(a);
	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "wait set closed with a member");
	cr_assert_eq(lfp_close(&b->fid), 0);
	cr_assert_eq(lfp_wait_close(ws), 0, "members left, set still busy");
}

Test(eq, wait_set_member_trywait_goes_through_the_set)
{
	struct lfp_eq_attr attr;
	struct lfp_wait *ws = NULL;
	struct lfp_eq *eq = NULL;
	struct lfp_fid *f;
	int wfd = -1;

	cr_assert_eq(lfp_wait_open(NULL, &ws), 0);
	attr = (struct lfp_eq_attr){ .wait_obj = LFP_WAIT_SET, .wait_set = ws };
	cr_assert_eq(lfp_eq_open(&attr, &eq, NULL), 0);
	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &wfd), 0);
	cr_assert_eq(trywait1(&eq->fid), 0);
	cr_assert(!fd_readable(wfd, 0));
	put(eq, 1, 1, 1);
	cr_assert(fd_readable(wfd, 0), "a member's write did not signal the set");
	cr_assert_eq(trywait1(&eq->fid), -EAGAIN);
	f = &ws->fid;
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	take(eq, 1, 1, 1, 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	close_eq(eq);
	cr_assert_eq(lfp_wait_close(ws), 0);
}

Test(eq, lfp_close_works_like_lfp_eq_close)
{
	struct lfp_eq *eq = open_eq(16, 0, LFP_WAIT_MUTEX_COND, 0);
	struct lfp_eq *none = open_eq(16, 0, LFP_WAIT_NONE, 0);

	put(eq, 1, 1, 1);
	put(none, 1, 1, 1);
	cr_assert_eq(lfp_close(&eq->fid), 0);
	cr_assert_eq(lfp_close(&none->fid), 0);
	cr_assert_eq(lfp_eq_close(opaque_ptr(NULL)), -EINVAL);
	cr_assert_eq(lfp_close(opaque_ptr(NULL)), -EINVAL);
}
