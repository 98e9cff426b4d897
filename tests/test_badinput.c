/*
 * Bad input across every public call family: each row of one table does a
 * single call with bad input and must return the documented negative errno.
 * Rows that target a queue already holding data are followed by a check
 * that nothing queued was lost (EQ events, CQ completions, ring entries).
 *
 * Two resource tests: eventfd exhaustion under a lowered RLIMIT_NOFILE
 * (-EMFILE, nothing leaked, an older EQ still works) and an fd-leak count
 * around many opens and closes of FD objects and sets.
 */
#include <lfpoll/lfpoll.h> /* first: it selects POSIX under -std=c11 */

#include <dirent.h>
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

/* ------------------------------------------------------------ ring rows */

static int ring_init_null_ring(void) { return lfp_ring_init(NULL, g_ringmem, 4, 8); }
static int ring_init_null_mem(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, NULL, 4, 8);
}
static int ring_init_cap0(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, g_ringmem, 0, 8);
}
static int ring_init_cap1(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, g_ringmem, 1, 8);
}
static int ring_init_cap3(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, g_ringmem, 3, 8);
}
static int ring_init_slot0(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, g_ringmem, 4, 0);
}
static int ring_init_misaligned(void)
{
	struct lfp_ring r;
	return lfp_ring_init(&r, g_ringmem + 4, 4, 8);
}
static int ring_create_null_rp(void) { return lfp_ring_create(4, 8, NULL); }
static int ring_create_cap_over_max(void)
{
	struct lfp_ring *r = NULL;
	int ret = lfp_ring_create(LFP_RING_MAX_CAPACITY * 2, 8, &r);
	if (ret == 0)
		lfp_ring_destroy(r);
	return ret;
}
static int ring_create_slot_over_int32(void)
{
	struct lfp_ring *r = NULL;
	int ret = lfp_ring_create(2, (size_t)INT32_MAX + 1, &r);
	if (ret == 0)
		lfp_ring_destroy(r);
	return ret;
}
static int ring_enqueue_null_ring(void) { return lfp_ring_enqueue(NULL, "x", 1); }
static int ring_enqueue_null_src(void) { return lfp_ring_enqueue(g_ring, NULL, 4); }
static int ring_enqueue_oversize(void)
{
	unsigned char b[17] = { 0 };
	return lfp_ring_enqueue(g_ring, b, sizeof(b));
}
static int ring_dequeue_null_ring(void)
{
	unsigned char b[16];
	return (int)lfp_ring_dequeue(NULL, b, sizeof(b));
}
static int ring_dequeue_null_dst(void) { return (int)lfp_ring_dequeue(g_ring, NULL, 16); }
static int ring_dequeue_short(void)
{
	unsigned char b[4];
	return (int)lfp_ring_dequeue(g_ring, b, sizeof(b));
}
static int ring_peek_null_ticket(void)
{
	unsigned char b[16];
	return (int)lfp_ring_peek(g_ring, b, sizeof(b), NULL);
}
static int ring_peek_null_dst(void)
{
	uint64_t t;
	return (int)lfp_ring_peek(g_ring, NULL, 16, &t);
}
static int ring_consume_null(void) { return lfp_ring_consume(NULL, 0); }
static int ring_consume_stale(void)
{
	/* a ticket far ahead of the head: not the head entry */
	return lfp_ring_consume(g_ring, 1000);
}

/* ------------------------------------------------------------ EQ rows */

