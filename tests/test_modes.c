/*
 * Queue modes (LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER, both) beyond the
 * ring's own suite (test_ring.c runs in every mode): EQs and CQs keep their
 * rules in every mode; a second thread on a single side aborts in an
 * LFP_DEBUG build; slot memory of an idle queue is not resident.
 *
 * Built with LFP_DEBUG (the misuse checks) and LFP_SCHED_POINTS: a thread
 * can be parked inside a call (lfp_test_sched below) while another enters
 * the same side, so the misuse tests do not depend on timing.
 */
#define _GNU_SOURCE /* mincore, usleep */
#define LFP_DEBUG
#define LFP_SCHED_POINTS

#include <lfpoll/lfpoll.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "support.h"

#define SP LFP_SINGLE_PRODUCER
#define SC LFP_SINGLE_CONSUMER

static const uint64_t modes[] = { 0, SP, SC, SP | SC };

static const char *mode_name(uint64_t f)
{
	return f == 0 ? "default" : f == SP ? "single producer" :
	       f == SC ? "single consumer" : "index ring";
}

/* ---------------------------------------------------------------- parking */

/* A thread that reaches the point named `park_at` (on the object
 * `park_obj`) stops there until `release` is set. */
static const char *volatile park_at;
static const void *volatile park_obj;
static atomic_int parked, release;

void lfp_test_sched(const char *where, const void *obj)
{
	if (!park_at || obj != park_obj || strcmp(where, park_at) != 0)
		return;
	park_at = NULL; /* once */
	atomic_store(&parked, 1);
	while (!atomic_load(&release))
		usleep(1000);
}

struct parked_call {
	pthread_t t;
	void (*call)(void *);
	void *arg;
};

static void *parked_main(void *p)
{
	struct parked_call *c = p;

	c->call(c->arg);
	return NULL;
}

/* Run call(arg) in a thread parked at where on obj; return when parked. */
static void park_in(struct parked_call *c, const char *where, const void *obj,
                    void (*call)(void *), void *arg)
{
	int64_t t0 = now_ms();

	atomic_store(&parked, 0);
	atomic_store(&release, 0);
	park_obj = obj;
	park_at = where;
	c->call = call;
	c->arg = arg;
	cr_assert_eq(pthread_create(&c->t, NULL, parked_main, c), 0);
	while (!atomic_load(&parked)) {
		cr_assert_lt(now_ms() - t0, 5000, "the thread never reached %s", where);
		usleep(1000);
	}
}

static void unpark(struct parked_call *c)
{
	atomic_store(&release, 1);
	pthread_join(c->t, NULL);
}

/* ---------------------------------------------------------------- misuse */

static struct lfp_ring *ring;
static unsigned char item[16];

static void ring_put(void *arg)
{
	(void)arg;
	(void)lfp_ring_enqueue(ring, item, sizeof(item));
}

static void ring_get(void *arg)
{
	unsigned char out[16];

	(void)arg;
	(void)lfp_ring_dequeue(ring, out, sizeof(out));
}

/* With one thread parked inside a call on the single side, a second call
 * on that side aborts; a call on the other side does not. */
static void misuse(uint64_t flags, int producer)
{
	struct parked_call c;
	unsigned char out[16];

	cr_assert_eq(lfp_ring_create_flags(8, sizeof(item), flags, &ring), 0);
	if (!producer)
		cr_assert_eq(lfp_ring_enqueue(ring, item, sizeof(item)), 0);
	park_in(&c, flags == (SP | SC) ? (producer ? "ring.idx.filled" : "ring.idx.taken")
	                               : (producer ? "ring.prod.claimed" : "ring.cons.claimed"),
	        ring, producer ? ring_put : ring_get, NULL);
	/* The other side is free to go. */
	if (producer)
		(void)lfp_ring_dequeue(ring, out, sizeof(out));
	else
		(void)lfp_ring_enqueue(ring, item, sizeof(item));
	if (producer)
		ring_put(NULL); /* aborts */
	else
		ring_get(NULL);
	unpark(&c);
}

