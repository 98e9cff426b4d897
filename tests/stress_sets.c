/*
 * lfpoll sets under threads: pollfd snapshots, the fi_poll(3) trywait loop,
 * many waiters on one wait set, cross-thread wakes of sread and cntr_wait,
 * and a poll set whose membership changes while producers write.
 *
 * Phases (one summary line each; exit 0 only when every invariant held):
 *   a  pollfd change_index: a writer adds, mods and deletes fds 100..199 in
 *      random order while readers call lfp_pollfds_get; before each change
 *      the writer logs the exact content for the coming change_index, so
 *      every snapshot is compared with the content of its own version.
 *   b  the fi_poll(3) loop: { if lfp_trywait(ws) == 0, block on the set's
 *      native object (select on the FD set's fd, poll on the POLLFD set's
 *      array); then drain every member CQ } against 2 producers writing to
 *      4 member CQs: every completion exactly once, in order per producer
 *      and CQ, and no select/poll timeout while completions are queued.
 *   c  several threads blocked in lfp_wait on one set (FD, POLLFD,
 *      MUTEX_COND, YIELD) while a producer writes to a member: every waiter
 *      returns for every write (lost wakeups fail at a deadline); then one
 *      waiter and counter incs timed to land anywhere in lfp_wait.
 *   d  lfp_cq_signal wakes a thread blocked in lfp_cq_sread; lfp_cntr_wait
 *      returns 0 on an inc and -LFP_EAVAIL on an incerr from another thread.
 *      The wake is sent once the waiter is armed (it sleeps or is about to),
 *      so a single lost signal is a hang, turned into a failure.
 *   e  poll-set torture: producers write to CQs and inc counters while one
 *      thread adds and deletes them to/from a poll set and another calls
 *      lfp_poll and drains what it reports; every completion is read
 *      exactly once, a member that holds work is always reported in the
 *      end, and the close-order errors hold.
 *
 * Runs under ThreadSanitizer too (fewer iterations); LFP_STRESS=long runs
 * ten times more.
 */
#include <lfpoll/lfpoll.h>

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/select.h>
#include <time.h>

#include "stress_objs.h"

/* ================================================================ a */

#define A_FD0   100
#define A_NFD   100
#define A_WORDS 4 /* 2 bits per fd */

/* The content of a pollfd set: 2 bits per fd (0 absent, 1 IN, 2 OUT, 3 both). */
struct a_content {
	uint64_t w[A_WORDS];
	uint32_t n;
};

static unsigned a_code(short events)
{
	return (events & POLLIN ? 1u : 0u) | (events & POLLOUT ? 2u : 0u);
}

static short a_events(unsigned code)
{
	return (short)((code & 1 ? POLLIN : 0) | (code & 2 ? POLLOUT : 0));
}

static unsigned a_get(const struct a_content *c, int fd)
{
	unsigned i = (unsigned)(fd - A_FD0) * 2;

	return (unsigned)(c->w[i / 64] >> (i % 64)) & 3u;
}

static void a_set(struct a_content *c, int fd, unsigned code)
{
	unsigned i = (unsigned)(fd - A_FD0) * 2;

	if (a_get(c, fd) && !code)
		c->n--;
	else if (!a_get(c, fd) && code)
		c->n++;
	c->w[i / 64] &= ~((uint64_t)3 << (i % 64));
	c->w[i / 64] |= (uint64_t)code << (i % 64);
}

struct a_phase {
	struct lfp_pollfds set;
	struct a_content *table;      /* content per change_index */
	size_t table_len;
	_Atomic uint64_t published;   /* table[0..published] are final */
	_Atomic int done;
	_Atomic uint64_t snapshots, toosmall;
	struct stress_deadline deadline;
	unsigned round;
};

struct a_reader {
	struct a_phase *ph;
	unsigned id;
};

static uint64_t a_change_index(struct a_phase *ph)
{
	struct lfp_wait_pollfd w = { 0, 0, NULL };
	int ret = lfp_pollfds_get(&ph->set, &w);

	CHECK(ret == 0 || ret == -LFP_ETOOSMALL, "a: get(nfds 0) = %d", ret);
	return w.change_index;
}

static void *a_reader_main(void *arg)
{
	struct a_reader *rd = (struct a_reader *)arg;
	struct a_phase *ph = rd->ph;
	struct pollfd fds[A_NFD + 8];
	struct lfp_wait_pollfd w;
	struct a_content got;
	uint64_t last_ci = 0, pub, rng = rd->id * 77 + ph->round;
	size_t i;
	int ret, fd, small;

	while (!atomic_load(&ph->done)) {
		small = (stress_rand(&rng) & 7) == 0;
		w.change_index = UINT64_MAX;
		w.nfds = small ? stress_rand(&rng) % 8 : A_NFD + 8;
		w.fd = fds;
		ret = lfp_pollfds_get(&ph->set, &w);
		pub = atomic_load_explicit(&ph->published, memory_order_acquire);
		CHECK(w.change_index <= pub, "a: reader %u saw change_index %llu, "
		      "the writer announced only %llu", rd->id,
		      (unsigned long long)w.change_index, (unsigned long long)pub);
		CHECK(w.change_index >= last_ci, "a: reader %u: change_index went "
		      "back from %llu to %llu", rd->id, (unsigned long long)last_ci,
		      (unsigned long long)w.change_index);
		last_ci = w.change_index;
		if (ret == -LFP_ETOOSMALL) {
			CHECK(small, "a: reader %u: -LFP_ETOOSMALL with room %d",
			      rd->id, A_NFD + 8);
			CHECK(w.nfds == ph->table[w.change_index].n, "a: reader %u: "
			      "too small: nfds %zu at change_index %llu, which has %u",
			      rd->id, w.nfds, (unsigned long long)w.change_index,
			      ph->table[w.change_index].n);
			atomic_fetch_add_explicit(&ph->toosmall, 1, memory_order_relaxed);
			continue;
		}
		CHECK(ret == 0, "a: reader %u: get = %d", rd->id, ret);
		memset(&got, 0, sizeof(got));
		for (i = 0; i < w.nfds; i++) {
			fd = fds[i].fd;
			CHECK(fd >= A_FD0 && fd < A_FD0 + A_NFD, "a: reader %u: "
			      "snapshot %llu holds fd %d", rd->id,
			      (unsigned long long)w.change_index, fd);
			CHECK(a_get(&got, fd) == 0, "a: reader %u: snapshot %llu holds "
			      "fd %d twice", rd->id, (unsigned long long)w.change_index, fd);
			CHECK(a_code(fds[i].events) != 0 &&
			      a_events(a_code(fds[i].events)) == fds[i].events,
			      "a: reader %u: fd %d has events %#x", rd->id, fd,
			      (unsigned)fds[i].events);
			a_set(&got, fd, a_code(fds[i].events));
		}
		CHECK(got.n == ph->table[w.change_index].n &&
		      memcmp(got.w, ph->table[w.change_index].w, sizeof(got.w)) == 0,
		      "a: reader %u: the snapshot with change_index %llu (%u fds) is "
		      "not that version's content (%u fds)", rd->id,
		      (unsigned long long)w.change_index, got.n,
		      ph->table[w.change_index].n);
		atomic_fetch_add_explicit(&ph->snapshots, 1, memory_order_relaxed);
	}
	return NULL;
}

