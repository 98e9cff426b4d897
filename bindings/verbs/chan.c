/*
 * The channels the binding's CQs use, and the registry that maps an
 * ibv_cq to its binding object.
 *
 * Shared channels: any number of binding CQs, of any wait object, may
 * share a channel.  Whoever drains the channel credits each event to the
 * CQ it names and wakes that CQ's waiters: a wait set through
 * lfp_binding_notify, an FD-mode CQ through its mirror (mirror.c).
 *
 * Locking: a process-wide registry maps ibv_cq to the binding object, so
 * that an event read from a shared channel is credited to the CQ it names;
 * that credit uses atomics only, so no two CQ locks are ever held together.
 * Opens and closes also keep one record per channel in use, with its count
 * of binding CQs, and under it one record per wait set with the count of
 * that set's CQs on the channel: the first CQ on the channel sets
 * O_NONBLOCK, the first of a set adds the channel fd to the set, the last
 * of a set removes it.  Those changes and the registry's are made under
 * memb_lock, which only open and close take, so they are one step for
 * every other open and close.  It cannot be reg_lock: adding an fd takes
 * the wait set's lock, under which the set's re-check takes a CQ's lock and
 * then reg_lock.  Lock order: memb_lock, then wait set, then CQ, then
 * registry; a credit made under the registry lock wakes another set through
 * its signal, whose mutex is a leaf, as does a trywait step's put-back wake
 * of its own set, under the CQ lock.
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>

static pthread_mutex_t memb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vchan *chan_head;   /* memb_lock */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vcq *reg_head;

/*
 * Counts what other CQs credited to v and acks pending events (all with
 * force, else only a full batch); lock held.  Returns the credits taken.
 */
unsigned lfp_verbs__ack_events(struct vcq *v, int force)
{
	/* Full barrier: pairs with the crediting CQ's add. */
	unsigned taken = atomic_exchange(&v->foreign, 0);

	v->unacked += taken;
	if (v->kind == VCQ_EVENTS)
		v->events += taken;
	if (v->unacked && (force || v->unacked >= v->ack_batch)) {
		ibv_ack_cq_events(v->cq, v->unacked);
		v->unacked = 0;
	}
	return taken;
}

/* The record of channel ch, or NULL; memb_lock held. */
static struct vchan *chan_find(struct ibv_comp_channel *ch)
{
	struct vchan *c;

	for (c = chan_head; c; c = c->next)
		if (c->channel == ch)
			return c;
	return NULL;
}

/* The first user of c sets O_NONBLOCK on the channel fd.  memb_lock held. */
static int chan_first(struct vchan *c)
{
	int fd = c->channel->fd, fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return neg_errno();
	c->orig_fl = fl;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return neg_errno();
	return 0;
}

/*
 * v joins its channel's record (made from *spare when v is the channel's
 * first binding CQ).  The first user sets O_NONBLOCK; every later one finds
 * it done, since this runs under memb_lock as the last user's removal
 * does.  The count is taken even on failure: chan_put undoes it.
 * memb_lock held.
 */
static int chan_get(struct vcq *v, struct vchan **spare)
{
	struct vchan *c = chan_find(v->channel);

	if (!c) {
		c = *spare;
		*spare = NULL;
		c->channel = v->channel;
		c->orig_fl = -1;
		c->next = chan_head;
		chan_head = c;
	}
	v->chan = c;
	if (c->users++)
		return 0;
	c->setter = v;
	return chan_first(c);
}

/*
 * User v of c leaves (its CQ already unregistered, its set record put); the
 * last one frees c, and restores the fd flags when failed says v's open
 * failed and v was the open that set them: a failed open leaves the fd as
 * it found it, and one that found O_NONBLOCK set (by a sharer that has
 * closed since) leaves it set.  memb_lock held.
 */
static void chan_put(struct vchan *c, const struct vcq *v, int failed)
{
	struct vchan **pp;
	int restore = failed && c->setter == v;

	if (c->setter == v) /* v's memory may serve a later open */
		c->setter = NULL;
	if (--c->users)
		return;
	if (restore && c->orig_fl >= 0 && !(c->orig_fl & O_NONBLOCK))
		(void)fcntl(c->channel->fd, F_SETFL, c->orig_fl);
	for (pp = &chan_head; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c);
}

/*
 * A CQ of set ws joins channel c: the set's record (made from *spare when
 * it is the set's first CQ on c), and the first adds the fd to the set.
 * The count is taken even on failure: set_put undoes it.  memb_lock held.
 */
static int set_get(struct vchan *c, struct lfp_wait *ws, struct vset **spare,
                   struct vset **vsp)
{
	struct vset *vs;
	int ret;

	for (vs = c->sets; vs && vs->ws != ws; vs = vs->next)
		;
	if (!vs) {
		vs = *spare;
		*spare = NULL;
		vs->ws = ws;
		vs->next = c->sets;
		c->sets = vs;
	}
	*vsp = vs;
	if (vs->users++ == 0) {
		ret = lfp_wait_add_fd(ws, c->channel->fd, POLLIN, vs);
		if (ret)
			return ret;
		vs->in_set = 1;
	}
	return 0;
}

/* A CQ of vs's set leaves c; the set's last takes the fd out.  memb_lock held. */
static void set_put(struct vchan *c, struct vset *vs)
{
	struct vset **pp;

	if (--vs->users) {
		/* (Test builds only: Y takes the fd out when any CQ of the
		 * set leaves, not the last; make check-broken.) */
		if (LFP__BROKEN("Y") && vs->in_set) {
			(void)lfp_wait_del_fd(vs->ws, c->channel->fd);
			vs->in_set = 0;
		}
		return;
	}
	if (vs->in_set)
		(void)lfp_wait_del_fd(vs->ws, c->channel->fd);
	for (pp = &c->sets; *pp; pp = &(*pp)->next)
		if (*pp == vs) {
			*pp = vs->next;
			break;
		}
	free(vs);
}

