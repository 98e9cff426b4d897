/*
 * The lfpoll provider: its entry point, fi_getinfo, the fabric and the
 * domain, fi_trywait, and what every object shares (close, fi_control and
 * the fi_ops table, the wait-object mapping, the fid lookup, the producer
 * extension).
 */
#include "prov.h"

#include <ck_pr.h>

/* The provider's own version: lfpoll's. */
#define PROV_VERSION FI_VERSION(0, 1)

/* What the one fi_info advertises.  There are no endpoints: FI_MSG names
 * the endpoint type's usual capability, and fi_endpoint says -FI_ENOSYS. */
#define PROV_CAPS    (FI_MSG | FI_SEND | FI_RECV)
#define PROV_CQ_CNT  256
#define PROV_CNTR_CNT 256

size_t prov_eq_entry_size = 256;

static int pgetinfo(uint32_t version, const char *node, const char *service,
                    uint64_t flags, const struct fi_info *hints,
                    struct fi_info **info);
static int pfabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
                        void *context);
static void pcleanup(void);

/* Not const: libfabric keeps its own state in the provider's context. */
struct fi_provider prov_provider = {
	.version = PROV_VERSION,
	.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	.name = PROV_NAME,
	.getinfo = pgetinfo,
	.fabric = pfabric_open,
	.cleanup = pcleanup,
};

FI_EXT_INI
{
	size_t v;

	fi_param_define(&prov_provider, "eq_entry_size", FI_PARAM_SIZE_T,
	                "Largest fi_eq_write payload in bytes (default: 256)");
	if (fi_param_get_size_t(&prov_provider, "eq_entry_size", &v) == 0 &&
	    v > 0 && v <= LFP_EQ_MAX_ENTRY_SIZE)
		prov_eq_entry_size = v;
	return &prov_provider;
}

static void pcleanup(void)
{
}

/* ---------------------------------------------------------------- shared */

/*
 * The counts that make a parent's close -FI_EBUSY.  Atomic only so that
 * opens in several threads lose no count; no ordering is needed, because a
 * parent's close must not run concurrently with its children's opens
 * (fi_domain(3), fi_fabric(3)).
 */
static void prov_ref(unsigned *refs, int delta)
{
	ck_pr_faa_uint(refs, (unsigned)delta);
}

static unsigned prov_refs(const unsigned *refs)
{
	return ck_pr_load_uint(refs); /* relaxed: as prov_ref */
}

/* Every object begins with its struct pobj, right before its fid. */
#define FID_AFTER_OBJ(type, field) \
	_Static_assert(offsetof(struct type, field) == sizeof(struct pobj), \
	               #type "." #field " must follow its struct pobj")
FID_AFTER_OBJ(pfabric, fab);
FID_AFTER_OBJ(pdomain, dom);
FID_AFTER_OBJ(peq, eq);
FID_AFTER_OBJ(pcq, cq);
FID_AFTER_OBJ(pcntr, cntr);
FID_AFTER_OBJ(pwait, ws);
FID_AFTER_OBJ(ppoll, ps);

static struct pobj *obj(struct fid *fid)
{
	return (struct pobj *)(void *)((char *)fid - sizeof(struct pobj));
}

/* An lfpoll object's close decides (-FI_EBUSY while in a poll set, a set
 * with members...); a fabric or domain is busy while objects are open on
 * it.  The wrapper goes with it. */
static int prov_close(struct fid *fid)
{
	struct pobj *o = obj(fid);
	int ret;

	if (prov_refs(&o->refs))
		return -FI_EBUSY;
	if (o->lf) {
		ret = lfp_close(o->lf);
		if (ret)
			return ret;
	}
	if (o->parent_refs)
		prov_ref(o->parent_refs, -1);
	free(o);
	return 0;
}

/*
 * FI_GETWAIT and FI_GETWAITOBJ: lfpoll's, whose enum values and structs are
 * libfabric's (layout.c).  A POLLFD queue reports its FD as a one-entry
 * array whose change_index never moves: the descriptor is the queue's for
 * its whole life.
 */
static int prov_control(struct fid *fid, int command, void *arg)
{
	struct fi_wait_pollfd *pfd = (struct fi_wait_pollfd *)arg;
	struct pobj *o = obj(fid);
	enum lfp_wait_obj wo;
	int fd, ret;

	if (!o->lf || (command != FI_GETWAIT && command != FI_GETWAITOBJ))
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	if (command == FI_GETWAITOBJ) {
		ret = lfp_control(o->lf, LFP_GETWAITOBJ, &wo);
		if (ret == 0)
			*(enum fi_wait_obj *)arg = o->pollfd ? FI_WAIT_POLLFD
			                                     : (enum fi_wait_obj)wo;
		return ret;
	}
	if (!o->pollfd)
		return lfp_control(o->lf, LFP_GETWAIT, arg);
	ret = lfp_control(o->lf, LFP_GETWAIT, &fd);
	if (ret)
		return ret;
	pfd->change_index = 1;
	if (pfd->nfds < 1 || !pfd->fd) {
		pfd->nfds = 1;
		return -FI_ETOOSMALL;
	}
	pfd->nfds = 1;
	pfd->fd[0].fd = fd;
	pfd->fd[0].events = POLLIN;
	pfd->fd[0].revents = 0;
	return 0;
}

static int prov_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

static int prov_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid; (void)buf; (void)len;
	return -FI_ENOSYS;
}