/* The writer: only it changes the set, so it knows every version. */
static void a_writer(struct a_phase *ph, uint64_t ops)
{
	struct a_content cur, next;
	uint64_t ci = 0, op, rng = 0xabc + ph->round;
	unsigned code, newcode;
	int fd, ret;

	memset(&cur, 0, sizeof(cur));
	/* table[0], the empty set, was zeroed before the readers started. */
	for (op = 0; op < ops; op++) {
		if ((op & 1023) == 0)
			CHECK_DEADLINE(&ph->deadline);
		fd = A_FD0 + (int)(stress_rand(&rng) % A_NFD);
		code = a_get(&cur, fd);
		newcode = 1 + (unsigned)(stress_rand(&rng) % 3);
		/* Early in a round grow the set; later keep it about half full. */
		if (!code && (stress_rand(&rng) % 8) == 0) {
			ret = lfp_pollfds_del(&ph->set, fd);
			CHECK(ret == -ENOENT, "a: del of absent fd %d = %d", fd, ret);
			CHECK(a_change_index(ph) == ci, "a: a failed del bumped");
			continue;
		}
		if (code && (stress_rand(&rng) % 8) == 0) {
			ret = lfp_pollfds_add(&ph->set, fd, a_events(newcode), NULL);
			CHECK(ret == -EEXIST, "a: duplicate add of fd %d = %d", fd, ret);
			CHECK(a_change_index(ph) == ci, "a: a failed add bumped");
			continue;
		}
		if (code && newcode == code && (stress_rand(&rng) & 1)) {
			ret = lfp_pollfds_mod(&ph->set, fd, a_events(code));
			CHECK(ret == 0, "a: same-events mod of fd %d = %d", fd, ret);
			CHECK(a_change_index(ph) == ci, "a: a same-events mod bumped");
			continue;
		}
		next = cur;
		if (!code)
			a_set(&next, fd, newcode);
		else if (stress_rand(&rng) & 1)
			a_set(&next, fd, 0);
		else if (newcode != code)
			a_set(&next, fd, newcode);
		else
			a_set(&next, fd, newcode == 3 ? 1 : newcode + 1);
		CHECK(ci + 1 < ph->table_len, "a: table too small");
		/* Log the coming version, announce it, then make the change. */
		ph->table[ci + 1] = next;
		atomic_store_explicit(&ph->published, ci + 1, memory_order_release);
		if (!code)
			ret = lfp_pollfds_add(&ph->set, fd, a_events(a_get(&next, fd)), NULL);
		else if (!a_get(&next, fd))
			ret = lfp_pollfds_del(&ph->set, fd);
		else
			ret = lfp_pollfds_mod(&ph->set, fd, a_events(a_get(&next, fd)));
		CHECK(ret == 0, "a: change at change_index %llu = %d",
		      (unsigned long long)ci, ret);
		ci++;
		cur = next;
		CHECK(a_change_index(ph) == ci, "a: change_index %llu after %llu "
		      "effective changes", (unsigned long long)a_change_index(ph),
		      (unsigned long long)ci);
		if ((op & 63) == 0)
			sched_yield(); /* let the readers in on 2 cores */
	}
}

static void phase_a(void)
{
	enum { ROUNDS = 4, READERS = 2 };
	uint64_t ops = stress_count(20000, 8000), snaps = 0, small = 0;
	struct a_reader rd[READERS];
	pthread_t t[READERS];
	struct a_phase *ph = calloc(1, sizeof(*ph));
	uint64_t t0 = stress_now_ns();
	unsigned r, i;

	CHECK(ph != NULL, "a: out of memory");
	ph->table_len = ops + 2;
	ph->table = calloc(ph->table_len, sizeof(*ph->table));
	CHECK(ph->table != NULL, "a: out of memory");
	ph->deadline = stress_deadline_in(STRESS_TSAN ? 170 : 60, "a: pollfd snapshots");
	for (r = 0; r < ROUNDS; r++) {
		CHECK(lfp_pollfds_init(&ph->set) == 0, "a: init");
		ph->round = r;
		atomic_store(&ph->published, 0);
		atomic_store(&ph->done, 0);
		memset(ph->table, 0, ph->table_len * sizeof(*ph->table));
		for (i = 0; i < READERS; i++) {
			rd[i].ph = ph;
			rd[i].id = i;
			stress_spawn(&t[i], a_reader_main, &rd[i]);
		}
		a_writer(ph, ops);
		atomic_store(&ph->done, 1);
		for (i = 0; i < READERS; i++)
			stress_join(t[i]);
		lfp_pollfds_fini(&ph->set);
	}
	snaps = atomic_load(&ph->snapshots);
	small = atomic_load(&ph->toosmall);
	CHECK(snaps > 0, "a: the readers checked no snapshot");
	printf("stress_sets a: PASS %u rounds x %llu ops, %llu snapshots matched "
	       "their change_index, %llu too-small answers (%.1f s)\n", ROUNDS,
	       (unsigned long long)ops, (unsigned long long)snaps,
	       (unsigned long long)small, stress_seconds_since(t0));
	free(ph->table);
	free(ph);
}

