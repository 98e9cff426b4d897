/*
 * Opening and closing a verbs CQ object: a plain or extended CQ, or an
 * events object for a CQ the application polls itself (docs/verbs.md, "The
 * arm race" and "Shared channels and wait objects").
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <stdlib.h>
#include <string.h>

/* The attributes with their defaults filled in, checked; 0 or -errno. */
static int cq_attr(enum vcq_kind kind, const struct lfp_verbs_cq_attr *attr,
                   struct lfp_verbs_cq_attr *a)
{
	memset(a, 0, sizeof(*a));
	if (attr)
		*a = *attr;
	if (kind == VCQ_EVENTS && a->solicited_only)
		return -EINVAL; /* the owner arms the CQ, not the binding */
	if (a->wait_obj == LFP_WAIT_UNSPEC)
		a->wait_obj = LFP_WAIT_FD;
	if (a->wait_obj != LFP_WAIT_NONE && a->wait_obj != LFP_WAIT_FD &&
	    a->wait_obj != LFP_WAIT_SET)
		return -EINVAL;
	if ((a->wait_obj == LFP_WAIT_SET) != (a->wait_set != NULL))
		return -EINVAL;
	if (a->wait_set && lfp_binding_check(&a->wait_set->fid))
		return -EPROTO; /* built with other lfpoll headers */
	return 0;
}

static void vcq_free(struct vcq *v)
{
	lfp_verbs__mirror_close(v);
	lfp_binding_member_close(v->member);
	pthread_mutex_destroy(&v->lock);
	free(v->stash);
	free(v);
}

static const uint32_t kind_class[] = {
	LFP_CLASS_VERBS_CQ, LFP_CLASS_VERBS_CQ_EX, LFP_CLASS_VERBS_CQ_EVENTS
};

/* A new, unpublished object for src's CQ, or NULL: no memory. */
static struct vcq *vcq_new(const struct vcq_src *src,
                           struct ibv_comp_channel *channel,
                           const struct lfp_verbs_cq_attr *a, void *context)
{
	struct vcq *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->kind = src->kind;
	v->esz = src->kind == VCQ_EX ? sizeof(struct lfp_verbs_wc_ex) :
	         sizeof(struct ibv_wc);
	/* An events object polls nothing: no stash. */
	if (src->kind != VCQ_EVENTS)
		v->stash = calloc(STASH, v->esz);
	if ((src->kind != VCQ_EVENTS && !v->stash) ||
	    pthread_mutex_init(&v->lock, NULL))
		goto fail;
	lfp_binding_init(&v->pub.fid, kind_class[src->kind], context,
	                 &lfp_verbs__cq_ops);
	/* Filled by the device: no producer pushes its poll link (sticky). */
	if (lfp_binding_member_open(&v->pub.fid, 1, &v->member)) {
		pthread_mutex_destroy(&v->lock);
		goto fail;
	}
	v->cq = src->cq;
	v->cqx = src->cqx;
	v->wc_flags = src->wc_flags;
	v->poll = src->kind == VCQ_EX ? lfp_verbs__poll_ex :
	          src->kind == VCQ_PLAIN ? lfp_verbs__poll_plain : NULL;
	v->channel = channel;
	v->ack_batch = a->ack_batch ? a->ack_batch : LFP_VERBS_ACK_BATCH;
	v->solicited_only = a->solicited_only;
	v->wait_obj = a->wait_obj;
	/* Set before v is published: a drain that credits v wakes it. */
	v->wait_set = a->wait_set;
	v->evfd = v->epfd = -1;
	v->armed = 1; /* before it is published and armed: see vcq_step */
	return v;
fail:
	free(v->stash);
	free(v);
	return NULL;
}

/* Every open, with cancellation off (an arm may write a command fd). */
static int vcq_open(const struct vcq_src *src, struct ibv_comp_channel *channel,
                    const struct lfp_verbs_cq_attr *attr,
                    struct lfp_verbs_cq **vcqp, void *context)
{
	struct ibv_cq *cq = src->cq;
	struct lfp_verbs_cq_attr a;
	struct vcq *v;
	int ret;

