/*
 * lfpoll event queue under contention and across sleeps: the multi-threaded
 * half of the EQ contract (docs/contract.md, "Event queues" and "Trywait"), as a standalone program
 * so that it also runs under ThreadSanitizer.
 *
 * Every event names its writer and sequence in the event code (writer << 24
 * | seq) and carries a payload of 0..entry_size bytes derived from both (when
 * there is room, the writer, the sequence and a checksum of the rest are at
 * its start); readers rebuild the expected payload and compare every byte.
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
#include <lfpoll/eq.h> /* first: it selects POSIX under -std=c11 */

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>

#include "stress_objs.h"

#define ESZ      64           /* entry_size of every EQ here */
#define MAXW     4            /* writers per phase at most */
#define MAXR     4            /* readers per phase at most */
#define STOP     0xFFFFFFFFu  /* event code: a reader's cue to return */
#define PHDR     12           /* writer, seq, checksum at the payload's start */

static const char *flavour(void)
{
	return stress_tsan() ? " [tsan]" : stress_scale() > 1 ? " [long]" : "";
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

static uint32_t ev_code(unsigned w, uint32_t seq)
{
	return (uint32_t)w << 24 | seq;
}

static uint64_t mix(uint64_t x)
{
	return stress_rand(&x);
}

/* The payload of (w, seq): its length (0..ESZ) and bytes. */
static size_t make_payload(unsigned w, uint32_t seq, unsigned char *buf)
{
	uint64_t h = mix((uint64_t)w << 32 | seq);
	size_t len = (size_t)(h % (ESZ + 1)), i;
	uint32_t sum, ww = w;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(h >> (8 * (i % 8))) ^ (unsigned char)(i * 29u);
	if (len >= PHDR) {
		sum = stress_checksum(STRESS_CHECKSUM_INIT, buf + PHDR, len - PHDR);
		sum = stress_checksum(sum, &ww, sizeof(ww));
		sum = stress_checksum(sum, &seq, sizeof(seq));
		memcpy(buf, &ww, 4);
		memcpy(buf + 4, &seq, 4);
		memcpy(buf + 8, &sum, 4);
	}
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
	unsigned w = code >> 24;
	size_t len;

	*seq = code & 0xFFFFFF;
	CHECK(w < nw && *seq < per, "%s: reader %u got event code %#x: no such "
	      "writer/sequence", phase, r, code);
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

/* Write one event, retrying while a back-pressured EQ is full. */
static void write_event(const char *phase, struct lfp_eq *eq, uint32_t code,
                        const unsigned char *buf, size_t len,
                        const struct stress_deadline *d)
{
	unsigned spins = 0;
	ssize_t ret;

	while ((ret = lfp_eq_write(eq, code, buf, len, 0)) == -EAGAIN) {
		stress_backoff(&spins);
		if ((spins & 63) == 0)
			CHECK_DEADLINE(d);
	}
	CHECK(ret == (ssize_t)len, "%s: write of code %#x (%zu bytes) = %zd%s",
	      phase, code, len, ret,
	      ret == -LFP_EOVERRUN ? " (a back-pressured EQ overran)" : "");
}

/* Wait, with a deadline, until *v reaches want. */
static void await_u64(_Atomic uint64_t *v, uint64_t want,
                      const struct stress_deadline *d, const char *what)
{
	unsigned spins = 0;

	while (atomic_load(v) < want) {
		if (spins > 200)
			sleep_us(50);
		else
			stress_backoff(&spins);
		spins++;
		CHECK(!stress_deadline_passed(d), "%s: %s: %llu of %llu after "
		      "%.0f s (a lost wake-up or event)", d->what, what,
		      (unsigned long long)atomic_load(v), (unsigned long long)want,
		      d->seconds);
	}
}

/* ------------------------------------------------------------ mpmc */

struct mpmc {
	struct lfp_eq *eq;
	struct tally t;
	pthread_barrier_t start;
	struct stress_deadline d;
	unsigned nsread; /* readers 0..nsread-1 use sread(-1) */
	_Atomic uint64_t by_sread, by_read, full, stopped;
};

struct mpmc_arg {
	struct mpmc *m;
	unsigned id;
};

static void *mpmc_writer(void *p)
{
	struct mpmc_arg *a = p;
	struct mpmc *m = a->m;
	unsigned char buf[ESZ];
	uint32_t seq;
	size_t len;
	unsigned spins;
	ssize_t ret;

	pthread_barrier_wait(&m->start);
	for (seq = 0; seq < m->t.per; seq++) {
		len = make_payload(a->id, seq, buf);
		spins = 0;
		while ((ret = lfp_eq_write(m->eq, ev_code(a->id, seq), buf, len,
		                           0)) == -EAGAIN) {
			atomic_fetch_add_explicit(&m->full, 1, memory_order_relaxed);
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&m->d);
		}
		CHECK(ret == (ssize_t)len, "%s: writer %u seq %u: write = %zd",
		      m->t.name, a->id, seq, ret);
	}
	return NULL;
}

static void *mpmc_reader(void *p)
{
	struct mpmc_arg *a = p;
	struct mpmc *m = a->m;
	uint64_t total = (uint64_t)m->t.nw * m->t.per;
	unsigned char buf[ESZ];
	int64_t last[MAXW];
	uint32_t code, seq;
	unsigned w, spins = 0;
	int blocking = a->id < m->nsread;
	ssize_t n;

	for (w = 0; w < MAXW; w++)
		last[w] = -1;
	pthread_barrier_wait(&m->start);
	for (;;) {
		if (blocking) {
			n = lfp_eq_sread(m->eq, &code, buf, sizeof(buf), -1, 0);
			CHECK(n >= 0, "%s: reader %u: sread(-1) = %zd", m->t.name,
			      a->id, n);
			if (code == STOP) {
				CHECK(n == 0, "%s: STOP with %zd bytes", m->t.name, n);
				atomic_fetch_add(&m->stopped, 1);
				return NULL;
			}
		} else {
			if (atomic_load_explicit(&m->t.consumed,
			                         memory_order_relaxed) >= total)
				return NULL;
			n = lfp_eq_read(m->eq, &code, buf, sizeof(buf), 0);
			if (n == -EAGAIN) {
				stress_backoff(&spins);
				if ((spins & 63) == 0)
					CHECK_DEADLINE(&m->d);
				continue;
			}
			CHECK(n >= 0, "%s: reader %u: read = %zd", m->t.name, a->id, n);
			CHECK(code != STOP, "%s: a polling reader got STOP", m->t.name);
			spins = 0;
		}
		w = check_event(m->t.name, a->id, code, buf, n, m->t.nw, m->t.per,
		                &seq);
		tally_record(&m->t, a->id, last, w, seq);
		atomic_fetch_add_explicit(blocking ? &m->by_sread : &m->by_read, 1,
		                          memory_order_relaxed);
	}
}

static void phase_mpmc(enum lfp_wait_obj obj, uint32_t per)
{
	static char name[64];
	struct mpmc m;
	struct mpmc_arg wa[MAXW], ra[MAXR];
	pthread_t wt[MAXW], rt[MAXR];
	uint64_t t0 = stress_now_ns();
	unsigned i;
	uint32_t code;
	unsigned char buf[ESZ];

	snprintf(name, sizeof(name), "mpmc %s", obj_name(obj));
	memset(&m, 0, sizeof(m));
	m.eq = eq_open(64, LFP_EQ_BACKPRESSURE, obj);
	tally_init(&m.t, name, MAXW, per);
	m.nsread = 2;
	m.d = stress_deadline_in(generous(60), name);
	CHECK(pthread_barrier_init(&m.start, NULL, MAXW + MAXR) == 0, "barrier");
	for (i = 0; i < MAXR; i++) {
		ra[i].m = &m;
		ra[i].id = i;
		stress_spawn(&rt[i], mpmc_reader, &ra[i]);
	}
	for (i = 0; i < MAXW; i++) {
		wa[i].m = &m;
		wa[i].id = i;
		stress_spawn(&wt[i], mpmc_writer, &wa[i]);
	}
	for (i = 0; i < MAXW; i++)
		stress_join(wt[i]);
	await_u64(&m.t.consumed, (uint64_t)MAXW * per, &m.d, "events received");
	for (i = m.nsread; i < MAXR; i++)
		stress_join(rt[i]);
	/* Now only the sleepers read: one STOP each must wake them. */
	for (i = 0; i < m.nsread; i++)
		write_event(name, m.eq, STOP, NULL, 0, &m.d);
	m.d = stress_deadline_in(generous(60), name);
	await_u64(&m.stopped, m.nsread, &m.d, "sleeping readers woken by STOP");
	for (i = 0; i < m.nsread; i++)
		stress_join(rt[i]);
	tally_fini(&m.t);
	CHECK(lfp_eq_read(m.eq, &code, buf, sizeof(buf), 0) == -EAGAIN,
	      "%s: events left over", name);
	pthread_barrier_destroy(&m.start);
	eq_close(m.eq);
	printf("stress_eq: %-18s PASS %u writers x %u readers (%u in sread), "
	       "%llu events exactly once and in order (%llu by sread, %llu by "
	       "read), %llu full retries, %.2f s%s\n", name, MAXW, MAXR,
	       m.nsread, (unsigned long long)MAXW * per,
	       (unsigned long long)atomic_load(&m.by_sread),
	       (unsigned long long)atomic_load(&m.by_read),
	       (unsigned long long)atomic_load(&m.full), stress_seconds_since(t0),
	       flavour());
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
	CHECK(code == want, "%s: %s: round %u got event %u", pp->name, who, want,
	      code);
	len = make_payload(0, want, exp);
	CHECK(n == (ssize_t)len && memcmp(buf, exp, len) == 0, "%s: %s: round "
	      "%u: payload differs", pp->name, who, want);
}

static void pp_put(struct pingpong *pp, struct lfp_eq *eq, uint32_t i)
{
	unsigned char buf[ESZ];
	size_t len = make_payload(0, i, buf);
	ssize_t n = lfp_eq_write(eq, i, buf, len, 0);

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
	printf("stress_eq: %-18s PASS %u round trips through sread(-1), %.2f s%s\n",
	       name, rounds, stress_seconds_since(t0), flavour());
}

/* ------------------------------------------------------------ sleepers */

struct sleepers {
	struct lfp_eq *eq;
	const char *name;
	uint32_t events;
	_Atomic unsigned char *seen;
	_Atomic uint64_t got, stopped;
	_Atomic uint64_t per_reader[MAXR];
};

struct sleeper_arg {
	struct sleepers *s;
	unsigned id;
};

static void *sleeper(void *p)
{
	struct sleeper_arg *a = p;
	struct sleepers *s = a->s;
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
	static char name[64];
	struct sleepers s;
	struct sleeper_arg a[MAXR];
	pthread_t t[MAXR];
	struct stress_deadline d;
	unsigned char buf[ESZ];
	uint64_t t0 = stress_now_ns(), rng = 42;
	uint32_t i;
	unsigned r, woke = 0;
	size_t len;

	snprintf(name, sizeof(name), "sleepers %s", obj_name(obj));
	memset(&s, 0, sizeof(s));
	s.name = name;
	s.events = events;
	s.eq = eq_open(8, 0, obj);
	s.seen = calloc(events, 1);
	CHECK(s.seen, "out of memory");
	for (r = 0; r < MAXR; r++) {
		a[r].s = &s;
		a[r].id = r;
		stress_spawn(&t[r], sleeper, &a[r]);
	}
	sleep_us(20000); /* let all four fall asleep */
	for (i = 0; i < events; i++) {
		/* Now and then give every reader time to go back to sleep, so
		 * that the event lands on four sleeping threads. */
		if (stress_rand(&rng) % 8 == 0)
			sleep_us(200);
		len = make_payload(0, i, buf);
		d = stress_deadline_in(generous(60), name);
		CHECK(lfp_eq_write(s.eq, ev_code(0, i), buf, len, 0) == (ssize_t)len,
		      "%s: write %u", name, i);
		await_u64(&s.got, (uint64_t)i + 1, &d,
		          "events received (event i+1 woke no sleeper)");
	}
	/* One STOP at a time: each must wake a sleeper, which then returns. */
	for (r = 0; r < MAXR; r++) {
		d = stress_deadline_in(generous(60), name);
		CHECK(lfp_eq_write(s.eq, STOP, NULL, 0, 0) == 0, "%s: STOP", name);
		await_u64(&s.stopped, r + 1, &d, "sleepers returned after STOP");
	}
	for (r = 0; r < MAXR; r++) {
		stress_join(t[r]);
		woke += atomic_load(&s.per_reader[r]) > 0;
	}
	for (i = 0; i < events; i++)
		CHECK(atomic_load(&s.seen[i]) == 1, "%s: event %u lost", name, i);
	free(s.seen);
	eq_close(s.eq);
	printf("stress_eq: %-18s PASS %u events one at a time to %u sleepers in "
	       "sread(-1) (%u of them took events), all returned, %.2f s%s\n",
	       name, events, MAXR, woke, stress_seconds_since(t0), flavour());
}

/* ------------------------------------------------------------ trywait */

struct twloop {
	struct lfp_eq *eq;
	struct tally t;
	struct stress_deadline d;
	pthread_barrier_t start;
	uint64_t sleeps, agains;
};

struct tw_arg {
	struct twloop *l;
	unsigned id;
};

static void random_pause(uint64_t *rng)
{
	uint64_t x = stress_rand(rng);

	if (x % 64 == 0)
		sleep_us((unsigned)(x >> 8) % 200);
	else if (x % 16 == 0)
		sched_yield();
}

static void *tw_writer(void *p)
{
	struct tw_arg *a = p;
	struct twloop *l = a->l;
	unsigned char buf[ESZ];
	uint64_t rng = 77 + a->id;
	uint32_t seq;
	size_t len;

	pthread_barrier_wait(&l->start);
	for (seq = 0; seq < l->t.per; seq++) {
		random_pause(&rng);
		len = make_payload(a->id, seq, buf);
		write_event(l->t.name, l->eq, ev_code(a->id, seq), buf, len, &l->d);
	}
	return NULL;
}

static void tw_drain(struct twloop *l, int64_t *last)
{
	unsigned char buf[ESZ];
	uint32_t code, seq;
	unsigned w;
	ssize_t n;

	while ((n = lfp_eq_read(l->eq, &code, buf, sizeof(buf), 0)) >= 0) {
		w = check_event(l->t.name, 0, code, buf, n, l->t.nw, l->t.per, &seq);
		/* One consumer: each writer's events arrive consecutively. */
		CHECK((int64_t)seq == last[w] + 1, "%s: writer %u seq %u after %lld",
		      l->t.name, w, seq, (long long)last[w]);
		tally_record(&l->t, 0, last, w, seq);
	}
	CHECK(n == -EAGAIN, "%s: read = %zd", l->t.name, n);
}

/* The consumer of fi_poll(3): drain, trywait, then block in poll(2). */
static void *tw_consumer_fd(void *p)
{
	struct twloop *l = p;
	struct lfp_fid *fid = &l->eq->fid;
	uint64_t total = (uint64_t)l->t.nw * l->t.per;
	struct pollfd pfd;
	int64_t last[MAXW];
	unsigned w;
	int fd = -1, ret;

	ret = lfp_control(fid, LFP_GETWAIT, &fd);
	CHECK(ret == 0 && fd >= 0, "%s: LFP_GETWAIT = %d, fd %d", l->t.name, ret, fd);
	for (w = 0; w < MAXW; w++)
		last[w] = -1;
	pthread_barrier_wait(&l->start);
	for (;;) {
		tw_drain(l, last);
		if (atomic_load(&l->t.consumed) == total)
			break;
		ret = lfp_trywait(&fid, 1);
		if (ret == -EAGAIN) {
			l->agains++;
			continue;
		}
		CHECK(ret == 0, "%s: lfp_trywait = %d", l->t.name, ret);
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ret = poll(&pfd, 1, (int)(l->d.seconds * 1000));
		CHECK(ret == 1 && (pfd.revents & POLLIN), "%s: poll(2) after "
		      "trywait returned 0 = %d (revents %#x) with %llu of %llu "
		      "events received: %s", l->t.name, ret, pfd.revents,
		      (unsigned long long)atomic_load(&l->t.consumed),
		      (unsigned long long)total,
		      ret == 0 ? "slept to the deadline, a lost wake-up" : "error");
		l->sleeps++;
	}
	/* Drained and idle: trywait clears the fd, which stays quiet. */
	ret = lfp_trywait(&fid, 1);
	CHECK(ret == 0, "%s: trywait on the drained EQ = %d", l->t.name, ret);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ret = poll(&pfd, 1, 0);
	CHECK(ret == 0, "%s: fd readable after the final trywait returned 0",
	      l->t.name);
	return NULL;
}

/*
 * The same loop on the MUTEX_COND wait object, with the mutex held across
 * lfp_trywait and pthread_cond_timedwait (lfp_trywait(3)'s mutex rule), on
 * the cond's CLOCK_MONOTONIC.
 */
static void *tw_consumer_mc(void *p)
{
	struct twloop *l = p;
	struct lfp_fid *fid = &l->eq->fid;
	uint64_t total = (uint64_t)l->t.nw * l->t.per;
	struct lfp_mutex_cond mc = { NULL, NULL };
	struct timespec ts;
	int64_t last[MAXW];
	uint64_t until;
	unsigned w;
	int ret, tw;

	ret = lfp_control(fid, LFP_GETWAIT, &mc);
	CHECK(ret == 0 && mc.mutex && mc.cond, "%s: LFP_GETWAIT = %d", l->t.name,
	      ret);
	for (w = 0; w < MAXW; w++)
		last[w] = -1;
	pthread_barrier_wait(&l->start);
	for (;;) {
		tw_drain(l, last);
		if (atomic_load(&l->t.consumed) == total)
			break;
		pthread_mutex_lock(mc.mutex);
		tw = lfp_trywait(&fid, 1);
		ret = 0;
		if (tw == 0) {
			until = stress_now_ns() + (uint64_t)(l->d.seconds * 1e9);
			ts.tv_sec = (time_t)(until / 1000000000u);
			ts.tv_nsec = (long)(until % 1000000000u);
			ret = pthread_cond_timedwait(mc.cond, mc.mutex, &ts);
		}
		pthread_mutex_unlock(mc.mutex);
		if (tw == -EAGAIN) {
			l->agains++;
			continue;
		}
		CHECK(tw == 0, "%s: lfp_trywait = %d", l->t.name, tw);
		CHECK(ret == 0, "%s: pthread_cond_timedwait after trywait "
		      "returned 0 = %s with %llu of %llu events received%s",
		      l->t.name, strerror(ret),
		      (unsigned long long)atomic_load(&l->t.consumed),
		      (unsigned long long)total,
		      ret == ETIMEDOUT ? ": a lost wake-up" : "");
		l->sleeps++;
	}
	return NULL;
}

static void phase_trywait(enum lfp_wait_obj obj, uint32_t total)
{
	static char name[64];
	struct twloop l;
	struct tw_arg a[MAXW];
	pthread_t t[MAXW], c;
	uint64_t t0 = stress_now_ns();
	unsigned i, nw = 3;

	snprintf(name, sizeof(name), "trywait %s", obj_name(obj));
	memset(&l, 0, sizeof(l));
	l.eq = eq_open(256, LFP_EQ_BACKPRESSURE, obj);
	tally_init(&l.t, name, nw, (total + nw - 1) / nw);
	l.d = stress_deadline_in(generous(60), name);
	CHECK(pthread_barrier_init(&l.start, NULL, nw + 1) == 0, "barrier");
	stress_spawn(&c, obj == LFP_WAIT_MUTEX_COND ? tw_consumer_mc :
	             tw_consumer_fd, &l);
	for (i = 0; i < nw; i++) {
		a[i].l = &l;
		a[i].id = i;
		stress_spawn(&t[i], tw_writer, &a[i]);
	}
	for (i = 0; i < nw; i++)
		stress_join(t[i]);
	stress_join(c); /* the consumer fails by itself at its deadline */
	tally_fini(&l.t);
	pthread_barrier_destroy(&l.start);
	eq_close(l.eq);
	printf("stress_eq: %-18s PASS %u writers, %llu events through the "
	       "drain/trywait/%s loop, %llu sleeps, %llu trywait -EAGAIN, "
	       "%.2f s%s\n", name, nw, (unsigned long long)nw * l.t.per,
	       obj == LFP_WAIT_MUTEX_COND ? "cond_wait" : "poll(2)",
	       (unsigned long long)l.sleeps, (unsigned long long)l.agains,
	       stress_seconds_since(t0), flavour());
}

/* ------------------------------------------------------------ timed */

struct timed {
	struct lfp_eq *eq;
	struct tally t;
	struct stress_deadline d;
	pthread_barrier_t start;
	_Atomic uint64_t timeouts, zero_timeouts;
};

struct timed_arg {
	struct timed *tm;
	unsigned id;
};

static void *timed_writer(void *p)
{
	struct timed_arg *a = p;
	struct timed *tm = a->tm;
	unsigned char buf[ESZ];
	uint64_t rng = 500 + a->id;
	uint32_t seq;
	size_t len;

	pthread_barrier_wait(&tm->start);
	for (seq = 0; seq < tm->t.per; seq++) {
		random_pause(&rng);
		len = make_payload(a->id, seq, buf);
		write_event(tm->t.name, tm->eq, ev_code(a->id, seq), buf, len,
		            &tm->d);
	}
	return NULL;
}

static void *timed_reader(void *p)
{
	struct timed_arg *a = p;
	struct timed *tm = a->tm;
	uint64_t total = (uint64_t)tm->t.nw * tm->t.per, rng = 900 + a->id;
	unsigned char buf[ESZ];
	int64_t last[MAXW];
	uint32_t code, seq;
	uint64_t t0, el;
	unsigned w;
	int timeout;
	ssize_t n;

	for (w = 0; w < MAXW; w++)
		last[w] = -1;
	pthread_barrier_wait(&tm->start);
	while (atomic_load_explicit(&tm->t.consumed, memory_order_relaxed) < total) {
		timeout = (int)(stress_rand(&rng) % 4); /* 0..3 ms */
		t0 = stress_now_ns();
		n = lfp_eq_sread(tm->eq, &code, buf, sizeof(buf), timeout, 0);
		if (n == -EAGAIN) {
			el = stress_now_ns() - t0;
			CHECK(el >= (uint64_t)timeout * 1000000, "%s: reader %u: "
			      "sread(%d ms) gave -EAGAIN after %.3f ms", tm->t.name,
			      a->id, timeout, (double)el / 1e6);
			atomic_fetch_add_explicit(timeout ? &tm->timeouts :
			                          &tm->zero_timeouts, 1,
			                          memory_order_relaxed);
			CHECK_DEADLINE(&tm->d);
			continue;
		}
		CHECK(n >= 0, "%s: reader %u: sread(%d ms) = %zd", tm->t.name,
		      a->id, timeout, n);
		w = check_event(tm->t.name, a->id, code, buf, n, tm->t.nw,
		                tm->t.per, &seq);
		tally_record(&tm->t, a->id, last, w, seq);
	}
	return NULL;
}

static void phase_timed(enum lfp_wait_obj obj, uint32_t per)
{
	static char name[64];
	struct timed tm;
	struct timed_arg wa[MAXW], ra[MAXR];
	pthread_t wt[MAXW], rt[MAXR];
	uint64_t t0 = stress_now_ns();
	unsigned i, nw = 2, nr = 3;

	snprintf(name, sizeof(name), "timed %s", obj_name(obj));
	memset(&tm, 0, sizeof(tm));
	tm.eq = eq_open(64, LFP_EQ_BACKPRESSURE, obj);
	tally_init(&tm.t, name, nw, per);
	tm.d = stress_deadline_in(generous(60), name);
	CHECK(pthread_barrier_init(&tm.start, NULL, nw + nr) == 0, "barrier");
	for (i = 0; i < nr; i++) {
		ra[i].tm = &tm;
		ra[i].id = i;
		stress_spawn(&rt[i], timed_reader, &ra[i]);
	}
	for (i = 0; i < nw; i++) {
		wa[i].tm = &tm;
		wa[i].id = i;
		stress_spawn(&wt[i], timed_writer, &wa[i]);
	}
	for (i = 0; i < nw; i++)
		stress_join(wt[i]);
	for (i = 0; i < nr; i++)
		stress_join(rt[i]);
	tally_fini(&tm.t);
	pthread_barrier_destroy(&tm.start);
	eq_close(tm.eq);
	printf("stress_eq: %-18s PASS %u writers x %u readers, %llu events "
	       "exactly once, %llu timed-out sreads (+%llu with timeout 0), "
	       "%.2f s%s\n", name, nw, nr, (unsigned long long)nw * per,
	       (unsigned long long)atomic_load(&tm.timeouts),
	       (unsigned long long)atomic_load(&tm.zero_timeouts),
	       stress_seconds_since(t0), flavour());
}

/* ------------------------------------------------------------ errwake */

struct errwake {
	struct lfp_eq *eq;
	const char *name;
	uint32_t n;
	_Atomic uint64_t got;
};

static void *errwake_reader(void *p)
{
	struct errwake *e = p;
	struct lfp_eq_err_entry ent;
	unsigned char buf[ESZ];
	uint32_t code, i;
	ssize_t r;

	for (i = 0; i < e->n; i++) {
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
	static char name[64];
	struct errwake e;
	struct lfp_eq_err_entry ent;
	struct stress_deadline d;
	pthread_t t;
	uint64_t t0 = stress_now_ns(), rng = 3;
	uint32_t i;

	snprintf(name, sizeof(name), "errwake %s", obj_name(obj));
	memset(&e, 0, sizeof(e));
	e.name = name;
	e.n = n;
	e.eq = eq_open(8, 0, obj);
	stress_spawn(&t, errwake_reader, &e);
	for (i = 0; i < n; i++) {
		sleep_us((unsigned)(stress_rand(&rng) % 1000)); /* mostly asleep */
		memset(&ent, 0, sizeof(ent));
		ent.fid = &e.eq->fid;
		ent.err = (int)i + 1;
		ent.data = i;
		CHECK(lfp_eq_write_err(e.eq, &ent) == (ssize_t)sizeof(ent),
		      "%s: write_err %u", name, i);
		d = stress_deadline_in(generous(60), name);
		await_u64(&e.got, (uint64_t)i + 1, &d,
		          "errors seen (the error woke no sleeper)");
	}
	stress_join(t);
	eq_close(e.eq);
	printf("stress_eq: %-18s PASS %u errors each woke sread(-1) with "
	       "-LFP_EAVAIL, %.2f s%s\n", name, n, stress_seconds_since(t0),
	       flavour());
}

/* ------------------------------------------------------------ readerr */

struct errmt {
	struct lfp_eq *eq;
	struct tally t;
	struct stress_deadline d;
	pthread_barrier_t start;
	_Atomic uint64_t full;
};

struct errmt_arg {
	struct errmt *em;
	unsigned id;
};

static void *errmt_writer(void *p)
{
	struct errmt_arg *a = p;
	struct errmt *em = a->em;
	struct lfp_eq_err_entry ent;
	unsigned char data[ESZ];
	unsigned spins;
	uint32_t seq;
	ssize_t r;

	pthread_barrier_wait(&em->start);
	for (seq = 0; seq < em->t.per; seq++) {
		memset(&ent, 0, sizeof(ent));
		ent.fid = &em->eq->fid;
		ent.context = (void *)(uintptr_t)(a->id + 1);
		ent.data = ev_code(a->id, seq);
		ent.err = EIO;
		ent.prov_errno = (int)seq;
		ent.err_data = data;
		ent.err_data_size = make_payload(a->id, seq, data);
		spins = 0;
		while ((r = lfp_eq_write_err(em->eq, &ent)) == -EAGAIN) {
			atomic_fetch_add_explicit(&em->full, 1, memory_order_relaxed);
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&em->d);
		}
		CHECK(r == (ssize_t)sizeof(ent), "%s: writer %u: write_err = %zd",
		      em->t.name, a->id, r);
	}
	return NULL;
}

static void *errmt_reader(void *p)
{
	struct errmt_arg *a = p;
	struct errmt *em = a->em;
	uint64_t total = (uint64_t)em->t.nw * em->t.per;
	struct lfp_eq_err_entry ent;
	unsigned char data[ESZ + 8], ebuf[ESZ];
	int64_t last[MAXW];
	uint32_t code, seq;
	unsigned w, spins = 0;
	ssize_t r;

	for (w = 0; w < MAXW; w++)
		last[w] = -1;
	pthread_barrier_wait(&em->start);
	while (atomic_load_explicit(&em->t.consumed, memory_order_relaxed) < total) {
		memset(&ent, 0, sizeof(ent));
		ent.err_data = data;
		ent.err_data_size = sizeof(data);
		r = lfp_eq_readerr(em->eq, &ent, 0);
		if (r == -EAGAIN) {
			/* No events were written: read sees errors or nothing. */
			r = lfp_eq_read(em->eq, &code, ebuf, sizeof(ebuf), 0);
			CHECK(r == -EAGAIN || r == -LFP_EAVAIL, "%s: read = %zd",
			      em->t.name, r);
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&em->d);
			continue;
		}
		spins = 0;
		CHECK(r == (ssize_t)sizeof(ent), "%s: readerr = %zd", em->t.name, r);
		CHECK(ent.err == EIO && ent.fid == &em->eq->fid, "%s: err %d",
		      em->t.name, ent.err);
		CHECK(ent.err_data == data, "%s: err_data moved off my buffer",
		      em->t.name);
		w = check_event(em->t.name, a->id, (uint32_t)ent.data, data,
		                (ssize_t)ent.err_data_size, em->t.nw, em->t.per,
		                &seq);
		CHECK(ent.context == (void *)(uintptr_t)(w + 1) &&
		      ent.prov_errno == (int)seq, "%s: context/prov_errno of "
		      "writer %u seq %u mixed up", em->t.name, w, seq);
		tally_record(&em->t, a->id, last, w, seq);
	}
	return NULL;
}