static int eq_open_attr(struct lfp_eq_attr *a)
{
	struct lfp_eq *eq = NULL;
	int ret = lfp_eq_open(a, &eq, NULL);
	if (ret == 0)
		lfp_eq_close(eq);
	return ret;
}
static int eq_open_null_result(void) { return lfp_eq_open(NULL, NULL, NULL); }
static int eq_open_wait99(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = (enum lfp_wait_obj)99;
	return eq_open_attr(&a);
}
static int eq_open_pollfd(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_POLLFD;
	return eq_open_attr(&a);
}
static int eq_open_flags(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.flags = LFP_PEEK;
	return eq_open_attr(&a);
}
static int eq_open_set_without_set(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	return eq_open_attr(&a);
}
static int eq_open_set_with_fd(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_FD;
	a.wait_set = g_ws;
	return eq_open_attr(&a);
}
static int eq_open_set_not_a_wait_set(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = (struct lfp_wait *)(void *)g_ps;
	return eq_open_attr(&a);
}
static int eq_open_size_too_big(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.size = LFP_RING_MAX_CAPACITY + 1;
	return eq_open_attr(&a);
}
static int eq_open_entry_too_big(void)
{
	struct lfp_eq_attr a;
	memset(&a, 0, sizeof(a));
	a.entry_size = (size_t)INT32_MAX;
	return eq_open_attr(&a);
}
static int eq_read_null_eq(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_read(NULL, &ev, &b, sizeof(b), 0);
}
static int eq_read_null_event(void)
{
	uint64_t b;
	return (int)lfp_eq_read(g_eq, NULL, &b, sizeof(b), 0);
}
static int eq_read_null_buf(void)
{
	uint32_t ev;
	return (int)lfp_eq_read(g_eq, &ev, NULL, 8, 0);
}
static int eq_read_bad_flags(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_read(g_eq, &ev, &b, sizeof(b), 1);
}
static int eq_read_peek_plus_write(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_read(g_eq, &ev, &b, sizeof(b), LFP_PEEK | LFP_WRITE);
}
static int eq_read_short(void)
{
	uint32_t ev;
	uint32_t b;
	return (int)lfp_eq_read(g_eq, &ev, &b, sizeof(b), 0);
}
static int eq_read_peek_short(void)
{
	uint32_t ev;
	uint32_t b;
	return (int)lfp_eq_read(g_eq, &ev, &b, sizeof(b), LFP_PEEK);
}
static int eq_readerr_null_buf(void) { return (int)lfp_eq_readerr(g_eq, NULL, 0); }
static int eq_readerr_null_eq(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_eq_readerr(NULL, &e, 0);
}
static int eq_readerr_bad_flags(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_eq_readerr(g_eq, &e, LFP_WRITE);
}
static int eq_readerr_size_null_data(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err_data_size = 8;
	return (int)lfp_eq_readerr(g_eq, &e, 0);
}
static int eq_readerr_none_queued(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_eq_readerr(g_eq, &e, 0);
}
static int eq_write_null_eq(void) { return (int)lfp_eq_write(NULL, 1, NULL, 0, 0); }
static int eq_write_null_buf(void) { return (int)lfp_eq_write(g_eq, 1, NULL, 8, 0); }
static int eq_write_flags(void)
{
	uint64_t b = 0;
	return (int)lfp_eq_write(g_eq, 1, &b, sizeof(b), LFP_PEEK);
}
static int eq_write_oversize(void)
{
	unsigned char b[LFP_EQ_DEFAULT_ENTRY_SIZE + 1];
	memset(b, 0, sizeof(b));
	return (int)lfp_eq_write(g_eq, 1, b, sizeof(b), 0);
}
static int eq_write_err_null_err(void) { return (int)lfp_eq_write_err(g_eq, NULL); }
static int eq_write_err_null_eq(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	return (int)lfp_eq_write_err(NULL, &e);
}
static int eq_write_err_err0(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_eq_write_err(g_eq, &e);
}
static int eq_write_err_size_null_data(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	e.err_data_size = 4;
	return (int)lfp_eq_write_err(g_eq, &e);
}
static int eq_write_err_oversize(void)
{
	unsigned char d[LFP_EQ_DEFAULT_ENTRY_SIZE + 1];
	struct lfp_eq_err_entry e;
	memset(d, 0, sizeof(d));
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	e.err_data = d;
	e.err_data_size = sizeof(d);
	return (int)lfp_eq_write_err(g_eq, &e);
}
static int eq_sread_none(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_sread(g_eq, &ev, &b, sizeof(b), 0, 0);
}
static int eq_sread_set_member(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_sread(g_eq_member, &ev, &b, sizeof(b), 0, 0);
}
static int eq_sread_null_eq(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_sread(NULL, &ev, &b, sizeof(b), 0, 0);
}
static int eq_sread_fd_null_event(void)
{
	uint64_t b;
	return (int)lfp_eq_sread(g_eq_fd, NULL, &b, sizeof(b), 0, 0);
}
static int eq_sread_fd_bad_flags(void)
{
	uint32_t ev;
	uint64_t b;
	return (int)lfp_eq_sread(g_eq_fd, &ev, &b, sizeof(b), 0, 1);
}
static int eq_close_null(void) { return lfp_eq_close(NULL); }
static int eq_overrun_write(void) { return (int)lfp_eq_write(g_eq_over, 9, NULL, 0, 0); }
static int eq_overrun_write_err(void)
{
	struct lfp_eq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	return (int)lfp_eq_write_err(g_eq_over, &e);
}

/* ------------------------------------------------------------ CQ rows */