TestSuite(modes, .timeout = 60);

Test(modes, second_producer_on_single_producer_ring_aborts, .signal = SIGABRT)
{
	misuse(SP, 1);
}

Test(modes, second_consumer_on_single_consumer_ring_aborts, .signal = SIGABRT)
{
	misuse(SC, 0);
}

Test(modes, second_producer_on_index_ring_aborts, .signal = SIGABRT)
{
	misuse(SP | SC, 1);
}

Test(modes, second_consumer_on_index_ring_aborts, .signal = SIGABRT)
{
	misuse(SP | SC, 0);
}

/* A peek is a consumer call: beside a parked dequeue on a single-consumer
 * per-slot ring it aborts too (the check once covered the index ring's
 * peek only). */
Test(modes, peek_beside_consumer_on_single_consumer_ring_aborts, .signal = SIGABRT)
{
	struct parked_call c;
	unsigned char out[16];
	uint64_t ticket;

	cr_assert_eq(lfp_ring_create_flags(8, sizeof(item), SC, &ring), 0);
	cr_assert_eq(lfp_ring_enqueue(ring, item, sizeof(item)), 0);
	park_in(&c, "ring.cons.claimed", ring, ring_get, NULL);
	(void)lfp_ring_peek(ring, out, sizeof(out), &ticket); /* aborts */
	unpark(&c);
}

static struct lfp_eq *g_eq;

static void eq_put(void *arg)
{
	(void)arg;
	(void)lfp_eq_write(g_eq, 1, item, sizeof(item), 0);
}

/* An EQ's single producer writes its errors too: write_err from a second
 * thread while a write is inside aborts. */
Test(modes, write_err_beside_a_single_producer_eq_write_aborts, .signal = SIGABRT)
{
	struct lfp_eq_attr a = { .size = 8, .flags = SP };
	struct lfp_eq_err_entry e = { .err = EIO };
	struct parked_call c;

	g_eq = open_eq_attr(&a, NULL);
	park_in(&c, "ring.prod.claimed", &g_eq->events, eq_put, NULL);
	(void)lfp_eq_write_err(g_eq, &e);
	unpark(&c);
}

static struct lfp_cq *g_cq;

static void cq_put(void *arg)
{
	struct lfp_cq_entry e = { arg };

	(void)lfp_cq_write(g_cq, &e, 1);
}

Test(modes, second_writer_on_single_producer_cq_aborts, .signal = SIGABRT)
{
	struct lfp_cq_attr a = { .size = 8, .flags = SP | SC };
	struct lfp_cq_entry e = { NULL };
	struct parked_call c;

	g_cq = open_cq_attr(&a, NULL);
	park_in(&c, "ring.idx.filled", &g_cq->entries, cq_put, NULL);
	(void)lfp_cq_write(g_cq, &e, 1);
	unpark(&c);
}

/* The SP/SC calls' inline paths check their side too: a second writer
 * while the first is between its fill and its commit, a second reader
 * while the first is between its claim and its give-back. */
static void cq_put_spsc(void *arg)
{
	struct lfp_cq_entry e = { arg };

	(void)lfp_cq_write_spsc(g_cq, &e, 1);
}

static void cq_get_spsc(void *arg)
{
	struct lfp_cq_entry e;

	(void)arg;
	(void)lfp_cq_read_spsc(g_cq, &e, 1);
}

Test(modes, second_writer_through_the_cq_spsc_call_aborts, .signal = SIGABRT)
{
	struct lfp_cq_attr a = { .size = 8, .flags = SP | SC };
	struct lfp_cq_entry e = { NULL };
	struct parked_call c;

	g_cq = open_cq_attr(&a, NULL);
	park_in(&c, "ring.idx.filled", &g_cq->entries, cq_put_spsc, NULL);
	(void)lfp_cq_write_spsc(g_cq, &e, 1);
	unpark(&c);
}

