/*
 * bench/harness.c: rounds, statistics, pinning, checks and output for every
 * lfpoll benchmark.  The contract is in harness.h.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS_DEFAULT    7
#define ROUNDS_QUICK      3
#define ROUND_MS_DEFAULT  150
#define ROUND_MS_QUICK    40
#define STALL_S_DEFAULT   10
#define MAX_ROUNDS        101
#define MSG_LEN           240

/* Table columns, shared by the header and the rows. */
#define ROW_FMT "%-18s %-12s %9s %9s %17s %11s  %s\n"

static struct {
	const char *bench;
	int quick;
	int rounds;
	uint64_t round_ns;
	uint64_t stall_ns;
	int instr;
	const char *case_filter;
	const char *impl_filter;
	FILE *results;
	int ncpus;
	int cpus[CPU_SETSIZE];
	int status;
	int met, missed, bounded, failed, skipped;
} H;

/* Failure state of the round in progress (any thread may set it). */
static int fail_flag;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static char fail_msg[MSG_LEN];

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_instr_mode(void)
{
	return H.instr;
}

int bench_failed(void)
{
	return __atomic_load_n(&fail_flag, __ATOMIC_RELAXED);
}

int bench_fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (!fail_flag) {
		va_start(ap, fmt);
		vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
		va_end(ap);
	}
	/* Relaxed: loops only need to see it eventually; the message is read
	 * after the threads are joined. */
	__atomic_store_n(&fail_flag, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fail_lock);
	return -1;
}

static void fail_reset(void)
{
	fail_flag = 0;
	fail_msg[0] = '\0';
}

int bench_round_over(const struct bench_round *r, uint64_t done, uint64_t t0)
{
	if (bench_failed())
		return 1;
	if (r->max_items && done >= r->max_items)
		return 1;
	return r->budget_ns && bench_now_ns() - t0 >= r->budget_ns;
}

