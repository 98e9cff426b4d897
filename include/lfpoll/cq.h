/*
 * lfpoll completion queue: fixed-format completions on a lock-free ring,
 * a separate error queue, sread with a threshold, and fi_cq_signal.
 *
 * The producer side (lfp_cq_write, lfp_cq_writeerr) is what a completion
 * source calls; it never blocks and makes no system call while nobody
 * waits.  A full CQ refuses further completions with -EAGAIN (the source
 * keeps them and retries): completions are never dropped.
 */
#ifndef LFPOLL_CQ_H
#define LFPOLL_CQ_H

#include "common.h"
#include "ring.h"
#include "internal/object.h"
#include "internal/errq.h"

#ifdef __cplusplus
extern "C" {
#endif

enum lfp_cq_format {
	LFP_CQ_FORMAT_CONTEXT,
	LFP_CQ_FORMAT_MSG,
	LFP_CQ_FORMAT_DATA,
	LFP_CQ_FORMAT_TAGGED,
	LFP_CQ_FORMAT_UNSPEC        /* let lfpoll choose: CONTEXT */
};

/* How lfp_cq_sread interprets its cond argument (fi_cq(3)'s wait_cond). */
enum lfp_cq_wait_cond {
	LFP_CQ_COND_NONE,           /* cond ignored: any completion will do */
	LFP_CQ_COND_THRESHOLD       /* cond points to a size_t threshold */
};

/* A completion's source address (fi_addr_t); NOTAVAIL when none was given. */
typedef uint64_t lfp_addr_t;
#define LFP_ADDR_NOTAVAIL (~(lfp_addr_t)0)

struct lfp_cq_entry {
	void *op_context;
};

struct lfp_cq_msg_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
};

struct lfp_cq_data_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
};

struct lfp_cq_tagged_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
};

struct lfp_cq_err_entry {
	void *op_context;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	size_t olen;
	int err;
	int prov_errno;
	void *err_data;
	size_t err_data_size;
};

struct lfp_cq_attr {
	size_t size;                  /* capacity, a minimum; 0 = default */
	uint64_t flags;               /* LFP_AFFINITY or 0 */
	enum lfp_cq_format format;
	enum lfp_wait_obj wait_obj;
	int signaling_vector;         /* accepted, unused */
	enum lfp_cq_wait_cond wait_cond; /* what sread's cond means */
	struct lfp_wait *wait_set;    /* with LFP_WAIT_SET */
};

#define LFP_CQ_DEFAULT_SIZE  1024
#define LFP_CQ_ERR_CAPACITY  256  /* error entries queued at most */
#define LFP_CQ_ERR_DATA_MAX  64   /* bytes of provider error data per error */

#define LFP__CQ_OPEN_FLAGS (LFP_AFFINITY | LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER)

struct lfp_cq {
	struct lfp_fid fid;
	struct lfp_ring entries;
	struct lfp__errq errq;
	struct lfp__waitable w;
	enum lfp_cq_format format;
	enum lfp_cq_wait_cond wait_cond;
	size_t entry_size;
	/* Set by bindings: names provider errors in lfp_cq_strerror. */
	const char *(*prov_strerror)(int prov_errno, const void *err_data);
	/* lfp_cq_signal calls, and how many of them some sread has returned
	 * for; 64-bit, so neither wraps in practice. */
	uint64_t signals LFP__ALIGN8;
	uint64_t signals_seen LFP__ALIGN8;
	struct lfp_poll_link link;
	struct lfp__signal own;
};

LFP_INLINE size_t lfp__cq_entry_size(enum lfp_cq_format f)
{
	switch (f) {
	case LFP_CQ_FORMAT_UNSPEC:
	case LFP_CQ_FORMAT_CONTEXT: return sizeof(struct lfp_cq_entry);
	case LFP_CQ_FORMAT_MSG:     return sizeof(struct lfp_cq_msg_entry);
	case LFP_CQ_FORMAT_DATA:    return sizeof(struct lfp_cq_data_entry);
	case LFP_CQ_FORMAT_TAGGED:  return sizeof(struct lfp_cq_tagged_entry);
	default:                    return 0;
	}
}

LFP_INLINE int lfp__cq_ready(void *arg)
{
	struct lfp_cq *cq = (struct lfp_cq *)arg;

	return lfp__ring_ready(&cq->entries) || lfp__errq_ready(&cq->errq);
}

LFP_INLINE void lfp__cq_fini(void *obj)
{
	struct lfp_cq *cq = (struct lfp_cq *)obj;

	lfp__errq_fini(&cq->errq);
	lfp__ring_free_mem(&cq->entries);
	free(cq);
}

