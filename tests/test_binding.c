/*
 * lfpoll binding interface (binding.h, lfp_binding(3)): what a compiled
 * binding may do, on a toy binding object built here with nothing but
 * the public headers and binding.h.
 *
 * The ABI check on every object a binding is given; a member handle that
 * joins a wait set (the set's lfp_wait, trywait and fd then see the
 * object's work, and lfp_binding_notify wakes an armed waiter) and a poll
 * set (sticky or not); lfp_binding_ready; an EQ held open by
 * lfp_binding_eq_attach.  The verbs suites exercise the same calls through
 * the real binding.
 */
#include <lfpoll/binding.h>

#include <lfpoll/cntr.h>
#include <lfpoll/cq.h>

#include <stdatomic.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "support.h"

#define TOY_CLASS (LFP_CLASS_BINDING + 7)

/* A binding's queue: its work is a count the test sets. */
struct toy {
	struct lfp_fid fid; /* first, as every lfpoll object */
	struct lfp_binding_member *member;
	struct lfp_wait *ws;
	atomic_int work;
};

static struct toy *to_toy(struct lfp_fid *fid)
{
	return (struct toy *)(void *)fid;
}

static int toy_close(struct lfp_fid *fid)
{
	struct toy *t = to_toy(fid);

	if (lfp_binding_in_poll_set(t->member))
		return -EBUSY;
	if (t->ws)
		lfp_binding_leave(t->ws, t->member);
	lfp_binding_member_close(t->member);
	free(t);
	return 0;
}

static int toy_control(struct lfp_fid *fid, int command, void *arg)
{
	if (!arg)
		return -EINVAL;
	if (command != LFP_GETWAITOBJ)
		return -ENOSYS;
	*(enum lfp_wait_obj *)arg = to_toy(fid)->ws ? LFP_WAIT_SET : LFP_WAIT_NONE;
	return 0;
}

/* A member's trywait is its set's. */
static int toy_trywait(struct lfp_fid *fid)
{
	struct toy *t = to_toy(fid);
	struct lfp_fid *set;

	if (!t->ws)
		return -EINVAL;
	set = &t->ws->fid;
	return lfp_trywait(&set, 1);
}

static int toy_ready(struct lfp_fid *fid)
{
	return atomic_load(&to_toy(fid)->work) > 0;
}

static struct lfp_poll_link *toy_poll_link(struct lfp_fid *fid)
{
	return lfp_binding_poll_link(to_toy(fid)->member);
}

static const struct lfp_fid_ops toy_ops = {
	toy_close, toy_control, toy_trywait, toy_ready, NULL, toy_poll_link
};

/* A toy object with a member handle; joined to ws when it is not NULL. */
static struct toy *toy_open(struct lfp_wait *ws, int sticky, void *context)
{
	struct toy *t = calloc(1, sizeof(*t));

	cr_assert_not_null(t);
	lfp_binding_init(&t->fid, TOY_CLASS, context, &toy_ops);
	cr_assert_eq(t->fid.abi, LFP_ABI_VERSION);
	cr_assert_eq(lfp_binding_member_open(&t->fid, sticky, &t->member), 0);
	cr_assert_not_null(t->member);
	if (ws) {
		cr_assert_eq(lfp_binding_join(ws, t->member), 0);
		t->ws = ws;
	}
	return t;
}

/* ------------------------------------------------------------ ABI */

