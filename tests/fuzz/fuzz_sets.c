/*
 * libFuzzer target: the pollfd set (pollfd.h) and poll sets (poll.h) with
 * completion queues (cq.h) and counters (cntr.h) as members, against a
 * sequential model (docs/contract.md, "Completion queues", "Counters", "Pollfd sets" and "Poll sets", lfp_poll(3)).
 *
 * Input: six bytes pick each CQ's format, size and wait object and each
 * counter's wait object; then up to FUZZ_MAX_OPS operations on
 *  - a pollfd set: add/mod/del with fds from a small range (negative ones
 *    included) and assorted events, get with random room.  change_index must
 *    equal the model's count of effective changes (a mod to the same events
 *    is none), -EEXIST/-ENOENT/-LFP_ETOOSMALL as the model says, nfds always
 *    set, and the array equal to the model's as a set;
 *  - two poll sets over three CQs and three counters: poll_add/poll_del
 *    (-EEXIST, -EBUSY for another set's member, -ENOENT), lfp_cq_write/
 *    writeerr/read/readerr/sread(0), lfp_cntr_inc/incerr/add/adderr/set/
 *    seterr/read/wait(0), lfp_trywait over a few members, closing members
 *    (-EBUSY while in a set) and sets (-EBUSY while not empty), and lfp_poll
 *    with a random count.
 *
 * What lfp_poll must report, single-threaded and so exactly: a member CQ
 * iff it holds a completion or an error; a member counter iff
 * lfp_cntr_inc/incerr was called since the latest of its open, the
 * application's last add/set (not adderr/seterr, which leave it alone), and
 * the last time a poll set returned its context (lfp_poll(3)).  Each call returns min(count, ready)
 * distinct contexts of ready members (so members that did not fit come in a
 * later call with room), members that did not fit in one call come before
 * any other in the next call on that set, and a counter's change is
 * consumed only when its context is returned.
 */
#include <lfpoll/lfpoll.h>

#include "fuzz_input.h"

#define NCQ   3
#define NCNTR 3
#define NOBJ  (NCQ + NCNTR)
#define NPS   2
#define MAX_CQ_CAP  1024
#define MAX_CQ_ECAP LFP_CQ_ERR_CAPACITY
#define CQ_ESZ_MAX  sizeof(struct lfp_cq_tagged_entry)
#define FD_RANGE    48
#define MAX_PFD     FD_RANGE

struct mcqerr {
	struct lfp_cq_err_entry e; /* err_data NULL, err_data_size the stored length */
	unsigned char d[LFP_CQ_ERR_DATA_MAX];
};

struct mcq {
	struct lfp_cq *cq;
	struct lfp_cq_attr attr;
	size_t esz, cap, ecap;
	size_t first, n;
	size_t efirst, en;
	int ps;                       /* poll set index, or -1 */
};

struct mcntr {
	struct lfp_cntr *c;
	struct lfp_cntr_attr attr;
	uint64_t value, err, events;  /* events: inc/incerr calls */
	uint64_t seen;                /* events a poll set or the application saw */
	uint64_t tw_seen;             /* events the last -EAGAIN trywait reported */
	int ps;
};

struct mpfd {
	int fd;
	short events;
};

static struct mcq CQ[NCQ];
static struct mcntr CN[NCNTR];
static unsigned char cq_ent[NCQ][MAX_CQ_CAP][CQ_ESZ_MAX];
static struct mcqerr cq_err[NCQ][MAX_CQ_ECAP];
static struct lfp_poll *PS[NPS];
/* Per set: members that were ready but did not fit in the last lfp_poll. */
static int skipped[NPS][NOBJ];
static struct lfp_eq *EQ;
static struct lfp_pollfds PFD;
static struct mpfd pf[MAX_PFD];
static size_t pfn;
static uint64_t pf_ci;
static uint32_t seed;

static void *obj_ctx(int o)
{
	return (void *)(uintptr_t)(o < NCQ ? 0x1000 + o : 0x2000 + (o - NCQ));
}

static struct lfp_fid *obj_fid(int o)
{
	return o < NCQ ? &CQ[o].cq->fid : &CN[o - NCQ].c->fid;
}

/* "cq1", "cntr0": for messages. */
static const char *obj_name(int o)
{
	static char buf[4][16];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), o < NCQ ? "cq%d" : "cntr%d", o < NCQ ? o : o - NCQ);
	return b;
}

static int *obj_ps(int o)
{
	return o < NCQ ? &CQ[o].ps : &CN[o - NCQ].ps;
}

static enum lfp_wait_obj obj_wait(int o)
{
	return o < NCQ ? CQ[o].attr.wait_obj : CN[o - NCQ].attr.wait_obj;
}

static int obj_ready(int o)
{
	if (o < NCQ)
		return CQ[o].n || CQ[o].en;
	return CN[o - NCQ].events != CN[o - NCQ].seen;
}

/* ------------------------------------------------------------ open/close */

