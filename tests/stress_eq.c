/*
 * lfpoll event queue under contention and across sleeps: the multi-threaded
 * half of the EQ contract (docs/contract.md, "Event queues" and "Trywait"), as a standalone program
 * so that it also runs under ThreadSanitizer.
 *
 * Every event carries a payload of PHDR..entry_size bytes derived from its
 * writer and sequence, which head the payload with a checksum of the rest;
 * its code (which must fit LFP_EQ_MAX_EVENT) repeats the writer and the low
 * bits of the sequence.  Readers rebuild the expected payload from the
 * header, compare every byte, and check that the code agrees.
 *
 * Phases, each with one summary line:
 *   mpmc        4 writers x 4 readers on one small back-pressured EQ (FD, then
 *               MUTEX_COND); two readers block in sread, two poll with read:
 *               exactly once, per-writer order as each reader sees it, never
 *               an overrun.
 *   pingpong    round trips between two EQs through sread, for FD,
 *               MUTEX_COND, YIELD and UNSPEC: a lost wake-up fails with the
 *               wait object's name instead of hanging.
 *   sleepers    4 threads blocked in sread(-1) on one EQ woken one event at
 *               a time (FD, MUTEX_COND); none lost, every sleeper returns.
 *   trywait     the fi_poll(3) loop: drain with read, lfp_trywait, then
 *               poll(2) on the LFP_GETWAIT fd, against 3 writers with random
 *               pauses (FD, UNSPEC); and the same loop on MUTEX_COND, with
 *               the mutex held across lfp_trywait and pthread_cond_timedwait.
 *               Single consumer: each writer's events arrive consecutively,
 *               and the fd is quiet after the last trywait.
 *   timed       sread with small random timeouts against writers with random
 *               pauses (FD, MUTEX_COND, YIELD): everything written is
 *               received, and -EAGAIN never comes before the timeout.
 *   spsc        an SP/SC EQ through lfp_eq_write_spsc / lfp_eq_read_spsc and
 *               sread, errors queued between events (FD, MUTEX_COND): each
 *               error before the event after it, in order, no sread that
 *               sleeps its whole timeout while the writer writes.
 *   errwake     an error written while a thread sleeps in sread(-1) wakes it
 *               with -LFP_EAVAIL (FD, MUTEX_COND, YIELD).
 *   readerr     2 writers of errors x 2 readerr threads with their own
 *               err_data buffers: exactly once, data intact.
 *   peek        a thread peeking while two others consume (they leave it a
 *               share of the events): every peeked copy is a whole, untorn
 *               event.
 *
 * The deterministic interleavings inside the FD signal protocol are in
 * stress_eq_wake_window.c.
 *
 * A deadline only turns a hang into a failure; there is no timing threshold.
 */
#include <lfpoll/eq.h>

#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "stress_objs.h"

#define ESZ      64           /* entry_size of every EQ here */
#define MAXW     4            /* writers per phase at most */
#define MAXR     4            /* readers per phase at most */
#define STOP     LFP_EQ_MAX_EVENT /* event code: a reader's cue to return */
#define PHDR     12           /* writer, seq, checksum at the payload's start */

static const char *flavour(void)
{
	return stress_tsan() ? " [tsan]" : stress_scale() > 1 ? " [long]" : "";
}

/* A phase's summary line: "stress_eq: <name> PASS <what>, <seconds> s". */
__attribute__((format(printf, 3, 4)))
static void pass(const char *name, uint64_t t0, const char *fmt, ...)
{
	va_list ap;

	printf("stress_eq: %-18s PASS ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(", %.2f s%s\n", stress_seconds_since(t0), flavour());
}

/* A generous deadline, longer for TSan and LFP_STRESS=long. */
static double generous(double s)
{
	return s * stress_scale() * (stress_tsan() ? 3 : 1);
}

static struct lfp_eq *eq_open(size_t size, uint64_t flags, enum lfp_wait_obj obj)
{
	return open_eq(obj, size, flags, ESZ, NULL);
}

static void eq_close(struct lfp_eq *eq)
{
	int ret = lfp_eq_close(eq);

	CHECK(ret == 0, "lfp_eq_close = %d", ret);
}

/* ------------------------------------------------------------ events */

/* Below STOP for every writer < MAXW. */
static uint32_t ev_code(unsigned w, uint32_t seq)
{
	return (uint32_t)w << 11 | (seq & 0x7ff);
}

static uint64_t mix(uint64_t x)
{
	return stress_rand(&x);
}

/* The payload of (w, seq): its length (0..ESZ) and bytes. */
static size_t make_payload(unsigned w, uint32_t seq, unsigned char *buf)
{
	uint64_t h = mix((uint64_t)w << 32 | seq);
	size_t len = PHDR + (size_t)(h % (ESZ - PHDR + 1)), i;
	uint32_t sum, ww = w;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)(i * 29u);
	sum = stress_checksum(STRESS_CHECKSUM_INIT, buf + PHDR, len - PHDR);
	sum = stress_checksum(sum, &ww, sizeof(ww));
	sum = stress_checksum(sum, &seq, sizeof(seq));
	memcpy(buf, &ww, 4);
	memcpy(buf + 4, &seq, 4);
	memcpy(buf + 8, &sum, 4);
	return len;
}

/*
 * Check one event against the code it came with: a known writer and
 * sequence, the payload it was written with, byte for byte.  Returns the
 * writer; *seq gets the sequence.
 */
static unsigned check_event(const char *phase, unsigned r, uint32_t code,
                            const unsigned char *buf, ssize_t n,
                            unsigned nw, uint32_t per, uint32_t *seq)
{
	unsigned char want[ESZ];
	uint32_t w = UINT32_MAX;
	size_t len;

	*seq = UINT32_MAX;
	if (n >= PHDR) {
		memcpy(&w, buf, 4);
		memcpy(seq, buf + 4, 4);
	}
	CHECK(w < nw && *seq < per, "%s: reader %u got event code %#x with %zd "
	      "bytes: no such writer/sequence", phase, r, code, n);
	CHECK(code == ev_code(w, *seq), "%s: reader %u: writer %u seq %u came "
	      "with code %#x, written with %#x", phase, r, w, *seq, code,
	      ev_code(w, *seq));
	len = make_payload(w, *seq, want);
	CHECK(n == (ssize_t)len, "%s: reader %u: writer %u seq %u written with "
	      "%zu bytes, read %zd", phase, r, w, *seq, len, n);
	CHECK(memcmp(buf, want, len) == 0, "%s: reader %u: writer %u seq %u: "
	      "payload differs (torn or corrupt)", phase, r, w, *seq);
	return w;
}

