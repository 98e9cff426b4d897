/*
 * The lfpoll libfabric provider's own declarations, shared by its files.
 *
 * Each libfabric object the provider hands out is a struct pobj, the
 * libfabric fid (struct fid_eq, fid_cq, ...) and the lfpoll object it
 * wraps, so a call on the fid is one call on the lfpoll object.  Objects
 * are recognised by their fi_ops table, which they all share: a fid whose
 * ops are not the provider's is never cast.  Only the public lfpoll API
 * (<lfpoll/lfpoll.h>) and the binding interface (<lfpoll/binding.h>) are
 * used.
 */
#ifndef LFPOLL_FI_PROV_H
#define LFPOLL_FI_PROV_H

/* First: lfpoll's header sets the POSIX feature level its calls need. */
#include <lfpoll/lfpoll.h>
#include <lfpoll/binding.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include "lfpoll/fi_lfpoll.h"

#define PROV_NAME "lfpoll"

/*
 * What every object the provider hands out begins with, before its
 * libfabric fid: one close, one fi_control and one fi_ops table serve them
 * all (fabric.c).
 */
struct pobj {
	struct lfp_fid *lf;           /* the lfpoll object; NULL: fabric, domain */
	unsigned *parent_refs;        /* the fabric's or domain's count, or NULL */
	unsigned refs;                /* fabric, domain: objects open on them */
	int pollfd;                   /* a queue opened with FI_WAIT_POLLFD */
};

struct pfabric {
	struct pobj o;
	struct fid_fabric fab;
};

struct pdomain {
	struct pobj o;
	struct fid_domain dom;
	struct pfabric *fabric;
};

struct peq {
	struct pobj o;
	struct fid_eq eq;
	struct pfabric *fabric;
	struct lfp_eq *lfp;
	size_t entry_size;
};

struct pcq {
	struct pobj o;
	struct fid_cq cq;
	struct pdomain *domain;
	struct lfp_cq *lfp;
};

struct pcntr {
	struct pobj o;
	struct fid_cntr cntr;
	struct lfp_cntr *lfp;
};

struct pwait {
	struct pobj o;
	struct fid_wait ws;
	struct lfp_wait *lfp;
};

struct ppoll {
	struct pobj o;
	struct fid_poll ps;
	struct lfp_poll *lfp;
};

/* fabric.c */
extern struct fi_provider prov_provider;
extern size_t prov_eq_entry_size;
struct pobj *prov_obj_of(const struct fid *fid, size_t fclass);
void prov_obj_init(struct pobj *o, struct fid *fid, size_t fclass,
                   void *context, struct lfp_fid *lf, unsigned *parent_refs);
uint32_t prov_api_version(const struct pfabric *f);
struct lfp_fid *prov_lfp_fid(const struct fid *fid);
int prov_waitobj(enum fi_wait_obj wo, struct fid_wait *set,
                 enum lfp_wait_obj *obj, struct lfp_wait **lset, int *pollfd);
/* prov_waitobj for an open's attr (NULL: no wait object). */
#define PROV_WAITOBJ(attr, obj, lset, pollfd)                             \
	prov_waitobj((attr) ? (attr)->wait_obj : FI_WAIT_NONE,            \
	             (attr) ? (attr)->wait_set : NULL, (obj), (lset), (pollfd))

/* eq.c */
int peq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
             struct fid_eq **eq, void *context);
ssize_t peq_write_err(struct fid_eq *eq, const struct fi_eq_err_entry *err);

/* cq.c */
int pcq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
             struct fid_cq **cq, void *context);
ssize_t pcq_write(struct fid_cq *cq, const void *entries,
                  const fi_addr_t *src_addr, size_t count);
ssize_t pcq_writeerr(struct fid_cq *cq, const struct fi_cq_err_entry *err);

/* cntr.c */
int pcntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
               struct fid_cntr **cntr, void *context);
int pcntr_inc(struct fid_cntr *cntr, uint64_t value);
int pcntr_incerr(struct fid_cntr *cntr, uint64_t value);

/* sets.c */
int pwait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
               struct fid_wait **waitset);
int ppoll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
               struct fid_poll **pollset);

#endif /* LFPOLL_FI_PROV_H */
