/*
 * lfp_trywait over arrays that mix EQs, CQs, counters and wait sets, all
 * with FD wait objects (fi_poll(3): one native wait object type per call).
 *
 *   0 when every object is idle; -EAGAIN when any has an event, an error
 *   or a counter change; -EINVAL when any has no wait object (NONE);
 *   clear-then-recheck: after 0, a write to any of them makes its fd
 *   readable, and trywait 0 again after the drain clears it.
 *
 * YIELD and MUTEX_COND arrays are checked for their return codes only; a
 * cross-thread wake is in stress_sets.c.
 */
#include <lfpoll/lfpoll.h>

#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

/*
 * The objects: an EQ, a CQ and a counter with their own wait object, and
 * a wait set holding an EQ, a CQ and a counter of its own.
 */
struct objs {
	struct lfp_eq *eq;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
	struct lfp_wait *ws;
	struct lfp_eq *ws_eq;
	struct lfp_cq *ws_cq;
	struct lfp_cntr *ws_cntr;
	struct lfp_fid *fids[4];
	int fds[4];
};

static void open_objs(struct objs *o, enum lfp_wait_obj obj)
{
	struct lfp_eq_attr ea;
	struct lfp_cq_attr ca;
	struct lfp_cntr_attr na;
	struct lfp_wait_attr wa = { obj, 0 };
	int i;

	memset(o, 0, sizeof(*o));
	memset(&ea, 0, sizeof(ea));
	memset(&ca, 0, sizeof(ca));
	memset(&na, 0, sizeof(na));
	ea.size = ca.size = 16;
	ea.wait_obj = ca.wait_obj = na.wait_obj = obj;
	cr_assert_eq(lfp_eq_open(&ea, &o->eq, NULL), 0);
	cr_assert_eq(lfp_cq_open(&ca, &o->cq, NULL), 0);
	cr_assert_eq(lfp_cntr_open(&na, &o->cntr, NULL), 0);
	cr_assert_eq(lfp_wait_open(&wa, &o->ws), 0);
	ea.wait_obj = ca.wait_obj = na.wait_obj = LFP_WAIT_SET;
	ea.wait_set = ca.wait_set = na.wait_set = o->ws;
	cr_assert_eq(lfp_eq_open(&ea, &o->ws_eq, NULL), 0);
	cr_assert_eq(lfp_cq_open(&ca, &o->ws_cq, NULL), 0);
	cr_assert_eq(lfp_cntr_open(&na, &o->ws_cntr, NULL), 0);
	o->fids[0] = &o->eq->fid;
	o->fids[1] = &o->cq->fid;
	o->fids[2] = &o->cntr->fid;
	o->fids[3] = &o->ws->fid;
	for (i = 0; i < 4; i++) {
		o->fds[i] = -1;
		if (obj == LFP_WAIT_FD)
			cr_assert_eq(lfp_control(o->fids[i], LFP_GETWAIT, &o->fds[i]), 0,
			             "GETWAIT on object %d", i);
	}
}

static void close_objs(struct objs *o)
{
	cr_assert_eq(lfp_eq_close(o->ws_eq), 0);
	cr_assert_eq(lfp_cq_close(o->ws_cq), 0);
	cr_assert_eq(lfp_cntr_close(o->ws_cntr), 0);
	cr_assert_eq(lfp_wait_close(o->ws), 0);
	cr_assert_eq(lfp_eq_close(o->eq), 0);
	cr_assert_eq(lfp_cq_close(o->cq), 0);
	cr_assert_eq(lfp_cntr_close(o->cntr), 0);
}

/* Which of the four fds are readable, as a bit mask. */
static unsigned readable_mask(const struct objs *o)
{
	unsigned m = 0;
	int i;

	for (i = 0; i < 4; i++)
		if (fd_readable(o->fds[i], 0))
			m |= 1u << i;
	return m;
}

/*
 * The kinds of work, each made on one object, with the object's index in
 * fids[], and how to drain it.
 */
enum work {
	EQ_EVENT, EQ_ERROR, CQ_COMP, CQ_ERROR, CNTR_INC, CNTR_INCERR,
	WS_EQ_EVENT, WS_CQ_COMP, WS_CQ_ERROR, WS_CNTR_INC, WS_CNTR_INCERR, NWORK
};

static const char *const work_name[NWORK] = {
	"EQ event", "EQ error", "CQ completion", "CQ error", "counter inc",
	"counter incerr", "wait-set EQ event", "wait-set CQ completion",
	"wait-set CQ error", "wait-set counter inc", "wait-set counter incerr"
};