Test(modes, second_reader_through_the_cq_spsc_call_aborts, .signal = SIGABRT)
{
	struct lfp_cq_attr a = { .size = 8, .flags = SP | SC };
	struct lfp_cq_entry e = { NULL };
	struct parked_call c;

	g_cq = open_cq_attr(&a, NULL);
	cr_assert_eq(lfp_cq_write_spsc(g_cq, &e, 1), 1);
	cr_assert_eq(lfp_cq_write_spsc(g_cq, &e, 1), 1);
	park_in(&c, "ring.idx.claimed", &g_cq->entries, cq_get_spsc, NULL);
	(void)lfp_cq_read_spsc(g_cq, &e, 1);
	unpark(&c);
}

/* One thread at a time is all a single side asks: calls from many threads
 * in turn are fine. */
static void *take_turn(void *arg)
{
	(void)arg;
	ring_put(NULL);
	ring_get(NULL);
	return NULL;
}

Test(modes, single_sides_taken_in_turn_by_many_threads_are_fine)
{
	pthread_t t;
	size_t m;
	int i;

	for (m = 1; m < 4; m++) {
		cr_assert_eq(lfp_ring_create_flags(8, sizeof(item), modes[m], &ring), 0);
		for (i = 0; i < 16; i++) {
			cr_assert_eq(pthread_create(&t, NULL, take_turn, NULL), 0);
			pthread_join(t, NULL);
		}
		cr_assert_eq(lfp_ring_count(ring), 0);
		lfp_ring_destroy(ring);
	}
}

Test(modes, unknown_ring_flags_are_einval)
{
	struct lfp_ring *r = NULL;
	unsigned bit;

	for (bit = 0; bit < 64; bit++) {
		uint64_t f = (uint64_t)1 << bit;

		if (f & (SP | SC))
			continue;
		cr_assert_eq(lfp_ring_memsize_flags(8, 8, f), 0, "bit %u", bit);
		cr_assert_eq(lfp_ring_create_flags(8, 8, f, &r), -EINVAL, "bit %u", bit);
	}
	cr_assert_null(r);
}

/* ---------------------------------------------------------------- idle memory */

