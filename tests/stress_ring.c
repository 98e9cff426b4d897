/*
 * lfpoll ring under contention: several producers and consumers on one
 * small ring, so that every slot is reused many times while claims race.
 *
 * Every entry carries (producer, sequence, payload length, checksum) and a
 * payload of varying length derived from (producer, sequence).  Proved for
 * every phase:
 *   - exactly once: a per-producer bitmap; a second delivery of a sequence
 *     fails at once, a missing one fails at the end (or as a deadline);
 *   - per-producer FIFO as each consumer sees it: the sequences one consumer
 *     takes from one producer strictly increase (with one producer and one
 *     consumer: they are consecutive);
 *   - whole entries: the length dequeue or peek returns is the length that
 *     was enqueued and every byte matches, and every peeked copy is whole
 *     and untorn even when its consume then fails with -ESTALE;
 *   - afterwards the ring is empty.
 *
 * Phases: single calls; peek + consume with -ESTALE retries, on a 4-slot
 * ring so that a slot can be refilled while a peek copies it; bursts
 * (partial at both ends); all of them mixed, on an 8-slot ring; 1 producer
 * + 1 consumer; then the modes: a single producer with 4 consumers, 4
 * producers with a single consumer, and the index ring (mixed calls,
 * peeks on a 4-slot ring, and a producer whose bursts are typed calls of
 * SLOT-byte entries, which copy each entry in on its own).  Runs under
 * ThreadSanitizer too (fewer entries).
 */
#include <lfpoll/ring.h>

#include <stdatomic.h>
#include <stdio.h>

#include "stress.h"

#define SLOT      56               /* header + payload: one 64-byte stride */
#define HDR       ((size_t)12)     /* sizeof(struct hdr) */
#define MAXPAY    (SLOT - HDR)
#define MAXBURST  16
#define MAXTHR    8

struct hdr {
	uint32_t seq;
	uint16_t producer;
	uint16_t plen;
	uint32_t sum; /* over the fields above and the payload */
};
_Static_assert(sizeof(struct hdr) == HDR, "struct hdr is not HDR bytes");

/* TYPED (producers): bursts of SLOT-byte entries through the typed calls,
 * whose entry size is a compile-time constant. */
enum mode { SINGLE, PEEK, BURST, MIXED, TYPED };

struct slot_entry {
	unsigned char b[SLOT];
};
LFP_RING_PROTOTYPE(slot, struct slot_entry)

struct phase {
	const char *name;
	size_t capacity;
	uint64_t flags;                 /* the ring's mode */
	unsigned nprod, ncons;
	uint32_t per_producer;
	enum mode prod_mode, cons_mode;

	struct lfp_ring *ring;
	pthread_barrier_t start;
	struct stress_deadline deadline;
	_Atomic uint64_t consumed;
	_Atomic uint64_t *seen[MAXTHR]; /* one bit per (producer, seq) */

	/* Statistics (how often the racy paths ran), not invariants. */
	_Atomic uint64_t estale, toosmall, partial_in, partial_out;
	_Atomic uint64_t by_dequeue, by_peek, by_burst;
};

struct worker {
	struct phase *ph;
	unsigned id;
};

static uint32_t entry_sum(const struct hdr *h, const unsigned char *payload)
{
	uint32_t s = stress_checksum(STRESS_CHECKSUM_INIT, &h->seq, sizeof(h->seq));

	s = stress_checksum(s, &h->producer, sizeof(h->producer));
	s = stress_checksum(s, &h->plen, sizeof(h->plen));
	return stress_checksum(s, payload, h->plen);
}

static unsigned char payload_byte(unsigned p, uint32_t seq, size_t i)
{
	return (unsigned char)(((seq * 2654435761u) >> 13) ^ (p * 37u) ^ (i * 11u));
}

/* Write entry (p, seq) with plen payload bytes at buf; returns its length. */
static size_t make_entry(unsigned char *buf, unsigned p, uint32_t seq,
                         size_t plen)
{
	struct hdr h;
	size_t i;

	for (i = 0; i < plen; i++)
		buf[HDR + i] = payload_byte(p, seq, i);
	h.seq = seq;
	h.producer = (uint16_t)p;
	h.plen = (uint16_t)plen;
	h.sum = entry_sum(&h, buf + HDR);
	memcpy(buf, &h, HDR);
	return HDR + plen;
}

/*
 * Check that buf holds a whole entry of this phase and return its header.
 * len is the length the ring reported, or 0 after a burst (which reports
 * none) with room the most it could be.
 */