/* Exactly once across all readers, and in order for this reader. */
struct tally {
	const char *name;
	unsigned nw;
	uint32_t per;
	_Atomic unsigned char *seen[MAXW];
	_Atomic uint64_t consumed;
};

static void tally_init(struct tally *t, const char *name, unsigned nw,
                       uint32_t per)
{
	unsigned w;

	t->name = name;
	t->nw = nw;
	t->per = per;
	atomic_init(&t->consumed, 0);
	for (w = 0; w < nw; w++) {
		t->seen[w] = calloc(per, 1);
		CHECK(t->seen[w], "%s: out of memory", name);
	}
}

static void tally_record(struct tally *t, unsigned r, int64_t *last,
                         unsigned w, uint32_t seq)
{
	unsigned char old = atomic_exchange_explicit(&t->seen[w][seq], 1,
	                                             memory_order_relaxed);

	CHECK(old == 0, "%s: reader %u: writer %u seq %u delivered twice",
	      t->name, r, w, seq);
	CHECK((int64_t)seq > last[w], "%s: reader %u: writer %u seq %u after seq "
	      "%lld: out of order", t->name, r, w, seq, (long long)last[w]);
	last[w] = seq;
	atomic_fetch_add_explicit(&t->consumed, 1, memory_order_relaxed);
}

static void tally_fini(struct tally *t)
{
	unsigned w;
	uint32_t s;

	CHECK(atomic_load(&t->consumed) == (uint64_t)t->nw * t->per,
	      "%s: %llu of %llu events received", t->name,
	      (unsigned long long)atomic_load(&t->consumed),
	      (unsigned long long)t->nw * t->per);
	for (w = 0; w < t->nw; w++) {
		for (s = 0; s < t->per; s++)
			CHECK(atomic_load(&t->seen[w][s]) == 1, "%s: writer %u seq "
			      "%u never delivered", t->name, w, s);
		free(t->seen[w]);
	}
}

/* ------------------------------------------------------------ phases */

/*
 * What the multi-threaded phases share (the crew's shared state): the EQ,
 * the tally of what was received, a deadline, the crew of writers and
 * readers, and what each phase counts for its summary line.
 */
struct phase {
	struct lfp_eq *eq;
	struct tally t;
	struct stress_deadline d;
	struct stress_crew crew;
	uint64_t t0;
	uint64_t pause_seed;    /* writers pause at random unless 0 */
	_Atomic uint64_t full;  /* writes retried on a full EQ */
	unsigned nsread;        /* mpmc: readers 0..nsread-1 use sread(-1) */
	_Atomic uint64_t by_sread, by_read, stopped;    /* mpmc */
	uint64_t sleeps, agains;                        /* trywait (1 consumer) */
	_Atomic uint64_t timeouts, zero_timeouts;       /* timed */
	_Atomic uint64_t peeks, toosmall;               /* peek */
};

/* A phase on eq, with nw writers of per events each. */
static void phase_open(struct phase *ph, const char *name, struct lfp_eq *eq,
                       unsigned nw, uint32_t per)
{
	memset(ph, 0, sizeof(*ph));
	ph->t0 = stress_now_ns();
	ph->eq = eq;
	tally_init(&ph->t, name, nw, per);
	ph->d = stress_deadline_in(generous(60), name);
}

/* After the crew: check the tally, close the EQ. */
static void phase_close(struct phase *ph)
{
	tally_fini(&ph->t);
	eq_close(ph->eq);
}

/*
 * A whole phase whose threads need only be started and joined: kinds (see
 * stress_crew_run) on eq; writers pause at random when pause_seed is not 0.
 */
static void phase_run(struct phase *ph, const char *name, struct lfp_eq *eq,
                      unsigned nw, uint32_t per, uint64_t pause_seed,
                      const struct stress_kind *kinds)
{
	phase_open(ph, name, eq, nw, per);
	ph->pause_seed = pause_seed;
	stress_crew_run(&ph->crew, ph, kinds);
	phase_close(ph);
}

/* One round of a phase's waiting loop, failing at its deadline. */
static void phase_backoff(struct phase *ph, unsigned *spins)
{
	stress_backoff(spins);
	if ((*spins & 63) == 0)
		CHECK_DEADLINE(&ph->d);
}

/* Write one event, retrying (and counting it) while a back-pressured EQ is full. */
static void write_event(struct phase *ph, uint32_t code,
                        const unsigned char *buf, size_t len)
{
	unsigned spins = 0;
	ssize_t ret;

	while ((ret = lfp_eq_write(ph->eq, code, buf, len, 0)) == -EAGAIN) {
		atomic_fetch_add_explicit(&ph->full, 1, memory_order_relaxed);
		phase_backoff(ph, &spins);
	}
	CHECK(ret == (ssize_t)len, "%s: write of code %#x (%zu bytes) = %zd%s",
	      ph->t.name, code, len, ret,
	      ret == -LFP_EOVERRUN ? " (a back-pressured EQ overran)" : "");
}

static void random_pause(uint64_t *rng)
{
	uint64_t x = stress_rand(rng);

	if (x % 64 == 0)
		sleep_us((unsigned)(x >> 8) % 200);
	else if (x % 16 == 0)
		sched_yield();
}

/* A writer: per events as writer id, with random pauses if pause_seed. */
static void *phase_writer(void *p)
{
	struct stress_worker *a = p;
	struct phase *ph = a->shared;
	unsigned char buf[ESZ];
	uint64_t rng = ph->pause_seed + a->id;
	uint32_t seq;
	size_t len;

	stress_crew_start(a);
	for (seq = 0; seq < ph->t.per; seq++) {
		if (ph->pause_seed)
			random_pause(&rng);
		len = make_payload(a->id, seq, buf);
		write_event(ph, ev_code(a->id, seq), buf, len);
	}
	return NULL;
}

