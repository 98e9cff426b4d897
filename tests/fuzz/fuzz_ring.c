/*
 * libFuzzer target: lfp_ring (ring.h) against a sequential FIFO model.
 *
 * Input: byte 0 picks the capacity, bytes 1-2 the slot size (invalid
 * values included: those must give -EINVAL and end the run), byte 3 how
 * the ring is made (bit 0: lfp_ring_create or lfp_ring_init over caller
 * memory; bits 1-2: its mode, LFP_SINGLE_PRODUCER and LFP_SINGLE_CONSUMER,
 * which one thread's calls must not be able to tell apart).
 * Then up to FUZZ_MAX_OPS operations, one opcode byte each plus operands:
 * enqueue (lengths 0..slot+3: oversize is -EMSGSIZE), dequeue with a buffer
 * of random size (short: -LFP_ETOOSMALL and the entry stays), peek, consume
 * of the current, stale and forged tickets (-ESTALE), bursts, the typed
 * front end (LFP_RING_PROTOTYPE), count, and argument errors.  Every return
 * value, length and payload byte is compared with the model, and bytes past
 * each copied entry must be left alone.
 *
 * Built with -DLFP_TEST_BROKEN (make fuzz-broken), LFP_FUZZ_BROKEN=L
 * makes a burst claim all n positions once it saw the first free (as a
 * fetch-and-add claim would): the model must catch the entries it writes
 * over.
 *
 * Tickets are treated as opaque: the model knows the current head's ticket
 * only from a peek of it, and a ticket of an entry that has left the ring
 * is stale forever.
 */
#include <lfpoll/ring.h>

#include "fuzz_input.h"

/* The typed front end, with three sizes (one larger than small slots). */
struct fz24 {
	uint64_t a, b, c;
};
struct fz40 {
	unsigned char b[40];
};
LFP_RING_PROTOTYPE(fzu16, uint16_t)
LFP_RING_PROTOTYPE(fz24, struct fz24)
LFP_RING_PROTOTYPE(fz40, struct fz40)

/* Largest ring actually built (larger valid ones only check memsize). */
#define MAX_CAP  1024
#define MAX_SLOT 300
#define MAX_BURST 8
#define MAX_STALE 16

struct ment {
	uint32_t len;
	unsigned char data[MAX_SLOT];
};

struct model {
	size_t cap, slot;
	struct ment q[MAX_CAP]; /* circular: q[(first + i) % cap] */
	size_t first, count;
	uint32_t seed;          /* next payload pattern */
	/* Ticket of the current head, once a peek has told us. */
	int have_ticket;
	uint64_t ticket;
	/* Tickets of entries that have left: consume must say -ESTALE. */
	uint64_t stale[MAX_STALE];
	size_t nstale;
};

static struct model M;

static struct ment *m_head(void)
{
	return M.count ? &M.q[M.first] : NULL;
}

static struct ment *m_at(size_t i)
{
	return &M.q[(M.first + i) % M.cap];
}

static void m_push(const unsigned char *src, size_t len)
{
	struct ment *e = &M.q[(M.first + M.count) % M.cap];

	if (M.count >= M.cap || len > MAX_SLOT)
		abort(); /* a model bug */
	e->len = (uint32_t)len;
	if (len)
		memcpy(e->data, src, len);
	M.count++;
}

static void m_pop(void)
{
	if (!M.count)
		abort();
	if (M.have_ticket) {
		M.stale[M.nstale++ % MAX_STALE] = M.ticket;
		M.have_ticket = 0;
	}
	M.first = (M.first + 1) % M.cap;
	M.count--;
}

static int m_is_stale(uint64_t t)
{
	size_t i, n = M.nstale < MAX_STALE ? M.nstale : MAX_STALE;

	for (i = 0; i < n; i++)
		if (M.stale[i] == t)
			return 1;
	return 0;
}

/* Check that dst[0..e->len) is the entry and dst[e->len..room) untouched. */
static void check_copy(const char *what, const unsigned char *dst, size_t room,
                       const struct ment *e)
{
	CHECK(e->len == 0 || memcmp(dst, e->data, e->len) == 0,
	      "%s: payload differs from the entry (len %u)", what, e->len);
	CHECK(fuzz_canary_ok(dst, e->len, room),
	      "%s: wrote past the entry's length %u (room %zu)", what, e->len, room);
}

