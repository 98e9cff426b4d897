/*
 * bench/eq_queue.h: the event queues of the EQ benchmarks (bench/eq.c,
 * bench/rtt.c) behind one set of operations: lfpoll's EQ (the subject),
 * a bare lfp_ring moving the same entries (the floor the EQ is built on),
 * and libfabric's EQ (bench/peer_fabric.h).  Every event carries the same
 * 24-byte payload, struct fi_eq_entry's size, with its writer, sequence
 * number and a check word.
 *
 * A program that routes LFP_SPIN_COUNT through a variable (bench/rtt.c)
 * defines it before including this file.
 */
#ifndef LFPOLL_BENCH_EQ_QUEUE_H
#define LFPOLL_BENCH_EQ_QUEUE_H

#include <lfpoll/eq.h>

#include "harness.h"
#include "peer_fabric.h"

#include <errno.h>
#include <string.h>

#define EQ_SIZE       1024

typedef struct lfp_eq_entry ent_t;

#ifdef HAVE_FABRIC
_Static_assert(sizeof(struct lfp_eq_entry) == sizeof(struct fi_eq_entry),
               "lfpoll and libfabric EQ entries have the same size");
#  define ENTRY_SIZE sizeof(struct fi_eq_entry)
#else
#  define ENTRY_SIZE sizeof(struct lfp_eq_entry)
#endif

#define OP BENCH_OP
#define TEMPLATE BENCH_TEMPLATE

/* ------------------------------------------------------------ events */

static inline uint64_t ev_mix(uint32_t w, uint64_t seq)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(w + 1) << 56) ^
	       0x5bd1e995u;
}

static inline void ent_make(ent_t *e, uint32_t w, uint64_t seq)
{
	e->fid = (struct lfp_fid *)(uintptr_t)ev_mix(w, seq);
	e->context = (void *)(uintptr_t)(w + 1);
	e->data = seq;
}

/* The writer of a well-formed event, or -1 for a torn or foreign one. */
static inline int ent_writer(const ent_t *e, int nw)
{
	uintptr_t c = (uintptr_t)e->context;

	if (c < 1 || c > (uintptr_t)nw)
		return -1;
	if ((uintptr_t)e->fid != (uintptr_t)ev_mix((uint32_t)(c - 1), e->data))
		return -1;
	return (int)(c - 1);
}

/* ------------------------------------------------------------ queues */

/* The queue kinds, and in bench/rtt.c the wake floors (peer_wake.h). */
enum kind { K_LFP, K_RING, K_FI, K_EFD, K_FUTEX, K_COND };
enum wobj { WO_NONE, WO_FD, WO_UNSPEC, WO_MCOND };

struct q {
	struct lfp_eq *leq;
	struct lfp_fid *lfid;
	struct lfp_ring *ring;  /* K_RING */
#ifdef HAVE_FABRIC
	struct fi_q fi;
#endif
};

#ifdef HAVE_FABRIC
#  define FI_WAIT(x) x
#else
#  define FI_WAIT(x) 0
#endif

/* enum wobj as lfpoll's and libfabric's wait objects. */
static const struct {
	enum lfp_wait_obj lfp;
	int fi;                 /* enum fi_wait_obj */
} wait_objs[] = {
	[WO_NONE] = { LFP_WAIT_NONE, FI_WAIT(FI_WAIT_NONE) },
	[WO_FD] = { LFP_WAIT_FD, FI_WAIT(FI_WAIT_FD) },
	[WO_UNSPEC] = { LFP_WAIT_UNSPEC, FI_WAIT(FI_WAIT_UNSPEC) },
	[WO_MCOND] = { LFP_WAIT_MUTEX_COND, FI_WAIT(FI_WAIT_MUTEX_COND) },
};

/*
 * Open a queue of kind k: an EQ with wait object w (and, for lfpoll, the
 * extra attribute flags: LFP_EQ_BACKPRESSURE, the ring modes), or a bare
 * ring (in the ring modes among flags).  0, or bench_fail().
 */
static inline int q_open(struct q *q, enum kind k, struct fab *f, enum wobj w,
                         uint64_t flags)
{
	int ret;

	memset(q, 0, sizeof(*q));
	if (k == K_LFP) {
		struct lfp_eq_attr a = {
			.size = EQ_SIZE,
			.flags = LFP_WRITE | flags,
			.wait_obj = wait_objs[w].lfp,
			.entry_size = ENTRY_SIZE,
		};

		ret = lfp_eq_open(&a, &q->leq, NULL);
		if (ret)
			return bench_fail("lfp_eq_open: %s", lfp_strerror(ret));
		q->lfid = &q->leq->fid;
		return 0;
	}
	if (k == K_RING) {
#ifdef LFP_SINGLE_PRODUCER
		ret = lfp_ring_create_flags(EQ_SIZE, sizeof(ent_t),
		                            flags & (LFP_SINGLE_PRODUCER |
		                                     LFP_SINGLE_CONSUMER),
		                            &q->ring);
#else
		ret = lfp_ring_create(EQ_SIZE, sizeof(ent_t), &q->ring);
#endif
		if (ret)
			return bench_fail("lfp_ring_create: %s", lfp_strerror(ret));
		return 0;
	}
#ifdef HAVE_FABRIC
	if (k == K_FI)
		return fiq_open(&q->fi, f, EQ_SIZE, wait_objs[w].fi);
#else
	(void)f;
#endif
	return bench_fail("no EQ of this kind");
}

