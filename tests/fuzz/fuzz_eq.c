/*
 * libFuzzer target: lfp_eq (eq.h) against a sequential model of fi_eq(3)
 * as docs/contract.md, "Event queues" and eq.h define it.
 *
 * Input: bytes 0-3 pick the attributes (size, entry_size, flags including
 * LFP_EQ_BACKPRESSURE, the ring modes and invalid bits, wait object NONE/UNSPEC/FD/
 * MUTEX_COND/YIELD/SET with a real wait set, and invalid ones: those must
 * give -EINVAL and end the run).  Then up to FUZZ_MAX_OPS operations: write
 * (sizes up to past entry_size), runs of writes, write_err (err_data sizes
 * up to past entry_size), read (buffer sizes around the head's length,
 * with and without LFP_PEEK), readerr (with or without a user buffer of
 * random size, with and without LFP_PEEK), sread (timeout 0, or a short
 * timeout when the model says the call returns at once), lfp_trywait, the
 * wait object's fd after a trywait, lfp_wait on the set, control, strerror
 * and argument errors.  Writes and reads alternate between the plain calls
 * and the SP/SC pair (see call_write), with common lengths as constants.
 *
 * The model: an event FIFO, an error FIFO of min(capacity,
 * LFP_EQ_ERR_CAPACITY) entries, and the overrun flag:
 *  - a write to a full event queue (or a full error queue) overruns the EQ:
 *    that write and every later one return -LFP_EOVERRUN; with
 *    LFP_EQ_BACKPRESSURE it returns -EAGAIN instead and the EQ stays usable;
 *  - read returns -LFP_EAVAIL while an error is queued; after an overrun it
 *    drains the events, then returns -LFP_EAVAIL, and readerr (once the
 *    queued errors are read) returns an entry with err = LFP_EOVERRUN;
 *  - a short buffer is -LFP_ETOOSMALL and the event stays queued;
 *  - LFP_PEEK never consumes;
 *  - trywait returns -EAGAIN iff an event, an error or the overrun is
 *    pending; after it returned 0 the next write makes an FD object
 *    readable;
 *  - the EQ-owned err_data stays valid until the next read or readerr.
 */
#include <lfpoll/eq.h>
#include <lfpoll/wait.h>

#include "fuzz_input.h"

#define MAX_CAP  2048
#define MAX_ECAP LFP_EQ_ERR_CAPACITY
#define MAX_ESZ  256
#define EQ_CTX   ((void *)(uintptr_t)0xE0E0)

struct mev {
	uint32_t code;
	uint32_t len;
	unsigned char d[MAX_ESZ];
};

struct merr {
	struct lfp_fid *fid;
	void *ctx;
	uint64_t data;
	int err, prov;
	uint32_t dlen;
	unsigned char d[MAX_ESZ];
};

struct model {
	size_t cap, ecap, esz;
	int bp;                   /* LFP_EQ_BACKPRESSURE */
	enum lfp_wait_obj obj;    /* as resolved */
	int overrun;
	uint32_t seed;
	size_t ev_first, ev_n;    /* events: ev[(ev_first + i) % cap] */
	size_t er_first, er_n;    /* errors: er[(er_first + i) % ecap] */
	/* The wait object's fd (-1: none to check) and whether it must be
	 * readable now: trywait returned 0, then something was published. */
	int fd;
	int armed, must_read;
	/* EQ-owned err_data last handed out, valid until the next read. */
	const unsigned char *owned;
	size_t owned_len;
	unsigned char owned_copy[MAX_ESZ];
};

static struct model M;
static struct mev ev[MAX_CAP];
static struct merr er[MAX_ECAP];
static struct lfp_eq *EQ;
static struct lfp_wait *WS;

static int m_ready(void)
{
	return M.ev_n || M.er_n || M.overrun;
}

static struct mev *ev_head(void)
{
	return M.ev_n ? &ev[M.ev_first] : NULL;
}

static struct merr *er_head(void)
{
	return M.er_n ? &er[M.er_first] : NULL;
}

/* Something was published (or the EQ overran): a waiter must see it. */
static void m_published(void)
{
	if (M.armed)
		M.must_read = 1;
}

/* Every read, readerr and sread ends the life of EQ-owned err_data. */
static void owned_forget(void)
{
	M.owned = NULL;
	M.owned_len = 0;
}

static void owned_check(void)
{
	if (M.owned)
		CHECK(memcmp(M.owned, M.owned_copy, M.owned_len) == 0,
		      "EQ-owned err_data changed before the next read/readerr");
}