int bench__spin_slow(struct bench_spin *s)
{
	uint64_t now;

	sched_yield();
	if (s->streak == 64) {
		s->since = bench_now_ns();
		return bench_failed();
	}
	if (s->streak & 1023)
		return 0;
	if (bench_failed())
		return 1;
	now = bench_now_ns();
	if (now - s->since > H.stall_ns) {
		bench_fail("no progress for %llu s (stalled)",
		           (unsigned long long)(H.stall_ns / 1000000000u));
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ CPUs */

int bench_ncpus(void)
{
	return H.ncpus;
}

int bench_pin(int i)
{
	cpu_set_t set;

	if (H.ncpus <= 0)
		return -ENOSYS;
	CPU_ZERO(&set);
	CPU_SET(H.cpus[(unsigned)i % (unsigned)H.ncpus], &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int bench_cpu_index(int os_cpu)
{
	int i;

	for (i = 0; i < H.ncpus; i++)
		if (H.cpus[i] == os_cpu)
			return i;
	return -1;
}

static void cpus_init(void)
{
	cpu_set_t set;
	int c;

	H.ncpus = 0;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			H.cpus[H.ncpus++] = c;
}

struct gate {
	int ready;
	int go;
};

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	int cpu;
	struct gate *gate;
};

static int pin_warned;

static void *thread_main(void *p)
{
	struct thread_start *ts = p;
	unsigned spins = 0;
	int err = bench_pin(ts->cpu);

	if (err && !__atomic_exchange_n(&pin_warned, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "bench: cannot pin a thread to CPU index %d: %s; "
		        "threaded results are not comparable\n", ts->cpu,
		        strerror(-err));
	/* Release/acquire: the starter sees every thread parked, and the
	 * threads see what the starter wrote before opening the gate. */
	__atomic_add_fetch(&ts->gate->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&ts->gate->go, __ATOMIC_ACQUIRE)) {
		if (++spins & 15)
			bench_cpu_relax();
		else
			sched_yield();
	}
	return ts->fn(ts->arg);
}

uint64_t bench_threads(int n, void *(*fn)(void *), void *const *args,
                       const int *cpus)
{
	struct gate gate = { 0, 0 };
	struct thread_start *ts = calloc((size_t)n, sizeof(*ts));
	pthread_t *tid = calloc((size_t)n, sizeof(*tid));
	uint64_t t0, t1;
	int i, err;

	if (!ts || !tid) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	for (i = 0; i < n; i++) {
		ts[i] = (struct thread_start){ fn, args[i], cpus ? cpus[i] : i,
		                               &gate };
		err = pthread_create(&tid[i], NULL, thread_main, &ts[i]);
		if (err) {
			fprintf(stderr, "bench: pthread_create: %s\n",
			        strerror(err));
			exit(2);
		}
	}
	while (__atomic_load_n(&gate.ready, __ATOMIC_ACQUIRE) != n)
		sched_yield();
	t0 = bench_now_ns();
	__atomic_store_n(&gate.go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	t1 = bench_now_ns();
	free(ts);
	free(tid);
	return t1 - t0;
}

/* ------------------------------------------------------------ producers and consumers */

static void *mt_worker_main(void *p)
{
	struct bench_mt_worker *w = p;

	return w->fn(w);
}

int bench_mt_run(struct bench_mt *m, struct bench_round *r,
                 void *(*prod)(void *), void *(*cons)(void *))
{
	void *args[BENCH_MT_MAXP + BENCH_MT_MAXC];
	int cpus[BENCH_MT_MAXP + BENCH_MT_MAXC], i, n = 0;

	m->round = r;
	m->producers_done = 0;
	memset(m->seen, 0, sizeof(m->seen));
	memset(m->produced, 0, sizeof(m->produced));
	memset(m->prod_retries, 0, sizeof(m->prod_retries));
	for (i = 0; i < m->np; i++, n++) {
		m->w[n] = (struct bench_mt_worker){ m, i, prod };
		cpus[n] = m->cpus ? m->cpus[n] : i;
	}
	for (i = 0; i < m->nc; i++, n++) {
		m->w[n] = (struct bench_mt_worker){ m, i, cons };
		cpus[n] = m->cpus ? m->cpus[n] : m->np + i;
	}
	for (i = 0; i < n; i++)
		args[i] = &m->w[i];
	r->ns = bench_threads(n, mt_worker_main, args, cpus);
	r->items = 0;
	r->full_retries = 0;
	for (i = 0; i < m->np; i++) {
		r->items += m->produced[i];
		r->full_retries += m->prod_retries[i];
	}
	r->retries = r->full_retries;
	for (i = 0; i < m->nc; i++)
		r->retries += m->seen[i].retries;
	return 0;
}

int bench__mt_order_fail(const struct bench_mt *m, uint32_t p, uint64_t seq,
                         uint64_t next)
{
	return bench_fail("%s %u: seq %llu after %llu (%s)", m->who, p,
	                  (unsigned long long)seq,
	                  (unsigned long long)next - 1,
	                  seq < next ? "reordered or duplicated" : "lost");
}

int bench_mt_check(const struct bench_mt *m)
{
	uint64_t cnt, sum, hsum, want, hwant, s;
	int p, j;

	for (p = 0; p < m->np; p++) {
		cnt = sum = hsum = 0;
		for (j = 0; j < m->nc; j++) {
			cnt += m->seen[j].count[p];
			sum += m->seen[j].sum[p];
			hsum += m->seen[j].hsum[p];
		}
		if (cnt != m->produced[p])
			return bench_fail("%s %d: %llu %s, %llu %s", m->who, p,
			                  (unsigned long long)m->produced[p],
			                  m->made, (unsigned long long)cnt,
			                  m->took);
		want = m->produced[p] * (m->produced[p] - 1) / 2;
		hwant = 0;
		if (m->hash)
			for (s = 0; s < m->produced[p]; s++)
				hwant += m->hash((uint32_t)p, s);
		if (sum != want || hsum != hwant)
			return bench_fail("%s %d: wrong items %s (sequence sums "
			                  "differ)", m->who, p, m->took);
	}
	return 0;
}

/* ------------------------------------------------------------ setup */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s [--quick] [--rounds N] [--round-ms N] [--case SUBSTR]\n"
	        "       [--impl NAME[,NAME...]] [--instr] [--list]\n"
	        "env:   BENCH_QUICK=1 BENCH_ROUNDS BENCH_ROUND_MS BENCH_RESULTS=FILE\n"
	        "       BENCH_NO_HEADER=1 BENCH_STALL_S\n",
	        H.bench);
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : def;
}

static int list_only;

void bench_init(const char *bench, int argc, char **argv)
{
	const char *path, *q = getenv("BENCH_QUICK");
	long rounds, round_ms;
	int i;

	H.bench = bench;
	H.quick = q && *q && strcmp(q, "0") != 0;
	rounds = -1;
	round_ms = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			H.quick = 1;
		} else if (!strcmp(a, "--instr")) {
			H.instr = 1;
		} else if (!strcmp(a, "--list")) {
			list_only = 1;
		} else if (!strcmp(a, "--rounds") && i + 1 < argc) {
			rounds = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(a, "--round-ms") && i + 1 < argc) {
			round_ms = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(a, "--case") && i + 1 < argc) {
			H.case_filter = argv[++i];
		} else if (!strcmp(a, "--impl") && i + 1 < argc) {
			H.impl_filter = argv[++i];
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "%s: unknown argument %s\n", bench, a);
			usage(stderr);
			exit(2);
		}
	}
	if (rounds < 0)
		rounds = env_long("BENCH_ROUNDS",
		                  H.quick ? ROUNDS_QUICK : ROUNDS_DEFAULT);
	if (round_ms < 0)
		round_ms = env_long("BENCH_ROUND_MS",
		                    H.quick ? ROUND_MS_QUICK : ROUND_MS_DEFAULT);
	if (rounds < 1 || rounds > MAX_ROUNDS || round_ms < 1) {
		fprintf(stderr, "%s: rounds must be 1..%d, round-ms >= 1\n",
		        bench, MAX_ROUNDS);
		exit(2);
	}
	H.rounds = H.instr ? 1 : (int)rounds;
	H.round_ns = (uint64_t)round_ms * 1000000u;
	H.stall_ns = (uint64_t)env_long("BENCH_STALL_S", STALL_S_DEFAULT) *
	             1000000000u;
	cpus_init();
	bench_pin(0);

	path = getenv("BENCH_RESULTS");
	if (path && *path && !list_only) {
		H.results = fopen(path, "a");
		if (!H.results) {
			fprintf(stderr, "%s: %s: %s\n", bench, path,
			        strerror(errno));
			exit(2);
		}
	}
	path = getenv("BENCH_NO_HEADER");
	if (!list_only && !(path && *path && strcmp(path, "0") != 0)) {
		if (H.instr)
			printf("# lfpoll benchmarks, --instr: one fixed-count "
			       "run per implementation (for callgrind; no "
			       "targets)\n");
		else
			printf("# lfpoll benchmarks: median of %d rounds of "
			       "%ld ms (round-robin), %d CPU(s); lfpoll/peer > 1 "
			       "means lfpoll is faster\n", H.rounds, round_ms,
			       H.ncpus);
		printf(ROW_FMT, "# case", "impl", "ns/item", "Mitems/s",
		       "min-max ns/item", "lfpoll/peer", "target");
	}
	fflush(stdout);
}