/* Pages of [p, p + n) resident now. */
static size_t resident_pages(const void *p, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);
	size_t pages = ((uintptr_t)p + n - a + (size_t)page - 1) / (size_t)page, i, in = 0;
	unsigned char *v = malloc(pages);

	cr_assert_not_null(v);
	cr_assert_eq(mincore((void *)a, pages * (size_t)page, v), 0, "mincore: %s",
	             strerror(errno));
	for (i = 0; i < pages; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

static size_t ring_bytes(const struct lfp_ring *r)
{
	return lfp_ring_memsize_flags(lfp_ring_capacity(r), lfp_ring_slot_size(r),
	                              (r->mode & LFP__RING_SP ? SP : 0) |
	                              (r->mode & LFP__RING_SC ? SC : 0));
}

/* An idle queue holds no resident slot page: its slot memory is zero when
 * free, so it is used as the kernel hands it out, untouched. */
Test(modes, an_idle_eq_or_cq_of_default_size_touches_no_slot_page)
{
	struct lfp_eq *eq;
	struct lfp_cq *cq;
	struct lfp_cq_entry e = { NULL };
	unsigned char buf[64] = { 0 };
	uint32_t code;
	size_t m;

	for (m = 0; m < 4; m++) {
		struct lfp_eq_attr ea = { .flags = modes[m], .wait_obj = LFP_WAIT_FD };
		struct lfp_cq_attr ca = { .flags = modes[m], .wait_obj = LFP_WAIT_FD };

		eq = open_eq_attr(&ea, NULL);
		cq = open_cq_attr(&ca, NULL);
		cr_assert_eq(resident_pages(eq->events.slots, ring_bytes(&eq->events)), 0,
		             "%s EQ: idle event slots are resident", mode_name(modes[m]));
		cr_assert_eq(resident_pages(eq->errq.ring.slots, ring_bytes(&eq->errq.ring)), 0,
		             "%s EQ: idle error slots are resident", mode_name(modes[m]));
		cr_assert_eq(resident_pages(cq->entries.slots, ring_bytes(&cq->entries)), 0,
		             "%s CQ: idle slots are resident", mode_name(modes[m]));
		cr_assert_eq(resident_pages(cq->errq.ring.slots, ring_bytes(&cq->errq.ring)), 0,
		             "%s CQ: idle error slots are resident", mode_name(modes[m]));
		/* Use makes them resident, a page at a time. */
		cr_assert_eq(lfp_eq_write(eq, 1, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
		cr_assert_eq(lfp_eq_read(eq, &code, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
		cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
		cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
		cr_assert_geq(resident_pages(eq->events.slots, ring_bytes(&eq->events)), 1);
		cr_assert_leq(resident_pages(cq->entries.slots, ring_bytes(&cq->entries)), 2,
		              "one completion made more than its page resident");
		cr_assert_eq(lfp_eq_close(eq), 0);
		cr_assert_eq(lfp_cq_close(cq), 0);
	}
}

/* ---------------------------------------------------------------- EQ, CQ */

/*
 * Every mode keeps the EQ's rules: FIFO with codes and lengths, PEEK,
 * short buffers, errors first, overrun final (also once a read made
 * room), a failed read leaves *event alone, back-pressure.  With
 * spsc_calls, through lfp_eq_write_spsc and lfp_eq_read_spsc, which must
 * give the same answers on an EQ of every mode (their own path on an
 * SP/SC EQ, the plain calls' on the others).  Constant lengths take the
 * calls' inline paths, the varying ones (8 + i) their out-of-line paths.
 */
#define EQW(eq, ev, b, n) (spsc_calls ? lfp_eq_write_spsc(eq, ev, b, n, 0) \
                                      : lfp_eq_write(eq, ev, b, n, 0))
#define EQR(eq, ev, b, n, f) (spsc_calls ? lfp_eq_read_spsc(eq, ev, b, n, f) \
                                         : lfp_eq_read(eq, ev, b, n, f))

static void eq_rules(int spsc_calls)
{
	unsigned char in[24], out[24];
	struct lfp_eq_err_entry err;
	struct lfp_eq *eq;
	uint32_t code;
	size_t m, i;

	for (m = 0; m < 4; m++) {
		struct lfp_eq_attr a = { .size = 4, .flags = modes[m], .entry_size = 24 };
		char mn[64];

		snprintf(mn, sizeof(mn), "%s%s", mode_name(modes[m]),
		         spsc_calls ? ", spsc calls" : "");

		eq = open_eq_attr(&a, NULL);
		for (i = 0; i < 3; i++) {
			pattern(in, sizeof(in), (unsigned)i);
			cr_assert_eq(EQW(eq, 10 + (uint32_t)i, in, 8 + i),
			             (ssize_t)(8 + i), "%s", mn);
		}
		code = 0xDEADBEEF;
		cr_assert_eq(EQR(eq, &code, out, 4, 0), -LFP_ETOOSMALL, "%s", mn);
		cr_assert_eq(code, 0xDEADBEEF, "%s: a failed read wrote *event", mn);
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), LFP_PEEK), 8, "%s", mn);
		cr_assert_eq(code, 10);
		err.fid = NULL;
		memset(&err, 0, sizeof(err));
		err.err = EIO;
		cr_assert_eq(lfp_eq_write_err(eq, &err), (ssize_t)sizeof(err), "%s", mn);
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), -LFP_EAVAIL,
		             "%s: an event passed an error queued before it... or after",
		             mn);
		memset(&err, 0, sizeof(err));
		cr_assert_eq(lfp_eq_readerr(eq, &err, 0), (ssize_t)sizeof(err));
		for (i = 0; i < 3; i++) {
			pattern(in, sizeof(in), (unsigned)i);
			cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0),
			             (ssize_t)(8 + i), "%s: event %zu", mn, i);
			cr_assert_eq(code, 10 + i, "%s: event %zu out of order", mn, i);
			cr_assert_arr_eq(out, in, 8 + i, "%s", mn);
		}
		code = 0xDEADBEEF;
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), -EAGAIN, "%s", mn);
		cr_assert_eq(code, 0xDEADBEEF, "%s: a failed read wrote *event", mn);
		/* Fill (4), overrun, then drained: -LFP_EAVAIL for good. */
		for (i = 0; i < 4; i++)
			cr_assert_eq(EQW(eq, 1, in, 4), 4, "%s", mn);
		cr_assert_eq(EQW(eq, 1, in, 4), -LFP_EOVERRUN, "%s", mn);
		cr_assert_eq(EQW(eq, 1, in, 4), -LFP_EOVERRUN, "%s", mn);
		/* With room again the EQ stays overrun: a write after a read
		 * is refused too (it would claim the freed slot). */
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), 4, "%s", mn);
		cr_assert_eq(EQW(eq, 1, in, 4), -LFP_EOVERRUN,
		             "%s: a write with room after the overrun", mn);
		for (i = 1; i < 4; i++)
			cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), 4,
			             "%s: a valid event lost to the overrun", mn);
		code = 0xDEADBEEF;
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), -LFP_EAVAIL, "%s", mn);
		cr_assert_eq(code, 0xDEADBEEF, "%s: a failed read wrote *event", mn);
		cr_assert_eq(lfp_eq_readerr(eq, &err, 0), (ssize_t)sizeof(err));
		cr_assert_eq(err.err, LFP_EOVERRUN, "%s", mn);
		cr_assert_eq(lfp_eq_close(eq), 0);

		a.flags = modes[m] | LFP_EQ_BACKPRESSURE;
		eq = open_eq_attr(&a, NULL);
		for (i = 0; i < 4; i++)
			cr_assert_eq(EQW(eq, 1, in, 4), 4, "%s", mn);
		cr_assert_eq(EQW(eq, 1, in, 4), -EAGAIN, "%s", mn);
		cr_assert_eq(EQR(eq, &code, out, sizeof(out), 0), 4, "%s", mn);
		cr_assert_eq(EQW(eq, 1, in, 4), 4, "%s: no room after a read", mn);
		cr_assert_eq(lfp_eq_close(eq), 0);
	}
}