/* Expected result of a write that passed the argument checks: full. */
static ssize_t m_full(void)
{
	if (M.bp)
		return -EAGAIN;
	if (!M.overrun) {
		M.overrun = 1;
		m_published();
	}
	return -LFP_EOVERRUN;
}

/* --------------------------------------------------------------- picks */

static size_t pick_wlen(struct fin *f)
{
	uint8_t s = fin_u8(f);

	switch (s & 7) {
	case 0: return 0;
	case 1: return M.esz;
	case 2: return M.esz + 1 + (s >> 3) % 3;
	case 3: return M.esz + 1000;
	case 4: return fin_u16(f) % (M.esz + 4);
	default: return fin_u8(f) % (M.esz + 1);
	}
}

static size_t pick_rlen(struct fin *f, size_t head_len)
{
	uint8_t s = fin_u8(f);

	switch (s & 7) {
	case 0: return 0;
	case 1: case 2: return head_len;
	case 3: return head_len ? head_len - 1 : 0;
	case 4: return M.esz;
	case 5: return M.esz + 3;
	default: return fin_u16(f) % (M.esz + 4);
	}
}

/* ----------------------------------------------------------- operations */

/*
 * The write and read calls, every other one through the SP/SC pair
 * (lfp_eq_write_spsc, lfp_eq_read_spsc), which must answer as the plain
 * pair does on an EQ of any mode.  A length among CONST_LENS is passed as
 * a compile-time constant, which is what takes a call's inline path; any
 * other length as it is (the out-of-line path).
 */
#define CONST_LENS(X) X(0) X(1) X(4) X(8) X(16) X(24) X(32) X(64)

static unsigned writes, reads; /* calls made: odd ones use the SP/SC pair */

static ssize_t call_write(uint32_t code, const void *src, size_t len, uint64_t flags)
{
	int spsc = writes++ & 1;

	switch (len) {
#define W(n) case n: return spsc ? lfp_eq_write_spsc(EQ, code, src, n, flags) \
	                         : lfp_eq_write(EQ, code, src, n, flags);
	CONST_LENS(W)
#undef W
	}
	return spsc ? lfp_eq_write_spsc(EQ, code, src, len, flags)
	            : lfp_eq_write(EQ, code, src, len, flags);
}

static ssize_t call_read(uint32_t *codep, void *buf, size_t len, uint64_t flags)
{
	int spsc = reads++ & 1;

	switch (len) {
#define R(n) case n: return spsc ? lfp_eq_read_spsc(EQ, codep, buf, n, flags) \
	                         : lfp_eq_read(EQ, codep, buf, n, flags);
	CONST_LENS(R)
#undef R
	}
	return spsc ? lfp_eq_read_spsc(EQ, codep, buf, len, flags)
	            : lfp_eq_read(EQ, codep, buf, len, flags);
}

static void do_write(uint32_t code, size_t len, int nullbuf, uint64_t flags)
{
	unsigned char *src = nullbuf ? NULL : fuzz_buf(len, 1);
	ssize_t want, got;

	if (src)
		fuzz_pattern(src, len, M.seed);
	if ((!src && len) || flags || code > LFP_EQ_MAX_EVENT)
		want = -EINVAL;
	else if (len > M.esz)
		want = -EMSGSIZE;
	else if (M.overrun)
		want = -LFP_EOVERRUN;
	else if (M.ev_n == M.cap)
		want = m_full();
	else
		want = (ssize_t)len;
	got = call_write(code, src, len, flags);
	TRACE("write code %u len %zu flags %#llx -> %zd (model %zd; events %zu/%zu, errors %zu, overrun %d)",
	      code, len, (unsigned long long)flags, got, want, M.ev_n, M.cap,
	      M.er_n, M.overrun);
	CHECK_EQ(got, want, "lfp_eq_write(len %zu, flags %#llx), %zu of %zu queued, overrun %d",
	         len, (unsigned long long)flags, M.ev_n, M.cap, M.overrun);
	if (got >= 0) {
		struct mev *e = &ev[(M.ev_first + M.ev_n++) % M.cap];

		e->code = code;
		e->len = (uint32_t)len;
		if (len)
			memcpy(e->d, src, len);
		M.seed++;
		m_published();
	}
	free(src);
}

static void op_write(struct fin *f, uint8_t op)
{
	uint32_t code = fin_u8(f);
	size_t len = pick_wlen(f);
	uint64_t flags = 0;
	int nullbuf = 0;

	if (op & 0x80) {
		uint8_t b = fin_u8(f);

		if (b & 1)
			flags = (uint64_t)1 << (b >> 2); /* never valid for write */
		nullbuf = (b & 2) && len;
	}
	if (code > 200)
		code = LFP_EVENT_USER + code;
	else if (code == 199 || code == 198) /* the largest code, and one past */
		code = LFP_EQ_MAX_EVENT + (199 - code);
	do_write(code, len, nullbuf, flags);
}