static void phase_readerr(uint32_t per)
{
	static const char name[] = "readerr";
	struct errmt em;
	struct errmt_arg wa[2], ra[2];
	pthread_t wt[2], rt[2];
	uint64_t t0 = stress_now_ns();
	unsigned i;

	memset(&em, 0, sizeof(em));
	em.eq = eq_open(32, LFP_EQ_BACKPRESSURE, LFP_WAIT_FD);
	tally_init(&em.t, name, 2, per);
	em.d = stress_deadline_in(generous(60), name);
	CHECK(pthread_barrier_init(&em.start, NULL, 4) == 0, "barrier");
	for (i = 0; i < 2; i++) {
		ra[i].em = &em;
		ra[i].id = i;
		stress_spawn(&rt[i], errmt_reader, &ra[i]);
		wa[i].em = &em;
		wa[i].id = i;
		stress_spawn(&wt[i], errmt_writer, &wa[i]);
	}
	for (i = 0; i < 2; i++) {
		stress_join(wt[i]);
		stress_join(rt[i]);
	}
	tally_fini(&em.t);
	pthread_barrier_destroy(&em.start);
	eq_close(em.eq);
	printf("stress_eq: %-18s PASS 2 error writers x 2 readerr threads, %llu "
	       "errors exactly once with their err_data, %llu full retries, "
	       "%.2f s%s\n", name, (unsigned long long)2 * per,
	       (unsigned long long)atomic_load(&em.full), stress_seconds_since(t0),
	       flavour());
}