static int work_owner(enum work w)
{
	switch (w) {
	case EQ_EVENT: case EQ_ERROR: return 0;
	case CQ_COMP: case CQ_ERROR: return 1;
	case CNTR_INC: case CNTR_INCERR: return 2;
	default: return 3;
	}
}

static void make_work(struct objs *o, enum work w)
{
	struct lfp_cq_entry ce = { o };
	struct lfp_cq_err_entry cerr;
	struct lfp_eq_err_entry eerr;

	memset(&cerr, 0, sizeof(cerr));
	memset(&eerr, 0, sizeof(eerr));
	cerr.err = eerr.err = EIO;
	switch (w) {
	case EQ_EVENT:    cr_assert_eq(lfp_eq_write(o->eq, LFP_NOTIFY, NULL, 0, 0), 0); break;
	case EQ_ERROR:    cr_assert_eq(lfp_eq_write_err(o->eq, &eerr), (ssize_t)sizeof(eerr)); break;
	case CQ_COMP:     cr_assert_eq(lfp_cq_write(o->cq, &ce, 1), 1); break;
	case CQ_ERROR:    cr_assert_eq(lfp_cq_writeerr(o->cq, &cerr), (ssize_t)sizeof(cerr)); break;
	case CNTR_INC:    cr_assert_eq(lfp_cntr_inc(o->cntr, 1), 0); break;
	case CNTR_INCERR: cr_assert_eq(lfp_cntr_incerr(o->cntr, 1), 0); break;
	case WS_EQ_EVENT: cr_assert_eq(lfp_eq_write(o->ws_eq, LFP_NOTIFY, NULL, 0, 0), 0); break;
	case WS_CQ_COMP:  cr_assert_eq(lfp_cq_write(o->ws_cq, &ce, 1), 1); break;
	case WS_CQ_ERROR: cr_assert_eq(lfp_cq_writeerr(o->ws_cq, &cerr), (ssize_t)sizeof(cerr)); break;
	case WS_CNTR_INC: cr_assert_eq(lfp_cntr_inc(o->ws_cntr, 1), 0); break;
	default:          cr_assert_eq(lfp_cntr_incerr(o->ws_cntr, 1), 0); break;
	}
}

/* Drain queues; counters need no draining (trywait reports them once). */
static void drain(struct objs *o, enum work w)
{
	struct lfp_cq_entry ce;
	struct lfp_cq_err_entry cerr;
	struct lfp_eq_err_entry eerr;
	uint32_t ev;

	memset(&cerr, 0, sizeof(cerr));
	memset(&eerr, 0, sizeof(eerr));
	switch (w) {
	case EQ_EVENT:    cr_assert_eq(lfp_eq_read(o->eq, &ev, NULL, 0, 0), 0); break;
	case EQ_ERROR:    cr_assert_eq(lfp_eq_readerr(o->eq, &eerr, 0), (ssize_t)sizeof(eerr)); break;
	case CQ_COMP:     cr_assert_eq(lfp_cq_read(o->cq, &ce, 1), 1); break;
	case CQ_ERROR:    cr_assert_eq(lfp_cq_readerr(o->cq, &cerr, 0), 1); break;
	case WS_EQ_EVENT: cr_assert_eq(lfp_eq_read(o->ws_eq, &ev, NULL, 0, 0), 0); break;
	case WS_CQ_COMP:  cr_assert_eq(lfp_cq_read(o->ws_cq, &ce, 1), 1); break;
	case WS_CQ_ERROR: cr_assert_eq(lfp_cq_readerr(o->ws_cq, &cerr, 0), 1); break;
	default:          break;
	}
}

static int is_counter(enum work w)
{
	return w == CNTR_INC || w == CNTR_INCERR || w == WS_CNTR_INC ||
	       w == WS_CNTR_INCERR;
}

/* ------------------------------------------------------------ tests */

Test(trywait, idle_mixed_array_is_zero)
{
	struct objs o;

	open_objs(&o, LFP_WAIT_FD);
	cr_assert_eq(lfp_trywait(o.fids, 4), 0);
	cr_assert_eq(lfp_trywait(o.fids, 4), 0, "twice");
	cr_assert_eq(readable_mask(&o), 0, "idle objects with readable fds");
	close_objs(&o);
}