/* ------------------------------------------------------------ one case */

enum impl_state { ST_RUN, ST_SKIP, ST_FAIL, ST_FILTERED };

struct impl_res {
	enum impl_state st;
	int set_up;            /* setup succeeded: call teardown */
	char reason[MSG_LEN];
	int n;                 /* rounds measured */
	double nspi[MAX_ROUNDS];
	uint64_t items, retries, full_retries;
	double median, min, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stats(struct impl_res *s)
{
	double v[MAX_ROUNDS];
	int n = s->n;

	memcpy(v, s->nspi, sizeof(double) * (size_t)n);
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int impl_selected(const char *name)
{
	const char *f = H.impl_filter, *comma;
	size_t len = strlen(name);

	if (!f)
		return 1;
	for (;;) {
		comma = strchr(f, ',');
		if ((size_t)(comma ? comma - f : (long)strlen(f)) == len &&
		    !strncmp(f, name, len))
			return 1;
		if (!comma)
			return 0;
		f = comma + 1;
	}
}

static int one_round(const struct bench_case *c, const struct bench_impl *im,
                     struct impl_res *s, uint64_t budget, int record)
{
	struct bench_round r = { 0 };
	int ret;

	r.budget_ns = H.instr ? 0 : budget;
	r.max_items = H.instr ? c->instr_items : 0;
	fail_reset();
	ret = im->run(im->arg, &r);
	if (!ret && !bench_failed() && c->check)
		ret = c->check(im->arg, &r);
	if (!ret && !bench_failed() && r.items == 0)
		bench_fail("no item completed in the round");
	if (ret || bench_failed()) {
		s->st = ST_FAIL;
		snprintf(s->reason, sizeof(s->reason), "%s",
		         fail_msg[0] ? fail_msg : "check failed");
		return -1;
	}
	if (record) {
		s->nspi[s->n++] = (double)r.ns / (double)r.items;
		s->items += r.items;
		s->retries += r.retries;
		s->full_retries += r.full_retries;
	}
	return 0;
}

static void json_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\"%s\":\"", key);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			fprintf(f, "\\%c", *v);
		else if ((unsigned char)*v < 0x20)
			fprintf(f, "\\u%04x", *v);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, ",\"%s\":%.6g", key, v);
	else
		fprintf(f, ",\"%s\":null", key);
}