/* A reader: its phase, its number, the last sequence seen of each writer. */
struct reader {
	struct phase *ph;
	const char *name;
	unsigned id, spins;
	uint64_t total;         /* events in the phase */
	int consecutive;        /* the only consumer: no gaps in a writer's */
	int64_t last[MAXW];
};

/* A reader's start: nothing seen from any writer; then wait for the crew. */
static void reader_start(struct reader *r, void *worker)
{
	struct stress_worker *a = worker;
	unsigned w;

	memset(r, 0, sizeof(*r));
	r->ph = a->shared;
	r->name = r->ph->t.name;
	r->id = a->id;
	r->total = (uint64_t)r->ph->t.nw * r->ph->t.per;
	for (w = 0; w < MAXW; w++)
		r->last[w] = -1;
	stress_crew_start(a);
}

static int reader_done(const struct reader *r)
{
	return atomic_load_explicit(&r->ph->t.consumed,
	                            memory_order_relaxed) >= r->total;
}

/* Nothing to read this round: back off, failing at the deadline. */
static void reader_backoff(struct reader *r)
{
	phase_backoff(r->ph, &r->spins);
}

/* Check an event read, and count it once; returns its writer. */
static unsigned reader_take(struct reader *r, uint32_t code,
                            const unsigned char *buf, ssize_t n, uint32_t *seq)
{
	struct phase *ph = r->ph;
	unsigned w = check_event(r->name, r->id, code, buf, n, ph->t.nw,
	                         ph->t.per, seq);

	CHECK(!r->consecutive || (int64_t)*seq == r->last[w] + 1, "%s: writer "
	      "%u seq %u after %lld", r->name, w, *seq, (long long)r->last[w]);
	tally_record(&ph->t, r->id, r->last, w, *seq);
	r->spins = 0;
	return w;
}

/* ------------------------------------------------------------ mpmc */

static void *mpmc_reader(void *p)
{
	struct reader r;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	int blocking;
	ssize_t n;

	reader_start(&r, p);
	blocking = r.id < r.ph->nsread;
	for (;;) {
		if (blocking) {
			n = lfp_eq_sread(r.ph->eq, &code, buf, sizeof(buf), -1, 0);
			CHECK(n >= 0, "%s: reader %u: sread(-1) = %zd", r.name,
			      r.id, n);
			if (code == STOP) {
				CHECK(n == 0, "%s: STOP with %zd bytes", r.name, n);
				atomic_fetch_add(&r.ph->stopped, 1);
				return NULL;
			}
		} else {
			if (reader_done(&r))
				return NULL;
			n = lfp_eq_read(r.ph->eq, &code, buf, sizeof(buf), 0);
			if (n == -EAGAIN) {
				reader_backoff(&r);
				continue;
			}
			CHECK(n >= 0, "%s: reader %u: read = %zd", r.name, r.id, n);
			CHECK(code != STOP, "%s: a polling reader got STOP", r.name);
		}
		(void)reader_take(&r, code, buf, n, &seq);
		atomic_fetch_add_explicit(blocking ? &r.ph->by_sread :
		                          &r.ph->by_read, 1, memory_order_relaxed);
	}
}

static void phase_mpmc(enum lfp_wait_obj obj, uint32_t per)
{
	static char name[64];
	struct phase ph;
	unsigned i, rd, wr;
	uint32_t code;
	unsigned char buf[ESZ];

	snprintf(name, sizeof(name), "mpmc %s", obj_name(obj));
	phase_open(&ph, name, eq_open(64, LFP_EQ_BACKPRESSURE, obj), MAXW, per);
	ph.nsread = 2;
	stress_crew_init(&ph.crew, &ph, MAXW + MAXR);
	rd = stress_crew_spawn(&ph.crew, MAXR, mpmc_reader);
	wr = stress_crew_spawn(&ph.crew, MAXW, phase_writer);
	stress_crew_join(&ph.crew, wr, MAXW);
	stress_await(&ph.t.consumed, (uint64_t)MAXW * per, &ph.d,
	             "events received");
	stress_crew_join(&ph.crew, rd + ph.nsread, MAXR - ph.nsread);
	/* Now only the sleepers read: one STOP each must wake them. */
	for (i = 0; i < ph.nsread; i++)
		write_event(&ph, STOP, NULL, 0);
	ph.d = stress_deadline_in(generous(60), name);
	stress_await(&ph.stopped, ph.nsread, &ph.d,
	             "sleeping readers woken by STOP");
	stress_crew_fini(&ph.crew);
	CHECK(lfp_eq_read(ph.eq, &code, buf, sizeof(buf), 0) == -EAGAIN,
	      "%s: events left over", name);
	phase_close(&ph);
	pass(name, ph.t0, "%u writers x %u readers (%u in sread), %llu events "
	     "exactly once and in order (%llu by sread, %llu by read), %llu "
	     "full retries", MAXW, MAXR, ph.nsread, (unsigned long long)MAXW * per,
	     (unsigned long long)atomic_load(&ph.by_sread),
	     (unsigned long long)atomic_load(&ph.by_read),
	     (unsigned long long)atomic_load(&ph.full));
}

/* ------------------------------------------------------------ pingpong */

struct pingpong {
	struct lfp_eq *a2b, *b2a;
	uint32_t rounds;
	const char *name;
	_Atomic uint64_t ping_done, pong_done; /* rounds completed by each side */
};

static void pp_get(struct pingpong *pp, struct lfp_eq *eq, uint32_t want,
                   const char *who)
{
	unsigned char buf[ESZ], exp[ESZ];
	uint32_t code = 0;
	size_t len;
	ssize_t n = lfp_eq_sread(eq, &code, buf, sizeof(buf), -1, 0);

	CHECK(n >= 0, "%s: %s: sread(-1) in round %u = %zd", pp->name, who, want, n);
	CHECK(code == ev_code(0, want), "%s: %s: round %u got event %u",
	      pp->name, who, want, code);
	len = make_payload(0, want, exp);
	CHECK(n == (ssize_t)len && memcmp(buf, exp, len) == 0, "%s: %s: round "
	      "%u: payload differs", pp->name, who, want);
}