static const struct lfp__class lfp__cq_class = {
	{ lfp__obj_close, lfp__obj_control, lfp__obj_trywait, lfp__obj_ready, NULL,
	  lfp__obj_poll_link },
	LFP_CLASS_CQ, offsetof(struct lfp_cq, w), offsetof(struct lfp_cq, link),
	lfp__cq_ready, NULL, lfp__cq_fini
};

/*
 * Open a CQ.  attr NULL: defaults (CONTEXT format, 1024 entries, wait NONE).
 * -EINVAL for a bad format, wait object or flags, SET without a wait set.
 */
LFP_INLINE int lfp_cq_open(const struct lfp_cq_attr *attr, struct lfp_cq **cqp,
                           void *context)
{
	struct lfp_cq_attr a;
	struct lfp_cq *cq;
	size_t cap, esz, bytes;
	int ret;

	if (!cqp)
		return -EINVAL;
	*cqp = NULL; /* written on every path (see lfp__neg_errno) */
	memset(&a, 0, sizeof(a));
	if (attr)
		a = *attr;
	esz = lfp__cq_entry_size(a.format);
	if (!esz || (a.flags & ~LFP__CQ_OPEN_FLAGS) || a.size > LFP_RING_MAX_CAPACITY ||
	    (a.wait_cond != LFP_CQ_COND_NONE && a.wait_cond != LFP_CQ_COND_THRESHOLD) ||
	    lfp__waitable_check(a.wait_obj, a.wait_set))
		return -EINVAL;
	if (a.format == LFP_CQ_FORMAT_UNSPEC)
		a.format = LFP_CQ_FORMAT_CONTEXT;
	cap = lfp__pow2_at_least(a.size ? a.size : LFP_CQ_DEFAULT_SIZE);
	/* A slot holds the completion, then its source address. */
	bytes = lfp_ring_memsize_flags(cap, esz + sizeof(lfp_addr_t),
	                               a.flags & LFP__RING_FLAGS);
	if (!bytes)
		return -EINVAL;
	cq = (struct lfp_cq *)lfp__obj_new(&lfp__cq_class, sizeof(*cq), context);
	if (!cq)
		return -ENOMEM;
	if (lfp__ring_alloc(&cq->entries, cap, esz + sizeof(lfp_addr_t),
	                    a.flags & LFP__RING_FLAGS)) {
		free(cq);
		return -ENOMEM;
	}
	ret = lfp__errq_init(&cq->errq, cap < LFP_CQ_ERR_CAPACITY ? cap : LFP_CQ_ERR_CAPACITY,
	                     sizeof(struct lfp_cq_err_entry), LFP_CQ_ERR_DATA_MAX);
	if (ret) {
		lfp__ring_free_mem(&cq->entries);
		free(cq);
		return ret;
	}
	cq->format = a.format;
	cq->wait_cond = a.wait_cond;
	cq->entry_size = esz;
	lfp__poll_link_init(&cq->link, &cq->fid, 0);
	ret = lfp__obj_open_wait(&cq->fid, &cq->own, a.wait_obj, a.wait_set);
	if (ret)
		return ret;
	/* No wait object: writes make no fence while the CQ is in no poll
	 * set, where the process-wide barrier is available (poll_link.h). */
	cq->fid.asym = !cq->w.sig && lfp__asym_ready();
	*cqp = cq;
	return 0;
}

/*
 * Close: -EBUSY while in a poll set (lfp_poll_del it first).  Queued
 * completions are discarded; a wait-set member leaves the set.
 */
LFP_INLINE int lfp_cq_close(struct lfp_cq *cq)
{
	return cq ? lfp__obj_close(&cq->fid) : -EINVAL;
}

/*
 * Copy n bytes, n a CQ format's size: a multiple of 8 with 8-byte
 * pointers, of 4 with 4-byte ones (copied 4 bytes a step there: 8 bytes a
 * step wrote past a 4-, 28- or 36-byte entry).  The CQ's entry size is
 * known only at run time, and a memcpy of a run-time size is a call.  For
 * the inline single-entry calls and every write: small at the call site
 * (16 bytes a step made those 30 bytes longer), and an entry the caller
 * has just built field by field is read with loads of its stores' width,
 * which take their data from those stores (16-byte loads of it wait for
 * them to drain).  No reader peeks at a CQ's slots, so plain copies
 * suffice.
 */
LFP_FORCE_INLINE void lfp__cq_copy(void *dst, const void *src, size_t n,
                                   int wide)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
#if UINTPTR_MAX > 0xffffffffu
	uint64_t w;
#else
	uint32_t w;
#endif
	size_t i;

	i = 0;
