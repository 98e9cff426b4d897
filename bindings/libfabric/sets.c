/*
 * The provider's wait sets and poll sets: fi_poll(3) on lfpoll's.
 *
 * What differs from lfpoll's own calls, and how it is mapped:
 *   - fi_poll_add of a member already in the set, and fi_poll_del of an
 *     object that is not in it, succeed, as in libfabric's utility poll
 *     sets; lfpoll says -EEXIST and -ENOENT.  Their flags are ignored, as
 *     there.
 *   - an EQ cannot join a poll set (-FI_EINVAL), as a poll set opened with
 *     fi_poll_open refuses one in libfabric's utility code too (it accepts
 *     EQs only in the poll set inside a wait set).  An object is in at most
 *     one poll set (-FI_EBUSY for a second).
 */
#include "prov.h"

static struct fi_ops pwait_fi_ops;

struct pwait *pwait_of(const struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_WAIT || fid->ops != &pwait_fi_ops)
		return NULL;
	return container_of(fid, struct pwait, ws.fid);
}

/* ---------------------------------------------------------------- wait sets */

static int pwait_wait(struct fid_wait *fid, int timeout)
{
	return lfp_wait(container_of(fid, struct pwait, ws)->lfp, timeout);
}

/* The set's wait object: the same enum values and structs (layout.c). */
static int pwait_control(struct fid *fid, int command, void *arg)
{
	struct pwait *ws = container_of(fid, struct pwait, ws.fid);
	enum lfp_wait_obj obj;
	int ret;

	switch (command) {
	case FI_GETWAITOBJ:
		if (!arg)
			return -FI_EINVAL;
		ret = lfp_control(&ws->lfp->fid, LFP_GETWAITOBJ, &obj);
		if (ret == 0)
			*(enum fi_wait_obj *)arg = (enum fi_wait_obj)obj;
		return ret;
	case FI_GETWAIT:
		return lfp_control(&ws->lfp->fid, LFP_GETWAIT, arg);
	default:
		return -FI_ENOSYS;
	}
}

static int pwait_close(struct fid *fid)
{
	struct pwait *ws = container_of(fid, struct pwait, ws.fid);
	int ret;

	ret = lfp_wait_close(ws->lfp);
	if (ret)
		return ret;
	prov_ref(&ws->fabric->refs, -1);
	free(ws);
	return 0;
}

static struct fi_ops pwait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pwait_close,
	.bind = prov_no_bind,
	.control = pwait_control,
	.ops_open = prov_ops_open,
	.tostr = prov_no_tostr,
	.ops_set = prov_no_ops_set,
};

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
	ws->ws.fid.fclass = FI_CLASS_WAIT;
	ws->ws.fid.ops = &pwait_fi_ops;
	ws->ws.ops = &pwait_ops;
	ws->fabric = f;
	prov_ref(&f->refs, 1);
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
		return -FI_EINVAL;
	ret = lfp_poll_del(lfp_of(fid), lf, 0);
	return ret == -ENOENT ? 0 : ret;
}

static int ppoll_poll(struct fid_poll *fid, void **context, int count)
{
	return lfp_poll(lfp_of(fid), context, count);
}

static int ppoll_close(struct fid *fid)
{
	struct ppoll *ps = container_of(fid, struct ppoll, ps.fid);
	int ret;

	ret = lfp_poll_close(ps->lfp);
	if (ret)
		return ret;
	prov_ref(&ps->domain->refs, -1);
	free(ps);
	return 0;
}

static struct fi_ops ppoll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ppoll_close,
	.bind = prov_no_bind,
	.control = prov_no_control,
	.ops_open = prov_ops_open,
	.tostr = prov_no_tostr,
	.ops_set = prov_no_ops_set,
};

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
	ps->ps.fid.fclass = FI_CLASS_POLL;
	ps->ps.fid.ops = &ppoll_fi_ops;
	ps->ps.ops = &ppoll_ops;
	ps->domain = d;
	prov_ref(&d->refs, 1);
	*psp = &ps->ps;
	return 0;
}