static void cq_open(int i)
{
	struct mcq *m = &CQ[i];
	size_t sz = m->attr.size ? m->attr.size : LFP_CQ_DEFAULT_SIZE;

	for (m->cap = 2; m->cap < sz; m->cap <<= 1)
		;
	m->ecap = m->cap < LFP_CQ_ERR_CAPACITY ? m->cap : LFP_CQ_ERR_CAPACITY;
	m->esz = m->attr.format == LFP_CQ_FORMAT_CONTEXT ? sizeof(struct lfp_cq_entry) :
	         m->attr.format == LFP_CQ_FORMAT_MSG ? sizeof(struct lfp_cq_msg_entry) :
	         m->attr.format == LFP_CQ_FORMAT_DATA ? sizeof(struct lfp_cq_data_entry) :
	         sizeof(struct lfp_cq_tagged_entry);
	m->first = m->n = m->efirst = m->en = 0;
	m->ps = -1;
	m->attr.wait_cond = LFP_CQ_COND_THRESHOLD; /* sread's thresholds */
	CHECK_EQ(lfp_cq_open(&m->attr, &m->cq, obj_ctx(i)), 0,
	         "lfp_cq_open(size %zu, format %d, wait %d)", m->attr.size,
	         (int)m->attr.format, (int)m->attr.wait_obj);
}

static void cntr_open(int j)
{
	struct mcntr *m = &CN[j];

	m->value = m->err = m->events = m->seen = m->tw_seen = 0;
	m->ps = -1;
	CHECK_EQ(lfp_cntr_open(&m->attr, &m->c, obj_ctx(NCQ + j)), 0,
	         "lfp_cntr_open(wait %d)", (int)m->attr.wait_obj);
}

static void pollfds_open(void)
{
	struct lfp_wait_pollfd w = { 0, 0, NULL };

	CHECK_EQ(lfp_pollfds_init(&PFD), 0, "lfp_pollfds_init");
	CHECK_EQ(lfp_pollfds_get(&PFD, &w), 0, "lfp_pollfds_get(empty set, room 0)");
	CHECK_EQ(w.nfds, 0, "nfds of an empty set");
	pf_ci = w.change_index;
	pfn = 0;
}

/* ------------------------------------------------------------ CQ ops */

static void op_cq_write(struct fin *f, uint8_t op)
{
	struct mcq *m = &CQ[fin_u8(f) % NCQ];
	size_t count = fin_u8(f) % 9, i, k;
	unsigned char *src = fuzz_buf(count * m->esz, 1);
	ssize_t want, got;
	int nul = (op & 0x80) && (count & 1);

	for (i = 0; i < count; i++)
		fuzz_pattern(src + i * m->esz, m->esz, seed + (uint32_t)i);
	if (count == 0 || nul)
		want = -EINVAL;
	else if (m->n == m->cap)
		want = -EAGAIN;
	else
		want = (ssize_t)(count < m->cap - m->n ? count : m->cap - m->n);
	got = lfp_cq_write(m->cq, nul ? NULL : src, count);
	TRACE("cq%d write %zu -> %zd (model %zd, %zu/%zu queued)", (int)(m - CQ),
	      count, got, want, m->n, m->cap);
	CHECK_EQ(got, want, "lfp_cq_write(count %zu), %zu of %zu queued", count, m->n, m->cap);
	for (k = 0; got > 0 && k < (size_t)got; k++) {
		memcpy(cq_ent[m - CQ][(m->first + m->n) % m->cap], src + k * m->esz, m->esz);
		m->n++;
	}
	seed += (uint32_t)count;
	free(src);
}

static void op_cq_writeerr(struct fin *f, uint8_t op)
{
	struct mcq *m = &CQ[fin_u8(f) % NCQ];
	uint8_t s = fin_u8(f);
	size_t dlen = (s & 3) == 0 ? 0 : (s & 3) == 1 ? LFP_CQ_ERR_DATA_MAX :
	              (s & 3) == 2 ? LFP_CQ_ERR_DATA_MAX + 1 + (s >> 7) : (size_t)(s >> 2);
	struct lfp_cq_err_entry e;
	unsigned char *d = fuzz_buf(dlen, 0);
	ssize_t want, got;

	memset(&e, 0, sizeof(e));
	e.op_context = (void *)(uintptr_t)(0xAB00 + seed);
	e.flags = seed;
	e.len = seed * 3u;
	e.buf = (void *)(uintptr_t)(0xCD00 + seed);
	e.data = (uint64_t)seed << 20;
	e.tag = ~(uint64_t)seed;
	e.olen = seed * 5u;
	e.err = EIO + (int)(seed % 7);
	if ((op & 0x80) && (s & 4))
		e.err = s & 16 ? 0 : -e.err; /* err: a positive errno (cq.h) */
	e.prov_errno = -(int)(seed % 1000);
	e.err_data = d;
	e.err_data_size = dlen;
	if (d)
		fuzz_pattern(d, dlen, seed ^ 0xA5A5u);
	if ((op & 0x80) && (s & 8) && dlen)
		e.err_data = NULL;
	if (e.err <= 0 || (!e.err_data && dlen))
		want = -EINVAL;
	else if (dlen > LFP_CQ_ERR_DATA_MAX)
		want = -EMSGSIZE;
	else if (m->en == m->ecap)
		want = -EAGAIN;
	else
		want = (ssize_t)sizeof(struct lfp_cq_err_entry);
	got = lfp_cq_writeerr(m->cq, &e);
	TRACE("cq%d writeerr dlen %zu -> %zd (model %zd, %zu/%zu errors)", (int)(m - CQ),
	      dlen, got, want, m->en, m->ecap);
	CHECK_EQ(got, want, "lfp_cq_writeerr(err %d, err_data_size %zu), %zu of %zu errors",
	         e.err, dlen, m->en, m->ecap);
	if (got >= 0) {
		struct mcqerr *me = &cq_err[m - CQ][(m->efirst + m->en++) % m->ecap];

		me->e = e;
		me->e.err_data = NULL;
		if (dlen)
			memcpy(me->d, d, dlen);
	}
	seed++;
	free(d);
}

