/*
 * The provider's wait sets and poll sets: fi_poll(3) on lfpoll's.
 *
 * What differs from lfpoll's own calls, and how it is mapped:
 *   - fi_poll_add of a member already in the set, and fi_poll_del of
 *     anything that is not in it, succeed, as in libfabric's utility poll
 *     sets; lfpoll says -EEXIST and -ENOENT.  Their flags are ignored, as
 *     there.
 *   - an EQ cannot join a poll set (-FI_EINVAL), as a poll set opened with
 *     fi_poll_open refuses one in libfabric's utility code too (it accepts
 *     EQs only in the poll set inside a wait set).  An object is in at most
 *     one poll set (-FI_EBUSY for a second).
 */
#include "prov.h"

/* ---------------------------------------------------------------- wait sets */

static int pwait_wait(struct fid_wait *fid, int timeout)
{
	return lfp_wait(container_of(fid, struct pwait, ws)->lfp, timeout);
}

static struct fi_ops_wait pwait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = pwait_wait,
};

int pwait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
               struct fid_wait **wsp)
{
	struct pfabric *f = container_of(fabric, struct pfabric, fab);
	struct lfp_wait_attr a;
	struct pwait *ws;
	int ret;

	if (!wsp)
		return -FI_EINVAL;
	*wsp = NULL;
	memset(&a, 0, sizeof(a));
	a.wait_obj = attr ? (enum lfp_wait_obj)attr->wait_obj : LFP_WAIT_UNSPEC;
	a.flags = attr ? attr->flags : 0;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ret = lfp_wait_open(&a, &ws->lfp);
	if (ret) {
		free(ws);
		return ret;
	}
	prov_obj_init(&ws->o, &ws->ws.fid, FI_CLASS_WAIT, NULL, &ws->lfp->fid,
	              &f->o.refs);
	ws->ws.ops = &pwait_ops;
	*wsp = &ws->ws;
	return 0;
}

/* ---------------------------------------------------------------- poll sets */

static struct lfp_poll *lfp_of(struct fid_poll *fid)
{
	return container_of(fid, struct ppoll, ps)->lfp;
}

/* The members a poll set takes: the provider's CQs and counters. */
static struct lfp_fid *member(struct fid *fid)
{
	if (!fid || (fid->fclass != FI_CLASS_CQ && fid->fclass != FI_CLASS_CNTR))
		return NULL;
	return prov_lfp_fid(fid);
}

static int ppoll_add(struct fid_poll *fid, struct fid *event_fid, uint64_t flags)
{
	struct lfp_fid *lf = member(event_fid);
	int ret;

	(void)flags;
	if (!lf)
		return -FI_EINVAL;
	ret = lfp_poll_add(lfp_of(fid), lf, 0);
	return ret == -EEXIST ? 0 : ret;
}

static int ppoll_del(struct fid_poll *fid, struct fid *event_fid, uint64_t flags)
{
	struct lfp_fid *lf = member(event_fid);
	int ret;

	(void)flags;
	if (!lf)
		return 0; /* not a member: an EQ, another provider's fid */
	ret = lfp_poll_del(lfp_of(fid), lf, 0);
	return ret == -ENOENT ? 0 : ret;
}

static int ppoll_poll(struct fid_poll *fid, void **context, int count)
{
	return lfp_poll(lfp_of(fid), context, count);
}

static struct fi_ops_poll ppoll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = ppoll_poll,
	.poll_add = ppoll_add,
	.poll_del = ppoll_del,
};

int ppoll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
               struct fid_poll **psp)
{
	struct pdomain *d = container_of(domain, struct pdomain, dom);
	struct lfp_poll_attr a;
	struct ppoll *ps;
	int ret;

	if (!psp)
		return -FI_EINVAL;
	*psp = NULL;
	a.flags = attr ? attr->flags : 0;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	ret = lfp_poll_open(&a, &ps->lfp);
	if (ret) {
		free(ps);
		return ret;
	}
	prov_obj_init(&ps->o, &ps->ps.fid, FI_CLASS_POLL, NULL, &ps->lfp->fid,
	              &d->o.refs);
	ps->ps.ops = &ppoll_ops;
	*psp = &ps->ps;
	return 0;
}