static int cq_open_attr(struct lfp_cq_attr *a)
{
	struct lfp_cq *cq = NULL;
	int ret = lfp_cq_open(a, &cq, NULL);
	if (ret == 0)
		lfp_cq_close(cq);
	return ret;
}
static int cq_open_null_result(void) { return lfp_cq_open(NULL, NULL, NULL); }
static int cq_open_bad_format(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.format = (enum lfp_cq_format)99;
	return cq_open_attr(&a);
}
static int cq_open_bad_flags(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.flags = LFP_WRITE;
	return cq_open_attr(&a);
}
static int cq_open_wait99(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = (enum lfp_wait_obj)99;
	return cq_open_attr(&a);
}
static int cq_open_pollfd(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_POLLFD;
	return cq_open_attr(&a);
}
static int cq_open_set_without_set(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	return cq_open_attr(&a);
}
static int cq_open_set_not_a_wait_set(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = (struct lfp_wait *)(void *)g_ps;
	return cq_open_attr(&a);
}
static int cq_open_size_too_big(void)
{
	struct lfp_cq_attr a;
	memset(&a, 0, sizeof(a));
	a.size = LFP_RING_MAX_CAPACITY + 1;
	return cq_open_attr(&a);
}
static int cq_write_count0(void)
{
	struct lfp_cq_entry e = { NULL };
	return (int)lfp_cq_write(g_cq, &e, 0);
}
static int cq_write_null_entries(void) { return (int)lfp_cq_write(g_cq, NULL, 1); }
static int cq_write_null_cq(void)
{
	struct lfp_cq_entry e = { NULL };
	return (int)lfp_cq_write(NULL, &e, 1);
}
static int cq_writeerr_err0(void)
{
	struct lfp_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_cq_writeerr(g_cq, &e);
}
static int cq_writeerr_null(void) { return (int)lfp_cq_writeerr(g_cq, NULL); }
static int cq_writeerr_size_null_data(void)
{
	struct lfp_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	e.err_data_size = 4;
	return (int)lfp_cq_writeerr(g_cq, &e);
}
static int cq_writeerr_oversize(void)
{
	unsigned char d[LFP_CQ_ERR_DATA_MAX + 1];
	struct lfp_cq_err_entry e;
	memset(d, 0, sizeof(d));
	memset(&e, 0, sizeof(e));
	e.err = EIO;
	e.err_data = d;
	e.err_data_size = sizeof(d);
	return (int)lfp_cq_writeerr(g_cq, &e);
}
static int cq_read_null_buf(void) { return (int)lfp_cq_read(g_cq, NULL, 1); }
static int cq_read_null_cq(void)
{
	struct lfp_cq_entry e;
	return (int)lfp_cq_read(NULL, &e, 1);
}
static int cq_readerr_null(void) { return (int)lfp_cq_readerr(g_cq, NULL, 0); }
static int cq_readerr_bad_flags(void)
{
	struct lfp_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_cq_readerr(g_cq, &e, LFP_WRITE);
}
static int cq_readerr_size_null_data(void)
{
	struct lfp_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	e.err_data_size = 8;
	return (int)lfp_cq_readerr(g_cq, &e, 0);
}
static int cq_readerr_none_queued(void)
{
	struct lfp_cq_err_entry e;
	memset(&e, 0, sizeof(e));
	return (int)lfp_cq_readerr(g_cq, &e, 0);
}
static int cq_sread_none(void)
{
	struct lfp_cq_entry e;
	return (int)lfp_cq_sread(g_cq, &e, 1, NULL, 0);
}
static int cq_sread_set_member(void)
{
	struct lfp_cq_entry e;
	return (int)lfp_cq_sread(g_cq_member, &e, 1, NULL, 0);
}
static int cq_sread_null_buf(void) { return (int)lfp_cq_sread(g_cq, NULL, 1, NULL, 0); }
static int cq_sread_count0(void)
{
	struct lfp_cq_entry e;
	return (int)lfp_cq_sread(g_cq, &e, 0, NULL, 0);
}
static int cq_close_null(void) { return lfp_cq_close(NULL); }
static int cq_close_in_poll_set(void) { return lfp_cq_close(g_poll_cq); }
static int cq_signal_null(void) { return lfp_cq_signal(NULL); }

/* ------------------------------------------------------------ counter rows */

static int cntr_open_attr(struct lfp_cntr_attr *a)
{
	struct lfp_cntr *c = NULL;
	int ret = lfp_cntr_open(a, &c, NULL);
	if (ret == 0)
		lfp_cntr_close(c);
	return ret;
}
static int cntr_open_null_result(void) { return lfp_cntr_open(NULL, NULL, NULL); }
static int cntr_open_flags(void)
{
	struct lfp_cntr_attr a;
	memset(&a, 0, sizeof(a));
	a.flags = 1;
	return cntr_open_attr(&a);
}
static int cntr_open_wait99(void)
{
	struct lfp_cntr_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = (enum lfp_wait_obj)99;
	return cntr_open_attr(&a);
}
static int cntr_open_set_without_set(void)
{
	struct lfp_cntr_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	return cntr_open_attr(&a);
}
static int cntr_open_set_not_a_wait_set(void)
{
	struct lfp_cntr_attr a;
	memset(&a, 0, sizeof(a));
	a.wait_obj = LFP_WAIT_SET;
	a.wait_set = (struct lfp_wait *)(void *)g_ps;
	return cntr_open_attr(&a);
}
static int cntr_add_null(void) { return lfp_cntr_add(NULL, 1); }
static int cntr_adderr_null(void) { return lfp_cntr_adderr(NULL, 1); }
static int cntr_set_null(void) { return lfp_cntr_set(NULL, 1); }
static int cntr_seterr_null(void) { return lfp_cntr_seterr(NULL, 1); }
static int cntr_inc_null(void) { return lfp_cntr_inc(NULL, 1); }
static int cntr_incerr_null(void) { return lfp_cntr_incerr(NULL, 1); }
static int cntr_wait_none(void) { return lfp_cntr_wait(g_cntr, 1, 0); }
static int cntr_wait_set_member(void) { return lfp_cntr_wait(g_cntr_member, 1, 0); }
static int cntr_wait_null(void) { return lfp_cntr_wait(NULL, 1, 0); }
static int cntr_close_null(void) { return lfp_cntr_close(NULL); }
static int cntr_close_in_poll_set(void) { return lfp_cntr_close(g_poll_cntr); }