/*
 * How a peer's row fares against its target.  A miss is BOUNDED only when
 * the floor ran in the same rounds, missed the target too (floor_ratio,
 * peer ns / floor ns, below it), and was at least as fast as the subject
 * (floor_ratio >= ratio): a "floor" the subject beats bounds nothing.
 */
enum verdict { V_NONE, V_NA, V_MET, V_MISSED, V_BOUNDED };

static enum verdict verdict(const struct bench_target *t, double ratio,
                            double floor_ratio)
{
	if (!t)
		return V_NONE;
	if (!isfinite(ratio))
		return V_NA;
	if (ratio >= t->ratio)
		return V_MET;
	return isfinite(floor_ratio) && floor_ratio < t->ratio &&
	       floor_ratio >= ratio ? V_BOUNDED : V_MISSED;
}

static void record(const struct bench_case *c, const struct bench_impl *im,
                   const struct impl_res *s, double ratio,
                   const struct bench_target *t, double floor_ratio)
{
	static const char *const status[] = { "ok", "skipped", "failed" };
	FILE *f = H.results;
	int i;

	if (!f)
		return;
	fputc('{', f);
	json_str(f, "bench", H.bench);
	fputc(',', f);
	json_str(f, "case", c->name);
	fputc(',', f);
	json_str(f, "label", c->label ? c->label : "");
	fputc(',', f);
	json_str(f, "impl", im->name);
	fputc(',', f);
	json_str(f, "subject", c->impls[0].name);
	fputc(',', f);
	json_str(f, "status", status[s->st]);
	if (s->st != ST_RUN) {
		fputc(',', f);
		json_str(f, "reason", s->reason);
	}
	fprintf(f, ",\"threads\":%d,\"quick\":%d,\"instr\":%d,\"round_ms\":%llu",
	        c->threads, H.quick, H.instr,
	        (unsigned long long)(H.round_ns / 1000000u));
	if (s->st == ST_RUN) {
		fprintf(f, ",\"rounds\":%d,\"items\":%llu", s->n,
		        (unsigned long long)s->items);
		json_num(f, "median_ns_per_item", s->median);
		json_num(f, "min_ns_per_item", s->min);
		json_num(f, "max_ns_per_item", s->max);
		json_num(f, "mitems_per_s", 1e3 / s->median);
		json_num(f, "min_mitems_per_s", 1e3 / s->max);
		json_num(f, "max_mitems_per_s", 1e3 / s->min);
		json_num(f, "retries_per_item",
		         (double)s->retries / (double)s->items);
		json_num(f, "full_retries_per_item",
		         (double)s->full_retries / (double)s->items);
		json_num(f, "empty_retries_per_item",
		         (double)(s->retries - s->full_retries) /
		         (double)s->items);
		json_num(f, "ratio", ratio);
		fprintf(f, ",\"ns_per_item\":[");
		for (i = 0; i < s->n; i++)
			fprintf(f, "%s%.6g", i ? "," : "", s->nspi[i]);
		fputc(']', f);
	}
	if (t) {
		enum verdict v = verdict(t, ratio, floor_ratio);

		json_num(f, "target", t->ratio);
		fprintf(f, ",\"target_met\":%s", v == V_NA ? "null" :
		        v == V_MET ? "true" : "false");
		if (t->floor) { /* null: no verdict, or the floor did not run */
			fputc(',', f);
			json_str(f, "target_floor", t->floor);
			json_num(f, "floor_ratio", floor_ratio);
			fprintf(f, ",\"target_bounded\":%s",
			        v == V_NA || !isfinite(floor_ratio) ? "null" :
			        v == V_BOUNDED ? "true" : "false");
		}
	}
	fputs("}\n", f);
	fflush(f);
}