static int prov_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
                           void *ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

static struct lfp_fi_producer_ops producer_ops = {
	.size = sizeof(struct lfp_fi_producer_ops),
	.cq_write = pcq_write,
	.cq_writeerr = pcq_writeerr,
	.eq_write_err = peq_write_err,
	.cntr_inc = pcntr_inc,
	.cntr_incerr = pcntr_incerr,
};

/* fi_open_ops on any of the provider's objects: the producer extension. */
static int prov_ops_open(struct fid *fid, const char *name, uint64_t flags,
                         void **ops, void *context)
{
	(void)fid; (void)context;
	if (!name || !ops || flags)
		return -FI_EINVAL;
	if (strcmp(name, LFP_FI_PRODUCER_OPS))
		return -FI_ENOSYS;
	*ops = &producer_ops;
	return 0;
}

/* The one table of every object the provider hands out. */
static struct fi_ops prov_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = prov_close,
	.bind = prov_no_bind,
	.control = prov_control,
	.ops_open = prov_ops_open,
	.tostr = prov_no_tostr,
	.ops_set = prov_no_ops_set,
};

/* The object of class fclass behind fid, when it is one of the provider's
 * (never another provider's: the ops table tells). */
struct pobj *prov_obj_of(const struct fid *fid, size_t fclass)
{
	if (!fid || fid->fclass != fclass || fid->ops != &prov_fi_ops)
		return NULL;
	return obj((struct fid *)(uintptr_t)fid);
}

/* A new object's fid and header; counted on its parent (parent_refs). */
void prov_obj_init(struct pobj *o, struct fid *fid, size_t fclass,
                   void *context, struct lfp_fid *lf, unsigned *parent_refs)
{
	fid->fclass = fclass;
	fid->context = context;
	fid->ops = &prov_fi_ops;
	o->lf = lf;
	o->parent_refs = parent_refs;
	if (parent_refs)
		prov_ref(parent_refs, 1);
}

uint32_t prov_api_version(const struct pfabric *f)
{
	return f->fab.api_version;
}

/*
 * libfabric's wait object and set for a queue, as lfpoll takes them.  The
 * enum values are the same (layout.c).  FI_WAIT_POLLFD on an EQ, CQ or
 * counter becomes lfpoll's FD (lfpoll takes POLLFD for wait sets only),
 * reported as a one-entry pollfd array (*pollfd set: prov_control).  The
 * set counts with FI_WAIT_SET only, as libfabric's utility code reads it.
 */
int prov_waitobj(enum fi_wait_obj wo, struct fid_wait *set,
                 enum lfp_wait_obj *obj, struct lfp_wait **lset, int *pollfd)
{
	struct pobj *o;

	*pollfd = 0;
	*lset = NULL;
	if (wo == FI_WAIT_SET) {
		o = set ? prov_obj_of(&set->fid, FI_CLASS_WAIT) : NULL;
		if (!o)
			return -FI_EINVAL;
		*lset = container_of(o, struct pwait, o)->lfp;
	}
	if (wo == FI_WAIT_POLLFD) {
		wo = FI_WAIT_FD;
		*pollfd = 1;
	}
	*obj = (enum lfp_wait_obj)wo;
	return 0;
}

/* The lfpoll object behind one of the provider's EQs, CQs, counters or
 * wait sets; NULL for anything else (another provider's fid included). */
