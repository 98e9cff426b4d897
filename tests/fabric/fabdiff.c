/*
 * fabdiff: the lfpoll provider beside libfabric's own providers.
 *
 * One program, written against libfabric's API only (and the lfpoll
 * provider's producer extension, <lfpoll/fi_lfpoll.h>), opens the same
 * objects on two providers in one process, "lfpoll" and a baseline ("udp"
 * or "tcp", both built on libfabric's utility code), runs one seeded
 * random sequence of operations on both in lockstep, and compares return
 * codes, event order and data after every operation.
 *
 * The objects: an EQ with an FD, an EQ in a wait set and an EQ with no
 * wait object; two CQs (FD, in the wait set); with tcp two counters (FD,
 * in the wait set; udp has no counters); the wait set; a poll set of the
 * CQs and counters.  The operations: EQ write, error write, read, peek,
 * readerr (with and without an err_data buffer), sread; CQ completion
 * writes (udp: a datagram the CQ's endpoint sends to itself; lfpoll: the
 * producer extension), read, readfrom, the count-0 probe, readerr, sread
 * (with and without a threshold), signal; counter add, set, adderr,
 * seterr, read, readerr, wait; fi_trywait on sets of objects, fi_wait,
 * fi_poll, fi_poll_add and fi_poll_del (of the CQs, the counters, and an
 * EQ, which no poll set takes).  Blocking calls get timeouts of 0 to
 * 2 ms.  CQ error completions are not exercised: neither baseline can
 * produce one through the API.
 *
 * A difference is either one of the divergences named in the table below,
 * each recognised by its own narrow condition on the operation, the state
 * the baseline holds (the shadow) and both results, or it is unlisted and
 * the program fails.  After a difference both sides are closed and opened
 * afresh, and the sequence goes on.  With --doc FILE, every name in the
 * table must appear in FILE as a table row "| `name` |" (the porting
 * guide's list of divergences), or the program fails before it starts.
 *
 *   fabdiff [--doc FILE] [--pair udp|tcp|all] [--quick | --seconds N |
 *           --seed S [--count N] [--steps N]] [--verbose] [--list]
 *
 * --quick runs a fixed list of seeds, which between the two pairs show
 * every divergence in the table: one that is no longer seen fails too.
 * --seed S --count N runs the seeds S to S + N - 1.
 *
 * Exit: 0 clean (every difference listed), 1 an unlisted difference or a
 * failed check, 2 a setup failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <lfpoll/fi_lfpoll.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How libfabric's utility EQs take an error through fi_eq_write (their
 * UTIL_FLAG_ERROR): the buffer is a struct fi_eq_err_entry, and the EQ
 * owns its err_data from then on.  The lfpoll provider's way is the
 * producer extension's eq_write_err. */
#define UTIL_EQ_ERROR_FLAG (1ULL << 60)

#define EQ_SIZE      8     /* lfpoll's capacity too (a power of two) */
#define EQ_ENTRY_MAX 256   /* the lfpoll provider's default entry size */
#define OVERSIZE     300   /* a payload above it */
#define PAYLOAD_MAX  48
#define ERRDATA_MAX  24
#define CQ_SIZE      32
#define CQ_KEEP      16    /* completions queued at most */
#define SHADOW_MAX   24    /* EQ entries queued at most */
#define DESC_MAX     2048

enum { EQ_FD, EQ_SET, EQ_NONE, NEQ };
enum { CQ_FD, CQ_SET, NCQ };
enum { CNTR_FD, CNTR_SET, NCNTR };
/* Object ids (names, contexts): the EQs, the CQs, the counters, the sets. */
enum { O_EQ = 0, O_CQ = O_EQ + NEQ, O_CNTR = O_CQ + NCQ, O_WS = O_CNTR + NCNTR,
       O_PS, NOBJ };

static const char *const obj_name[NOBJ] = {
	"eq_fd", "eq_set", "eq_none", "cq_fd", "cq_set", "cntr_fd", "cntr_set",
	"ws", "ps"
};

/* Every object is opened with &obj_tag[id] as its context, in both
 * providers: fi_poll's contexts then compare as they are. */
static char obj_tag[NOBJ];

/* ---------------------------------------------------------------- random */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

/* ---------------------------------------------------------------- worlds */

struct world {
	const char *prov;
	int lfpoll;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct lfp_fi_producer_ops *prod;     /* lfpoll */
	/* The objects of one scenario. */
	struct fid_wait *ws;
	struct fid_poll *ps;
	struct fid_eq *eq[NEQ];
	struct fid_cq *cq[NCQ];
	struct fid_cntr *cntr[NCNTR];
	int in_ps[NOBJ];
	/* udp: each CQ is an endpoint's receive CQ; its datagrams to itself
	 * are its completions. */
	struct fi_info *dgram;
	struct fid_av *av;
	struct fid_ep *ep[NCQ];
	struct fid_cq *txcq[NCQ];
	fi_addr_t self[NCQ];
	char rxbuf[NCQ][PAYLOAD_MAX], txbuf[PAYLOAD_MAX];
};

struct pair {
	struct world *a, *b;                 /* lfpoll, the baseline */
	int cq_write, cntr;                  /* what the baseline can do */
};

static void die(const char *what, int ret)
{
	fprintf(stderr, "fabdiff: %s: %d (%s)\n", what, ret, fi_strerror(-ret));
	exit(2);
}

#define CHECK(call) do { int r_ = (int)(call); if (r_) die(#call, r_); } while (0)

/* The info of provider prov exactly (not a layering over it). */
static struct fi_info *getinfo(const char *prov, enum fi_ep_type type,
                               const char *node, uint64_t flags)
{
	struct fi_info *hints = fi_allocinfo(), *list, *fi, *mine = NULL;
	int ret;

	if (!hints)
		die("fi_allocinfo", -FI_ENOMEM);
	hints->fabric_attr->prov_name = strdup(prov);
	hints->ep_attr->type = type;
	hints->caps = FI_MSG;
	hints->mode = ~0ULL;
	hints->domain_attr->mode = ~0ULL;
	hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
	ret = fi_getinfo(FI_VERSION(1, 9), node, NULL, flags, hints, &list);
	fi_freeinfo(hints);
	if (ret)
		die(prov, ret);
	for (fi = list; fi && !mine; fi = fi->next)
		if (strcmp(fi->fabric_attr->prov_name, prov) == 0)
			mine = fi_dupinfo(fi);
	fi_freeinfo(list);
	if (!mine)
		die(prov, -FI_ENODATA);
	return mine;
}

static void world_open(struct world *w, const char *prov)
{
	memset(w, 0, sizeof(*w));
	w->prov = prov;
	w->lfpoll = strcmp(prov, "lfpoll") == 0;
	w->info = getinfo(prov, strcmp(prov, "udp") == 0 ? FI_EP_DGRAM :
	                        strcmp(prov, "tcp") == 0 ? FI_EP_MSG : FI_EP_RDM,
	                  NULL, 0);
	CHECK(fi_fabric(w->info->fabric_attr, &w->fabric, NULL));
	CHECK(fi_domain(w->fabric, w->info, &w->domain, NULL));
	if (w->lfpoll)
		CHECK(fi_open_ops(&w->domain->fid, LFP_FI_PRODUCER_OPS, 0,
		                  (void **)&w->prod, NULL));
	if (strcmp(prov, "udp") == 0)
		w->dgram = getinfo("udp", FI_EP_DGRAM, "127.0.0.1", FI_SOURCE);
}

static void world_close(struct world *w)
{
	CHECK(fi_close(&w->domain->fid));
	CHECK(fi_close(&w->fabric->fid));
	fi_freeinfo(w->info);
	fi_freeinfo(w->dgram);
}

/* ---------------------------------------------------------------- scenarios */