/* A length in 0..slot+3, biased toward the interesting edges. */
static size_t pick_len(struct fin *f)
{
	uint8_t sel = fin_u8(f);
	size_t hl = m_head() ? m_head()->len : 0;

	switch (sel & 7) {
	case 0: return 0;
	case 1: return M.slot;
	case 2: return M.slot + 1 + (sel >> 3) % 3;
	case 3: return hl;                       /* exactly the head */
	case 4: return hl ? hl - 1 : 0;          /* one short */
	default: return fin_u16(f) % (M.slot + 4);
	}
}

/* ------------------------------------------------------------- operations */

static void op_enqueue(struct lfp_ring *r, struct fin *f)
{
	size_t len = pick_len(f);
	unsigned char *src = fuzz_buf(len, fin_u8(f) & 1);
	int want, got;

	if (src)
		fuzz_pattern(src, len, M.seed);
	if (!src && len)
		want = -EINVAL;
	else if (len > M.slot)
		want = -EMSGSIZE;
	else if (M.count == M.cap)
		want = -EAGAIN;
	else
		want = 0;
	got = lfp_ring_enqueue(r, src, len);
	TRACE("enqueue len %zu -> %d (model %d, count %zu)", len, got, want, M.count);
	CHECK_EQ(got, want, "lfp_ring_enqueue(len %zu)", len);
	if (want == 0) {
		m_push(src, len);
		M.seed++;
	}
	free(src);
}

static void op_dequeue(struct lfp_ring *r, struct fin *f, int peek)
{
	size_t cap = pick_len(f);
	int nonnull = fin_u8(f) & 1;
	unsigned char *dst = fuzz_buf(cap, nonnull);
	struct ment *h = m_head();
	uint64_t ticket = 0x5eed;
	ssize_t want, got;

	if (!h)
		want = -EAGAIN;
	else if (h->len > cap)
		want = -LFP_ETOOSMALL;
	else
		want = h->len;
	if (peek)
		got = lfp_ring_peek(r, dst, cap, &ticket);
	else
		got = lfp_ring_dequeue(r, dst, cap);
	TRACE("%s cap %zu -> %zd (model %zd, count %zu)",
	      peek ? "peek" : "dequeue", cap, got, want, M.count);
	CHECK_EQ(got, want, "lfp_ring_%s(cap %zu), head len %d",
	         peek ? "peek" : "dequeue", cap, h ? (int)h->len : -1);
	if (want >= 0) {
		check_copy(peek ? "peek" : "dequeue", dst, cap, h);
		if (peek) {
			/* The same entry keeps its name; a stale name is never
			 * handed out again. */
			CHECK(!M.have_ticket || M.ticket == ticket,
			      "peek of the same head gave ticket %llu, then %llu",
			      (unsigned long long)M.ticket,
			      (unsigned long long)ticket);
			CHECK(!m_is_stale(ticket),
			      "peek returned ticket %llu of an entry already consumed",
			      (unsigned long long)ticket);
			M.have_ticket = 1;
			M.ticket = ticket;
		} else {
			m_pop();
		}
	} else if (dst) {
		CHECK(fuzz_canary_ok(dst, 0, cap), "failed %s wrote into the buffer",
		      peek ? "peek" : "dequeue");
	}
	free(dst);
}

/* Learn the current head's ticket with a checked peek (no side effects). */
static int head_ticket(struct lfp_ring *r, uint64_t *t)
{
	unsigned char buf[MAX_SLOT];
	ssize_t got;

	if (!M.count)
		return 0;
	if (M.have_ticket) {
		*t = M.ticket;
		return 1;
	}
	got = lfp_ring_peek(r, buf, sizeof(buf), t);
	CHECK_EQ(got, m_head()->len, "lfp_ring_peek (to learn the head's ticket)");
	CHECK(!m_is_stale(*t), "peek returned a stale ticket");
	check_copy("peek", buf, m_head()->len, m_head());
	M.have_ticket = 1;
	M.ticket = *t;
	return 1;
}