/* ================================================================ b */

#define B_CQS   4
#define B_PROD  2

struct b_phase {
	enum lfp_wait_obj obj;
	struct lfp_wait *ws;
	struct lfp_cq *cq[B_CQS];
	uint64_t per_producer;
	_Atomic uint64_t written;
	uint8_t *seen[B_PROD];
	struct stress_deadline deadline;
	uint64_t blocks, timeouts_idle;
};

struct b_producer {
	struct b_phase *ph;
	unsigned id;
};

static void *b_producer_main(void *arg)
{
	struct b_producer *pr = (struct b_producer *)arg;
	struct b_phase *ph = pr->ph;
	struct lfp_cq_data_entry e;
	uint64_t seq, rng = pr->id + 1;
	unsigned spins;
	ssize_t ret;

	memset(&e, 0, sizeof(e));
	for (seq = 0; seq < ph->per_producer; seq++) {
		e.op_context = (void *)(uintptr_t)((uint64_t)pr->id << 40 | seq);
		e.data = seq;
		e.len = pr->id;
		spins = 0;
		/* The CQ is seq % B_CQS: per (producer, CQ) order is checkable. */
		while ((ret = lfp_cq_write(ph->cq[seq % B_CQS], &e, 1)) == -EAGAIN) {
			stress_backoff(&spins);
			if ((spins & 255) == 0)
				CHECK_DEADLINE(&ph->deadline);
		}
		CHECK(ret == 1, "b: producer %u: write = %zd", pr->id, ret);
		atomic_fetch_add_explicit(&ph->written, 1, memory_order_relaxed);
		if ((stress_rand(&rng) & 255) == 0)
			sleep_us(50); /* let the consumer catch up and block */
	}
	return NULL;
}

/* Block on the set's native object; 1 if it fired, 0 on timeout. */
static int b_block(struct b_phase *ph, int fd, struct lfp_wait_pollfd *pw,
                   uint64_t *cached_ci, int timeout_ms)
{
	struct lfp_wait_pollfd probe = { 0, 0, NULL };
	struct timeval tv;
	fd_set rfds;
	int n, ret;

	if (ph->obj == LFP_WAIT_FD) {
		FD_ZERO(&rfds);
		FD_SET(fd, &rfds);
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
		n = select(fd + 1, &rfds, NULL, NULL, &tv);
		CHECK(n >= 0 || errno == EINTR, "b: select: %s", strerror(errno));
		return n > 0;
	}
	/* POLLFD: re-fetch the array when change_index moved (fi_poll(3)). */
	ret = lfp_control(&ph->ws->fid, LFP_GETWAIT, &probe);
	CHECK(ret == 0 || ret == -LFP_ETOOSMALL, "b: GETWAIT probe = %d", ret);
	if (probe.change_index != *cached_ci) {
		pw->nfds = 8;
		ret = lfp_control(&ph->ws->fid, LFP_GETWAIT, pw);
		CHECK(ret == 0, "b: GETWAIT = %d", ret);
		*cached_ci = pw->change_index;
	}
	n = poll(pw->fd, pw->nfds, timeout_ms);
	CHECK(n >= 0 || errno == EINTR, "b: poll: %s", strerror(errno));
	return n > 0;
}

/*
 * Out of line: gcc 12 -O2 warns (-Wmaybe-uninitialized, an error here) about
 * `pos` in lfp_ring_dequeue_burst when lfp_cq_read is inlined into
 * phase_b's loop (see the report).
 */
__attribute__((noinline))
static ssize_t b_read(struct lfp_cq *cq, struct lfp_cq_data_entry *buf, size_t n)
{
	return lfp_cq_read(cq, buf, n);
}