static void op_write_many(struct fin *f)
{
	size_t n = 1 + fin_u8(f) % 64, len = pick_wlen(f) % (M.esz + 1), i;

	for (i = 0; i < n; i++)
		do_write((uint32_t)(LFP_EVENT_USER + i), len, 0, 0);
}

static void do_write_err(struct fin *f, size_t dlen, int err, int nulldata)
{
	struct lfp_eq_err_entry e;
	unsigned char *d = nulldata ? NULL : fuzz_buf(dlen, 0);
	static struct lfp_fid other;
	ssize_t want, got;

	memset(&e, 0, sizeof(e));
	switch (fin_u8(f) % 3) {
	case 0: e.fid = NULL; break;
	case 1: e.fid = &EQ->fid; break;
	default: e.fid = &other; break;
	}
	e.context = (void *)(uintptr_t)(0xC0000 + M.seed);
	e.data = (uint64_t)M.seed * 0x9E3779B97F4A7C15ull;
	e.err = err;
	e.prov_errno = (int)(M.seed * 7u) - 50;
	e.err_data = d;
	e.err_data_size = dlen;
	if (d)
		fuzz_pattern(d, dlen, M.seed ^ 0x5555u);
	if (err <= 0 || (!d && dlen)) /* err: a positive errno (eq.h) */
		want = -EINVAL;
	else if (dlen > M.esz)
		want = -EMSGSIZE;
	else if (M.overrun)
		want = -LFP_EOVERRUN;
	else if (M.er_n == M.ecap)
		want = m_full();
	else
		want = (ssize_t)sizeof(struct lfp_eq_err_entry);
	got = lfp_eq_write_err(EQ, &e);
	TRACE("write_err err %d dlen %zu -> %zd (model %zd; errors %zu/%zu, overrun %d)",
	      err, dlen, got, want, M.er_n, M.ecap, M.overrun);
	CHECK_EQ(got, want, "lfp_eq_write_err(err %d, err_data_size %zu), %zu of %zu errors, overrun %d",
	         err, dlen, M.er_n, M.ecap, M.overrun);
	if (got >= 0) {
		struct merr *m = &er[(M.er_first + M.er_n++) % M.ecap];

		m->fid = e.fid;
		m->ctx = e.context;
		m->data = e.data;
		m->err = e.err;
		m->prov = e.prov_errno;
		m->dlen = (uint32_t)dlen;
		if (dlen)
			memcpy(m->d, d, dlen);
		M.seed++;
		m_published();
	}
	free(d);
}

static int pick_err(struct fin *f)
{
	static const int errs[] = { EIO, ENOMEM, ETIMEDOUT, 1, LFP_EOVERRUN,
	                            LFP_EAVAIL, -5, INT32_MAX, INT32_MIN };
	uint8_t s = fin_u8(f);

	if ((s & 15) == 0)
		return 0;
	return errs[(s >> 4) % (sizeof(errs) / sizeof(errs[0]))];
}

static void op_write_err(struct fin *f, uint8_t op)
{
	size_t dlen = pick_wlen(f);
	int err = pick_err(f);

	do_write_err(f, dlen, err, (op & 0x80) && dlen && (fin_u8(f) & 1));
}

static void op_write_err_many(struct fin *f)
{
	size_t n = 1 + fin_u8(f) % 64, dlen = pick_wlen(f) % (M.esz + 1), i;

	for (i = 0; i < n; i++)
		do_write_err(f, dlen, EIO, 0);
}