struct lfp_fid *prov_lfp_fid(const struct fid *fid)
{
	struct pobj *o;

	if (!fid || (fid->fclass != FI_CLASS_EQ && fid->fclass != FI_CLASS_CQ &&
	             fid->fclass != FI_CLASS_CNTR && fid->fclass != FI_CLASS_WAIT))
		return NULL;
	o = prov_obj_of(fid, fid->fclass);
	return o ? o->lf : NULL;
}

/* ---------------------------------------------------------------- getinfo */

static int str_is(const char *s, const char *want)
{
	return !s || strcmp(s, want) == 0;
}

/* Whether the one fi_info can satisfy hints. */
static int hints_ok(const struct fi_info *h)
{
	if (!h)
		return 1;
	if ((h->caps & ~PROV_CAPS) || h->addr_format != FI_FORMAT_UNSPEC ||
	    h->src_addr || h->dest_addr)
		return 0;
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC &&
	    h->ep_attr->type != FI_EP_RDM)
		return 0;
	if (h->tx_attr && (h->tx_attr->caps & ~PROV_CAPS))
		return 0;
	if (h->rx_attr && (h->rx_attr->caps & ~PROV_CAPS))
		return 0;
	if (h->fabric_attr && !str_is(h->fabric_attr->name, PROV_NAME))
		return 0;
	if (h->domain_attr && !str_is(h->domain_attr->name, PROV_NAME))
		return 0;
	return 1;
}

static struct fi_info *info_alloc(void)
{
	struct fi_info *fi = fi_allocinfo();

	if (!fi)
		return NULL;
	fi->caps = PROV_CAPS;
	fi->addr_format = FI_FORMAT_UNSPEC;
	fi->tx_attr->caps = FI_MSG | FI_SEND;
	fi->rx_attr->caps = FI_MSG | FI_RECV;
	fi->ep_attr->type = FI_EP_RDM;
	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->data_progress = FI_PROGRESS_AUTO;
	fi->domain_attr->resource_mgmt = FI_RM_DISABLED;
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	fi->domain_attr->cq_cnt = PROV_CQ_CNT;
	fi->domain_attr->cntr_cnt = PROV_CNTR_CNT;
	fi->domain_attr->max_err_data = LFP_CQ_ERR_DATA_MAX;
	fi->domain_attr->name = strdup(PROV_NAME);
	fi->fabric_attr->name = strdup(PROV_NAME);
	fi->fabric_attr->prov_version = PROV_VERSION;
	if (!fi->domain_attr->name || !fi->fabric_attr->name) {
		fi_freeinfo(fi);
		return NULL;
	}
	return fi;
}

/* One fi_info, or -FI_ENODATA: the provider has no addresses, so a node or
 * service cannot be satisfied. */
static int pgetinfo(uint32_t version, const char *node, const char *service,
                    uint64_t flags, const struct fi_info *hints,
                    struct fi_info **info)
{
	(void)version; (void)flags;
	*info = NULL;
	if (node || service || !hints_ok(hints))
		return -FI_ENODATA;
	*info = info_alloc();
	return *info ? 0 : -FI_ENOMEM;
}

/* ---------------------------------------------------------------- domain */

static int no_av_open(struct fid_domain *d, struct fi_av_attr *attr,
                      struct fid_av **av, void *context)
{
	(void)d; (void)attr; (void)av; (void)context;
	return -FI_ENOSYS;
}

static int no_endpoint(struct fid_domain *d, struct fi_info *info,
                       struct fid_ep **ep, void *context)
{
	(void)d; (void)info; (void)ep; (void)context;
	return -FI_ENOSYS;
}

