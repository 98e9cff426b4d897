/*
 * libFuzzer target: the wait protocol (signal.h, lfp_trywait(3)) and the
 * blocking calls of EQs, CQs and counters with their own wait objects,
 * against a sequential model.  The other targets never block and have no
 * oracle for a wait object's readiness; this one has both.
 *
 * Input: five bytes pick the objects: one EQ (size 2-16, with or without
 * LFP_EQ_BACKPRESSURE), two CQs (size 2-16, CONTEXT format) and two
 * counters, each with wait object UNSPEC, FD, MUTEX_COND or YIELD.  Then up
 * to FUZZ_MAX_OPS operations: lfp_trywait over one to three of the objects,
 * EQ write/write_err (overrunning a full EQ without backpressure)/read/
 * readerr/sread, CQ write/writeerr/read/readerr/sread (with a threshold or
 * none)/signal, counter inc/incerr/add/adderr/set/seterr/wait (with a
 * threshold).  Blocking calls use timeout 0 or 1 ms, and at most
 * WAIT_BUDGET calls per input may really wait (the model knows which).
 *
 * Oracles (each message starts with its tag, which `make fuzz-broken`
 * greps for):
 *
 *  [fd-readable]  lfp_trywait(3): after lfp_trywait touched an FD object
 *      (returned 0, or checked it on the way to -EAGAIN), the next event on
 *      it makes its descriptor (LFP_GETWAIT) readable, and "a descriptor
 *      stays readable until a later lfp_trywait() clears it" -- whatever
 *      blocking calls ran on the object meanwhile, timed out or not.
 *      Checked with poll(fd, 0) after every operation.  The model tracks
 *      signal.h's ARMED bit: set by lfp_trywait on every object it checks
 *      (header code: W2 runs before the re-check, so also on the object
 *      that reports -EAGAIN and the ones before it), cleared by every
 *      producer wake (P4 clears both bits).  Events: a successful EQ write
 *      or write_err, the write that overruns the EQ, a CQ write/writeerr,
 *      lfp_cq_signal, and every counter update (inc/incerr are events;
 *      add/set and the rest "fire the wait object of a thread blocked on
 *      it", lfp_cntr(3)).  lfp_trywait drains the descriptor of each
 *      object it finds idle and puts the post back on the one that
 *      reports -EAGAIN (lfp_trywait(3) NOTES).  After a successful trywait
 *      with nothing produced the descriptor may be readable or not: not
 *      checked.
 *
 *  [prompt]  A blocking call whose condition already holds returns at
 *      once: it never reaches the point where it goes to sleep (signal.h's
 *      W3, seen through the LFP_SCHED_POINTS hook, so the check does not
 *      depend on timing).  "Holds": lfp_eq_sread with an event, an error
 *      or the overrun queued; lfp_cq_sread with an error queued, with the
 *      threshold met, or with an lfp_cq_signal no sread has returned for
 *      yet (lfp_cq(3), cq.h: "the next sread returns -EAGAIN without
 *      waiting, once the completions already queued are read");
 *      lfp_cntr_wait with value >= threshold.
 *
 *  [timeout]  A blocking call whose condition does not hold returns the
 *      timeout code (-EAGAIN for the sreads, -ETIMEDOUT for
 *      lfp_cntr_wait; model mismatch otherwise) and, with timeout 1 ms,
 *      not before 1 ms has passed on CLOCK_MONOTONIC (the lower bound
 *      only: an upper bound would depend on the machine's load).
 *
 *  Model mismatch (no tag): every return value and every entry read, as
 *  in the other targets: no completion or event is read while an error is
 *  queued (-LFP_EAVAIL), an overrun EQ drains its events, then gives
 *  -LFP_EAVAIL and the overrun entry and never an event again, a
 *  remembered signal is taken by one sread only.
 *
 * Built with -DLFP_TEST_BROKEN (make fuzz-broken), LFP_FUZZ_BROKEN=A or E
 * in the environment brings that defect back (fuzz_input.h).
 */
#define LFP_SCHED_POINTS 1
#include <lfpoll/lfpoll.h>

#include <poll.h>
#include <time.h>

#include "fuzz_input.h"

#define ORACLE(tag, ...) FUZZ_FAIL("[" tag "] " __VA_ARGS__)