/* ------------------------------------------------------------ peek */

struct peekp {
	struct lfp_eq *eq;
	struct tally t;
	struct stress_deadline d;
	pthread_barrier_t start;
	_Atomic uint64_t peeks, toosmall;
};

struct peek_arg {
	struct peekp *pp;
	unsigned id;
};

static void *peek_writer(void *p)
{
	struct peek_arg *a = p;
	struct peekp *pp = a->pp;
	unsigned char buf[ESZ];
	uint32_t seq;
	size_t len;

	pthread_barrier_wait(&pp->start);
	for (seq = 0; seq < pp->t.per; seq++) {
		len = make_payload(0, seq, buf);
		write_event(pp->t.name, pp->eq, ev_code(0, seq), buf, len, &pp->d);
	}
	return NULL;
}

static void *peek_consumer(void *p)
{
	struct peek_arg *a = p;
	struct peekp *pp = a->pp;
	uint64_t total = pp->t.per;
	unsigned char buf[ESZ];
	int64_t last[1] = { -1 };
	uint32_t code, seq;
	unsigned spins = 0;
	ssize_t n;

	pthread_barrier_wait(&pp->start);
	while (atomic_load_explicit(&pp->t.consumed, memory_order_relaxed) < total) {
		/* Leave the peeker a share of the events (at least one whole
		 * peek per 16 consumed), so that the phase is about peeks that
		 * race consumers and not about two consumers alone. */
		if (atomic_load_explicit(&pp->peeks, memory_order_relaxed) * 16 <
		    atomic_load_explicit(&pp->t.consumed, memory_order_relaxed)) {
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&pp->d);
			continue;
		}
		n = lfp_eq_read(pp->eq, &code, buf, sizeof(buf), 0);
		if (n == -EAGAIN) {
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&pp->d);
			continue;
		}
		spins = 0;
		CHECK(n >= 0, "%s: read = %zd", pp->t.name, n);
		(void)check_event(pp->t.name, a->id, code, buf, n, 1, pp->t.per, &seq);
		tally_record(&pp->t, a->id, last, 0, seq);
	}
	return NULL;
}