/* Expected result of lfp_cq_read(count), after the argument checks. */
static ssize_t m_cq_read(struct mcq *m, size_t count)
{
	if (m->en)
		return -LFP_EAVAIL;
	if (count == 0)
		return 0;
	if (!m->n)
		return -EAGAIN;
	return (ssize_t)(count < m->n ? count : m->n);
}

static void check_cq_entries(struct mcq *m, const unsigned char *buf, size_t k,
                             size_t room, const char *what)
{
	size_t i;

	for (i = 0; i < k; i++) {
		CHECK(memcmp(buf + i * m->esz, cq_ent[m - CQ][(m->first + i) % m->cap],
		             m->esz) == 0, "%s: completion %zu differs", what, i);
	}
	CHECK(fuzz_canary_ok(buf, k * m->esz, room), "%s wrote past %zu completions",
	      what, k);
	m->first = (m->first + k) % m->cap;
	m->n -= k;
}

static void op_cq_read(struct fin *f, uint8_t op, int sread)
{
	struct mcq *m = &CQ[fin_u8(f) % NCQ];
	uint8_t s = fin_u8(f);
	size_t count = s % 9, thr = (s >> 4) % 6, cnt = thr;
	unsigned char *buf = fuzz_buf(count * m->esz, count || !(op & 0x80));
	ssize_t want, got;

	if (!sread) {
		/* count 0 is -EINVAL, as for write and sread (lfp_cq(3)). */
		want = !buf || count == 0 ? -EINVAL : m_cq_read(m, count);
		got = lfp_cq_read(m->cq, buf, count);
	} else {
		/* lfp_cq_sread(timeout 0): cond NULL is a threshold of 1; the
		 * threshold is at least 1 and capped at count and capacity. */
		cnt = s & 0x80 ? 1 : thr;
		if (cnt == 0)
			cnt = 1;
		if (cnt > count)
			cnt = count;
		if (cnt > m->cap)
			cnt = m->cap; /* more could never be queued (lfp_cq(3)) */
		if (!buf || count == 0)
			want = -EINVAL;
		else if (m->attr.wait_obj == LFP_WAIT_NONE)
			want = -ENOSYS;
		else if (m->en)
			want = -LFP_EAVAIL;
		else if (m->n >= cnt)
			want = m_cq_read(m, count);
		else
			want = -EAGAIN;
		got = lfp_cq_sread(m->cq, buf, count, s & 0x80 ? NULL : &thr, 0);
	}
	TRACE("cq%d %s %zu%s -> %zd (model %zd, %zu queued, %zu errors)", (int)(m - CQ),
	      sread ? "sread" : "read", count, buf ? "" : " NULL", got, want, m->n, m->en);
	CHECK_EQ(got, want, "lfp_cq_%s(count %zu%s), %zu queued, %zu errors",
	         sread ? "sread" : "read", count, sread ? ", timeout 0" : "", m->n, m->en);
	if (got > 0)
		check_cq_entries(m, buf, (size_t)got, count * m->esz, "lfp_cq_read");
	free(buf);
}

static void op_cq_readerr(struct fin *f, uint8_t op)
{
	struct mcq *m = &CQ[fin_u8(f) % NCQ];
	uint8_t s = fin_u8(f);
	uint64_t flags = s & 1 ? LFP_PEEK : 0;
	struct mcqerr *h = m->en ? &cq_err[m - CQ][m->efirst] : NULL;
	struct lfp_cq_err_entry e;
	size_t usize = s & 2 ? 1 + (s >> 2) % (LFP_CQ_ERR_DATA_MAX + 2) : 0, n;
	unsigned char *user = fuzz_buf(usize, 0);
	ssize_t want, got;

	memset(&e, 0x5A, sizeof(e));
	e.err_data = user;
	e.err_data_size = usize;
	if (op & 0x80)
		flags |= (uint64_t)1 << (s >> 3); /* bits 0..31: invalid but PEEK */
	/* A user buffer too small for the data gets what fits, and
	 * err_data_size says how much (lfp_cq(3), as fi_cq(3)). */
	if (flags & ~LFP_PEEK)
		want = -EINVAL;
	else
		want = h ? 1 : -EAGAIN;
	got = lfp_cq_readerr(m->cq, &e, flags);
	TRACE("cq%d readerr%s user %zu -> %zd (model %zd, %zu errors)", (int)(m - CQ),
	      flags & LFP_PEEK ? " PEEK" : "", usize, got, want, m->en);
	CHECK_EQ(got, want, "lfp_cq_readerr(flags %#llx, err_data_size %zu), %zu errors",
	         (unsigned long long)flags, usize, m->en);
	if (got < 0 && user)
		CHECK(fuzz_canary_ok(user, 0, usize), "failed lfp_cq_readerr wrote into the buffer");
	if (got >= 0) {
		n = h->e.err_data_size;
		if (user && n > usize)
			n = usize; /* cut to the caller's buffer */
		CHECK(e.op_context == h->e.op_context && e.flags == h->e.flags &&
		      e.len == h->e.len && e.buf == h->e.buf && e.data == h->e.data &&
		      e.tag == h->e.tag && e.olen == h->e.olen && e.err == h->e.err &&
		      e.prov_errno == h->e.prov_errno,
		      "lfp_cq_readerr: entry fields differ from the written error");
		CHECK_EQ(e.err_data_size, n, "lfp_cq_readerr: err_data_size (stored %zu, room %zu)",
		         h->e.err_data_size, usize);
		if (user) {
			CHECK(e.err_data == user, "lfp_cq_readerr: err_data is not the user buffer");
			CHECK(fuzz_canary_ok(user, n, usize), "lfp_cq_readerr wrote past err_data_size");
		}
		CHECK(n == 0 || (e.err_data && memcmp(e.err_data, h->d, n) == 0),
		      "lfp_cq_readerr: err_data bytes");
		if (!(flags & LFP_PEEK)) {
			m->efirst = (m->efirst + 1) % m->ecap;
			m->en--;
		}
	}
	free(user);
}