static void phase_b(enum lfp_wait_obj obj)
{
	struct b_phase ph;
	struct b_producer pr[B_PROD];
	pthread_t t[B_PROD];
	struct lfp_fid *wf;
	struct lfp_cq_data_entry buf[16];
	struct pollfd pfds[8];
	struct lfp_wait_pollfd pw = { 0, 8, pfds };
	uint64_t total, got = 0, cached_ci = UINT64_MAX, t0 = stress_now_ns();
	int64_t last[B_PROD][B_CQS];
	unsigned i, k, p;
	uint64_t seq, queued;
	ssize_t n;
	int fd = -1, ret;

	memset(&ph, 0, sizeof(ph));
	ph.obj = obj;
	ph.per_producer = stress_count(50000, 20000);
	total = ph.per_producer * B_PROD;
	ph.deadline = stress_deadline_in(STRESS_TSAN ? 170 : 60, "b: trywait loop");
	ph.ws = open_ws(obj);
	wf = &ph.ws->fid;
	for (i = 0; i < B_CQS; i++) {
		struct lfp_cq_attr a;

		memset(&a, 0, sizeof(a));
		a.size = 64;
		a.format = LFP_CQ_FORMAT_DATA;
		a.wait_obj = LFP_WAIT_SET;
		a.wait_set = ph.ws;
		CHECK(lfp_cq_open(&a, &ph.cq[i], NULL) == 0, "b: cq open");
	}
	for (p = 0; p < B_PROD; p++) {
		ph.seen[p] = calloc(ph.per_producer, 1);
		CHECK(ph.seen[p] != NULL, "b: out of memory");
		for (i = 0; i < B_CQS; i++)
			last[p][i] = -1;
	}
	if (obj == LFP_WAIT_FD)
		CHECK(lfp_control(wf, LFP_GETWAIT, &fd) == 0 && fd >= 0, "b: GETWAIT fd");
	for (p = 0; p < B_PROD; p++) {
		pr[p].ph = &ph;
		pr[p].id = p;
		stress_spawn(&t[p], b_producer_main, &pr[p]);
	}
	while (got < total) {
		CHECK_DEADLINE(&ph.deadline);
		ret = lfp_trywait(&wf, 1);
		CHECK(ret == 0 || ret == -EAGAIN, "b: trywait = %d", ret);
		if (ret == 0) {
			ph.blocks++;
			if (!b_block(&ph, fd, &pw, &cached_ci, 10000)) {
				/* A timeout is fine only when nothing is queued. */
				for (queued = 0, i = 0; i < B_CQS; i++)
					queued += lfp__cq_ready(ph.cq[i]) > 0;
				CHECK(queued == 0, "b (%s): the native object stayed quiet "
				      "for 10 s after trywait 0 with %llu CQs holding "
				      "completions: a lost wakeup", obj_name(obj),
				      (unsigned long long)queued);
				ph.timeouts_idle++;
			}
		}
		for (i = 0; i < B_CQS; i++) {
			while ((n = b_read(ph.cq[i], buf, 16)) > 0) {
				for (k = 0; k < (unsigned)n; k++) {
					uint64_t tag = (uint64_t)(uintptr_t)buf[k].op_context;

					p = (unsigned)(tag >> 40);
					seq = tag & (((uint64_t)1 << 40) - 1);
					CHECK(p < B_PROD && seq < ph.per_producer &&
					      buf[k].data == seq && buf[k].len == p,
					      "b: garbled completion %#llx",
					      (unsigned long long)tag);
					CHECK(seq % B_CQS == i, "b: producer %u seq %llu came "
					      "out of CQ %u", p, (unsigned long long)seq, i);
					CHECK(!ph.seen[p][seq], "b: producer %u seq %llu read "
					      "twice", p, (unsigned long long)seq);
					CHECK((int64_t)seq > last[p][i], "b: producer %u CQ %u: "
					      "seq %llu after %lld", p, i,
					      (unsigned long long)seq, (long long)last[p][i]);
					last[p][i] = (int64_t)seq;
					ph.seen[p][seq] = 1;
					got++;
				}
			}
			CHECK(n == -EAGAIN, "b: read = %zd", n);
		}
	}
	for (p = 0; p < B_PROD; p++)
		stress_join(t[p]);
	for (i = 0; i < B_CQS; i++) {
		CHECK(b_read(ph.cq[i], buf, 16) == -EAGAIN, "b: left over");
		CHECK(lfp_cq_close(ph.cq[i]) == 0, "b: cq close");
	}
	CHECK(lfp_wait_close(ph.ws) == 0, "b: wait close");
	for (p = 0; p < B_PROD; p++)
		free(ph.seen[p]);
	printf("stress_sets b: PASS %s: %llu completions from %d producers via "
	       "trywait + %s, each once; blocked %llu times (%.1f s)\n",
	       obj_name(obj), (unsigned long long)total, B_PROD,
	       obj == LFP_WAIT_FD ? "select" : "poll(pollfd array)",
	       (unsigned long long)ph.blocks, stress_seconds_since(t0));
}

/* ================================================================ c */

#define C_WAITERS 4

struct c_phase {
	enum lfp_wait_obj obj;
	struct lfp_wait *ws;
	struct lfp_cq *cq;
	struct lfp_eq *eq;
	uint64_t rounds;
	_Atomic uint64_t round, entered, woke, written, spurious;
	struct stress_deadline deadline;
};

static void *c_waiter_main(void *arg)
{
	struct c_phase *ph = (struct c_phase *)arg;
	uint64_t r;
	int ret;

	for (r = 1; r <= ph->rounds; r++) {
		wait_at_least(&ph->round, r, &ph->deadline);
		atomic_fetch_add(&ph->entered, 1);
		for (;;) {
			ret = lfp_wait(ph->ws, 20000);
			CHECK(ret == 0, "c (%s): round %llu: lfp_wait = %d while the "
			      "write %s made: a lost wakeup", obj_name(ph->obj),
			      (unsigned long long)r, ret,
			      atomic_load(&ph->written) >= r ? "was" : "was not yet");
			if (atomic_load(&ph->written) >= r)
				break;
			if (lfp__obj_ready(&ph->cq->fid) > 0 ||
			    lfp__obj_ready(&ph->eq->fid) > 0) {
				/* The write landed; the producer has not said so
				 * yet.  A real wake. */
				wait_at_least(&ph->written, r, &ph->deadline);
				break;
			}
			atomic_fetch_add(&ph->spurious, 1); /* allowed: wait again */
		}
		atomic_fetch_add(&ph->woke, 1);
	}
	return NULL;
}