/* ------------------------------------------------------------ pollfds rows */

static int pfds_init_null(void) { return lfp_pollfds_init(NULL); }
static int pfds_add_null(void) { return lfp_pollfds_add(NULL, 0, POLLIN, NULL); }
static int pfds_add_negative(void) { return lfp_pollfds_add(&g_pfds, -1, POLLIN, NULL); }
static int pfds_add_dup(void) { return lfp_pollfds_add(&g_pfds, g_pipe[0], POLLOUT, NULL); }
static int pfds_mod_absent(void) { return lfp_pollfds_mod(&g_pfds, g_pipe2[0], POLLOUT); }
static int pfds_mod_null(void) { return lfp_pollfds_mod(NULL, g_pipe[0], POLLOUT); }
static int pfds_del_absent(void) { return lfp_pollfds_del(&g_pfds, g_pipe2[0]); }
static int pfds_del_negative(void) { return lfp_pollfds_del(&g_pfds, -1); }
static int pfds_del_null(void) { return lfp_pollfds_del(NULL, g_pipe[0]); }
static int pfds_get_null_out(void) { return lfp_pollfds_get(&g_pfds, NULL); }
static int pfds_get_null_set(void)
{
	struct lfp_wait_pollfd o;
	memset(&o, 0, sizeof(o));
	return lfp_pollfds_get(NULL, &o);
}
static int pfds_get_null_fd(void)
{
	struct lfp_wait_pollfd o;
	memset(&o, 0, sizeof(o));
	o.nfds = 4;
	return lfp_pollfds_get(&g_pfds, &o);
}
static int pfds_get_too_small(void)
{
	struct pollfd p[1];
	struct lfp_wait_pollfd o;
	memset(&o, 0, sizeof(o));
	o.nfds = 1;
	o.fd = p;
	return lfp_pollfds_get(&g_pfds, &o);
}

/* ------------------------------------------------------------ wait rows */

static int ws_open_obj(enum lfp_wait_obj obj, uint64_t flags)
{
	struct lfp_wait_attr a;
	struct lfp_wait *ws = NULL;
	int ret;

	a.wait_obj = obj;
	a.flags = flags;
	ret = lfp_wait_open(&a, &ws);
	if (ret == 0)
		lfp_wait_close(ws);
	return ret;
}
static int ws_open_null_result(void) { return lfp_wait_open(NULL, NULL); }
static int ws_open_none(void) { return ws_open_obj(LFP_WAIT_NONE, 0); }
static int ws_open_set(void) { return ws_open_obj(LFP_WAIT_SET, 0); }
static int ws_open_obj99(void) { return ws_open_obj((enum lfp_wait_obj)99, 0); }
static int ws_open_flags(void) { return ws_open_obj(LFP_WAIT_FD, 1); }
static int ws_add_fd_mutex_cond(void) { return lfp_wait_add_fd(g_ws_mc, g_pipe2[0], POLLIN, NULL); }
static int ws_add_fd_null(void) { return lfp_wait_add_fd(NULL, g_pipe2[0], POLLIN, NULL); }
static int ws_add_fd_negative(void) { return lfp_wait_add_fd(g_ws, -1, POLLIN, NULL); }
static int ws_add_fd_dup(void) { return lfp_wait_add_fd(g_ws, g_pipe[0], POLLIN, NULL); }
static int ws_add_fd_dup_pollfd(void) { return lfp_wait_add_fd(g_ws_pollfd, g_pipe[0], POLLIN, NULL); }
static int ws_add_fd_own_eventfd(void) { return lfp_wait_add_fd(g_ws, g_ws->sig.efd, POLLIN, NULL); }
static int ws_add_fd_closed(void) { return lfp_wait_add_fd(g_ws, closed_fd(), POLLIN, NULL); }
static int ws_add_fd_regular_file(void)
{
	FILE *f = tmpfile();
	int ret;

	if (!f)
		return 1;
	ret = lfp_wait_add_fd(g_ws, fileno(f), POLLIN, NULL);
	if (ret == 0)
		lfp_wait_del_fd(g_ws, fileno(f));
	fclose(f);
	return ret;
}
static int ws_del_fd_absent(void) { return lfp_wait_del_fd(g_ws, g_pipe2[0]); }
static int ws_del_fd_own_eventfd(void) { return lfp_wait_del_fd(g_ws, g_ws->sig.efd); }
static int ws_del_fd_null(void) { return lfp_wait_del_fd(NULL, g_pipe[0]); }
static int ws_wait_null(void) { return lfp_wait(NULL, 0); }
static int ws_wait_not_a_set(void) { return lfp_wait((struct lfp_wait *)(void *)g_ps, 0); }
static int ws_close_with_members(void) { return lfp_wait_close(g_ws); }
static int ws_close_with_fd_only(void) { return lfp_wait_close(g_ws_pollfd); }
static int ws_close_null(void) { return lfp_wait_close(NULL); }

