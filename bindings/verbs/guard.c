/*
 * The sleep of the binding's blocking calls, their one cancellation point
 * (docs/verbs.md, "Cancellation").
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <poll.h>

/* A thread cancelled asleep leaves its call's guard, and holds nothing else. */
static void guard_unwind(void *arg)
{
	struct guard *g = arg;

	/* (Test builds only: U leaves the count raised; make check-broken.) */
	if (!LFP__BROKEN("U"))
		(void)atomic_fetch_sub(g->callers, 1); /* as guard_leave */
}

/*
 * poll(2) on nfds fds for at most ms (< 0: no limit), inside a call that
 * entered guard g: the caller's cancel state is back on for the poll only,
 * so a pending or new request is acted on there and nowhere else in the
 * call.  The caller holds no lock and has consumed nothing it has not
 * finished with (the trywait step before the sleep found no work), so a
 * thread cancelled here leaves the object as a timeout would.  Returns
 * poll's count or -errno.
 */
int lfp_verbs__sleep(struct guard *g, struct pollfd *pfd, unsigned nfds, int ms)
{
	int ret, err, ignored;

	pthread_cleanup_push(guard_unwind, g);
	(void)pthread_setcancelstate(g->cancel, &ignored);
	ret = poll(pfd, (nfds_t)nfds, ms);
	err = errno;
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &ignored);
	pthread_cleanup_pop(0);
	return ret < 0 ? -err : ret;
}