static void *peeker(void *p)
{
	struct peek_arg *a = p;
	struct peekp *pp = a->pp;
	uint64_t total = pp->t.per, rng = 11;
	unsigned char buf[ESZ];
	uint32_t code, seq;
	unsigned spins = 0;
	size_t cap;
	ssize_t n;

	pthread_barrier_wait(&pp->start);
	while (atomic_load_explicit(&pp->t.consumed, memory_order_relaxed) < total) {
		cap = stress_rand(&rng) % 4 ? sizeof(buf) : stress_rand(&rng) % (ESZ + 1);
		n = lfp_eq_read(pp->eq, &code, buf, cap, LFP_PEEK);
		if (n == -EAGAIN) {
			stress_backoff(&spins);
			if ((spins & 63) == 0)
				CHECK_DEADLINE(&pp->d);
			continue;
		}
		spins = 0;
		if (n == -LFP_ETOOSMALL) {
			CHECK(cap < ESZ, "%s: peek -LFP_ETOOSMALL with %zu bytes",
			      pp->t.name, cap);
			atomic_fetch_add_explicit(&pp->toosmall, 1, memory_order_relaxed);
			continue;
		}
		CHECK(n >= 0 && (size_t)n <= cap, "%s: peek (%zu) = %zd", pp->t.name,
		      cap, n);
		/* Whole and untorn, whoever consumes it meanwhile. */
		(void)check_event(pp->t.name, a->id, code, buf, n, 1, pp->t.per, &seq);
		atomic_fetch_add_explicit(&pp->peeks, 1, memory_order_relaxed);
	}
	return NULL;
}