Test(trywait, any_work_is_eagain_and_drain_gives_zero)
{
	struct objs o;
	int w;

	open_objs(&o, LFP_WAIT_FD);
	for (w = 0; w < NWORK; w++) {
		cr_assert_eq(lfp_trywait(o.fids, 4), 0, "before %s", work_name[w]);
		make_work(&o, (enum work)w);
		cr_assert_eq(lfp_trywait(o.fids, 4), -EAGAIN, "%s pending", work_name[w]);
		/* The object alone, and in every position of the array. */
		cr_assert_eq(lfp_trywait(&o.fids[work_owner((enum work)w)], 1),
		             is_counter((enum work)w) ? 0 : -EAGAIN,
		             "%s, its object alone", work_name[w]);
		drain(&o, (enum work)w);
		cr_assert_eq(lfp_trywait(o.fids, 4), 0, "after draining %s", work_name[w]);
	}
	close_objs(&o);
}

Test(trywait, work_is_found_whatever_the_position)
{
	struct objs o;
	struct lfp_fid *perm[4];
	int w, rot, i;

	open_objs(&o, LFP_WAIT_FD);
	for (w = 0; w < NWORK; w++) {
		if (is_counter((enum work)w))
			continue; /* reported once: checked above */
		make_work(&o, (enum work)w);
		for (rot = 0; rot < 4; rot++) {
			for (i = 0; i < 4; i++)
				perm[i] = o.fids[(i + rot) % 4];
			cr_assert_eq(lfp_trywait(perm, 4), -EAGAIN, "%s, rotation %d",
			             work_name[w], rot);
		}
		drain(&o, (enum work)w);
	}
	cr_assert_eq(lfp_trywait(o.fids, 4), 0);
	close_objs(&o);
}

