/*
 * bench/poll.c: what a poll set costs as it grows, and the pollfd cheap check.
 *
 * poll/members-N   one item = a completion written to one CQ of N members,
 *                  lfp_poll reporting exactly that CQ, the completion read.
 *                  lfp_poll's cost should follow the ready members (1), not
 *                  the members (N).  The peer is libfabric's util poll set
 *                  over N counters with none ready: fi_poll's cost is its
 *                  scan of every member (it has no way to be told which
 *                  member changed).  (The udp provider has no counters, so
 *                  its members are empty CQs.)
 * poll/scale       the same lfpoll item with 1,024 members (subject) against
 *                  1 member (peer): target, 1,024 members cost at most 2x one
 *                  member, i.e. ratio >= 0.5.
 * poll/pollfds-0   lfp_pollfds_get with nfds = 0 (the change_index check),
 *                  against a floor of four relaxed loads and a fence.
 */
#define _GNU_SOURCE
#include <lfpoll/lfpoll.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "peer_fabric.h"

#define MAXN 1024

struct lfp_poll_bench {
	int n;
	struct lfp_poll *ps;
	struct lfp_cq *cq[MAXN];
};

static int lfp_setup(void *arg)
{
	struct lfp_poll_bench *b = arg;
	struct lfp_cq_attr a = { .size = 64 };
	int i;

	if (lfp_poll_open(NULL, &b->ps))
		return bench_fail("lfp_poll_open");
	for (i = 0; i < b->n; i++) {
		if (lfp_cq_open(&a, &b->cq[i], (void *)(uintptr_t)(i + 1)) ||
		    lfp_poll_add(b->ps, &b->cq[i]->fid, 0))
			return bench_fail("lfp_cq_open/lfp_poll_add %d", i);
	}
	return 0;
}

static void lfp_teardown(void *arg)
{
	struct lfp_poll_bench *b = arg;
	int i;

	for (i = 0; i < b->n; i++) {
		lfp_poll_del(b->ps, &b->cq[i]->fid, 0);
		lfp_cq_close(b->cq[i]);
	}
	lfp_poll_close(b->ps);
}

static int lfp_run(void *arg, struct bench_round *r)
{
	struct lfp_poll_bench *b = arg;
	struct lfp_cq_entry e = { 0 };
	void *ctx[8];
	uint64_t n = 0, t0 = bench_now_ns();
	int k, which, got;

	do {
		for (k = 0; k < 256; k++, n++) {
			which = b->n / 2; /* one member: lfp_poll's cost, not the CQs' cache footprint */
			e.op_context = (void *)(uintptr_t)n;
			if (lfp_cq_write(b->cq[which], &e, 1) != 1)
				return bench_fail("cq write");
			got = lfp_poll(b->ps, ctx, 8);
			if (got != 1 || ctx[0] != (void *)(uintptr_t)(which + 1))
				return bench_fail("lfp_poll reported %d, not member %d", got, which);
			if (lfp_cq_read(b->cq[which], &e, 1) != 1 ||
			    e.op_context != (void *)(uintptr_t)n)
				return bench_fail("cq read");
		}
	} while (!bench_round_over(r, n, t0));
	r->items = n;
	r->ns = bench_now_ns() - t0;
	return 0;
}

struct pfd_bench {
	struct lfp_pollfds set;
	uint64_t words[4];
};

static int pfd_run(void *arg, struct bench_round *r)
{
	struct pfd_bench *b = arg;
	struct lfp_wait_pollfd w;
	uint64_t n = 0, t0 = bench_now_ns(), last = 0;
	int k;

	do {
		for (k = 0; k < 256; k++, n++) {
			w.nfds = 0;
			w.fd = NULL;
			if (lfp_pollfds_get(&b->set, &w) != -LFP_ETOOSMALL || w.nfds != 16)
				return bench_fail("pollfds get");
			last += w.change_index;
		}
	} while (!bench_round_over(r, n, t0));
	r->items = n;
	r->ns = bench_now_ns() - t0;
	return last == 0 ? bench_fail("change_index") : 0;
}