#if defined(__AVX__) && UINTPTR_MAX > 0xffffffffu
	/* wide: an entry of 32 to 64 bytes (DATA, TAGGED; one compare: m - 32
	 * wraps below 32) in two 32-byte moves that overlap, not four to six
	 * words, where 32-byte moves are single instructions.  For a write
	 * right after a locked RMW (the claim of the default mode): the RMW
	 * drained the caller's stores, so 32-byte loads of an entry it has
	 * just built field by field wait for nothing; and a writer on
	 * another core than the reader stores into a line the reader holds,
	 * where each store waits in the store buffer for the line: the fewer
	 * they are, the more writes fit in flight (docs/performance-history.md,
	 * "CQ writes across cores").  Without the RMW (SP/SC), those loads wait
	 * for the stores they span, and the words are faster.
	 * The empty asm gives the branch copies of the size and pointers that
	 * gcc knows nothing of, at no instruction: with the originals, it
	 * sees 32-byte moves out of a caller's smaller entry here, and a size
	 * it knows to be outside 32..64 in the loop below, and warns of
	 * overflows that n rules out at run time. */
	if (wide) {
		typedef unsigned char lfp__v32 __attribute__((vector_size(32)));
		const unsigned char *s2 = s;
		unsigned char *d2 = d;
		size_t m = n;
		lfp__v32 lo, hi; /* vectors: a byte array here went through the stack */

		__asm__("" : "+r"(d2), "+r"(s2), "+r"(m));
		if (m - 32 <= 32) {
			memcpy(&lo, s2, 32);
			memcpy(&hi, s2 + m - 32, 32);
			memcpy(d2, &lo, 32);
			memcpy(d2 + m - 32, &hi, 32);
			return;
		}
	}
#else
	(void)wide;
#endif
	/* One to six words: clang would vectorise and unroll the loop, with
	 * overlap checks, six times the code at every call site. */
#ifdef __clang__
	_Pragma("clang loop vectorize(disable) unroll(disable)")
#endif
	do { /* n >= sizeof(w), a multiple of it */
		memcpy(&w, s + i, sizeof(w));
		memcpy(d + i, &w, sizeof(w));
		i += sizeof(w);
	} while (i < n);
}

/*
 * Copy the k claimed completions from first on into d, their source
 * addresses into src_addr[] when it is not NULL, and free each per-slot
 * slot (an index ring's go back with the caller's commit, I4).  Inlined
 * with each format's size as esz (lfp__cq_take_each), where each copy is
 * a memcpy of a constant size: a few moves, no call.
 */
LFP_FORCE_INLINE void lfp__cq_take_n(const struct lfp__ring_geo *g,
                                     uint64_t first, size_t k,
                                     unsigned char *d, lfp_addr_t *src_addr,
                                     size_t esz)
{
	const unsigned char *s;
	size_t i;

	for (i = 0; i < k; i++, d += esz) {
		s = lfp__ring_data(g, first + i);
		memcpy(d, s, esz);
		if (src_addr)
			src_addr[i] =
				*(const lfp_addr_t *)(const void *)(s + esz);
		lfp__ring_free(g, first + i);
	}
}

/* lfp__cq_take_n with esz a constant for each format's size. */
LFP_FORCE_INLINE void lfp__cq_take_each(const struct lfp__ring_geo *g,
                                        uint64_t first, size_t k,
                                        unsigned char *d,
                                        lfp_addr_t *src_addr, size_t esz)
{
#define LFP__CQ_TAKE_AS(T)                                                     \
	case sizeof(T):                                                        \
		lfp__cq_take_n(g, first, k, d, src_addr, sizeof(T));           \
		break
	switch (esz) {
	LFP__CQ_TAKE_AS(struct lfp_cq_entry);
	LFP__CQ_TAKE_AS(struct lfp_cq_msg_entry);
	LFP__CQ_TAKE_AS(struct lfp_cq_data_entry);
	LFP__CQ_TAKE_AS(struct lfp_cq_tagged_entry);
	default: /* no format has another size */
		lfp__cq_take_n(g, first, k, d, src_addr, esz);
		break;
	}
#undef LFP__CQ_TAKE_AS
}

/* Fill the claimed slot at pos with one completion and its source
 * address (NULL: none); the caller publishes it as its mode does. */
LFP_FORCE_INLINE void lfp__cq_put_one(const struct lfp__ring_geo *g,
                                      uint64_t pos, const void *entry,
                                      const lfp_addr_t *src_addr, size_t esz,
                                      int wide)
{
	unsigned char *d = lfp__ring_data(g, pos);

	lfp__cq_copy(d, entry, esz, wide);
	*(lfp_addr_t *)(void *)(d + esz) = src_addr ? *src_addr : LFP_ADDR_NOTAVAIL;
}