static void op_consume(struct lfp_ring *r, struct fin *f)
{
	uint8_t sel = fin_u8(f);
	uint64_t h = 0, t;
	int has_head = head_ticket(r, &h), want, got;
	size_t ns = M.nstale < MAX_STALE ? M.nstale : MAX_STALE;

	switch (sel % 6) {
	case 0: case 1:  /* the real one */
		t = has_head ? h : fin_u64(f);
		break;
	case 2:          /* a stale one */
		t = ns ? M.stale[fin_u8(f) % ns] : h - 1;
		break;
	case 3: {        /* near the real one */
		static const int64_t d[] = { 1, -1, 2, -2 };
		uint8_t k = fin_u8(f);

		t = h + (uint64_t)d[k % 4];
		if (k & 4)
			t = h + (uint64_t)M.cap * (k & 8 ? 1 : (uint64_t)-1);
		if (k & 16)
			t = h + ((uint64_t)1 << 32);
		break;
	}
	default:
		t = fin_u64(f);
		break;
	}
	if (m_is_stale(t))
		want = -ESTALE;
	else
		want = has_head && t == h ? 0 : -ESTALE;
	got = lfp_ring_consume(r, t);
	TRACE("consume ticket %llu (head %s %llu) -> %d (model %d)",
	      (unsigned long long)t, has_head ? "ticket" : "none",
	      (unsigned long long)h, got, want);
	CHECK_EQ(got, want, "lfp_ring_consume(ticket %llu), head ticket %llu%s",
	         (unsigned long long)t, (unsigned long long)h,
	         has_head ? "" : " (ring empty)");
	if (got == 0)
		m_pop();
}

static void op_enqueue_burst(struct lfp_ring *r, struct fin *f)
{
	size_t n = fin_u8(f) % (MAX_BURST + 1), len = pick_len(f), i, want, got;
	/* A NULL source is legal with len_each 0 (ring.h checks !src && len_each);
	 * ring.h once computed NULL + 0 for it (crash-ring-enqueue-burst-null-src). */
	unsigned char *src = fuzz_buf(n * len, len || (fin_u8(f) & 1));

	for (i = 0; src && i < n; i++)
		fuzz_pattern(src + i * len, len, M.seed + (uint32_t)i);
	if (n == 0 || len > M.slot)
		want = 0;
	else
		want = n < M.cap - M.count ? n : M.cap - M.count;
	got = lfp_ring_enqueue_burst(r, src, len, n);
	TRACE("enqueue_burst n %zu len %zu -> %zu (model %zu, count %zu)",
	      n, len, got, want, M.count);
	CHECK_EQ(got, want, "lfp_ring_enqueue_burst(len_each %zu, n %zu)", len, n);
	for (i = 0; i < want; i++)
		m_push(src ? src + i * len : NULL, len);
	M.seed += (uint32_t)n;
	free(src);
}

static void op_dequeue_burst(struct lfp_ring *r, struct fin *f)
{
	size_t n = fin_u8(f) % (MAX_BURST + 1), len = pick_len(f), i, want, got;
	/* NULL is legal with len_each 0; ring.h once computed NULL + 0 for it
	 * (crash-ring-dequeue-burst-null-dst). */
	unsigned char *dst = fuzz_buf(n * len, len || (fin_u8(f) & 1));
	char what[64];

	for (want = 0; n && want < n && want < M.count; want++)
		if (m_at(want)->len > len)
			break;
	got = lfp_ring_dequeue_burst(r, dst, len, n);
	TRACE("dequeue_burst n %zu len %zu -> %zu (model %zu, count %zu)",
	      n, len, got, want, M.count);
	CHECK_EQ(got, want, "lfp_ring_dequeue_burst(len_each %zu, n %zu)", len, n);
	for (i = 0; i < want; i++) {
		snprintf(what, sizeof(what), "dequeue_burst entry %zu", i);
		check_copy(what, dst ? dst + i * len : dst, len, m_head());
		m_pop();
	}
	if (dst)
		CHECK(fuzz_canary_ok(dst, want * len, n * len),
		      "dequeue_burst wrote past its %zu entries", want);
	free(dst);
}

