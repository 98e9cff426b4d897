/*
 * lfpoll binding interface: what a compiled binding (a library that turns
 * some other event source, such as libibverbs, into lfpoll objects) may use
 * besides the public API.  bindings/verbs and bindings/libfabric use
 * nothing else; lfp_binding(3) (docs/man/lfp_binding.3.md) describes the
 * rules.  A binding holds lfpoll's private parts only through handles:
 * nothing here is a layout it must know.
 *
 *   ABI       lfpoll is headers only, so a binding library and the program
 *             that links it may have been built with different headers.
 *             Every object records the LFP_ABI_VERSION that built it;
 *             lfp_binding_check refuses one whose layout the binding does
 *             not know (-EPROTO) instead of misreading it.
 *   objects   lfp_binding_init fills a binding object's fid; its ops are
 *             the binding's own.
 *   members   lfp_binding_member_open gives an object a member handle:
 *             lfp_binding_join/leave put it in a wait set,
 *             lfp_binding_poll_link gives poll sets its link.
 *   notify    lfp_binding_notify wakes a wait set's waiters after the
 *             binding found new work for a member (P2-P4 of the wait
 *             protocol: design.md section 2).
 *   probe     lfp_binding_ready: whether an object holds work, as sets see
 *             it.
 *   EQs       lfp_binding_eq_attach makes lfp_eq_close -EBUSY while the
 *             binding writes to the EQ, and names the binding's provider
 *             errors in lfp_eq_strerror.
 */
#ifndef LFPOLL_BINDING_H
#define LFPOLL_BINDING_H

#include "eq.h"
#include "wait.h"
#include "poll.h"
#include "internal/binding_member.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 0 when fid was built with the same LFP_ABI_VERSION as the caller (the
 * binding's own headers); -EPROTO when it was not; -EINVAL for NULL.
 */
LFP_INLINE int lfp_binding_check(const struct lfp_fid *fid)
{
	if (!fid)
		return -EINVAL;
	return fid->abi == LFP_ABI_VERSION ? 0 : -EPROTO;
}

/* Set up a binding object's fid: class (from LFP_CLASS_BINDING up),
 * context, ops, ABI. */
LFP_INLINE void lfp_binding_init(struct lfp_fid *fid, uint32_t fclass,
                                 void *context, const struct lfp_fid_ops *ops)
{
	fid->fclass = fclass;
	fid->abi = LFP_ABI_VERSION;
	fid->asym = 0; /* its producers fence (poll_link.h) */
	fid->context = context;
	fid->ops = ops;
}

/*
 * A member handle for the object of fid, which may then join a wait set
 * and a poll set: 0 with the handle in *mp, -EINVAL, or -ENOMEM.  sticky:
 * the object's work arrives with no producer to push its poll link (a
 * device fills it), so poll sets check it on every lfp_poll.
 */
LFP_INLINE int lfp_binding_member_open(struct lfp_fid *fid, int sticky,
                                       struct lfp_binding_member **mp)
{
	struct lfp_binding_member *m;

	if (!fid || !mp)
		return -EINVAL;
	m = (struct lfp_binding_member *)calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	lfp__poll_link_init(&m->poll, fid, sticky);
	*mp = m;
	return 0;
}

/* Free a member handle, once its object is in no set. */
LFP_INLINE void lfp_binding_member_close(struct lfp_binding_member *m)
{
	free(m);
}

/* For the fid ops' poll_link. */
LFP_INLINE struct lfp_poll_link *lfp_binding_poll_link(struct lfp_binding_member *m)
{
	return &m->poll;
}

/* Whether the object is in a poll set (close must then be -EBUSY). */
LFP_INLINE int lfp_binding_in_poll_set(struct lfp_binding_member *m)
{
	return lfp__poll_link_in_set(&m->poll);
}

/* Join ws for the object's life: 0, -EINVAL, or -EPROTO (lfp_binding_check). */
LFP_INLINE int lfp_binding_join(struct lfp_wait *ws, struct lfp_binding_member *m)
{
	int ret;

	if (!ws || !m)
		return -EINVAL;
	ret = lfp_binding_check(&ws->fid);
	if (ret)
		return ret;
	if (!lfp__wait_set_of(ws))
		return -EINVAL; /* not a wait set */
	lfp__set_core_bind(&ws->core, &m->wait, m->poll.fid);
	return 0;
}

LFP_INLINE void lfp_binding_leave(struct lfp_wait *ws, struct lfp_binding_member *m)
{
	lfp__set_core_unbind(&ws->core, &m->wait);
}

/* After the binding published work for a member of ws: wake ws's waiters
 * (P2-P4). */
LFP_INLINE void lfp_binding_notify(struct lfp_wait *ws)
{
	lfp__signal_notify(&ws->sig);
}

/*
 * Whether a queue-like object (an EQ, a CQ, a binding's queue) holds work,
 * as wait sets and poll sets see it: 1 or 0; -ENOSYS for an object without
 * that state (a counter, a set); -EINVAL for NULL.
 */
LFP_INLINE int lfp_binding_ready(struct lfp_fid *fid)
{
	if (!fid || !fid->ops)
		return -EINVAL;
	if (!fid->ops->ready)
		return -ENOSYS;
	return fid->ops->ready(fid) > 0;
}

/*
 * The binding writes to eq from now on: lfp_eq_close is -EBUSY until
 * lfp_binding_eq_detach, and name (when not NULL) names the binding's
 * provider errors in lfp_eq_strerror.  0, -EINVAL, or -EPROTO.
 */
LFP_INLINE int lfp_binding_eq_attach(struct lfp_eq *eq,
                                     const char *(*name)(int prov_errno,
                                                         const void *err_data))
{
	int ret;

	if (!eq)
		return -EINVAL;
	ret = lfp_binding_check(&eq->fid);
	if (ret)
		return ret;
	/* Full barrier; lfp_eq_close's acquire load of bind_refs pairs. */
	(void)lfp__faa_u32(&eq->bind_refs, 1);
	if (name)
		eq->prov_strerror = name;
	return 0;
}

/*
 * Deadlines for a binding's blocking calls, as lfpoll's own use them: a
 * deadline on the monotonic clock from a timeout in ms (< 0: none, -1),
 * the ms left for poll(2) (rounded up; -1 for none), and whether it passed.
 */
LFP_INLINE int64_t lfp_binding_deadline(int timeout_ms)
{
	return lfp__deadline(timeout_ms);
}

LFP_INLINE int lfp_binding_ms_left(int64_t deadline)
{
	return lfp__ms_left(deadline);
}

LFP_INLINE int lfp_binding_expired(int64_t deadline)
{
	return lfp__expired(deadline);
}

LFP_INLINE void lfp_binding_eq_detach(struct lfp_eq *eq)
{
	(void)lfp__faa_u32(&eq->bind_refs, (uint32_t)-1); /* as attach */
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_BINDING_H */