static void pp_put(struct pingpong *pp, struct lfp_eq *eq, uint32_t i)
{
	unsigned char buf[ESZ];
	size_t len = make_payload(0, i, buf);
	ssize_t n = lfp_eq_write(eq, ev_code(0, i), buf, len, 0);

	CHECK(n == (ssize_t)len, "%s: write in round %u = %zd", pp->name, i, n);
}

static void *pp_ping(void *p)
{
	struct pingpong *pp = p;
	uint32_t i;

	for (i = 0; i < pp->rounds; i++) {
		pp_put(pp, pp->a2b, i);
		pp_get(pp, pp->b2a, i, "ping");
		atomic_store_explicit(&pp->ping_done, i + 1, memory_order_relaxed);
	}
	return NULL;
}

static void *pp_pong(void *p)
{
	struct pingpong *pp = p;
	uint32_t i;

	for (i = 0; i < pp->rounds; i++) {
		pp_get(pp, pp->a2b, i, "pong");
		atomic_store_explicit(&pp->pong_done, i + 1, memory_order_relaxed);
		pp_put(pp, pp->b2a, i);
	}
	return NULL;
}

static void phase_pingpong(enum lfp_wait_obj obj, uint32_t rounds)
{
	static char name[64];
	struct pingpong pp;
	struct stress_deadline d;
	pthread_t t1, t2;
	uint64_t t0 = stress_now_ns();
	unsigned spins = 0;

	snprintf(name, sizeof(name), "pingpong %s", obj_name(obj));
	memset(&pp, 0, sizeof(pp));
	pp.name = name;
	pp.rounds = rounds;
	/* Size 2: a round trip never has more than one event in flight. */
	pp.a2b = eq_open(2, 0, obj);
	pp.b2a = eq_open(2, 0, obj);
	d = stress_deadline_in(generous(120), name);
	stress_spawn(&t1, pp_ping, &pp);
	stress_spawn(&t2, pp_pong, &pp);
	while (atomic_load(&pp.ping_done) < rounds) {
		sleep_us(spins++ < 100 ? 100 : 10000);
		CHECK(!stress_deadline_passed(&d), "%s: lost wake-up with wait "
		      "object %s: after %.0f s ping finished %llu and pong %llu of "
		      "%u round trips", name, obj_name(obj), d.seconds,
		      (unsigned long long)atomic_load(&pp.ping_done),
		      (unsigned long long)atomic_load(&pp.pong_done), rounds);
	}
	stress_join(t1);
	stress_join(t2);
	eq_close(pp.a2b);
	eq_close(pp.b2a);
	pass(name, t0, "%u round trips through sread(-1)", rounds);
}

/* ------------------------------------------------------------ sleepers */

/*
 * The phases whose readers sleep in sread(-1) on one EQ while the main
 * thread feeds it one event (or error) at a time (sleepers, errwake).
 */
struct sleepers {
	struct lfp_eq *eq;
	char name[64];
	uint64_t t0;
	uint32_t events;
	_Atomic unsigned char *seen;
	_Atomic uint64_t got, stopped;
	_Atomic uint64_t per_reader[MAXR];
};

static void sleepers_open(struct sleepers *s, const char *phase,
                          enum lfp_wait_obj obj, uint32_t events)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s %s", phase, obj_name(obj));
	s->t0 = stress_now_ns();
	s->events = events;
	s->eq = eq_open(8, 0, obj);
}

/* Wait, with a fresh deadline, until *v reaches want. */
static void sleepers_await(struct sleepers *s, _Atomic uint64_t *v,
                           uint64_t want, const char *what)
{
	struct stress_deadline d = stress_deadline_in(generous(60), s->name);

	stress_await(v, want, &d, what);
}

static void *sleeper(void *p)
{
	struct stress_worker *a = p;
	struct sleepers *s = a->shared;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	int64_t last[1] = { -1 };
	ssize_t n;

	for (;;) {
		n = lfp_eq_sread(s->eq, &code, buf, sizeof(buf), -1, 0);
		CHECK(n >= 0, "%s: sleeper %u: sread(-1) = %zd", s->name, a->id, n);
		if (code == STOP) {
			atomic_fetch_add(&s->stopped, 1);
			return NULL;
		}
		(void)check_event(s->name, a->id, code, buf, n, 1, s->events, &seq);
		CHECK(atomic_exchange(&s->seen[seq], 1) == 0, "%s: sleeper %u: "
		      "event %u delivered twice", s->name, a->id, seq);
		CHECK((int64_t)seq > last[0], "%s: sleeper %u: event %u after %lld",
		      s->name, a->id, seq, (long long)last[0]);
		last[0] = seq;
		atomic_fetch_add(&s->per_reader[a->id], 1);
		atomic_fetch_add(&s->got, 1);
	}
}

static void phase_sleepers(enum lfp_wait_obj obj, uint32_t events)
{
	struct sleepers s;
	struct stress_crew crew;
	unsigned char buf[ESZ];
	uint64_t rng = 42;
	uint32_t i;
	unsigned r, woke = 0;
	size_t len;

	sleepers_open(&s, "sleepers", obj, events);
	s.seen = calloc(events, 1);
	CHECK(s.seen, "out of memory");
	stress_crew_init(&crew, &s, MAXR);
	stress_crew_spawn(&crew, MAXR, sleeper);
	sleep_us(20000); /* let all four fall asleep */
	for (i = 0; i < events; i++) {
		/* Now and then give every reader time to go back to sleep, so
		 * that the event lands on four sleeping threads. */
		if (stress_rand(&rng) % 8 == 0)
			sleep_us(200);
		len = make_payload(0, i, buf);
		CHECK(lfp_eq_write(s.eq, ev_code(0, i), buf, len, 0) == (ssize_t)len,
		      "%s: write %u", s.name, i);
		sleepers_await(&s, &s.got, (uint64_t)i + 1,
		               "events received (event i+1 woke no sleeper)");
	}
	/* One STOP at a time: each must wake a sleeper, which then returns. */
	for (r = 0; r < MAXR; r++) {
		CHECK(lfp_eq_write(s.eq, STOP, NULL, 0, 0) == 0, "%s: STOP", s.name);
		sleepers_await(&s, &s.stopped, r + 1, "sleepers returned after STOP");
	}
	stress_crew_fini(&crew);
	for (r = 0; r < MAXR; r++)
		woke += atomic_load(&s.per_reader[r]) > 0;
	for (i = 0; i < events; i++)
		CHECK(atomic_load(&s.seen[i]) == 1, "%s: event %u lost", s.name, i);
	free(s.seen);
	eq_close(s.eq);
	pass(s.name, s.t0, "%u events one at a time to %u sleepers in sread(-1) "
	     "(%u of them took events), all returned", events, MAXR, woke);
}