/* ------------------------------------------------------------ counter ops */

static uint64_t pick_value(struct fin *f)
{
	uint8_t s = fin_u8(f);

	switch (s & 3) {
	case 0: return s >> 2;
	case 1: return UINT64_MAX - (s >> 2);
	default: return fin_u16(f);
	}
}

static void op_cntr_change(struct fin *f, uint8_t op)
{
	struct mcntr *m = &CN[fin_u8(f) % NCNTR];
	uint8_t kind = fin_u8(f) % 6;
	uint64_t v = pick_value(f);
	int got;

	switch (kind) {
	case 0: got = lfp_cntr_inc(m->c, v); m->value += v; m->events++; break;
	case 1: got = lfp_cntr_incerr(m->c, v); m->err += v; m->events++; break;
	case 2: got = lfp_cntr_add(m->c, v); m->value += v; m->seen = m->events; break;
	case 3: got = lfp_cntr_adderr(m->c, v); m->err += v; break;
	case 4: got = lfp_cntr_set(m->c, v); m->value = v; m->seen = m->events; break;
	default: got = lfp_cntr_seterr(m->c, v); m->err = v; break;
	}
	(void)op;
	TRACE("cntr%d %s %llu -> %d", (int)(m - CN),
	      (const char *[]){ "inc", "incerr", "add", "adderr", "set", "seterr" }[kind],
	      (unsigned long long)v, got);
	CHECK_EQ(got, 0, "lfp_cntr_%s", (const char *[]){ "inc", "incerr", "add", "adderr",
	                                                   "set", "seterr" }[kind]);
	CHECK(lfp_cntr_read(m->c) == m->value, "lfp_cntr_read: %llu, model %llu",
	      (unsigned long long)lfp_cntr_read(m->c), (unsigned long long)m->value);
	CHECK(lfp_cntr_readerr(m->c) == m->err, "lfp_cntr_readerr: %llu, model %llu",
	      (unsigned long long)lfp_cntr_readerr(m->c), (unsigned long long)m->err);
}

static void op_cntr_wait(struct fin *f)
{
	struct mcntr *m = &CN[fin_u8(f) % NCNTR];
	uint8_t s = fin_u8(f);
	uint64_t thr = s & 1 ? m->value + (s >> 1) % 3 - 1 : pick_value(f);
	int want, got;

	if (m->attr.wait_obj == LFP_WAIT_NONE)
		want = -ENOSYS;
	else
		want = m->value >= thr ? 0 : -ETIMEDOUT;
	got = lfp_cntr_wait(m->c, thr, 0);
	TRACE("cntr%d wait(%llu, 0) -> %d (model %d)", (int)(m - CN),
	      (unsigned long long)thr, got, want);
	CHECK_EQ(got, want, "lfp_cntr_wait(threshold %llu, timeout 0), value %llu",
	         (unsigned long long)thr, (unsigned long long)m->value);
	CHECK_EQ(lfp_cntr_read(NULL), 0, "lfp_cntr_read(NULL)");
	CHECK_EQ(lfp_cntr_inc(NULL, 1), -EINVAL, "lfp_cntr_inc(NULL)");
	CHECK_EQ(lfp_cntr_set(NULL, 1), -EINVAL, "lfp_cntr_set(NULL)");
}

/* ------------------------------------------------------------ poll sets */

static void op_poll_add(struct fin *f, uint8_t op)
{
	int k = fin_u8(f) % NPS, o = fin_u8(f) % NOBJ, *ps = obj_ps(o);
	uint64_t flags = (op & 0x80) && (fin_u8(f) & 1) ? LFP_PEEK : 0;
	int want, got;

	if (flags)
		want = -EINVAL;
	else if (*ps == k)
		want = -EEXIST;
	else if (*ps >= 0)
		want = -EBUSY;
	else
		want = 0;
	got = lfp_poll_add(PS[k], obj_fid(o), flags);
	TRACE("poll_add(ps%d, %s) -> %d (model %d, member of %d)", k, obj_name(o), got,
	      want, *ps);
	CHECK_EQ(got, want, "lfp_poll_add(set %d, %s%s), member of set %d", k,
	         obj_name(o), flags ? ", flags" : "", *ps);
	if (got == 0)
		*ps = k;
}