#undef EQW
#undef EQR

Test(modes, eq_rules_hold_in_every_mode)
{
	eq_rules(0);
}

Test(modes, eq_rules_hold_in_every_mode_through_the_spsc_calls)
{
	eq_rules(1);
}

/* Every mode keeps the CQ's rules: bursts, source addresses, errors
 * first, full is -EAGAIN, sread's threshold. */
Test(modes, cq_rules_hold_in_every_mode)
{
	struct lfp_cq_msg_entry in[8], out[8];
	struct lfp_cq_err_entry err;
	lfp_addr_t src[8], got[8];
	struct lfp_cq *cq;
	size_t m, i, threshold = 3;

	for (m = 0; m < 4; m++) {
		struct lfp_cq_attr a = { .size = 8, .flags = modes[m],
		                         .format = LFP_CQ_FORMAT_MSG,
		                         .wait_obj = LFP_WAIT_MUTEX_COND,
		                         .wait_cond = LFP_CQ_COND_THRESHOLD };
		const char *mn = mode_name(modes[m]);

		cq = open_cq_attr(&a, NULL);
		for (i = 0; i < 8; i++) {
			in[i].op_context = (void *)(uintptr_t)(i + 1);
			in[i].flags = i;
			in[i].len = 100 + i;
			src[i] = 1000 + i;
		}
		cr_assert_eq(lfp_cq_writefrom(cq, in, src, 3), 3, "%s", mn);
		memset(&err, 0, sizeof(err));
		err.err = EIO;
		cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
		cr_assert_eq(lfp_cq_write(cq, in + 3, 5), 5, "%s", mn);
		cr_assert_eq(lfp_cq_write(cq, in, 1), -EAGAIN, "%s: a full CQ", mn);
		cr_assert_eq(lfp_cq_read(cq, out, 8), -LFP_EAVAIL, "%s", mn);
		cr_assert_eq(lfp_cq_readerr(cq, &err, 0), 1);
		cr_assert_eq(lfp_cq_readfrom(cq, out, 2, got), 2, "%s", mn);
		cr_assert_eq(lfp_cq_sreadfrom(cq, out + 2, 8, got + 2, &threshold, 1000), 6,
		             "%s", mn);
		for (i = 0; i < 8; i++) {
			cr_assert_eq(out[i].op_context, in[i].op_context, "%s: entry %zu", mn, i);
			cr_assert_eq(out[i].len, in[i].len, "%s: entry %zu", mn, i);
			cr_assert_eq(got[i], i < 3 ? src[i] : LFP_ADDR_NOTAVAIL, "%s: entry %zu",
			             mn, i);
		}
		cr_assert_eq(lfp_cq_read(cq, out, 8), -EAGAIN, "%s", mn);
		cr_assert_eq(lfp_cq_close(cq), 0);
	}
}

