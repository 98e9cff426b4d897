/*
 * A verbs CQ as an lfpoll object: the trywait step, the reads and the
 * blocking read, for plain and extended CQs alike (docs/verbs.md).
 *
 * To make blocking safe, drain the channel (non-blocking reads until
 * EAGAIN, EINTR retried), then poll; if empty, arm with ibv_req_notify_cq
 * and poll again, because a CQE that landed before the arm raises no event.
 * What the polls find goes to a stash that reads serve first.  Channel
 * events are acked on the CQ they name, in batches; close flushes every ack
 * so ibv_destroy_cq never waits forever.
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <poll.h>
#include <string.h>

/* A plain CQ: ibv_poll_cq, whose error is a negative errno or -1. */
int lfp_verbs__poll_plain(struct vcq *v, void *dst, int n)
{
	int got = ibv_poll_cq(v->cq, n, (struct ibv_wc *)dst);

	if (got < 0)
		return got < -1 ? got : neg_errno();
	return got;
}

/* Poll the CQ into the stash's free room; lock held.  Count or -errno. */
static int poll_into_stash(struct vcq *v)
{
	unsigned room = STASH - v->stash_len, tail, n;
	int got;

	if (room == 0)
		return 0;
	tail = (v->stash_head + v->stash_len) % STASH;
	n = STASH - tail < room ? STASH - tail : room;
	got = v->poll(v, v->stash + (size_t)tail * v->esz, (int)n);
	if (got < 0)
		return got;
	v->stash_len += (unsigned)got;
	return got;
}

/*
 * A read of v's channel failed with err; lock held.  Sticky, on v and on the
 * channel: the reader of every CQ on it sees it once that CQ is empty, also
 * when another CQ's drain met it (a set's look stops at the first member
 * with work, the failing one).  v->chan is fixed from open to close, so
 * it is read here without memb_lock.  Relaxed: the error is its own
 * message.
 */
static void vcq_failed(struct vcq *v, int err)
{
	v->err = err;
	atomic_store_explicit(&v->chan->err, err, memory_order_relaxed);
}

/* v's error, or its channel's, or 0; lock held. */
static int vcq_err(const struct vcq *v)
{
	return v->err ? v->err :
	       atomic_load_explicit(&v->chan->err, memory_order_relaxed);
}

/*
 * The trywait step after its first reads; lock held.  0 when blocking on
 * the channel is safe, -EAGAIN when completions are stashed, -errno on
 * failure.  *took is set when the drain read an event naming v.
 */
static int vcq_step(struct vcq *v, int *took)
{
	int ret;

	ret = lfp_verbs__drain_channel(v);
	if (ret < 0) {
		vcq_failed(v, ret);
		return ret;
	}
	if (ret > 0)
		*took = 1;
	(void)lfp_verbs__ack_events(v, 0);
	if (v->stash_len)
		return -EAGAIN;
	ret = poll_into_stash(v);
	if (ret)
		return ret < 0 ? ret : -EAGAIN;
	if (!atomic_load_explicit(&v->armed, memory_order_relaxed)) {
		/* Noted before the arm: the event it raises may be read at
		 * once by another CQ on the channel, which clears the note;
		 * noting after would wipe that out and leave us unarmed. */
		atomic_store_explicit(&v->armed, 1, memory_order_relaxed);
		ret = ibv_req_notify_cq(v->cq, v->solicited_only);
		if (ret) {
			atomic_store_explicit(&v->armed, 0, memory_order_relaxed);
			return -ret; /* a positive errno */
		}
	}
	/* A CQE that landed before the arm raised no event: look again.
	 * (Test builds only: P leaves this out, the lost wake-up it
	 * prevents; make check-broken.) */
	if (LFP__BROKEN("P"))
		return 0;
	ret = poll_into_stash(v);
	if (ret)
		return ret < 0 ? ret : -EAGAIN;
	return 0;
}

/*
 * An events object's step; lock held.  The binding neither polls nor arms
 * the CQ (its owner does): 0 when no event for it waits to be handed out,
 * -EAGAIN when one does, -errno on failure.
 */
static int events_step(struct vcq *v, int *took)
{
	int ret = lfp_verbs__drain_channel(v);

	if (ret < 0) {
		vcq_failed(v, ret);
		return ret;
	}
	if (ret > 0)
		*took = 1;
	(void)lfp_verbs__ack_events(v, 0);
	return v->events ? -EAGAIN : 0;
}