struct scen_cfg {
	int threshold_cq;                 /* CQ_FD opened with FI_CQ_COND_THRESHOLD */
	int cntr;                         /* open the counters */
};

/* udp: CQ i's endpoint, bound to it for receives, sending to itself. */
static void feed_open(struct world *w, int i)
{
	struct fi_cq_attr ta = { .size = 64, .format = FI_CQ_FORMAT_CONTEXT,
	                         .wait_obj = FI_WAIT_NONE };
	char addr[128];
	size_t len = sizeof(addr);

	CHECK(fi_cq_open(w->domain, &ta, &w->txcq[i], NULL));
	CHECK(fi_endpoint(w->domain, w->dgram, &w->ep[i], NULL));
	CHECK(fi_ep_bind(w->ep[i], &w->av->fid, 0));
	CHECK(fi_ep_bind(w->ep[i], &w->cq[i]->fid, FI_RECV));
	CHECK(fi_ep_bind(w->ep[i], &w->txcq[i]->fid, FI_TRANSMIT));
	CHECK(fi_enable(w->ep[i]));
	CHECK(fi_getname(&w->ep[i]->fid, addr, &len));
	if (fi_av_insert(w->av, addr, 1, &w->self[i], 0, NULL) != 1)
		die("fi_av_insert", -FI_EOTHER);
}

static void scen_open(struct world *w, const struct scen_cfg *cfg)
{
	struct fi_wait_attr wa = { .wait_obj = FI_WAIT_FD };
	struct fi_poll_attr pa = { 0 };
	struct fi_eq_attr ea = { .size = EQ_SIZE, .flags = FI_WRITE };
	struct fi_cq_attr ca = { .size = CQ_SIZE, .format = FI_CQ_FORMAT_DATA };
	struct fi_cntr_attr na = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	int i;

	memset(w->in_ps, 0, sizeof(w->in_ps));
	CHECK(fi_wait_open(w->fabric, &wa, &w->ws));
	CHECK(fi_poll_open(w->domain, &pa, &w->ps));
	for (i = 0; i < NEQ; i++) {
		ea.wait_obj = i == EQ_FD ? FI_WAIT_FD : i == EQ_SET ? FI_WAIT_SET
		                                                    : FI_WAIT_NONE;
		ea.wait_set = i == EQ_SET ? w->ws : NULL;
		CHECK(fi_eq_open(w->fabric, &ea, &w->eq[i], &obj_tag[O_EQ + i]));
	}
	for (i = 0; i < NCQ; i++) {
		ca.wait_obj = i == CQ_FD ? FI_WAIT_FD : FI_WAIT_SET;
		ca.wait_set = i == CQ_SET ? w->ws : NULL;
		ca.wait_cond = i == CQ_FD && cfg->threshold_cq ?
		               FI_CQ_COND_THRESHOLD : FI_CQ_COND_NONE;
		CHECK(fi_cq_open(w->domain, &ca, &w->cq[i], &obj_tag[O_CQ + i]));
		CHECK(fi_poll_add(w->ps, &w->cq[i]->fid, 0));
		w->in_ps[O_CQ + i] = 1;
	}
	if (w->dgram) {
		CHECK(fi_av_open(w->domain, &aa, &w->av, NULL));
		for (i = 0; i < NCQ; i++)
			feed_open(w, i);
	}
	for (i = 0; cfg->cntr && i < NCNTR; i++) {
		na.wait_obj = i == CNTR_FD ? FI_WAIT_FD : FI_WAIT_SET;
		na.wait_set = i == CNTR_SET ? w->ws : NULL;
		CHECK(fi_cntr_open(w->domain, &na, &w->cntr[i], &obj_tag[O_CNTR + i]));
		CHECK(fi_poll_add(w->ps, &w->cntr[i]->fid, 0));
		w->in_ps[O_CNTR + i] = 1;
	}
}

static struct fid *obj_fid(struct world *w, int id)
{
	if (id < O_CQ)
		return &w->eq[id - O_EQ]->fid;
	if (id < O_CNTR)
		return &w->cq[id - O_CQ]->fid;
	if (id < O_WS)
		return w->cntr[id - O_CNTR] ? &w->cntr[id - O_CNTR]->fid : NULL;
	return id == O_WS ? &w->ws->fid : &w->ps->fid;
}

static void scen_close(struct world *w)
{
	int i;

	for (i = 0; i < NOBJ; i++)
		if (w->in_ps[i])
			CHECK(fi_poll_del(w->ps, obj_fid(w, i), 0));
	CHECK(fi_close(&w->ps->fid));
	for (i = 0; w->dgram && i < NCQ; i++) {
		CHECK(fi_close(&w->ep[i]->fid));
		CHECK(fi_close(&w->txcq[i]->fid));
	}
	if (w->av)
		CHECK(fi_close(&w->av->fid));
	w->av = NULL;
	for (i = 0; i < NCNTR; i++) {
		if (w->cntr[i])
			CHECK(fi_close(&w->cntr[i]->fid));
		w->cntr[i] = NULL;
	}
	for (i = 0; i < NCQ; i++)
		CHECK(fi_close(&w->cq[i]->fid));
	for (i = 0; i < NEQ; i++)
		CHECK(fi_close(&w->eq[i]->fid));
	CHECK(fi_close(&w->ws->fid));
}

/* ---------------------------------------------------------------- shadow */

/*
 * What the baseline holds, kept from its results: the EQs' entries in
 * order (its EQs are one FIFO of events and errors), how many completions
 * each CQ holds, the counters with their poll checkpoints (libfabric's
 * utility counters report a change of value since the last poll, by any
 * call).  The divergences' conditions read it.
 *
 * The checkpoints and the CQs' pending signals also depend on the clock.
 * A timed wait of the utility code (fi_cntr_wait, the CQ's sread) reads
 * the clock, in whole milliseconds, before it checks the CQ's signal and
 * before each wait on its wait object, and every such wait scans (moves
 * the checkpoints).  So a wait that ends in its timeout has made no scan
 * when a millisecond boundary passed early (a preemption, or only a slow
 * first check), or one, or another after a scan that found a change; and
 * its signal may still be pending.  The shadow keeps each state these
 * outcomes can leave (struct sh_timing, without repeats), drops those the
 * baseline's later polls, trywaits and waits contradict, and a divergence
 * is recognised when its condition holds in any of them.
 */
struct sh_timing {
	int cq_signaled[NCQ];
	uint64_t ck_cnt[NCNTR], ck_err[NCNTR];
};

/* Enough for any sequence: a state is the checkpoints of two counters,
 * and each scan brings the states closer to the counters' values. */
#define NTIMING 64
struct sh_ent {
	int is_err;
	size_t len;              /* an event's payload */
	void *util_err_data;     /* the baseline's err_data until it frees it */
};

struct shadow {
	struct sh_ent eq[NEQ][SHADOW_MAX];
	int eq_n[NEQ];
	int cq_n[NCQ];
	uint64_t cnt[NCNTR], err[NCNTR];
	struct sh_timing t[NTIMING];   /* the possible states, at least one */
	int nt;
	int threshold_cq;
	int cntr;
	int profile;             /* the generator's, for the sequence */
};

static int sh_eq_errs(const struct shadow *s, int q)
{
	int i, n = 0;

	for (i = 0; i < s->eq_n[q]; i++)
		n += s->eq[q][i].is_err;
	return n;
}

/* An error queued behind an event: libfabric reads the event first. */
static int sh_err_behind_event(const struct shadow *s, int q)
{
	return s->eq_n[q] > 0 && !s->eq[q][0].is_err && sh_eq_errs(s, q) > 0;
}

static void sh_eq_pop(struct shadow *s, int q)
{
	memmove(&s->eq[q][0], &s->eq[q][1], (size_t)(s->eq_n[q] - 1) * sizeof(s->eq[q][0]));
	s->eq_n[q]--;
}