static void phase_peek(uint32_t per)
{
	static const char name[] = "peek";
	struct peekp pp;
	struct peek_arg a[4];
	pthread_t t[4];
	uint64_t t0 = stress_now_ns();
	unsigned i;

	memset(&pp, 0, sizeof(pp));
	pp.eq = eq_open(16, LFP_EQ_BACKPRESSURE, LFP_WAIT_NONE);
	tally_init(&pp.t, name, 1, per);
	pp.d = stress_deadline_in(generous(60), name);
	CHECK(pthread_barrier_init(&pp.start, NULL, 4) == 0, "barrier");
	for (i = 0; i < 4; i++) {
		a[i].pp = &pp;
		a[i].id = i;
	}
	stress_spawn(&t[0], peek_writer, &a[0]);
	stress_spawn(&t[1], peek_consumer, &a[1]);
	stress_spawn(&t[2], peek_consumer, &a[2]);
	stress_spawn(&t[3], peeker, &a[3]);
	for (i = 0; i < 4; i++)
		stress_join(t[i]);
	tally_fini(&pp.t);
	CHECK(atomic_load(&pp.peeks) * 16 >= per - 16, "%s: only %llu peeks",
	      name, (unsigned long long)atomic_load(&pp.peeks));
	pthread_barrier_destroy(&pp.start);
	eq_close(pp.eq);
	printf("stress_eq: %-18s PASS 1 writer, 2 consumers, 1 peeker: %llu "
	       "events exactly once, %llu whole peeked copies, %llu short peeks, "
	       "%.2f s%s\n", name, (unsigned long long)per,
	       (unsigned long long)atomic_load(&pp.peeks),
	       (unsigned long long)atomic_load(&pp.toosmall),
	       stress_seconds_since(t0), flavour());
}

