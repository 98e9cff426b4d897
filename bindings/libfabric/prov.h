/*
 * The lfpoll libfabric provider's own declarations, shared by its files.
 *
 * Each libfabric object the provider hands out is the libfabric fid
 * (struct fid_eq, fid_cq, ...) followed by the lfpoll object it wraps, so a
 * call on the fid is one call on the lfpoll object.  Objects are recognised
 * by their fi_ops table: a fid whose ops are not the provider's is never
 * cast.  Only the public lfpoll API is used (<lfpoll/lfpoll.h>).
 */
#ifndef LFPOLL_FI_PROV_H
#define LFPOLL_FI_PROV_H

/* First: lfpoll's header sets the POSIX feature level its calls need. */
#include <lfpoll/lfpoll.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include "lfpoll/fi_lfpoll.h"

#define PROV_NAME "lfpoll"

struct pfabric {
	struct fid_fabric fab;
	unsigned refs;                /* domains, EQs and wait sets on it */
};

struct pdomain {
	struct fid_domain dom;
	struct pfabric *fabric;
	unsigned refs;                /* CQs, counters and poll sets on it */
};

/*
 * A queue's wait object as libfabric asked for it.  FI_WAIT_POLLFD on an
 * EQ, CQ or counter is lfpoll's FD object reported as a one-entry pollfd
 * array (lfpoll takes POLLFD for wait sets only).
 */
struct pwaitobj {
	enum lfp_wait_obj obj;
	struct lfp_wait *set;
	int pollfd;
};

struct peq {
	struct fid_eq eq;
	struct pfabric *fabric;
	struct lfp_eq *lfp;
	size_t entry_size;
	int pollfd;
};

struct pcq {
	struct fid_cq cq;
	struct pdomain *domain;
	struct lfp_cq *lfp;
	int pollfd;
};

struct pcntr {
	struct fid_cntr cntr;
	struct pdomain *domain;
	struct lfp_cntr *lfp;
	int pollfd;
};

struct pwait {
	struct fid_wait ws;
	struct pfabric *fabric;
	struct lfp_wait *lfp;
};

struct ppoll {
	struct fid_poll ps;
	struct pdomain *domain;
	struct lfp_poll *lfp;
};

/* fabric.c */
extern struct fi_provider prov_provider;
extern size_t prov_eq_entry_size;
uint32_t prov_api_version(const struct pfabric *f);
void prov_ref(unsigned *refs, int delta);
unsigned prov_refs(const unsigned *refs);
struct lfp_fid *prov_lfp_fid(const struct fid *fid);
int prov_ops_open(struct fid *fid, const char *name, uint64_t flags,
                  void **ops, void *context);
int prov_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int prov_no_control(struct fid *fid, int command, void *arg);
int prov_no_tostr(const struct fid *fid, char *buf, size_t len);
int prov_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
                    void *ops, void *context);
int prov_waitobj(enum fi_wait_obj obj, struct fid_wait *set, struct pwaitobj *w);
int prov_wait_control(struct lfp_fid *lf, int pollfd, int command, void *arg);

/* eq.c */
int peq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
             struct fid_eq **eq, void *context);
struct peq *peq_of(const struct fid *fid);
ssize_t peq_write_err(struct fid_eq *eq, const struct fi_eq_err_entry *err);

/* cq.c */
int pcq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
             struct fid_cq **cq, void *context);
struct pcq *pcq_of(const struct fid *fid);
ssize_t pcq_write(struct fid_cq *cq, const void *entries,
                  const fi_addr_t *src_addr, size_t count);
ssize_t pcq_writeerr(struct fid_cq *cq, const struct fi_cq_err_entry *err);

/* cntr.c */
int pcntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
               struct fid_cntr **cntr, void *context);
struct pcntr *pcntr_of(const struct fid *fid);
int pcntr_inc(struct fid_cntr *cntr, uint64_t value);
int pcntr_incerr(struct fid_cntr *cntr, uint64_t value);

/* sets.c */
int pwait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
               struct fid_wait **waitset);
struct pwait *pwait_of(const struct fid *fid);
int ppoll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
               struct fid_poll **pollset);

#endif /* LFPOLL_FI_PROV_H */