static const struct bench_target *target_for(const struct bench_case *c,
                                             const char *name)
{
	size_t i;

	for (i = 0; i < c->n_targets; i++)
		if (!strcmp(c->targets[i].peer, name))
			return &c->targets[i];
	return NULL;
}

static void print_row(const struct bench_case *c, const struct bench_impl *im,
                      const struct impl_res *s, double ratio,
                      const struct bench_target *t, double floor_ratio)
{
	char ns[32], mips[32], range[48], rat[32], tgt[128] = "";

	switch (verdict(t, ratio, floor_ratio)) {
	case V_NONE:
		break;
	case V_NA:
		snprintf(tgt, sizeof(tgt), ">=%.3gx n/a", t->ratio);
		break;
	case V_MET:
		snprintf(tgt, sizeof(tgt), ">=%.3gx MET", t->ratio);
		H.met++;
		break;
	case V_MISSED: /* with a floor, why it does not bound the miss */
		if (t->floor && !isfinite(floor_ratio))
			snprintf(tgt, sizeof(tgt), ">=%.3gx MISSED (%s did "
			         "not run)", t->ratio, t->floor);
		else if (t->floor && floor_ratio >= t->ratio)
			snprintf(tgt, sizeof(tgt), ">=%.3gx MISSED (%s %.2fx "
			         "meets it)", t->ratio, t->floor, floor_ratio);
		else if (t->floor)
			snprintf(tgt, sizeof(tgt), ">=%.3gx MISSED (%s %.2fx, "
			         "slower than %s: %.2fx its time)", t->ratio,
			         t->floor, floor_ratio, c->impls[0].name,
			         ratio / floor_ratio);
		else
			snprintf(tgt, sizeof(tgt), ">=%.3gx MISSED", t->ratio);
		H.missed++;
		break;
	case V_BOUNDED:
		snprintf(tgt, sizeof(tgt), ">=%.3gx BOUNDED (%s %.2fx)", t->ratio,
		         t->floor, floor_ratio);
		H.bounded++;
		break;
	}
	if (s->st == ST_SKIP || s->st == ST_FAIL) {
		printf("%-18s %-12s %s (%s)%s%s\n", c->name, im->name,
		       s->st == ST_SKIP ? "skipped" : "FAILED", s->reason,
		       tgt[0] ? "  target " : "", tgt);
		return;
	}
	snprintf(ns, sizeof(ns), "%.1f", s->median);
	snprintf(mips, sizeof(mips), "%.2f", 1e3 / s->median);
	snprintf(range, sizeof(range), "%.1f-%.1f", s->min, s->max);
	/* A row judged against a target shows the ratio to three places, as
	 * the target: 0.905 must not read as a met 0.91 against 0.909. */
	if (isfinite(ratio))
		snprintf(rat, sizeof(rat), t ? "%.3fx" : "%.2fx", ratio);
	else
		snprintf(rat, sizeof(rat), "%s", im == &c->impls[0] ? "" : "-");
	printf(ROW_FMT, c->name, im->name, ns, mips, range, rat, tgt);
}

/* The index of c's implementation called name, or -1. */
static long impl_index(const struct bench_case *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n_impls; i++)
		if (!strcmp(c->impls[i].name, name))
			return (long)i;
	return -1;
}

/*
 * The target t with the floor to judge in its floor field: where t names
 * two, the faster of those that ran (either alone, if only one did; the
 * first, if neither).  *one holds the copy when one is made.
 */
static const struct bench_target *judged_floor(const struct bench_case *c,
                                               const struct impl_res *res,
                                               const struct bench_target *t,
                                               struct bench_target *one)
{
	long a, b;

	if (!t->floor2)
		return t;
	a = impl_index(c, t->floor);
	b = impl_index(c, t->floor2);
	*one = *t;
	one->floor2 = NULL;
	if (b >= 0 && res[b].st == ST_RUN &&
	    (a < 0 || res[a].st != ST_RUN || res[b].median < res[a].median))
		one->floor = t->floor2;
	return one;
}

/* Whether a target of c names a peer or floor that is not one of its
 * implementations (a typo would otherwise leave the target unjudged). */
