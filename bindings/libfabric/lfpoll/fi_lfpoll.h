/*
 * lfpoll as a libfabric provider: the producer extension.
 *
 * The provider (liblfpoll-fi.so, FI_PROVIDER=lfpoll) has no endpoints, so
 * nothing inside libfabric ever completes work on its queues.  This header
 * gives a libfabric program lfpoll's producer calls for the provider's
 * EQs, CQs and counters, through fi_open_ops(3) on any of the provider's
 * objects:
 *
 *     struct lfp_fi_producer_ops *ops;
 *     fi_open_ops(&domain->fid, LFP_FI_PRODUCER_OPS, 0, (void **)&ops, NULL);
 *     ops->cq_write(cq, &entry, NULL, 1);
 *
 * lfp_fabric(3) describes the provider and these calls.
 */
#ifndef LFPOLL_FI_LFPOLL_H
#define LFPOLL_FI_LFPOLL_H

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name fi_open_ops takes; the version ends it. */
#define LFP_FI_PRODUCER_OPS "lfpoll_producer_v1"

struct lfp_fi_producer_ops {
	size_t size;  /* sizeof(struct lfp_fi_producer_ops) of the provider */
	/* Queue up to count completions of the CQ's format, each with its
	 * source address (src_addr NULL: FI_ADDR_NOTAVAIL).  Returns how many
	 * were queued (a prefix) or -FI_EAGAIN when the CQ is full. */
	ssize_t (*cq_write)(struct fid_cq *cq, const void *entries,
	                    const fi_addr_t *src_addr, size_t count);
	/* Queue an error completion (err->err > 0; err_data_size bytes of
	 * err_data are copied, at most 64).  Returns 1 or -FI_EAGAIN. */
	ssize_t (*cq_writeerr)(struct fid_cq *cq, const struct fi_cq_err_entry *err);
	/* Queue an error entry on an EQ (err->err > 0; err_data copied).
	 * Returns sizeof(*err), -FI_EOVERRUN, or -FI_EMSGSIZE. */
	ssize_t (*eq_write_err)(struct fid_eq *eq, const struct fi_eq_err_entry *err);
	/* Count completions: events for poll sets, wait sets and trywait,
	 * unlike fi_cntr_add.  0 or -FI_EINVAL. */
	int (*cntr_inc)(struct fid_cntr *cntr, uint64_t value);
	int (*cntr_incerr)(struct fid_cntr *cntr, uint64_t value);
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_FI_LFPOLL_H */
