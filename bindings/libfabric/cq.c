/*
 * The provider's completion queues: fi_cq(3) on an lfpoll CQ.
 *
 * What differs from lfpoll's own calls, and how it is mapped:
 *   - the format numbers: libfabric's UNSPEC is 0, lfpoll's CONTEXT is.
 *   - fi_cq_read with count 0 is how libfabric asks "anything queued?"
 *     (its poll sets do): 0 when the CQ holds a completion or an error,
 *     -FI_EAGAIN when it is empty.  lfpoll refuses count 0.
 *   - the producer extension's error write returns 1, as readerr does.
 *   - a fabric opened for an API before 1.5 gets the provider's own copy
 *     of the error data, and readerr touches only the fields of the
 *     struct of that API, which ends before err_data_size.
 *   - open flags other than FI_AFFINITY are refused (-FI_EINVAL).
 */
#include "prov.h"

static struct pcq *pcq_of(struct fid_cq *fid)
{
	struct pobj *o = fid ? prov_obj_of(&fid->fid, FI_CLASS_CQ) : NULL;

	return o ? container_of(o, struct pcq, o) : NULL;
}

static int pcq_format(enum fi_cq_format f, enum lfp_cq_format *out)
{
	switch (f) {
	case FI_CQ_FORMAT_UNSPEC:  *out = LFP_CQ_FORMAT_UNSPEC;  return 0;
	case FI_CQ_FORMAT_CONTEXT: *out = LFP_CQ_FORMAT_CONTEXT; return 0;
	case FI_CQ_FORMAT_MSG:     *out = LFP_CQ_FORMAT_MSG;     return 0;
	case FI_CQ_FORMAT_DATA:    *out = LFP_CQ_FORMAT_DATA;    return 0;
	case FI_CQ_FORMAT_TAGGED:  *out = LFP_CQ_FORMAT_TAGGED;  return 0;
	default:                   return -FI_EINVAL;
	}
}

static ssize_t pcq_readfrom(struct fid_cq *fid, void *buf, size_t count,
                            fi_addr_t *src_addr)
{
	struct pcq *cq = container_of(fid, struct pcq, cq);
	struct lfp_fid *lf = &cq->lfp->fid;

	if (count == 0)
		return lfp_binding_ready(lf) > 0 ? 0 : -FI_EAGAIN;
	/* fi_addr_t and lfp_addr_t are both uint64_t (layout.c). */
	return lfp_cq_readfrom(cq->lfp, buf, count, src_addr);
}

static ssize_t pcq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return pcq_readfrom(fid, buf, count, NULL);
}

static ssize_t pcq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf,
                           uint64_t flags)
{
	struct pcq *cq = container_of(fid, struct pcq, cq);
	struct lfp_cq_err_entry e;
	/* The same layout (layout.c); the struct of an API before 1.5 ends
	 * where err_data_size begins, which then reads as 0: the provider's
	 * copy of the data. */
	size_t n = prov_api_version(cq->domain->fabric) < FI_VERSION(1, 5) ?
	           offsetof(struct fi_cq_err_entry, err_data_size) : sizeof(e);
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	memset(&e, 0, sizeof(e));
	memcpy(&e, buf, n);
	ret = lfp_cq_readerr(cq->lfp, &e, flags & FI_PEEK);
	if (ret < 0)
		return ret;
	memcpy(buf, &e, n);
	return 1;
}

static ssize_t pcq_sreadfrom(struct fid_cq *fid, void *buf, size_t count,
                             fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct pcq *cq = container_of(fid, struct pcq, cq);

	return lfp_cq_sreadfrom(cq->lfp, buf, count, src_addr, cond, timeout);
}

static ssize_t pcq_sread(struct fid_cq *fid, void *buf, size_t count,
                         const void *cond, int timeout)
{
	return pcq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int pcq_signal(struct fid_cq *fid)
{
	return lfp_cq_signal(container_of(fid, struct pcq, cq)->lfp);
}

static const char *pcq_strerror(struct fid_cq *fid, int prov_errno,
                                const void *err_data, char *buf, size_t len)
{
	struct pcq *cq = container_of(fid, struct pcq, cq);

	return lfp_cq_strerror(cq->lfp, prov_errno, err_data, buf, len);
}

/* The producer extension. */
ssize_t pcq_write(struct fid_cq *fid, const void *entries,
                  const fi_addr_t *src_addr, size_t count)
{
	struct pcq *cq = pcq_of(fid);

	if (!cq)
		return -FI_EINVAL;
	return lfp_cq_writefrom(cq->lfp, entries, src_addr, count);
}

ssize_t pcq_writeerr(struct fid_cq *fid, const struct fi_cq_err_entry *err)
{
	struct pcq *cq = pcq_of(fid);
	struct lfp_cq_err_entry e;
	ssize_t ret;

	if (!cq || !err)
		return -FI_EINVAL;
	memcpy(&e, err, sizeof(e));
	ret = lfp_cq_writeerr(cq->lfp, &e);
	return ret < 0 ? ret : 1;
}

static struct fi_ops_cq pcq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = pcq_read,
	.readfrom = pcq_readfrom,
	.readerr = pcq_readerr,
	.sread = pcq_sread,
	.sreadfrom = pcq_sreadfrom,
	.signal = pcq_signal,
	.strerror = pcq_strerror,
};

/* attr NULL: lfpoll's defaults. */
int pcq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
             struct fid_cq **cqp, void *context)
{
	struct pdomain *d = container_of(domain, struct pdomain, dom);
	struct lfp_cq_attr a;
	struct pcq *cq;
	int ret, pollfd;

	if (!cqp)
		return -FI_EINVAL;
	*cqp = NULL;
	memset(&a, 0, sizeof(a));
	ret = PROV_WAITOBJ(attr, &a.wait_obj, &a.wait_set, &pollfd);
	if (!ret && attr)
		ret = pcq_format(attr->format, &a.format);
	if (ret)
		return ret;
	if (attr) {
		a.size = attr->size;
		/* FI_AFFINITY is the one flag fi_cq(3) defines, and lfpoll's
		 * value; any other bit is refused, since lfpoll's own open
		 * flags (the single-producer and -consumer modes) would
		 * silently drop the thread safety the provider promises. */
		if (attr->flags & ~(uint64_t)FI_AFFINITY)
			return -FI_EINVAL;
		a.flags = attr->flags;
		a.signaling_vector = attr->signaling_vector;
		/* fi_cq(3): wait_cond is ignored with FI_WAIT_NONE. */
		if (attr->wait_obj != FI_WAIT_NONE)
			a.wait_cond = (enum lfp_cq_wait_cond)attr->wait_cond;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	ret = lfp_cq_open(&a, &cq->lfp, context);
	if (ret) {
		free(cq);
		return ret;
	}
	prov_obj_init(&cq->o, &cq->cq.fid, FI_CLASS_CQ, context, &cq->lfp->fid,
	              &d->o.refs);
	cq->o.pollfd = pollfd;
	cq->cq.ops = &pcq_ops;
	cq->domain = d;
	*cqp = &cq->cq;
	return 0;
}