#define NCQ    2
#define NCNTR  2
#define NOBJ   (1 + NCQ + NCNTR)     /* 0: the EQ, then the CQs, then the counters */
#define MAX_CAP 16
#define EQ_ESZ  16
#define WAIT_BUDGET 3                /* calls per input that really wait 1 ms */

enum { K_EQ, K_CQ, K_CNTR };

struct wobj {
	int kind, idx;
	enum lfp_wait_obj wait;       /* as resolved */
	int fd;                       /* FD: the descriptor; else -1 */
	int armed;                    /* signal.h's ARMED bit */
	int posted;                   /* a post on the descriptor, not drained */
	struct lfp_fid *fid;
};

struct meqev {
	uint32_t code, len, seed;
};

static struct wobj O[NOBJ];

/* The EQ. */
static struct lfp_eq *EQ;
static struct {
	size_t cap, ecap;
	int bp, overrun;
	struct meqev ev[MAX_CAP];
	size_t first, n;
	uint32_t err[MAX_CAP];       /* seeds of queued errors */
	size_t efirst, en;
} ME;

/* The CQs (CONTEXT format: entries are op_context values). */
static struct lfp_cq *CQS[NCQ];
static struct {
	size_t cap, ecap;
	uintptr_t ent[MAX_CAP];
	size_t first, n;
	uintptr_t err[MAX_CAP];
	size_t efirst, en;
	int sig_unseen;              /* an lfp_cq_signal no sread returned for */
} MC[NCQ];

/* The counters. */
static struct lfp_cntr *CNS[NCNTR];
static struct {
	uint64_t value, err, events, tw_seen;
} MN[NCNTR];

static uint32_t seed;
static int waits_left;

/* ------------------------------------------------- test hooks of sched.h */

static struct {
	int active;                  /* inside a blocking call we watch */
	int slept;                   /* it reached W3 (about to sleep) */
} B;