Test(binding, objects_of_another_abi_are_refused)
{
	struct lfp_eq_attr ea = { .size = 8 };
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct lfp_eq *eq = open_eq_attr(&ea, NULL);
	struct toy *t = toy_open(NULL, 0, NULL);

	cr_assert_eq(lfp_binding_check(NULL), -EINVAL);
	cr_assert_eq(lfp_binding_check(&eq->fid), 0);
	eq->fid.abi = LFP_ABI_VERSION + 1;
	ws->fid.abi = LFP_ABI_VERSION + 1;
	cr_assert_eq(lfp_binding_check(&eq->fid), -EPROTO);
	cr_assert_eq(lfp_binding_eq_attach(eq, NULL), -EPROTO);
	cr_assert_eq(lfp_binding_join(ws, t->member), -EPROTO);
	eq->fid.abi = LFP_ABI_VERSION;
	ws->fid.abi = LFP_ABI_VERSION;
	/* Refused, so not attached and not joined: both close. */
	cr_assert_eq(lfp_eq_close(eq), 0);
	cr_assert_eq(lfp_wait_close(ws), 0);
	cr_assert_eq(lfp_close(&t->fid), 0);
}

Test(binding, bad_handles_and_sets_are_refused)
{
	struct lfp_poll *ps = NULL;
	struct lfp_binding_member *m = NULL;
	struct toy *t = toy_open(NULL, 0, NULL);

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_binding_member_open(NULL, 0, &m), -EINVAL);
	cr_assert_eq(lfp_binding_member_open(&t->fid, 0, NULL), -EINVAL);
	cr_assert_null(m);
	cr_assert_eq(lfp_binding_join(NULL, t->member), -EINVAL);
	cr_assert_eq(lfp_binding_join((struct lfp_wait *)(void *)ps, t->member), -EINVAL,
	             "a poll set is no wait set");
	cr_assert_eq(lfp_poll_close(ps), 0);
	cr_assert_eq(lfp_close(&t->fid), 0);
}

/* ------------------------------------------------------------ wait sets */

Test(binding, member_work_is_seen_and_notified_through_its_wait_set)
{
	struct lfp_wait *ws = open_ws(LFP_WAIT_FD);
	struct toy *t = toy_open(ws, 0, (void *)0x70);
	struct lfp_fid *set = &ws->fid;
	int fd = getwait_fd(set);

	cr_assert_eq(lfp_wait_close(ws), -EBUSY, "the set has a member");
	cr_assert_eq(lfp_wait(ws, 0), -ETIMEDOUT, "no work yet");
	atomic_store(&t->work, 1);
	cr_assert_eq(lfp_wait(ws, 0), 0, "the member's ready op says it has work");
	cr_assert_eq(trywait1(&t->fid), -EAGAIN, "a member's trywait is its set's");
	atomic_store(&t->work, 0);
	cr_assert_eq(trywait1(set), 0);
	cr_assert(!fd_readable(fd, 0));
	/* Armed: work the binding makes visible, then its notify, must make
	 * the set's fd readable for the waiter that trywait armed. */
	atomic_store(&t->work, 1);
	lfp_binding_notify(ws);
	cr_assert(fd_readable(fd, 1000), "lfp_binding_notify did not wake the set");
	cr_assert_eq(trywait1(set), -EAGAIN);
	cr_assert_eq(lfp_close(&t->fid), 0);
	cr_assert_eq(lfp_wait_close(ws), 0, "the member left the set");
}

/* ------------------------------------------------------------ poll sets */

static int poll_once(struct lfp_poll *ps, void *want)
{
	void *ctx[4] = { NULL };
	int n = lfp_poll(ps, ctx, 4);

	cr_assert_geq(n, 0);
	return n == 1 && ctx[0] == want;
}