	if (!cq || !channel || !vcqp || channel->fd < 0 || cq->channel != channel)
		return -EINVAL;
	ret = cq_attr(src->kind, attr, &a);
	if (ret)
		return ret;
	v = vcq_new(src, channel, &a, context);
	if (!v)
		return -ENOMEM;
	/* The mirror too, so a credit finds it. */
	if (a.wait_obj == LFP_WAIT_FD) {
		ret = lfp_verbs__mirror_open(v);
		if (ret)
			goto fail;
	}
	ret = lfp_verbs__register(v);
	if (ret)
		goto fail;
	/* Arm at open (docs/verbs.md), with solicited_only, outside the
	 * registration's lock: other opens and closes go on meanwhile.
	 * Before v joins its wait set: until the arm has worked, no re-check
	 * of the set may run v's trywait step, which would poll the CQ's
	 * completions into a stash that a failed open could only drop.  An
	 * events object's CQ is armed by its owner. */
	ret = src->kind == VCQ_EVENTS ? 0 : ibv_req_notify_cq(cq, v->solicited_only);
	if (ret) {
		lfp_verbs__unregister(v, 1);
		ret = -ret;
		goto fail;
	}
	if (a.wait_set) {
		ret = lfp_verbs__join_set(v);
		if (ret)
			goto fail;
		/* A CQE that landed before the arm raised no event, and a
		 * waiter of the set whose re-check ran before v joined would
		 * sleep with it pending.  Wake the set so that its re-check
		 * polls v (design.md P2-P4: the notify's full barrier follows
		 * the join; a waiter that arms its signal after it re-checks
		 * after it, and one armed before it is woken).  Meanwhile an
		 * event for v that made the channel fd readable is drained by
		 * no member of the set: its waiters may return from lfp_wait
		 * and find nothing until v has joined, never sleep on it.  FD
		 * and NONE objects have no waiter before open returns. */
		lfp_binding_notify(a.wait_set);
	}
	*vcqp = &v->pub;
	return 0;
fail:
	vcq_free(v);
	return ret;
}

/*
 * Every open: src->cq is the plain CQ, or the extended CQ seen as one
 * (ibv_cq_ex_to_cq), which is what its channel's events name.
 */
int lfp_verbs__cq_open(const struct vcq_src *src, struct ibv_comp_channel *channel,
                       const struct lfp_verbs_cq_attr *attr,
                       struct lfp_verbs_cq **vcqp, void *context)
{
	int cancel = cancel_off(), ret;

	ret = vcq_open(src, channel, attr, vcqp, context);
	cancel_restore(cancel);
	return ret;
}

API int lfp_verbs_cq_open(struct ibv_cq *cq, struct ibv_comp_channel *channel,
                          const struct lfp_verbs_cq_attr *attr,
                          struct lfp_verbs_cq **vcqp, void *context)
{
	struct vcq_src src = { VCQ_PLAIN, cq, NULL, 0 };

	return lfp_verbs__cq_open(&src, channel, attr, vcqp, context);
}

/*
 * An events object: the channel events of cq, a CQ on a channel that
 * binding CQs use and that the application polls and arms itself, are
 * handed to it (lfp_verbs_cq_events_read, its wait object) instead of
 * being acked and dropped by whichever binding object reads them.
 */
API int lfp_verbs_cq_events_open(struct ibv_cq *cq, struct ibv_comp_channel *channel,
                                 const struct lfp_verbs_cq_attr *attr,
                                 struct lfp_verbs_cq **vcqp, void *context)
{
	struct vcq_src src = { VCQ_EVENTS, cq, NULL, 0 };

	return lfp_verbs__cq_open(&src, channel, attr, vcqp, context);
}

/* Close, with cancellation off: it reads the channel and closes fds. */
static int vcq_close(struct vcq *v)
{
	int busy;

	if (lfp_binding_in_poll_set(v->member))
		return -EBUSY;
	pthread_mutex_lock(&v->lock);
	busy = guard_busy(&v->callers);
	pthread_mutex_unlock(&v->lock);
	if (busy)
		return -EBUSY;
	lfp_verbs__unregister(v, 0);
	/* Unregistered: no credit posts to the mirror any more. */
	vcq_free(v);
	return 0;
}

/*
 * Close: -EBUSY while in a poll set or while a thread is inside another call
 * on the object (the misuse close can see).  Reads what is left on the
 * channel, crediting other CQs' events to them, and acks every event read
 * for this CQ, so that the caller's ibv_destroy_cq does not wait.  Stashed
 * completions are dropped.  The last CQ of a wait set on a channel takes
 * the fd out of the set.
 */
API int lfp_verbs_cq_close(struct lfp_verbs_cq *vcq)
{
	int ret, cancel;

	if (!vcq)
		return -EINVAL;
	cancel = cancel_off();
	ret = vcq_close((struct vcq *)vcq);
	cancel_restore(cancel);
	return ret;
}