/* ------------------------------------------------------------ poll rows */

static int ps_open_flags(void)
{
	struct lfp_poll_attr a = { 1 };
	struct lfp_poll *ps = NULL;
	int ret = lfp_poll_open(&a, &ps);
	if (ret == 0)
		lfp_poll_close(ps);
	return ret;
}
static int ps_open_null(void) { return lfp_poll_open(NULL, NULL); }
static int ps_add_eq(void) { return lfp_poll_add(g_ps2, &g_eq->fid, 0); }
static int ps_add_wait_set(void) { return lfp_poll_add(g_ps2, &g_ws->fid, 0); }
static int ps_add_poll_set(void) { return lfp_poll_add(g_ps2, &g_ps->fid, 0); }
static int ps_add_null_fid(void) { return lfp_poll_add(g_ps2, NULL, 0); }
static int ps_add_null_ps(void) { return lfp_poll_add(NULL, &g_cq->fid, 0); }
static int ps_add_flags(void) { return lfp_poll_add(g_ps2, &g_cq->fid, 1); }
static int ps_add_twice(void) { return lfp_poll_add(g_ps, &g_poll_cq->fid, 0); }
static int ps_add_twice_cntr(void) { return lfp_poll_add(g_ps, &g_poll_cntr->fid, 0); }
static int ps_add_other_set(void) { return lfp_poll_add(g_ps2, &g_poll_cq->fid, 0); }
static int ps_del_non_member(void) { return lfp_poll_del(g_ps, &g_cq->fid, 0); }
static int ps_del_other_set(void) { return lfp_poll_del(g_ps2, &g_poll_cq->fid, 0); }
static int ps_del_flags(void) { return lfp_poll_del(g_ps, &g_poll_cq->fid, 1); }
static int ps_del_eq(void) { return lfp_poll_del(g_ps, &g_eq->fid, 0); }
static int ps_poll_negative(void)
{
	void *ctx[1];
	return lfp_poll(g_ps, ctx, -1);
}
static int ps_poll_null_ctx(void) { return lfp_poll(g_ps, NULL, 1); }
static int ps_poll_null(void)
{
	void *ctx[1];
	return lfp_poll(NULL, ctx, 1);
}
static int ps_close_with_members(void) { return lfp_poll_close(g_ps); }
static int ps_close_null(void) { return lfp_poll_close(NULL); }

/* ------------------------------------------------------------ trywait rows */

static int tw_null(void) { return lfp_trywait(NULL, 1); }
static int tw_count0(void)
{
	struct lfp_fid *f[1] = { &g_eq_fd->fid };
	return lfp_trywait(f, 0);
}
static int tw_none_alone(void)
{
	struct lfp_fid *f[1] = { &g_eq->fid };
	return lfp_trywait(f, 1);
}
static int tw_none_first(void)
{
	struct lfp_fid *f[2] = { &g_cq->fid, &g_eq_fd->fid };
	return lfp_trywait(f, 2);
}
static int tw_none_last(void)
{
	struct lfp_fid *f[3] = { &g_eq_fd->fid, &g_ws->fid, &g_cntr->fid };
	return lfp_trywait(f, 3);
}
static int tw_none_middle(void)
{
	struct lfp_fid *f[3] = { &g_eq_fd->fid, &g_eq->fid, &g_ws->fid };
	return lfp_trywait(f, 3);
}
static int tw_null_element(void)
{
	struct lfp_fid *f[2] = { &g_eq_fd->fid, NULL };
	return lfp_trywait(f, 2);
}
static int tw_poll_set(void)
{
	struct lfp_fid *f[2] = { &g_eq_fd->fid, &g_ps->fid };
	return lfp_trywait(f, 2);
}

/* ------------------------------------------------------------ control rows */