static void phase_c(enum lfp_wait_obj obj)
{
	struct c_phase ph;
	pthread_t t[C_WAITERS];
	struct lfp_cq_entry e = { &e };
	struct lfp_eq_attr ea;
	uint64_t r, t0 = stress_now_ns(), v;
	uint32_t ev;
	unsigned i;

	memset(&ph, 0, sizeof(ph));
	ph.obj = obj;
	ph.rounds = obj == LFP_WAIT_YIELD ? stress_count(100, 20)
	                                  : stress_count(2000, 400);
	ph.deadline = stress_deadline_in(STRESS_TSAN ? 170 : 60, "c: waiters");
	ph.ws = open_ws(obj);
	ph.cq = open_cq(LFP_WAIT_SET, ph.ws, 16, NULL);
	memset(&ea, 0, sizeof(ea));
	ea.size = 16;
	ea.wait_obj = LFP_WAIT_SET;
	ea.wait_set = ph.ws;
	CHECK(lfp_eq_open(&ea, &ph.eq, NULL) == 0, "c: eq open");
	for (i = 0; i < C_WAITERS; i++)
		stress_spawn(&t[i], c_waiter_main, &ph);
	for (r = 1; r <= ph.rounds; r++) {
		atomic_store(&ph.round, r);
		wait_at_least(&ph.entered, C_WAITERS * r, &ph.deadline);
		if (r % 3 == 1)
			sleep_us(300); /* most likely all asleep */
		else if (r % 3 == 2)
			sched_yield();
		if (r & 1)
			CHECK(lfp_cq_write(ph.cq, &e, 1) == 1, "c: cq write");
		else
			CHECK(lfp_eq_write(ph.eq, LFP_NOTIFY, &r, sizeof(r), 0) ==
			      (ssize_t)sizeof(r), "c: eq write");
		atomic_store(&ph.written, r);
		wait_at_least(&ph.woke, C_WAITERS * r, &ph.deadline);
		/* Everybody is awake: drain before the next round. */
		if (r & 1)
			CHECK(lfp_cq_read(ph.cq, &e, 1) == 1, "c: cq read");
		else
			CHECK(lfp_eq_read(ph.eq, &ev, &v, sizeof(v), 0) == (ssize_t)sizeof(v),
			      "c: eq read");
	}
	for (i = 0; i < C_WAITERS; i++)
		stress_join(t[i]);
	CHECK(lfp_cq_close(ph.cq) == 0 && lfp_eq_close(ph.eq) == 0, "c: close");
	CHECK(lfp_wait_close(ph.ws) == 0, "c: wait close");
	printf("stress_sets c: PASS %s: %d waiters x %llu writes, every waiter "
	       "woke every time (%llu spurious returns) (%.1f s)\n", obj_name(obj),
	       C_WAITERS, (unsigned long long)ph.rounds,
	       (unsigned long long)atomic_load(&ph.spurious), stress_seconds_since(t0));
}

/*
 * One waiter, a counter in the set, and incs that land anywhere in lfp_wait
 * (before it, during its spin, during trywait, while it sleeps).  A change
 * that lfp_wait's check consumes must make it return.
 */
struct c2_phase {
	enum lfp_wait_obj obj;
	struct lfp_wait *ws;
	struct lfp_cntr *c;
	uint64_t rounds;
	_Atomic uint64_t entering, done;
	struct stress_deadline deadline;
};

static void *c2_waiter_main(void *arg)
{
	struct c2_phase *ph = (struct c2_phase *)arg;
	uint64_t r;
	int ret;

	for (r = 1; r <= ph->rounds; r++) {
		atomic_store(&ph->entering, r);
		/* Earlier changes may still be unreported: wait until ours. */
		while (lfp_cntr_read(ph->c) < r) {
			ret = lfp_wait(ph->ws, 10000);
			CHECK(ret == 0, "c2 (%s): round %llu: lfp_wait = %d with the "
			      "counter at %llu: the inc was lost", obj_name(ph->obj),
			      (unsigned long long)r, ret,
			      (unsigned long long)lfp_cntr_read(ph->c));
		}
		atomic_store(&ph->done, r);
	}
	return NULL;
}

static void phase_c2(enum lfp_wait_obj obj)
{
	struct c2_phase ph;
	pthread_t t;
	uint64_t r, rng = 99, t0 = stress_now_ns();
	unsigned k;
	volatile unsigned sink = 0;

	memset(&ph, 0, sizeof(ph));
	ph.obj = obj;
	ph.rounds = stress_count(3000, 1000);
	ph.deadline = stress_deadline_in(STRESS_TSAN ? 170 : 60, "c2: counter waits");
	ph.ws = open_ws(obj);
	ph.c = open_cntr(LFP_WAIT_SET, ph.ws, NULL);
	stress_spawn(&t, c2_waiter_main, &ph);
	for (r = 1; r <= ph.rounds; r++) {
		wait_at_least(&ph.entering, r, &ph.deadline);
		/* 0 to about 20 us: spans lfp_wait's spin and trywait. */
		for (k = (unsigned)(stress_rand(&rng) % 60000); k; k--)
			sink += k;
		CHECK(lfp_cntr_inc(ph.c, 1) == 0, "c2: inc");
		wait_at_least(&ph.done, r, &ph.deadline);
	}
	(void)sink;
	stress_join(t);
	CHECK(lfp_cntr_close(ph.c) == 0 && lfp_wait_close(ph.ws) == 0, "c2: close");
	printf("stress_sets c2: PASS %s: %llu counter incs racing lfp_wait, none "
	       "lost (%.1f s)\n", obj_name(obj), (unsigned long long)ph.rounds,
	       stress_seconds_since(t0));
}

/* ================================================================ d */

enum d_kind { D_CQ_SIGNAL, D_CNTR_INC, D_CNTR_INCERR };

struct d_phase {
	enum d_kind kind;
	enum lfp_wait_obj obj;
	struct lfp_cq *cq;
	struct lfp_cntr *c;
	uint64_t rounds;
	_Atomic uint64_t entering, done;
	struct stress_deadline deadline;
};

static const char *d_name(enum d_kind k)
{
	return k == D_CQ_SIGNAL ? "cq_signal -> sread" :
	       k == D_CNTR_INC ? "cntr_inc -> cntr_wait" : "cntr_incerr -> cntr_wait";
}

static void *d_waiter_main(void *arg)
{
	struct d_phase *ph = (struct d_phase *)arg;
	struct lfp_cq_entry buf[4];
	uint64_t r;
	ssize_t n;
	int ret;

	for (r = 1; r <= ph->rounds; r++) {
		atomic_store(&ph->entering, r);
		switch (ph->kind) {
		case D_CQ_SIGNAL:
			n = lfp_cq_sread(ph->cq, buf, 4, NULL, -1);
			CHECK(n == -EAGAIN, "d: round %llu: sread = %zd, expected "
			      "-EAGAIN from lfp_cq_signal", (unsigned long long)r, n);
			break;
		case D_CNTR_INC:
			ret = lfp_cntr_wait(ph->c, r, -1);
			CHECK(ret == 0, "d: round %llu: cntr_wait = %d",
			      (unsigned long long)r, ret);
			CHECK(lfp_cntr_read(ph->c) >= r, "d: cntr_wait returned early");
			break;
		default:
			ret = lfp_cntr_wait(ph->c, UINT64_MAX, -1);
			CHECK(ret == -LFP_EAVAIL, "d: round %llu: cntr_wait = %d, "
			      "expected -LFP_EAVAIL", (unsigned long long)r, ret);
			CHECK(lfp_cntr_readerr(ph->c) == r, "d: error count %llu",
			      (unsigned long long)lfp_cntr_readerr(ph->c));
			break;
		}
		atomic_store(&ph->done, r);
	}
	return NULL;
}