/* ------------------------------------------------------------ trywait */

/*
 * The consumer's start: its wait object (LFP_GETWAIT into wait), then the
 * crew.  It is the only consumer: each writer's events arrive consecutively.
 */
static void tw_start(struct reader *r, void *worker, void *wait)
{
	struct phase *ph = ((struct stress_worker *)worker)->shared;
	int ret = lfp_control(&ph->eq->fid, LFP_GETWAIT, wait);

	CHECK(ret == 0, "%s: LFP_GETWAIT = %d", ph->t.name, ret);
	reader_start(r, worker);
	r->consecutive = 1;
}

/* Take everything there is; 1 once every event is in. */
static int tw_drain(struct reader *r)
{
	unsigned char buf[ESZ];
	uint32_t code, seq;
	ssize_t n;

	while ((n = lfp_eq_read(r->ph->eq, &code, buf, sizeof(buf), 0)) >= 0)
		(void)reader_take(r, code, buf, n, &seq);
	CHECK(n == -EAGAIN, "%s: read = %zd", r->name, n);
	return reader_done(r);
}

/* The consumer of fi_poll(3): drain, trywait, then block in poll(2). */
static void *tw_consumer_fd(void *p)
{
	struct reader r;
	struct phase *ph;
	struct lfp_fid *fid;
	struct pollfd pfd;
	int fd = -1, ret;

	tw_start(&r, p, &fd);
	ph = r.ph;
	fid = &ph->eq->fid;
	CHECK(fd >= 0, "%s: LFP_GETWAIT gave fd %d", r.name, fd);
	while (!tw_drain(&r)) {
		ret = lfp_trywait(&fid, 1);
		if (ret == -EAGAIN) {
			ph->agains++;
			continue;
		}
		CHECK(ret == 0, "%s: lfp_trywait = %d", ph->t.name, ret);
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ret = poll(&pfd, 1, (int)(ph->d.seconds * 1000));
		CHECK(ret == 1 && (pfd.revents & POLLIN), "%s: poll(2) after "
		      "trywait returned 0 = %d (revents %#x) with %llu of %llu "
		      "events received: %s", ph->t.name, ret, pfd.revents,
		      (unsigned long long)atomic_load(&ph->t.consumed),
		      (unsigned long long)r.total,
		      ret == 0 ? "slept to the deadline, a lost wake-up" : "error");
		ph->sleeps++;
	}
	/* Drained and idle: trywait clears the fd, which stays quiet. */
	ret = lfp_trywait(&fid, 1);
	CHECK(ret == 0, "%s: trywait on the drained EQ = %d", ph->t.name, ret);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ret = poll(&pfd, 1, 0);
	CHECK(ret == 0, "%s: fd readable after the final trywait returned 0",
	      ph->t.name);
	return NULL;
}

/*
 * The same loop on the MUTEX_COND wait object, with the mutex held across
 * lfp_trywait and pthread_cond_timedwait (lfp_trywait(3)'s mutex rule), on
 * the cond's CLOCK_MONOTONIC.
 */
static void *tw_consumer_mc(void *p)
{
	struct lfp_mutex_cond mc = { NULL, NULL };
	struct reader r;
	struct phase *ph;
	struct lfp_fid *fid;
	struct timespec ts;
	uint64_t until;
	int ret, tw;

	tw_start(&r, p, &mc);
	ph = r.ph;
	fid = &ph->eq->fid;
	CHECK(mc.mutex && mc.cond, "%s: LFP_GETWAIT gave no mutex/cond", r.name);
	while (!tw_drain(&r)) {
		pthread_mutex_lock(mc.mutex);
		tw = lfp_trywait(&fid, 1);
		ret = 0;
		if (tw == 0) {
			until = stress_now_ns() + (uint64_t)(ph->d.seconds * 1e9);
			ts.tv_sec = (time_t)(until / 1000000000u);
			ts.tv_nsec = (long)(until % 1000000000u);
			ret = pthread_cond_timedwait(mc.cond, mc.mutex, &ts);
		}
		pthread_mutex_unlock(mc.mutex);
		if (tw == -EAGAIN) {
			ph->agains++;
			continue;
		}
		CHECK(tw == 0, "%s: lfp_trywait = %d", ph->t.name, tw);
		CHECK(ret == 0, "%s: pthread_cond_timedwait after trywait "
		      "returned 0 = %s with %llu of %llu events received%s",
		      ph->t.name, strerror(ret),
		      (unsigned long long)atomic_load(&ph->t.consumed),
		      (unsigned long long)r.total,
		      ret == ETIMEDOUT ? ": a lost wake-up" : "");
		ph->sleeps++;
	}
	return NULL;
}

static void phase_trywait(enum lfp_wait_obj obj, uint32_t total)
{
	static char name[64];
	int mc = obj == LFP_WAIT_MUTEX_COND;
	unsigned nw = 3;
	/* The consumer fails by itself at its deadline. */
	const struct stress_kind kinds[] = {
		{ 1, mc ? tw_consumer_mc : tw_consumer_fd }, { nw, phase_writer },
		{ 0, NULL }
	};
	struct phase ph;

	snprintf(name, sizeof(name), "trywait %s", obj_name(obj));
	phase_run(&ph, name, eq_open(256, LFP_EQ_BACKPRESSURE, obj), nw,
	          (total + nw - 1) / nw, 77, kinds);
	pass(name, ph.t0, "%u writers, %llu events through the drain/trywait/%s "
	     "loop, %llu sleeps, %llu trywait -EAGAIN", nw,
	     (unsigned long long)nw * ph.t.per, mc ? "cond_wait" : "poll(2)",
	     (unsigned long long)ph.sleeps, (unsigned long long)ph.agains);
}

/* ------------------------------------------------------------ timed */

