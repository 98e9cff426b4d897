/*
 * bench/cq.c: lfpoll's completion queue in the completion loop's idiom:
 * a provider writes completions one at a time, the application reads them
 * 32 at a time (lfp_cq_read(cq, buf, 32)).  Beside it, in the same rounds,
 * a bare lfp_ring in the same mode moving what the CQ moves, each
 * completion with its source address: the floor the CQ is built on.
 * libfabric has no call that writes into its CQs from outside a provider,
 * so it has no row here.
 *
 * Completions are struct lfp_cq_tagged_entry (48 bytes, FI_CQ_FORMAT_TAGGED's
 * size; with the address, 56).  Each carries its writer, sequence number
 * and a check word; readers reject torn completions and reordering, and
 * after each round the count, sum and hash-sum per writer must equal what
 * was written (bench_mt_check).
 *
 * The harness builds each completion on the writer's stack just before the
 * write, field by field, as a provider does: 8-byte stores, which a copy in
 * words (the SP/SC CQ's) reads back at once, and a wider copy (the ring's;
 * the default-mode CQ's where AVX is built in, after its claim's locked
 * RMW has drained them: include/lfpoll/cq.h, lfp__cq_copy) once the stores
 * drain.  The -wide cases build it with 16-byte stores instead: there the
 * ring and ring_mb are floors that no copy pattern favours.
 *
 * Cases (round-robin rounds, see harness.h):
 *   cq/pairs-b32       one thread: write 32 completions one at a time, read
 *                      them back with one read of 32   (ns per completion)
 *   cq/1w1r-b32        1 writer (single writes) + 1 reader (reads of up to
 *                      32) on two CPUs                 (ns per completion)
 *   cq/spsc-pairs-b32, cq/spsc-1w1r-b32   the same with the CQ and the ring
 *                      opened LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER,
 *                      lfpoll through lfp_cq_write_spsc and lfp_cq_read_spsc
 *   ...-wide           each of the four with completions built with 16-byte
 *                      stores
 *
 * The CQs here have no wait object.  Their writes make no fence while
 * the CQ is in no poll set, where the process-wide barrier lfp_poll_add
 * then makes is available (docs/design.md 4.1): the bare ring is their
 * floor.  Where it is not, every write makes the full barrier that orders
 * its publish before its look at the CQ's poll link, and ring_mb (the ring
 * with that barrier, below) is the floor.  The case's header says which.
 *
 * Target (as the EQ's): lfpoll within 1.1x of the bare ring in the same
 * mode; where the writes fence, or bounded by ring_mb in the same rounds.
 * --instr runs the one-thread cases once, for a fixed count (build with
 * -DBENCH_INSTR: each operation is a function of its own, op_*).
 */
#define _GNU_SOURCE
#include <lfpoll/cq.h>

#include "harness.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CQ_SIZE     1024
#define BURST       32
#define INSTR_ITEMS (1u << 16)
#define MODE_SPSC   (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER)

typedef struct lfp_cq_tagged_entry ent_t;

/* What a CQ slot holds: the completion, then its source address. */
struct slot {
	ent_t e;
	lfp_addr_t addr;
};

LFP_RING_PROTOTYPE(cqs, struct slot)

#define OP BENCH_OP
#define TEMPLATE BENCH_TEMPLATE

/* ------------------------------------------------------------ completions */

static inline uint64_t ev_mix(uint32_t w, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(w + 1) << 56) ^
	       0x2545f491u;
}

/*
 * Completions built 16 bytes at a time, for the -wide cases: the fields in
 * pairs, in their order in the tagged entry (LP64 only; elsewhere there
 * are no -wide cases).
 */
#if UINTPTR_MAX > 0xffffffffu
#define ENT_WIDE 1
typedef uint64_t ent_v2 __attribute__((vector_size(16)));
_Static_assert(offsetof(ent_t, flags) == 8 && offsetof(ent_t, len) == 16 &&
               offsetof(ent_t, buf) == 24 && offsetof(ent_t, data) == 32 &&
               offsetof(ent_t, tag) == 40 && sizeof(ent_t) == 48,
               "the tagged entry's fields in pairs");
#else
#define ENT_WIDE 0
#endif