/*
 * A single-producer single-consumer EQ between two threads: every event
 * read once, in order, with its code; through the plain calls or the SP/SC
 * ones.  The reader polls and sleeps in lfp_eq_sread when it finds the EQ
 * empty (one consumer thread may use both); the writer pauses now and then
 * so that the reader does sleep.  A sleep that outlasts 2 s slept through a
 * write: a lost wake-up (the sread would still return the event, at its
 * timeout).
 */
struct spsc_arg {
	struct lfp_eq *eq;
	unsigned n;
	int spsc_calls;
};

static void *spsc_writer(void *p)
{
	struct spsc_arg *a = p;
	unsigned i = 0;
	ssize_t n;

	while (i < a->n) {
		n = a->spsc_calls ? lfp_eq_write_spsc(a->eq, i & 0xff, &i, sizeof(i), 0)
		                  : lfp_eq_write(a->eq, i & 0xff, &i, sizeof(i), 0);
		if (n != (ssize_t)sizeof(i))
			continue;
		if (++i % 4096 == 0)
			usleep(200);
	}
	return NULL;
}

static void spsc_two_threads(int spsc_calls)
{
	struct lfp_eq_attr a = { .size = 16, .flags = SP | SC | LFP_EQ_BACKPRESSURE,
	                         .wait_obj = LFP_WAIT_FD };
	struct spsc_arg w;
	unsigned want = 0, v, sleeps = 0;
	uint32_t code;
	int64_t t0;
	pthread_t t;
	ssize_t n;

	w.eq = open_eq_attr(&a, NULL);
	w.n = 200000;
	w.spsc_calls = spsc_calls;
	cr_assert_eq(pthread_create(&t, NULL, spsc_writer, &w), 0);
	while (want < w.n) {
		n = spsc_calls ? lfp_eq_read_spsc(w.eq, &code, &v, sizeof(v), 0)
		               : lfp_eq_read(w.eq, &code, &v, sizeof(v), 0);
		if (n == -EAGAIN) {
			t0 = now_ms();
			n = lfp_eq_sread(w.eq, &code, &v, sizeof(v), 5000, 0);
			cr_assert_lt(now_ms() - t0, 2000, "sread slept %lld ms with "
			             "event %u written", (long long)(now_ms() - t0), want);
			sleeps++;
		}
		cr_assert_eq(n, (ssize_t)sizeof(v), "read %zd after %u events", n, want);
		cr_assert_eq(v, want, "event %u read as %u", want, v);
		cr_assert_eq(code, want & 0xff, "event %u came with code %u", want, code);
		want++;
	}
	pthread_join(t, NULL);
	cr_assert_gt(sleeps, 0, "the reader never slept: nothing was tested of the wake");
	cr_assert_eq(lfp_eq_close(w.eq), 0);
}

Test(modes, index_eq_between_two_threads_loses_nothing)
{
	spsc_two_threads(0);
}

Test(modes, index_eq_through_the_spsc_calls_loses_nothing)
{
	spsc_two_threads(1);
}

/*
 * The CQ's SP/SC calls answer as the plain ones in every mode (on an SP/SC
 * CQ through their own inline path, on the others out of line): single
 * entries in and out, with and without source addresses, full, empty, an
 * error queued ahead of completions, bad arguments.
 */