static int targets_unknown(const struct bench_case *c)
{
	size_t i, j;
	int bad = 0;

	for (i = 0; i < c->n_targets; i++) {
		const char *names[3] = { c->targets[i].peer,
		                          c->targets[i].floor,
		                          c->targets[i].floor2 };

		for (j = 0; j < 3; j++)
			if (names[j] && impl_index(c, names[j]) < 0) {
				fprintf(stderr, "%s: target names \"%s\", "
				        "not an implementation of the case\n",
				        c->name, names[j]);
				bad = 1;
			}
	}
	return bad;
}

/* --case SUBSTR matches names containing SUBSTR; a trailing '$' anchors it
 * at the end ("ring/1thr$" is that case alone). */
static int case_selected(const struct bench_case *c)
{
	const char *f = H.case_filter, *hit;
	size_t flen, nlen = strlen(c->name);

	if (H.instr && !c->instr_items)
		return 0;
	if (!f)
		return 1;
	flen = strlen(f);
	if (flen && f[flen - 1] == '$') {
		flen--;
		return nlen >= flen && !strncmp(c->name + nlen - flen, f, flen);
	}
	hit = strstr(c->name, f);
	return hit != NULL;
}

int bench_case_run(const struct bench_case *c)
{
	struct impl_res *res;
	size_t i, n = c->n_impls;
	int round, ret = 0;
	struct bench_target one;
	double ratio, floor_ratio;
	long f;

	if (!case_selected(c))
		return 0;
	if (list_only) {
		printf("%-18s %s\n", c->name, c->label ? c->label : "");
		for (i = 0; i < n; i++)
			printf("  %s%s%s%s\n", c->impls[i].name,
			       c->impls[i].skip ? " (skipped: " : "",
			       c->impls[i].skip ? c->impls[i].skip : "",
			       c->impls[i].skip ? ")" : "");
		return 0;
	}
	if (targets_unknown(c)) {
		H.failed++;
		H.status = 1;
		return 1;
	}
	res = calloc(n, sizeof(*res));
	if (!res) {
		fprintf(stderr, "bench: out of memory\n");
		exit(2);
	}
	printf("# %s: %s\n", c->name, c->label ? c->label : "");
	fflush(stdout);

	for (i = 0; i < n; i++) {
		const struct bench_impl *im = &c->impls[i];

		if (!impl_selected(im->name)) {
			res[i].st = ST_FILTERED;
		} else if (im->skip || !im->run) {
			res[i].st = ST_SKIP;
			snprintf(res[i].reason, sizeof(res[i].reason), "%s",
			         im->skip ? im->skip : "no run function");
		} else {
			fail_reset();
			if (im->setup && (im->setup(im->arg) || bench_failed())) {
				res[i].st = ST_FAIL;
				snprintf(res[i].reason, sizeof(res[i].reason),
				         "setup: %s",
				         fail_msg[0] ? fail_msg : "failed");
			}
			res[i].set_up = res[i].st == ST_RUN;
		}
	}
	/* A warm-up round each (unrecorded), then the rounds, round-robin. */
	for (round = H.instr ? 0 : -1; round < H.rounds; round++) {
		for (i = 0; i < n; i++) {
			if (res[i].st != ST_RUN)
				continue;
			one_round(c, &c->impls[i], &res[i],
			          round < 0 ? H.round_ns / 3 : H.round_ns,
			          round >= 0);
		}
	}
	for (i = 0; i < n; i++) {
		const struct bench_impl *im = &c->impls[i];

		if (res[i].st == ST_FILTERED || res[i].st == ST_SKIP)
			continue;
		if (im->teardown && res[i].set_up)
			im->teardown(im->arg);
		if (res[i].st == ST_RUN)
			stats(&res[i]);
	}
	for (i = 0; i < n; i++) {
		const struct bench_impl *im = &c->impls[i];
		const struct bench_target *t =
			i && !H.instr ? target_for(c, im->name) : NULL;

		if (res[i].st == ST_FILTERED)
			continue;
		ratio = floor_ratio = NAN;
		if (i && res[i].st == ST_RUN && res[0].st == ST_RUN)
			ratio = res[i].median / res[0].median;
		if (t)
			t = judged_floor(c, res, t, &one);
		f = t && t->floor ? impl_index(c, t->floor) : -1;
		if (f >= 0 && res[i].st == ST_RUN && res[f].st == ST_RUN)
			floor_ratio = res[i].median / res[f].median;
		print_row(c, im, &res[i], ratio, t, floor_ratio);
		record(c, im, &res[i], ratio, t, floor_ratio);
		if (res[i].st == ST_FAIL) {
			H.failed++;
			ret = 1;
		} else if (res[i].st == ST_SKIP) {
			H.skipped++;
		}
	}
	fflush(stdout);
	free(res);
	if (ret)
		H.status = 1;
	return ret;
}