Test(trywait, none_object_is_einval)
{
	struct objs o;
	struct lfp_cq *none;
	struct lfp_eq *eq_none;
	struct lfp_cntr *c_none;
	struct lfp_poll *ps;
	struct lfp_fid *arr[5];
	int pos;

	open_objs(&o, LFP_WAIT_FD);
	cr_assert_eq(lfp_cq_open(NULL, &none, NULL), 0);
	cr_assert_eq(lfp_eq_open(NULL, &eq_none, NULL), 0);
	cr_assert_eq(lfp_cntr_open(NULL, &c_none, NULL), 0);
	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	for (pos = 0; pos < 5; pos++) {
		int i, k = 0;

		for (i = 0; i < 5; i++)
			arr[i] = i == pos ? &none->fid : o.fids[k++];
		cr_assert_eq(lfp_trywait(arr, 5), -EINVAL, "NONE CQ at %d", pos);
	}
	arr[0] = &eq_none->fid;
	cr_assert_eq(lfp_trywait(arr, 1), -EINVAL, "NONE EQ");
	arr[0] = &c_none->fid;
	cr_assert_eq(lfp_trywait(arr, 1), -EINVAL, "NONE counter");
	arr[0] = &ps->fid;
	cr_assert_eq(lfp_trywait(arr, 1), -EINVAL, "a poll set has no wait object");
	arr[0] = NULL;
	cr_assert_eq(lfp_trywait(arr, 1), -EINVAL, "NULL entry");
	cr_assert_eq(lfp_trywait(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_trywait(o.fids, 0), -EINVAL, "count 0");

	/* With work on a later object the answer is still -EINVAL.  (With the
	 * busy object first, lfp_trywait answers -EAGAIN: the order decides;
	 * see the report.) */
	make_work(&o, CQ_COMP);
	arr[0] = &none->fid;
	arr[1] = o.fids[1];
	cr_assert_eq(lfp_trywait(arr, 2), -EINVAL, "NONE before a busy CQ");
	drain(&o, CQ_COMP);

	cr_assert_eq(lfp_cq_close(none), 0);
	cr_assert_eq(lfp_eq_close(eq_none), 0);
	cr_assert_eq(lfp_cntr_close(c_none), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
	close_objs(&o);
}

/* The heart of the protocol: after 0, the next event signals. */
Test(trywait, clear_then_recheck_makes_the_written_fd_readable)
{
	struct objs o;
	unsigned m;
	int w, owner;

	open_objs(&o, LFP_WAIT_FD);
	for (w = 0; w < NWORK; w++) {
		owner = work_owner((enum work)w);
		cr_assert_eq(lfp_trywait(o.fids, 4), 0, "before %s", work_name[w]);
		cr_assert_eq(readable_mask(&o), 0, "before %s", work_name[w]);
		make_work(&o, (enum work)w);
		m = readable_mask(&o);
		cr_assert(m & (1u << owner), "%s after trywait 0: fd %d not readable (mask %x)",
		          work_name[w], owner, m);
		cr_assert_eq(m & ~(1u << owner), 0, "%s made other fds readable (mask %x)",
		             work_name[w], m);
		drain(&o, (enum work)w);
		if (is_counter((enum work)w))
			cr_assert_eq(lfp_trywait(o.fids, 4), -EAGAIN,
			             "%s is reported to trywait once", work_name[w]);
		cr_assert_eq(lfp_trywait(o.fids, 4), 0, "after %s", work_name[w]);
		cr_assert_eq(readable_mask(&o), 0, "trywait 0 after %s leaves fds readable",
		             work_name[w]);
	}

	/* lfp_cq_signal after trywait 0 signals the CQ's fd. */
	cr_assert_eq(lfp_trywait(o.fids, 4), 0);
	cr_assert_eq(lfp_cq_signal(o.cq), 0);
	cr_assert(fd_readable(o.fds[1], 0), "lfp_cq_signal after trywait 0");
	cr_assert_eq(lfp_cq_signal(o.ws_cq), 0);
	cr_assert(fd_readable(o.fds[3], 0), "lfp_cq_signal on a set member after trywait 0");
	close_objs(&o);
}

/* Only the objects a trywait armed signal; the whole array was armed. */
Test(trywait, many_events_after_one_trywait_leave_every_fd_readable)
{
	struct objs o;
	int w;

	open_objs(&o, LFP_WAIT_FD);
	cr_assert_eq(lfp_trywait(o.fids, 4), 0);
	for (w = 0; w < NWORK; w++)
		make_work(&o, (enum work)w);
	cr_assert_eq(readable_mask(&o), 0xf, "mask %x", readable_mask(&o));
	for (w = NWORK - 1; w >= 0; w--) /* errors before events */
		drain(&o, (enum work)w);
	while (lfp_trywait(o.fids, 4) == -EAGAIN)
		; /* counters: once each */
	cr_assert_eq(readable_mask(&o), 0);
	close_objs(&o);
}

static void codes_under(enum lfp_wait_obj obj)
{
	struct objs o;
	int w;

	open_objs(&o, obj);
	cr_assert_eq(lfp_trywait(o.fids, 4), 0);
	for (w = 0; w < NWORK; w++) {
		make_work(&o, (enum work)w);
		cr_assert_eq(lfp_trywait(o.fids, 4), -EAGAIN, "%s", work_name[w]);
		drain(&o, (enum work)w);
		cr_assert_eq(lfp_trywait(o.fids, 4), 0, "after %s", work_name[w]);
	}
	close_objs(&o);
}

Test(trywait, return_codes_mutex_cond) { codes_under(LFP_WAIT_MUTEX_COND); }
Test(trywait, return_codes_yield)      { codes_under(LFP_WAIT_YIELD); }
Test(trywait, return_codes_unspec)     { codes_under(LFP_WAIT_UNSPEC); }

/* A POLLFD set in a trywait array, used through its pollfd array. */
Test(trywait, pollfd_set_member_write_after_trywait)
{
	struct lfp_wait_attr wa = { LFP_WAIT_POLLFD, 0 };
	struct lfp_wait *ws;
	struct lfp_cq_attr ca;
	struct lfp_cq *cq;
	struct lfp_cq_entry e = { &e };
	struct lfp_fid *f;
	struct pollfd fds[4];
	struct lfp_wait_pollfd w = { 0, 4, fds };

	cr_assert_eq(lfp_wait_open(&wa, &ws), 0);
	memset(&ca, 0, sizeof(ca));
	ca.wait_obj = LFP_WAIT_SET;
	ca.wait_set = ws;
	cr_assert_eq(lfp_cq_open(&ca, &cq, NULL), 0);
	f = &ws->fid;
	cr_assert_eq(lfp_control(f, LFP_GETWAIT, &w), 0);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(poll(fds, w.nfds, 0), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_geq(poll(fds, w.nfds, 0), 1, "member write after trywait 0");
	cr_assert_eq(lfp_trywait(&f, 1), -EAGAIN);
	cr_assert_eq(lfp_cq_read(cq, &e, 1), 1);
	cr_assert_eq(lfp_trywait(&f, 1), 0);
	cr_assert_eq(poll(fds, w.nfds, 0), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
}