static void op_poll_del(struct fin *f, uint8_t op)
{
	int k = fin_u8(f) % NPS, o = fin_u8(f) % NOBJ, *ps = obj_ps(o);
	uint64_t flags = (op & 0x80) && (fin_u8(f) & 1) ? LFP_WRITE : 0;
	int want, got;

	want = flags ? -EINVAL : *ps == k ? 0 : -ENOENT;
	got = lfp_poll_del(PS[k], obj_fid(o), flags);
	TRACE("poll_del(ps%d, %s) -> %d (model %d, member of %d)", k, obj_name(o), got,
	      want, *ps);
	CHECK_EQ(got, want, "lfp_poll_del(set %d, %s%s), member of set %d", k,
	         obj_name(o), flags ? ", flags" : "", *ps);
	if (got == 0) {
		*ps = -1;
		skipped[k][o] = 0;
	}
}

static void op_poll(struct fin *f, uint8_t op)
{
	int k = fin_u8(f) % NPS, count = (int)(fin_u8(f) % 10) - 1;
	void *ctx[NOBJ + 2];
	int nulls = count == 0 && (op & 0x80);
	int ready = 0, want, got, i, j, o, seen_obj[NOBJ];
	const void *canary = (const void *)(uintptr_t)0xCA11AB1E;

	int waiting = 0;

	for (i = 0; i < NOBJ + 2; i++)
		ctx[i] = (void *)canary;
	for (o = 0; o < NOBJ; o++) {
		seen_obj[o] = 0;
		if (*obj_ps(o) == k && obj_ready(o)) {
			ready++;
			waiting += skipped[k][o];
		}
	}
	if (count < 0)
		want = -EINVAL;
	else
		want = count < ready ? count : ready;
	got = lfp_poll(PS[k], nulls ? NULL : ctx, count);
	TRACE("lfp_poll(ps%d, count %d) -> %d (model %d of %d ready)", k, count, got,
	      want, ready);
	CHECK_EQ(got, want, "lfp_poll(set %d, count %d): %d member(s) ready", k, count,
	         ready);
	for (i = 0; i < got; i++) {
		for (o = 0; o < NOBJ && ctx[i] != obj_ctx(o); o++)
			;
		CHECK(o < NOBJ, "lfp_poll returned an unknown context %p", ctx[i]);
		TRACE("    %s", obj_name(o));
		CHECK(!seen_obj[o], "lfp_poll returned %s twice in one call", obj_name(o));
		seen_obj[o] = 1;
		CHECK(*obj_ps(o) == k, "lfp_poll returned %s, which is not a member (set %d)",
		      obj_name(o), *obj_ps(o));
		CHECK(obj_ready(o), "lfp_poll returned %s, which has no work", obj_name(o));
	}
	for (j = got > 0 ? got : 0; j < NOBJ + 2; j++)
		CHECK(ctx[j] == canary, "lfp_poll wrote past its %d contexts", got);
	/* Members that did not fit last time and still have work come first
	 * (lfp_poll(3): they are reported by a later call; with the others
	 * first, a member can wait forever behind members that keep
	 * becoming ready).  crash-sets-poll-passes-over-waiting is the
	 * regression seed of a fixed bug here: lfp_poll looked at newly
	 * pushed members before the ones still waiting. */
	for (o = 0; got >= 0 && o < NOBJ; o++) {
		if (*obj_ps(o) != k || !obj_ready(o) || !skipped[k][o])
			continue;
		CHECK(seen_obj[o] || (got == count && waiting > count),
		      "lfp_poll(set %d, count %d): %s did not fit last time and "
		      "has work, but was passed over again (%d waiting, %d ready)",
		      k, count, obj_name(o), waiting, ready);
	}
	for (o = 0; got >= 0 && waiting >= count && o < NOBJ; o++)
		CHECK(!seen_obj[o] || skipped[k][o],
		      "lfp_poll(set %d, count %d) returned %s before the %d member(s) "
		      "that did not fit last time", k, count, obj_name(o), waiting);
	for (o = 0; got >= 0 && o < NOBJ; o++)
		skipped[k][o] = *obj_ps(o) == k && obj_ready(o) && !seen_obj[o];
	/* A counter's change is consumed when its context is returned. */
	for (o = NCQ; o < NOBJ; o++)
		if (seen_obj[o])
			CN[o - NCQ].seen = CN[o - NCQ].events;
}