void lfp_test_sched(const char *where, const void *obj)
{
	(void)obj;
	if (B.active && where[0] == 's' && strcmp(where, "signal.W3") == 0)
		B.slept++;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t call_t0;

static void call_begin(void)
{
	B.active = 1;
	B.slept = 0;
	call_t0 = now_ns();
}

/* immediate: the model says the condition holds (or timeout is 0). */
static void call_end(const char *what, int immediate, int timeout)
{
	int64_t el = now_ns() - call_t0;

	B.active = 0;
	if (immediate && B.slept)
		ORACLE("prompt", "%s (timeout %d ms) went to sleep although its "
		       "condition held when it was called (returned after %lld us)",
		       what, timeout, (long long)(el / 1000));
	if (!immediate && timeout > 0 && el < (int64_t)timeout * 1000000)
		ORACLE("timeout", "%s returned its timeout code after %lld us, "
		       "before its %d ms timeout", what, (long long)(el / 1000), timeout);
}

/* Timeout for a blocking call: 0 or 1 ms; 1 ms only while the budget of
 * real waits lasts (a call the model says returns at once costs nothing). */
static int pick_timeout(uint8_t s, int would_wait)
{
	if (!(s & 1))
		return 0;
	if (would_wait) {
		if (waits_left <= 0)
			return 0;
		waits_left--;
	}
	return 1;
}

/* ------------------------------------------------- the signal model */

static const char *obj_name(int o)
{
	static char buf[8][24];
	static int next;
	char *b = buf[next++ % 8];
	static const char *wn[] = { "NONE", "UNSPEC", "SET", "FD", "MUTEX_COND",
	                            "YIELD", "POLLFD" };
	const char *w = (unsigned)O[o].wait < 7 ? wn[O[o].wait] : "?";

	if (O[o].kind == K_EQ)
		snprintf(b, sizeof(buf[0]), "eq(%s)", w);
	else
		snprintf(b, sizeof(buf[0]), "%s%d(%s)", O[o].kind == K_CQ ? "cq" : "cntr",
		         O[o].idx, w);
	return b;
}

/* P2-P4: a producer published something (or the EQ overran). */
static void produced(int o)
{
	if (O[o].armed && O[o].fd >= 0)
		O[o].posted = 1;
	O[o].armed = 0;
}

static void fd_check(int o, const char *after)
{
	short revents;
	int n;

	if (O[o].fd < 0)
		return;
	n = fuzz_poll_now(O[o].fd, &revents);
	CHECK(n >= 0 && !(revents & (POLLERR | POLLNVAL)),
	      "poll on the descriptor of %s: %d (%s), revents %#x", obj_name(o),
	      n, n < 0 ? strerror(errno) : "ok", (unsigned)revents);
	if (O[o].posted && n != 1) {
		int work;

		switch (O[o].kind) {
		case K_EQ: work = ME.n || ME.en || ME.overrun; break;
		case K_CQ: work = MC[O[o].idx].n || MC[O[o].idx].en; break;
		default: work = MN[O[o].idx].events != MN[O[o].idx].tw_seen; break;
		}
		ORACLE("fd-readable", "the descriptor of %s is not readable after %s: "
		       "lfp_trywait armed it, an event came after, and no "
		       "lfp_trywait ran since (%s)", obj_name(o), after,
		       work ? "a lost wakeup: the work is still queued"
		            : "lfp_trywait(3): it stays readable until a later lfp_trywait");
	}
}

static void fd_check_all(const char *after)
{
	int o;

	for (o = 0; o < NOBJ; o++)
		fd_check(o, after);
}

/* ------------------------------------------------- EQ */

static int eq_ready(void)
{
	return ME.n || ME.en || ME.overrun;
}

static ssize_t eq_full(void)
{
	if (ME.bp)
		return -EAGAIN;
	if (!ME.overrun) {
		ME.overrun = 1;
		produced(0);
	}
	return -LFP_EOVERRUN;
}

static void eq_write1(uint32_t code, size_t len)
{
	unsigned char b[EQ_ESZ];
	ssize_t want, got;

	fuzz_pattern(b, len, seed);
	if (ME.overrun)
		want = -LFP_EOVERRUN;
	else if (ME.n == ME.cap)
		want = eq_full();
	else
		want = (ssize_t)len;
	got = lfp_eq_write(EQ, code, b, len, 0);
	TRACE("eq write code %u len %zu -> %zd (model %zd; %zu/%zu, errors %zu, overrun %d)",
	      code, len, got, want, ME.n, ME.cap, ME.en, ME.overrun);
	CHECK_EQ(got, want, "lfp_eq_write(len %zu), %zu of %zu queued, overrun %d",
	         len, ME.n, ME.cap, ME.overrun);
	if (got >= 0) {
		struct meqev *e = &ME.ev[(ME.first + ME.n++) % ME.cap];

		e->code = code;
		e->len = (uint32_t)len;
		e->seed = seed;
		produced(0);
	}
	seed++;
}

static void op_eq_write(struct fin *f)
{
	uint8_t s = fin_u8(f);
	size_t n = s & 0x80 ? 1 + (s & 0x1f) : 1, i, len = fin_u8(f) % (EQ_ESZ + 1);

	for (i = 0; i < n; i++)
		eq_write1(LFP_EVENT_USER + (s & 0x3f) + (uint32_t)i, len);
}

static void op_eq_write_err(struct fin *f)
{
	struct lfp_eq_err_entry e;
	ssize_t want, got;

	(void)f;
	memset(&e, 0, sizeof(e));
	e.fid = &EQ->fid;
	e.context = (void *)(uintptr_t)(0xE000 + seed);
	e.err = EIO;
	if (ME.overrun)
		want = -LFP_EOVERRUN;
	else if (ME.en == ME.ecap)
		want = eq_full();
	else
		want = (ssize_t)sizeof(e);
	got = lfp_eq_write_err(EQ, &e);
	TRACE("eq write_err -> %zd (model %zd; errors %zu/%zu, overrun %d)", got, want,
	      ME.en, ME.ecap, ME.overrun);
	CHECK_EQ(got, want, "lfp_eq_write_err, %zu of %zu errors, overrun %d",
	         ME.en, ME.ecap, ME.overrun);
	if (got >= 0) {
		ME.err[(ME.efirst + ME.en++) % ME.ecap] = seed;
		produced(0);
	}
	seed++;
}

/* The result of lfp_eq_read with room for any event. */
static ssize_t m_eq_read(void)
{
	if (ME.en)
		return -LFP_EAVAIL;
	if (ME.n)
		return ME.ev[ME.first].len;
	return ME.overrun ? -LFP_EAVAIL : -EAGAIN;
}

static void eq_check_read(ssize_t got, uint32_t code, const unsigned char *b,
                          uint64_t flags, const char *what)
{
	struct meqev *h = &ME.ev[ME.first];
	unsigned char want[EQ_ESZ];

	if (got < 0)
		return;
	CHECK_EQ(code, h->code, "%s: event code", what);
	fuzz_pattern(want, h->len, h->seed);
	CHECK(memcmp(b, want, h->len) == 0, "%s: payload differs", what);
	if (!(flags & LFP_PEEK)) {
		ME.first = (ME.first + 1) % ME.cap;
		ME.n--;
	}
}

static void op_eq_read(struct fin *f, int sread)
{
	uint8_t s = fin_u8(f);
	uint64_t flags = s & 2 ? LFP_PEEK : 0;
	unsigned char b[EQ_ESZ];
	uint32_t code = 0;
	ssize_t want = m_eq_read(), got;
	int would_wait = want == -EAGAIN, timeout;

	if (!sread) {
		got = lfp_eq_read(EQ, &code, b, sizeof(b), flags);
		TRACE("eq read%s -> %zd (model %zd)", flags ? " PEEK" : "", got, want);
		CHECK_EQ(got, want, "lfp_eq_read, %zu events, %zu errors, overrun %d",
		         ME.n, ME.en, ME.overrun);
		eq_check_read(got, code, b, flags, "lfp_eq_read");
		return;
	}
	timeout = pick_timeout(s, would_wait);
	call_begin();
	got = lfp_eq_sread(EQ, &code, b, sizeof(b), timeout, flags);
	TRACE("eq sread%s timeout %d -> %zd (model %zd)%s", flags ? " PEEK" : "",
	      timeout, got, want, B.slept ? " slept" : "");
	call_end("lfp_eq_sread", !would_wait || timeout == 0, timeout);
	CHECK_EQ(got, want, "lfp_eq_sread(timeout %d), %zu events, %zu errors, overrun %d",
	         timeout, ME.n, ME.en, ME.overrun);
	eq_check_read(got, code, b, flags, "lfp_eq_sread");
}

static void op_eq_readerr(struct fin *f)
{
	uint8_t s = fin_u8(f);
	uint64_t flags = s & 1 ? LFP_PEEK : 0;
	struct lfp_eq_err_entry e;
	ssize_t want, got;

	memset(&e, 0, sizeof(e));
	want = ME.en || ME.overrun ? (ssize_t)sizeof(e) : -EAGAIN;
	got = lfp_eq_readerr(EQ, &e, flags);
	TRACE("eq readerr%s -> %zd (model %zd; errors %zu, overrun %d)",
	      flags ? " PEEK" : "", got, want, ME.en, ME.overrun);
	CHECK_EQ(got, want, "lfp_eq_readerr, %zu errors, overrun %d", ME.en, ME.overrun);
	if (got < 0)
		return;
	if (ME.en) {
		CHECK(e.context == (void *)(uintptr_t)(0xE000 + ME.err[ME.efirst]),
		      "lfp_eq_readerr: not the oldest error");
		CHECK_EQ(e.err, EIO, "lfp_eq_readerr: err");
		if (!flags) {
			ME.efirst = (ME.efirst + 1) % ME.ecap;
			ME.en--;
		}
	} else {
		CHECK_EQ(e.err, LFP_EOVERRUN, "lfp_eq_readerr after the overrun: err");
	}
}

/* ------------------------------------------------- CQs */

static int cq_ready(int i)
{
	return MC[i].n || MC[i].en;
}

static void op_cq_write(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int i = s & 1;
	size_t count = 1 + (s >> 1) % (MC[i].cap + 2), k, room = MC[i].cap - MC[i].n;
	struct lfp_cq_entry e[MAX_CAP + 2];
	ssize_t want, got;

	for (k = 0; k < count; k++)
		e[k].op_context = (void *)(uintptr_t)(0x10000 + seed + k);
	want = room ? (ssize_t)(count < room ? count : room) : -EAGAIN;
	got = lfp_cq_write(CQS[i], e, count);
	TRACE("cq%d write %zu -> %zd (model %zd; %zu/%zu)", i, count, got, want,
	      MC[i].n, MC[i].cap);
	CHECK_EQ(got, want, "lfp_cq_write(cq%d, count %zu), %zu of %zu queued", i,
	         count, MC[i].n, MC[i].cap);
	for (k = 0; got > 0 && k < (size_t)got; k++)
		MC[i].ent[(MC[i].first + MC[i].n++) % MC[i].cap] = 0x10000 + seed + k;
	if (got > 0)
		produced(1 + i);
	seed += (uint32_t)count;
}

static void op_cq_writeerr(struct fin *f)
{
	int i = fin_u8(f) & 1;
	struct lfp_cq_err_entry e;
	ssize_t want, got;

	memset(&e, 0, sizeof(e));
	e.op_context = (void *)(uintptr_t)(0xC000 + seed);
	e.err = EIO;
	want = MC[i].en == MC[i].ecap ? -EAGAIN : (ssize_t)sizeof(e);
	got = lfp_cq_writeerr(CQS[i], &e);
	TRACE("cq%d writeerr -> %zd (model %zd; errors %zu/%zu)", i, got, want,
	      MC[i].en, MC[i].ecap);
	CHECK_EQ(got, want, "lfp_cq_writeerr(cq%d), %zu of %zu errors", i, MC[i].en,
	         MC[i].ecap);
	if (got >= 0) {
		MC[i].err[(MC[i].efirst + MC[i].en++) % MC[i].ecap] = 0xC000 + seed;
		produced(1 + i);
	}
	seed++;
}

static ssize_t m_cq_read(int i, size_t count)
{
	if (MC[i].en)
		return -LFP_EAVAIL;
	if (!MC[i].n)
		return -EAGAIN;
	return (ssize_t)(count < MC[i].n ? count : MC[i].n);
}

static void cq_check_read(int i, ssize_t got, const struct lfp_cq_entry *e,
                          const char *what)
{
	ssize_t k;

	for (k = 0; k < got; k++) {
		CHECK(e[k].op_context == (void *)MC[i].ent[MC[i].first],
		      "%s(cq%d): completion %zd is %p, the model says %p", what, i, k,
		      e[k].op_context, (void *)MC[i].ent[MC[i].first]);
		MC[i].first = (MC[i].first + 1) % MC[i].cap;
		MC[i].n--;
	}
}

static void op_cq_read(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int i = s & 1;
	struct lfp_cq_entry e[8];
	struct lfp_cq_err_entry ee;
	ssize_t want, got;

	if (s & 2) {
		uint64_t flags = s & 4 ? LFP_PEEK : 0;

		memset(&ee, 0, sizeof(ee));
		want = MC[i].en ? 1 : -EAGAIN;
		got = lfp_cq_readerr(CQS[i], &ee, flags);
		TRACE("cq%d readerr%s -> %zd (model %zd; errors %zu)", i,
		      flags ? " PEEK" : "", got, want, MC[i].en);
		CHECK_EQ(got, want, "lfp_cq_readerr(cq%d), %zu errors", i, MC[i].en);
		if (got >= 0) {
			CHECK(ee.op_context == (void *)MC[i].err[MC[i].efirst],
			      "lfp_cq_readerr(cq%d): not the oldest error", i);
			CHECK_EQ(ee.err, EIO, "lfp_cq_readerr: err");
			if (!flags) {
				MC[i].efirst = (MC[i].efirst + 1) % MC[i].ecap;
				MC[i].en--;
			}
		}
		return;
	} else {
		size_t count = 1 + (s >> 3) % 6;

		want = m_cq_read(i, count);
		got = lfp_cq_read(CQS[i], e, count);
		TRACE("cq%d read %zu -> %zd (model %zd; %zu queued, %zu errors)", i, count,
		      got, want, MC[i].n, MC[i].en);
		CHECK_EQ(got, want, "lfp_cq_read(cq%d, count %zu), %zu queued, %zu errors",
		         i, count, MC[i].n, MC[i].en);
		cq_check_read(i, got, e, "lfp_cq_read");
	}
}

static void op_cq_sread(struct fin *f)
{
	uint8_t s = fin_u8(f), t = fin_u8(f);
	int i = s & 1, nullcond = (s & 2) != 0, would_wait = 0, timeout;
	size_t count = 1 + (s >> 2) % 6, thr = (size_t)(s >> 5), eff;
	struct lfp_cq_entry e[8];
	ssize_t want, got;

	eff = nullcond || thr == 0 ? 1 : thr;
	if (eff > count)
		eff = count;
	if (eff > MC[i].cap)
		eff = MC[i].cap; /* more could never be queued (lfp_cq(3)) */
	if (MC[i].en)
		want = -LFP_EAVAIL;
	else if (MC[i].n >= eff)
		want = m_cq_read(i, count);
	else {
		want = -EAGAIN;       /* a remembered signal, or the timeout */
		would_wait = !MC[i].sig_unseen;
	}
	timeout = pick_timeout(t, would_wait);
	call_begin();
	got = lfp_cq_sread(CQS[i], e, count, nullcond ? NULL : &thr, timeout);
	TRACE("cq%d sread count %zu threshold %zu%s timeout %d -> %zd (model %zd; %zu queued, "
	      "%zu errors, signal %d)%s", i, count, thr, nullcond ? " (NULL)" : "", timeout,
	      got, want, MC[i].n, MC[i].en, MC[i].sig_unseen, B.slept ? " slept" : "");
	call_end(MC[i].sig_unseen && want == -EAGAIN ?
	         "lfp_cq_sread with a signal pending (remembered: lfp_cq(3))" : "lfp_cq_sread",
	         !would_wait || timeout == 0, timeout);
	CHECK_EQ(got, want, "lfp_cq_sread(cq%d, count %zu, threshold %zu, timeout %d), "
	         "%zu queued, %zu errors", i, count, eff, timeout, MC[i].n, MC[i].en);
	cq_check_read(i, got, e, "lfp_cq_sread");
	if (want == -EAGAIN)
		MC[i].sig_unseen = 0; /* taken (or there was none) */
}

static void op_cq_signal(struct fin *f)
{
	int i = fin_u8(f) & 1, got;

	got = lfp_cq_signal(CQS[i]);
	TRACE("cq%d signal -> %d", i, got);
	CHECK_EQ(got, 0, "lfp_cq_signal(cq%d)", i);
	MC[i].sig_unseen = 1;
	produced(1 + i);
}

/* ------------------------------------------------- counters */

static const char *const cn_ops[] = { "inc", "incerr", "add", "adderr", "set", "seterr" };

static void op_cntr_change(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int j = s & 1, kind = (s >> 1) % 6, got;
	uint64_t v = fin_u8(f) % 4;

	switch (kind) {
	case 0: got = lfp_cntr_inc(CNS[j], v); MN[j].value += v; MN[j].events++; break;
	case 1: got = lfp_cntr_incerr(CNS[j], v); MN[j].err += v; MN[j].events++; break;
	case 2: got = lfp_cntr_add(CNS[j], v); MN[j].value += v; break;
	case 3: got = lfp_cntr_adderr(CNS[j], v); MN[j].err += v; break;
	case 4: got = lfp_cntr_set(CNS[j], v); MN[j].value = v; break;
	default: got = lfp_cntr_seterr(CNS[j], v); MN[j].err = v; break;
	}
	TRACE("cntr%d %s %llu -> %d (value %llu)", j, cn_ops[kind], (unsigned long long)v,
	      got, (unsigned long long)MN[j].value);
	CHECK_EQ(got, 0, "lfp_cntr_%s", cn_ops[kind]);
	produced(1 + NCQ + j);
	CHECK(lfp_cntr_read(CNS[j]) == MN[j].value, "lfp_cntr_read(cntr%d)", j);
	CHECK(lfp_cntr_readerr(CNS[j]) == MN[j].err, "lfp_cntr_readerr(cntr%d)", j);
}

static void op_cntr_wait(struct fin *f)
{
	uint8_t s = fin_u8(f), t = fin_u8(f);
	int j = s & 1, want, got, timeout;
	uint64_t thr = MN[j].value + (uint64_t)((s >> 1) % 4) - 1; /* value-1 .. value+2 */

	if (s & 0x40)
		thr = (s >> 1) % 8;
	want = MN[j].value >= thr ? 0 : -ETIMEDOUT;
	timeout = pick_timeout(t, want != 0);
	call_begin();
	got = lfp_cntr_wait(CNS[j], thr, timeout);
	TRACE("cntr%d wait(%llu, %d) -> %d (model %d, value %llu)%s", j,
	      (unsigned long long)thr, timeout, got, want, (unsigned long long)MN[j].value,
	      B.slept ? " slept" : "");
	call_end("lfp_cntr_wait", want == 0 || timeout == 0, timeout);
	CHECK_EQ(got, want, "lfp_cntr_wait(cntr%d, threshold %llu, timeout %d), value %llu",
	         j, (unsigned long long)thr, timeout, (unsigned long long)MN[j].value);
}

/* ------------------------------------------------- trywait */

static int obj_ready(int o)
{
	switch (O[o].kind) {
	case K_EQ: return eq_ready();
	case K_CQ: return cq_ready(O[o].idx);
	default: return MN[O[o].idx].events != MN[O[o].idx].tw_seen;
	}
}

static void op_trywait(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int n = 1 + s % 3, objs[3], i, want = 0, got;
	struct lfp_fid *fids[3];

	for (i = 0; i < n; i++) {
		objs[i] = fin_u8(f) % NOBJ;
		fids[i] = O[objs[i]].fid;
	}
	got = lfp_trywait(fids, (size_t)n);
	TRACE("trywait(%d: %s%s%s%s%s) -> %d", n, obj_name(objs[0]), n > 1 ? ", " : "",
	      n > 1 ? obj_name(objs[1]) : "", n > 2 ? ", " : "", n > 2 ? obj_name(objs[2]) : "",
	      got);
	/* In order: drain (W1), arm (W2), re-check (W3); the first object
	 * with work gives -EAGAIN and gets its post back. */
	for (i = 0; i < n; i++) {
		int o = objs[i];

		O[o].armed = 1;
		if (obj_ready(o)) {
			want = -EAGAIN;
			if (O[o].kind == K_CNTR)
				MN[O[o].idx].tw_seen = MN[O[o].idx].events;
			break;
		}
		O[o].posted = 0;
	}
	CHECK_EQ(got, want, "lfp_trywait over %d object(s), first %s", n, obj_name(objs[0]));
}

/* LFP_GETWAIT keeps giving the same descriptor. */
static void op_getwait(struct fin *f)
{
	int o = fin_u8(f) % NOBJ, fd = -1, got;
	enum lfp_wait_obj w;

	got = lfp_control(O[o].fid, LFP_GETWAITOBJ, &w);
	CHECK_EQ(got, 0, "LFP_GETWAITOBJ on %s", obj_name(o));
	CHECK_EQ(w, O[o].wait, "LFP_GETWAITOBJ on %s", obj_name(o));
	if (O[o].fd >= 0) {
		CHECK_EQ(lfp_control(O[o].fid, LFP_GETWAIT, &fd), 0, "LFP_GETWAIT on %s",
		         obj_name(o));
		CHECK_EQ(fd, O[o].fd, "LFP_GETWAIT on %s: another descriptor", obj_name(o));
	}
}

/* ------------------------------------------------- the run */

static const enum lfp_wait_obj waits[] = {
	LFP_WAIT_UNSPEC, LFP_WAIT_FD, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD,
};

static void obj_setup(int o, int kind, int idx, struct lfp_fid *fid)
{
	O[o].kind = kind;
	O[o].idx = idx;
	O[o].fid = fid;
	O[o].armed = O[o].posted = 0;
	O[o].fd = -1;
	CHECK_EQ(lfp_control(fid, LFP_GETWAITOBJ, &O[o].wait), 0, "LFP_GETWAITOBJ");
	if (O[o].wait == LFP_WAIT_FD)
		CHECK_EQ(lfp_control(fid, LFP_GETWAIT, &O[o].fd), 0, "LFP_GETWAIT");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin in = { data, size };
	struct lfp_eq_attr ea;
	struct lfp_cq_attr ca;
	struct lfp_cntr_attr na;
	uint8_t b;
	int i, ops;

	seed = 1;
	waits_left = WAIT_BUDGET;
	B.active = 0;

	b = fin_u8(&in);
	memset(&ea, 0, sizeof(ea));
	ea.size = (size_t)2 << ((b >> 2) & 3);
	ea.entry_size = EQ_ESZ;
	ea.flags = b & 0x10 ? LFP_EQ_BACKPRESSURE : 0;
	ea.wait_obj = waits[b & 3];
	CHECK_EQ(lfp_eq_open(&ea, &EQ, NULL), 0, "lfp_eq_open(wait %d)", (int)ea.wait_obj);
	memset(&ME, 0, sizeof(ME));
	ME.cap = ea.size;
	ME.ecap = ea.size < LFP_EQ_ERR_CAPACITY ? ea.size : LFP_EQ_ERR_CAPACITY;
	ME.bp = !!(b & 0x10);
	obj_setup(0, K_EQ, 0, &EQ->fid);

	for (i = 0; i < NCQ; i++) {
		b = fin_u8(&in);
		memset(&ca, 0, sizeof(ca));
		ca.size = (size_t)2 << ((b >> 2) & 3);
		ca.format = LFP_CQ_FORMAT_CONTEXT;
		ca.wait_cond = LFP_CQ_COND_THRESHOLD; /* sread's thresholds */
		ca.wait_obj = waits[b & 3];
		CHECK_EQ(lfp_cq_open(&ca, &CQS[i], NULL), 0, "lfp_cq_open(wait %d)",
		         (int)ca.wait_obj);
		memset(&MC[i], 0, sizeof(MC[i]));
		MC[i].cap = ca.size;
		MC[i].ecap = ca.size < LFP_CQ_ERR_CAPACITY ? ca.size : LFP_CQ_ERR_CAPACITY;
		obj_setup(1 + i, K_CQ, i, &CQS[i]->fid);
	}
	for (i = 0; i < NCNTR; i++) {
		memset(&na, 0, sizeof(na));
		na.wait_obj = waits[fin_u8(&in) & 3];
		CHECK_EQ(lfp_cntr_open(&na, &CNS[i], NULL), 0, "lfp_cntr_open(wait %d)",
		         (int)na.wait_obj);
		memset(&MN[i], 0, sizeof(MN[i]));
		obj_setup(1 + NCQ + i, K_CNTR, i, &CNS[i]->fid);
	}
	TRACE("objects: %s %s %s %s %s, eq size %zu%s", obj_name(0), obj_name(1),
	      obj_name(2), obj_name(3), obj_name(4), ME.cap, ME.bp ? " backpressure" : "");

	for (ops = 0; ops < FUZZ_MAX_OPS && fin_left(&in); ops++) {
		uint8_t op = fin_u8(&in);
		static const char *const names[] = {
			"trywait", "trywait", "eq write", "eq write_err", "eq read",
			"eq readerr", "eq sread", "cq write", "cq write", "cq writeerr",
			"cq read/readerr", "cq sread", "cq signal", "cntr update",
			"cntr wait", "getwait",
		};

		switch (op % 16) {
		case 0: case 1: op_trywait(&in); break;
		case 2: op_eq_write(&in); break;
		case 3: op_eq_write_err(&in); break;
		case 4: op_eq_read(&in, 0); break;
		case 5: op_eq_readerr(&in); break;
		case 6: op_eq_read(&in, 1); break;
		case 7: case 8: op_cq_write(&in); break;
		case 9: op_cq_writeerr(&in); break;
		case 10: op_cq_read(&in); break;
		case 11: op_cq_sread(&in); break;
		case 12: op_cq_signal(&in); break;
		case 13: op_cntr_change(&in); break;
		case 14: op_cntr_wait(&in); break;
		default: op_getwait(&in); break;
		}
		fd_check_all(names[op % 16]);
	}

	CHECK_EQ(lfp_eq_close(EQ), 0, "lfp_eq_close");
	for (i = 0; i < NCQ; i++)
		CHECK_EQ(lfp_cq_close(CQS[i]), 0, "lfp_cq_close");
	for (i = 0; i < NCNTR; i++)
		CHECK_EQ(lfp_cntr_close(CNS[i]), 0, "lfp_cntr_close");
	EQ = NULL;
	return 0;
}
