/*
 * bench/peer_fabric.h: libfabric's own EQ and poll set, the reference
 * implementation of the model lfpoll follows, opened without any framework
 * beyond fi_getinfo on 127.0.0.1: provider "udp" (FI_EP_DGRAM) gives the
 * plain utility EQ, "tcp" (FI_EP_MSG) the EQ most users get.  Compiled in
 * with HAVE_FABRIC (libfabric-dev); without it every opening says why it is
 * skipped.
 *
 * fab_open/fab_close: one fabric per provider.  fiq_*: an EQ on it, with
 * the operation shapes of the EQ benchmarks (eq_queue.h).  fab_pollset_*:
 * a poll set of empty CQs on a udp domain (bench/poll.c).
 */
#ifndef LFPOLL_BENCH_PEER_FABRIC_H
#define LFPOLL_BENCH_PEER_FABRIC_H

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_FABRIC
#  include <rdma/fabric.h>
#  include <rdma/fi_domain.h>
#  include <rdma/fi_eq.h>
#  include <rdma/fi_errno.h>
#endif

#define FAB_MISSING "libfabric not found by pkg-config: libfabric-dev"

/* A libfabric fabric opened once per provider; skip says why not. */
struct fab {
	const char *prov;
	const char *skip;
	char why[160];
#ifdef HAVE_FABRIC
	struct fid_fabric *fabric;
#endif
};

static inline void fab_open(struct fab *f, int ep_type, const char *ep_name)
{
#ifdef HAVE_FABRIC
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints || !(hints->fabric_attr->prov_name = strdup(f->prov))) {
		snprintf(f->why, sizeof(f->why), "fi_allocinfo failed");
		f->skip = f->why;
		fi_freeinfo(hints);
		return;
	}
	hints->ep_attr->type = (enum fi_ep_type)ep_type;
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
	                 "127.0.0.1", NULL, 0, hints, &info);
	if (ret) {
		snprintf(f->why, sizeof(f->why),
		         "fi_getinfo(prov %s, %s, 127.0.0.1): %s", f->prov,
		         ep_name, fi_strerror(-ret));
		f->skip = f->why;
	} else if ((ret = fi_fabric(info->fabric_attr, &f->fabric, NULL))) {
		snprintf(f->why, sizeof(f->why), "fi_fabric(%s): %s", f->prov,
		         fi_strerror(-ret));
		f->skip = f->why;
		f->fabric = NULL;
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
#else
	(void)ep_type;
	(void)ep_name;
	f->skip = FAB_MISSING;
#endif
}

static inline void fab_close(struct fab *f)
{
#ifdef HAVE_FABRIC
	if (f->fabric)
		fi_close(&f->fabric->fid);
	f->fabric = NULL;
#else
	(void)f;
#endif
}

/* The two providers of the EQ benchmarks: the plain utility EQ (udp) and
 * the EQ most users get (tcp). */
#define FAB_UDP { .prov = "udp" }
#define FAB_TCP { .prov = "tcp" }

static inline void fab_open_eq(struct fab *udp, struct fab *tcp)
{
#ifdef HAVE_FABRIC
	fab_open(udp, FI_EP_DGRAM, "FI_EP_DGRAM");
	fab_open(tcp, FI_EP_MSG, "FI_EP_MSG");
#else
	fab_open(udp, 0, NULL);
	fab_open(tcp, 0, NULL);
#endif
}

static inline void fab_close_eq(struct fab *udp, struct fab *tcp)
{
	fab_close(udp);
	fab_close(tcp);
}

#ifdef HAVE_FABRIC
/* An EQ of libfabric's on a fabric. */
struct fi_q {
	struct fid_eq *feq;
	struct fid_fabric *fabric;
};

static inline int fiq_open(struct fi_q *q, struct fab *f, size_t size, int wait_obj)
{
	struct fi_eq_attr a = { .size = size, .flags = FI_WRITE,
	                        .wait_obj = (enum fi_wait_obj)wait_obj };
	int ret = fi_eq_open(f->fabric, &a, &q->feq, NULL);

	if (ret)
		return bench_fail("fi_eq_open(%s): %s", f->prov,
		                  fi_strerror(-ret));
	q->fabric = f->fabric;
	return 0;
}

static inline void fiq_close(struct fi_q *q)
{
	if (q->feq)
		fi_close(&q->feq->fid);
	q->feq = NULL;
}