static void *timed_reader(void *p)
{
	struct reader r;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	uint64_t rng, t0, el;
	int timeout;
	ssize_t n;

	reader_start(&r, p);
	rng = 900 + r.id;
	while (!reader_done(&r)) {
		timeout = (int)(stress_rand(&rng) % 4); /* 0..3 ms */
		t0 = stress_now_ns();
		n = lfp_eq_sread(r.ph->eq, &code, buf, sizeof(buf), timeout, 0);
		if (n == -EAGAIN) {
			el = stress_now_ns() - t0;
			CHECK(el >= (uint64_t)timeout * 1000000, "%s: reader %u: "
			      "sread(%d ms) gave -EAGAIN after %.3f ms", r.name,
			      r.id, timeout, (double)el / 1e6);
			atomic_fetch_add_explicit(timeout ? &r.ph->timeouts :
			                          &r.ph->zero_timeouts, 1,
			                          memory_order_relaxed);
			CHECK_DEADLINE(&r.ph->d);
			continue;
		}
		CHECK(n >= 0, "%s: reader %u: sread(%d ms) = %zd", r.name,
		      r.id, timeout, n);
		(void)reader_take(&r, code, buf, n, &seq);
	}
	return NULL;
}

static void phase_timed(enum lfp_wait_obj obj, uint32_t per)
{
	static char name[64];
	unsigned nw = 2, nr = 3;
	const struct stress_kind kinds[] = {
		{ nr, timed_reader }, { nw, phase_writer }, { 0, NULL }
	};
	struct phase ph;

	snprintf(name, sizeof(name), "timed %s", obj_name(obj));
	phase_run(&ph, name, eq_open(64, LFP_EQ_BACKPRESSURE, obj), nw, per, 500,
	          kinds);
	pass(name, ph.t0, "%u writers x %u readers, %llu events exactly once, "
	     "%llu timed-out sreads (+%llu with timeout 0)", nw, nr,
	     (unsigned long long)nw * per,
	     (unsigned long long)atomic_load(&ph.timeouts),
	     (unsigned long long)atomic_load(&ph.zero_timeouts));
}

/* ------------------------------------------------------------ spsc */

/*
 * An SP/SC EQ driven through lfp_eq_write_spsc and lfp_eq_read_spsc, with
 * lfp_eq_sread when the reader finds it empty, and constant lengths (events
 * of ESZ bytes, zero after the payload) so that both calls take their
 * inline paths: one writer with random pauses (and a nap every
 * SPSC_NAP_EVERY events, in which the reader goes to sleep), which queues
 * an error (data = seq) before every SPSC_ERR_EVERY-th event.  The reader
 * must see every event once and in order, each error before the event
 * written after it, and must never sleep the whole of its sread timeout
 * while the writer is writing (a lost wake-up).
 */
#define SPSC_ERR_EVERY 64
#define SPSC_NAP_EVERY 512
#define SPSC_SREAD_MS  3000

static void *spsc_writer(void *p)
{
	struct stress_worker *a = p;
	struct phase *ph = a->shared;
	struct lfp_eq_err_entry err;
	unsigned char buf[ESZ];
	uint64_t rng = ph->pause_seed;
	unsigned spins;
	uint32_t seq;
	ssize_t ret;

	stress_crew_start(a);
	for (seq = 0; seq < ph->t.per; seq++) {
		random_pause(&rng);
		if (seq % SPSC_NAP_EVERY == SPSC_NAP_EVERY / 2)
			sleep_us(2000); /* long enough for the reader to sleep */
		if (seq % SPSC_ERR_EVERY == 0) {
			memset(&err, 0, sizeof(err));
			err.err = EIO;
			err.data = seq;
			spins = 0;
			while ((ret = lfp_eq_write_err(ph->eq, &err)) == -EAGAIN)
				phase_backoff(ph, &spins);
			CHECK(ret == (ssize_t)sizeof(err), "%s: write_err before seq "
			      "%u = %zd", ph->t.name, seq, ret);
		}
		/* The whole ESZ bytes, zero after the payload: a constant
		 * length, which is what takes the call's inline path. */
		memset(buf, 0, sizeof(buf));
		(void)make_payload(0, seq, buf);
		spins = 0;
		while ((ret = lfp_eq_write_spsc(ph->eq, ev_code(0, seq), buf, ESZ,
		                                0)) == -EAGAIN) {
			atomic_fetch_add_explicit(&ph->full, 1, memory_order_relaxed);
			phase_backoff(ph, &spins);
		}
		CHECK(ret == ESZ, "%s: write_spsc of seq %u = %zd", ph->t.name,
		      seq, ret);
	}
	return NULL;
}

static void *spsc_reader(void *p)
{
	struct lfp_eq_err_entry err;
	struct reader r;
	unsigned char buf[ESZ], want[ESZ];
	uint32_t code, seq, next_err = 0;
	size_t len, i;
	uint64_t t0, el;
	ssize_t n;

	reader_start(&r, p);
	r.consecutive = 1;
	while (!reader_done(&r)) {
		n = lfp_eq_read_spsc(r.ph->eq, &code, buf, sizeof(buf), 0);
		if (n == -EAGAIN) {
			t0 = stress_now_ns();
			n = lfp_eq_sread(r.ph->eq, &code, buf, sizeof(buf),
			                 SPSC_SREAD_MS, 0);
			el = stress_now_ns() - t0;
			CHECK(el < (uint64_t)SPSC_SREAD_MS * 1000000, "%s: sread slept "
			      "its whole %d ms (returned %zd) while the writer wrote: "
			      "a lost wake-up", r.name, SPSC_SREAD_MS, n);
			r.ph->sleeps++;
			if (n == -EAGAIN)
				continue; /* the event came between the two reads */
		}
		if (n == -LFP_EAVAIL) {
			memset(&err, 0, sizeof(err));
			n = lfp_eq_readerr(r.ph->eq, &err, 0);
			CHECK(n == (ssize_t)sizeof(err) && err.err == EIO &&
			      err.data == next_err, "%s: readerr = %zd, err %d, data "
			      "%llu; expected the error before seq %u", r.name, n,
			      err.err, (unsigned long long)err.data, next_err);
			next_err += SPSC_ERR_EVERY;
			continue;
		}
		CHECK(n == ESZ, "%s: read = %zd", r.name, n);
		memcpy(&seq, buf + 4, 4);
		len = seq < r.ph->t.per ? make_payload(0, seq, want) : ESZ;
		for (i = len; i < ESZ; i++)
			CHECK(buf[i] == 0, "%s: seq %u: byte %zu after the payload is "
			      "%#x, written 0", r.name, seq, i, buf[i]);
		(void)reader_take(&r, code, buf, (ssize_t)len, &seq);
		CHECK(seq < next_err, "%s: seq %u read before the error queued "
		      "ahead of it (next error expected: %u)", r.name, seq, next_err);
	}
	return NULL;
}