/* Copy the claimed completion at pos, and its source address when src_addr
 * is not NULL, out of its slot; the caller gives the slot back. */
LFP_FORCE_INLINE void lfp__cq_take_one(const struct lfp__ring_geo *g,
                                       uint64_t pos, void *buf,
                                       lfp_addr_t *src_addr, size_t esz)
{
	const unsigned char *s = lfp__ring_data(g, pos);

	/* gcc -O3 unrolls the copy's loop and warns of stores past a caller's
	 * smaller entry in iterations that esz rules out at run time
	 * (-Wstringop-overflow): the empty asm, no instruction, hides what
	 * buf points to. */
	__asm__("" : "+r"(buf));
	lfp__cq_copy(buf, s, esz, 0);
	if (src_addr)
		*src_addr = *(const lfp_addr_t *)(const void *)(s + esz);
}

/* lfp_cq_writefrom whole, out of line: bursts (the entry size is known
 * only at run time, so an inline copy would gain nothing), every mode, and
 * whatever a single entry's inline attempt could not do. */
LFP_OUTLINE ssize_t lfp__cq_writefrom_slow(struct lfp_cq *cq, const void *entries,
                                           const lfp_addr_t *src_addr,
                                           size_t count)
{
	const unsigned char *s = (const unsigned char *)entries;
	struct lfp__ring_geo g;
	uint64_t pos = 0;
	size_t k, i, esz;
	int wide;

	if (!cq || !entries || count == 0)
		return -EINVAL;
	esz = cq->entry_size;
	g = lfp__ring_geo(&cq->entries);
	lfp__side_enter(&cq->entries, 1);
	k = lfp__ring_claim_prod(&cq->entries, &g, count, &pos);
	if (!k) {
		lfp__side_leave(&cq->entries, 1);
		return -EAGAIN;
	}
	wide = !(g.mode & LFP__RING_SP); /* its claim was a locked CAS */
	for (i = 0; i < k; i++) {
		lfp__cq_put_one(&g, pos + i, s + i * esz,
		                src_addr ? src_addr + i : NULL, esz, wide);
		lfp__ring_publish(&cq->entries, &g, pos + i,
		                  (uint32_t)(esz + sizeof(lfp_addr_t))); /* P1 */
	}
	lfp__ring_commit_prod(&cq->entries, &g, pos, k);
	lfp__side_leave(&cq->entries, 1);
	lfp__notify_all(cq->w.sig, &cq->link, cq->fid.asym);
	return (ssize_t)k;
}

/*
 * Producer side: queue up to count completions of the CQ's format from
 * entries, each with its source address from src_addr (NULL: none, read
 * back as LFP_ADDR_NOTAVAIL).  Returns how many were queued (a prefix), or
 * -EAGAIN when the CQ is full.  A single entry (count the constant 1) on
 * the default mode is queued inline when its one attempt succeeds.
 */
LFP_FORCE_INLINE ssize_t lfp_cq_writefrom(struct lfp_cq *cq, const void *entries,
                                          const lfp_addr_t *src_addr, size_t count)
{
	struct lfp__ring_geo g;
	uint64_t pos;
	size_t esz;

	if (!LFP__CONSTANT(count) || count != 1 || LFP__UNLIKELY(!cq || !entries))
		return lfp__cq_writefrom_slow(cq, entries, src_addr, count);
	g = lfp__ring_geo(&cq->entries);
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC ||
	                  !lfp__slot_try_prod(&cq->entries, &g, 1, &pos)))
		return lfp__cq_writefrom_slow(cq, entries, src_addr, count);
	esz = cq->entry_size;
	lfp__cq_put_one(&g, pos, entries, src_addr, esz, 1); /* after the CAS */
	lfp__slot_publish(&g, pos, (uint32_t)(esz + sizeof(lfp_addr_t))); /* P1 */
	lfp__notify_all(cq->w.sig, &cq->link, cq->fid.asym);
	return 1;
}

/* lfp_cq_writefrom without source addresses. */
LFP_FORCE_INLINE ssize_t lfp_cq_write(struct lfp_cq *cq, const void *entries,
                                      size_t count)
{
	return lfp_cq_writefrom(cq, entries, NULL, count);
}

/*
 * Producer side: queue an error completion; err->err must be positive (an errno) and
 * err->err_data_size at most LFP_CQ_ERR_DATA_MAX (-EMSGSIZE).  Returns
 * sizeof(*err), or -EAGAIN when the error queue is full.
 */