static struct hdr check_entry(const struct phase *ph, unsigned c,
                              const unsigned char *buf, ssize_t len,
                              size_t room)
{
	struct hdr h;
	size_t i;

	if (len)
		CHECK(len >= (ssize_t)HDR && len <= SLOT, "%s: consumer %u got length %zd",
		      ph->name, c, len);
	memcpy(&h, buf, HDR);
	CHECK(h.producer < ph->nprod && h.seq < ph->per_producer &&
	      h.plen <= MAXPAY, "%s: consumer %u got a garbled header "
	      "(producer %u seq %u plen %u)", ph->name, c, h.producer, h.seq,
	      h.plen);
	if (len)
		CHECK((size_t)len == HDR + h.plen, "%s: consumer %u: producer %u "
		      "seq %u enqueued with %zu bytes, returned with %zd", ph->name,
		      c, h.producer, h.seq, HDR + h.plen, len);
	else
		CHECK(HDR + h.plen <= room, "%s: consumer %u: burst returned an "
		      "entry of %zu bytes in a %zu-byte stride", ph->name, c,
		      HDR + h.plen, room);
	CHECK(h.sum == entry_sum(&h, buf + HDR), "%s: consumer %u: producer %u "
	      "seq %u: checksum mismatch (torn or corrupt entry)", ph->name, c,
	      h.producer, h.seq);
	for (i = 0; i < h.plen; i++)
		CHECK(buf[HDR + i] == payload_byte(h.producer, h.seq, i),
		      "%s: consumer %u: producer %u seq %u: payload byte %zu "
		      "differs", ph->name, c, h.producer, h.seq, i);
	return h;
}

/* The entry is ours: count it once, and in order for this consumer. */
static void record(struct phase *ph, unsigned c, int64_t *last,
                   const struct hdr *h)
{
	uint64_t bit = (uint64_t)1 << (h->seq & 63), old;

	old = atomic_fetch_or_explicit(&ph->seen[h->producer][h->seq >> 6], bit,
	                               memory_order_relaxed);
	CHECK(!(old & bit), "%s: consumer %u: producer %u seq %u delivered "
	      "twice", ph->name, c, h->producer, h->seq);
	if (ph->nprod == 1 && ph->ncons == 1)
		CHECK((int64_t)h->seq == last[0] + 1, "%s: seq %u after %lld: "
		      "not consecutive", ph->name, h->seq, (long long)last[0]);
	CHECK((int64_t)h->seq > last[h->producer], "%s: consumer %u: producer "
	      "%u seq %u after seq %lld: out of order", ph->name, c,
	      h->producer, h->seq, (long long)last[h->producer]);
	last[h->producer] = h->seq;
}

static void wait_round(struct phase *ph, unsigned *spins)
{
	stress_backoff(spins);
	if ((*spins & 63) == 0)
		CHECK_DEADLINE(&ph->deadline);
}

/* ------------------------------------------------------------ producers */

static void produce_one(struct phase *ph, unsigned p, uint32_t seq,
                        uint64_t *rng)
{
	unsigned char buf[SLOT];
	size_t len = make_entry(buf, p, seq, stress_rand(rng) % (MAXPAY + 1));
	unsigned spins = 0;
	int ret;

	while ((ret = lfp_ring_enqueue(ph->ring, buf, len)) == -EAGAIN)
		wait_round(ph, &spins);
	CHECK(ret == 0, "%s: producer %u: enqueue = %d", ph->name, p, ret);
}

/* k entries of one length, enqueued in order however the ring splits them;
 * typed: SLOT bytes each, through lfp_ring_enqueue_burst_slot. */
static void produce_burst(struct phase *ph, unsigned p, uint32_t seq,
                          size_t k, int typed, uint64_t *rng)
{
	unsigned char buf[MAXBURST * SLOT];
	size_t plen = typed ? MAXPAY : stress_rand(rng) % (MAXPAY + 1);
	size_t len = HDR + plen, i, done = 0, n;
	unsigned spins = 0;

	for (i = 0; i < k; i++)
		make_entry(buf + i * len, p, seq + (uint32_t)i, plen);
	while (done < k) {
		if (typed)
			n = lfp_ring_enqueue_burst_slot(ph->ring,
				(const struct slot_entry *)(const void *)
				(buf + done * len), k - done);
		else
			n = lfp_ring_enqueue_burst(ph->ring, buf + done * len,
			                           len, k - done);
		CHECK(n <= k - done, "%s: producer %u: burst of %zu enqueued %zu",
		      ph->name, p, k - done, n);
		if (n == 0) {
			wait_round(ph, &spins);
			continue;
		}
		if (n < k - done)
			atomic_fetch_add_explicit(&ph->partial_in, 1,
			                          memory_order_relaxed);
		done += n;
		spins = 0;
	}
}