Test(modes, cq_single_entries_through_the_spsc_calls_in_every_mode)
{
	struct lfp_cq_msg_entry in[4], out;
	struct lfp_cq_err_entry err;
	lfp_addr_t src = 77, got;
	struct lfp_cq *cq;
	size_t m, i;

	for (m = 0; m < 4; m++) {
		struct lfp_cq_attr a = { .size = 4, .flags = modes[m],
		                         .format = LFP_CQ_FORMAT_MSG,
		                         .wait_obj = LFP_WAIT_FD };
		const char *mn = mode_name(modes[m]);

		cq = open_cq_attr(&a, NULL);
		cr_assert_eq(lfp_cq_read_spsc(cq, &out, 1), -EAGAIN, "%s: empty", mn);
		for (i = 0; i < 4; i++) {
			in[i].op_context = (void *)(uintptr_t)(i + 1);
			in[i].flags = i;
			in[i].len = 100 + i;
		}
		cr_assert_eq(lfp_cq_writefrom_spsc(cq, &in[0], &src, 1), 1, "%s", mn);
		/* After a write a waiter would not sleep: trywait sees the
		 * entry (readiness; the wake itself is tested below). */
		cr_assert_eq(lfp_trywait(&(struct lfp_fid *){ &cq->fid }, 1), -EAGAIN,
		             "%s: trywait after a write", mn);
		for (i = 1; i < 4; i++)
			cr_assert_eq(lfp_cq_write_spsc(cq, &in[i], 1), 1, "%s: entry %zu",
			             mn, i);
		cr_assert_eq(lfp_cq_write_spsc(cq, &in[0], 1), -EAGAIN, "%s: full", mn);
		got = 0;
		cr_assert_eq(lfp_cq_readfrom_spsc(cq, &out, 1, &got), 1, "%s", mn);
		cr_assert_eq(out.op_context, in[0].op_context, "%s", mn);
		cr_assert_eq(out.len, in[0].len, "%s", mn);
		cr_assert_eq(got, src, "%s: source address", mn);
		memset(&err, 0, sizeof(err));
		err.err = EIO;
		cr_assert_eq(lfp_cq_writeerr(cq, &err), (ssize_t)sizeof(err));
		cr_assert_eq(lfp_cq_read_spsc(cq, &out, 1), -LFP_EAVAIL,
		             "%s: an error ahead", mn);
		cr_assert_eq(lfp_cq_readerr(cq, &err, 0), 1);
		for (i = 1; i < 4; i++) {
			got = 0;
			cr_assert_eq(lfp_cq_readfrom_spsc(cq, &out, 1, &got), 1,
			             "%s: entry %zu", mn, i);
			cr_assert_eq(out.op_context, in[i].op_context, "%s: entry %zu", mn, i);
			cr_assert_eq(out.flags, in[i].flags, "%s: entry %zu", mn, i);
			cr_assert_eq(got, LFP_ADDR_NOTAVAIL, "%s: entry %zu", mn, i);
		}
		cr_assert_eq(lfp_cq_read_spsc(cq, &out, 1), -EAGAIN, "%s: drained", mn);
		/* Bursts go out of line, in every mode. */
		cr_assert_eq(lfp_cq_write_spsc(cq, in, 3), 3, "%s: burst", mn);
		cr_assert_eq(lfp_cq_read_spsc(cq, in, 4), 3, "%s: burst", mn);
		cr_assert_eq(lfp_cq_write_spsc(NULL, in, 1), -EINVAL, "%s", mn);
		cr_assert_eq(lfp_cq_write_spsc(cq, NULL, 1), -EINVAL, "%s", mn);
		cr_assert_eq(lfp_cq_read_spsc(cq, NULL, 1), -EINVAL, "%s", mn);
		cr_assert_eq(lfp_cq_read_spsc(NULL, &out, 1), -EINVAL, "%s", mn);
		cr_assert_eq(lfp_cq_close(cq), 0);
	}
}