static inline void ent_make(struct slot *s, uint32_t w, uint64_t seq,
                            int wide)
{
	ent_t *e = &s->e;

#if ENT_WIDE
	if (wide) {
		ent_v2 v[3] = {                 /* op_context, flags; */
			{ (uint64_t)(w + 1), seq ^ 0x5a5a },
			{ 0, 0 },               /* len, buf; data, tag */
			{ seq, ev_mix(w, seq) } };

		memcpy(e, v, sizeof(v));
		s->addr = LFP_ADDR_NOTAVAIL;
		return;
	}
#else
	(void)wide;
#endif

	s->addr = LFP_ADDR_NOTAVAIL;
	e->len = 0;
	e->buf = NULL;
	e->op_context = (void *)(uintptr_t)(w + 1);
	e->flags = seq ^ 0x5a5a;
	e->data = seq;
	e->tag = ev_mix(w, seq);
}

/* The writer of a well-formed completion, or -1 for a torn or foreign one. */
static inline int ent_writer(const ent_t *e, int nw)
{
	uintptr_t c = (uintptr_t)e->op_context;

	if (c < 1 || c > (uintptr_t)nw || e->flags != (e->data ^ 0x5a5a) ||
	    e->tag != ev_mix((uint32_t)(c - 1), e->data))
		return -1;
	return (int)(c - 1);
}

/* ------------------------------------------------------------ queues */

/* One implementation in one case. */
struct cctx {
	struct bench_mt mt;     /* threaded cases: 1 writer, 1 reader */
	const struct impl_def *impl;
	const struct case_def *cd;
	struct lfp_cq *cq;      /* lfpoll */
	struct lfp_ring *ring;  /* ring */
} __attribute__((aligned(128)));

/*
 * The operations, one pair per implementation, with what each queue takes
 * and gives and no copy of the harness's in between:
 *   write  s->e (the CQ) or *s (the ring): 0, 1 when full (retry), or a
 *          negative error
 *   read   up to BURST completions into buf, each at the stride the
 *          implementation's read gives (the CQ: a completion; the ring: a
 *          completion and its address): how many (0 when empty), or a
 *          negative error
 */
typedef int (*wr_fn)(struct cctx *c, const struct slot *s);
typedef int (*rd_fn)(struct cctx *c, void *buf);

/* A CQ write's and a CQ read's answer as wr_fn and rd_fn say. */
static inline int cq_wr_ret(ssize_t r)
{
	return r == 1 ? 0 : r == -EAGAIN ? 1 : r < 0 ? (int)r : -EPROTO;
}

static inline int cq_rd_ret(ssize_t r)
{
	return r == -EAGAIN ? 0 : (int)r;
}

OP int op_lfp_write(struct cctx *c, const struct slot *s)
{
	return cq_wr_ret(lfp_cq_write(c->cq, &s->e, 1));
}

OP int op_lfp_read(struct cctx *c, void *buf)
{
	return cq_rd_ret(lfp_cq_read(c->cq, buf, BURST));
}

#define STRIDE_lfp sizeof(ent_t)

/* SP/SC cases: the calls whose inline path is that mode's. */
OP int op_lfp_spsc_write(struct cctx *c, const struct slot *s)
{
	return cq_wr_ret(lfp_cq_write_spsc(c->cq, &s->e, 1));
}

OP int op_lfp_spsc_read(struct cctx *c, void *buf)
{
	return cq_rd_ret(lfp_cq_read_spsc(c->cq, buf, BURST));
}

#define STRIDE_lfp_spsc sizeof(ent_t)

OP int op_ring_write(struct cctx *c, const struct slot *s)
{
	int r = lfp_ring_enqueue_cqs(c->ring, s);

	return r == -EAGAIN ? 1 : r;
}

OP int op_ring_read(struct cctx *c, void *buf)
{
	return (int)lfp_ring_dequeue_burst_cqs(c->ring, (struct slot *)buf,
	                                       BURST);
}

#define STRIDE_ring sizeof(struct slot)

/*
 * ring_mb: the ring plus the one full barrier a CQ write makes after it
 * publishes (lfp__mb: design.md, the wake protocol's P2) when the CQ has a
 * wait object, or has none and the process-wide barrier is missing: the
 * floor of such a CQ, where the bare ring is the floor without it.
 */