/* write: 0, 1 when full, or a negative error. */
BENCH_TEMPLATE int fiq_write(struct fi_q *q, const void *e, size_t len)
{
	ssize_t r = fi_eq_write(q->feq, FI_NOTIFY, e, len, 0);

	if (r == (ssize_t)len)
		return 0;
	return r == -FI_EAGAIN ? 1 : r < 0 ? (int)r : -EPROTO;
}

/* read: 1 with an event, 0 when empty, or a negative error. */
BENCH_TEMPLATE int fiq_read(struct fi_q *q, void *e, size_t len, int peek)
{
	uint32_t ev;
	ssize_t r = fi_eq_read(q->feq, &ev, e, len, peek ? FI_PEEK : 0);

	if (r == (ssize_t)len)
		return ev == FI_NOTIFY ? 1 : -EPROTO;
	return r == -FI_EAGAIN ? 0 : r < 0 ? (int)r : -EPROTO;
}

BENCH_TEMPLATE int fiq_trywait(struct fi_q *q)
{
	struct fid *fid = &q->feq->fid;

	return fi_trywait(q->fabric, &fid, 1);
}

/* sread: 1 with an event, 0 when the timeout expired, or an error. */
BENCH_TEMPLATE int fiq_sread(struct fi_q *q, void *e, size_t len, int timeout)
{
	uint32_t ev;
	ssize_t r = fi_eq_sread(q->feq, &ev, e, len, timeout, 0);

	if (r == (ssize_t)len)
		return ev == FI_NOTIFY ? 1 : -EPROTO;
	if (r == -FI_EAGAIN || r == -FI_ETIMEDOUT)
		return 0;
	return r < 0 ? (int)r : -EPROTO;
}

/*
 * A poll set of n empty CQs on a udp domain, the peer of lfpoll's poll set:
 * fi_poll has no way to learn which member changed, so its cost is a scan
 * (the udp provider has no counters, so the members are CQs).
 */
#define FAB_POLL_MAX 1024

struct fab_pollset {
	int n;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_poll *ps;
	struct fid_cq *cq[FAB_POLL_MAX];
	const char *skip;
};

static inline int fab_pollset_open(struct fab_pollset *b)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_poll_attr pa = { 0 };
	struct fi_cq_attr ca = { .size = 64, .format = FI_CQ_FORMAT_CONTEXT,
	                         .wait_obj = FI_WAIT_NONE };
	int i;

	if (!hints)
		return -1;
	hints->fabric_attr->prov_name = strdup("udp");
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->caps = FI_MSG;
	if (fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, 0, hints, &b->info)) {
		fi_freeinfo(hints);
		return -1;
	}
	fi_freeinfo(hints);
	if (fi_fabric(b->info->fabric_attr, &b->fabric, NULL))
		return -1;
	if (fi_domain(b->fabric, b->info, &b->domain, NULL))
		return -2;
	if (fi_poll_open(b->domain, &pa, &b->ps))
		return -3;
	for (i = 0; i < b->n; i++) {
		if (fi_cq_open(b->domain, &ca, &b->cq[i], NULL))
			return -4;
		if (fi_poll_add(b->ps, &b->cq[i]->fid, 0))
			return -5;
	}
	return 0;
}

static inline void fab_pollset_close(void *arg)
{
	struct fab_pollset *b = arg;
	int i;

	for (i = 0; i < b->n; i++) {
		if (b->cq[i]) {
			fi_poll_del(b->ps, &b->cq[i]->fid, 0);
			fi_close(&b->cq[i]->fid);
		}
	}
	if (b->ps)
		fi_close(&b->ps->fid);
	if (b->domain)
		fi_close(&b->domain->fid);
	if (b->fabric)
		fi_close(&b->fabric->fid);
	if (b->info)
		fi_freeinfo(b->info);
	memset(b, 0, sizeof(*b));
}

static inline int fab_pollset_run(void *arg, struct bench_round *r)
{
	struct fab_pollset *b = arg;
	void *ctx[8];
	uint64_t n = 0, t0 = bench_now_ns();
	int k;

	do {
		for (k = 0; k < 256; k++, n++)
			if (fi_poll(b->ps, ctx, 8) < 0)
				return bench_fail("fi_poll");
	} while (!bench_round_over(r, n, t0));
	r->items = n;
	r->ns = bench_now_ns() - t0;
	return 0;
}
#endif /* HAVE_FABRIC */

#endif /* LFPOLL_BENCH_PEER_FABRIC_H */