/*
 * The trywait step; lock held.  0 when blocking on the channel is safe,
 * -EAGAIN when completions are stashed (for an events object: events wait
 * to be handed out), -errno on failure.
 *
 * A step that took a wake (a post on v's eventfd, or an event naming v,
 * which made the channel fd readable for every waiter of v) and then
 * reports work puts the wake back, as lfpoll's own trywait does
 * (design.md 2.2): its caller may take only part of the work, and another
 * thread asleep on v's fd (or v's set) must not sleep on with the rest.
 * The wake stays until a step finds nothing, which clears it.  The put-back
 * is a post (mirror_post's protocol) or a set notify (the set's signal
 * mutex is a leaf), made after the step's polls: a waiter it wakes runs its
 * own step and finds what is left, or nothing.
 */
static int vcq_trywait_locked(struct vcq *v)
{
	int took = v->evfd >= 0 && lfp_verbs__mirror_clear(v);
	int ret = v->kind == VCQ_EVENTS ? events_step(v, &took) : vcq_step(v, &took);

	if (ret && took) {
		if (v->evfd >= 0)
			lfp_verbs__mirror_post(v);
		else if (v->wait_set)
			lfp_binding_notify(v->wait_set);
	}
	return ret;
}

/* ------------------------------------------------------------ fid ops */

static int vcq_trywait(struct lfp_fid *fid)
{
	struct vcq *v = to_vcq(fid);
	struct lfp_fid *set;
	struct guard g;
	int ret;

	if (v->wait_obj == LFP_WAIT_NONE)
		return -EINVAL;
	guard_enter(&g, &v->callers);
	if (v->wait_set) {
		set = &v->wait_set->fid;
		ret = lfp_trywait(&set, 1); /* re-checks every member */
	} else {
		pthread_mutex_lock(&v->lock);
		ret = vcq_trywait_locked(v);
		pthread_mutex_unlock(&v->lock);
	}
	guard_leave(&g);
	return ret;
}

/*
 * Readiness for wait sets and poll sets: the full trywait step, so that a
 * set that finds nothing has also re-armed the CQ.  Errors count as ready:
 * the reader will see them.
 */
static int vcq_ready(struct lfp_fid *fid)
{
	struct vcq *v = to_vcq(fid);
	int ret, cancel = cancel_off(); /* the set's call may be a sleeping one */

	pthread_mutex_lock(&v->lock);
	ret = vcq_trywait_locked(v);
	pthread_mutex_unlock(&v->lock);
	cancel_restore(cancel);
	return ret != 0;
}

static int vcq_control(struct lfp_fid *fid, int command, void *arg)
{
	struct vcq *v = to_vcq(fid);

	if (!arg)
		return -EINVAL;
	if (command == LFP_GETWAITOBJ) {
		*(enum lfp_wait_obj *)arg = v->wait_obj;
		return 0;
	}
	if (command != LFP_GETWAIT)
		return -ENOSYS;
	if (v->wait_obj != LFP_WAIT_FD)
		return -ENODATA;
	*(int *)arg = v->epfd;
	return 0;
}

static struct lfp_poll_link *vcq_poll_link(struct lfp_fid *fid)
{
	return lfp_binding_poll_link(to_vcq(fid)->member);
}

static int vcq_close_fid(struct lfp_fid *fid)
{
	return lfp_verbs_cq_close((struct lfp_verbs_cq *)(void *)fid);
}

const struct lfp_fid_ops lfp_verbs__cq_ops = {
	vcq_close_fid, vcq_control, vcq_trywait, vcq_ready, NULL, vcq_poll_link
};

/* ------------------------------------------------------------ reads */

/*
 * Up to n entries (of v->esz bytes), the stash first, then the CQ.  CQEs
 * with an error status come back as polled.  Returns the count, -EAGAIN,
 * or -errno.
 */
static int vcq_read(struct vcq *v, void *out, int n)
{
	unsigned char *dst = (unsigned char *)out;
	int got = 0, r;

	pthread_mutex_lock(&v->lock);
	while (got < n && v->stash_len) {
		memcpy(dst + (size_t)got * v->esz,
		       v->stash + (size_t)v->stash_head * v->esz, v->esz);
		got++;
		v->stash_head = (v->stash_head + 1) % STASH;
		v->stash_len--;
	}
	if (got < n) {
		r = v->poll(v, dst + (size_t)got * v->esz, n - got);
		if (r < 0 && got == 0) {
			pthread_mutex_unlock(&v->lock);
			return r;
		}
		if (r > 0)
			got += r;
	}
	if (!got)
		got = vcq_err(v);
	/* Events other CQs credited to v are acked in batches here too, for
	 * a CQ that is read and never waited on.  Relaxed: a hint only; the
	 * exchange in ack_events is what pairs with the credit. */
	if (atomic_load_explicit(&v->foreign, memory_order_relaxed))
		(void)lfp_verbs__ack_events(v, 0);
	pthread_mutex_unlock(&v->lock);
	return got ? got : -EAGAIN;
}