static int no_stx(struct fid_domain *d, struct fi_tx_attr *attr,
                  struct fid_stx **stx, void *context)
{
	(void)d; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

static int no_srx(struct fid_domain *d, struct fi_rx_attr *attr,
                  struct fid_ep **rx, void *context)
{
	(void)d; (void)attr; (void)rx; (void)context;
	return -FI_ENOSYS;
}

static int no_query_atomic(struct fid_domain *d, enum fi_datatype t,
                           enum fi_op op, struct fi_atomic_attr *attr,
                           uint64_t flags)
{
	(void)d; (void)t; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

static int no_query_collective(struct fid_domain *d, enum fi_collective_op c,
                               struct fi_collective_attr *attr, uint64_t flags)
{
	(void)d; (void)c; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

static int no_endpoint2(struct fid_domain *d, struct fi_info *info,
                        struct fid_ep **ep, uint64_t flags, void *context)
{
	(void)d; (void)info; (void)ep; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static int no_mr_reg(struct fid *fid, const void *buf, size_t len,
                     uint64_t access, uint64_t offset, uint64_t key,
                     uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid; (void)buf; (void)len; (void)access; (void)offset; (void)key;
	(void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

static int no_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
                      uint64_t access, uint64_t offset, uint64_t key,
                      uint64_t flags, struct fid_mr **mr, void *context)
{
	(void)fid; (void)iov; (void)count; (void)access; (void)offset; (void)key;
	(void)flags; (void)mr; (void)context;
	return -FI_ENOSYS;
}

static int no_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
                         uint64_t flags, struct fid_mr **mr)
{
	(void)fid; (void)attr; (void)flags; (void)mr;
	return -FI_ENOSYS;
}

static struct fi_ops_domain pdomain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = no_av_open,
	.cq_open = pcq_open,
	.endpoint = no_endpoint,
	.scalable_ep = no_endpoint,
	.cntr_open = pcntr_open,
	.poll_open = ppoll_open,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = no_endpoint2,
};

static struct fi_ops_mr pdomain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = no_mr_reg,
	.regv = no_mr_regv,
	.regattr = no_mr_regattr,
};

static int pdomain_open2(struct fid_fabric *fabric, struct fi_info *info,
                         struct fid_domain **dom, uint64_t flags, void *context)
{
	struct pfabric *f = container_of(fabric, struct pfabric, fab);
	struct pdomain *d;

	if (!dom)
		return -FI_EINVAL;
	*dom = NULL;
	if (!info || flags)
		return -FI_EINVAL;
	if (info->domain_attr && !str_is(info->domain_attr->name, PROV_NAME))
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	prov_obj_init(&d->o, &d->dom.fid, FI_CLASS_DOMAIN, context, NULL,
	              &f->o.refs);
	d->dom.ops = &pdomain_ops;
	d->dom.mr = &pdomain_mr_ops;
	d->fabric = f;
	*dom = &d->dom;
	return 0;
}

static int pdomain_open(struct fid_fabric *fabric, struct fi_info *info,
                        struct fid_domain **dom, void *context)
{
	return pdomain_open2(fabric, info, dom, 0, context);
}

/* ---------------------------------------------------------------- fabric */

static int no_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
                         struct fid_pep **pep, void *context)
{
	(void)fabric; (void)info; (void)pep; (void)context;
	return -FI_ENOSYS;
}

/*
 * fi_trywait: the lfpoll objects behind the fids, in one lfp_trywait.  A
 * count of 0 is 0 (nothing to wait for, as libfabric's utility code
 * answers); a fid that is not one of the provider's EQs, CQs, counters or
 * wait sets is -FI_EINVAL.
 */
static int ptrywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	struct lfp_fid *small[16], **lf = small;
	int i, ret;

	(void)fabric;
	if (count == 0)
		return 0;
	if (count < 0 || !fids)
		return -FI_EINVAL;
	if ((size_t)count > sizeof(small) / sizeof(small[0])) {
		lf = calloc((size_t)count, sizeof(*lf));
		if (!lf)
			return -FI_ENOMEM;
	}
	ret = 0;
	for (i = 0; i < count && !ret; i++) {
		lf[i] = prov_lfp_fid(fids[i]);
		if (!lf[i])
			ret = -FI_EINVAL;
	}
	if (!ret)
		ret = lfp_trywait(lf, (size_t)count);
	if (lf != small)
		free(lf);
	return ret;
}

static struct fi_ops_fabric pfabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = pdomain_open,
	.passive_ep = no_passive_ep,
	.eq_open = peq_open,
	.wait_open = pwait_open,
	.trywait = ptrywait,
	.domain2 = pdomain_open2,
};

static int pfabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
                        void *context)
{
	struct pfabric *f;

	if (!fabric)
		return -FI_EINVAL;
	*fabric = NULL;
	if (attr && !str_is(attr->name, PROV_NAME))
		return -FI_ENODATA;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	prov_obj_init(&f->o, &f->fab.fid, FI_CLASS_FABRIC, context, NULL, NULL);
	f->fab.ops = &pfabric_ops;
	f->fab.api_version = attr && attr->api_version ? attr->api_version
	                                               : prov_provider.fi_version;
	*fabric = &f->fab;
	return 0;
}