/* ------------------------------------------------------------ main */

int main(void)
{
	static const enum lfp_wait_obj pp_objs[] = {
		LFP_WAIT_FD, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD, LFP_WAIT_UNSPEC
	};
	uint64_t t0 = stress_now_ns();
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(stress_count(200000, 60000) < (1u << 24), "sequences must fit 24 bits");

	phase_mpmc(LFP_WAIT_FD, (uint32_t)stress_count(50000, 25000));
	phase_mpmc(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(25000, 12000));
	for (i = 0; i < sizeof(pp_objs) / sizeof(pp_objs[0]); i++)
		phase_pingpong(pp_objs[i], (uint32_t)stress_count(100000, 20000));
	phase_sleepers(LFP_WAIT_FD, (uint32_t)stress_count(5000, 3000));
	phase_sleepers(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(5000, 3000));
	phase_trywait(LFP_WAIT_FD, (uint32_t)stress_count(100000, 40000));
	phase_trywait(LFP_WAIT_UNSPEC, (uint32_t)stress_count(30000, 10000));
	phase_trywait(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(30000, 10000));
	phase_timed(LFP_WAIT_FD, (uint32_t)stress_count(20000, 10000));
	phase_timed(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(20000, 10000));
	phase_timed(LFP_WAIT_YIELD, (uint32_t)stress_count(20000, 10000));
	phase_errwake(LFP_WAIT_FD, (uint32_t)stress_count(300, 100));
	phase_errwake(LFP_WAIT_MUTEX_COND, (uint32_t)stress_count(300, 100));
	phase_errwake(LFP_WAIT_YIELD, (uint32_t)stress_count(300, 100));
	phase_readerr((uint32_t)stress_count(20000, 10000));
	phase_peek((uint32_t)stress_count(200000, 60000));
	printf("stress_eq: PASS all phases, %.1f s%s\n", stress_seconds_since(t0),
	       flavour());
	return 0;
}