/* Wait until the waiter's wait object is armed: it has taken its snapshot
 * and is at or past W2, so a single wake must reach it. */
static void d_wait_armed(struct d_phase *ph)
{
	struct lfp__signal *s = ph->kind == D_CQ_SIGNAL ? ph->cq->w.sig : ph->c->w.sig;
	unsigned spins = 0;

	while (!(lfp__ld_acq_u32(&s->state) & LFP__ARMED_ANY)) {
		stress_backoff(&spins);
		if ((spins & 255) == 0)
			CHECK_DEADLINE(&ph->deadline);
	}
}

static void phase_d(enum d_kind kind, enum lfp_wait_obj obj)
{
	struct d_phase ph;
	pthread_t t;
	uint64_t r, rng = 5, t0 = stress_now_ns();

	memset(&ph, 0, sizeof(ph));
	ph.kind = kind;
	ph.obj = obj;
	ph.rounds = stress_count(1500, 600);
	ph.deadline = stress_deadline_in(STRESS_TSAN ? 170 : 60, "d: cross-thread wake");
	if (kind == D_CQ_SIGNAL)
		ph.cq = open_cq(obj, NULL, 16, NULL);
	else
		ph.c = open_cntr(obj, NULL, NULL);
	stress_spawn(&t, d_waiter_main, &ph);
	for (r = 1; r <= ph.rounds; r++) {
		wait_at_least(&ph.entering, r, &ph.deadline);
		/* An inc is level-triggered (value >= threshold), so it may
		 * also land early; a signal or an incerr only counts once the
		 * waiter has its snapshot, which arming implies. */
		if (kind == D_CNTR_INC && (stress_rand(&rng) & 1))
			sleep_us((unsigned)(stress_rand(&rng) % 50));
		else if (obj != LFP_WAIT_YIELD)
			d_wait_armed(&ph);
		else
			sleep_us(200); /* YIELD never arms */
		switch (kind) {
		case D_CQ_SIGNAL:   CHECK(lfp_cq_signal(ph.cq) == 0, "d: signal"); break;
		case D_CNTR_INC:    CHECK(lfp_cntr_inc(ph.c, 1) == 0, "d: inc"); break;
		case D_CNTR_INCERR: CHECK(lfp_cntr_incerr(ph.c, 1) == 0, "d: incerr"); break;
		}
		wait_at_least(&ph.done, r, &ph.deadline);
	}
	stress_join(t);
	if (ph.cq)
		CHECK(lfp_cq_close(ph.cq) == 0, "d: close");
	else
		CHECK(lfp_cntr_close(ph.c) == 0, "d: close");
	printf("stress_sets d: PASS %s (%s): %llu single wakes, none lost (%.1f s)\n",
	       d_name(kind), obj_name(obj), (unsigned long long)ph.rounds,
	       stress_seconds_since(t0));
}

/* ================================================================ e */

#define E_CQS   8
#define E_CNTRS 4
#define E_OBJS  (E_CQS + E_CNTRS)
#define E_PROD  2

struct e_phase {
	struct lfp_poll *ps;
	struct lfp_cq *cq[E_CQS];
	struct lfp_cntr *c[E_CNTRS];
	struct lfp_fid *fid[E_OBJS];
	int member[E_OBJS];            /* owned by the membership thread */
	uint64_t per_producer;
	uint8_t *seen[E_PROD];         /* owned by the poller, then main */
	uint64_t got;
	_Atomic int producers_done, stop_members, stop_poller;
	_Atomic uint64_t incs, polls, reports, toggles;
	struct stress_deadline deadline;
};

struct e_producer {
	struct e_phase *ph;
	unsigned id;
};

static void e_record(struct e_phase *ph, const struct lfp_cq_entry *e, unsigned cq)
{
	uint64_t tag = (uint64_t)(uintptr_t)e->op_context;
	unsigned p = (unsigned)(tag >> 40);
	uint64_t seq = tag & (((uint64_t)1 << 40) - 1);

	CHECK(p < E_PROD && seq < ph->per_producer, "e: garbled completion %#llx "
	      "in CQ %u", (unsigned long long)tag, cq);
	CHECK(!ph->seen[p][seq], "e: producer %u seq %llu read twice", p,
	      (unsigned long long)seq);
	ph->seen[p][seq] = 1;
	ph->got++;
}

static void e_drain(struct e_phase *ph, unsigned i)
{
	struct lfp_cq_entry buf[16];
	ssize_t n, k;

	while ((n = lfp_cq_read(ph->cq[i], buf, 16)) > 0)
		for (k = 0; k < n; k++)
			e_record(ph, &buf[k], i);
	CHECK(n == -EAGAIN, "e: read = %zd", n);
}