static int ctl_null_fid(void)
{
	int fd;
	return lfp_control(NULL, LFP_GETWAIT, &fd);
}
static int ctl_unknown_cmd(void)
{
	int fd;
	return lfp_control(&g_eq_fd->fid, 99, &fd);
}
static int ctl_unknown_cmd_cq(void)
{
	int fd;
	return lfp_control(&g_cq->fid, 99, &fd);
}
static int ctl_unknown_cmd_cntr(void)
{
	int fd;
	return lfp_control(&g_cntr->fid, 99, &fd);
}
static int ctl_unknown_cmd_ws(void)
{
	int fd;
	return lfp_control(&g_ws->fid, 99, &fd);
}
static int ctl_getwait_null_arg(void) { return lfp_control(&g_eq_fd->fid, LFP_GETWAIT, NULL); }
static int ctl_getwaitobj_null_arg(void) { return lfp_control(&g_eq_fd->fid, LFP_GETWAITOBJ, NULL); }
static int ctl_getwait_null_arg_ws(void) { return lfp_control(&g_ws->fid, LFP_GETWAIT, NULL); }
static int ctl_getwait_null_arg_cq(void) { return lfp_control(&g_cq->fid, LFP_GETWAIT, NULL); }
static int ctl_getwait_none(void)
{
	int fd;
	return lfp_control(&g_eq->fid, LFP_GETWAIT, &fd);
}
static int ctl_getwait_yield(void)
{
	int fd;
	return lfp_control(&g_eq_yield->fid, LFP_GETWAIT, &fd);
}
static int ctl_getwait_member(void)
{
	int fd;
	return lfp_control(&g_eq_member->fid, LFP_GETWAIT, &fd);
}
static int ctl_getwait_cntr_member(void)
{
	int fd;
	return lfp_control(&g_cntr_member->fid, LFP_GETWAIT, &fd);
}
static int ctl_poll_set(void)
{
	int fd;
	return lfp_control(&g_ps->fid, LFP_GETWAIT, &fd);
}
static int ctl_pollfd_too_small(void)
{
	struct lfp_wait_pollfd o;
	memset(&o, 0, sizeof(o));
	return lfp_control(&g_ws_pollfd->fid, LFP_GETWAIT, &o);
}
static int close_null(void) { return lfp_close(NULL); }
static int close_busy_ws(void) { return lfp_close(&g_ws->fid); }
static int close_busy_ps(void) { return lfp_close(&g_ps->fid); }
static int close_busy_cq(void) { return lfp_close(&g_poll_cq->fid); }

/* ------------------------------------------------------------ the table */

struct row {
	const char *name;
	int (*call)(void);
	int expected;
};

#define ROW(f, e) { #f, f, e }