/* The typed front end for one type T (size sz). */
#define TYPED_OPS(name, T)                                                     \
static void typed_##name(struct lfp_ring *r, struct fin *f)                   \
{                                                                             \
	uint8_t sel = fin_u8(f);                                              \
	size_t sz = sizeof(T), n = (size_t)(sel >> 2) % (MAX_BURST + 1);      \
	size_t i, want, got;                                                  \
	int iwant, igot;                                                      \
	T *v;                                                                 \
                                                                              \
	switch (sel & 3) {                                                    \
	case 0: /* enqueue */                                                 \
		v = (T *)(void *)fuzz_buf(sz, 1);                             \
		fuzz_pattern((unsigned char *)v, sz, M.seed);                 \
		iwant = M.slot < sz ? -EMSGSIZE : M.count == M.cap ? -EAGAIN : 0; \
		igot = lfp_ring_enqueue_##name(r, v);                         \
		TRACE("enqueue_" #name " -> %d (model %d)", igot, iwant);     \
		CHECK_EQ(igot, iwant, "lfp_ring_enqueue_" #name);             \
		if (igot == 0) {                                              \
			m_push((unsigned char *)v, sz);                       \
			M.seed++;                                             \
		}                                                             \
		free(v);                                                      \
		break;                                                        \
	case 1: /* dequeue */                                                 \
		v = (T *)(void *)fuzz_buf(sz, 1);                             \
		iwant = !M.count ? -EAGAIN :                                  \
		        m_head()->len > sz ? -LFP_ETOOSMALL : 0;              \
		igot = lfp_ring_dequeue_##name(r, v);                         \
		TRACE("dequeue_" #name " -> %d (model %d)", igot, iwant);     \
		CHECK_EQ(igot, iwant, "lfp_ring_dequeue_" #name);             \
		if (igot == 0) {                                              \
			check_copy("dequeue_" #name, (unsigned char *)v, sz,  \
			           m_head());                                 \
			m_pop();                                              \
		}                                                             \
		free(v);                                                      \
		break;                                                        \
	case 2: /* enqueue burst */                                           \
		v = (T *)(void *)fuzz_buf(n * sz, 1);                         \
		for (i = 0; i < n; i++)                                       \
			fuzz_pattern((unsigned char *)&v[i], sz,              \
			             M.seed + (uint32_t)i);                   \
		want = M.slot < sz ? 0 : n < M.cap - M.count ? n : M.cap - M.count; \
		got = lfp_ring_enqueue_burst_##name(r, v, n);                 \
		TRACE("enqueue_burst_" #name " n %zu -> %zu (model %zu)",     \
		      n, got, want);                                          \
		CHECK_EQ(got, want, "lfp_ring_enqueue_burst_" #name "(n %zu)", n); \
		for (i = 0; i < want; i++)                                    \
			m_push((unsigned char *)&v[i], sz);                   \
		M.seed += (uint32_t)n;                                        \
		free(v);                                                      \
		break;                                                        \
	default: /* dequeue burst */                                          \
		v = (T *)(void *)fuzz_buf(n * sz, 1);                         \
		for (want = 0; want < n && want < M.count; want++)            \
			if (m_at(want)->len > sz)                             \
				break;                                        \
		got = lfp_ring_dequeue_burst_##name(r, v, n);                 \
		TRACE("dequeue_burst_" #name " n %zu -> %zu (model %zu)",     \
		      n, got, want);                                          \
		CHECK_EQ(got, want, "lfp_ring_dequeue_burst_" #name "(n %zu)", n); \
		for (i = 0; i < want; i++) {                                  \
			check_copy("dequeue_burst_" #name,                    \
			           (unsigned char *)&v[i], sz, m_head());     \
			m_pop();                                              \
		}                                                             \
		CHECK(fuzz_canary_ok((unsigned char *)v, want * sz, n * sz),  \
		      "dequeue_burst_" #name " wrote past its entries");      \
		free(v);                                                      \
		break;                                                        \
	}                                                                     \
}

TYPED_OPS(fzu16, uint16_t)
TYPED_OPS(fz24, struct fz24)
TYPED_OPS(fz40, struct fz40)

/* Argument errors: none may change the ring. */
static void op_bad_args(struct lfp_ring *r, struct fin *f)
{
	unsigned char buf[8];
	uint64_t t;

	switch (fin_u8(f) % 8) {
	case 0:
		CHECK_EQ(lfp_ring_enqueue(NULL, buf, 1), -EINVAL, "enqueue(NULL ring)");
		break;
	case 1:
		CHECK_EQ(lfp_ring_dequeue(NULL, buf, 8), -EINVAL, "dequeue(NULL ring)");
		break;
	case 2:
		CHECK_EQ(lfp_ring_dequeue(r, NULL, 8), -EINVAL, "dequeue(NULL dst, cap 8)");
		break;
	case 3:
		CHECK_EQ(lfp_ring_peek(r, buf, sizeof(buf), NULL), -EINVAL,
		         "peek(NULL ticket)");
		break;
	case 4:
		CHECK_EQ(lfp_ring_peek(r, NULL, 8, &t), -EINVAL, "peek(NULL dst, cap 8)");
		break;
	case 5:
		CHECK_EQ(lfp_ring_consume(NULL, 0), -EINVAL, "consume(NULL ring)");
		break;
	case 6:
		CHECK_EQ(lfp_ring_enqueue_burst(NULL, buf, 1, 1), 0, "enqueue_burst(NULL)");
		CHECK_EQ(lfp_ring_dequeue_burst(NULL, buf, 1, 1), 0, "dequeue_burst(NULL)");
		CHECK_EQ(lfp_ring_enqueue_burst(r, NULL, 1, 1), 0, "enqueue_burst(NULL src)");
		CHECK_EQ(lfp_ring_dequeue_burst(r, NULL, 1, 1), 0, "dequeue_burst(NULL dst)");
		break;
	default:
		CHECK_EQ(lfp_ring_count(NULL), 0, "count(NULL)");
		CHECK_EQ(lfp_ring_capacity(r), M.cap, "lfp_ring_capacity");
		CHECK_EQ(lfp_ring_slot_size(r), M.slot, "lfp_ring_slot_size");
		break;
	}
}

/* ------------------------------------------------------------- setup */

static size_t pick_capacity(uint8_t b)
{
	static const size_t odd[] = {
		0, 1, 3, 5, 6, 7, 12, 100, 1000, 1023, 1025,
		LFP_RING_MAX_CAPACITY, LFP_RING_MAX_CAPACITY + 1,
		LFP_RING_MAX_CAPACITY << 1, (size_t)1 << 40, SIZE_MAX,
		SIZE_MAX / 2 + 1, (size_t)1 << 62, 4096, 3u << 20,
	};

	if (b & 0x80)
		return odd[(b & 0x7f) % (sizeof(odd) / sizeof(odd[0]))];
	return (size_t)1 << (b % 11); /* 1 (invalid) .. 1024 */
}

static size_t pick_slot(uint16_t v)
{
	static const size_t odd[] = {
		0, (size_t)INT32_MAX, (size_t)INT32_MAX + 1, UINT32_MAX,
		(size_t)UINT32_MAX + 1, SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 8,
		SIZE_MAX - 7, (size_t)1 << 20, 4096, 1000,
	};

	if (v & 0x8000)
		return odd[(v & 0x7fff) % (sizeof(odd) / sizeof(odd[0]))];
	return v % (MAX_SLOT + 1); /* 0 (invalid) .. MAX_SLOT */
}

/* The header's documented parameter rules (ring.h, lfp_ring_init). */
static int params_valid(size_t cap, size_t slot)
{
	return cap >= 2 && cap <= LFP_RING_MAX_CAPACITY && (cap & (cap - 1)) == 0 &&
	       slot >= 1 && slot <= (size_t)INT32_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin in = { data, size };
	struct lfp_ring stack_ring, *r = NULL;
	size_t cap = pick_capacity(fin_u8(&in));
	size_t slot = pick_slot(fin_u16(&in));
	uint8_t how = fin_u8(&in);
	uint64_t flags = (how & 2 ? LFP_SINGLE_PRODUCER : 0) |
	                 (how & 4 ? LFP_SINGLE_CONSUMER : 0);
	int valid = params_valid(cap, slot), ret, ops;
	size_t msz = lfp_ring_memsize_flags(cap, slot, flags);
	void *mem = NULL;

	TRACE("ring capacity %zu slot %zu (%s), flags %#llx, memsize %zu, %s", cap,
	      slot, valid ? "valid" : "invalid", (unsigned long long)flags, msz,
	      how & 1 ? "init" : "create");
	if (!valid) {
		CHECK_EQ(msz, 0, "lfp_ring_memsize(%zu, %zu) of invalid parameters",
		         cap, slot);
		CHECK_EQ(lfp_ring_create_flags(cap, slot, flags, &r), -EINVAL,
		         "lfp_ring_create(%zu, %zu)", cap, slot);
		CHECK(r == NULL, "failed create wrote the result");
		{
			uint64_t dummy[64];

			CHECK_EQ(lfp_ring_init_flags(&stack_ring, dummy, cap, slot, flags),
			         -EINVAL, "lfp_ring_init(%zu, %zu)", cap, slot);
		}
		return 0;
	}
	/* Every mode stores at least the payload and 4 bytes of length an
	 * entry; the per-slot rings whole slots. */
	CHECK(msz != 0 && msz / cap >= slot + 4 &&
	      (flags == (LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER) || msz % cap == 0),
	      "lfp_ring_memsize(%zu, %zu) = %zu", cap, slot, msz);
	if (cap > MAX_CAP || slot > MAX_SLOT)
		return 0; /* valid, but too big to build on every run */

	CHECK_EQ(lfp_ring_create_flags(cap, slot, flags, NULL), -EINVAL,
	         "create(NULL result)");
	if (how & 1) {
		if (posix_memalign(&mem, 64, msz))
			abort();
		memset(mem, how, msz); /* init must make any memory an empty ring */
		CHECK_EQ(lfp_ring_init_flags(NULL, mem, cap, slot, flags), -EINVAL,
		         "init(NULL ring)");
		CHECK_EQ(lfp_ring_init_flags(&stack_ring, NULL, cap, slot, flags), -EINVAL,
		         "init(NULL memory)");
		CHECK_EQ(lfp_ring_init_flags(&stack_ring, (char *)mem + 4, cap, slot, flags),
		         -EINVAL, "init(misaligned memory)");
		ret = lfp_ring_init_flags(&stack_ring, mem, cap, slot, flags);
		CHECK_EQ(ret, 0, "lfp_ring_init(%zu, %zu)", cap, slot);
		r = &stack_ring;
	} else {
		ret = lfp_ring_create_flags(cap, slot, flags, &r);
		CHECK_EQ(ret, 0, "lfp_ring_create(%zu, %zu)", cap, slot);
	}

	memset(&M, 0, offsetof(struct model, q));
	M.cap = cap;
	M.slot = slot;
	M.first = M.count = 0;
	M.seed = 1;
	M.have_ticket = 0;
	M.nstale = 0;
	CHECK_EQ(lfp_ring_capacity(r), cap, "lfp_ring_capacity");
	CHECK_EQ(lfp_ring_slot_size(r), slot, "lfp_ring_slot_size");

	for (ops = 0; ops < FUZZ_MAX_OPS && fin_left(&in); ops++) {
		uint8_t op = fin_u8(&in);

		switch (op % 14) {
		case 0: case 1: case 2:
			op_enqueue(r, &in);
			break;
		case 3: case 4:
			op_dequeue(r, &in, 0);
			break;
		case 5:
			op_dequeue(r, &in, 1);
			break;
		case 6:
			op_consume(r, &in);
			break;
		case 7:
			op_enqueue_burst(r, &in);
			break;
		case 8:
			op_dequeue_burst(r, &in);
			break;
		case 9:
			typed_fzu16(r, &in);
			break;
		case 10:
			typed_fz24(r, &in);
			break;
		case 11:
			typed_fz40(r, &in);
			break;
		case 12:
			CHECK_EQ(lfp_ring_count(r), M.count, "lfp_ring_count");
			break;
		default:
			op_bad_args(r, &in);
			break;
		}
	}
	CHECK_EQ(lfp_ring_count(r), M.count, "lfp_ring_count at the end");
	/* Drain: everything left comes out in order. */
	while (M.count) {
		unsigned char buf[MAX_SLOT];
		ssize_t got = lfp_ring_dequeue(r, buf, sizeof(buf));

		CHECK_EQ(got, m_head()->len, "final drain");
		check_copy("final drain", buf, (size_t)got, m_head());
		m_pop();
	}
	CHECK_EQ(lfp_ring_dequeue(r, NULL, 0), -EAGAIN, "dequeue of the drained ring");
	lfp_ring_destroy(r);
	free(mem);
	return 0;
}