static void *e_producer_main(void *arg)
{
	struct e_producer *pr = (struct e_producer *)arg;
	struct e_phase *ph = pr->ph;
	struct lfp_cq_entry e;
	uint64_t seq, rng = 1000 + pr->id;
	unsigned cq, spins;
	ssize_t ret;

	for (seq = 0; seq < ph->per_producer; seq++) {
		e.op_context = (void *)(uintptr_t)((uint64_t)pr->id << 40 | seq);
		cq = (unsigned)(stress_rand(&rng) % E_CQS);
		spins = 0;
		while ((ret = lfp_cq_write(ph->cq[cq], &e, 1)) == -EAGAIN) {
			/* Full: the poller drains it once it is a member and
			 * reported.  A CQ that is never reported again stops
			 * us here, and the deadline names it. */
			stress_backoff(&spins);
			if ((spins & 255) == 0)
				CHECK(!stress_deadline_passed(&ph->deadline),
				      "e: producer %u: CQ %u stayed full (a member with "
				      "work that lfp_poll never reports, or a hang)",
				      pr->id, cq);
		}
		CHECK(ret == 1, "e: write = %zd", ret);
		if ((stress_rand(&rng) & 7) == 0) {
			CHECK(lfp_cntr_inc(ph->c[stress_rand(&rng) % E_CNTRS], 1) == 0,
			      "e: inc");
			atomic_fetch_add_explicit(&ph->incs, 1, memory_order_relaxed);
		}
	}
	return NULL;
}

static void *e_members_main(void *arg)
{
	struct e_phase *ph = (struct e_phase *)arg;
	uint64_t rng = 4242;
	unsigned i;
	int ret;

	while (!atomic_load(&ph->stop_members)) {
		CHECK(!stress_deadline_passed(&ph->deadline),
		      "e: membership thread still running at the deadline");
		i = (unsigned)(stress_rand(&rng) % E_OBJS);
		if (ph->member[i]) {
			if ((stress_rand(&rng) & 15) == 0) {
				ret = lfp_poll_add(ph->ps, ph->fid[i], 0);
				CHECK(ret == -EEXIST, "e: re-add of member %u = %d", i, ret);
				ret = lfp_close(ph->fid[i]);
				CHECK(ret == -EBUSY, "e: close of member %u = %d", i, ret);
				ret = lfp_poll_close(ph->ps);
				CHECK(ret == -EBUSY, "e: poll_close with members = %d", ret);
			}
			ret = lfp_poll_del(ph->ps, ph->fid[i], 0);
			CHECK(ret == 0, "e: del of member %u = %d", i, ret);
			ph->member[i] = 0;
		} else {
			if ((stress_rand(&rng) & 15) == 0) {
				ret = lfp_poll_del(ph->ps, ph->fid[i], 0);
				CHECK(ret == -ENOENT, "e: del of non-member %u = %d", i, ret);
			}
			ret = lfp_poll_add(ph->ps, ph->fid[i], 0);
			CHECK(ret == 0, "e: add of %u = %d", i, ret);
			ph->member[i] = 1;
		}
		atomic_fetch_add_explicit(&ph->toggles, 1, memory_order_relaxed);
		if ((stress_rand(&rng) & 3) == 0)
			sched_yield();
	}
	return NULL;
}

static int e_index(struct e_phase *ph, void *ctx)
{
	uintptr_t v = (uintptr_t)ctx;

	(void)ph;
	CHECK(v >= 1 && v <= E_OBJS, "e: lfp_poll returned unknown context %p", ctx);
	return (int)v - 1;
}