/* Whether the baseline's poll scan would report counter c, in state t. */
static int sh_cntr_changed(const struct shadow *s, const struct sh_timing *t, int c)
{
	return s->cntr && (s->cnt[c] != t->ck_cnt[c] || s->err[c] != t->ck_err[c]);
}

/* The baseline's poll scan over counter c: move its checkpoint in t. */
static void sh_cntr_scan(const struct shadow *s, struct sh_timing *t, int c)
{
	if (!s->cntr)
		return;
	if (s->cnt[c] != t->ck_cnt[c])
		t->ck_cnt[c] = s->cnt[c];
	else if (s->err[c] != t->ck_err[c])
		t->ck_err[c] = s->err[c];
}

static int sh_timing_same(const struct sh_timing *x, const struct sh_timing *y)
{
	int i;

	for (i = 0; i < NCQ; i++)
		if (x->cq_signaled[i] != y->cq_signaled[i])
			return 0;
	for (i = 0; i < NCNTR; i++)
		if (x->ck_cnt[i] != y->ck_cnt[i] || x->ck_err[i] != y->ck_err[i])
			return 0;
	return 1;
}

/* Add state t to the list of n (at most NTIMING), unless it is there. */
static void sh_timing_add(struct sh_timing *list, int *n, const struct sh_timing *t)
{
	int i;

	for (i = 0; i < *n; i++)
		if (sh_timing_same(&list[i], t))
			return;
	if (*n == NTIMING) {
		fprintf(stderr, "fabdiff: more than %d timing states\n", NTIMING);
		exit(2);
	}
	list[(*n)++] = *t;
}

/* ---------------------------------------------------------------- operations */

enum op_kind {
	OP_EQ_WRITE, OP_EQ_WRITE_ERR, OP_EQ_READ, OP_EQ_SREAD, OP_EQ_READERR,
	OP_CQ_WRITE, OP_CQ_READ, OP_CQ_READFROM, OP_CQ_PROBE, OP_CQ_SREAD,
	OP_CQ_READERR, OP_CQ_SIGNAL,
	OP_CNTR_ADD, OP_CNTR_SET, OP_CNTR_ADDERR, OP_CNTR_SETERR, OP_CNTR_READ,
	OP_CNTR_WAIT,
	OP_TRYWAIT, OP_WAIT, OP_POLL, OP_POLL_DEL, OP_POLL_ADD,
	NOPS
};

static const char *const op_name[NOPS] = {
	"eq_write", "eq_write_err", "eq_read", "eq_sread", "eq_readerr",
	"cq_write", "cq_read", "cq_readfrom", "cq_probe", "cq_sread",
	"cq_readerr", "cq_signal",
	"cntr_add", "cntr_set", "cntr_adderr", "cntr_seterr", "cntr_read",
	"cntr_wait",
	"trywait", "wait", "poll", "poll_del", "poll_add"
};

/* One operation, as generated: the same arguments for both providers. */
struct op {
	enum op_kind kind;
	int q;                   /* EQ, CQ or counter index */
	uint32_t event;
	size_t len;              /* payload, read length, err_data buffer */
	uint64_t flags;          /* FI_PEEK */
	uint64_t token;          /* what identifies the entry written */
	int err, prov_errno;
	size_t count, threshold;
	int use_cond;
	int timeout;
	uint64_t value;
	unsigned set;            /* trywait: object ids as bits */
};

/* One provider's outcome: the return value and a canonical description
 * of everything it returned (pointers replaced by names and tokens). */
struct res {
	long ret;
	unsigned ready;          /* poll: object ids as bits */
	char desc[DESC_MAX];
	char src[256];           /* readfrom: the source addresses */
	void *util_err_data;     /* an error write: the data the baseline owns */
};

static void say(struct res *r, const char *fmt, ...)
{
	size_t n = strlen(r->desc);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->desc + n, sizeof(r->desc) - n, fmt, ap);
	va_end(ap);
}

static void say_bytes(struct res *r, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	size_t i;

	say(r, " [");
	for (i = 0; i < n; i++)
		say(r, "%02x", b[i]);
	say(r, "]");
}

/* The payload of entry token: the same bytes in both providers. */
static void fill(void *p, size_t n, uint64_t token)
{
	unsigned char *b = (unsigned char *)p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(token * 131 + i * 7);
}

static const char *fid_label(struct world *w, const struct fid *fid)
{
	int i;

	for (i = 0; i < NOBJ; i++)
		if (fid && obj_fid(w, i) == fid)
			return obj_name[i];
	return fid ? "?fid" : "null";
}

/* The object whose context ctx is, or -1. */
static int ctx_id(const void *ctx)
{
	int i;

	for (i = 0; i < NOBJ; i++)
		if (ctx == &obj_tag[i])
			return i;
	return -1;
}

static void run_eq(struct world *w, const struct op *o, struct res *r)
{
	unsigned char buf[OVERSIZE];
	struct fi_eq_err_entry e;
	unsigned char data[ERRDATA_MAX];
	uint32_t event = 0;
	void *copy;

	switch (o->kind) {
	case OP_EQ_WRITE:
		fill(buf, o->len, o->token);
		r->ret = fi_eq_write(w->eq[o->q], o->event, buf, o->len, 0);
		break;
	case OP_EQ_WRITE_ERR:
		memset(&e, 0, sizeof(e));
		e.fid = &w->eq[o->q]->fid;
		e.context = (void *)(uintptr_t)o->token;
		e.data = o->token;
		e.err = o->err;
		e.prov_errno = o->prov_errno;
		e.err_data_size = o->len;
		copy = o->len ? malloc(o->len) : NULL;
		if (o->len && !copy)
			die("malloc", -FI_ENOMEM);
		fill(copy, o->len, o->token);
		e.err_data = copy;
		if (w->lfpoll) {
			r->ret = w->prod->eq_write_err(w->eq[o->q], &e);
			free(copy);
		} else {
			r->ret = fi_eq_write(w->eq[o->q], 0, &e, sizeof(e),
			                     UTIL_EQ_ERROR_FLAG);
			if (r->ret < 0)
				free(copy);
			else
				r->util_err_data = copy; /* the EQ's now */
		}
		break;
	case OP_EQ_READ:
	case OP_EQ_SREAD:
		memset(buf, 0, sizeof(buf));
		r->ret = o->kind == OP_EQ_READ ?
		         fi_eq_read(w->eq[o->q], &event, buf, o->len, o->flags) :
		         fi_eq_sread(w->eq[o->q], &event, buf, o->len, o->timeout,
		                     o->flags);
		if (r->ret >= 0) {
			say(r, "event %u", event);
			say_bytes(r, buf, (size_t)r->ret);
		}
		break;
	case OP_EQ_READERR:
		memset(&e, 0, sizeof(e));
		memset(data, 0, sizeof(data));
		e.err_data = o->len ? data : NULL;
		e.err_data_size = o->len;
		r->ret = fi_eq_readerr(w->eq[o->q], &e, o->flags);
		if (r->ret > 0) {
			say(r, "fid %s context %" PRIu64 " data %" PRIu64
			    " err %d prov_errno %d err_data_size %zu",
			    fid_label(w, e.fid), (uint64_t)(uintptr_t)e.context,
			    e.data, e.err, e.prov_errno, e.err_data_size);
			if (e.err_data_size && e.err_data)
				say_bytes(r, e.err_data, e.err_data_size);
		}
		break;
	default:
		break;
	}
}