void bench_case_skip(const char *name, const char *label, const char *why)
{
	const struct bench_impl any = { .name = "*" };
	const struct bench_case c = { .name = name, .label = label,
	                              .impls = &any, .n_impls = 1 };
	struct impl_res s = { .st = ST_SKIP };

	if (!case_selected(&c))
		return;
	if (list_only) {
		printf("%-18s %s\n  * (skipped: %s)\n", name, label, why);
		return;
	}
	snprintf(s.reason, sizeof(s.reason), "%s", why);
	printf("%-18s %s (%s)\n", name, "skipped", why);
	record(&c, &any, &s, NAN, NULL, NAN);
	H.skipped++;
	fflush(stdout);
}

static void metric_record(const char *name, const char *label,
                          const struct bench_metric *m, int met)
{
	FILE *f = H.results;

	if (!f)
		return;
	fputc('{', f);
	json_str(f, "bench", H.bench);
	fputc(',', f);
	json_str(f, "case", name);
	fputc(',', f);
	json_str(f, "label", label);
	fputc(',', f);
	json_str(f, "impl", m->impl);
	fputs(",\"kind\":\"metric\",", f);
	json_str(f, "status", isnan(m->value) ? "skipped" : "ok");
	fputc(',', f);
	json_str(f, isnan(m->value) ? "reason" : "note", m->note ? m->note : "");
	fputc(',', f);
	json_str(f, "unit", m->unit);
	fprintf(f, ",\"quick\":%d", H.quick);
	json_num(f, "value", m->value);
	if (m->max > 0 && !isnan(m->value)) {
		json_num(f, "target_max", m->max);
		fprintf(f, ",\"target_met\":%s", met ? "true" : "false");
	}
	fputs("}\n", f);
	fflush(f);
}

void bench_metric_case(const char *name, const char *label,
                       const struct bench_metric *m, size_t n)
{
	const struct bench_impl any = { .name = "*" };
	const struct bench_case c = { .name = name, .label = label,
	                              .impls = &any, .n_impls = 1 };
	char val[32], tgt[64];
	size_t i;
	int met;

	if (H.instr || !case_selected(&c))
		return;
	if (list_only) {
		printf("%-18s %s\n", name, label);
		for (i = 0; i < n; i++)
			printf("  %s\n", m[i].impl);
		return;
	}
	printf("# %s: %s\n", name, label);
	for (i = 0; i < n; i++) {
		if (isnan(m[i].value)) {
			printf("%-18s %-12s skipped (%s)\n", name, m[i].impl,
			       m[i].note ? m[i].note : "");
			metric_record(name, label, &m[i], 0);
			H.skipped++;
			continue;
		}
		met = m[i].value <= m[i].max && m[i].cond;
		tgt[0] = '\0';
		if (m[i].max > 0) {
			snprintf(tgt, sizeof(tgt), "<=%g %s", m[i].max,
			         met ? "MET" : "MISSED");
			if (met)
				H.met++;
			else
				H.missed++;
		}
		snprintf(val, sizeof(val), "%.0f", m[i].value);
		printf(ROW_FMT, name, m[i].impl, val, m[i].unit, "", "", tgt);
		if (m[i].note && m[i].note[0])
			printf("%-18s %-12s   %s\n", "", "", m[i].note);
		metric_record(name, label, &m[i], met);
	}
	fflush(stdout);
}

int bench_finish(void)
{
	if (!list_only) {
		printf("# %s: targets %d met, %d bounded, %d missed; "
		       "%d failed, %d skipped\n", H.bench, H.met, H.bounded,
		       H.missed, H.failed, H.skipped);
		fflush(stdout);
	}
	if (H.results)
		fclose(H.results);
	return H.status;
}
