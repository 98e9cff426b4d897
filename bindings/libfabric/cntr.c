/*
 * The provider's counters: fi_cntr(3) on an lfpoll counter.  fi_cntr_add
 * and fi_cntr_set are the application's changes (lfp_cntr_add, _set): as
 * fi_poll(3) says, they reset what poll sets report.  Completions are
 * counted through the producer extension (lfp_cntr_inc).
 */
#include "prov.h"

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
static struct lfp_cntr *mine(struct fid_cntr *fid)
{
	struct pobj *o = fid ? prov_obj_of(&fid->fid, FI_CLASS_CNTR) : NULL;

	return o ? container_of(o, struct pcntr, o)->lfp : NULL;
}

int pcntr_inc(struct fid_cntr *fid, uint64_t value)
{
	struct lfp_cntr *c = mine(fid);

	return c ? lfp_cntr_inc(c, value) : -FI_EINVAL;
}

int pcntr_incerr(struct fid_cntr *fid, uint64_t value)
{
	struct lfp_cntr *c = mine(fid);

	return c ? lfp_cntr_incerr(c, value) : -FI_EINVAL;
}

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
	struct pcntr *c;
	int ret, pollfd;

	if (!cp)
		return -FI_EINVAL;
	*cp = NULL;
	memset(&a, 0, sizeof(a));
	ret = PROV_WAITOBJ(attr, &a.wait_obj, &a.wait_set, &pollfd);
	if (ret)
		return ret;
	if (attr) {
		a.events = (enum lfp_cntr_events)attr->events;
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
	prov_obj_init(&c->o, &c->cntr.fid, FI_CLASS_CNTR, context, &c->lfp->fid,
	              &d->o.refs);
	c->o.pollfd = pollfd;
	c->cntr.ops = &pcntr_ops;
	*cp = &c->cntr;
	return 0;
}