/* udp: n completions on CQ q, one datagram each, received at once. */
static long udp_cq_write(struct world *w, int q, const struct op *o)
{
	struct fi_cq_entry tx[8];
	size_t i;
	ssize_t ret;

	for (i = 0; i < o->count; i++) {
		ret = fi_recv(w->ep[q], w->rxbuf[q], sizeof(w->rxbuf[q]), NULL,
		              FI_ADDR_UNSPEC, (void *)(uintptr_t)(o->token + i));
		if (ret)
			return (long)ret;
		fill(w->txbuf, o->len, o->token + i);
		ret = fi_send(w->ep[q], w->txbuf, o->len, NULL, w->self[q], NULL);
		if (ret)
			return (long)ret;
		while (fi_cq_read(w->txcq[q], tx, 8) > 0)
			;
		/* The count-0 read progresses the endpoint: the datagram is
		 * received now, before the next operation. */
		(void)fi_cq_read(w->cq[q], NULL, 0);
	}
	return (long)o->count;
}

static void say_cq_entries(struct res *r, const struct fi_cq_data_entry *c, long n)
{
	long i;

	for (i = 0; i < n; i++)
		say(r, " {ctx %" PRIu64 " flags %" PRIx64 " len %zu buf %p data %" PRIu64 "}",
		    (uint64_t)(uintptr_t)c[i].op_context, c[i].flags, c[i].len,
		    c[i].buf, c[i].data);
}

static void run_cq(struct world *w, const struct op *o, struct res *r)
{
	struct fi_cq_data_entry c[8];
	struct fi_cq_err_entry e;
	fi_addr_t src[8];
	size_t i;

	memset(c, 0, sizeof(c));
	switch (o->kind) {
	case OP_CQ_WRITE:
		if (!w->lfpoll) {
			r->ret = udp_cq_write(w, o->q, o);
			break;
		}
		for (i = 0; i < o->count; i++) {
			c[i].op_context = (void *)(uintptr_t)(o->token + i);
			c[i].flags = FI_RECV;
			c[i].len = o->len;
		}
		r->ret = w->prod->cq_write(w->cq[o->q], c, NULL, o->count);
		break;
	case OP_CQ_READ:
		r->ret = fi_cq_read(w->cq[o->q], c, o->count);
		if (r->ret > 0)
			say_cq_entries(r, c, r->ret);
		break;
	case OP_CQ_READFROM:
		for (i = 0; i < 8; i++)
			src[i] = 0x5a5a;
		r->ret = fi_cq_readfrom(w->cq[o->q], c, o->count, src);
		if (r->ret > 0) {
			say_cq_entries(r, c, r->ret);
			for (i = 0; i < (size_t)r->ret; i++)
				snprintf(r->src + strlen(r->src), sizeof(r->src) - strlen(r->src),
				         " %" PRIx64, src[i]);
		}
		break;
	case OP_CQ_PROBE:
		r->ret = fi_cq_read(w->cq[o->q], NULL, 0);
		break;
	case OP_CQ_SREAD:
		r->ret = fi_cq_sread(w->cq[o->q], c, o->count,
		                     o->use_cond ? &o->threshold : NULL, o->timeout);
		if (r->ret > 0)
			say_cq_entries(r, c, r->ret);
		break;
	case OP_CQ_READERR:
		memset(&e, 0, sizeof(e));
		r->ret = fi_cq_readerr(w->cq[o->q], &e, 0);
		if (r->ret > 0)
			say(r, "ctx %p err %d", e.op_context, e.err);
		break;
	case OP_CQ_SIGNAL:
		r->ret = fi_cq_signal(w->cq[o->q]);
		break;
	default:
		break;
	}
}

static void run_cntr(struct world *w, const struct op *o, struct res *r)
{
	struct fid_cntr *c = w->cntr[o->q];

	switch (o->kind) {
	case OP_CNTR_ADD:    r->ret = fi_cntr_add(c, o->value); break;
	case OP_CNTR_SET:    r->ret = fi_cntr_set(c, o->value); break;
	case OP_CNTR_ADDERR: r->ret = fi_cntr_adderr(c, o->value); break;
	case OP_CNTR_SETERR: r->ret = fi_cntr_seterr(c, o->value); break;
	case OP_CNTR_READ:
		r->ret = 0;
		say(r, "value %" PRIu64 " err %" PRIu64, fi_cntr_read(c),
		    fi_cntr_readerr(c));
		break;
	case OP_CNTR_WAIT:
		r->ret = fi_cntr_wait(c, o->value, o->timeout);
		break;
	default:
		break;
	}
}

static void run_sets(struct world *w, const struct op *o, struct res *r)
{
	struct fid *fids[NOBJ];
	void *ctx[NOBJ];
	int i, n = 0;

	switch (o->kind) {
	case OP_TRYWAIT:
		for (i = 0; i < NOBJ; i++)
			if (o->set & (1u << i))
				fids[n++] = obj_fid(w, i);
		r->ret = fi_trywait(w->fabric, fids, n);
		break;
	case OP_WAIT:
		r->ret = fi_wait(w->ws, o->timeout);
		break;
	case OP_POLL:
		r->ret = fi_poll(w->ps, ctx, NOBJ);
		for (i = 0; i < r->ret; i++) {
			n = ctx_id(ctx[i]);
			if (n < 0)
				say(r, " ?ctx");
			else
				r->ready |= 1u << n;
		}
		for (i = 0; i < NOBJ; i++)
			if (r->ready & (1u << i))
				say(r, " %s", obj_name[i]);
		break;
	case OP_POLL_DEL:
		r->ret = fi_poll_del(w->ps, obj_fid(w, (int)o->value), 0);
		if (r->ret == 0)
			w->in_ps[o->value] = 0;
		break;
	case OP_POLL_ADD:
		r->ret = fi_poll_add(w->ps, obj_fid(w, (int)o->value), 0);
		if (r->ret == 0)
			w->in_ps[o->value] = 1;
		break;
	default:
		break;
	}
}

static void run(struct world *w, const struct op *o, struct res *r)
{
	memset(r, 0, sizeof(*r));
	if (o->kind <= OP_EQ_READERR)
		run_eq(w, o, r);
	else if (o->kind <= OP_CQ_SIGNAL)
		run_cq(w, o, r);
	else if (o->kind <= OP_CNTR_WAIT)
		run_cntr(w, o, r);
	else
		run_sets(w, o, r);
}

/* ---------------------------------------------------------------- generator */

/* Whether the baseline can do operation k at all (udp has no counters;
 * tcp's CQs cannot be fed without a connection). */
static int usable(int k, const struct pair *p)
{
	if (k == OP_CQ_WRITE)
		return p->cq_write;
	if (k >= OP_CNTR_ADD && k <= OP_CNTR_WAIT)
		return p->cntr;
	return 1;
}

/*
 * How often each operation comes, by sequence profile: 0 even, 1 EQ
 * writes ahead of reads (EQs fill up), 2 sets and blocking calls.
 */
static const unsigned char weight[3][NOPS] = {
	/* eq: write err read sread readerr  cq: write read from probe sread
	   readerr signal  cntr: add set adderr seterr read wait  trywait wait
	   poll del add */
	{ 6, 3, 4, 2, 3,  5, 3, 2, 2, 3, 1, 2,  2, 2, 2, 2, 2, 2,  4, 2, 4, 1, 1 },
	{ 9, 4, 1, 1, 1,  4, 2, 1, 1, 2, 1, 1,  2, 2, 1, 1, 1, 1,  3, 1, 3, 1, 1 },
	{ 3, 2, 2, 3, 2,  4, 2, 1, 2, 4, 1, 3,  2, 2, 1, 1, 1, 4,  6, 4, 6, 2, 2 },
};

static enum op_kind pick(int profile, const struct pair *p)
{
	unsigned total = 0, r;
	int k;