/*
 * An SP/SC CQ between two threads through the SP/SC calls: single writes,
 * reads of one and of up to 8 in turn, every completion read once and in
 * order with its source address; the reader sleeps in lfp_cq_sread when
 * the CQ is empty, and a sleep of 2 s slept through a write (as
 * spsc_two_threads above).
 */
struct cq_spsc_arg {
	struct lfp_cq *cq;
	unsigned n;
};

static void *cq_spsc_writer(void *p)
{
	struct cq_spsc_arg *a = p;
	struct lfp_cq_entry e;
	lfp_addr_t addr;
	unsigned i = 0;

	while (i < a->n) {
		e.op_context = (void *)(uintptr_t)i;
		addr = (lfp_addr_t)i * 3;
		if (lfp_cq_writefrom_spsc(a->cq, &e, &addr, 1) != 1)
			continue;
		if (++i % 4096 == 0)
			usleep(200);
	}
	return NULL;
}

Test(modes, index_cq_through_the_spsc_calls_loses_nothing)
{
	struct lfp_cq_attr a = { .size = 16, .flags = SP | SC,
	                         .wait_obj = LFP_WAIT_FD };
	struct lfp_cq_entry e[8];
	lfp_addr_t addr[8];
	struct cq_spsc_arg w;
	unsigned want = 0, sleeps = 0, reads = 0;
	int64_t t0;
	pthread_t t;
	ssize_t n, i;

	w.cq = open_cq_attr(&a, NULL);
	w.n = 200000;
	cr_assert_eq(pthread_create(&t, NULL, cq_spsc_writer, &w), 0);
	while (want < w.n) {
		n = reads++ % 2 ? lfp_cq_readfrom_spsc(w.cq, e, 1, addr)
		                : lfp_cq_readfrom_spsc(w.cq, e, 8, addr);
		if (n == -EAGAIN) {
			t0 = now_ms();
			n = lfp_cq_sreadfrom(w.cq, e, 1, addr, NULL, 5000);
			cr_assert_lt(now_ms() - t0, 2000, "sread slept %lld ms with "
			             "completion %u written", (long long)(now_ms() - t0),
			             want);
			sleeps++;
		}
		cr_assert_gt(n, 0, "read %zd after %u completions", n, want);
		for (i = 0; i < n; i++, want++) {
			cr_assert_eq((uintptr_t)e[i].op_context, want,
			             "completion %u read as %zu", want,
			             (size_t)(uintptr_t)e[i].op_context);
			cr_assert_eq(addr[i], (lfp_addr_t)want * 3,
			             "completion %u with address %llu", want,
			             (unsigned long long)addr[i]);
		}
	}
	pthread_join(t, NULL);
	cr_assert_gt(sleeps, 0, "the reader never slept: nothing was tested of the wake");
	cr_assert_eq(lfp_cq_close(w.cq), 0);
}

/*
 * A write through the SP/SC call reaches a poll set the CQ is in (the
 * poll link's push, not only the wait object's wake): lfp_poll reports the
 * CQ after each write that finds it drained, and only then.
 */
Test(modes, cq_spsc_write_reaches_a_poll_set)
{
	struct lfp_cq_attr a = { .size = 8, .flags = SP | SC };
	struct lfp_cq_entry e = { NULL };
	struct lfp_poll *ps = NULL;
	struct lfp_cq *cq;
	void *ctx[4];
	int round;

	cq = open_cq_attr(&a, (void *)0x5c);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll(ps, ctx, 4), 0, "an empty CQ reported");
	for (round = 0; round < 3; round++) {
		cr_assert_eq(lfp_cq_write_spsc(cq, &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, ctx, 4), 1, "round %d: the write was not "
		             "reported", round);
		cr_assert_eq(ctx[0], (void *)0x5c);
		cr_assert_eq(lfp_cq_read_spsc(cq, &e, 1), 1);
		cr_assert_eq(lfp_poll(ps, ctx, 4), 0, "round %d: reported drained",
		             round);
	}
	cr_assert_eq(lfp_poll_del(ps, &cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
}