static const struct row rows[] = {
	/* ring */
	ROW(ring_init_null_ring, -EINVAL),
	ROW(ring_init_null_mem, -EINVAL),
	ROW(ring_init_cap0, -EINVAL),
	ROW(ring_init_cap1, -EINVAL),
	ROW(ring_init_cap3, -EINVAL),
	ROW(ring_init_slot0, -EINVAL),
	ROW(ring_init_misaligned, -EINVAL),
	ROW(ring_create_null_rp, -EINVAL),
	ROW(ring_create_cap_over_max, -EINVAL),
	ROW(ring_create_slot_over_int32, -EINVAL),
	ROW(ring_enqueue_null_ring, -EINVAL),
	ROW(ring_enqueue_null_src, -EINVAL),
	ROW(ring_enqueue_oversize, -EMSGSIZE),
	ROW(ring_dequeue_null_ring, -EINVAL),
	ROW(ring_dequeue_null_dst, -EINVAL),
	ROW(ring_dequeue_short, -LFP_ETOOSMALL),
	ROW(ring_peek_null_ticket, -EINVAL),
	ROW(ring_peek_null_dst, -EINVAL),
	ROW(ring_consume_null, -EINVAL),
	ROW(ring_consume_stale, -ESTALE),
	/* EQ */
	ROW(eq_open_null_result, -EINVAL),
	ROW(eq_open_wait99, -EINVAL),
	ROW(eq_open_pollfd, -EINVAL),
	ROW(eq_open_flags, -EINVAL),
	ROW(eq_open_set_without_set, -EINVAL),
	ROW(eq_open_set_with_fd, -EINVAL),
	ROW(eq_open_set_not_a_wait_set, -EINVAL),
	ROW(eq_open_size_too_big, -EINVAL),
	ROW(eq_open_entry_too_big, -EINVAL),
	ROW(eq_read_null_eq, -EINVAL),
	ROW(eq_read_null_event, -EINVAL),
	ROW(eq_read_null_buf, -EINVAL),
	ROW(eq_read_bad_flags, -EINVAL),
	ROW(eq_read_peek_plus_write, -EINVAL),
	ROW(eq_read_short, -LFP_ETOOSMALL),
	ROW(eq_read_peek_short, -LFP_ETOOSMALL),
	ROW(eq_readerr_null_buf, -EINVAL),
	ROW(eq_readerr_null_eq, -EINVAL),
	ROW(eq_readerr_bad_flags, -EINVAL),
	ROW(eq_readerr_size_null_data, -EINVAL),
	ROW(eq_readerr_none_queued, -EAGAIN),
	ROW(eq_write_null_eq, -EINVAL),
	ROW(eq_write_null_buf, -EINVAL),
	ROW(eq_write_flags, -EINVAL),
	ROW(eq_write_oversize, -EMSGSIZE),
	ROW(eq_write_err_null_err, -EINVAL),
	ROW(eq_write_err_null_eq, -EINVAL),
	ROW(eq_write_err_err0, -EINVAL),
	ROW(eq_write_err_size_null_data, -EINVAL),
	ROW(eq_write_err_oversize, -EMSGSIZE),
	ROW(eq_sread_none, -ENOSYS),
	ROW(eq_sread_set_member, -ENOSYS),
	ROW(eq_sread_null_eq, -EINVAL),
	ROW(eq_sread_fd_null_event, -EINVAL),
	ROW(eq_sread_fd_bad_flags, -EINVAL),
	ROW(eq_close_null, -EINVAL),
	ROW(eq_overrun_write, -LFP_EOVERRUN),
	ROW(eq_overrun_write_err, -LFP_EOVERRUN),
	/* CQ */
	ROW(cq_open_null_result, -EINVAL),
	ROW(cq_open_bad_format, -EINVAL),
	ROW(cq_open_bad_flags, -EINVAL),
	ROW(cq_open_wait99, -EINVAL),
	ROW(cq_open_pollfd, -EINVAL),
	ROW(cq_open_set_without_set, -EINVAL),
	ROW(cq_open_set_not_a_wait_set, -EINVAL),
	ROW(cq_open_size_too_big, -EINVAL),
	ROW(cq_write_count0, -EINVAL),
	ROW(cq_write_null_entries, -EINVAL),
	ROW(cq_write_null_cq, -EINVAL),
	ROW(cq_writeerr_err0, -EINVAL),
	ROW(cq_writeerr_null, -EINVAL),
	ROW(cq_writeerr_size_null_data, -EINVAL),
	ROW(cq_writeerr_oversize, -EMSGSIZE),
	ROW(cq_read_null_buf, -EINVAL),
	ROW(cq_read_null_cq, -EINVAL),
	ROW(cq_readerr_null, -EINVAL),
	ROW(cq_readerr_bad_flags, -EINVAL),
	ROW(cq_readerr_size_null_data, -EINVAL),
	ROW(cq_readerr_none_queued, -EAGAIN),
	ROW(cq_sread_none, -ENOSYS),
	ROW(cq_sread_set_member, -ENOSYS),
	ROW(cq_sread_null_buf, -EINVAL),
	ROW(cq_sread_count0, -EINVAL),
	ROW(cq_close_null, -EINVAL),
	ROW(cq_close_in_poll_set, -EBUSY),
	ROW(cq_signal_null, -EINVAL),
	/* counter */
	ROW(cntr_open_null_result, -EINVAL),
	ROW(cntr_open_flags, -EINVAL),
	ROW(cntr_open_wait99, -EINVAL),
	ROW(cntr_open_set_without_set, -EINVAL),
	ROW(cntr_open_set_not_a_wait_set, -EINVAL),
	ROW(cntr_add_null, -EINVAL),
	ROW(cntr_adderr_null, -EINVAL),
	ROW(cntr_set_null, -EINVAL),
	ROW(cntr_seterr_null, -EINVAL),
	ROW(cntr_inc_null, -EINVAL),
	ROW(cntr_incerr_null, -EINVAL),
	ROW(cntr_wait_none, -ENOSYS),
	ROW(cntr_wait_set_member, -ENOSYS),
	ROW(cntr_wait_null, -EINVAL),
	ROW(cntr_close_null, -EINVAL),
	ROW(cntr_close_in_poll_set, -EBUSY),
	/* pollfds */
	ROW(pfds_init_null, -EINVAL),
	ROW(pfds_add_null, -EINVAL),
	ROW(pfds_add_negative, -EINVAL),
	ROW(pfds_add_dup, -EEXIST),
	ROW(pfds_mod_absent, -ENOENT),
	ROW(pfds_mod_null, -EINVAL),
	ROW(pfds_del_absent, -ENOENT),
	ROW(pfds_del_negative, -ENOENT),
	ROW(pfds_del_null, -EINVAL),
	ROW(pfds_get_null_out, -EINVAL),
	ROW(pfds_get_null_set, -EINVAL),
	ROW(pfds_get_null_fd, -EINVAL),
	ROW(pfds_get_too_small, -LFP_ETOOSMALL),
	/* wait sets */
	ROW(ws_open_null_result, -EINVAL),
	ROW(ws_open_none, -EINVAL),
	ROW(ws_open_set, -EINVAL),
	ROW(ws_open_obj99, -EINVAL),
	ROW(ws_open_flags, -EINVAL),
	ROW(ws_add_fd_mutex_cond, -EINVAL),
	ROW(ws_add_fd_null, -EINVAL),
	ROW(ws_add_fd_negative, -EINVAL),
	ROW(ws_add_fd_dup, -EEXIST),
	ROW(ws_add_fd_dup_pollfd, -EEXIST),
	ROW(ws_add_fd_own_eventfd, -EEXIST),
	ROW(ws_add_fd_closed, -EBADF),
	ROW(ws_add_fd_regular_file, -EPERM),
	ROW(ws_del_fd_absent, -ENOENT),
	ROW(ws_del_fd_own_eventfd, -ENOENT),
	ROW(ws_del_fd_null, -EINVAL),
	ROW(ws_wait_null, -EINVAL),
	ROW(ws_wait_not_a_set, -EINVAL),
	ROW(ws_close_with_members, -EBUSY),
	ROW(ws_close_with_fd_only, -EBUSY),
	ROW(ws_close_null, -EINVAL),
	/* poll sets */
	ROW(ps_open_flags, -EINVAL),
	ROW(ps_open_null, -EINVAL),
	ROW(ps_add_eq, -EINVAL),
	ROW(ps_add_wait_set, -EINVAL),
	ROW(ps_add_poll_set, -EINVAL),
	ROW(ps_add_null_fid, -EINVAL),
	ROW(ps_add_null_ps, -EINVAL),
	ROW(ps_add_flags, -EINVAL),
	ROW(ps_add_twice, -EEXIST),
	ROW(ps_add_twice_cntr, -EEXIST),
	ROW(ps_add_other_set, -EBUSY),
	ROW(ps_del_non_member, -ENOENT),
	ROW(ps_del_other_set, -ENOENT),
	ROW(ps_del_flags, -EINVAL),
	ROW(ps_del_eq, -EINVAL),
	ROW(ps_poll_negative, -EINVAL),
	ROW(ps_poll_null_ctx, -EINVAL),
	ROW(ps_poll_null, -EINVAL),
	ROW(ps_close_with_members, -EBUSY),
	ROW(ps_close_null, -EINVAL),
	/* lfp_trywait */
	ROW(tw_null, -EINVAL),
	ROW(tw_count0, -EINVAL),
	ROW(tw_none_alone, -EINVAL),
	ROW(tw_none_first, -EINVAL),
	ROW(tw_none_last, -EINVAL),
	ROW(tw_none_middle, -EINVAL),
	ROW(tw_null_element, -EINVAL),
	ROW(tw_poll_set, -EINVAL),
	/* lfp_control / lfp_close */
	ROW(ctl_null_fid, -EINVAL),
	ROW(ctl_unknown_cmd, -ENOSYS),
	ROW(ctl_unknown_cmd_cq, -ENOSYS),
	ROW(ctl_unknown_cmd_cntr, -ENOSYS),
	ROW(ctl_unknown_cmd_ws, -ENOSYS),
	ROW(ctl_getwait_null_arg, -EINVAL),
	ROW(ctl_getwaitobj_null_arg, -EINVAL),
	ROW(ctl_getwait_null_arg_ws, -EINVAL),
	ROW(ctl_getwait_null_arg_cq, -EINVAL),
	ROW(ctl_getwait_none, -ENODATA),
	ROW(ctl_getwait_yield, -ENODATA),
	ROW(ctl_getwait_member, -ENODATA),
	ROW(ctl_getwait_cntr_member, -ENODATA),
	ROW(ctl_poll_set, -ENOSYS),
	ROW(ctl_pollfd_too_small, -LFP_ETOOSMALL),
	ROW(close_null, -EINVAL),
	ROW(close_busy_ws, -EBUSY),
	ROW(close_busy_ps, -EBUSY),
	ROW(close_busy_cq, -EBUSY),
};

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