/* read or sread (timeout 0, or a short one when the call cannot block). */
static void op_read(struct fin *f, uint8_t op, int sread)
{
	struct mev *h = ev_head();
	size_t len = pick_rlen(f, h ? h->len : 0);
	uint8_t fb = fin_u8(f);
	uint64_t flags = fb & 1 ? LFP_PEEK : 0;
	unsigned char *buf = fuzz_buf(len, (fb & 2) || len);
	uint32_t code = 0xDEADBEEF;
	uint32_t *codep = &code;
	ssize_t want, got;
	int timeout = 0;

	if (op & 0x80) {
		if (fb & 4)
			flags |= (uint64_t)1 << (fb >> 3); /* maybe invalid */
		if (fb & 8)
			codep = NULL;
	}
	/* Arguments first (also for sread on NONE or SET), then -ENOSYS. */
	if (!codep || (flags & ~LFP_PEEK))
		want = -EINVAL;
	else if (sread && (M.obj == LFP_WAIT_NONE || M.obj == LFP_WAIT_SET))
		want = -ENOSYS;
	else if (M.er_n)
		want = -LFP_EAVAIL;
	else if (!h)
		want = M.overrun ? -LFP_EAVAIL : -EAGAIN;
	else if (h->len > len)
		want = -LFP_ETOOSMALL;
	else
		want = h->len;
	if (sread && want != -EAGAIN && (fb & 0x40))
		timeout = 5; /* returns at once all the same */
	owned_forget();
	if (sread)
		got = lfp_eq_sread(EQ, codep, buf, len, timeout, flags);
	else
		got = call_read(codep, buf, len, flags);
	TRACE("%s len %zu flags %#llx%s -> %zd (model %zd; events %zu, errors %zu, overrun %d)",
	      sread ? "sread" : "read", len, (unsigned long long)flags,
	      codep ? "" : " event NULL", got, want, M.ev_n, M.er_n, M.overrun);
	CHECK_EQ(got, want, "lfp_eq_%s(len %zu, flags %#llx%s), head len %d, %zu errors, overrun %d",
	         sread ? "sread" : "read", len, (unsigned long long)flags,
	         sread ? ", timeout 0" : "", h ? (int)h->len : -1, M.er_n, M.overrun);
	if (got < 0)
		CHECK(code == 0xDEADBEEF, "%s failed (%zd) and wrote *event (%#x)",
		      sread ? "sread" : "read", got, code);
	if (got >= 0) {
		CHECK_EQ(code, h->code, "%s: event code", sread ? "sread" : "read");
		CHECK(h->len == 0 || memcmp(buf, h->d, h->len) == 0,
		      "%s: payload differs", sread ? "sread" : "read");
		CHECK(fuzz_canary_ok(buf, h->len, len), "%s wrote past the event",
		      sread ? "sread" : "read");
		if (!(flags & LFP_PEEK)) {
			M.ev_first = (M.ev_first + 1) % M.cap;
			M.ev_n--;
		}
	} else if (buf && (flags & LFP_PEEK) && got == -LFP_EAVAIL && h) {
		/* eq.h: a peek copies the head event, then checks for an error
		 * (after the slot's acquire, so that no event overtakes an
		 * error); with one queued the copy stays in buf.  lfp_eq(3)
		 * does not say a failed read leaves buf alone: only the bytes
		 * of the head event, never past it. */
		CHECK(fuzz_canary_ok(buf, h->len < len ? h->len : len, len),
		      "failed peek wrote past the head event");
	} else if (buf) {
		CHECK(fuzz_canary_ok(buf, 0, len), "failed read wrote into the buffer");
	}
	free(buf);
}

static void op_drain(struct fin *f)
{
	size_t n = 1 + fin_u8(f) % 64, i;
	unsigned char buf[MAX_ESZ];
	uint32_t code;
	ssize_t got;

	owned_forget();
	for (i = 0; i < n; i++) {
		struct mev *h = ev_head();
		ssize_t want = M.er_n ? -LFP_EAVAIL : !h ? (M.overrun ? -LFP_EAVAIL : -EAGAIN)
		                                         : (ssize_t)h->len;

		got = lfp_eq_read(EQ, &code, buf, M.esz, 0);
		TRACE("read (drain) -> %zd (model %zd)", got, want);
		CHECK_EQ(got, want, "lfp_eq_read (drain, room %zu)", M.esz);
		if (got < 0)
			break;
		CHECK_EQ(code, h->code, "read (drain): event code");
		CHECK(h->len == 0 || memcmp(buf, h->d, h->len) == 0,
		      "read (drain): payload differs");
		M.ev_first = (M.ev_first + 1) % M.cap;
		M.ev_n--;
	}
}