static inline void q_close(struct q *q)
{
	if (q->leq)
		lfp_eq_close(q->leq);
	lfp_ring_destroy(q->ring);
#ifdef HAVE_FABRIC
	fiq_close(&q->fi);
#endif
	memset(q, 0, sizeof(*q));
}

/*
 * EQ operations, one set per kind, all with these shapes:
 *   write    0, 1 when full (retry), or a negative error
 *   read     1 with an event, 0 when empty, or a negative error
 *   trywait  0 (safe to block), or a negative error (-EAGAIN: work pending)
 *   sread    1 with an event, 0 when the timeout expired, or an error
 */
typedef int (*wr_fn)(struct q *q, const ent_t *e);
typedef int (*rd_fn)(struct q *q, ent_t *e, int peek);
typedef int (*tw_fn)(struct q *q);
typedef int (*sr_fn)(struct q *q, ent_t *e, int timeout);

/* ---- lfpoll */

/* A write's result as wr_fn says, from lfp_eq_write's (or the SP/SC
 * call's) answer. */
OP int lfp_wr_ret(ssize_t r, const ent_t *e)
{
	if (r == (ssize_t)sizeof(*e))
		return 0;
	return r == -EAGAIN ? 1 : (int)r;
}

/* A read's (or sread's) result as rd_fn says, from the call's answer and
 * the event code it stored in *ev (only on success). */
OP int lfp_rd_ret(ssize_t r, const uint32_t *ev, const ent_t *e)
{
	if (r == (ssize_t)sizeof(*e))
		return *ev == LFP_NOTIFY ? 1 : -EPROTO;
	return r == -EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

OP int op_lfp_write(struct q *q, const ent_t *e)
{
	return lfp_wr_ret(lfp_eq_write(q->leq, LFP_NOTIFY, e, sizeof(*e), 0), e);
}

OP int op_lfp_read(struct q *q, ent_t *e, int peek)
{
	uint32_t ev;
	ssize_t r = lfp_eq_read(q->leq, &ev, e, sizeof(*e),
	                        peek ? LFP_PEEK : 0);

	return lfp_rd_ret(r, &ev, e);
}

OP int op_lfp_trywait(struct q *q)
{
	return lfp_trywait(&q->lfid, 1);
}

OP int op_lfp_sread(struct q *q, ent_t *e, int timeout)
{
	uint32_t ev;
	ssize_t r = lfp_eq_sread(q->leq, &ev, e, sizeof(*e), timeout, 0);

	return lfp_rd_ret(r, &ev, e);
}

/* ---- lfpoll in SP/SC mode: the calls that inline that mode's path */
#ifdef LFP_SINGLE_PRODUCER
OP int op_lfp_spsc_write(struct q *q, const ent_t *e)
{
	return lfp_wr_ret(lfp_eq_write_spsc(q->leq, LFP_NOTIFY, e, sizeof(*e),
	                                    0), e);
}

OP int op_lfp_spsc_read(struct q *q, ent_t *e, int peek)
{
	uint32_t ev;
	ssize_t r = lfp_eq_read_spsc(q->leq, &ev, e, sizeof(*e),
	                             peek ? LFP_PEEK : 0);

	return lfp_rd_ret(r, &ev, e);
}

/* trywait has no mode of its own. */
#define op_lfp_spsc_trywait op_lfp_trywait
#endif

/* ---- the raw ring: the same entries in an lfp_ring, the EQ's floor */

LFP_RING_PROTOTYPE(ent, ent_t)

OP int op_ring_write(struct q *q, const ent_t *e)
{
	int r = lfp_ring_enqueue_ent(q->ring, e);

	return r == -EAGAIN ? 1 : r;
}

OP int op_ring_read(struct q *q, ent_t *e, int peek)
{
	uint64_t ticket;
	ssize_t r;
	int ret;

	if (!peek) {
		ret = lfp_ring_dequeue_ent(q->ring, e);
		return ret == 0 ? 1 : ret == -EAGAIN ? 0 : ret;
	}
	r = lfp_ring_peek(q->ring, e, sizeof(*e), &ticket);
	if (r == (ssize_t)sizeof(*e))
		return 1;
	return r == -EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

OP int op_ring_trywait(struct q *q)
{
	(void)q;
	return -ENOSYS; /* a ring has no wait object: not in the impl table */
}

/* ---- libfabric */
#ifdef HAVE_FABRIC

OP int op_fi_write(struct q *q, const ent_t *e)
{
	return fiq_write(&q->fi, e, sizeof(*e));
}

OP int op_fi_read(struct q *q, ent_t *e, int peek)
{
	return fiq_read(&q->fi, e, sizeof(*e), peek);
}

OP int op_fi_trywait(struct q *q)
{
	return fiq_trywait(&q->fi);
}

OP int op_fi_sread(struct q *q, ent_t *e, int timeout)
{
	return fiq_sread(&q->fi, e, sizeof(*e), timeout);
}
#endif /* HAVE_FABRIC */

static inline const char *err_str(int err)
{
#ifdef HAVE_FABRIC
	return fi_strerror(err < 0 ? -err : err);
#else
	return lfp_strerror(err);
#endif
}

#endif /* LFPOLL_BENCH_EQ_QUEUE_H */