static void op_trywait(struct fin *f)
{
	struct lfp_fid *fids[3];
	int objs[3], n = 1 + fin_u8(f) % 3, i, want = 0, got;

	for (i = 0; i < n; i++) {
		objs[i] = fin_u8(f) % NOBJ;
		fids[i] = obj_fid(objs[i]);
	}
	got = lfp_trywait(fids, (size_t)n);
	TRACE("trywait(%d objs) -> %d", n, got);
	/* lfp_trywait: a NONE object anywhere is -EINVAL before any object
	 * is touched (common.h); otherwise the objects in order, the first
	 * with work gives -EAGAIN (a counter's -EAGAIN marks its events
	 * seen); a counter in a poll set also has work while that set has
	 * not reported its events (I3: lfp__fid_poll_owed). */
	for (i = 0; i < n; i++)
		if (obj_wait(objs[i]) == LFP_WAIT_NONE)
			want = -EINVAL;
	for (i = 0; i < n && want == 0; i++) {
		int o = objs[i];

		if (o < NCQ) {
			want = CQ[o].n || CQ[o].en ? -EAGAIN : 0;
		} else if (CN[o - NCQ].events != CN[o - NCQ].tw_seen) {
			want = -EAGAIN;
			CN[o - NCQ].tw_seen = CN[o - NCQ].events;
		} else if (*obj_ps(o) >= 0 && obj_ready(o)) {
			want = -EAGAIN;
		}
	}
	CHECK_EQ(got, want, "lfp_trywait over %d object(s), first %s", n,
	         obj_name(objs[0]));
}

/* Close a member (-EBUSY) or close and reopen a free object. */
static void op_close_obj(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int o = s % NOBJ, busy = *obj_ps(o) >= 0, got;

	if (o < NCQ)
		got = s & 0x80 ? lfp_close(&CQ[o].cq->fid) : lfp_cq_close(CQ[o].cq);
	else
		got = s & 0x80 ? lfp_close(&CN[o - NCQ].c->fid) : lfp_cntr_close(CN[o - NCQ].c);
	TRACE("close %s -> %d (member %d)", obj_name(o), got, busy);
	CHECK_EQ(got, busy ? -EBUSY : 0, "close of %s (member of set %d)", obj_name(o),
	         *obj_ps(o));
	if (got == 0) {
		if (o < NCQ)
			cq_open(o);
		else
			cntr_open(o - NCQ);
	}
}

static void op_poll_misc(struct fin *f)
{
	uint8_t s = fin_u8(f);
	int k = (s >> 4) % NPS, members = 0, o, got;
	struct lfp_poll_attr pa = { 1 };
	struct lfp_poll *tmp;

	switch (s % 6) {
	case 0: /* close the set: -EBUSY with members, else close and reopen */
		for (o = 0; o < NOBJ; o++)
			members += *obj_ps(o) == k;
		got = lfp_poll_close(PS[k]);
		TRACE("poll_close(ps%d) -> %d (%d members)", k, got, members);
		CHECK_EQ(got, members ? -EBUSY : 0, "lfp_poll_close with %d members", members);
		if (got == 0) {
			CHECK_EQ(lfp_poll_open(s & 0x40 ? NULL : &(struct lfp_poll_attr){ 0 }, &PS[k]),
			         0, "lfp_poll_open");
			memset(skipped[k], 0, sizeof(skipped[k]));
		}
		break;
	case 1:
		CHECK_EQ(lfp_poll_add(PS[k], &EQ->fid, 0), -EINVAL, "lfp_poll_add(an EQ)");
		CHECK_EQ(lfp_poll_del(PS[k], &EQ->fid, 0), -EINVAL, "lfp_poll_del(an EQ)");
		break;
	case 2:
		CHECK_EQ(lfp_poll_add(PS[k], &PS[!k]->fid, 0), -EINVAL, "lfp_poll_add(a poll set)");
		CHECK_EQ(lfp_poll_add(NULL, &CQ[0].cq->fid, 0), -EINVAL, "lfp_poll_add(NULL set)");
		CHECK_EQ(lfp_poll_add(PS[k], NULL, 0), -EINVAL, "lfp_poll_add(NULL fid)");
		break;
	case 3:
		CHECK_EQ(lfp_poll_open(&pa, &tmp), -EINVAL, "lfp_poll_open(flags)");
		CHECK_EQ(lfp_poll_open(NULL, NULL), -EINVAL, "lfp_poll_open(NULL)");
		CHECK_EQ(lfp_poll(NULL, NULL, 0), -EINVAL, "lfp_poll(NULL set)");
		CHECK_EQ(lfp_poll(PS[k], NULL, 1), -EINVAL, "lfp_poll(NULL contexts, count 1)");
		break;
	default: /* every counter and CQ value, checked */
		for (o = 0; o < NCNTR; o++) {
			CHECK(lfp_cntr_read(CN[o].c) == CN[o].value, "lfp_cntr_read");
			CHECK(lfp_cntr_readerr(CN[o].c) == CN[o].err, "lfp_cntr_readerr");
		}
		for (o = 0; o < NCQ; o++) {
			CHECK_EQ(lfp_cq_signal(CQ[o].cq), 0, "lfp_cq_signal");
			CHECK_EQ(lfp_cq_read(CQ[o].cq, NULL, 0), -EINVAL,
			         "lfp_cq_read(count 0)");
		}
		break;
	}
}

/* ------------------------------------------------------------ pollfd set */

static long pf_find(int fd)
{
	size_t i;

	for (i = 0; i < pfn; i++)
		if (pf[i].fd == fd)
			return (long)i;
	return -1;
}

static int pick_fd(struct fin *f)
{
	return (int)(fin_u8(f) % FD_RANGE) - 2;
}