static void phase_spsc(enum lfp_wait_obj obj, uint32_t per)
{
	static char name[64];
	const struct stress_kind kinds[] = {
		{ 1, spsc_reader }, { 1, spsc_writer }, { 0, NULL }
	};
	struct phase ph;

	snprintf(name, sizeof(name), "spsc %s", obj_name(obj));
	phase_run(&ph, name, eq_open(16, LFP_EQ_BACKPRESSURE | LFP_SINGLE_PRODUCER |
	                                 LFP_SINGLE_CONSUMER, obj),
	          1, per, 77, kinds);
	pass(name, ph.t0, "%u events and %u errors in order through the SP/SC "
	     "calls, %llu sreads, %llu writes found it full", per,
	     (per + SPSC_ERR_EVERY - 1) / SPSC_ERR_EVERY,
	     (unsigned long long)ph.sleeps,
	     (unsigned long long)atomic_load(&ph.full));
}

/* ------------------------------------------------------------ errwake */

static void *errwake_reader(void *p)
{
	struct sleepers *e = p;
	struct lfp_eq_err_entry ent;
	unsigned char buf[ESZ];
	uint32_t code, i;
	ssize_t r;

	for (i = 0; i < e->events; i++) {
		r = lfp_eq_sread(e->eq, &code, buf, sizeof(buf), -1, 0);
		CHECK(r == -LFP_EAVAIL, "%s: sread(-1) woken by error %u = %zd",
		      e->name, i, r);
		memset(&ent, 0, sizeof(ent));
		r = lfp_eq_readerr(e->eq, &ent, 0);
		CHECK(r == (ssize_t)sizeof(ent) && ent.err == (int)i + 1 &&
		      ent.data == i, "%s: readerr %u = %zd, err %d, data %llu",
		      e->name, i, r, ent.err, (unsigned long long)ent.data);
		atomic_fetch_add(&e->got, 1);
	}
	return NULL;
}

static void phase_errwake(enum lfp_wait_obj obj, uint32_t n)
{
	struct sleepers e;
	struct lfp_eq_err_entry ent;
	pthread_t t;
	uint64_t rng = 3;
	uint32_t i;

	sleepers_open(&e, "errwake", obj, n);
	stress_spawn(&t, errwake_reader, &e);
	for (i = 0; i < n; i++) {
		sleep_us((unsigned)(stress_rand(&rng) % 1000)); /* mostly asleep */
		memset(&ent, 0, sizeof(ent));
		ent.fid = &e.eq->fid;
		ent.err = (int)i + 1;
		ent.data = i;
		CHECK(lfp_eq_write_err(e.eq, &ent) == (ssize_t)sizeof(ent),
		      "%s: write_err %u", e.name, i);
		sleepers_await(&e, &e.got, (uint64_t)i + 1,
		               "errors seen (the error woke no sleeper)");
	}
	stress_join(t);
	eq_close(e.eq);
	pass(e.name, e.t0, "%u errors each woke sread(-1) with -LFP_EAVAIL", n);
}

/* ------------------------------------------------------------ readerr */

static void *errmt_writer(void *p)
{
	struct stress_worker *a = p;
	struct phase *ph = a->shared;
	struct lfp_eq_err_entry ent;
	unsigned char data[ESZ];
	unsigned spins;
	uint32_t seq;
	ssize_t r;

	stress_crew_start(a);
	for (seq = 0; seq < ph->t.per; seq++) {
		memset(&ent, 0, sizeof(ent));
		ent.fid = &ph->eq->fid;
		ent.context = (void *)(uintptr_t)(a->id + 1);
		ent.data = ev_code(a->id, seq);
		ent.err = EIO;
		ent.prov_errno = (int)seq;
		ent.err_data = data;
		ent.err_data_size = make_payload(a->id, seq, data);
		spins = 0;
		while ((r = lfp_eq_write_err(ph->eq, &ent)) == -EAGAIN) {
			atomic_fetch_add_explicit(&ph->full, 1, memory_order_relaxed);
			phase_backoff(ph, &spins);
		}
		CHECK(r == (ssize_t)sizeof(ent), "%s: writer %u: write_err = %zd",
		      ph->t.name, a->id, r);
	}
	return NULL;
}

static void *errmt_reader(void *p)
{
	struct lfp_eq_err_entry ent;
	unsigned char data[ESZ + 8], ebuf[ESZ];
	struct reader r;
	uint32_t code, seq;
	unsigned w;
	ssize_t n;

	reader_start(&r, p);
	while (!reader_done(&r)) {
		memset(&ent, 0, sizeof(ent));
		ent.err_data = data;
		ent.err_data_size = sizeof(data);
		n = lfp_eq_readerr(r.ph->eq, &ent, 0);
		if (n == -EAGAIN) {
			/* No events were written: read sees errors or nothing. */
			n = lfp_eq_read(r.ph->eq, &code, ebuf, sizeof(ebuf), 0);
			CHECK(n == -EAGAIN || n == -LFP_EAVAIL, "%s: read = %zd",
			      r.name, n);
			reader_backoff(&r);
			continue;
		}
		CHECK(n == (ssize_t)sizeof(ent), "%s: readerr = %zd", r.name, n);
		CHECK(ent.err == EIO && ent.fid == &r.ph->eq->fid, "%s: err %d",
		      r.name, ent.err);
		CHECK(ent.err_data == data, "%s: err_data moved off my buffer",
		      r.name);
		w = reader_take(&r, (uint32_t)ent.data, data,
		                (ssize_t)ent.err_data_size, &seq);
		CHECK(ent.context == (void *)(uintptr_t)(w + 1) &&
		      ent.prov_errno == (int)seq, "%s: context/prov_errno of "
		      "writer %u seq %u mixed up", r.name, w, seq);
	}
	return NULL;
}