Test(badinput, table)
{
	size_t i, nrows = sizeof(rows) / sizeof(rows[0]);
	int ret, bad = 0;

	fixture_up();
	for (i = 0; i < nrows; i++) {
		ret = rows[i].call();
		if (ret != rows[i].expected)
			bad++;
		cr_expect_eq(ret, rows[i].expected, "row %s: got %d (%s), expected %d (%s)",
		             rows[i].name, ret, lfp_strerror(ret), rows[i].expected,
		             lfp_strerror(rows[i].expected));
	}
	cr_log_info("%zu rows, %d mismatches", nrows, bad);
	check_eq_intact();
	check_cq_intact();
	check_ring_intact();
	check_sets_intact();
	fixture_down();
}

/* The rows run twice in a row must still hold (no row changed state). */
Test(badinput, table_twice_no_state_change)
{
	size_t i, nrows = sizeof(rows) / sizeof(rows[0]);
	int pass, ret;

	fixture_up();
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nrows; i++) {
			ret = rows[i].call();
			cr_expect_eq(ret, rows[i].expected, "pass %d row %s: got %d, expected %d",
			             pass, rows[i].name, ret, rows[i].expected);
		}
	check_eq_intact();
	check_cq_intact();
	check_ring_intact();
	check_sets_intact();
	fixture_down();
}

/* ------------------------------------------------------------ resources */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

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