static void op_readerr(struct fin *f, uint8_t op)
{
	uint8_t s = fin_u8(f);
	uint64_t flags = s & 1 ? LFP_PEEK : 0;
	struct lfp_eq_err_entry e;
	struct merr *h = er_head();
	size_t usize = 0, n;
	unsigned char *user = NULL;
	ssize_t want, got;

	memset(&e, 0x5A, sizeof(e));
	if (s & 2) { /* a user buffer for err_data */
		usize = 1 + fin_u16(f) % (M.esz + 3);
		user = fuzz_buf(usize, 1);
	}
	e.err_data = user;
	e.err_data_size = usize;
	if (!user && (s & 4))
		e.err_data = (void *)(uintptr_t)0x10; /* ignored with size 0 */
	if (op & 0x80) {
		if (s & 8)
			flags |= (uint64_t)1 << (s >> 4 | (s & 16 ? 32 : 0));
		if ((s & 0x40) && user) {
			e.err_data = NULL; /* size without a buffer */
			free(user);
			user = NULL;
		}
	}
	/* A user buffer too small for the head error's data gets what fits,
	 * and err_data_size says how much (lfp_eq(3), as fi_eq(3)). */
	if ((flags & ~LFP_PEEK) || (e.err_data_size && !e.err_data))
		want = -EINVAL;
	else if (h || M.overrun)
		want = (ssize_t)sizeof(struct lfp_eq_err_entry);
	else
		want = -EAGAIN;
	owned_forget();
	got = lfp_eq_readerr(EQ, &e, flags);
	TRACE("readerr%s user %zu -> %zd (model %zd; errors %zu, overrun %d)",
	      flags & LFP_PEEK ? " PEEK" : "", usize, got, want, M.er_n, M.overrun);
	CHECK_EQ(got, want, "lfp_eq_readerr(flags %#llx, err_data_size %zu), %zu errors queued, overrun %d (read says %s)",
	         (unsigned long long)flags, usize, M.er_n, M.overrun,
	         M.er_n || (M.overrun && !M.ev_n) ? "-LFP_EAVAIL" : "no error");
	if (got < 0) {
		if (user)
			CHECK(fuzz_canary_ok(user, 0, usize), "failed readerr wrote into the buffer");
		free(user);
		return;
	}
	if (h) {
		n = h->dlen;
		if (user && n > usize)
			n = usize; /* cut to the caller's buffer */
		CHECK(e.fid == h->fid, "readerr: fid differs");
		CHECK(e.context == h->ctx, "readerr: context differs");
		CHECK(e.data == h->data, "readerr: data differs");
		CHECK_EQ(e.err, h->err, "readerr: err");
		CHECK_EQ(e.prov_errno, h->prov, "readerr: prov_errno");
		CHECK_EQ(e.err_data_size, n, "readerr: err_data_size (stored %u, room %zu)",
		         h->dlen, usize);
		if (user) {
			CHECK(e.err_data == user, "readerr: err_data is not the user buffer");
			CHECK(n == 0 || memcmp(user, h->d, n) == 0, "readerr: err_data bytes");
			CHECK(fuzz_canary_ok(user, n, usize),
			      "readerr wrote past err_data_size into the user buffer");
		} else if (n) {
			CHECK(e.err_data != NULL, "readerr: err_data NULL with %zu bytes", n);
			CHECK(memcmp(e.err_data, h->d, n) == 0, "readerr: EQ-owned err_data bytes");
			M.owned = (const unsigned char *)e.err_data;
			M.owned_len = n;
			memcpy(M.owned_copy, e.err_data, n);
		}
		if (!(flags & LFP_PEEK)) {
			M.er_first = (M.er_first + 1) % M.ecap;
			M.er_n--;
		}
	} else { /* the overrun entry */
		CHECK_EQ(e.err, LFP_EOVERRUN, "readerr after overrun: err");
		CHECK(e.fid == &EQ->fid, "readerr after overrun: fid is not the EQ's");
		CHECK(e.context == EQ_CTX, "readerr after overrun: context");
		CHECK_EQ(e.prov_errno, 0, "readerr after overrun: prov_errno");
		CHECK_EQ(e.err_data_size, 0, "readerr after overrun: err_data_size");
	}
	free(user);
}

static void op_trywait(struct fin *f)
{
	struct lfp_fid *fids[2] = { &EQ->fid, &EQ->fid };
	size_t n = 1 + (fin_u8(f) & 1);
	int want, got;

	if (M.obj == LFP_WAIT_NONE)
		want = -EINVAL;
	else
		want = m_ready() ? -EAGAIN : 0;
	got = lfp_trywait(fids, n);
	TRACE("trywait x%zu -> %d (model %d)", n, got, want);
	CHECK_EQ(got, want, "lfp_trywait (events %zu, errors %zu, overrun %d)",
	         M.ev_n, M.er_n, M.overrun);
	M.armed = got == 0;
	M.must_read = 0;
}

/* After trywait returned 0, anything published makes the fd readable. */
static void op_fd_check(void)
{
	short revents;
	int n;

	if (M.fd < 0 || !M.must_read)
		return;
	n = fuzz_poll_now(M.fd, &revents);
	TRACE("poll(wait fd) -> %d", n);
	CHECK_EQ(n, 1, "wait object fd not readable after trywait returned 0 and "
	         "an event was published");
}