OP int op_ring_mb_write(struct cctx *c, const struct slot *s)
{
	int r = lfp_ring_enqueue_cqs(c->ring, s);

	lfp__mb();
	return r == -EAGAIN ? 1 : r;
}

#define op_ring_mb_read op_ring_read
#define STRIDE_ring_mb STRIDE_ring

/* The i-th completion of a read's buf at stride st. */
static inline const ent_t *ent_at(const void *buf, size_t st, int i)
{
	return (const ent_t *)(const void *)((const char *)buf + st * (size_t)i);
}

/* ------------------------------------------------------------ one thread */

/* Write BURST completions from n on one at a time, read them back with one
 * read: 0, or bench_fail(). */
TEMPLATE int st_burst(struct cctx *c, uint64_t n, wr_fn wr, rd_fn rd,
                      size_t st, int wide)
{
	struct slot in, out[BURST];
	const ent_t *e;
	int i, ret;

	for (i = 0; i < BURST; i++) {
		ent_make(&in, 0, n + (uint64_t)i, wide);
		ret = wr(c, &in);
		if (ret)
			return bench_fail("write %d into an empty CQ: %s", i,
			                  ret > 0 ? "full" : lfp_strerror(ret));
	}
	ret = rd(c, out);
	if (ret != BURST)
		return bench_fail("read of %d after %d writes: %d", BURST, BURST,
		                  ret);
	for (i = 0; i < BURST; i++) {
		e = ent_at(out, st, i);
		if (ent_writer(e, 1) != 0 || e->data != n + (uint64_t)i)
			return bench_fail("completion %llu came back as %llu",
			                  (unsigned long long)(n + (uint64_t)i),
			                  (unsigned long long)e->data);
	}
	return 0;
}

TEMPLATE int st_run(void *arg, struct bench_round *r, wr_fn wr, rd_fn rd,
                    size_t st, int wide)
{
	struct cctx *c = arg;
	uint64_t n = 0, t0;

	t0 = bench_now_ns();
	do {
		if (st_burst(c, n, wr, rd, st, wide))
			return -1;
		n += BURST;
	} while (!bench_round_over(r, n, t0));
	r->ns = bench_now_ns() - t0;
	r->items = n;
	return 0;
}

/* ------------------------------------------------------------ threads */

TEMPLATE void *writer(struct bench_mt_worker *w, wr_fn wr, int wide)
{
	struct cctx *c = w->mt->ctx;
	struct bench_round mine = bench_mt_producer_round(w->mt);
	struct bench_spin sp = { 0 };
	uint32_t id = (uint32_t)w->id;
	uint64_t n = 0, t0;
	struct slot e;
	int k, ret;

	t0 = bench_now_ns();
	while (!bench_round_over(&mine, n, t0)) {
		for (k = 0; k < 256; k++, n++) {
			ent_make(&e, id, n, wide);
			while ((ret = wr(c, &e)) != 0) {
				if (ret < 0) {
					bench_fail("writer %u: %s", id,
					           lfp_strerror(ret));
					goto out;
				}
				if (bench_spin_fail(&sp))
					goto out;
			}
			bench_spin_ok(&sp);
		}
	}
out:
	bench_mt_producer_done(w->mt, w->id, n, sp.retries);
	return NULL;
}

TEMPLATE void *reader(struct bench_mt_worker *w, rd_fn rd, size_t st)
{
	struct cctx *c = w->mt->ctx;
	struct bench_mt_seen *s = &w->mt->seen[w->id];
	struct bench_spin sp = { 0 };
	struct slot buf[BURST];
	const ent_t *e;
	int done, ret, i, wr;

	for (;;) {
		done = bench_mt_all_produced(w->mt);
		ret = rd(c, buf);
		if (ret > 0) {
			bench_spin_ok(&sp);
			for (i = 0; i < ret; i++) {
				e = ent_at(buf, st, i);
				wr = ent_writer(e, w->mt->np);
				if (wr < 0) {
					bench_fail("torn or foreign completion "
					           "(data %llu)", (unsigned long long)
					           e->data);
					goto out;
				}
				if (bench_mt_take(w->mt, s, (uint32_t)wr,
				                  e->data, 1,
				                  ev_mix((uint32_t)wr, e->data)))
					goto out;
			}
			continue;
		}
		if (ret < 0) {
			bench_fail("reader: %s", lfp_strerror(ret));
			break;
		}
		if (done || bench_spin_fail(&sp))
			break;
	}
out:
	s->retries = sp.retries;
	return NULL;
}

