/*
 * Bad input across every public call family: a table per family, each row
 * a name, the documented negative errno the call must return and its
 * arguments (designated initialisers); one loop runs each table. After
 * the rows, checks that nothing queued was lost or added (EQ events, CQ
 * completions, ring entries) and that the pollfd, wait and poll sets are
 * unchanged.
 *
 * Two resource tests: eventfd exhaustion under a lowered RLIMIT_NOFILE
 * (-EMFILE, nothing leaked, an older EQ still works) and an fd-leak count
 * around many opens and closes of FD objects and sets.
 */
#include <lfpoll/lfpoll.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

/* ------------------------------------------------------------ fixture */

static struct lfp_ring *g_ring;        /* capacity 4, slot 16, 3 entries */
static unsigned char g_ringmem[4096] __attribute__((aligned(64)));
static struct lfp_eq *g_eq;            /* NONE, 3 events queued */
static struct lfp_eq *g_eq_fd;         /* FD, empty */
static struct lfp_eq *g_eq_yield;      /* YIELD */
static struct lfp_eq *g_eq_over;       /* size 2, overrun */
static struct lfp_eq *g_eq_spsc;       /* g_eq's twin, SP/SC mode */
static struct lfp_eq *g_eq_spsc_over;  /* g_eq_over's twin, SP/SC mode */
static struct lfp_eq *g_eq_member;     /* member of g_ws (SET) */
static struct lfp_cq *g_cq;            /* NONE, 3 completions queued */
static struct lfp_cq *g_cq_member;     /* member of g_ws (SET) */
static struct lfp_cq *g_poll_cq;       /* member of g_ps */
static struct lfp_cntr *g_cntr;        /* NONE */
static struct lfp_cntr *g_cntr_member; /* member of g_ws (SET) */
static struct lfp_cntr *g_poll_cntr;   /* member of g_ps */
static struct lfp_wait *g_ws;          /* FD set: members + external fd */
static struct lfp_wait *g_ws_pollfd;   /* POLLFD set with an external fd */
static struct lfp_wait *g_ws_mc;       /* MUTEX_COND set */
static struct lfp_poll *g_ps;          /* members g_poll_cq, g_poll_cntr */
static struct lfp_poll *g_ps2;         /* empty */
static struct lfp_pollfds g_pfds;      /* g_pipe[0], g_pipe[1] */
static int g_pipe[2] = { -1, -1 };
static int g_pipe2[2] = { -1, -1 };

static const uint64_t ev_payload[3] = { 0x1111111111111111ULL,
                                        0x2222222222222222ULL,
                                        0x3333333333333333ULL };