LFP_INLINE ssize_t lfp_cq_writeerr(struct lfp_cq *cq, const struct lfp_cq_err_entry *err)
{
	struct lfp_cq_err_entry e;
	int ret;

	if (!cq || !err || err->err <= 0 || (!err->err_data && err->err_data_size))
		return -EINVAL;
	e = *err;
	e.err_data = NULL;
	lfp__side_enter(&cq->entries, 1); /* a single producer writes errors too */
	ret = lfp__errq_write(&cq->errq, &e, sizeof(e), err->err_data,
	                      err->err_data_size, NULL); /* P1 */
	lfp__side_leave(&cq->entries, 1);
	if (ret)
		return ret;
	lfp__notify_all(cq->w.sig, &cq->link, cq->fid.asym);
	return (ssize_t)sizeof(*err);
}

/* What a read that took nothing returns (why: its claim's reason). */
LFP_SLOW ssize_t lfp__cq_read_none(struct lfp_cq *cq, int why)
{
	if (why == LFP__RING_GATED || lfp__errq_ready(&cq->errq))
		return -LFP_EAVAIL;
	return -EAGAIN;
}

/* lfp_cq_readfrom whole, out of line, as lfp__cq_writefrom_slow. */
LFP_OUTLINE ssize_t lfp__cq_readfrom_slow(struct lfp_cq *cq, void *buf, size_t count,
                                          lfp_addr_t *src_addr)
{
	struct lfp__ring_geo g;
	struct lfp__claim c;
	size_t k, esz;

	if (!cq || !buf || count == 0)
		return -EINVAL; /* count 0: as lfp_cq_write and lfp_cq_sread */
	esz = cq->entry_size;
	if (LFP__BROKEN("F") && lfp__errq_ready(&cq->errq))
		return -LFP_EAVAIL; /* checked before the take: the old order */
	g = lfp__ring_geo(&cq->entries);
	lfp__side_enter(&cq->entries, 0);
	k = lfp__ring_claim_cons(&cq->entries, &g, count, esz + sizeof(lfp_addr_t),
	                         &c, LFP__BROKEN("F") ? NULL : lfp__errq_gate,
	                         &cq->errq);
	if (!k) {
		lfp__side_leave(&cq->entries, 0);
		return lfp__cq_read_none(cq, c.why);
	}
	/* The claim's acquire ordered the contents; we own the slots. */
	lfp__cq_take_each(&g, c.first, k, (unsigned char *)buf, src_addr, esz);
	lfp__ring_commit_cons(&cq->entries, &g, c.first, k);
	lfp__side_leave(&cq->entries, 0);
	return (ssize_t)k;
}

/*
 * Read up to count completions into buf (an array of the CQ's format) and,
 * when src_addr is not NULL, each one's source address into src_addr[].
 * Returns how many; -EAGAIN when empty; -LFP_EAVAIL while an error
 * completion is queued (read it with lfp_cq_readerr): no completion is
 * returned ahead of an error its producer queued before it.  A single
 * entry (count the constant 1) on the default mode is read inline when its
 * one attempt succeeds; bursts are out of line.
 */
LFP_FORCE_INLINE ssize_t lfp_cq_readfrom(struct lfp_cq *cq, void *buf,
                                         size_t count, lfp_addr_t *src_addr)
{
	struct lfp__ring_geo g;
	struct lfp__claim c;
	size_t esz;

	if (!LFP__CONSTANT(count) || count != 1 || LFP__UNLIKELY(!cq || !buf) ||
	    LFP__BROKEN("F"))
		return lfp__cq_readfrom_slow(cq, buf, count, src_addr);
	g = lfp__ring_geo(&cq->entries);
	esz = cq->entry_size;
	if (LFP__UNLIKELY(g.mode != LFP__RING_MPMC ||
	                  !lfp__slot_try_cons(&cq->entries, &g, 1,
	                                      esz + sizeof(lfp_addr_t), &c,
	                                      lfp__errq_gate, &cq->errq)))
		return lfp__cq_readfrom_slow(cq, buf, count, src_addr);
	lfp__cq_take_one(&g, c.first, buf, src_addr, esz);
	lfp__slot_free(&g, c.first);
	return 1;
}

/* lfp_cq_readfrom without source addresses. */
LFP_FORCE_INLINE ssize_t lfp_cq_read(struct lfp_cq *cq, void *buf, size_t count)
{
	return lfp_cq_readfrom(cq, buf, count, NULL);
}

/*
 * lfp_cq_writefrom for a CQ opened with LFP_SINGLE_PRODUCER and
 * LFP_SINGLE_CONSUMER: the same arguments and results, with that mode's
 * single-entry write inline (wait-free: the producer's own index, the copy,
 * one release store) where lfp_cq_writefrom has the default mode's.  On a
 * CQ of another mode, and for bursts, it does what lfp_cq_writefrom does,
 * out of line.  The mode is chosen by the call, at compile time, so that
 * neither call's sites carry the other mode's path (as lfp_eq_write_spsc).
 */
