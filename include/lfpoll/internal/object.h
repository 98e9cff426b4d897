/*
 * lfpoll internal: what every lfpoll object class shares (EQ, CQ, counter,
 * wait set, poll set), written once.  Do not include directly.
 *
 *   class      a struct lfp__class per object class: its public ops table
 *              first (an object's fid.ops points at it), then where the
 *              object keeps its parts and what the class adds at close.
 *              The generic ops below find an object's parts through it.
 *   waitable   an object's wait side, struct lfp__waitable: its own wait
 *              object, membership in a wait set, or none (NONE); for a
 *              wait set, its own signal and the core its members join.
 *              One implementation of the open-time checks, trywait and
 *              control for every class.
 *
 * Every object begins with its struct lfp_fid, so a struct lfp_fid * is also
 * a pointer to the object.
 */
#ifndef LFPOLL_INTERNAL_OBJECT_H
#define LFPOLL_INTERNAL_OBJECT_H

#include "../common.h"
#include "signal.h"
#include "wait_kinds.h"
#include "wait_member.h"
#include "poll_link.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_wait;

/*
 * The wait side of an object.  sig is what its producers notify and its
 * blocking calls sleep on; core is the member list sig serves (a set's
 * own; a member's set's).
 */
struct lfp__waitable {
	struct lfp__signal *sig;      /* own, the set's signal, or NULL (NONE) */
	struct lfp__set_core *core;   /* a set's own core, a member's set's, or NULL */
	struct lfp_fid *set;          /* a member's wait set (LFP_WAIT_SET), or NULL */
	enum lfp_wait_obj wait_obj;   /* as resolved (UNSPEC -> its kind) */
	struct lfp__wait_member member; /* a member's link in its set's core */
};

/*
 * An object class.  The offsets are from the object's start (its fid);
 * 0 means the class has no such part.
 */
struct lfp__class {
	struct lfp_fid_ops ops;       /* first: an object's fid.ops points here */
	uint32_t fclass;
	size_t waitable;              /* its struct lfp__waitable */
	size_t link;                  /* its struct lfp_poll_link */
	int (*ready)(void *obj);      /* W3 of its trywait: > 0 while it holds work */
	int (*busy)(void *obj);       /* close's own -EBUSY rule, or NULL */
	void (*fini)(void *obj);      /* release what open made, then obj */
};

/* The class of one of lfpoll's own objects (a binding's object has plain
 * fid ops: never ask for its class). */
LFP_INLINE const struct lfp__class *lfp__class_of(const struct lfp_fid *fid)
{
	return (const struct lfp__class *)(const void *)fid->ops;
}

LFP_INLINE struct lfp__waitable *lfp__obj_waitable(struct lfp_fid *fid)
{
	return (struct lfp__waitable *)(void *)((char *)fid + lfp__class_of(fid)->waitable);
}

/*
 * A new object of class k and size bytes, zeroed, its fid filled in
 * (context: the application's), on its own line pairs; NULL without
 * memory.
 */
LFP_INLINE void *lfp__obj_new(const struct lfp__class *k, size_t size, void *context)
{
	struct lfp_fid *fid;
	void *p;

	if (posix_memalign(&p, LFP_CACHELINE_PAIR, size))
		return NULL;
	memset(p, 0, size);
	fid = (struct lfp_fid *)p;
	fid->fclass = k->fclass;
	fid->abi = LFP_ABI_VERSION;
	fid->context = context;
	fid->ops = &k->ops;
	return p;
}

/* ---------------------------------------------------------------- wait side */

/*
 * Open-time check of a queue's wait object: -EINVAL for an unknown object,
 * a wait-set-only kind (POLLFD), SET without a set, or a set without SET.
 */
LFP_INLINE int lfp__waitable_check(enum lfp_wait_obj obj, const struct lfp_wait *set)
{
	const struct lfp__wait_kind *k;

	if (obj == LFP_WAIT_SET)
		return set ? 0 : -EINVAL;
	if (set)
		return -EINVAL;
	if (obj == LFP_WAIT_NONE)
		return 0;
	k = lfp__wait_kind_of(obj);
	return k && !(k->flags & LFP__KIND_SET_ONLY) ? 0 : -EINVAL;
}

/*
 * The wait side of wait set ws, through which it hands a joining member
 * its core (to link into) and its signal (to notify); NULL when ws is not
 * a wait set.
 */
LFP_INLINE struct lfp__waitable *lfp__wait_set_of(struct lfp_wait *ws)
{
	struct lfp_fid *set = (struct lfp_fid *)(void *)ws;

	if (!ws || set->fclass != LFP_CLASS_WAIT)
		return NULL;
	return lfp__obj_waitable(set);
}

/* A queue's wait side at open (obj and set checked by lfp__waitable_check):
 * own, its own signal of obj's kind (own's storage), or membership in set. */
LFP_INLINE int lfp__waitable_open(struct lfp__waitable *w, struct lfp__signal *own,
                                  enum lfp_wait_obj obj, struct lfp_wait *set,
                                  struct lfp_fid *fid)
{
	const struct lfp__wait_kind *k;
	struct lfp__waitable *sw;
	int ret;