static struct vcq *reg_find(struct ibv_cq *cq)
{
	struct vcq *v;

	for (v = reg_head; v; v = v->next)
		if (v->cq == cq)
			return v;
	return NULL;
}

/* v into the registry: 0, or -EEXIST when its CQ has a binding object. */
static int reg_add(struct vcq *v)
{
	int ret = 0;

	pthread_mutex_lock(&reg_lock);
	if (reg_find(v->cq)) {
		ret = -EEXIST;
	} else {
		v->next = reg_head;
		reg_head = v;
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

/* Take v out of the registry. */
static void reg_del(struct vcq *v)
{
	struct vcq **pp;

	pthread_mutex_lock(&reg_lock);
	for (pp = &reg_head; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

/*
 * v leaves the registry and its records; with failed, as an open that
 * failed (it drains nothing and puts the fd flags back), else as a close.
 * Unregistered, v is credited nothing more, so every event read for it is
 * acked here.  Lock order: memb_lock (held), then CQ, then registry.
 */
static void unregister_locked(struct vcq *v, int failed)
{
	pthread_mutex_lock(&v->lock);
	if (!failed)
		(void)lfp_verbs__drain_channel(v);
	reg_del(v);
	lfp_verbs__ack_events(v, 1);
	pthread_mutex_unlock(&v->lock);
	if (v->vs)
		set_put(v->chan, v->vs);
	chan_put(v->chan, v, failed);
}

/*
 * An open's registration, as one step for every other open and close: one
 * binding object per CQ (-EEXIST, checked first: a refused open changes
 * nothing, not even the fd's flags), the channel's record and the set's.
 * 0 or -errno, with nothing left registered on failure.
 */
int lfp_verbs__register(struct vcq *v)
{
	struct vchan *spare = calloc(1, sizeof(*spare));
	struct vset *spare_set = NULL;
	int ret;

	if (v->wait_set)
		spare_set = calloc(1, sizeof(*spare_set)); /* the set's, if first */
	if (!spare || (v->wait_set && !spare_set)) {
		free(spare);
		free(spare_set);
		return -ENOMEM;
	}
	pthread_mutex_lock(&memb_lock);
	ret = reg_add(v);
	if (!ret) {
		ret = chan_get(v, &spare);
		if (!ret && v->wait_set)
			ret = set_get(v->chan, v->wait_set, &spare_set, &v->vs);
		if (ret)
			unregister_locked(v, 1);
	}
	pthread_mutex_unlock(&memb_lock);
	free(spare);
	free(spare_set);
	return ret;
}

/*
 * A registered CQ joins its wait set, the last step of its open (after its
 * arm: docs/verbs.md).  On failure it is unregistered as a failed open.
 */
int lfp_verbs__join_set(struct vcq *v)
{
	int ret;

	pthread_mutex_lock(&memb_lock);
	ret = lfp_binding_join(v->wait_set, v->member);
	if (ret)
		unregister_locked(v, 1);
	pthread_mutex_unlock(&memb_lock);
	return ret;
}

/*
 * Undo lfp_verbs__register: with failed, for an open that failed after it
 * (v joined no set: nothing else ran v's trywait step, so it polled nothing
 * and the CQ's completions are still the application's); else for a close,
 * which leaves the set first and reads what is left on the channel.
 */
void lfp_verbs__unregister(struct vcq *v, int failed)
{
	pthread_mutex_lock(&memb_lock);
	if (!failed && v->wait_set)
		lfp_binding_leave(v->wait_set, v->member);
	unregister_locked(v, failed);
	pthread_mutex_unlock(&memb_lock);
}

/*
 * Read every pending event of v's channel; lock held.  Events naming v are
 * counted for batched acks; events naming another binding object are
 * credited to it (it acks them, and its waiters are woken); events naming a
 * CQ with no binding object (one whose object was closed, or one the
 * application did not register with lfp_verbs_cq_events_open) are acked at
 * once, so that its ibv_destroy_cq does not wait.  Returns the number of
 * events naming v (each was a wake of v's waiters, now taken), or -errno.
 */
int lfp_verbs__drain_channel(struct vcq *v)
{
	struct ibv_cq *ev_cq;
	struct vcq *o;
	void *ev_ctx;
	int own = 0;

	for (;;) {
		errno = 0;
		if (ibv_get_cq_event(v->channel, &ev_cq, &ev_ctx)) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return own;
			return neg_errno();
		}
		if (ev_cq == v->cq) {
			own++;
			v->unacked++;
			if (v->kind == VCQ_EVENTS)
				v->events++;
			atomic_store_explicit(&v->armed, 0, memory_order_relaxed);
			continue;
		}
		pthread_mutex_lock(&reg_lock);
		o = reg_find(ev_cq);
		if (o) {
			/* Noted unarmed first: the count's full-barrier RMW
			 * then releases the note to o's ack_events exchange,
			 * after which o's trywait reads the note (it re-arms). */
			atomic_store_explicit(&o->armed, 0, memory_order_relaxed);
			(void)atomic_fetch_add(&o->foreign, 1);
			/* Wake o's waiters after the count (design.md P1
			 * before P2): its set, or its mirror.  o stays
			 * registered, so alive, while reg_lock is held. */
			if (o->wait_set)
				lfp_binding_notify(o->wait_set);
			else if (o->evfd >= 0)
				lfp_verbs__mirror_post(o);
		} else {
			ibv_ack_cq_events(ev_cq, 1);
		}
		pthread_mutex_unlock(&reg_lock);
	}
}