static short pick_events(struct fin *f)
{
	static const short ev[] = { POLLIN, POLLOUT, POLLIN | POLLOUT, 0, -1,
	                            0x7fff, POLLPRI, POLLIN | POLLPRI };
	uint8_t s = fin_u8(f);

	if (s & 0x80)
		return (short)fin_u16(f);
	return ev[s % 8];
}

static void op_pfd_add(struct fin *f)
{
	int fd = pick_fd(f), want, got;
	short ev = pick_events(f);

	want = fd < 0 ? -EINVAL : pf_find(fd) >= 0 ? -EEXIST : 0;
	got = lfp_pollfds_add(&PFD, fd, ev, (void *)(uintptr_t)(fd + 100));
	TRACE("pollfds_add(%d, %#x) -> %d (model %d)", fd, (unsigned short)ev, got, want);
	CHECK_EQ(got, want, "lfp_pollfds_add(fd %d)", fd);
	if (got == 0) {
		pf[pfn].fd = fd;
		pf[pfn].events = ev;
		pfn++;
		pf_ci++;
	}
}

static void op_pfd_mod(struct fin *f)
{
	int fd = pick_fd(f), want, got;
	long i = pf_find(fd);
	short ev;

	/* Half the time the same events (no change). */
	if (i >= 0 && (fin_u8(f) & 1))
		ev = pf[i].events;
	else
		ev = pick_events(f);
	want = i < 0 ? -ENOENT : 0;
	got = lfp_pollfds_mod(&PFD, fd, ev);
	TRACE("pollfds_mod(%d, %#x) -> %d (model %d)", fd, (unsigned short)ev, got, want);
	CHECK_EQ(got, want, "lfp_pollfds_mod(fd %d)", fd);
	if (got == 0 && pf[i].events != ev) {
		pf[i].events = ev;
		pf_ci++;
	}
}

static void op_pfd_del(struct fin *f)
{
	int fd = pick_fd(f), want, got;
	long i = pf_find(fd);

	want = i < 0 ? -ENOENT : 0;
	got = lfp_pollfds_del(&PFD, fd);
	TRACE("pollfds_del(%d) -> %d (model %d)", fd, got, want);
	CHECK_EQ(got, want, "lfp_pollfds_del(fd %d)", fd);
	if (got == 0) {
		pf[i] = pf[--pfn];
		pf_ci++;
	}
}

static void op_pfd_get(struct fin *f, uint8_t op)
{
	uint8_t s = fin_u8(f);
	size_t room, i, j;
	struct lfp_wait_pollfd w;
	struct pollfd *arr;
	int want, got, found[MAX_PFD];

	switch (s & 7) {
	case 0: room = 0; break;
	case 1: case 2: room = pfn; break;
	case 3: room = pfn ? pfn - 1 : 0; break;
	case 4: room = pfn + 2; break;
	default: room = (s >> 3) % (MAX_PFD + 2); break;
	}
	arr = (struct pollfd *)(void *)fuzz_buf(room * sizeof(*arr), 0);
	w.change_index = 0xDEAD;
	w.nfds = room;
	w.fd = arr;
	if ((op & 0x80) && room) {
		w.fd = NULL;
		want = -EINVAL;
	} else {
		want = pfn <= room ? 0 : -LFP_ETOOSMALL;
	}
	got = lfp_pollfds_get(&PFD, &w);
	TRACE("pollfds_get(room %zu) -> %d (model %d), nfds %zu ci %llu (model %zu, %llu)",
	      room, got, want, w.nfds, (unsigned long long)w.change_index, pfn,
	      (unsigned long long)pf_ci);
	CHECK_EQ(got, want, "lfp_pollfds_get(room %zu), %zu in the set", room, pfn);
	if (got != -EINVAL) {
		CHECK_EQ(w.nfds, pfn, "lfp_pollfds_get: nfds (room %zu)", room);
		CHECK(w.change_index == pf_ci, "lfp_pollfds_get: change_index %llu, "
		      "the model counts %llu effective changes since init",
		      (unsigned long long)w.change_index, (unsigned long long)pf_ci);
	}
	if (got == 0) {
		for (j = 0; j < pfn; j++)
			found[j] = 0;
		for (i = 0; i < pfn; i++) {
			for (j = 0; j < pfn && arr[i].fd != pf[j].fd; j++)
				;
			CHECK(j < pfn, "lfp_pollfds_get: fd %d is not in the set", arr[i].fd);
			CHECK(!found[j], "lfp_pollfds_get: fd %d twice", arr[i].fd);
			found[j] = 1;
			CHECK(arr[i].events == pf[j].events,
			      "lfp_pollfds_get: fd %d events %#x, model %#x", arr[i].fd,
			      (unsigned short)arr[i].events, (unsigned short)pf[j].events);
			CHECK(arr[i].revents == 0, "lfp_pollfds_get: revents %#x",
			      (unsigned short)arr[i].revents);
		}
		CHECK(arr == NULL || fuzz_canary_ok((unsigned char *)arr, pfn * sizeof(*arr),
		                                    room * sizeof(*arr)),
		      "lfp_pollfds_get wrote past nfds");
	}
	free(arr);
}

