/*
 * The provider's counters: fi_cntr(3) on an lfpoll counter.  fi_cntr_add
 * and fi_cntr_set are the application's changes (lfp_cntr_add, _set): as
 * fi_poll(3) says, they reset what poll sets report.  Completions are
 * counted through the producer extension (lfp_cntr_inc).
 */
#include "prov.h"

static struct fi_ops pcntr_fi_ops;

struct pcntr *pcntr_of(const struct fid *fid)
{
	if (!fid || fid->fclass != FI_CLASS_CNTR || fid->ops != &pcntr_fi_ops)
		return NULL;
	return container_of(fid, struct pcntr, cntr.fid);
}

static struct lfp_cntr *lfp_of(struct fid_cntr *fid)
{
	return container_of(fid, struct pcntr, cntr)->lfp;
}

static uint64_t pcntr_read(struct fid_cntr *fid)
{
	return lfp_cntr_read(lfp_of(fid));
}

static uint64_t pcntr_readerr(struct fid_cntr *fid)
{
	return lfp_cntr_readerr(lfp_of(fid));
}

static int pcntr_add(struct fid_cntr *fid, uint64_t value)
{
	return lfp_cntr_add(lfp_of(fid), value);
}

static int pcntr_set(struct fid_cntr *fid, uint64_t value)
{
	return lfp_cntr_set(lfp_of(fid), value);
}

static int pcntr_adderr(struct fid_cntr *fid, uint64_t value)
{
	return lfp_cntr_adderr(lfp_of(fid), value);
}

static int pcntr_seterr(struct fid_cntr *fid, uint64_t value)
{
	return lfp_cntr_seterr(lfp_of(fid), value);
}

static int pcntr_wait(struct fid_cntr *fid, uint64_t threshold, int timeout)
{
	return lfp_cntr_wait(lfp_of(fid), threshold, timeout);
}

/* The producer extension. */
int pcntr_inc(struct fid_cntr *fid, uint64_t value)
{
	struct pcntr *c = fid ? pcntr_of(&fid->fid) : NULL;

	return c ? lfp_cntr_inc(c->lfp, value) : -FI_EINVAL;
}

int pcntr_incerr(struct fid_cntr *fid, uint64_t value)
{
	struct pcntr *c = fid ? pcntr_of(&fid->fid) : NULL;

	return c ? lfp_cntr_incerr(c->lfp, value) : -FI_EINVAL;
}

static int pcntr_control(struct fid *fid, int command, void *arg)
{
	struct pcntr *c = container_of(fid, struct pcntr, cntr.fid);

	return prov_wait_control(&c->lfp->fid, c->pollfd, command, arg);
}

static int pcntr_close(struct fid *fid)
{
	struct pcntr *c = container_of(fid, struct pcntr, cntr.fid);
	int ret;

	ret = lfp_cntr_close(c->lfp);
	if (ret)
		return ret;
	prov_ref(&c->domain->refs, -1);
	free(c);
	return 0;
}

static struct fi_ops pcntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pcntr_close,
	.bind = prov_no_bind,
	.control = pcntr_control,
	.ops_open = prov_ops_open,
	.tostr = prov_no_tostr,
	.ops_set = prov_no_ops_set,
};

static struct fi_ops_cntr pcntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = pcntr_read,
	.readerr = pcntr_readerr,
	.add = pcntr_add,
	.set = pcntr_set,
	.wait = pcntr_wait,
	.adderr = pcntr_adderr,
	.seterr = pcntr_seterr,
};

/* attr NULL: lfpoll's defaults (no wait object). */
int pcntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
               struct fid_cntr **cp, void *context)
{
	struct pdomain *d = container_of(domain, struct pdomain, dom);
	struct lfp_cntr_attr a;
	struct pwaitobj w;
	struct pcntr *c;
	int ret;

	if (!cp)
		return -FI_EINVAL;
	*cp = NULL;
	memset(&a, 0, sizeof(a));
	memset(&w, 0, sizeof(w));
	if (attr) {
		ret = prov_waitobj(attr->wait_obj, attr->wait_set, &w);
		if (ret)
			return ret;
		a.events = (enum lfp_cntr_events)attr->events;
		a.wait_obj = w.obj;
		a.wait_set = w.set;
		a.flags = attr->flags;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	ret = lfp_cntr_open(&a, &c->lfp, context);
	if (ret) {
		free(c);
		return ret;
	}
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &pcntr_fi_ops;
	c->cntr.ops = &pcntr_ops;
	c->domain = d;
	c->pollfd = w.pollfd;
	prov_ref(&d->refs, 1);
	*cp = &c->cntr;
	return 0;
}