static void phase_readerr(uint32_t per)
{
	static const struct stress_kind kinds[] = {
		{ 2, errmt_reader }, { 2, errmt_writer }, { 0, NULL }
	};
	struct phase ph;

	phase_run(&ph, "readerr", eq_open(32, LFP_EQ_BACKPRESSURE, LFP_WAIT_FD),
	          2, per, 0, kinds);
	pass(ph.t.name, ph.t0, "2 error writers x 2 readerr threads, %llu errors "
	     "exactly once with their err_data, %llu full retries",
	     (unsigned long long)2 * per,
	     (unsigned long long)atomic_load(&ph.full));
}

/* ------------------------------------------------------------ peek */

static void *peek_consumer(void *p)
{
	struct reader r;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	ssize_t n;

	reader_start(&r, p);
	while (!reader_done(&r)) {
		/* Leave the peeker a share of the events (at least one whole
		 * peek per 16 consumed), so that the phase is about peeks that
		 * race consumers and not about two consumers alone. */
		if (atomic_load_explicit(&r.ph->peeks, memory_order_relaxed) * 16 <
		    atomic_load_explicit(&r.ph->t.consumed, memory_order_relaxed)) {
			reader_backoff(&r);
			continue;
		}
		n = lfp_eq_read(r.ph->eq, &code, buf, sizeof(buf), 0);
		if (n == -EAGAIN) {
			reader_backoff(&r);
			continue;
		}
		CHECK(n >= 0, "%s: read = %zd", r.name, n);
		(void)reader_take(&r, code, buf, n, &seq);
	}
	return NULL;
}

/* Peeks and never consumes: it is done when the consumers are. */
static void *peeker(void *p)
{
	struct reader r;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	uint64_t rng = 11;
	size_t cap;
	ssize_t n;

	reader_start(&r, p);
	while (!reader_done(&r)) {
		cap = stress_rand(&rng) % 4 ? sizeof(buf) : stress_rand(&rng) % (ESZ + 1);
		n = lfp_eq_read(r.ph->eq, &code, buf, cap, LFP_PEEK);
		if (n == -EAGAIN) {
			reader_backoff(&r);
			continue;
		}
		r.spins = 0;
		if (n == -LFP_ETOOSMALL) {
			CHECK(cap < ESZ, "%s: peek -LFP_ETOOSMALL with %zu bytes",
			      r.name, cap);
			atomic_fetch_add_explicit(&r.ph->toosmall, 1,
			                          memory_order_relaxed);
			continue;
		}
		CHECK(n >= 0 && (size_t)n <= cap, "%s: peek (%zu) = %zd", r.name,
		      cap, n);
		/* Whole and untorn, whoever consumes it meanwhile. */
		(void)check_event(r.name, r.id, code, buf, n, 1, r.ph->t.per, &seq);
		atomic_fetch_add_explicit(&r.ph->peeks, 1, memory_order_relaxed);
	}
	return NULL;
}

static void phase_peek(uint32_t per)
{
	static const struct stress_kind kinds[] = {
		{ 1, phase_writer }, { 2, peek_consumer }, { 1, peeker }, { 0, NULL }
	};
	struct phase ph;

	phase_run(&ph, "peek", eq_open(16, LFP_EQ_BACKPRESSURE, LFP_WAIT_NONE),
	          1, per, 0, kinds);
	CHECK(atomic_load(&ph.peeks) * 16 >= per - 16, "peek: only %llu peeks",
	      (unsigned long long)atomic_load(&ph.peeks));
	pass(ph.t.name, ph.t0, "1 writer, 2 consumers, 1 peeker: %llu events "
	     "exactly once, %llu whole peeked copies, %llu short peeks",
	     (unsigned long long)per, (unsigned long long)atomic_load(&ph.peeks),
	     (unsigned long long)atomic_load(&ph.toosmall));
}

/* ------------------------------------------------------------ main */

int main(void)
{
	uint32_t pp_rounds = (uint32_t)stress_count(100000, 20000);
	uint64_t t0 = stress_now_ns();

	setvbuf(stdout, NULL, _IOLBF, 0);

	phase_mpmc(LFP_WAIT_FD, (uint32_t)stress_count(50000, 25000));
	phase_mpmc(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(25000, 12000));
	phase_pingpong(LFP_WAIT_FD, pp_rounds);
	phase_pingpong(LFP_WAIT_MUTEX_COND, pp_rounds);
	phase_pingpong(LFP_WAIT_YIELD, pp_rounds);
	phase_pingpong(LFP_WAIT_UNSPEC, pp_rounds);
	phase_sleepers(LFP_WAIT_FD, (uint32_t)stress_count(5000, 3000));
	phase_sleepers(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(5000, 3000));
	phase_trywait(LFP_WAIT_FD, (uint32_t)stress_count(100000, 40000));
	phase_trywait(LFP_WAIT_UNSPEC, (uint32_t)stress_count(30000, 10000));
	phase_trywait(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(30000, 10000));
	phase_timed(LFP_WAIT_FD, (uint32_t)stress_count(20000, 10000));
	phase_timed(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(20000, 10000));
	phase_timed(LFP_WAIT_YIELD, (uint32_t)stress_count(20000, 10000));
	phase_spsc(LFP_WAIT_FD, (uint32_t)stress_count(100000, 30000));
	phase_spsc(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(100000, 30000));
	phase_errwake(LFP_WAIT_FD, (uint32_t)stress_count(300, 100));
	phase_errwake(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(300, 100));
	phase_errwake(LFP_WAIT_YIELD, (uint32_t)stress_count(300, 100));
	phase_readerr((uint32_t)stress_count(20000, 10000));
	phase_peek((uint32_t)stress_count(200000, 60000));
	/* With a defect named (make check-broken) the SP/SC phases, where X
	 * races, go round again for up to 30 s: one pass catches X in most
	 * runs, not in all, and a run stops at its first failed check. */
	while (stress_broken_run() && stress_seconds_since(t0) < 30.0) {
		phase_spsc(LFP_WAIT_FD, (uint32_t)stress_count(100000, 30000));
		phase_spsc(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(100000, 30000));
	}
	printf("stress_eq: PASS all phases, %.1f s%s\n", stress_seconds_since(t0),
	       flavour());
	return 0;
}