Test(binding, sticky_member_is_checked_on_every_poll)
{
	struct lfp_poll *ps = NULL;
	struct toy *t = toy_open(NULL, 1, (void *)0x71);

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &t->fid, 0), 0);
	cr_assert(lfp_binding_in_poll_set(t->member));
	cr_assert_eq(lfp_close(&t->fid), -EBUSY, "close while in a poll set");
	cr_assert(!poll_once(ps, t->fid.context));
	/* No producer pushes a sticky link: lfp_poll kept it anyway. */
	atomic_store(&t->work, 1);
	cr_assert(poll_once(ps, t->fid.context), "sticky member with work not reported");
	cr_assert(poll_once(ps, t->fid.context), "reported while it holds work");
	cr_assert_eq(lfp_poll_del(ps, &t->fid, 0), 0);
	cr_assert(!lfp_binding_in_poll_set(t->member));
	cr_assert_eq(lfp_close(&t->fid), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

Test(binding, non_sticky_member_is_dropped_until_pushed)
{
	struct lfp_poll *ps = NULL;
	struct toy *t = toy_open(NULL, 0, (void *)0x72);

	cr_assert_eq(lfp_poll_open(NULL, &ps), 0);
	cr_assert_eq(lfp_poll_add(ps, &t->fid, 0), 0);
	atomic_store(&t->work, 1);
	cr_assert(poll_once(ps, t->fid.context), "work before the first poll");
	atomic_store(&t->work, 0);
	cr_assert(!poll_once(ps, t->fid.context));
	/* Dropped with nothing to report, and nothing pushed it since. */
	atomic_store(&t->work, 1);
	cr_assert(!poll_once(ps, t->fid.context),
	          "a non-sticky link was checked without a push");
	cr_assert_eq(lfp_poll_del(ps, &t->fid, 0), 0);
	cr_assert_eq(lfp_close(&t->fid), 0);
	cr_assert_eq(lfp_poll_close(ps), 0);
}

/* ------------------------------------------------------------ probe, EQs */

Test(binding, ready_probe)
{
	struct lfp_cq_attr ca = { .size = 8 };
	struct lfp_cq *cq = open_cq_attr(&ca, NULL);
	struct lfp_cntr *c = NULL;
	struct lfp_cq_entry e = { (void *)1 };
	struct toy *t = toy_open(NULL, 0, NULL);

	cr_assert_eq(lfp_cntr_open(NULL, &c, NULL), 0);
	cr_assert_eq(lfp_binding_ready(NULL), -EINVAL);
	cr_assert_eq(lfp_binding_ready(&c->fid), -ENOSYS, "a counter has no ready op");
	cr_assert_eq(lfp_binding_ready(&cq->fid), 0);
	cr_assert_eq(lfp_cq_write(cq, &e, 1), 1);
	cr_assert_eq(lfp_binding_ready(&cq->fid), 1);
	cr_assert_eq(lfp_binding_ready(&t->fid), 0);
	atomic_store(&t->work, 3);
	cr_assert_eq(lfp_binding_ready(&t->fid), 1);
	cr_assert_eq(lfp_close(&t->fid), 0);
	cr_assert_eq(lfp_cntr_close(c), 0);
	cr_assert_eq(lfp_cq_close(cq), 0);
}

/* Names error 5 only: NULL for any other. */
static const char *toy_strerror(int prov_errno, const void *err_data)
{
	(void)err_data;
	return prov_errno == 5 ? "toy error five" : NULL;
}

Test(binding, attached_eq_stays_open_and_names_provider_errors)
{
	struct lfp_eq_attr ea = { .size = 8 };
	struct lfp_eq *eq = open_eq_attr(&ea, NULL);
	char buf[64];

	cr_assert_eq(lfp_binding_eq_attach(NULL, NULL), -EINVAL);
	cr_assert_eq(lfp_binding_eq_attach(eq, toy_strerror), 0);
	cr_assert_str_eq(lfp_eq_strerror(eq, 5, NULL, buf, sizeof(buf)), "toy error five");
	cr_assert_str_eq(lfp_eq_strerror(eq, 5, NULL, NULL, 0), "toy error five");
	/* An error the binding has no name for: lfpoll's, never NULL. */
	cr_assert_str_eq(lfp_eq_strerror(eq, 6, NULL, buf, sizeof(buf)),
			 "provider error 6");
	cr_assert_not_null(lfp_eq_strerror(eq, 6, NULL, NULL, 0));
	cr_assert_eq(lfp_eq_close(eq), -EBUSY, "close while a binding writes to it");
	lfp_binding_eq_detach(eq);
	cr_assert_eq(lfp_eq_close(eq), 0);
}