	for (k = 0; k < NOPS; k++)
		total += usable(k, p) ? weight[profile][k] : 0;
	r = below(total);
	for (k = 0; k < NOPS; k++) {
		if (!usable(k, p))
			continue;
		if (r < weight[profile][k])
			break;
		r -= weight[profile][k];
	}
	return (enum op_kind)k;
}

static int timeout_ms(void)
{
	return (int)below(3);
}

/* The next operation, within what both providers accept without undefined
 * behaviour (libfabric's utility code dereferences a missing wait object
 * in fi_trywait, fi_cq_signal and fi_cntr_wait) and within the limits the
 * divergences do not cover (a CQ never fills). */
static void gen(struct op *o, const struct shadow *s, const struct pair *p,
                uint64_t *token)
{
	unsigned k;

	memset(o, 0, sizeof(*o));
	o->kind = pick(s->profile, p);
	o->token = *token;
	*token += 8;
	switch (o->kind) {
	case OP_EQ_WRITE:
		/* The EQ-filling profile writes mostly to one EQ. */
		o->q = s->profile == 1 && below(4) ? EQ_FD : (int)below(NEQ);
		if (s->eq_n[o->q] >= SHADOW_MAX) {
			o->kind = OP_EQ_READ;
			o->len = PAYLOAD_MAX;
			break;
		}
		o->event = below(4) ? FI_NOTIFY + below(7) : 256 + below(100);
		o->len = below(20) ? below(PAYLOAD_MAX + 1) : OVERSIZE;
		break;
	case OP_EQ_WRITE_ERR:
		o->q = (int)below(NEQ);
		if (s->eq_n[o->q] >= SHADOW_MAX) {
			o->kind = OP_EQ_READERR;
			break;
		}
		o->err = 1 + (int)below(200);
		o->prov_errno = (int)below(1000) - 500;
		o->len = below(2) ? 0 : 1 + below(ERRDATA_MAX);
		break;
	case OP_EQ_READ:
	case OP_EQ_SREAD:
		o->q = (int)below(NEQ);
		o->len = below(8) ? PAYLOAD_MAX : below(PAYLOAD_MAX);
		o->flags = below(3) ? 0 : FI_PEEK;
		o->timeout = timeout_ms();
		break;
	case OP_EQ_READERR:
		o->q = (int)below(NEQ);
		k = below(3);
		o->len = k == 0 ? 0 : k == 1 ? 1 + below(8) : ERRDATA_MAX;
		o->flags = below(4) ? 0 : FI_PEEK;
		break;
	case OP_CQ_WRITE:
		o->q = (int)below(NCQ);
		o->count = 1 + below(3);
		if (s->cq_n[o->q] + (int)o->count > CQ_KEEP)
			o->kind = OP_CQ_READ;
		o->len = 1 + below(PAYLOAD_MAX);
		break;
	case OP_CQ_READ:
	case OP_CQ_READFROM:
	case OP_CQ_PROBE:
	case OP_CQ_SREAD:
	case OP_CQ_READERR:
	case OP_CQ_SIGNAL:
		/* sread on a set member is a listed divergence: now and then. */
		o->q = o->kind == OP_CQ_SREAD ? (below(4) ? CQ_FD : CQ_SET)
		                              : (int)below(NCQ);
		o->count = 1 + below(4);
		o->use_cond = below(2);
		o->threshold = 1 + below(4);
		o->timeout = timeout_ms();
		break;
	case OP_CNTR_ADD:
	case OP_CNTR_SET:
	case OP_CNTR_ADDERR:
	case OP_CNTR_SETERR:
		o->q = (int)below(NCNTR);
		o->value = below(4);
		break;
	case OP_CNTR_READ:
		o->q = (int)below(NCNTR);
		break;
	case OP_CNTR_WAIT:
		o->q = below(4) ? CNTR_FD : CNTR_SET; /* as sread */
		o->value = s->cnt[o->q] + below(3) - 1;
		o->timeout = timeout_ms();
		break;
	case OP_TRYWAIT:
		/* Objects with a wait object only. */
		do {
			o->set = 0;
			if (below(2)) o->set |= 1u << (O_EQ + EQ_FD);
			if (below(3) == 0) o->set |= 1u << (O_EQ + EQ_SET);
			if (below(2)) o->set |= 1u << (O_CQ + CQ_FD);
			if (below(3) == 0) o->set |= 1u << (O_CQ + CQ_SET);
			if (p->cntr && below(2)) o->set |= 1u << (O_CNTR + CNTR_FD);
			if (p->cntr && below(3) == 0) o->set |= 1u << (O_CNTR + CNTR_SET);
			if (below(2)) o->set |= 1u << O_WS;
		} while (!o->set);
		break;
	case OP_WAIT:
		o->timeout = timeout_ms();
		break;
	case OP_POLL_DEL:
	case OP_POLL_ADD:
		/* Now and then an EQ, which no poll set takes. */
		k = below(p->cntr ? NCQ + NCNTR + 1 : NCQ + 1);
		o->value = k < NCQ ? O_CQ + k : k < NCQ + NCNTR && p->cntr ?
		           O_CNTR + k - NCQ : O_EQ + EQ_FD;
		break;
	default:
		break;
	}
}