static int loads_run(void *arg, struct bench_round *r)
{
	struct pfd_bench *b = arg;
	uint64_t n = 0, t0 = bench_now_ns(), sum = 0;
	int k;

	do {
		for (k = 0; k < 256; k++, n++) {
			sum += __atomic_load_n(&b->words[0], __ATOMIC_ACQUIRE);
			sum += __atomic_load_n(&b->words[1], __ATOMIC_RELAXED);
			sum += __atomic_load_n(&b->words[2], __ATOMIC_RELAXED);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			sum += __atomic_load_n(&b->words[3], __ATOMIC_RELAXED);
			__asm__ __volatile__("" ::: "memory");
		}
	} while (!bench_round_over(r, n, t0));
	r->items = n + (sum & 0);
	r->ns = bench_now_ns() - t0;
	return 0;
}

/* The lfpoll implementation over b (its members set up around the rounds). */
static struct bench_impl lfp_impl(const char *name, struct lfp_poll_bench *b)
{
	return (struct bench_impl){ .name = name, .run = lfp_run, .arg = b,
	                            .setup = lfp_setup,
	                            .teardown = lfp_teardown };
}

/* A one-thread case of two implementations. */
static int run_case(const char *name, const char *label,
                    const struct bench_impl impls[2],
                    const struct bench_target *t, uint64_t instr_items)
{
	const struct bench_case c = {
		.name = name, .label = label, .threads = 1,
		.impls = impls, .n_impls = 2,
		.targets = t, .n_targets = t ? 1 : 0,
		.instr_items = instr_items,
	};

	return bench_case_run(&c);
}

/* poll/members-N, the i-th size: lfpoll with N members against libfabric's
 * scan of N. */
/* Items of a members case under --instr: fewer as the scan the libfabric
 * column measures grows (callgrind runs it ~50x slower). */
#define MEMBERS_INSTR_ITEMS(n) (100000u / (1u + (unsigned)(n) / 16u))

static void run_members(int i)
{
	static const int sizes[4] = { 1, 16, 256, MAXN };
	static struct lfp_poll_bench lb[4];
	static char names[4][32];
	struct bench_impl impls[2];
	int n = sizes[i];

	lb[i].n = n;
	impls[0] = lfp_impl("lfpoll", &lb[i]);
	impls[1] = (struct bench_impl){ .name = "fi_udp_scan" };
#ifdef HAVE_FABRIC
	{
		static struct fab_pollset fb[4];
		static char why[4][64];
		int fr;

		fb[i].n = n;
		fr = fab_pollset_open(&fb[i]);
		if (fr) {
			snprintf(why[i], sizeof(why[i]),
			         "libfabric udp poll set: step %d failed", -fr);
			impls[1].skip = why[i];
		}
		impls[1].run = fab_pollset_run;
		impls[1].arg = &fb[i];
		impls[1].teardown = fab_pollset_close;
	}
#else
	impls[1].skip = FAB_MISSING;
#endif
	snprintf(names[i], sizeof(names[i]), "poll/members-%d", n);
	run_case(names[i], "lfpoll: write 1 completion to 1 of N CQs + lfp_poll + "
	         "read; libfabric: fi_poll over N empty CQs (its scan)",
	         impls, NULL, MEMBERS_INSTR_ITEMS(n));
}

int main(int argc, char **argv)
{
	static struct lfp_poll_bench one = { .n = 1 }, big = { .n = MAXN };
	static const struct bench_target t_scale = {
		"lfpoll_1", 0.5, NULL, NULL
	};
	static struct pfd_bench pb;
	struct bench_impl impls[2];
	int i;

	bench_init("poll", argc, argv);
	for (i = 0; i < 4; i++)
		run_members(i);

	impls[0] = lfp_impl("lfpoll_1024", &big);
	impls[1] = lfp_impl("lfpoll_1", &one);
	run_case("poll/scale", "lfpoll with 1,024 members against 1 member, one "
	         "ready (target: at most 2x, ratio >= 0.5)", impls, &t_scale, 0);

	if (lfp_pollfds_init(&pb.set))
		return 1;
	for (i = 0; i < 16; i++)
		lfp_pollfds_add(&pb.set, 100 + i, POLLIN, NULL);
	impls[0] = (struct bench_impl){ .name = "lfpoll", .run = pfd_run, .arg = &pb };
	impls[1] = (struct bench_impl){ .name = "4_loads", .run = loads_run,
	                                .arg = &pb };
	run_case("poll/pollfds-0", "lfp_pollfds_get with nfds = 0 (the change "
	         "check) against four atomic loads and an acquire fence", impls,
	         NULL, 100000);
	lfp_pollfds_fini(&pb.set);
	return bench_finish();
}