	w->wait_obj = obj;
	if (obj == LFP_WAIT_SET) {
		sw = lfp__wait_set_of(set);
		if (!sw)
			return -EINVAL;
		lfp__set_core_bind(sw->core, &w->member, fid);
		w->sig = sw->sig;
		w->core = sw->core;
		w->set = (struct lfp_fid *)(void *)set;
		return 0;
	}
	if (obj == LFP_WAIT_NONE)
		return 0;
	k = lfp__wait_kind_of(obj);
	ret = lfp__signal_init(own, k);
	if (ret)
		return ret;
	w->sig = own;
	w->wait_obj = k->obj;
	return 0;
}

/* A wait set's wait side: its own signal, already initialised, and the
 * core its members join. */
LFP_INLINE void lfp__waitable_own(struct lfp__waitable *w, struct lfp__signal *sig,
                                  struct lfp__set_core *core)
{
	w->sig = sig;
	w->core = core;
	w->wait_obj = sig->kind->obj;
}

LFP_INLINE void lfp__waitable_close(struct lfp__waitable *w)
{
	if (w->set)
		lfp__set_core_unbind(w->core, &w->member);
	else if (w->sig)
		lfp__signal_fini(w->sig);
}

/* Whether sread/cntr_wait may block: only on the object's own wait object
 * (NONE has none; a set's members are waited on through the set). */
LFP_INLINE int lfp__waitable_can_block(const struct lfp__waitable *w)
{
	return w->sig && !w->set;
}

/* P2-P4 after a publish, when the object has a wait object. */
LFP_INLINE void lfp__waitable_notify(struct lfp__waitable *w)
{
	if (w->sig)
		lfp__signal_notify(w->sig);
}

#ifdef LFP_STATS
/* Producer-side system calls (signals sent) on the object's wait object. */
LFP_INLINE uint64_t lfp__waitable_stat_signals(struct lfp__waitable *w)
{
	return w->sig ? lfp__ld_rlx_u64(&w->sig->stat_signals) : 0;
}
#endif

LFP_INLINE int lfp__waitable_trywait(struct lfp__waitable *w,
                                     int (*ready)(void *), void *arg)
{
	if (!w->sig)
		return -EINVAL;
	if (w->set) /* clearing the set's signal re-checks every member */
		return w->set->ops->trywait(w->set);
	return lfp__signal_trywait(w->sig, ready, arg);
}

/* fds: a wait set's array of fds (LFP_GETWAIT of a POLLFD set), else NULL. */
LFP_INLINE int lfp__waitable_control(struct lfp__waitable *w, struct lfp_pollfds *fds,
                                     int command, void *arg)
{
	int ret = lfp__control_begin(w->wait_obj, command, arg);

	if (ret != 1)
		return ret;
	if (!lfp__waitable_can_block(w))
		return -ENODATA; /* NONE; members are waited on through the set */
	return lfp__signal_control(w->sig, fds, command, arg);
}

/* ---------------------------------------------------------------- fid ops */

LFP_INLINE struct lfp_poll_link *lfp__obj_poll_link(struct lfp_fid *fid)
{
	return (struct lfp_poll_link *)(void *)((char *)fid + lfp__class_of(fid)->link);
}

/* close: -EBUSY while in a poll set or while the class says so; else the
 * wait side is closed (a member leaves its set) and the object freed. */
LFP_INLINE int lfp__obj_close(struct lfp_fid *fid)
{
	const struct lfp__class *k = lfp__class_of(fid);

	if (k->link && lfp__poll_link_in_set(lfp__obj_poll_link(fid)))
		return -EBUSY;
	if (k->busy && k->busy(fid))
		return -EBUSY;
	if (k->waitable)
		lfp__waitable_close(lfp__obj_waitable(fid));
	k->fini(fid);
	return 0;
}

/*
 * The last step of a queue's open: its wait side (lfp__waitable_open).  On
 * failure the object is released, by its class's fini.  0 or -errno.
 */
LFP_INLINE int lfp__obj_open_wait(struct lfp_fid *fid, struct lfp__signal *own,
                                  enum lfp_wait_obj obj, struct lfp_wait *set)
{
	int ret = lfp__waitable_open(lfp__obj_waitable(fid), own, obj, set, fid);

	if (ret)
		lfp__class_of(fid)->fini(fid);
	return ret;
}

LFP_INLINE int lfp__obj_control(struct lfp_fid *fid, int command, void *arg)
{
	return lfp__waitable_control(lfp__obj_waitable(fid), NULL, command, arg);
}

LFP_INLINE int lfp__obj_trywait(struct lfp_fid *fid)
{
	return lfp__waitable_trywait(lfp__obj_waitable(fid), lfp__class_of(fid)->ready,
	                             fid);
}

/* ready for queue-like classes: the class's own check. */
LFP_INLINE int lfp__obj_ready(struct lfp_fid *fid)
{
	return lfp__class_of(fid)->ready(fid);
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_OBJECT_H */