LFP_FORCE_INLINE ssize_t lfp_cq_writefrom_spsc(struct lfp_cq *cq,
                                               const void *entries,
                                               const lfp_addr_t *src_addr,
                                               size_t count)
{
	struct lfp__ring_geo g;
	uint64_t pos;
	size_t esz;

	if (!LFP__CONSTANT(count) || count != 1 || LFP__UNLIKELY(!cq || !entries))
		return lfp__cq_writefrom_slow(cq, entries, src_addr, count);
	g = lfp__ring_geo(&cq->entries);
	if (LFP__UNLIKELY(g.mode != LFP__RING_INDEX))
		return lfp__cq_writefrom_slow(cq, entries, src_addr, count);
	lfp__side_enter(&cq->entries, 1);
	if (LFP__UNLIKELY(!lfp__idx_claim_prod(&cq->entries, &g, 1, &pos))) {
		lfp__side_leave(&cq->entries, 1);
		return -EAGAIN; /* full: only this producer could have changed it */
	}
	esz = cq->entry_size;
	lfp__cq_put_one(&g, pos, entries, src_addr, esz, 0);
	lfp__idx_set_meta(&cq->entries, &g, pos,
	                  (uint32_t)(esz + sizeof(lfp_addr_t)));
	lfp__idx_commit_prod(&cq->entries, pos, 1); /* I2, publishes: P1 */
	lfp__side_leave(&cq->entries, 1);
	lfp__notify_all(cq->w.sig, &cq->link, cq->fid.asym);
	return 1;
}

/* lfp_cq_writefrom_spsc without source addresses. */
LFP_FORCE_INLINE ssize_t lfp_cq_write_spsc(struct lfp_cq *cq, const void *entries,
                                           size_t count)
{
	return lfp_cq_writefrom_spsc(cq, entries, NULL, count);
}

/*
 * lfp_cq_readfrom for a CQ opened with LFP_SINGLE_PRODUCER and
 * LFP_SINGLE_CONSUMER, as lfp_cq_writefrom_spsc: the same arguments and
 * results (-LFP_EAVAIL included), that mode's single-entry read inline.
 */
LFP_FORCE_INLINE ssize_t lfp_cq_readfrom_spsc(struct lfp_cq *cq, void *buf,
                                              size_t count, lfp_addr_t *src_addr)
{
	struct lfp__ring_geo g;
	struct lfp__claim c;
	size_t esz;

	if (!LFP__CONSTANT(count) || count != 1 || LFP__UNLIKELY(!cq || !buf) ||
	    LFP__BROKEN("F"))
		return lfp__cq_readfrom_slow(cq, buf, count, src_addr);
	g = lfp__ring_geo(&cq->entries);
	if (LFP__UNLIKELY(g.mode != LFP__RING_INDEX))
		return lfp__cq_readfrom_slow(cq, buf, count, src_addr);
	esz = cq->entry_size;
	lfp__side_enter(&cq->entries, 0);
	/* The gate runs after the claim's acquire of head (I3), as in
	 * lfp__cq_readfrom_slow: an error queued before the entry is seen. */
	if (LFP__UNLIKELY(!lfp__idx_claim_cons(&cq->entries, &g, 1,
	                                       esz + sizeof(lfp_addr_t), &c,
	                                       lfp__errq_gate, &cq->errq))) {
		lfp__side_leave(&cq->entries, 0);
		return lfp__cq_read_none(cq, c.why);
	}
	lfp__cq_take_one(&g, c.first, buf, src_addr, esz);
	lfp__idx_commit_cons(&cq->entries, c.first, 1); /* I4 */
	lfp__side_leave(&cq->entries, 0);
	return 1;
}

/* lfp_cq_readfrom_spsc without source addresses. */
LFP_FORCE_INLINE ssize_t lfp_cq_read_spsc(struct lfp_cq *cq, void *buf,
                                          size_t count)
{
	return lfp_cq_readfrom_spsc(cq, buf, count, NULL);
}

/*
 * Read one error completion; err_data rules as lfp_eq_readerr (a caller
 * buffer gets as much of the data as fits; the entry is consumed).
 * Returns 1, the number of error completions read (fi_cq(3)), or -EAGAIN.
 * Honours LFP_PEEK.
 */
LFP_INLINE ssize_t lfp_cq_readerr(struct lfp_cq *cq, struct lfp_cq_err_entry *buf,
                                  uint64_t flags)
{
	struct lfp_cq_err_entry e;
	ssize_t r;

	if (!cq || !buf || (flags & ~LFP_PEEK) || (buf->err_data_size && !buf->err_data))
		return -EINVAL;
	e.err_data = buf->err_data;
	e.err_data_size = buf->err_data_size;
	r = lfp__errq_read(&cq->errq, &e, sizeof(e), &e.err_data,
	                   &e.err_data_size, flags, NULL, NULL);
	if (r < 0)
		return r;
	*buf = e;
	return 1;
}