static void op_text(const struct op *o, char *buf, size_t n)
{
	int i;
	size_t m;

	m = (size_t)snprintf(buf, n, "%s", op_name[o->kind]);
	switch (o->kind) {
	case OP_EQ_WRITE:
		snprintf(buf + m, n - m, "(%s, event %u, len %zu)",
		         obj_name[O_EQ + o->q], o->event, o->len);
		break;
	case OP_EQ_WRITE_ERR:
		snprintf(buf + m, n - m, "(%s, err %d, err_data %zu)",
		         obj_name[O_EQ + o->q], o->err, o->len);
		break;
	case OP_EQ_READ:
	case OP_EQ_SREAD:
		snprintf(buf + m, n - m, "(%s, len %zu%s, timeout %d)",
		         obj_name[O_EQ + o->q], o->len,
		         o->flags ? ", FI_PEEK" : "", o->timeout);
		break;
	case OP_EQ_READERR:
		snprintf(buf + m, n - m, "(%s, err_data_size %zu%s)",
		         obj_name[O_EQ + o->q], o->len, o->flags ? ", FI_PEEK" : "");
		break;
	case OP_CQ_WRITE:
	case OP_CQ_READ:
	case OP_CQ_READFROM:
	case OP_CQ_PROBE:
	case OP_CQ_READERR:
	case OP_CQ_SIGNAL:
		snprintf(buf + m, n - m, "(%s, count %zu)", obj_name[O_CQ + o->q],
		         o->kind == OP_CQ_PROBE ? (size_t)0 : o->count);
		break;
	case OP_CQ_SREAD:
		snprintf(buf + m, n - m, "(%s, count %zu, threshold %s%zu, timeout %d)",
		         obj_name[O_CQ + o->q], o->count, o->use_cond ? "" : "none ",
		         o->use_cond ? o->threshold : (size_t)0, o->timeout);
		break;
	case OP_CNTR_ADD:
	case OP_CNTR_SET:
	case OP_CNTR_ADDERR:
	case OP_CNTR_SETERR:
	case OP_CNTR_READ:
		snprintf(buf + m, n - m, "(%s, %" PRIu64 ")", obj_name[O_CNTR + o->q],
		         o->value);
		break;
	case OP_CNTR_WAIT:
		snprintf(buf + m, n - m, "(%s, threshold %" PRIu64 ", timeout %d)",
		         obj_name[O_CNTR + o->q], o->value, o->timeout);
		break;
	case OP_TRYWAIT:
		for (i = 0; i < NOBJ; i++)
			if (o->set & (1u << i)) {
				m += (size_t)snprintf(buf + m, n - m, " %s", obj_name[i]);
				if (m >= n)
					break;
			}
		break;
	case OP_WAIT:
		snprintf(buf + m, n - m, "(timeout %d)", o->timeout);
		break;
	case OP_POLL_DEL:
	case OP_POLL_ADD:
		snprintf(buf + m, n - m, "(%s)", obj_name[o->value]);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- shadow updates */

/*
 * The baseline's wait objects: each FD object has its own, with a poll set
 * of that object alone; the wait set's poll set holds its members.  A
 * trywait, fi_wait or blocking call scans one of these poll sets: it is
 * ready when an EQ or CQ in it holds an entry or a counter in it changed
 * since its last scan, and the scan moves the checkpoint of every counter
 * in it.  The results say whether it was ready, and whether only because
 * of a counter.
 */
enum { PS_EQ_FD, PS_CQ_FD, PS_CNTR_FD, PS_WS };

static int pollset_of(int id)
{
	switch (id) {
	case O_EQ + EQ_FD:     return PS_EQ_FD;
	case O_CQ + CQ_FD:     return PS_CQ_FD;
	case O_CNTR + CNTR_FD: return PS_CNTR_FD;
	default:               return PS_WS;
	}
}

/* A scan of poll set ps in state t. */
static int sh_scan(const struct shadow *s, struct sh_timing *t, int ps,
                   int *counter_only)
{
	int queued, changed;

	switch (ps) {
	case PS_EQ_FD:
		queued = s->eq_n[EQ_FD] > 0;
		changed = 0;
		break;
	case PS_CQ_FD:
		queued = s->cq_n[CQ_FD] > 0;
		changed = 0;
		break;
	case PS_CNTR_FD:
		queued = 0;
		changed = sh_cntr_changed(s, t, CNTR_FD);
		sh_cntr_scan(s, t, CNTR_FD);
		break;
	default:
		queued = s->eq_n[EQ_SET] > 0 || s->cq_n[CQ_SET] > 0;
		changed = sh_cntr_changed(s, t, CNTR_SET);
		sh_cntr_scan(s, t, CNTR_SET);
		break;
	}
	*counter_only = !queued && changed;
	return queued || changed;
}

/* fi_trywait on the baseline, in state t: the fids in order, up to the
 * first ready. */
static int sh_trywait(const struct shadow *s, struct sh_timing *t, unsigned set,
                      int *counter_only)
{
	int i;

	*counter_only = 0;
	for (i = 0; i < NOBJ; i++)
		if ((set & (1u << i)) && sh_scan(s, t, pollset_of(i), counter_only))
			return 1;
	return 0;
}

/* Whether the baseline's fi_poll would report counter c, in state t. */
static int sh_poll_reports(const struct shadow *s, const struct sh_timing *t,
                           const struct world *b, int c)
{
	return b->in_ps[O_CNTR + c] && sh_cntr_changed(s, t, c);
}

/*
 * Whether state t predicts the baseline's answer r to op o, where the
 * answer depends on the checkpoints: which counters a poll reports,
 * whether a trywait or a wait found its set ready.  Others: yes.
 */
static int sh_agrees(const struct shadow *s, struct sh_timing t,
                     const struct op *o, const struct res *r,
                     const struct world *b)
{
	int c, ready;

	switch (o->kind) {
	case OP_POLL:
		for (c = 0; c < NCNTR; c++)
			if (sh_poll_reports(s, &t, b, c) !=
			    !!(r->ready & (1u << (O_CNTR + c))))
				return 0;
		return r->ret >= 0;
	case OP_TRYWAIT:
		ready = sh_trywait(s, &t, o->set, &c);
		return r->ret == (ready ? -FI_EAGAIN : 0);
	case OP_WAIT:
		ready = sh_scan(s, &t, PS_WS, &c);
		return r->ret == (ready ? 0 : -FI_ETIMEDOUT);
	default:
		return 1;
	}
}

/*
 * Add to out (n states) what op o leaves of state t.  A timed wait that
 * ended in its timeout forks it: its clock check came first (t as it
 * was), or it took the CQ's pending signal, or it scanned once or twice
 * (a third scan finds nothing new).
 */
static void sh_step(const struct shadow *s, struct sh_timing t, const struct op *o,
                    const struct res *r, const struct world *b,
                    struct sh_timing *out, int *n)
{
	int c, ps;

	switch (o->kind) {
	case OP_POLL:
		for (c = 0; c < NCNTR; c++)
			if (b->in_ps[O_CNTR + c])
				sh_cntr_scan(s, &t, c);
		break;
	case OP_TRYWAIT:
		(void)sh_trywait(s, &t, o->set, &c);
		break;
	case OP_WAIT:
		(void)sh_scan(s, &t, PS_WS, &c);
		break;
	case OP_CQ_SIGNAL:
		t.cq_signaled[o->q] = 1;
		break;
	case OP_CNTR_WAIT:
	case OP_CQ_SREAD:
		if (o->timeout <= 0 || r->ret != (o->kind == OP_CQ_SREAD ?
		                                  -FI_EAGAIN : -FI_ETIMEDOUT))
			break;
		sh_timing_add(out, n, &t); /* the clock first */
		if (o->kind == OP_CQ_SREAD && t.cq_signaled[o->q]) {
			t.cq_signaled[o->q] = 0;
			break;
		}
		ps = o->kind == OP_CQ_SREAD ? (o->q == CQ_FD ? PS_CQ_FD : PS_WS) :
		     (o->q == CNTR_FD ? PS_CNTR_FD : PS_WS);
		(void)sh_scan(s, &t, ps, &c);
		sh_timing_add(out, n, &t);
		(void)sh_scan(s, &t, ps, &c);
		break;
	default:
		break;
	}
	sh_timing_add(out, n, &t);
}

/* The states after op o: from each state before it that agrees with the
 * baseline's answer r, or from every one when none does (then the answer
 * is not the clock's, and no state is ruled out). */
static void sh_update_timing(struct shadow *s, const struct op *o,
                             const struct res *r, const struct world *b)
{
	struct sh_timing out[NTIMING];
	int agrees[NTIMING], n = 0, i, any = 0;

	for (i = 0; i < s->nt; i++)
		any |= agrees[i] = sh_agrees(s, s->t[i], o, r, b);
	for (i = 0; i < s->nt; i++)
		if (!any || agrees[i])
			sh_step(s, s->t[i], o, r, b, out, &n);
	memcpy(s->t, out, (size_t)n * sizeof(out[0]));
	s->nt = n;
}

/* After the baseline ran o with result r: what it holds now. */
static void sh_update(struct shadow *s, const struct op *o, const struct res *r,
                      const struct world *b)
{
	int q = o->q;

	sh_update_timing(s, o, r, b);
	switch (o->kind) {
	case OP_EQ_WRITE:
	case OP_EQ_WRITE_ERR:
		if (r->ret >= 0 && s->eq_n[q] < SHADOW_MAX) {
			s->eq[q][s->eq_n[q]].is_err = o->kind == OP_EQ_WRITE_ERR;
			s->eq[q][s->eq_n[q]].len = o->len;
			s->eq[q][s->eq_n[q]].util_err_data = r->util_err_data;
			s->eq_n[q]++;
		}
		break;
	case OP_EQ_READ:
	case OP_EQ_SREAD:
		if (r->ret >= 0 && !(o->flags & FI_PEEK))
			sh_eq_pop(s, q);
		break;
	case OP_EQ_READERR:
		if (r->ret > 0 && !(o->flags & FI_PEEK)) {
			s->eq[q][0].util_err_data = NULL; /* the baseline frees it */
			sh_eq_pop(s, q);
		}
		break;
	case OP_CQ_WRITE:
		if (r->ret > 0)
			s->cq_n[q] += (int)r->ret;
		break;
	case OP_CQ_READ:
	case OP_CQ_READFROM:
	case OP_CQ_SREAD:
		if (r->ret > 0)
			s->cq_n[q] -= (int)r->ret;
		break;
	case OP_CNTR_ADD:    s->cnt[q] += o->value; break;
	case OP_CNTR_SET:    s->cnt[q] = o->value; break;
	case OP_CNTR_ADDERR: s->err[q] += o->value; break;
	case OP_CNTR_SETERR: s->err[q] = o->value; break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- divergences */

/* What a divergence's condition sees: the operation, the baseline's state
 * before it, both results. */
struct diff {
	const struct op *o;
	const struct shadow *s;
	const struct world *b;
	const struct res *a;     /* lfpoll */
	const struct res *base;  /* the baseline */
};

/* lfpoll reads an error queued behind events first (its errors have their
 * own queue); libfabric's utility EQ reads its one queue in order. */
static int d_eq_error_first(const struct diff *d)
{
	const struct op *o = d->o;

	if (o->kind != OP_EQ_READ && o->kind != OP_EQ_SREAD &&
	    o->kind != OP_EQ_READERR)
		return 0;
	if (!sh_err_behind_event(d->s, o->q))
		return 0;
	return o->kind == OP_EQ_READERR ?
	       d->a->ret > 0 && d->base->ret == -FI_EAGAIN :
	       d->a->ret == -FI_EAVAIL && d->base->ret >= 0;
}

/* A payload longer than the read's buffer: lfpoll keeps the event and
 * says -FI_ETOOSMALL; the utility EQ copies what fits and consumes it. */
static int d_eq_read_short(const struct diff *d)
{
	const struct op *o = d->o;

	return (o->kind == OP_EQ_READ || o->kind == OP_EQ_SREAD) &&
	       d->s->eq_n[o->q] > 0 && !d->s->eq[o->q][0].is_err &&
	       o->len < d->s->eq[o->q][0].len &&
	       d->a->ret == -FI_ETOOSMALL && d->base->ret == (long)o->len;
}

/* lfpoll's EQ holds size entries and then overruns (fi_eq(3)); the
 * utility EQ grows without bound. */
static int d_eq_overrun(const struct diff *d)
{
	const struct op *o = d->o;
	int errs = sh_eq_errs(d->s, o->q), evs = d->s->eq_n[o->q] - errs;

	if (o->kind == OP_EQ_WRITE)
		return evs >= EQ_SIZE && d->a->ret == -FI_EOVERRUN && d->base->ret >= 0;
	if (o->kind == OP_EQ_WRITE_ERR)
		return errs >= EQ_SIZE && d->a->ret == -FI_EOVERRUN && d->base->ret >= 0;
	return 0;
}

/* A payload above the provider's entry size (FI_LFPOLL_EQ_ENTRY_SIZE). */
static int d_eq_write_size(const struct diff *d)
{
	return d->o->kind == OP_EQ_WRITE && d->o->len > EQ_ENTRY_MAX &&
	       d->a->ret == -FI_EMSGSIZE && d->base->ret == (long)d->o->len;
}

/*
 * fi_cntr_add/set (and the err forms) are the application's changes:
 * fi_poll(3) says they reset what a poll set reports, and lfpoll extends
 * that to trywait and wait sets.  The utility counter reports any change
 * of value since its last poll scan.  Only in the direction "the baseline
 * sees a change lfpoll does not", with such a change pending.
 */
static int d_cntr_app_change_in(const struct diff *d, struct sh_timing t)
{
	const struct op *o = d->o;
	unsigned scope = 0, extra;
	int c, only;

	switch (o->kind) {
	case OP_POLL:
		for (c = 0; c < NCNTR; c++)
			if (sh_poll_reports(d->s, &t, d->b, c))
				scope |= 1u << (O_CNTR + c);
		extra = d->base->ready & ~d->a->ready;
		return d->a->ret <= d->base->ret && (d->a->ready & ~d->base->ready) == 0 &&
		       extra && (extra & ~scope) == 0;
	case OP_TRYWAIT:
		return sh_trywait(d->s, &t, o->set, &only) && only &&
		       d->a->ret == 0 && d->base->ret == -FI_EAGAIN;
	case OP_WAIT:
		return sh_scan(d->s, &t, PS_WS, &only) && only &&
		       d->a->ret == -FI_ETIMEDOUT && d->base->ret == 0;
	default:
		return 0;
	}
}

/* In any state the clock may have left (struct sh_timing). */
static int d_cntr_app_change(const struct diff *d)
{
	int i;

	for (i = 0; i < d->s->nt; i++)
		if (d_cntr_app_change_in(d, d->s->t[i]))
			return 1;
	return 0;
}

/* sread and fi_cntr_wait on a wait-set member: lfpoll says -FI_ENOSYS
 * (wait on the set); the utility code waits on the set itself. */
static int d_block_on_set_member(const struct diff *d)
{
	const struct op *o = d->o;

	return ((o->kind == OP_CQ_SREAD && o->q == CQ_SET) ||
	        (o->kind == OP_CNTR_WAIT && o->q == CNTR_SET)) &&
	       d->a->ret == -FI_ENOSYS && d->base->ret != -FI_ENOSYS;
}

/* tcp gives an EQ opened with FI_WAIT_NONE a wait object of its own, so
 * sread works there; lfpoll (and udp) say -FI_ENOSYS. */
static int d_eq_none_sread(const struct diff *d)
{
	return d->o->kind == OP_EQ_SREAD && d->o->q == EQ_NONE &&
	       d->a->ret == -FI_ENOSYS && d->base->ret != -FI_ENOSYS;
}

/* A threshold on a CQ opened with FI_CQ_COND_THRESHOLD: lfpoll waits for
 * it; the utility CQ ignores it and returns what is there. */
static int d_cq_sread_threshold(const struct diff *d)
{
	const struct op *o = d->o;
	size_t want = o->threshold < o->count ? o->threshold : o->count;
	int n = d->s->cq_n[o->q];

	return o->kind == OP_CQ_SREAD && o->q == CQ_FD && d->s->threshold_cq &&
	       o->use_cond && n > 0 && (size_t)n < want &&
	       d->a->ret == -FI_EAGAIN && d->base->ret > 0;
}

/* readfrom on a CQ without FI_SOURCE: lfpoll writes FI_ADDR_NOTAVAIL for
 * each completion; the utility CQ leaves the array as it was. */
static int d_cq_readfrom_src(const struct diff *d)
{
	const struct op *o = d->o;
	char want[256] = "";
	long i;

	if (o->kind != OP_CQ_READFROM || d->a->ret != d->base->ret ||
	    strcmp(d->a->desc, d->base->desc) != 0)
		return 0;
	for (i = 0; i < d->a->ret; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), " %" PRIx64,
		         (uint64_t)FI_ADDR_NOTAVAIL);
	return strcmp(d->a->src, want) == 0;
}

static const struct divergence {
	const char *name;
	int (*match)(const struct diff *d);
} divergences[] = {
	{ "eq-error-first", d_eq_error_first },
	{ "eq-read-short", d_eq_read_short },
	{ "eq-overrun", d_eq_overrun },
	{ "eq-write-size", d_eq_write_size },
	{ "cntr-app-change", d_cntr_app_change },
	{ "block-on-set-member", d_block_on_set_member },
	{ "eq-none-sread", d_eq_none_sread },
	{ "cq-sread-threshold", d_cq_sread_threshold },
	{ "cq-readfrom-src", d_cq_readfrom_src },
};
#define NDIV (sizeof(divergences) / sizeof(divergences[0]))

/* ---------------------------------------------------------------- the run */

struct tally {
	unsigned long seqs, ops, seen[NDIV], unlisted;
	char first[NDIV][512];
};

static int verbose;

static void scen_both(struct pair *p, struct shadow *s, int threshold_cq)
{
	struct scen_cfg cfg = { .threshold_cq = threshold_cq, .cntr = p->cntr };

	memset(s, 0, sizeof(*s));
	s->nt = 1; /* nothing waited yet: the clock has decided nothing */
	s->profile = (int)below(3);
	s->threshold_cq = threshold_cq;
	s->cntr = p->cntr;
	scen_open(p->a, &cfg);
	scen_open(p->b, &cfg);
}

/* Close both; the error data the baseline still owns for entries it never
 * handed out is the caller's to free (its EQ frees only what was read). */
static void scen_both_close(struct pair *p, struct shadow *s)
{
	int q, i;

	scen_close(p->a);
	scen_close(p->b);
	for (q = 0; q < NEQ; q++)
		for (i = 0; i < s->eq_n[q]; i++)
			free(s->eq[q][i].util_err_data);
}

static int same(const struct res *x, const struct res *y)
{
	return x->ret == y->ret && x->ready == y->ready &&
	       strcmp(x->desc, y->desc) == 0 && strcmp(x->src, y->src) == 0;
}

/* One sequence of steps operations; 0, or 1 after an unlisted difference. */
static int sequence(struct pair *p, uint64_t seed, int steps, struct tally *t)
{
	struct shadow s, before;
	struct res ra, rb;
	struct diff d;
	struct op o;
	uint64_t token = 1;
	char text[256];
	int step, k, bad = 0;

	rng_state = seed;
	scen_both(p, &s, below(3) == 0);
	for (step = 0; step < steps; step++) {
		gen(&o, &s, p, &token);
		before = s;
		run(p->a, &o, &ra);
		run(p->b, &o, &rb);
		sh_update(&s, &o, &rb, p->b);
		t->ops++;
		op_text(&o, text, sizeof(text));
		if (verbose)
			printf("  %s: lfpoll %ld: %s | %s %ld: %s\n", text, ra.ret, ra.desc,
			       p->b->prov, rb.ret, rb.desc);
		if (same(&ra, &rb))
			continue;
		d.o = &o;
		d.s = &before;
		d.b = p->b;
		d.a = &ra;
		d.base = &rb;
		for (k = 0; k < (int)NDIV && !divergences[k].match(&d); k++)
			;
		if (k == (int)NDIV) {
			printf("fabdiff: UNLISTED difference, lfpoll vs %s, seed %" PRIu64
			       " step %d: %s\n    lfpoll: %ld: %s%s\n    %-6s: %ld: %s%s\n",
			       p->b->prov, seed, step, text, ra.ret, ra.desc, ra.src,
			       p->b->prov, rb.ret, rb.desc, rb.src);
			t->unlisted++;
			bad = 1;
		} else if (t->seen[k]++ == 0) {
			snprintf(t->first[k], sizeof(t->first[k]),
			         "seed %" PRIu64 " step %d: %s: lfpoll %ld, %s %ld",
			         seed, step, text, ra.ret, p->b->prov, rb.ret);
		}
		/* The two now hold different things: start both afresh. */
		scen_both_close(p, &s);
		scen_both(p, &s, below(3) == 0);
	}
	scen_both_close(p, &s);
	t->seqs++;
	return bad;
}

/* Every divergence name must be a row "| `name` |" of the guide. */
static int check_doc(const char *path)
{
	char line[1024], want[128];
	int found[NDIV] = { 0 }, ok = 1;
	size_t k;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		for (k = 0; k < NDIV; k++) {
			snprintf(want, sizeof(want), "| `%s` |", divergences[k].name);
			if (strncmp(line, want, strlen(want)) == 0)
				found[k] = 1;
		}
	fclose(f);
	for (k = 0; k < NDIV; k++)
		if (!found[k]) {
			printf("fabdiff: divergence %s is not listed in %s\n",
			       divergences[k].name, path);
			ok = 0;
		}
	return ok;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const struct pair *p, const struct tally *t)
{
	size_t k;

	printf("fabdiff: lfpoll vs %s: %lu sequences, %lu operations, %lu unlisted differences\n",
	       p->b->prov, t->seqs, t->ops, t->unlisted);
	for (k = 0; k < NDIV; k++)
		if (t->seen[k])
			printf("    %-20s %6lu  first: %s\n", divergences[k].name,
			       t->seen[k], t->first[k]);
}

/* The quick form's seeds. */
static const uint64_t quick_seeds[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 78, 79, 92, 103,
};

int main(int argc, char **argv)
{
	const char *doc = NULL, *which = "all";
	double seconds = 0, start;
	uint64_t seed = 0, s;
	int i, steps = 60, quick = 0, one = 0, bad = 0, np = 0;
	unsigned long count = 1, j;
	struct world lf, udp, tcp;
	struct pair pairs[2];
	struct tally tallies[2];
	size_t k;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--doc") && i + 1 < argc)
			doc = argv[++i];
		else if (!strcmp(argv[i], "--pair") && i + 1 < argc)
			which = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			one = 1;
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else if (!strcmp(argv[i], "--list")) {
			for (k = 0; k < NDIV; k++)
				printf("%s\n", divergences[k].name);
			return 0;
		} else {
			fprintf(stderr, "usage: fabdiff [--doc FILE] [--pair udp|tcp|all] "
			        "[--quick | --seconds N | --seed S [--count N] [--steps N]] "
			        "[--verbose] [--list]\n");
			return 2;
		}
	}
	if (doc && !check_doc(doc))
		return 1;
	if (!quick && !one && seconds <= 0)
		quick = 1;

	world_open(&lf, "lfpoll");
	memset(tallies, 0, sizeof(tallies));
	if (!strcmp(which, "udp") || !strcmp(which, "all")) {
		world_open(&udp, "udp");
		pairs[np++] = (struct pair){ &lf, &udp, 1, 0 };
	}
	if (!strcmp(which, "tcp") || !strcmp(which, "all")) {
		world_open(&tcp, "tcp");
		pairs[np++] = (struct pair){ &lf, &tcp, 0, 1 };
	}
	if (!np) {
		fprintf(stderr, "fabdiff: --pair udp, tcp or all\n");
		return 2;
	}

	start = now();
	if (one) {
		for (j = 0; j < count; j++)
			for (i = 0; i < np; i++)
				bad |= sequence(&pairs[i], seed + j, steps, &tallies[i]);
	} else if (quick) {
		for (i = 0; i < np; i++)
			for (k = 0; k < sizeof(quick_seeds) / sizeof(quick_seeds[0]); k++)
				bad |= sequence(&pairs[i], quick_seeds[k], steps, &tallies[i]);
	} else {
		/* Fresh seeds, from the clock, each one printed on failure. */
		s = (uint64_t)time(NULL) * 1000003u;
		while (now() - start < seconds) {
			for (i = 0; i < np; i++)
				bad |= sequence(&pairs[i], s, steps, &tallies[i]);
			s++;
		}
	}
	for (i = 0; i < np; i++)
		report(&pairs[i], &tallies[i]);
	/* The quick seeds show every listed divergence: one no longer seen
	 * was fixed (take it out of the list) or its condition went stale. */
	for (k = 0; quick && np == 2 && k < NDIV; k++)
		if (!tallies[0].seen[k] && !tallies[1].seen[k]) {
			printf("fabdiff: divergence %s was not seen on the quick seeds: "
			       "fixed (remove it from the table and the guide) or no "
			       "longer recognised\n", divergences[k].name);
			bad = 1;
		}
	if (!strcmp(which, "udp") || !strcmp(which, "all"))
		world_close(&udp);
	if (!strcmp(which, "tcp") || !strcmp(which, "all"))
		world_close(&tcp);
	world_close(&lf);
	printf("fabdiff: %s (%.1f s)\n",
	       bad ? "FAILED" : "every difference is a listed divergence",
	       now() - start);
	return bad;
}