static void *producer(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->ph;
	uint64_t rng = 1000 + w->id;
	uint32_t seq = 0;
	size_t k;

	pthread_barrier_wait(&ph->start);
	while (seq < ph->per_producer) {
		int burst = ph->prod_mode == BURST || ph->prod_mode == TYPED ||
		            (ph->prod_mode == MIXED && stress_rand(&rng) % 2);

		if (burst) {
			k = 1 + stress_rand(&rng) % MAXBURST;
			if (k > ph->per_producer - seq)
				k = ph->per_producer - seq;
			produce_burst(ph, w->id, seq, k,
			              ph->prod_mode == TYPED, &rng);
			seq += (uint32_t)k;
		} else {
			produce_one(ph, w->id, seq++, &rng);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ consumers */

/* Mostly a roomy buffer; sometimes one that may be too short. */
static size_t pick_cap(uint64_t *rng)
{
	uint64_t x = stress_rand(rng);

	return x % 8 ? SLOT : HDR + (size_t)((x >> 8) % (MAXPAY + 1));
}

/* Each take_* returns how many entries it took (0: nothing this round). */
/*
 * The result n of a dequeue or peek (what) into a buffer of cap bytes: 0
 * when it took nothing (empty, or -LFP_ETOOSMALL with a buffer that is
 * indeed short, counted), 1 when it returned an entry that fits.
 */
static int took(struct phase *ph, unsigned c, const char *what, size_t cap,
                ssize_t n)
{
	if (n == -EAGAIN)
		return 0;
	if (n == -LFP_ETOOSMALL) {
		CHECK(cap < SLOT, "%s: consumer %u: %s -LFP_ETOOSMALL with a "
		      "%d-byte buffer", ph->name, c, what, SLOT);
		atomic_fetch_add_explicit(&ph->toosmall, 1, memory_order_relaxed);
		return 0;
	}
	CHECK(n >= 0 && (size_t)n <= cap, "%s: consumer %u: %s with cap %zu "
	      "= %zd", ph->name, c, what, cap, n);
	return 1;
}

static size_t take_dequeue(struct phase *ph, unsigned c, int64_t *last,
                           uint64_t *rng)
{
	unsigned char buf[SLOT];
	size_t cap = pick_cap(rng);
	ssize_t n = lfp_ring_dequeue(ph->ring, buf, cap);
	struct hdr h;

	if (!took(ph, c, "dequeue", cap, n))
		return 0;
	h = check_entry(ph, c, buf, n, 0);
	record(ph, c, last, &h);
	atomic_fetch_add_explicit(&ph->by_dequeue, 1, memory_order_relaxed);
	return 1;
}

static size_t take_peek(struct phase *ph, unsigned c, int64_t *last,
                        uint64_t *rng)
{
	unsigned char buf[SLOT];
	size_t cap = pick_cap(rng);
	uint64_t ticket = 0;
	ssize_t n = lfp_ring_peek(ph->ring, buf, cap, &ticket);
	struct hdr h;
	int ret;

	if (!took(ph, c, "peek", cap, n))
		return 0;
	/* Whole and untorn even if another consumer takes it meanwhile. */
	h = check_entry(ph, c, buf, n, 0);
	ret = lfp_ring_consume(ph->ring, ticket);
	if (ret == -ESTALE) {
		atomic_fetch_add_explicit(&ph->estale, 1, memory_order_relaxed);
		return 0;
	}
	CHECK(ret == 0, "%s: consumer %u: consume = %d", ph->name, c, ret);
	record(ph, c, last, &h);
	atomic_fetch_add_explicit(&ph->by_peek, 1, memory_order_relaxed);
	return 1;
}

static size_t take_burst(struct phase *ph, unsigned c, int64_t *last,
                         uint64_t *rng)
{
	unsigned char buf[MAXBURST * SLOT];
	size_t n = 1 + stress_rand(rng) % MAXBURST, len_each = pick_cap(rng);
	size_t k = lfp_ring_dequeue_burst(ph->ring, buf, len_each, n), i;
	struct hdr h;

	CHECK(k <= n, "%s: consumer %u: burst of %zu took %zu", ph->name, c, n, k);
	for (i = 0; i < k; i++) {
		h = check_entry(ph, c, buf + i * len_each, 0, len_each);
		record(ph, c, last, &h);
	}
	if (k && k < n)
		atomic_fetch_add_explicit(&ph->partial_out, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ph->by_burst, k, memory_order_relaxed);
	return k;
}

static void *consumer(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->ph;
	uint64_t total = (uint64_t)ph->nprod * ph->per_producer;
	uint64_t rng = 2000 + w->id;
	int64_t last[MAXTHR];
	unsigned i, spins = 0;
	size_t k;

	for (i = 0; i < MAXTHR; i++)
		last[i] = -1;
	pthread_barrier_wait(&ph->start);
	while (atomic_load_explicit(&ph->consumed, memory_order_relaxed) < total) {
		enum mode m = ph->cons_mode;

		if (m == MIXED)
			m = (enum mode)(stress_rand(&rng) % 3);
		switch (m) {
		case PEEK:
			k = take_peek(ph, w->id, last, &rng);
			break;
		case BURST:
			k = take_burst(ph, w->id, last, &rng);
			break;
		default:
			k = take_dequeue(ph, w->id, last, &rng);
			break;
		}
		if (k) {
			atomic_fetch_add_explicit(&ph->consumed, k,
			                          memory_order_relaxed);
			spins = 0;
		} else {
			wait_round(ph, &spins);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ phases */

/* The watchdog's report: how far the phase got. */
static void report_phase(void *arg)
{
	struct phase *ph = arg;

	fprintf(stderr, "%s: %llu of %llu entries consumed, ring count %zu\n",
	        ph->name, (unsigned long long)atomic_load(&ph->consumed),
	        (unsigned long long)ph->nprod * ph->per_producer,
	        lfp_ring_count(ph->ring));
}

struct totals {
	uint64_t entries, estale, toosmall, partial;
};

static void run_phase(struct phase *ph, struct totals *tot)
{
	pthread_t t[2 * MAXTHR];
	struct worker w[2 * MAXTHR];
	struct stress_watchdog dog;
	double limit = 90.0 * stress_scale() * (stress_tsan() ? 2 : 1);
	uint64_t total = (uint64_t)ph->nprod * ph->per_producer;
	size_t words = (ph->per_producer + 63) / 64, i;
	unsigned char buf[SLOT];
	uint64_t ticket = 0;
	unsigned n = 0, p, j;
	int ret;

	CHECK(ph->nprod <= MAXTHR && ph->ncons <= MAXTHR, "%s: too many threads",
	      ph->name);
	ret = lfp_ring_create_flags(ph->capacity, SLOT, ph->flags, &ph->ring);
	CHECK(ret == 0, "%s: lfp_ring_create = %d", ph->name, ret);
	for (p = 0; p < ph->nprod; p++) {
		ph->seen[p] = calloc(words, sizeof(*ph->seen[p]));
		CHECK(ph->seen[p], "%s: out of memory", ph->name);
	}
	ret = pthread_barrier_init(&ph->start, NULL, ph->nprod + ph->ncons);
	CHECK(ret == 0, "%s: pthread_barrier_init = %d", ph->name, ret);
	/* Waiting loops check the deadline; the watchdog, a little later,
	 * catches a thread stuck inside a ring call. */
	ph->deadline = stress_deadline_in(limit, ph->name);
	stress_watchdog_start(&dog, limit + 15, ph->name, report_phase, ph);

	for (j = 0; j < ph->ncons; j++, n++) {
		w[n].ph = ph;
		w[n].id = j;
		stress_spawn(&t[n], consumer, &w[n]);
	}
	for (p = 0; p < ph->nprod; p++, n++) {
		w[n].ph = ph;
		w[n].id = p;
		stress_spawn(&t[n], producer, &w[n]);
	}
	for (j = 0; j < n; j++)
		stress_join(t[j]);
	stress_watchdog_stop(&dog);

	CHECK(atomic_load(&ph->consumed) == total, "%s: consumed %llu of %llu",
	      ph->name, (unsigned long long)atomic_load(&ph->consumed),
	      (unsigned long long)total);
	for (p = 0; p < ph->nprod; p++) {
		for (i = 0; i < ph->per_producer; i++)
			CHECK(atomic_load(&ph->seen[p][i >> 6]) >> (i & 63) & 1,
			      "%s: producer %u seq %zu never delivered", ph->name,
			      p, i);
		free(ph->seen[p]);
	}
	CHECK(lfp_ring_count(ph->ring) == 0, "%s: %zu entries left", ph->name,
	      lfp_ring_count(ph->ring));
	ret = (int)lfp_ring_dequeue(ph->ring, buf, sizeof(buf));
	CHECK(ret == -EAGAIN, "%s: dequeue after the end = %d", ph->name, ret);
	ret = (int)lfp_ring_peek(ph->ring, buf, sizeof(buf), &ticket);
	CHECK(ret == -EAGAIN, "%s: peek after the end = %d", ph->name, ret);
	/* Each phase exercised the calls it is about. */
	if (ph->cons_mode == PEEK)
		CHECK(atomic_load(&ph->by_peek) == total, "%s: %llu of %llu "
		      "taken by peek+consume", ph->name,
		      (unsigned long long)atomic_load(&ph->by_peek),
		      (unsigned long long)total);
	if (ph->cons_mode == BURST)
		CHECK(atomic_load(&ph->by_burst) == total, "%s: %llu of %llu "
		      "taken by bursts", ph->name,
		      (unsigned long long)atomic_load(&ph->by_burst),
		      (unsigned long long)total);

	pthread_barrier_destroy(&ph->start);
	lfp_ring_destroy(ph->ring);
	tot->entries += total;
	tot->estale += atomic_load(&ph->estale);
	tot->toosmall += atomic_load(&ph->toosmall);
	tot->partial += atomic_load(&ph->partial_in) +
	                atomic_load(&ph->partial_out);
}

int main(void)
{
	/* Entries per producer: about 6M in all by default, 1M under TSan;
	 * LFP_STRESS=long multiplies by 10. */
	static struct phase phases[] = {
		{ .name = "single", .capacity = 64, .nprod = 4, .ncons = 4,
		  .prod_mode = SINGLE, .cons_mode = SINGLE },
		{ .name = "peek", .capacity = 4, .nprod = 4, .ncons = 4,
		  .prod_mode = SINGLE, .cons_mode = PEEK },
		{ .name = "burst", .capacity = 64, .nprod = 4, .ncons = 4,
		  .prod_mode = BURST, .cons_mode = BURST },
		{ .name = "mixed", .capacity = 8, .nprod = 4, .ncons = 4,
		  .prod_mode = MIXED, .cons_mode = MIXED },
		{ .name = "spsc", .capacity = 64, .nprod = 1, .ncons = 1,
		  .prod_mode = MIXED, .cons_mode = MIXED },
		{ .name = "single producer", .capacity = 8, .nprod = 1, .ncons = 4,
		  .flags = LFP_SINGLE_PRODUCER, .prod_mode = MIXED, .cons_mode = MIXED },
		{ .name = "single consumer", .capacity = 8, .nprod = 4, .ncons = 1,
		  .flags = LFP_SINGLE_CONSUMER, .prod_mode = MIXED, .cons_mode = MIXED },
		{ .name = "index ring", .capacity = 8, .nprod = 1, .ncons = 1,
		  .flags = LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER,
		  .prod_mode = MIXED, .cons_mode = MIXED },
		{ .name = "index ring, peeks", .capacity = 4, .nprod = 1, .ncons = 1,
		  .flags = LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER,
		  .prod_mode = SINGLE, .cons_mode = PEEK },
		{ .name = "index ring, typed bursts", .capacity = 8, .nprod = 1,
		  .ncons = 1, .flags = LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER,
		  .prod_mode = TYPED, .cons_mode = MIXED },
	};
	static const uint64_t per[][2] = { /* normal, TSan */
		{ 450000, 80000 },
		{ 250000, 40000 },
		{ 400000, 60000 },
		{ 250000, 40000 },
		{ 600000, 100000 },
		{ 600000, 100000 },
		{ 200000, 40000 },
		{ 600000, 100000 },
		{ 400000, 60000 },
		{ 600000, 100000 },
	};
	struct totals tot = { 0, 0, 0, 0 };
	uint64_t t0 = stress_now_ns();
	size_t i;

	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		uint64_t n = stress_count(per[i][0], per[i][1]);

		CHECK(n < UINT32_MAX, "%llu entries per producer do not fit the "
		      "32-bit sequence", (unsigned long long)n);
		phases[i].per_producer = (uint32_t)n;
		run_phase(&phases[i], &tot);
	}
	printf("stress_ring: PASS %zu phases (4x4 single/peek/burst/mixed, 1x1; "
	       "single producer 1x4, single consumer 4x1, index ring 1x1: "
	       "mixed, peeks, typed bursts), "
	       "%llu entries exactly once and in order, %llu stale consumes, "
	       "%llu short buffers, %llu partial bursts, %.1f s%s%s\n",
	       sizeof(phases) / sizeof(phases[0]),
	       (unsigned long long)tot.entries, (unsigned long long)tot.estale,
	       (unsigned long long)tot.toosmall, (unsigned long long)tot.partial,
	       stress_seconds_since(t0), stress_tsan() ? " [tsan]" : "",
	       stress_scale() > 1 ? " [long]" : "");
	return 0;
}