struct lfp__cq_wait {
	struct lfp_cq *cq;
	size_t threshold;
	uint64_t signals;
};

/*
 * Whether at least threshold completions can be read.  Published ones
 * only: a position a producer claimed and has not yet published cannot be
 * read, so counting it (as lfp_ring_count does) made sread spin past its
 * deadline while a producer stalled there.
 */
LFP_INLINE int lfp__cq_has(struct lfp_cq *cq, size_t threshold)
{
	if (LFP__BROKEN("C"))
		return lfp_ring_count(&cq->entries) >= threshold;
	return lfp__ring_published(&cq->entries, threshold) >= threshold;
}

/* sread's condition: the threshold, an error, or a signal. */
LFP_INLINE int lfp__cq_threshold_ready(void *arg)
{
	struct lfp__cq_wait *w = (struct lfp__cq_wait *)arg;

	return lfp__cq_has(w->cq, w->threshold) ||
	       lfp__errq_ready(&w->cq->errq) ||
	       lfp__ld_rlx_u64(&w->cq->signals) != w->signals;
}

/*
 * Mark lfp_cq_signal calls up to s as returned for.  seen only moves
 * forward, so a slow thread cannot bring back a signal another one already
 * returned for; the counts are 64-bit and never wrap.
 */
LFP_INLINE void lfp__cq_signal_taken(struct lfp_cq *cq, uint64_t s)
{
	uint64_t seen = lfp__ld_rlx_u64(&cq->signals_seen);

	while ((LFP__BROKEN("K") ? (int32_t)((uint32_t)s - (uint32_t)seen) > 0
	                         : s > seen) &&
	       !lfp__cas_u64(&cq->signals_seen, &seen, s))
		;
}

/*
 * How an sread ends (ret): the signals that came during it are returned
 * for, whatever it returns (a signal unblocks the sread in progress; it is
 * remembered only when none was), unless it began with signals remembered
 * and returns completions: those it has not returned for yet.
 */
LFP_INLINE ssize_t lfp__cq_sread_end(struct lfp_cq *cq, const struct lfp__cq_wait *w,
                                     int remembered, ssize_t ret)
{
	uint64_t now = lfp__ld_acq_u64(&cq->signals); /* as at entry */

	if (ret == -EAGAIN ||
	    (!remembered && now != w->signals && !LFP__BROKEN("K")))
		lfp__cq_signal_taken(cq, now);
	return ret;
}

/* What a cancelled sread's cleanup handler needs to end it. */
struct lfp__cq_sread_cancel {
	struct lfp_cq *cq;
	const struct lfp__cq_wait *w;
	int remembered;
};

/* An sread cancelled in its sleep ends as if it had timed out: the signals
 * that came during it are returned for (lfp__cq_sread_end with -EAGAIN),
 * so none of them is left to end the next sread at once. */
LFP_INLINE void lfp__cq_sread_cancelled(void *arg)
{
	const struct lfp__cq_sread_cancel *c =
		(const struct lfp__cq_sread_cancel *)arg;

	if (!LFP__BROKEN("Q"))
		(void)lfp__cq_sread_end(c->cq, c->w, c->remembered, -EAGAIN);
}

/* sread's sleep (lfp__signal_wait), the one cancellation point of the
 * call, with the handler above around it. */
LFP_INLINE int lfp__cq_sread_sleep(struct lfp_cq *cq, struct lfp__cq_wait *w,
                                   int remembered, int64_t deadline)
{
	struct lfp__cq_sread_cancel c;
	int ret;

	c.cq = cq;
	c.w = w;
	c.remembered = remembered;
	pthread_cleanup_push(lfp__cq_sread_cancelled, &c);
	ret = lfp__signal_wait(cq->w.sig, lfp__cq_threshold_ready, w, deadline);
	pthread_cleanup_pop(0); /* the handler is for cancellation only */
	return ret;
}

/*
 * Blocking read (source addresses as lfp_cq_readfrom).  cond: with the CQ's
 * wait_cond LFP_CQ_COND_THRESHOLD, NULL or a const size_t * threshold: wait
 * until at least that many completions (capped at count and at the CQ's
 * capacity) are queued.  timeout in ms (< 0 infinite).  Returns as
 * lfp_cq_read; -EAGAIN when the timeout expires or lfp_cq_signal interrupts
 * the wait; -ENOSYS for NONE and SET.  A signal that came while an sread
 * was in progress is that sread's, whatever it returns (cancelled in its
 * sleep, as a timeout); one that came while none was is remembered: the
 * next sread that finds fewer completions than its threshold returns
 * -EAGAIN for it without waiting (those stay queued).  An sread that
 * starts before the one a signal belongs to has returned may take it for
 * a remembered one too (a known limit: docs/design.md, section 7).
 */