static void op_pfd_misc(struct fin *f)
{
	struct lfp_wait_pollfd w = { 0, 0, NULL };

	switch (fin_u8(f) % 4) {
	case 0: /* start over */
		lfp_pollfds_fini(&PFD);
		pollfds_open();
		break;
	case 1:
		CHECK_EQ(lfp_pollfds_add(NULL, 1, POLLIN, NULL), -EINVAL, "pollfds_add(NULL)");
		CHECK_EQ(lfp_pollfds_get(NULL, &w), -EINVAL, "pollfds_get(NULL set)");
		CHECK_EQ(lfp_pollfds_get(&PFD, NULL), -EINVAL, "pollfds_get(NULL out)");
		break;
	case 2:
		CHECK_EQ(lfp_pollfds_mod(NULL, 1, POLLIN), -EINVAL, "pollfds_mod(NULL)");
		CHECK_EQ(lfp_pollfds_del(NULL, 1), -EINVAL, "pollfds_del(NULL)");
		break;
	default: /* the cheap change check */
		{
			int got = lfp_pollfds_get(&PFD, &w);

			CHECK_EQ(got, pfn ? -LFP_ETOOSMALL : 0, "pollfds_get(nfds 0)");
			CHECK_EQ(w.nfds, pfn, "pollfds_get(nfds 0): nfds");
			CHECK(w.change_index == pf_ci, "pollfds_get(nfds 0): change_index");
		}
		break;
	}
}

/* ------------------------------------------------------------ the run */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { 1, 2, 3, 4, 5, 8, 16, 0 };
	static const enum lfp_wait_obj waits[] = {
		LFP_WAIT_NONE, LFP_WAIT_NONE, LFP_WAIT_YIELD, LFP_WAIT_FD,
	};
	struct fin in = { data, size };
	struct lfp_eq_attr ea;
	int i, k, o, ops;

	for (i = 0; i < NCQ; i++) {
		uint8_t b = fin_u8(&in);

		memset(&CQ[i].attr, 0, sizeof(CQ[i].attr));
		CQ[i].attr.format = (enum lfp_cq_format)(b & 3);
		CQ[i].attr.size = sizes[(b >> 2) & 7];
		CQ[i].attr.wait_obj = waits[(b >> 5) & 3];
		CQ[i].attr.flags = b & 0x80 ? LFP_AFFINITY : 0;
		cq_open(i);
	}
	for (i = 0; i < NCNTR; i++) {
		memset(&CN[i].attr, 0, sizeof(CN[i].attr));
		CN[i].attr.wait_obj = waits[fin_u8(&in) & 3];
		cntr_open(i);
	}
	for (k = 0; k < NPS; k++)
		CHECK_EQ(lfp_poll_open(NULL, &PS[k]), 0, "lfp_poll_open");
	memset(skipped, 0, sizeof(skipped));
	memset(&ea, 0, sizeof(ea));
	ea.size = 2;
	CHECK_EQ(lfp_eq_open(&ea, &EQ, NULL), 0, "lfp_eq_open");
	pollfds_open();
	seed = 1;

	for (ops = 0; ops < FUZZ_MAX_OPS && fin_left(&in); ops++) {
		uint8_t op = fin_u8(&in);

		switch ((op & 0x7f) % 22) {
		case 0: case 1: op_cq_write(&in, op); break;
		case 2: op_cq_writeerr(&in, op); break;
		case 3: op_cq_read(&in, op, 0); break;
		case 4: op_cq_read(&in, op, 1); break;
		case 5: op_cq_readerr(&in, op); break;
		case 6: case 7: op_cntr_change(&in, op); break;
		case 8: op_cntr_wait(&in); break;
		case 9: op_poll_add(&in, op); break;
		case 10: op_poll_del(&in, op); break;
		case 11: case 12: op_poll(&in, op); break;
		case 13: op_trywait(&in); break;
		case 14: op_close_obj(&in); break;
		case 15: op_poll_misc(&in); break;
		case 16: op_pfd_add(&in); break;
		case 17: op_pfd_mod(&in); break;
		case 18: op_pfd_del(&in); break;
		case 19: op_pfd_get(&in, op); break;
		default: op_pfd_misc(&in); break;
		}
	}

	/* Tear down: sets refuse to close with members, members leave. */
	for (k = 0; k < NPS; k++) {
		int members = 0;

		for (o = 0; o < NOBJ; o++)
			members += *obj_ps(o) == k;
		if (members)
			CHECK_EQ(lfp_poll_close(PS[k]), -EBUSY, "lfp_poll_close with members");
		for (o = 0; o < NOBJ; o++)
			if (*obj_ps(o) == k)
				CHECK_EQ(lfp_poll_del(PS[k], obj_fid(o), 0), 0, "lfp_poll_del");
		CHECK_EQ(lfp_poll_close(PS[k]), 0, "lfp_poll_close");
	}
	for (i = 0; i < NCQ; i++)
		CHECK_EQ(lfp_cq_close(CQ[i].cq), 0, "lfp_cq_close");
	for (i = 0; i < NCNTR; i++)
		CHECK_EQ(lfp_cntr_close(CN[i].c), 0, "lfp_cntr_close");
	CHECK_EQ(lfp_eq_close(EQ), 0, "lfp_eq_close");
	lfp_pollfds_fini(&PFD);
	return 0;
}