static uint64_t mt_hash(uint32_t w, uint64_t seq)
{
	return ev_mix(w, seq);
}

static int mt_check(void *arg, const struct bench_round *r)
{
	(void)r;
	return bench_mt_check(&((struct cctx *)arg)->mt);
}

/* ------------------------------------------------------------ impls, cases */

struct impl_def {
	const char *name;
	int is_cq;
	bench_run_fn pairs, mt;                 /* completions by fields */
	bench_run_fn pairs_wide, mt_wide;       /* by 16-byte stores */
};

#define INSTANTIATE_AS(X, W, wide)                                             \
static int pairs##W##_##X(void *a, struct bench_round *r)                      \
{ return st_run(a, r, op_##X##_write, op_##X##_read, STRIDE_##X, wide); }      \
static void *writer##W##_##X(void *w)                                          \
{ return writer(w, op_##X##_write, wide); }                                    \
static int mt##W##_##X(void *a, struct bench_round *r)                         \
{ return bench_mt_run(&((struct cctx *)a)->mt, r, writer##W##_##X,            \
                      reader_##X); }
#define INSTANTIATE(X)                                                         \
static void *reader_##X(void *w)                                               \
{ return reader(w, op_##X##_read, STRIDE_##X); }                               \
INSTANTIATE_AS(X, , 0)                                                         \
INSTANTIATE_AS(X, _wide, 1)
#define IMPL_DEF(name, is_cq, X)                                               \
	{ name, is_cq, pairs_##X, mt_##X, pairs_wide_##X, mt_wide_##X }

INSTANTIATE(lfp)
INSTANTIATE(lfp_spsc)
INSTANTIATE(ring)
INSTANTIATE(ring_mb)

static const struct impl_def impls[] = {
	IMPL_DEF("lfpoll", 1, lfp),
	IMPL_DEF("ring", 0, ring),
	IMPL_DEF("ring_mb", 0, ring_mb),
};
#define NIMPL BENCH_LEN(impls)

/* lfpoll in the SP/SC cases: lfp_cq_write_spsc and lfp_cq_read_spsc, the
 * calls an SP/SC CQ's users make.  It takes lfpoll's place there. */
static const struct impl_def impl_lfp_spsc = IMPL_DEF("lfpoll", 1, lfp_spsc);

/*
 * The ring's ns over lfpoll's: "at most 1.1x the bare ring's ns".  Where
 * the CQ's writes fence (cq_fenced), a miss is bounded when ring_mb, the
 * ring with that barrier alone, misses too.  The -wide cases have no
 * target: they show what the CQ and its floors cost when the harness's
 * stores favour neither copy.
 */
static const struct bench_target t_cq[] = {
	{ "ring", BENCH_AT_MOST(1.1), NULL, NULL }
};
static const struct bench_target t_cq_fenced[] = {
	{ "ring", BENCH_AT_MOST(1.1), "ring_mb", NULL }
};
static int cq_fenced;   /* a CQ with no wait object fences its writes here */

#define WIDE_LABEL " (-wide: completions built with 16-byte stores)"

static const struct case_def {
	const char *name, *label;
	int threaded;
	uint64_t mode;          /* the CQ's and the ring's ring mode */
	int wide;               /* completions built with 16-byte stores */
} cases[] = {
	{ "cq/pairs-b32", "one thread: 32 single writes, one read of 32 "
	  "(tagged completions)", 0, 0, 0 },
	{ "cq/1w1r-b32", "1 writer (single writes) + 1 reader (reads of up "
	  "to 32) on 2 CPUs", 1, 0, 0 },
	{ "cq/spsc-pairs-b32", "cq/pairs-b32 with the CQ and the ring in "
	  "SP/SC mode", 0, MODE_SPSC, 0 },
	{ "cq/spsc-1w1r-b32", "cq/1w1r-b32 with the CQ and the ring in SP/SC "
	  "mode", 1, MODE_SPSC, 0 },
#if ENT_WIDE /* elsewhere the -wide cases would be the same as the others */
	{ "cq/pairs-b32-wide", "cq/pairs-b32" WIDE_LABEL, 0, 0, 1 },
	{ "cq/1w1r-b32-wide", "cq/1w1r-b32" WIDE_LABEL, 1, 0, 1 },
	{ "cq/spsc-pairs-b32-wide", "cq/spsc-pairs-b32" WIDE_LABEL, 0,
	  MODE_SPSC, 1 },
	{ "cq/spsc-1w1r-b32-wide", "cq/spsc-1w1r-b32" WIDE_LABEL, 1,
	  MODE_SPSC, 1 },
#endif
};
#define NCASE BENCH_LEN(cases)

static struct cctx cctxs[NCASE][NIMPL];

static int cctx_setup(void *arg)
{
	struct cctx *c = arg;
	struct lfp_cq_attr a = {
		.size = CQ_SIZE,
		.format = LFP_CQ_FORMAT_TAGGED,
		.flags = c->cd->mode,
	};
	int ret;

	if (c->impl->is_cq)
		ret = lfp_cq_open(&a, &c->cq, NULL);
	else
		ret = lfp_ring_create_flags(CQ_SIZE, sizeof(struct slot),
		                            c->cd->mode, &c->ring);
	return ret ? bench_fail("open: %s", lfp_strerror(ret)) : 0;
}

static void cctx_teardown(void *arg)
{
	struct cctx *c = arg;

	if (c->cq)
		lfp_cq_close(c->cq);
	lfp_ring_destroy(c->ring);
	c->cq = NULL;
	c->ring = NULL;
}

static void run_cq_case(size_t ci)
{
	const struct case_def *cd = &cases[ci];
	struct bench_impl bi[NIMPL];
	struct bench_case bc = {
		.name = cd->name,
		.label = cd->label,
		.threads = cd->threaded ? 2 : 1,
		.impls = bi,
		.n_impls = NIMPL,
		.targets = cd->wide ? NULL : cq_fenced ? t_cq_fenced : t_cq,
		.n_targets = cd->wide ? 0 : 1,
		.check = cd->threaded ? mt_check : NULL,
		.instr_items = cd->threaded ? 0 : INSTR_ITEMS,
	};
	size_t ii;

	for (ii = 0; ii < NIMPL; ii++) {
		struct cctx *c = &cctxs[ci][ii];

		c->impl = cd->mode && ii == 0 ? &impl_lfp_spsc : &impls[ii];
		c->cd = cd;
		c->mt = (struct bench_mt){
			.np = 1, .nc = 1, .ctx = c, .hash = mt_hash,
			.who = "writer", .made = "written", .took = "read",
		};
		bi[ii] = (struct bench_impl){
			.name = c->impl->name,
			.arg = c,
			.setup = cctx_setup,
			.teardown = cctx_teardown,
			.run = cd->threaded ? (cd->wide ? c->impl->mt_wide :
			                                  c->impl->mt) :
			       cd->wide ? c->impl->pairs_wide : c->impl->pairs,
		};
	}
	bench_case_run(&bc);
}

int main(int argc, char **argv)
{
	struct lfp_cq_attr a = { .size = CQ_SIZE, .format = LFP_CQ_FORMAT_TAGGED };
	struct lfp_cq *cq;
	size_t ci;

	bench_init("cq", argc, argv);
	if (lfp_cq_open(&a, &cq, NULL) == 0) {
		cq_fenced = !cq->fid.asym;
		lfp_cq_close(cq);
	}
	printf("# cq: writes of a CQ with no wait object %s\n", cq_fenced ?
	       "make a full barrier here (no process-wide barrier): ring_mb is "
	       "their floor" : "make no fence while it is in no poll set: the "
	       "ring is their floor");
	for (ci = 0; ci < NCASE; ci++)
		run_cq_case(ci);
	return bench_finish();
}