LFP_INLINE ssize_t lfp_cq_sreadfrom(struct lfp_cq *cq, void *buf, size_t count,
                                    lfp_addr_t *src_addr, const void *cond,
                                    int timeout)
{
	struct lfp__cq_wait w;
	int64_t deadline;
	ssize_t ret;
	uint64_t now;
	int remembered;

	if (!cq || !buf || count == 0)
		return -EINVAL;
	if (!lfp__waitable_can_block(&cq->w))
		return -ENOSYS;
	w.cq = cq;
	/* cond is a threshold only under LFP_CQ_COND_THRESHOLD (fi_cq(3)). */
	w.threshold = cond && cq->wait_cond == LFP_CQ_COND_THRESHOLD ?
	              *(const size_t *)cond : 1;
	if (w.threshold == 0)
		w.threshold = 1;
	if (w.threshold > count)
		w.threshold = count;
	/* More than the CQ holds could never be met: a full CQ refuses the
	 * writes that would reach it. */
	if (w.threshold > lfp_ring_capacity(&cq->entries) && !LFP__BROKEN("T"))
		w.threshold = lfp_ring_capacity(&cq->entries);
	/* Acquire: pairs with the RMW in lfp_cq_signal (a count only).  A
	 * signal nobody returned for yet is remembered: it ends this call
	 * unless the completions already queued meet the threshold. */
	w.signals = lfp__ld_acq_u64(&cq->signals);
	remembered = w.signals != lfp__ld_rlx_u64(&cq->signals_seen) &&
	             !LFP__BROKEN("E");
	deadline = lfp__deadline(timeout);
	for (;;) {
		if (lfp__errq_ready(&cq->errq))
			return lfp__cq_sread_end(cq, &w, remembered, -LFP_EAVAIL);
		if (lfp__cq_has(cq, w.threshold)) {
			ret = lfp_cq_readfrom(cq, buf, count, src_addr);
			if (ret != -EAGAIN)
				return lfp__cq_sread_end(cq, &w, remembered, ret);
		}
		now = lfp__ld_acq_u64(&cq->signals); /* as at entry */
		if (now != w.signals || remembered)
			return lfp__cq_sread_end(cq, &w, remembered, -EAGAIN);
		/* The deadline on every lap, not only in the sleep: work seen
		 * by the check can be taken by another reader first. */
		if (timeout == 0 || (lfp__expired(deadline) && !LFP__BROKEN("C")))
			return lfp__cq_sread_end(cq, &w, remembered, -EAGAIN);
		ret = lfp__cq_sread_sleep(cq, &w, remembered, deadline);
		if (ret == -ETIMEDOUT)
			return lfp__cq_sread_end(cq, &w, remembered, -EAGAIN);
		if (ret < 0) /* the wait object failed (e.g. -EBADF) */
			return lfp__cq_sread_end(cq, &w, remembered, ret);
	}
}

/* lfp_cq_sreadfrom without source addresses. */
LFP_INLINE ssize_t lfp_cq_sread(struct lfp_cq *cq, void *buf, size_t count,
                                const void *cond, int timeout)
{
	return lfp_cq_sreadfrom(cq, buf, count, NULL, cond, timeout);
}

/*
 * A printable description of a provider error (prov_errno, err_data of an
 * error completion): as lfp_eq_strerror.
 */
LFP_INLINE const char *lfp_cq_strerror(struct lfp_cq *cq, int prov_errno,
                                       const void *err_data, char *buf,
                                       size_t len)
{
	return lfp__prov_strerror(cq ? cq->prov_strerror : NULL, prov_errno,
	                          err_data, buf, len);
}

/*
 * Wake threads blocked in lfp_cq_sread on this CQ (they return -EAGAIN);
 * with none blocked, the next lfp_cq_sread returns -EAGAIN at once.
 */
LFP_INLINE int lfp_cq_signal(struct lfp_cq *cq)
{
	if (!cq)
		return -EINVAL;
	(void)lfp__faa_u64(&cq->signals, 1); /* the notify's P2 orders it */
	lfp__waitable_notify(&cq->w);
	return 0;
}

#ifdef LFP_STATS
LFP_INLINE uint64_t lfp__cq_stat_signals(struct lfp_cq *cq)
{
	return lfp__waitable_stat_signals(&cq->w);
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_CQ_H */