static void op_wait_set(void)
{
	int got;

	if (!WS)
		return;
	got = lfp_wait(WS, 0);
	TRACE("lfp_wait(set, 0) -> %d (model ready %d)", got, m_ready());
	if (m_ready())
		CHECK_EQ(got, 0, "lfp_wait(timeout 0) with a ready member");
	else
		CHECK(got == 0 || got == -ETIMEDOUT, "lfp_wait(timeout 0) = %d", got);
	M.armed = 0; /* it may have drained the fd */
	M.must_read = 0;
}

static void op_control(struct fin *f)
{
	enum lfp_wait_obj o = (enum lfp_wait_obj)99;
	union {
		int fd;
		struct lfp_mutex_cond mc;
		struct lfp_wait_pollfd wp;
	} arg;
	int got, want;

	switch (fin_u8(f) % 4) {
	case 0:
		CHECK_EQ(lfp_control(&EQ->fid, LFP_GETWAITOBJ, &o), 0, "LFP_GETWAITOBJ");
		CHECK_EQ(o, M.obj, "LFP_GETWAITOBJ value");
		break;
	case 1:
		memset(&arg, 0, sizeof(arg));
		arg.fd = -7;
		got = lfp_control(&EQ->fid, LFP_GETWAIT, &arg);
		want = M.obj == LFP_WAIT_FD || M.obj == LFP_WAIT_MUTEX_COND ? 0 : -ENODATA;
		CHECK_EQ(got, want, "LFP_GETWAIT on wait object %d", (int)M.obj);
		if (M.obj == LFP_WAIT_FD)
			CHECK(arg.fd >= 0, "LFP_GETWAIT fd %d", arg.fd);
		if (M.obj == LFP_WAIT_MUTEX_COND)
			CHECK(arg.mc.mutex && arg.mc.cond, "LFP_GETWAIT mutex/cond NULL");
		break;
	case 2:
		CHECK_EQ(lfp_control(&EQ->fid, 99, &o), -ENOSYS, "lfp_control(99)");
		break;
	default:
		CHECK_EQ(lfp_control(&EQ->fid, LFP_GETWAITOBJ, NULL), -EINVAL,
		         "LFP_GETWAITOBJ(NULL)");
		break;
	}
}

static void op_strerror(struct fin *f)
{
	char buf[48], num[48];
	size_t len = fin_u8(f) % sizeof(buf);
	int prov = pick_err(f);
	const char *ref, *s;

	if ((fin_u8(f) & 1) && prov != INT32_MIN)
		prov = -prov;
	/* Without a binding (eq.h): "provider error N" into a buffer, a fixed
	 * text without one; prov_errno is the provider's, not an errno. */
	snprintf(num, sizeof(num), "provider error %d", prov);
	ref = len ? num : "provider error (no binding to name it)";

	memset(buf, 'x', sizeof(buf));
	s = lfp_eq_strerror(EQ, prov, NULL, len ? buf : NULL, len);
	CHECK(s != NULL, "lfp_eq_strerror returned NULL");
	if (len) {
		CHECK(s == buf, "lfp_eq_strerror did not return the buffer");
		CHECK(memchr(buf, '\0', len) != NULL, "lfp_eq_strerror: not terminated");
		CHECK(strncmp(buf, ref, len - 1) == 0, "lfp_eq_strerror text");
		CHECK(buf[len] == 'x', "lfp_eq_strerror wrote past len");
	} else {
		CHECK(strcmp(s, ref) == 0, "lfp_eq_strerror text");
	}
}

static void op_bad_args(struct fin *f)
{
	struct lfp_eq_err_entry e;
	uint32_t code;
	char b[4];

	memset(&e, 0, sizeof(e));
	switch (fin_u8(f) % 8) {
	case 0: CHECK_EQ(lfp_eq_write(NULL, 1, b, 1, 0), -EINVAL, "write(NULL eq)"); break;
	case 1: CHECK_EQ(lfp_eq_read(NULL, &code, b, 4, 0), -EINVAL, "read(NULL eq)"); break;
	case 2: CHECK_EQ(lfp_eq_readerr(EQ, NULL, 0), -EINVAL, "readerr(NULL buf)"); break;
	case 3: CHECK_EQ(lfp_eq_readerr(NULL, &e, 0), -EINVAL, "readerr(NULL eq)"); break;
	case 4: CHECK_EQ(lfp_eq_write_err(EQ, NULL), -EINVAL, "write_err(NULL)"); break;
	case 5: CHECK_EQ(lfp_eq_sread(NULL, &code, b, 4, 0, 0), -EINVAL, "sread(NULL eq)"); break;
	case 6: CHECK_EQ(lfp_trywait(NULL, 1), -EINVAL, "trywait(NULL)"); break;
	default: CHECK_EQ(lfp_eq_close(NULL), -EINVAL, "close(NULL)"); break;
	}
}

