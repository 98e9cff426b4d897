/*
 * The provider's event queues: fi_eq(3) on an lfpoll EQ.
 *
 * What differs from lfpoll's own calls, and how it is mapped:
 *   - fi_eq_write's flags mean nothing to lfpoll and are ignored, as
 *     libfabric's utility EQ ignores them; FI_WRITE at open is accepted
 *     and writes are allowed without it, as there.
 *   - a read with no buffer (NULL, 0) takes the event and copies nothing;
 *     lfpoll would refuse a payload that does not fit in 0 bytes.
 *   - the overrun entry names the lfpoll EQ; readerr names the fid_eq.
 *   - a fabric opened for an API before 1.5 gets the provider's own copy
 *     of the error data, as fi_eq(3) says for such callers (its struct
 *     has err_data_size, unlike the CQ's of that time).
 *   - open flags other than FI_WRITE and FI_AFFINITY are refused
 *     (-FI_EINVAL).
 */
#include "prov.h"

/*
 * lfp_eq_read or lfp_eq_sread.  A read with no buffer reads into a
 * scratch buffer the size of the EQ's largest payload and returns 0.
 */
static ssize_t peq_read_any(struct peq *eq, uint32_t *event, void *buf,
                            size_t len, uint64_t flags, int timeout, int blocking)
{
	uint32_t ev;
	void *scratch = NULL;
	ssize_t ret;

	if (!event)
		event = &ev;
	flags &= FI_PEEK;
	if (!buf && len == 0) {
		scratch = malloc(eq->entry_size);
		if (!scratch)
			return -FI_ENOMEM;
		buf = scratch;
		len = eq->entry_size;
	}
	ret = blocking ? lfp_eq_sread(eq->lfp, event, buf, len, timeout, flags)
	               : lfp_eq_read(eq->lfp, event, buf, len, flags);
	if (scratch) {
		free(scratch);
		if (ret > 0)
			ret = 0;
	}
	return ret;
}

static ssize_t peq_read(struct fid_eq *fid, uint32_t *event, void *buf,
                        size_t len, uint64_t flags)
{
	return peq_read_any(container_of(fid, struct peq, eq), event, buf, len,
	                    flags, 0, 0);
}

static ssize_t peq_sread(struct fid_eq *fid, uint32_t *event, void *buf,
                         size_t len, int timeout, uint64_t flags)
{
	return peq_read_any(container_of(fid, struct peq, eq), event, buf, len,
	                    flags, timeout, 1);
}

static ssize_t peq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
                           uint64_t flags)
{
	struct peq *eq = container_of(fid, struct peq, eq);
	struct lfp_eq_err_entry e;
	ssize_t ret;

	if (!buf)
		return -FI_EINVAL;
	/* The same layout (layout.c); memcpy keeps the two types apart.  The
	 * EQ's struct has had err_data_size since 1.0 (only the CQ's was
	 * shorter before 1.5): an older caller gets it as an output. */
	memcpy(&e, buf, sizeof(e));
	if (prov_api_version(eq->fabric) < FI_VERSION(1, 5))
		e.err_data_size = 0;
	ret = lfp_eq_readerr(eq->lfp, &e, flags & FI_PEEK);
	if (ret < 0)
		return ret;
	if (e.fid == &eq->lfp->fid) /* the overrun entry */
		e.fid = (struct lfp_fid *)(void *)&eq->eq.fid;
	memcpy(buf, &e, sizeof(e));
	return ret;
}

static ssize_t peq_write(struct fid_eq *fid, uint32_t event, const void *buf,
                         size_t len, uint64_t flags)
{
	struct peq *eq = container_of(fid, struct peq, eq);

	(void)flags;
	return lfp_eq_write(eq->lfp, event, buf, len, 0);
}

/* The producer extension's error write. */
ssize_t peq_write_err(struct fid_eq *fid, const struct fi_eq_err_entry *err)
{
	struct pobj *o = fid ? prov_obj_of(&fid->fid, FI_CLASS_EQ) : NULL;
	struct lfp_eq_err_entry e;

	if (!o || !err)
		return -FI_EINVAL;
	memcpy(&e, err, sizeof(e));
	return lfp_eq_write_err(container_of(o, struct peq, o)->lfp, &e);
}

static const char *peq_strerror(struct fid_eq *fid, int prov_errno,
                                const void *err_data, char *buf, size_t len)
{
	struct peq *eq = container_of(fid, struct peq, eq);

	return lfp_eq_strerror(eq->lfp, prov_errno, err_data, buf, len);
}

static struct fi_ops_eq peq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = peq_read,
	.readerr = peq_readerr,
	.write = peq_write,
	.sread = peq_sread,
	.strerror = peq_strerror,
};

/* attr NULL: lfpoll's defaults.  Payloads up to the provider's entry size
 * (FI_LFPOLL_EQ_ENTRY_SIZE, default 256). */
int peq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
             struct fid_eq **eqp, void *context)
{
	struct pfabric *f = container_of(fabric, struct pfabric, fab);
	struct lfp_eq_attr a;
	struct peq *eq;
	int ret, pollfd;

	if (!eqp)
		return -FI_EINVAL;
	*eqp = NULL;
	memset(&a, 0, sizeof(a));
	ret = PROV_WAITOBJ(attr, &a.wait_obj, &a.wait_set, &pollfd);
	if (ret)
		return ret;
	if (attr) {
		a.size = attr->size;
		/* FI_WRITE and FI_AFFINITY, the flags fi_eq(3) defines, are
		 * lfpoll's values; any other bit is refused, since lfpoll's
		 * own open flags (the single-producer and -consumer modes,
		 * back-pressure) would silently change what the provider
		 * promises. */
		if (attr->flags & ~(uint64_t)(FI_WRITE | FI_AFFINITY))
			return -FI_EINVAL;
		a.flags = attr->flags;
		a.signaling_vector = attr->signaling_vector;
	}
	a.entry_size = prov_eq_entry_size;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	ret = lfp_eq_open(&a, &eq->lfp, context);
	if (ret) {
		free(eq);
		return ret;
	}
	prov_obj_init(&eq->o, &eq->eq.fid, FI_CLASS_EQ, context, &eq->lfp->fid,
	              &f->o.refs);
	eq->o.pollfd = pollfd;
	eq->eq.ops = &peq_ops;
	eq->fabric = f;
	eq->entry_size = a.entry_size;
	*eqp = &eq->eq;
	return 0;
}