static void fixture_up(void)
{
	struct lfp_eq_attr ea;
	struct lfp_cq_attr ca;
	struct lfp_cntr_attr na;
	struct lfp_wait_attr wa;
	struct lfp_cq_entry ce[3];
	unsigned char rb[16];
	int i;

	cr_assert_eq(pipe(g_pipe), 0);
	cr_assert_eq(pipe(g_pipe2), 0);

	cr_assert_eq(lfp_ring_create(4, 16, &g_ring), 0);
	for (i = 0; i < 3; i++) {
		memset(rb, 'a' + i, sizeof(rb));
		cr_assert_eq(lfp_ring_enqueue(g_ring, rb, 10 + (size_t)i), 0);
	}

	cr_assert_eq(lfp_eq_open(NULL, &g_eq, NULL), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(lfp_eq_write(g_eq, LFP_EVENT_USER + (uint32_t)i,
		                          &ev_payload[i], sizeof(ev_payload[i]), 0),
		             (ssize_t)sizeof(ev_payload[i]));

	memset(&ea, 0, sizeof(ea));
	ea.flags = LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_spsc, NULL), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(lfp_eq_write_spsc(g_eq_spsc, LFP_EVENT_USER + (uint32_t)i,
		                               &ev_payload[i], sizeof(ev_payload[i]), 0),
		             (ssize_t)sizeof(ev_payload[i]));
	ea.size = 2;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_spsc_over, NULL), 0);
	cr_assert_eq(lfp_eq_write_spsc(g_eq_spsc_over, 1, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write_spsc(g_eq_spsc_over, 2, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write_spsc(g_eq_spsc_over, 3, NULL, 0, 0), -LFP_EOVERRUN);

	memset(&ea, 0, sizeof(ea));
	ea.wait_obj = LFP_WAIT_FD;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_fd, NULL), 0);
	ea.wait_obj = LFP_WAIT_YIELD;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_yield, NULL), 0);
	ea.wait_obj = LFP_WAIT_NONE;
	ea.size = 2;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_over, NULL), 0);
	cr_assert_eq(lfp_eq_write(g_eq_over, 1, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(g_eq_over, 2, NULL, 0, 0), 0);
	cr_assert_eq(lfp_eq_write(g_eq_over, 3, NULL, 0, 0), -LFP_EOVERRUN);

	memset(&wa, 0, sizeof(wa));
	wa.wait_obj = LFP_WAIT_FD;
	cr_assert_eq(lfp_wait_open(&wa, &g_ws), 0);
	wa.wait_obj = LFP_WAIT_POLLFD;
	cr_assert_eq(lfp_wait_open(&wa, &g_ws_pollfd), 0);
	wa.wait_obj = LFP_WAIT_MUTEX_COND;
	cr_assert_eq(lfp_wait_open(&wa, &g_ws_mc), 0);
	cr_assert_eq(lfp_wait_add_fd(g_ws, g_pipe[0], POLLIN, NULL), 0);
	cr_assert_eq(lfp_wait_add_fd(g_ws_pollfd, g_pipe[0], POLLIN, NULL), 0);

	memset(&ea, 0, sizeof(ea));
	ea.wait_obj = LFP_WAIT_SET;
	ea.wait_set = g_ws;
	cr_assert_eq(lfp_eq_open(&ea, &g_eq_member, NULL), 0);

	memset(&ca, 0, sizeof(ca));
	cr_assert_eq(lfp_cq_open(&ca, &g_cq, NULL), 0);
	for (i = 0; i < 3; i++)
		ce[i].op_context = (void *)(uintptr_t)(0x100 + i);
	cr_assert_eq(lfp_cq_write(g_cq, ce, 3), 3);
	cr_assert_eq(lfp_cq_open(&ca, &g_poll_cq, NULL), 0);
	ca.wait_obj = LFP_WAIT_SET;
	ca.wait_set = g_ws;
	cr_assert_eq(lfp_cq_open(&ca, &g_cq_member, NULL), 0);

	memset(&na, 0, sizeof(na));
	cr_assert_eq(lfp_cntr_open(&na, &g_cntr, NULL), 0);
	cr_assert_eq(lfp_cntr_open(&na, &g_poll_cntr, NULL), 0);
	na.wait_obj = LFP_WAIT_SET;
	na.wait_set = g_ws;
	cr_assert_eq(lfp_cntr_open(&na, &g_cntr_member, NULL), 0);

	cr_assert_eq(lfp_poll_open(NULL, &g_ps), 0);
	cr_assert_eq(lfp_poll_open(NULL, &g_ps2), 0);
	cr_assert_eq(lfp_poll_add(g_ps, &g_poll_cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_add(g_ps, &g_poll_cntr->fid, 0), 0);

	cr_assert_eq(lfp_pollfds_init(&g_pfds), 0);
	cr_assert_eq(lfp_pollfds_add(&g_pfds, g_pipe[0], POLLIN, NULL), 0);
	cr_assert_eq(lfp_pollfds_add(&g_pfds, g_pipe[1], POLLOUT, NULL), 0);
}

static void fixture_down(void)
{
	cr_assert_eq(lfp_poll_del(g_ps, &g_poll_cq->fid, 0), 0);
	cr_assert_eq(lfp_poll_del(g_ps, &g_poll_cntr->fid, 0), 0);
	cr_assert_eq(lfp_poll_close(g_ps), 0);
	cr_assert_eq(lfp_poll_close(g_ps2), 0);
	cr_assert_eq(lfp_cntr_close(g_cntr_member), 0);
	cr_assert_eq(lfp_cntr_close(g_poll_cntr), 0);
	cr_assert_eq(lfp_cntr_close(g_cntr), 0);
	cr_assert_eq(lfp_cq_close(g_cq_member), 0);
	cr_assert_eq(lfp_cq_close(g_poll_cq), 0);
	cr_assert_eq(lfp_cq_close(g_cq), 0);
	cr_assert_eq(lfp_eq_close(g_eq_member), 0);
	cr_assert_eq(lfp_wait_del_fd(g_ws, g_pipe[0]), 0);
	cr_assert_eq(lfp_wait_del_fd(g_ws_pollfd, g_pipe[0]), 0);
	cr_assert_eq(lfp_wait_close(g_ws), 0);
	cr_assert_eq(lfp_wait_close(g_ws_pollfd), 0);
	cr_assert_eq(lfp_wait_close(g_ws_mc), 0);
	cr_assert_eq(lfp_eq_close(g_eq_over), 0);
	cr_assert_eq(lfp_eq_close(g_eq_spsc_over), 0);
	cr_assert_eq(lfp_eq_close(g_eq_spsc), 0);
	cr_assert_eq(lfp_eq_close(g_eq_yield), 0);
	cr_assert_eq(lfp_eq_close(g_eq_fd), 0);
	cr_assert_eq(lfp_eq_close(g_eq), 0);
	lfp_ring_destroy(g_ring);
	lfp_pollfds_fini(&g_pfds);
	close(g_pipe[0]);
	close(g_pipe[1]);
	close(g_pipe2[0]);
	close(g_pipe2[1]);
}

/* A closed fd number: open a pipe and close it again. */
static int closed_fd(void)
{
	int p[2];

	if (pipe(p))
		return 1 << 20;
	close(p[0]);
	close(p[1]);
	return p[0];
}

/* The poll set, passed where a wait set is expected. */
static struct lfp_wait *not_a_wait_set(void)
{
	return (struct lfp_wait *)(void *)g_ps;
}

/* ------------------------------------------------------------ row checks */

#define NROWS(t) (sizeof(t) / sizeof((t)[0]))
#define FOR_ROWS(p, t) for ((p) = (t); (p) < (t) + NROWS(t); (p)++)

static int g_pass;       /* which run over the tables, for the messages */
static int g_rows;       /* rows run in this test */
static int g_mismatches; /* rows whose result was not the expected one */

/* One row's verdict; the message names the row and the run over the tables. */
static void expect_row(const char *name, ssize_t got, int want)
{
	g_rows++;
	if (got != want)
		g_mismatches++;
	cr_expect_eq(got, (ssize_t)want, "pass %d row %s: got %zd (%s), expected %d (%s)",
	             g_pass, name, got, got < 0 ? lfp_strerror((int)got) : "success",
	             want, lfp_strerror(want));
}

/*
 * One table per call family: one call, calls of one signature (the row
 * names its call), or a read and its blocking form (the row says which).
 * Each row holds the call's arguments and the expected return. The tables
 * live in functions because their arguments are the fixture's objects and
 * local buffers; each run rebuilds them, so every row starts from the same
 * arguments. A row wrongly let through by an open or create call closes
 * what it got, so that the fixture stays as it was.
 */

/* ------------------------------------------------------------ ring rows */

static void ring_init_rows(void)
{
	struct lfp_ring r;
	struct ring_init_row {
		const char *name;
		int want;
		struct lfp_ring *ring;
		void *mem;
		size_t cap, slot;
	} rows[] = {
		{ "ring_init_null_ring", -EINVAL, .ring = NULL, .mem = g_ringmem, .cap = 4,
		  .slot = 8 },
		{ "ring_init_null_mem", -EINVAL, .ring = &r, .mem = NULL, .cap = 4, .slot = 8 },
		{ "ring_init_cap0", -EINVAL, .ring = &r, .mem = g_ringmem, .cap = 0, .slot = 8 },
		{ "ring_init_cap1", -EINVAL, .ring = &r, .mem = g_ringmem, .cap = 1, .slot = 8 },
		{ "ring_init_cap3", -EINVAL, .ring = &r, .mem = g_ringmem, .cap = 3, .slot = 8 },
		{ "ring_init_slot0", -EINVAL, .ring = &r, .mem = g_ringmem, .cap = 4, .slot = 0 },
		{ "ring_init_misaligned", -EINVAL, .ring = &r, .mem = g_ringmem + 4, .cap = 4,
		  .slot = 8 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_ring_init(p->ring, p->mem, p->cap, p->slot), p->want);
}

static void ring_create_rows(void)
{
	struct lfp_ring *made = NULL;
	struct ring_create_row {
		const char *name;
		int want;
		size_t cap, slot;
		struct lfp_ring **rp;
	} rows[] = {
		{ "ring_create_null_rp", -EINVAL, .cap = 4, .slot = 8, .rp = NULL },
		{ "ring_create_cap_over_max", -EINVAL, .cap = LFP_RING_MAX_CAPACITY * 2, .slot = 8,
		  .rp = &made },
		{ "ring_create_slot_over_int32", -EINVAL, .cap = 2, .slot = (size_t)INT32_MAX + 1,
		  .rp = &made },
	}, *p;
	int ret;

	FOR_ROWS(p, rows) {
		ret = lfp_ring_create(p->cap, p->slot, p->rp);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && p->rp)
			lfp_ring_destroy(*p->rp);
	}
}

static void ring_enqueue_rows(void)
{
	unsigned char big[17] = { 0 };
	struct ring_enqueue_row {
		const char *name;
		int want;
		struct lfp_ring *ring;
		const void *src;
		size_t len;
	} rows[] = {
		{ "ring_enqueue_null_ring", -EINVAL, .ring = NULL, .src = "x", .len = 1 },
		{ "ring_enqueue_null_src", -EINVAL, .ring = g_ring, .src = NULL, .len = 4 },
		{ "ring_enqueue_oversize", -EMSGSIZE, .ring = g_ring, .src = big,
		  .len = sizeof(big) },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_ring_enqueue(p->ring, p->src, p->len), p->want);
}

/* lfp_ring_dequeue, and lfp_ring_peek where the row says peek. */
static void ring_read_rows(void)
{
	unsigned char b[16], small[4];
	uint64_t t;
	struct ring_read_row {
		const char *name;
		int want;
		bool peek;
		struct lfp_ring *ring;
		void *dst;
		size_t cap;
		uint64_t *ticket; /* lfp_ring_peek only */
	} rows[] = {
		{ "ring_dequeue_null_ring", -EINVAL, .ring = NULL, .dst = b, .cap = sizeof(b) },
		{ "ring_dequeue_null_dst", -EINVAL, .ring = g_ring, .dst = NULL, .cap = 16 },
		{ "ring_dequeue_short", -LFP_ETOOSMALL, .ring = g_ring, .dst = small,
		  .cap = sizeof(small) },
		{ "ring_peek_null_ticket", -EINVAL, .peek = true, .ring = g_ring, .dst = b,
		  .cap = sizeof(b), .ticket = NULL },
		{ "ring_peek_null_dst", -EINVAL, .peek = true, .ring = g_ring, .dst = NULL, .cap = 16,
		  .ticket = &t },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, p->peek ? lfp_ring_peek(p->ring, p->dst, p->cap, p->ticket)
		                            : lfp_ring_dequeue(p->ring, p->dst, p->cap),
		           p->want);
}

static void ring_consume_rows(void)
{
	struct ring_consume_row {
		const char *name;
		int want;
		struct lfp_ring *ring;
		uint64_t ticket;
	} rows[] = {
		{ "ring_consume_null", -EINVAL, .ring = NULL, .ticket = 0 },
		/* a ticket far ahead of the head: not the head entry */
		{ "ring_consume_stale", -ESTALE, .ring = g_ring, .ticket = 1000 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_ring_consume(p->ring, p->ticket), p->want);
}

/* ------------------------------------------------------------ EQ rows */

/*
 * The SP/SC calls (lfp_eq_write_spsc, lfp_eq_read_spsc) answer every row as
 * the plain calls do: on the row's own EQ (another mode) and on its SP/SC
 * twin.  Pass 0 is the plain call, 1 the SP/SC call on the row's EQ, 2 on
 * the twin.  A row's length is a run-time value, so these are the calls'
 * argument checks and out-of-line paths; their inline paths are
 * test_modes' (eq_rules) and fuzz_eq's, with constant lengths.
 */
#define EQ_CALL_PASSES 3

static struct lfp_eq *spsc_twin(struct lfp_eq *eq)
{
	return eq == g_eq ? g_eq_spsc : eq == g_eq_over ? g_eq_spsc_over : eq;
}

static const char *eq_call_name(int pass)
{
	return pass == 0 ? "" : pass == 1 ? " (spsc call)" : " (spsc call, SP/SC EQ)";
}

static void eq_open_rows(void)
{
	struct eq_open_row {
		const char *name;
		int want;
		struct lfp_eq_attr attr;
		bool null_args; /* lfp_eq_open(NULL, NULL, NULL) */
	} rows[] = {
		{ "eq_open_null_result", -EINVAL, .null_args = true },
		{ "eq_open_wait99", -EINVAL, .attr = { .wait_obj = (enum lfp_wait_obj)99 } },
		{ "eq_open_pollfd", -EINVAL, .attr = { .wait_obj = LFP_WAIT_POLLFD } },
		{ "eq_open_flags", -EINVAL, .attr = { .flags = LFP_PEEK } },
		{ "eq_open_set_without_set", -EINVAL, .attr = { .wait_obj = LFP_WAIT_SET } },
		{ "eq_open_set_with_fd", -EINVAL,
		  .attr = { .wait_obj = LFP_WAIT_FD, .wait_set = g_ws } },
		{ "eq_open_set_not_a_wait_set", -EINVAL,
		  .attr = { .wait_obj = LFP_WAIT_SET, .wait_set = not_a_wait_set() } },
		{ "eq_open_size_too_big", -EINVAL, .attr = { .size = LFP_RING_MAX_CAPACITY + 1 } },
		{ "eq_open_entry_too_big", -EINVAL, .attr = { .entry_size = (size_t)INT32_MAX } },
	}, *p;
	struct lfp_eq *eq;
	int ret;

	FOR_ROWS(p, rows) {
		eq = NULL;
		if (p->null_args)
			ret = lfp_eq_open(NULL, NULL, NULL);
		else
			ret = lfp_eq_open(&p->attr, &eq, NULL);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && eq)
			lfp_eq_close(eq);
	}
}

/* lfp_eq_read, and lfp_eq_sread where the row says sread. */
static void eq_read_rows(void)
{
	uint32_t ev, small;
	uint64_t b;
	struct eq_read_row {
		const char *name;
		int want;
		bool sread;
		struct lfp_eq *eq;
		uint32_t *event;
		void *buf;
		size_t len;
		int timeout; /* lfp_eq_sread only */
		uint64_t flags;
	} rows[] = {
		{ "eq_read_null_eq", -EINVAL, .eq = NULL, .event = &ev, .buf = &b,
		  .len = sizeof(b) },
		{ "eq_read_null_event", -EINVAL, .eq = g_eq, .event = NULL, .buf = &b,
		  .len = sizeof(b) },
		{ "eq_read_null_buf", -EINVAL, .eq = g_eq, .event = &ev, .buf = NULL, .len = 8 },
		{ "eq_read_bad_flags", -EINVAL, .eq = g_eq, .event = &ev, .buf = &b,
		  .len = sizeof(b), .flags = 1 },
		{ "eq_read_peek_plus_write", -EINVAL, .eq = g_eq, .event = &ev, .buf = &b,
		  .len = sizeof(b), .flags = LFP_PEEK | LFP_WRITE },
		{ "eq_read_short", -LFP_ETOOSMALL, .eq = g_eq, .event = &ev, .buf = &small,
		  .len = sizeof(small) },
		{ "eq_read_peek_short", -LFP_ETOOSMALL, .eq = g_eq, .event = &ev, .buf = &small,
		  .len = sizeof(small), .flags = LFP_PEEK },
		{ "eq_sread_none", -ENOSYS, .sread = true, .eq = g_eq, .event = &ev, .buf = &b,
		  .len = sizeof(b), .timeout = 0 },
		{ "eq_sread_set_member", -ENOSYS, .sread = true, .eq = g_eq_member, .event = &ev,
		  .buf = &b, .len = sizeof(b), .timeout = 0 },
		{ "eq_sread_null_eq", -EINVAL, .sread = true, .eq = NULL, .event = &ev, .buf = &b,
		  .len = sizeof(b), .timeout = 0 },
		{ "eq_sread_fd_null_event", -EINVAL, .sread = true, .eq = g_eq_fd, .event = NULL,
		  .buf = &b, .len = sizeof(b), .timeout = 0 },
		{ "eq_sread_fd_bad_flags", -EINVAL, .sread = true, .eq = g_eq_fd, .event = &ev,
		  .buf = &b, .len = sizeof(b), .timeout = 0, .flags = 1 },
	}, *p;
	ssize_t ret;

	char name[96];
	int k;

	FOR_ROWS(p, rows) {
		if (p->sread) {
			ret = lfp_eq_sread(p->eq, p->event, p->buf, p->len, p->timeout, p->flags);
			expect_row(p->name, ret, p->want);
			continue;
		}
		for (k = 0; k < EQ_CALL_PASSES; k++) {
			snprintf(name, sizeof(name), "%s%s", p->name, eq_call_name(k));
			if (k == 0)
				ret = lfp_eq_read(p->eq, p->event, p->buf, p->len, p->flags);
			else
				ret = lfp_eq_read_spsc(k == 1 ? p->eq : spsc_twin(p->eq),
				                       p->event, p->buf, p->len, p->flags);
			expect_row(name, ret, p->want);
		}
	}
}

static void eq_readerr_rows(void)
{
	struct eq_readerr_row {
		const char *name;
		int want;
		struct lfp_eq *eq;
		struct lfp_eq_err_entry entry;
		bool null_buf; /* NULL instead of &entry */
		uint64_t flags;
	} rows[] = {
		{ "eq_readerr_null_buf", -EINVAL, .eq = g_eq, .null_buf = true },
		{ "eq_readerr_null_eq", -EINVAL, .eq = NULL, .entry = { .err = 0 } },
		{ "eq_readerr_bad_flags", -EINVAL, .eq = g_eq, .entry = { .err = 0 },
		  .flags = LFP_WRITE },
		{ "eq_readerr_size_null_data", -EINVAL, .eq = g_eq,
		  .entry = { .err_data_size = 8 } },
		{ "eq_readerr_none_queued", -EAGAIN, .eq = g_eq, .entry = { .err = 0 } },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_eq_readerr(p->eq, p->null_buf ? NULL : &p->entry, p->flags),
		           p->want);
}

static void eq_write_rows(void)
{
	unsigned char big[LFP_EQ_DEFAULT_ENTRY_SIZE + 1] = { 0 };
	uint64_t b = 0;
	struct eq_write_row {
		const char *name;
		int want;
		struct lfp_eq *eq;
		uint32_t event;
		const void *buf;
		size_t len;
		uint64_t flags;
	} rows[] = {
		{ "eq_write_null_eq", -EINVAL, .eq = NULL, .event = 1, .buf = NULL, .len = 0 },
		{ "eq_write_null_buf", -EINVAL, .eq = g_eq, .event = 1, .buf = NULL, .len = 8 },
		{ "eq_write_flags", -EINVAL, .eq = g_eq, .event = 1, .buf = &b, .len = sizeof(b),
		  .flags = LFP_PEEK },
		{ "eq_write_oversize", -EMSGSIZE, .eq = g_eq, .event = 1, .buf = big,
		  .len = sizeof(big) },
		{ "eq_overrun_write", -LFP_EOVERRUN, .eq = g_eq_over, .event = 9, .buf = NULL,
		  .len = 0 },
	}, *p;

	char name[96];
	ssize_t ret;
	int k;

	FOR_ROWS(p, rows)
		for (k = 0; k < EQ_CALL_PASSES; k++) {
			snprintf(name, sizeof(name), "%s%s", p->name, eq_call_name(k));
			if (k == 0)
				ret = lfp_eq_write(p->eq, p->event, p->buf, p->len, p->flags);
			else
				ret = lfp_eq_write_spsc(k == 1 ? p->eq : spsc_twin(p->eq),
				                        p->event, p->buf, p->len, p->flags);
			expect_row(name, ret, p->want);
		}
}

static void eq_write_err_rows(void)
{
	unsigned char big[LFP_EQ_DEFAULT_ENTRY_SIZE + 1] = { 0 };
	struct eq_write_err_row {
		const char *name;
		int want;
		struct lfp_eq *eq;
		struct lfp_eq_err_entry entry;
		bool null_err; /* NULL instead of &entry */
	} rows[] = {
		{ "eq_write_err_null_err", -EINVAL, .eq = g_eq, .null_err = true },
		{ "eq_write_err_null_eq", -EINVAL, .eq = NULL, .entry = { .err = EIO } },
		{ "eq_write_err_err0", -EINVAL, .eq = g_eq, .entry = { .err = 0 } },
		{ "eq_write_err_size_null_data", -EINVAL, .eq = g_eq,
		  .entry = { .err = EIO, .err_data_size = 4 } },
		{ "eq_write_err_oversize", -EMSGSIZE, .eq = g_eq,
		  .entry = { .err = EIO, .err_data = big, .err_data_size = sizeof(big) } },
		{ "eq_overrun_write_err", -LFP_EOVERRUN, .eq = g_eq_over, .entry = { .err = EIO } },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_eq_write_err(p->eq, p->null_err ? NULL : &p->entry),
		           p->want);
}

static void eq_close_rows(void)
{
	struct eq_close_row {
		const char *name;
		int want;
		struct lfp_eq *eq;
	} rows[] = {
		{ "eq_close_null", -EINVAL, .eq = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_eq_close(p->eq), p->want);
}

/* ------------------------------------------------------------ CQ rows */

static void cq_open_rows(void)
{
	struct cq_open_row {
		const char *name;
		int want;
		struct lfp_cq_attr attr;
		bool null_args; /* lfp_cq_open(NULL, NULL, NULL) */
	} rows[] = {
		{ "cq_open_null_result", -EINVAL, .null_args = true },
		{ "cq_open_bad_format", -EINVAL, .attr = { .format = (enum lfp_cq_format)99 } },
		{ "cq_open_bad_flags", -EINVAL, .attr = { .flags = LFP_WRITE } },
		{ "cq_open_wait99", -EINVAL, .attr = { .wait_obj = (enum lfp_wait_obj)99 } },
		{ "cq_open_pollfd", -EINVAL, .attr = { .wait_obj = LFP_WAIT_POLLFD } },
		{ "cq_open_set_without_set", -EINVAL, .attr = { .wait_obj = LFP_WAIT_SET } },
		{ "cq_open_set_not_a_wait_set", -EINVAL,
		  .attr = { .wait_obj = LFP_WAIT_SET, .wait_set = not_a_wait_set() } },
		{ "cq_open_size_too_big", -EINVAL, .attr = { .size = LFP_RING_MAX_CAPACITY + 1 } },
	}, *p;
	struct lfp_cq *cq;
	int ret;

	FOR_ROWS(p, rows) {
		cq = NULL;
		if (p->null_args)
			ret = lfp_cq_open(NULL, NULL, NULL);
		else
			ret = lfp_cq_open(&p->attr, &cq, NULL);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && cq)
			lfp_cq_close(cq);
	}
}

static void cq_write_rows(void)
{
	struct lfp_cq_entry e = { NULL };
	struct cq_write_row {
		const char *name;
		int want;
		struct lfp_cq *cq;
		const void *entries;
		size_t count;
	} rows[] = {
		{ "cq_write_count0", -EINVAL, .cq = g_cq, .entries = &e, .count = 0 },
		{ "cq_write_null_entries", -EINVAL, .cq = g_cq, .entries = NULL, .count = 1 },
		{ "cq_write_null_cq", -EINVAL, .cq = NULL, .entries = &e, .count = 1 },
	}, *p;

	FOR_ROWS(p, rows) {
		expect_row(p->name, lfp_cq_write(p->cq, p->entries, p->count), p->want);
		/* The SP/SC call answers as the plain one, on any CQ. */
		expect_row(p->name, lfp_cq_write_spsc(p->cq, p->entries, p->count),
		           p->want);
	}
}

static void cq_writeerr_rows(void)
{
	unsigned char big[LFP_CQ_ERR_DATA_MAX + 1] = { 0 };
	struct cq_writeerr_row {
		const char *name;
		int want;
		struct lfp_cq *cq;
		struct lfp_cq_err_entry entry;
		bool null_err; /* NULL instead of &entry */
	} rows[] = {
		{ "cq_writeerr_err0", -EINVAL, .cq = g_cq, .entry = { .err = 0 } },
		{ "cq_writeerr_null", -EINVAL, .cq = g_cq, .null_err = true },
		{ "cq_writeerr_size_null_data", -EINVAL, .cq = g_cq,
		  .entry = { .err = EIO, .err_data_size = 4 } },
		{ "cq_writeerr_oversize", -EMSGSIZE, .cq = g_cq,
		  .entry = { .err = EIO, .err_data = big, .err_data_size = sizeof(big) } },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_cq_writeerr(p->cq, p->null_err ? NULL : &p->entry),
		           p->want);
}

/* lfp_cq_read, and lfp_cq_sread where the row says sread. */
static void cq_read_rows(void)
{
	struct lfp_cq_entry e;
	struct cq_read_row {
		const char *name;
		int want;
		bool sread;
		struct lfp_cq *cq;
		void *buf;
		size_t count;
		const void *cond; /* cond and timeout: lfp_cq_sread only */
		int timeout;
	} rows[] = {
		{ "cq_read_null_buf", -EINVAL, .cq = g_cq, .buf = NULL, .count = 1 },
		{ "cq_read_null_cq", -EINVAL, .cq = NULL, .buf = &e, .count = 1 },
		{ "cq_sread_none", -ENOSYS, .sread = true, .cq = g_cq, .buf = &e, .count = 1,
		  .cond = NULL, .timeout = 0 },
		{ "cq_sread_set_member", -ENOSYS, .sread = true, .cq = g_cq_member, .buf = &e,
		  .count = 1, .cond = NULL, .timeout = 0 },
		{ "cq_sread_null_buf", -EINVAL, .sread = true, .cq = g_cq, .buf = NULL, .count = 1,
		  .cond = NULL, .timeout = 0 },
		{ "cq_sread_count0", -EINVAL, .sread = true, .cq = g_cq, .buf = &e, .count = 0,
		  .cond = NULL, .timeout = 0 },
	}, *p;
	ssize_t ret;

	FOR_ROWS(p, rows) {
		if (p->sread)
			ret = lfp_cq_sread(p->cq, p->buf, p->count, p->cond, p->timeout);
		else
			ret = lfp_cq_read(p->cq, p->buf, p->count);
		expect_row(p->name, ret, p->want);
		if (!p->sread) /* the SP/SC call answers as the plain one */
			expect_row(p->name, lfp_cq_read_spsc(p->cq, p->buf, p->count),
			           p->want);
	}
}

static void cq_readerr_rows(void)
{
	struct cq_readerr_row {
		const char *name;
		int want;
		struct lfp_cq *cq;
		struct lfp_cq_err_entry entry;
		bool null_buf; /* NULL instead of &entry */
		uint64_t flags;
	} rows[] = {
		{ "cq_readerr_null", -EINVAL, .cq = g_cq, .null_buf = true },
		{ "cq_readerr_bad_flags", -EINVAL, .cq = g_cq, .entry = { .err = 0 },
		  .flags = LFP_WRITE },
		{ "cq_readerr_size_null_data", -EINVAL, .cq = g_cq,
		  .entry = { .err_data_size = 8 } },
		{ "cq_readerr_none_queued", -EAGAIN, .cq = g_cq, .entry = { .err = 0 } },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_cq_readerr(p->cq, p->null_buf ? NULL : &p->entry, p->flags),
		           p->want);
}

/* lfp_cq_close and lfp_cq_signal: the CQ alone. */
static void cq_handle_rows(void)
{
	struct cq_handle_row {
		const char *name;
		int want;
		int (*call)(struct lfp_cq *cq);
		struct lfp_cq *cq;
	} rows[] = {
		{ "cq_close_null", -EINVAL, .call = lfp_cq_close, .cq = NULL },
		{ "cq_close_in_poll_set", -EBUSY, .call = lfp_cq_close, .cq = g_poll_cq },
		{ "cq_signal_null", -EINVAL, .call = lfp_cq_signal, .cq = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, p->call(p->cq), p->want);
}

/* ------------------------------------------------------------ counter rows */

static void cntr_open_rows(void)
{
	struct cntr_open_row {
		const char *name;
		int want;
		struct lfp_cntr_attr attr;
		bool null_args; /* lfp_cntr_open(NULL, NULL, NULL) */
	} rows[] = {
		{ "cntr_open_null_result", -EINVAL, .null_args = true },
		{ "cntr_open_flags", -EINVAL, .attr = { .flags = 1 } },
		{ "cntr_open_wait99", -EINVAL, .attr = { .wait_obj = (enum lfp_wait_obj)99 } },
		{ "cntr_open_set_without_set", -EINVAL, .attr = { .wait_obj = LFP_WAIT_SET } },
		{ "cntr_open_set_not_a_wait_set", -EINVAL,
		  .attr = { .wait_obj = LFP_WAIT_SET, .wait_set = not_a_wait_set() } },
	}, *p;
	struct lfp_cntr *c;
	int ret;

	FOR_ROWS(p, rows) {
		c = NULL;
		if (p->null_args)
			ret = lfp_cntr_open(NULL, NULL, NULL);
		else
			ret = lfp_cntr_open(&p->attr, &c, NULL);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && c)
			lfp_cntr_close(c);
	}
}

/* The calls that change a counter's value or error count. */
static void cntr_value_rows(void)
{
	struct cntr_value_row {
		const char *name;
		int want;
		int (*call)(struct lfp_cntr *c, uint64_t v);
		struct lfp_cntr *c;
		uint64_t v;
	} rows[] = {
		{ "cntr_add_null", -EINVAL, .call = lfp_cntr_add, .c = NULL, .v = 1 },
		{ "cntr_adderr_null", -EINVAL, .call = lfp_cntr_adderr, .c = NULL, .v = 1 },
		{ "cntr_set_null", -EINVAL, .call = lfp_cntr_set, .c = NULL, .v = 1 },
		{ "cntr_seterr_null", -EINVAL, .call = lfp_cntr_seterr, .c = NULL, .v = 1 },
		{ "cntr_inc_null", -EINVAL, .call = lfp_cntr_inc, .c = NULL, .v = 1 },
		{ "cntr_incerr_null", -EINVAL, .call = lfp_cntr_incerr, .c = NULL, .v = 1 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, p->call(p->c, p->v), p->want);
}

static void cntr_wait_rows(void)
{
	struct cntr_wait_row {
		const char *name;
		int want;
		struct lfp_cntr *c;
		uint64_t threshold;
		int timeout;
	} rows[] = {
		{ "cntr_wait_none", -ENOSYS, .c = g_cntr, .threshold = 1, .timeout = 0 },
		{ "cntr_wait_set_member", -ENOSYS, .c = g_cntr_member, .threshold = 1,
		  .timeout = 0 },
		{ "cntr_wait_null", -EINVAL, .c = NULL, .threshold = 1, .timeout = 0 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_cntr_wait(p->c, p->threshold, p->timeout), p->want);
}

static void cntr_close_rows(void)
{
	struct cntr_close_row {
		const char *name;
		int want;
		struct lfp_cntr *c;
	} rows[] = {
		{ "cntr_close_null", -EINVAL, .c = NULL },
		{ "cntr_close_in_poll_set", -EBUSY, .c = g_poll_cntr },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_cntr_close(p->c), p->want);
}

/* ------------------------------------------------------------ pollfds rows */

static void pfds_init_rows(void)
{
	struct pfds_init_row {
		const char *name;
		int want;
		struct lfp_pollfds *set;
	} rows[] = {
		{ "pfds_init_null", -EINVAL, .set = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_pollfds_init(p->set), p->want);
}

static void pfds_add_rows(void)
{
	struct pfds_add_row {
		const char *name;
		int want;
		struct lfp_pollfds *set;
		int fd;
		short events;
		void *context;
	} rows[] = {
		{ "pfds_add_null", -EINVAL, .set = NULL, .fd = 0, .events = POLLIN,
		  .context = NULL },
		{ "pfds_add_negative", -EINVAL, .set = &g_pfds, .fd = -1, .events = POLLIN,
		  .context = NULL },
		{ "pfds_add_dup", -EEXIST, .set = &g_pfds, .fd = g_pipe[0], .events = POLLOUT,
		  .context = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_pollfds_add(p->set, p->fd, p->events, p->context),
		           p->want);
}

static void pfds_mod_rows(void)
{
	struct pfds_mod_row {
		const char *name;
		int want;
		struct lfp_pollfds *set;
		int fd;
		short events;
	} rows[] = {
		{ "pfds_mod_absent", -ENOENT, .set = &g_pfds, .fd = g_pipe2[0], .events = POLLOUT },
		{ "pfds_mod_null", -EINVAL, .set = NULL, .fd = g_pipe[0], .events = POLLOUT },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_pollfds_mod(p->set, p->fd, p->events), p->want);
}

static void pfds_del_rows(void)
{
	struct pfds_del_row {
		const char *name;
		int want;
		struct lfp_pollfds *set;
		int fd;
	} rows[] = {
		{ "pfds_del_absent", -ENOENT, .set = &g_pfds, .fd = g_pipe2[0] },
		{ "pfds_del_negative", -ENOENT, .set = &g_pfds, .fd = -1 },
		{ "pfds_del_null", -EINVAL, .set = NULL, .fd = g_pipe[0] },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_pollfds_del(p->set, p->fd), p->want);
}

static void pfds_get_rows(void)
{
	struct pollfd one[1];
	struct pfds_get_row {
		const char *name;
		int want;
		struct lfp_pollfds *set;
		struct lfp_wait_pollfd out;
		bool null_out; /* NULL instead of &out */
	} rows[] = {
		{ "pfds_get_null_out", -EINVAL, .set = &g_pfds, .null_out = true },
		{ "pfds_get_null_set", -EINVAL, .set = NULL, .out = { .nfds = 0 } },
		{ "pfds_get_null_fd", -EINVAL, .set = &g_pfds, .out = { .nfds = 4, .fd = NULL } },
		{ "pfds_get_too_small", -LFP_ETOOSMALL, .set = &g_pfds,
		  .out = { .nfds = 1, .fd = one } },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_pollfds_get(p->set, p->null_out ? NULL : &p->out), p->want);
}

/* ------------------------------------------------------------ wait rows */

static void ws_open_rows(void)
{
	struct ws_open_row {
		const char *name;
		int want;
		struct lfp_wait_attr attr;
		bool null_args; /* lfp_wait_open(NULL, NULL) */
	} rows[] = {
		{ "ws_open_null_result", -EINVAL, .null_args = true },
		{ "ws_open_none", -EINVAL, .attr = { .wait_obj = LFP_WAIT_NONE, .flags = 0 } },
		{ "ws_open_set", -EINVAL, .attr = { .wait_obj = LFP_WAIT_SET, .flags = 0 } },
		{ "ws_open_obj99", -EINVAL,
		  .attr = { .wait_obj = (enum lfp_wait_obj)99, .flags = 0 } },
		{ "ws_open_flags", -EINVAL, .attr = { .wait_obj = LFP_WAIT_FD, .flags = 1 } },
	}, *p;
	struct lfp_wait *ws;
	int ret;

	FOR_ROWS(p, rows) {
		ws = NULL;
		if (p->null_args)
			ret = lfp_wait_open(NULL, NULL);
		else
			ret = lfp_wait_open(&p->attr, &ws);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && ws)
			lfp_wait_close(ws);
	}
}

/* The fd LFP_GETWAIT gives for an FD set (its epoll fd). */
static int ws_wait_fd(struct lfp_wait *ws)
{
	int fd = -1;

	cr_assert_eq(lfp_control(&ws->fid, LFP_GETWAIT, &fd), 0);
	return fd;
}

static void ws_add_fd_rows(void)
{
	/* Opened before closed_fd() runs, so that the closed number is not the file's. */
	FILE *file = tmpfile();
	int file_fd = file ? fileno(file) : -1;
	struct ws_add_fd_row {
		const char *name;
		int want;
		struct lfp_wait *ws;
		int fd;
	} rows[] = {
		{ "ws_add_fd_mutex_cond", -EINVAL, .ws = g_ws_mc, .fd = g_pipe2[0] },
		{ "ws_add_fd_null", -EINVAL, .ws = NULL, .fd = g_pipe2[0] },
		{ "ws_add_fd_negative", -EINVAL, .ws = g_ws, .fd = -1 },
		{ "ws_add_fd_dup", -EEXIST, .ws = g_ws, .fd = g_pipe[0] },
		{ "ws_add_fd_dup_pollfd", -EEXIST, .ws = g_ws_pollfd, .fd = g_pipe[0] },
		{ "ws_add_fd_own_eventfd", -EEXIST, .ws = g_ws, .fd = g_ws->sig.efd },
		{ "ws_add_fd_own_wait_fd", -EEXIST, .ws = g_ws, .fd = ws_wait_fd(g_ws) },
		{ "ws_add_fd_closed", -EBADF, .ws = g_ws, .fd = closed_fd() },
		{ "ws_add_fd_regular_file", -EPERM, .ws = g_ws, .fd = file_fd },
	}, *p;
	int ret;

	cr_assert_not_null(file, "tmpfile: %s", strerror(errno));
	FOR_ROWS(p, rows) {
		ret = lfp_wait_add_fd(p->ws, p->fd, POLLIN, NULL);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && p->fd == file_fd)
			lfp_wait_del_fd(p->ws, p->fd);
	}
	fclose(file);
}

static void ws_del_fd_rows(void)
{
	struct ws_del_fd_row {
		const char *name;
		int want;
		struct lfp_wait *ws;
		int fd;
	} rows[] = {
		{ "ws_del_fd_absent", -ENOENT, .ws = g_ws, .fd = g_pipe2[0] },
		{ "ws_del_fd_own_eventfd", -ENOENT, .ws = g_ws, .fd = g_ws->sig.efd },
		{ "ws_del_fd_null", -EINVAL, .ws = NULL, .fd = g_pipe[0] },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_wait_del_fd(p->ws, p->fd), p->want);
}

static void ws_wait_rows(void)
{
	struct ws_wait_row {
		const char *name;
		int want;
		struct lfp_wait *ws;
		int timeout;
	} rows[] = {
		{ "ws_wait_null", -EINVAL, .ws = NULL, .timeout = 0 },
		{ "ws_wait_not_a_set", -EINVAL, .ws = not_a_wait_set(), .timeout = 0 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_wait(p->ws, p->timeout), p->want);
}

static void ws_close_rows(void)
{
	struct ws_close_row {
		const char *name;
		int want;
		struct lfp_wait *ws;
	} rows[] = {
		{ "ws_close_with_members", -EBUSY, .ws = g_ws },
		{ "ws_close_with_fd_only", -EBUSY, .ws = g_ws_pollfd },
		{ "ws_close_null", -EINVAL, .ws = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_wait_close(p->ws), p->want);
}

/* ------------------------------------------------------------ poll rows */

static void ps_open_rows(void)
{
	struct ps_open_row {
		const char *name;
		int want;
		struct lfp_poll_attr attr;
		bool null_args; /* lfp_poll_open(NULL, NULL) */
	} rows[] = {
		{ "ps_open_flags", -EINVAL, .attr = { .flags = 1 } },
		{ "ps_open_null", -EINVAL, .null_args = true },
	}, *p;
	struct lfp_poll *ps;
	int ret;

	FOR_ROWS(p, rows) {
		ps = NULL;
		if (p->null_args)
			ret = lfp_poll_open(NULL, NULL);
		else
			ret = lfp_poll_open(&p->attr, &ps);
		expect_row(p->name, ret, p->want);
		if (ret == 0 && ps)
			lfp_poll_close(ps);
	}
}

/* lfp_poll_add and lfp_poll_del. */
static void ps_member_rows(void)
{
	struct ps_member_row {
		const char *name;
		int want;
		int (*call)(struct lfp_poll *ps, struct lfp_fid *fid, uint64_t flags);
		struct lfp_poll *ps;
		struct lfp_fid *fid;
		uint64_t flags;
	} rows[] = {
		{ "ps_add_eq", -EINVAL, .call = lfp_poll_add, .ps = g_ps2, .fid = &g_eq->fid,
		  .flags = 0 },
		{ "ps_add_wait_set", -EINVAL, .call = lfp_poll_add, .ps = g_ps2, .fid = &g_ws->fid,
		  .flags = 0 },
		{ "ps_add_poll_set", -EINVAL, .call = lfp_poll_add, .ps = g_ps2, .fid = &g_ps->fid,
		  .flags = 0 },
		{ "ps_add_null_fid", -EINVAL, .call = lfp_poll_add, .ps = g_ps2, .fid = NULL,
		  .flags = 0 },
		{ "ps_add_null_ps", -EINVAL, .call = lfp_poll_add, .ps = NULL, .fid = &g_cq->fid,
		  .flags = 0 },
		{ "ps_add_flags", -EINVAL, .call = lfp_poll_add, .ps = g_ps2, .fid = &g_cq->fid,
		  .flags = 1 },
		{ "ps_add_twice", -EEXIST, .call = lfp_poll_add, .ps = g_ps, .fid = &g_poll_cq->fid,
		  .flags = 0 },
		{ "ps_add_twice_cntr", -EEXIST, .call = lfp_poll_add, .ps = g_ps,
		  .fid = &g_poll_cntr->fid, .flags = 0 },
		{ "ps_add_other_set", -EBUSY, .call = lfp_poll_add, .ps = g_ps2,
		  .fid = &g_poll_cq->fid, .flags = 0 },
		{ "ps_del_non_member", -ENOENT, .call = lfp_poll_del, .ps = g_ps, .fid = &g_cq->fid,
		  .flags = 0 },
		{ "ps_del_other_set", -ENOENT, .call = lfp_poll_del, .ps = g_ps2,
		  .fid = &g_poll_cq->fid, .flags = 0 },
		{ "ps_del_flags", -EINVAL, .call = lfp_poll_del, .ps = g_ps, .fid = &g_poll_cq->fid,
		  .flags = 1 },
		{ "ps_del_eq", -EINVAL, .call = lfp_poll_del, .ps = g_ps, .fid = &g_eq->fid,
		  .flags = 0 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, p->call(p->ps, p->fid, p->flags), p->want);
}

static void ps_poll_rows(void)
{
	void *ctx[1];
	struct ps_poll_row {
		const char *name;
		int want;
		struct lfp_poll *ps;
		void **context;
		int count;
	} rows[] = {
		{ "ps_poll_negative", -EINVAL, .ps = g_ps, .context = ctx, .count = -1 },
		{ "ps_poll_null_ctx", -EINVAL, .ps = g_ps, .context = NULL, .count = 1 },
		{ "ps_poll_null", -EINVAL, .ps = NULL, .context = ctx, .count = 1 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_poll(p->ps, p->context, p->count), p->want);
}

static void ps_close_rows(void)
{
	struct ps_close_row {
		const char *name;
		int want;
		struct lfp_poll *ps;
	} rows[] = {
		{ "ps_close_with_members", -EBUSY, .ps = g_ps },
		{ "ps_close_null", -EINVAL, .ps = NULL },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_poll_close(p->ps), p->want);
}

/* ------------------------------------------------------------ trywait rows */

static void trywait_rows(void)
{
	struct trywait_row {
		const char *name;
		int want;
		struct lfp_fid **fids;
		size_t count;
	} rows[] = {
		{ "tw_null", -EINVAL, .fids = NULL, .count = 1 },
		{ "tw_count0", -EINVAL, .fids = (struct lfp_fid *[]){ &g_eq_fd->fid }, .count = 0 },
		{ "tw_none_alone", -EINVAL, .fids = (struct lfp_fid *[]){ &g_eq->fid },
		  .count = 1 },
		{ "tw_none_first", -EINVAL,
		  .fids = (struct lfp_fid *[]){ &g_cq->fid, &g_eq_fd->fid }, .count = 2 },
		{ "tw_none_last", -EINVAL,
		  .fids = (struct lfp_fid *[]){ &g_eq_fd->fid, &g_ws->fid, &g_cntr->fid },
		  .count = 3 },
		{ "tw_none_middle", -EINVAL,
		  .fids = (struct lfp_fid *[]){ &g_eq_fd->fid, &g_eq->fid, &g_ws->fid },
		  .count = 3 },
		{ "tw_null_element", -EINVAL, .fids = (struct lfp_fid *[]){ &g_eq_fd->fid, NULL },
		  .count = 2 },
		{ "tw_poll_set", -EINVAL, .fids = (struct lfp_fid *[]){ &g_eq_fd->fid, &g_ps->fid },
		  .count = 2 },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_trywait(p->fids, p->count), p->want);
}

/* ------------------------------------------------------------ control rows */

static void control_rows(void)
{
	struct lfp_wait_pollfd o = { 0 };
	int fd;
	struct control_row {
		const char *name;
		int want;
		struct lfp_fid *fid;
		int command;
		void *arg;
	} rows[] = {
		{ "ctl_null_fid", -EINVAL, .fid = NULL, .command = LFP_GETWAIT, .arg = &fd },
		{ "ctl_unknown_cmd", -ENOSYS, .fid = &g_eq_fd->fid, .command = 99, .arg = &fd },
		{ "ctl_unknown_cmd_cq", -ENOSYS, .fid = &g_cq->fid, .command = 99, .arg = &fd },
		{ "ctl_unknown_cmd_cntr", -ENOSYS, .fid = &g_cntr->fid, .command = 99, .arg = &fd },
		{ "ctl_unknown_cmd_ws", -ENOSYS, .fid = &g_ws->fid, .command = 99, .arg = &fd },
		{ "ctl_getwait_null_arg", -EINVAL, .fid = &g_eq_fd->fid, .command = LFP_GETWAIT,
		  .arg = NULL },
		{ "ctl_getwaitobj_null_arg", -EINVAL, .fid = &g_eq_fd->fid,
		  .command = LFP_GETWAITOBJ, .arg = NULL },
		{ "ctl_getwait_null_arg_ws", -EINVAL, .fid = &g_ws->fid, .command = LFP_GETWAIT,
		  .arg = NULL },
		{ "ctl_getwait_null_arg_cq", -EINVAL, .fid = &g_cq->fid, .command = LFP_GETWAIT,
		  .arg = NULL },
		{ "ctl_getwait_none", -ENODATA, .fid = &g_eq->fid, .command = LFP_GETWAIT,
		  .arg = &fd },
		{ "ctl_getwait_yield", -ENODATA, .fid = &g_eq_yield->fid, .command = LFP_GETWAIT,
		  .arg = &fd },
		{ "ctl_getwait_member", -ENODATA, .fid = &g_eq_member->fid, .command = LFP_GETWAIT,
		  .arg = &fd },
		{ "ctl_getwait_cntr_member", -ENODATA, .fid = &g_cntr_member->fid,
		  .command = LFP_GETWAIT, .arg = &fd },
		{ "ctl_poll_set", -ENOSYS, .fid = &g_ps->fid, .command = LFP_GETWAIT, .arg = &fd },
		{ "ctl_pollfd_too_small", -LFP_ETOOSMALL, .fid = &g_ws_pollfd->fid,
		  .command = LFP_GETWAIT, .arg = &o },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_control(p->fid, p->command, p->arg), p->want);
}

static void close_rows(void)
{
	struct close_row {
		const char *name;
		int want;
		struct lfp_fid *fid;
	} rows[] = {
		{ "close_null", -EINVAL, .fid = NULL },
		{ "close_busy_ws", -EBUSY, .fid = &g_ws->fid },
		{ "close_busy_ps", -EBUSY, .fid = &g_ps->fid },
		{ "close_busy_cq", -EBUSY, .fid = &g_poll_cq->fid },
	}, *p;

	FOR_ROWS(p, rows)
		expect_row(p->name, lfp_close(p->fid), p->want);
}

/* Every table, in the order the rows run. */
static void (*const tables[])(void) = {
	ring_init_rows, ring_create_rows, ring_enqueue_rows, ring_read_rows, ring_consume_rows,
	eq_open_rows, eq_read_rows, eq_readerr_rows, eq_write_rows, eq_write_err_rows,
	eq_close_rows,
	cq_open_rows, cq_write_rows, cq_writeerr_rows, cq_read_rows, cq_readerr_rows,
	cq_handle_rows,
	cntr_open_rows, cntr_value_rows, cntr_wait_rows, cntr_close_rows,
	pfds_init_rows, pfds_add_rows, pfds_mod_rows, pfds_del_rows, pfds_get_rows,
	ws_open_rows, ws_add_fd_rows, ws_del_fd_rows, ws_wait_rows, ws_close_rows,
	ps_open_rows, ps_member_rows, ps_poll_rows, ps_close_rows,
	trywait_rows,
	control_rows, close_rows,
};

static void run_tables(int pass)
{
	size_t i;

	g_pass = pass;
	for (i = 0; i < NROWS(tables); i++)
		tables[i]();
}

/* ------------------------------------------------------------ checks */

static void check_eq_intact(void)
{
	struct lfp_eq_err_entry e;
	uint32_t ev;
	uint64_t b;
	int i;

	for (i = 0; i < 3; i++) {
		b = 0;
		cr_expect_eq(lfp_eq_read(g_eq, &ev, &b, sizeof(b), 0), (ssize_t)sizeof(b),
		             "EQ event %d lost after the bad calls", i);
		cr_expect_eq(ev, LFP_EVENT_USER + (uint32_t)i, "EQ event %d code %u", i, ev);
		cr_expect_eq(b, ev_payload[i], "EQ event %d payload %#llx", i,
		             (unsigned long long)b);
	}
	cr_expect_eq(lfp_eq_read(g_eq, &ev, &b, sizeof(b), 0), -EAGAIN,
	             "EQ holds more than the 3 events written");
	memset(&e, 0, sizeof(e));
	cr_expect_eq(lfp_eq_readerr(g_eq, &e, 0), -EAGAIN,
	             "a rejected write_err queued an error entry");
	/* the overrun EQ keeps its 2 events, then reports the overrun */
	cr_expect_eq(lfp_eq_read(g_eq_over, &ev, NULL, 0, 0), 0);
	cr_expect_eq(ev, 1u);
	cr_expect_eq(lfp_eq_read(g_eq_over, &ev, NULL, 0, 0), 0);
	cr_expect_eq(ev, 2u);
	cr_expect_eq(lfp_eq_read(g_eq_over, &ev, NULL, 0, 0), -LFP_EAVAIL);
}

static void check_cq_intact(void)
{
	struct lfp_cq_entry ce[4];
	struct lfp_cq_err_entry e;
	int i;

	memset(&e, 0, sizeof(e));
	cr_expect_eq(lfp_cq_readerr(g_cq, &e, 0), -EAGAIN,
	             "a rejected writeerr queued an error entry");
	memset(ce, 0, sizeof(ce));
	cr_expect_eq(lfp_cq_read(g_cq, ce, 4), 3, "CQ completions lost or added");
	for (i = 0; i < 3; i++)
		cr_expect_eq(ce[i].op_context, (void *)(uintptr_t)(0x100 + i),
		             "CQ completion %d corrupted", i);
}

static void check_ring_intact(void)
{
	unsigned char b[16], want[16];
	int i;

	for (i = 0; i < 3; i++) {
		memset(want, 'a' + i, sizeof(want));
		memset(b, 0, sizeof(b));
		cr_expect_eq(lfp_ring_dequeue(g_ring, b, sizeof(b)), 10 + i,
		             "ring entry %d lost after the bad calls", i);
		cr_expect(memcmp(b, want, 10 + (size_t)i) == 0, "ring entry %d corrupted", i);
	}
	cr_expect_eq(lfp_ring_dequeue(g_ring, b, sizeof(b)), -EAGAIN,
	             "ring holds more than the 3 entries written");
}

static void check_sets_intact(void)
{
	struct pollfd p[4];
	struct lfp_wait_pollfd o;
	void *ctx[4];
	int n;

	/* pollfds: still exactly the two fds */
	memset(&o, 0, sizeof(o));
	o.nfds = 4;
	o.fd = p;
	cr_expect_eq(lfp_pollfds_get(&g_pfds, &o), 0);
	cr_expect_eq(o.nfds, 2u, "pollfds changed by rejected calls");
	cr_expect_eq(o.change_index, 2u, "pollfds change_index moved on rejected calls");
	/* POLLFD set: its eventfd and the one external fd */
	memset(&o, 0, sizeof(o));
	o.nfds = 4;
	o.fd = p;
	cr_expect_eq(lfp_control(&g_ws_pollfd->fid, LFP_GETWAIT, &o), 0);
	cr_expect_eq(o.nfds, 2u, "POLLFD set changed by rejected calls");
	/* poll set: both members still there (nothing reported while idle) */
	n = lfp_poll(g_ps, ctx, 4);
	cr_expect_eq(n, 0, "idle poll set reported %d", n);
	cr_expect_eq(lfp_cq_close(g_poll_cq), -EBUSY, "CQ left the poll set");
	cr_expect_eq(lfp_poll_add(g_ps2, &g_poll_cntr->fid, 0), -EBUSY);
}

/* Nothing queued was lost or added; the sets hold what the fixture put in. */
static void check_intact(void)
{
	check_eq_intact();
	check_cq_intact();
	check_ring_intact();
	check_sets_intact();
}

Test(badinput, table)
{
	fixture_up();
	run_tables(0);
	cr_log_info("%d rows, %d mismatches", g_rows, g_mismatches);
	check_intact();
	fixture_down();
}

/* The rows run twice in a row must still hold (no row changed state). */
Test(badinput, table_twice_no_state_change)
{
	fixture_up();
	run_tables(0);
	run_tables(1);
	check_intact();
	fixture_down();
}

/* ------------------------------------------------------------ resources */

static int highest_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int hi = -1, fd, self;

	cr_assert_not_null(d);
	self = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd != self && fd > hi)
			hi = fd;
	}
	closedir(d);
	return hi;
}

Test(badinput, eventfd_exhaustion)
{
	struct lfp_eq_attr ea;
	struct lfp_cq_attr ca;
	struct lfp_cntr_attr na;
	struct lfp_wait_attr wa;
	struct rlimit old, low;
	struct lfp_eq *pre = NULL, *eq = NULL;
	struct lfp_cq *cq = NULL;
	struct lfp_cntr *c = NULL;
	struct lfp_wait *ws = NULL;
	int fillers[4096], nfill = 0, before, after, ret, fd, spare;
	uint32_t ev;
	uint64_t b = 7;

	memset(&ea, 0, sizeof(ea));
	ea.wait_obj = LFP_WAIT_FD;
	cr_assert_eq(lfp_eq_open(&ea, &pre, NULL), 0);

	before = count_fds();
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)highest_fd() + 1;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	/* fill any holes below the limit, so the next fd cannot be had */
	while (nfill < (int)(sizeof(fillers) / sizeof(fillers[0]))) {
		fd = dup(0);
		if (fd < 0)
			break;
		fillers[nfill++] = fd;
	}
	cr_assert_eq(errno, EMFILE);

	ret = lfp_eq_open(&ea, &eq, NULL);
	cr_expect(ret == -EMFILE || ret == -ENFILE, "EQ open at the limit = %d", ret);
	memset(&ca, 0, sizeof(ca));
	ca.wait_obj = LFP_WAIT_FD;
	ret = lfp_cq_open(&ca, &cq, NULL);
	cr_expect(ret == -EMFILE || ret == -ENFILE, "CQ open at the limit = %d", ret);
	memset(&na, 0, sizeof(na));
	na.wait_obj = LFP_WAIT_FD;
	ret = lfp_cntr_open(&na, &c, NULL);
	cr_expect(ret == -EMFILE || ret == -ENFILE, "cntr open at the limit = %d", ret);
	wa.wait_obj = LFP_WAIT_FD;
	wa.flags = 0;
	ret = lfp_wait_open(&wa, &ws);
	cr_expect(ret == -EMFILE || ret == -ENFILE, "wait open at the limit = %d", ret);

	/* one fd free: the set's eventfd succeeds, its epoll fd fails */
	cr_assert_gt(nfill, 0);
	spare = fillers[--nfill];
	close(spare);
	wa.wait_obj = LFP_WAIT_POLLFD;
	ret = lfp_wait_open(&wa, &ws);
	cr_expect(ret == -EMFILE || ret == -ENFILE, "wait open with one fd = %d", ret);
	/* and the freed fd is free again: an FD EQ fits exactly */
	cr_expect_eq(lfp_eq_open(&ea, &eq, NULL), 0, "the failed set leaked its eventfd");
	if (eq)
		cr_expect_eq(lfp_eq_close(eq), 0);

	while (nfill > 0)
		close(fillers[--nfill]);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	after = count_fds();
	cr_expect_eq(after, before, "fds before %d, after %d", before, after);

	/* the EQ opened before still works */
	cr_expect_eq(lfp_eq_write(pre, 5, &b, sizeof(b), 0), (ssize_t)sizeof(b));
	b = 0;
	cr_expect_eq(lfp_eq_sread(pre, &ev, &b, sizeof(b), 1000, 0), (ssize_t)sizeof(b));
	cr_expect_eq(ev, 5u);
	cr_expect_eq(b, 7u);
	cr_expect_eq(lfp_eq_close(pre), 0);
}

Test(badinput, fd_leak)
{
	struct lfp_eq_attr ea;
	struct lfp_cq_attr ca;
	struct lfp_cntr_attr na;
	struct lfp_wait_attr wa;
	struct lfp_eq *eqs[50];
	struct lfp_wait *ws[20];
	struct lfp_eq *meq[20];
	struct lfp_cq *mcq[20];
	struct lfp_cntr *mc[20];
	int pipes[20][2];
	int before, mid, after, i;

	before = count_fds();

	memset(&ea, 0, sizeof(ea));
	ea.wait_obj = LFP_WAIT_FD;
	for (i = 0; i < 50; i++)
		cr_assert_eq(lfp_eq_open(&ea, &eqs[i], NULL), 0);
	mid = count_fds();
	cr_expect_eq(mid, before + 50, "50 FD EQs hold %d fds", mid - before);
	for (i = 0; i < 50; i++)
		cr_assert_eq(lfp_eq_close(eqs[i]), 0);
	cr_expect_eq(count_fds(), before, "FD EQ open/close leaked fds");

	for (i = 0; i < 20; i++) {
		wa.wait_obj = (i & 1) ? LFP_WAIT_POLLFD : LFP_WAIT_FD;
		wa.flags = 0;
		cr_assert_eq(lfp_wait_open(&wa, &ws[i]), 0);
		cr_assert_eq(pipe(pipes[i]), 0);
		cr_assert_eq(lfp_wait_add_fd(ws[i], pipes[i][0], POLLIN, NULL), 0);
		cr_assert_eq(lfp_wait_add_fd(ws[i], pipes[i][1], POLLOUT, NULL), 0);
		/* rejected adds and dels in between */
		cr_expect_eq(lfp_wait_add_fd(ws[i], pipes[i][0], POLLIN, NULL), -EEXIST);
		cr_expect_eq(lfp_wait_del_fd(ws[i], 1 << 20), -ENOENT);
		memset(&ea, 0, sizeof(ea));
		ea.wait_obj = LFP_WAIT_SET;
		ea.wait_set = ws[i];
		cr_assert_eq(lfp_eq_open(&ea, &meq[i], NULL), 0);
		memset(&ca, 0, sizeof(ca));
		ca.wait_obj = LFP_WAIT_SET;
		ca.wait_set = ws[i];
		cr_assert_eq(lfp_cq_open(&ca, &mcq[i], NULL), 0);
		memset(&na, 0, sizeof(na));
		na.wait_obj = LFP_WAIT_SET;
		na.wait_set = ws[i];
		cr_assert_eq(lfp_cntr_open(&na, &mc[i], NULL), 0);
		cr_expect_eq(lfp_wait_close(ws[i]), -EBUSY);
	}
	for (i = 0; i < 20; i++) {
		cr_assert_eq(lfp_wait_del_fd(ws[i], pipes[i][0]), 0);
		cr_assert_eq(lfp_wait_del_fd(ws[i], pipes[i][1]), 0);
		cr_expect_eq(lfp_wait_del_fd(ws[i], pipes[i][1]), -ENOENT);
		cr_assert_eq(lfp_eq_close(meq[i]), 0);
		cr_assert_eq(lfp_cq_close(mcq[i]), 0);
		cr_expect_eq(lfp_wait_close(ws[i]), -EBUSY, "set %d closed with a counter", i);
		cr_assert_eq(lfp_cntr_close(mc[i]), 0);
		cr_assert_eq(lfp_wait_close(ws[i]), 0);
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	after = count_fds();
	cr_expect_eq(after, before, "fds before %d, after %d", before, after);
}