/* The caller's read of entries of the given kind (-EINVAL otherwise). */
int lfp_verbs__cq_read_api(struct lfp_verbs_cq *vcq, void *out, int n,
                           enum vcq_kind kind)
{
	struct vcq *v = (struct vcq *)vcq;
	struct guard g;
	int ret;

	if (!v || !out || n <= 0 || v->kind != kind)
		return -EINVAL;
	guard_enter(&g, &v->callers);
	ret = vcq_read(v, out, n);
	guard_leave(&g);
	return ret;
}

API int lfp_verbs_cq_read(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n)
{
	return lfp_verbs__cq_read_api(vcq, wc, n, VCQ_PLAIN);
}

/*
 * Blocking read, in guard g: timeout in ms (< 0 infinite).  -EAGAIN on
 * timeout.  Its sleep is its only cancellation point, reached only after a
 * trywait step found nothing.
 */
static int vcq_sread(struct vcq *v, struct guard *g, void *out, int n, int timeout)
{
	struct pollfd pfd[2];
	int64_t deadline;
	int ret;

	deadline = lfp_binding_deadline(timeout);
	for (;;) {
		ret = vcq_read(v, out, n);
		if (ret != -EAGAIN || timeout == 0)
			return ret;
		pthread_mutex_lock(&v->lock);
		ret = vcq_trywait_locked(v);
		pthread_mutex_unlock(&v->lock);
		if (ret == -EAGAIN) {
			/* Work was seen, but another reader may take it: the
			 * deadline holds on every lap, not only after a sleep
			 * (docs/design.md, "Timeouts"). */
			if (lfp_binding_expired(deadline))
				return vcq_read(v, out, n);
			continue;
		}
		if (ret)
			return ret;
		/* What the mirror watches, watched directly: the channel
		 * (an event, maybe ours) and the credit eventfd. */
		pfd[0].fd = v->channel->fd;
		pfd[1].fd = v->evfd;
		pfd[0].events = pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		ret = lfp_verbs__sleep(g, pfd, 2, lfp_binding_ms_left(deadline));
		if (ret < 0 && ret != -EINTR)
			return ret;
		if (pfd[0].revents & (POLLERR | POLLNVAL)) {
			/* The device is gone (the kernel's POLLERR: the
			 * channel is closed and drained).  Completions still
			 * in the CQ come first. */
			ret = vcq_read(v, out, n);
			return ret == -EAGAIN ? -EIO : ret;
		}
		if (ret == 0 && lfp_binding_expired(deadline))
			return vcq_read(v, out, n);
	}
}

int lfp_verbs__cq_sread_api(struct lfp_verbs_cq *vcq, void *out, int n,
                            int timeout, enum vcq_kind kind)
{
	struct vcq *v = (struct vcq *)vcq;
	struct guard g;
	int ret;

	if (!v || !out || n <= 0 || v->kind != kind)
		return -EINVAL;
	if (v->wait_obj != LFP_WAIT_FD)
		return -ENOSYS; /* NONE; SET: wait on the set instead */
	/* Counted for the whole call, sleep included: close sees it. */
	guard_enter(&g, &v->callers);
	ret = vcq_sread(v, &g, out, n, timeout);
	guard_leave(&g);
	return ret;
}

API int lfp_verbs_cq_sread(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n,
                           int timeout)
{
	return lfp_verbs__cq_sread_api(vcq, wc, n, timeout, VCQ_PLAIN);
}

/*
 * An events object: the channel events for its CQ since the last call,
 * read by any binding object of the channel.  Each was acked by the
 * binding, in batches.  Returns their count, or -EAGAIN when there is none
 * (once the channel failed, that error).
 */
API int lfp_verbs_cq_events_read(struct lfp_verbs_cq *vcq)
{
	struct vcq *v = (struct vcq *)vcq;
	struct guard g;
	int ret, took = 0;

	if (!v || v->kind != VCQ_EVENTS)
		return -EINVAL;
	guard_enter(&g, &v->callers);
	pthread_mutex_lock(&v->lock);
	ret = events_step(v, &took);
	if (v->events)
		ret = (int)v->events;
	else if (ret == 0 && (ret = vcq_err(v)) == 0)
		ret = -EAGAIN;
	v->events = 0;
	pthread_mutex_unlock(&v->lock);
	guard_leave(&g);
	return ret;
}