/* ---------------------------------------------------------------- setup */

static const size_t odd_sizes[] = {
	LFP_RING_MAX_CAPACITY + 1, SIZE_MAX, (size_t)1 << 31, (size_t)1 << 40,
	512, 1000, 1023, 1024, 1025, 255, 256, 257,
};

static const size_t odd_esz[] = {
	(size_t)INT32_MAX / 2 + 1, SIZE_MAX, (size_t)INT32_MAX, (size_t)1 << 40,
	(size_t)INT32_MAX / 2, 255, 256, 1, 8, 200, LFP_EQ_MAX_ENTRY_SIZE,
	LFP_EQ_MAX_ENTRY_SIZE + 1,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin in = { data, size };
	struct lfp_eq_attr attr;
	struct lfp_wait_attr wattr;
	uint8_t b0 = fin_u8(&in), b1 = fin_u8(&in), b2 = fin_u8(&in), b3 = fin_u8(&in);
	static const enum lfp_wait_obj objs[] = {
		LFP_WAIT_NONE, LFP_WAIT_UNSPEC, LFP_WAIT_SET, LFP_WAIT_FD,
		LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD, LFP_WAIT_POLLFD,
		(enum lfp_wait_obj)42,
	};
	static const enum lfp_wait_obj wobjs[] = {
		LFP_WAIT_FD, LFP_WAIT_YIELD, LFP_WAIT_MUTEX_COND, LFP_WAIT_POLLFD,
	};
	static const unsigned badbits[] = { 0, 8, 10, 19, 28, 30, 59, 61, 62, 63 };
	int valid = 1, want, got, ops;
	size_t cap, sz;

	memset(&attr, 0, sizeof(attr));
	attr.size = (b0 & 0xC0) != 0xC0 ? (size_t)(b0 & 0x3f) :
	            odd_sizes[(b0 & 0x3f) % (sizeof(odd_sizes) / sizeof(odd_sizes[0]))];
	attr.entry_size = b1 <= 200 ? b1 : odd_esz[(b1 - 201) % (sizeof(odd_esz) / sizeof(odd_esz[0]))];
	attr.flags = (b2 & 1 ? LFP_EQ_BACKPRESSURE : 0) | (b2 & 2 ? LFP_WRITE : 0) |
	             (b2 & 4 ? LFP_AFFINITY : 0);
	if (b2 & 8)
		attr.flags |= (uint64_t)1 << badbits[(b2 >> 4) % (sizeof(badbits) / sizeof(badbits[0]))];
	else
		attr.flags |= (b2 & 16 ? LFP_SINGLE_PRODUCER : 0) |
		              (b2 & 32 ? LFP_SINGLE_CONSUMER : 0);
	attr.wait_obj = objs[b3 & 7];
	attr.signaling_vector = (int)b2 - 100;
	WS = NULL;
	if (attr.wait_obj == LFP_WAIT_SET && !(b3 & 8)) {
		wattr.wait_obj = wobjs[(b3 >> 4) & 3];
		wattr.flags = 0;
		CHECK_EQ(lfp_wait_open(&wattr, &WS), 0, "lfp_wait_open(%d)", (int)wattr.wait_obj);
		attr.wait_set = WS;
	} else if (attr.wait_obj != LFP_WAIT_SET && (b3 & 8)) {
		attr.wait_set = (struct lfp_wait *)(uintptr_t)0x1000; /* never used */
	}
	if (b3 & 0x40) { /* attr NULL: the defaults */
		if (WS)
			CHECK_EQ(lfp_wait_close(WS), 0, "lfp_wait_close");
		WS = NULL;
		memset(&attr, 0, sizeof(attr));
	}

	/* The model of lfp_eq_open (docs/contract.md "Event queues", eq.h). */
	if (attr.flags & ~(LFP_WRITE | LFP_AFFINITY | LFP_EQ_BACKPRESSURE |
	                   LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER))
		valid = 0;
	switch (attr.wait_obj) {
	case LFP_WAIT_NONE: case LFP_WAIT_UNSPEC: case LFP_WAIT_FD:
	case LFP_WAIT_MUTEX_COND: case LFP_WAIT_YIELD:
		if (attr.wait_set)
			valid = 0;
		break;
	case LFP_WAIT_SET:
		if (!attr.wait_set)
			valid = 0;
		break;
	default:
		valid = 0;
	}
	if (attr.size > LFP_RING_MAX_CAPACITY || attr.entry_size > LFP_EQ_MAX_ENTRY_SIZE)
		valid = 0;
	sz = attr.size ? attr.size : LFP_EQ_DEFAULT_SIZE;
	for (cap = 2; valid && cap < sz; cap <<= 1)
		;
	TRACE("eq size %zu entry_size %zu flags %#llx wait %d%s -> %s", attr.size,
	      attr.entry_size, (unsigned long long)attr.flags, (int)attr.wait_obj,
	      attr.wait_set ? " (with set)" : "", valid ? "valid" : "invalid");
	CHECK_EQ(lfp_eq_open(&attr, NULL, EQ_CTX), -EINVAL, "lfp_eq_open(NULL result)");
	if (valid && (cap > MAX_CAP || attr.entry_size > MAX_ESZ))
		goto out; /* valid, but too big to build on every run */

	EQ = NULL;
	got = lfp_eq_open(b3 & 0x40 ? NULL : &attr, &EQ, EQ_CTX);
	want = valid ? 0 : -EINVAL;
	CHECK_EQ(got, want, "lfp_eq_open(size %zu, entry_size %zu, flags %#llx, wait %d%s)",
	         attr.size, attr.entry_size, (unsigned long long)attr.flags,
	         (int)attr.wait_obj, attr.wait_set ? ", wait_set" : "");
	if (got)
		goto out;

	memset(&M, 0, sizeof(M));
	writes = reads = 0;
	M.cap = cap;
	M.ecap = cap < LFP_EQ_ERR_CAPACITY ? cap : LFP_EQ_ERR_CAPACITY;
	M.esz = attr.entry_size ? attr.entry_size : LFP_EQ_DEFAULT_ENTRY_SIZE;
	M.bp = !!(attr.flags & LFP_EQ_BACKPRESSURE);
	M.obj = attr.wait_obj == LFP_WAIT_UNSPEC ? LFP_WAIT_FD : attr.wait_obj;
	M.seed = 1;
	M.fd = -1;
	if (M.obj == LFP_WAIT_FD) {
		CHECK_EQ(lfp_control(&EQ->fid, LFP_GETWAIT, &M.fd), 0, "LFP_GETWAIT");
	} else if (WS && WS->w.wait_obj == LFP_WAIT_FD) {
		CHECK_EQ(lfp_control(&WS->fid, LFP_GETWAIT, &M.fd), 0, "LFP_GETWAIT (set)");
	} else if (WS && WS->w.wait_obj == LFP_WAIT_POLLFD) {
		struct pollfd p;
		struct lfp_wait_pollfd w = { 0, 1, &p };

		CHECK_EQ(lfp_control(&WS->fid, LFP_GETWAIT, &w), 0, "LFP_GETWAIT (pollfd set)");
		CHECK_EQ(w.nfds, 1, "pollfd set size");
		M.fd = p.fd;
	}

	for (ops = 0; ops < FUZZ_MAX_OPS && fin_left(&in); ops++) {
		uint8_t op = fin_u8(&in);

		if ((op & 0x7f) % 16 > 5)
			owned_check(); /* not a read: EQ-owned err_data still valid */
		switch ((op & 0x7f) % 16) {
		case 0: case 1:
			op_read(&in, op, 0);
			break;
		case 2:
			op_readerr(&in, op);
			break;
		case 3:
			op_read(&in, op, 1);
			break;
		case 4:
			op_drain(&in);
			break;
		case 5:
			op_readerr(&in, op);
			break;
		case 6: case 7: case 8:
			op_write(&in, op);
			break;
		case 9:
			op_write_many(&in);
			break;
		case 10:
			op_write_err(&in, op);
			break;
		case 11:
			op_write_err_many(&in);
			break;
		case 12:
			op_trywait(&in);
			break;
		case 13:
			op_fd_check();
			op_wait_set();
			break;
		case 14:
			op_control(&in);
			op_strerror(&in);
			break;
		default:
			op_bad_args(&in);
			break;
		}
		op_fd_check();
	}
	if (WS)
		CHECK_EQ(lfp_wait_close(WS), -EBUSY, "lfp_wait_close with a member");
	CHECK_EQ(ops & 1 ? lfp_close(&EQ->fid) : lfp_eq_close(EQ), 0, "lfp_eq_close");
	EQ = NULL;
out:
	if (WS)
		CHECK_EQ(lfp_wait_close(WS), 0, "lfp_wait_close");
	WS = NULL;
	return 0;
}