static void *e_poller_main(void *arg)
{
	struct e_phase *ph = (struct e_phase *)arg;
	void *ctx[4];
	int n, k, i;

	while (!atomic_load(&ph->stop_poller)) {
		CHECK(!stress_deadline_passed(&ph->deadline),
		      "e: poller still running at the deadline");
		n = lfp_poll(ph->ps, ctx, 4);
		CHECK(n >= 0 && n <= 4, "e: lfp_poll = %d", n);
		atomic_fetch_add_explicit(&ph->polls, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&ph->reports, (uint64_t)n, memory_order_relaxed);
		for (k = 0; k < n; k++) {
			i = e_index(ph, ctx[k]);
			if (i < E_CQS)
				e_drain(ph, (unsigned)i);
			else
				(void)lfp_cntr_read(ph->c[i - E_CQS]);
		}
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

/* Poll until nothing is reported, draining; then check every member. */
static void e_settle(struct e_phase *ph, const char *when)
{
	void *ctx[E_OBJS];
	int n, k, i, rounds = 0;
	int reported[E_OBJS] = { 0 };
	struct lfp_cq_entry probe;

	while ((n = lfp_poll(ph->ps, ctx, 3)) > 0) {
		CHECK(++rounds < 1000, "e (%s): lfp_poll keeps reporting", when);
		for (k = 0; k < n; k++) {
			i = e_index(ph, ctx[k]);
			reported[i]++;
			if (i < E_CQS)
				e_drain(ph, (unsigned)i);
		}
	}
	CHECK(n == 0, "e (%s): lfp_poll = %d", when, n);
	for (i = 0; i < E_CQS; i++)
		CHECK(lfp_cq_read(ph->cq[i], &probe, 1) == -EAGAIN, "e (%s): member "
		      "CQ %d holds completions that lfp_poll did not report", when, i);
	(void)reported;
}

static void phase_e(void)
{
	struct e_phase *ph = calloc(1, sizeof(*ph));
	struct e_producer pr[E_PROD];
	pthread_t tp[E_PROD], tm, tq;
	void *ctx[E_OBJS];
	uint64_t total, t0 = stress_now_ns();
	int i, n, k, rounds, seen_c[E_CNTRS];
	unsigned p;

	CHECK(ph != NULL, "e: out of memory");
	ph->per_producer = stress_count(100000, 30000);
	total = ph->per_producer * E_PROD;
	ph->deadline = stress_deadline_in(STRESS_TSAN ? 60 : 30, "e: poll-set torture");
	CHECK(lfp_poll_open(NULL, &ph->ps) == 0, "e: poll open");
	for (i = 0; i < E_CQS; i++) {
		/* Small CQs, half with a wait object and half without. */
		ph->cq[i] = open_cq(i & 1 ? LFP_WAIT_FD : LFP_WAIT_NONE, NULL, 8,
		                    (void *)(uintptr_t)(i + 1));
		ph->fid[i] = &ph->cq[i]->fid;
	}
	for (i = 0; i < E_CNTRS; i++) {
		ph->c[i] = open_cntr(i & 1 ? LFP_WAIT_MUTEX_COND : LFP_WAIT_NONE, NULL,
		                     (void *)(uintptr_t)(E_CQS + i + 1));
		ph->fid[E_CQS + i] = &ph->c[i]->fid;
	}
	for (p = 0; p < E_PROD; p++) {
		ph->seen[p] = calloc(ph->per_producer, 1);
		CHECK(ph->seen[p] != NULL, "e: out of memory");
	}
	stress_spawn(&tq, e_poller_main, ph);
	stress_spawn(&tm, e_members_main, ph);
	for (p = 0; p < E_PROD; p++) {
		pr[p].ph = ph;
		pr[p].id = p;
		stress_spawn(&tp[p], e_producer_main, &pr[p]);
	}
	for (p = 0; p < E_PROD; p++)
		stress_join(tp[p]);
	atomic_store(&ph->stop_members, 1);
	stress_join(tm);
	atomic_store(&ph->stop_poller, 1);
	stress_join(tq);

	/* Quiet now.  Make every object a member: whatever is queued must be
	 * reported, whatever the churn left behind. */
	for (i = 0; i < E_OBJS; i++) {
		if (!ph->member[i])
			CHECK(lfp_poll_add(ph->ps, ph->fid[i], 0) == 0, "e: final add");
		ph->member[i] = 1;
	}
	e_settle(ph, "after the churn");
	CHECK(ph->got == total, "e: %llu of %llu completions read",
	      (unsigned long long)ph->got, (unsigned long long)total);
	for (p = 0; p < E_PROD; p++)
		for (uint64_t s = 0; s < ph->per_producer; s++)
			CHECK(ph->seen[p][s], "e: producer %u seq %llu never read", p,
			      (unsigned long long)s);

	/* Every counter and CQ still reports a fresh event. */
	for (i = 0; i < E_CNTRS; i++) {
		CHECK(lfp_cntr_inc(ph->c[i], 1) == 0, "e: inc");
		seen_c[i] = 0;
	}
	/* (False positives are allowed: only missing reports fail.) */
	for (rounds = 0; (n = lfp_poll(ph->ps, ctx, 2)) > 0; rounds++) {
		CHECK(rounds < 1000, "e: lfp_poll keeps reporting");
		for (k = 0; k < n; k++) {
			i = e_index(ph, ctx[k]);
			if (i >= E_CQS)
				seen_c[i - E_CQS]++;
		}
	}
	for (i = 0; i < E_CNTRS; i++)
		CHECK(seen_c[i] >= 1, "e: counter %d changed after the churn and "
		      "was not reported", i);
	for (i = 0; i < E_CQS; i++) {
		struct lfp_cq_entry e = { &e };
		int found = 0;

		CHECK(lfp_cq_write(ph->cq[i], &e, 1) == 1, "e: write");
		n = lfp_poll(ph->ps, ctx, E_OBJS);
		CHECK(n >= 1 && n <= E_OBJS, "e: lfp_poll = %d", n);
		for (k = 0; k < n; k++)
			found |= ctx[k] == (void *)(uintptr_t)(i + 1);
		CHECK(found, "e: CQ %d written after the churn was not reported", i);
		CHECK(lfp_cq_read(ph->cq[i], &e, 1) == 1, "e: read");
	}

	/* Close order. */
	CHECK(lfp_poll_close(ph->ps) == -EBUSY, "e: poll_close with members");
	for (i = 0; i < E_OBJS; i++) {
		CHECK(lfp_close(ph->fid[i]) == -EBUSY, "e: close of member %d", i);
		CHECK(lfp_poll_del(ph->ps, ph->fid[i], 0) == 0, "e: final del");
		CHECK(lfp_close(ph->fid[i]) == 0, "e: close %d", i);
	}
	CHECK(lfp_poll_close(ph->ps) == 0, "e: poll_close");
	printf("stress_sets e: PASS %llu completions each read once, %llu incs, "
	       "%llu membership changes, %llu polls reporting %llu members "
	       "(%.1f s)\n", (unsigned long long)total,
	       (unsigned long long)atomic_load(&ph->incs),
	       (unsigned long long)atomic_load(&ph->toggles),
	       (unsigned long long)atomic_load(&ph->polls),
	       (unsigned long long)atomic_load(&ph->reports), stress_seconds_since(t0));
	for (p = 0; p < E_PROD; p++)
		free(ph->seen[p]);
	free(ph);
}

/* ================================================================ main */

int main(void)
{
	static const enum lfp_wait_obj c_objs[] = {
		LFP_WAIT_FD, LFP_WAIT_POLLFD, LFP_WAIT_MUTEX_COND, LFP_WAIT_YIELD
	};
	uint64_t t0 = stress_now_ns();
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	phase_a();
	phase_b(LFP_WAIT_FD);
	phase_b(LFP_WAIT_POLLFD);
	for (i = 0; i < sizeof(c_objs) / sizeof(c_objs[0]); i++)
		phase_c(c_objs[i]);
	phase_c2(LFP_WAIT_FD);
	phase_c2(LFP_WAIT_MUTEX_COND);
	phase_d(D_CQ_SIGNAL, LFP_WAIT_FD);
	phase_d(D_CQ_SIGNAL, LFP_WAIT_MUTEX_COND);
	phase_d(D_CNTR_INC, LFP_WAIT_FD);
	phase_d(D_CNTR_INC, LFP_WAIT_MUTEX_COND);
	phase_d(D_CNTR_INC, LFP_WAIT_YIELD);
	phase_d(D_CNTR_INCERR, LFP_WAIT_FD);
	phase_d(D_CNTR_INCERR, LFP_WAIT_MUTEX_COND);
	phase_e();
	printf("stress_sets: PASS all phases%s (%.1f s)\n",
	       STRESS_TSAN ? " under TSan" : "", stress_seconds_since(t0));
	return 0;
}
