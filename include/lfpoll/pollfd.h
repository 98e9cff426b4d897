/*
 * lfpoll pollfd set: an array of struct pollfd with a change_index that
 * increases on every effective add, del or mod (fi_poll(3) FI_WAIT_POLLFD).
 *
 * Writers serialise on a mutex; readers never block and never block
 * writers: the array is guarded by a sequence counter (a seqlock) and a
 * reader copies it, then keeps the copy only if the sequence did not move.
 * When the array grows, the old one is kept on a retired list until
 * lfp_pollfds_fini, so a reader copying a stale array reads valid memory
 * (the copy is then discarded).  Retired arrays add up to less than the
 * live one, so memory stays under twice the largest set.
 */
#ifndef LFPOLL_POLLFD_H
#define LFPOLL_POLLFD_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp__pollfd_arr {
	struct lfp__pollfd_arr *retired; /* older arrays, freed at fini */
	size_t cap;
	struct pollfd *fds;
	void **ctx;
};

struct lfp_pollfds {
	uint64_t seq;          /* odd while a writer changes the array */
	uint64_t change_index; /* effective changes so far */
	uint64_t nfds;
	struct lfp__pollfd_arr *arr;
	pthread_mutex_t lock;  /* writers only */
} LFP__ALIGN8;

LFP_INLINE struct lfp__pollfd_arr *lfp__pollfd_arr_new(size_t cap)
{
	struct lfp__pollfd_arr *a =
		(struct lfp__pollfd_arr *)calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cap = cap;
	a->fds = (struct pollfd *)calloc(cap, sizeof(*a->fds));
	a->ctx = (void **)calloc(cap, sizeof(*a->ctx));
	if (!a->fds || !a->ctx) {
		free(a->fds);
		free(a->ctx);
		free(a);
		return NULL;
	}
	return a;
}

LFP_INLINE int lfp_pollfds_init(struct lfp_pollfds *set)
{
	/* 8-byte aligned, as its type is (LFP__ALIGN8, common.h). */
	if (!set || ((uintptr_t)set & 7) != 0)
		return -EINVAL;
	memset(set, 0, sizeof(*set));
	set->arr = lfp__pollfd_arr_new(8);
	if (!set->arr)
		return -ENOMEM;
	if (pthread_mutex_init(&set->lock, NULL)) {
		free(set->arr->fds);
		free(set->arr->ctx);
		free(set->arr);
		set->arr = NULL;
		return -ENOMEM;
	}
	return 0;
}

LFP_INLINE void lfp_pollfds_fini(struct lfp_pollfds *set)
{
	struct lfp__pollfd_arr *a, *next;

	if (!set || !set->arr)
		return;
	for (a = set->arr; a; a = next) {
		next = a->retired;
		free(a->fds);
		free(a->ctx);
		free(a);
	}
	set->arr = NULL;
	pthread_mutex_destroy(&set->lock);
}

/* Writer side of the seqlock; called with set->lock held. */
LFP_INLINE void lfp__pollfds_write_begin(struct lfp_pollfds *set)
{
	/* Relaxed store of the odd value, then a release fence: a reader that
	 * sees any array write below also sees the odd sequence (pairs with
	 * the reader's acquire fence, F2). */
	lfp__st_rlx_u64(&set->seq, set->seq + 1);
	lfp__fence_rel();
	LFP__SCHED("pollfd.write", set);
}

LFP_INLINE void lfp__pollfds_write_end(struct lfp_pollfds *set)
{
	lfp__st_rlx_u64(&set->change_index, set->change_index + 1);
	/* Release: the array, nfds and change_index are visible to a reader
	 * that acquires the even value (pairs with F1). */
	lfp__st_rel_u64(&set->seq, set->seq + 1);
}

LFP_INLINE long lfp__pollfds_find(const struct lfp_pollfds *set, int fd)
{
	size_t i;

	for (i = 0; i < set->nfds; i++)
		if (set->arr->fds[i].fd == fd)
			return (long)i;
	return -1;
}

/* Add fd; -EEXIST when present, -EINVAL for a negative fd. */
LFP_INLINE int lfp_pollfds_add(struct lfp_pollfds *set, int fd, short events,
                               void *context)
{
	struct lfp__pollfd_arr *a, *b;
	struct pollfd p;
	size_t n;

	if (!set || fd < 0)
		return -EINVAL;
	pthread_mutex_lock(&set->lock);
	if (lfp__pollfds_find(set, fd) >= 0) {
		pthread_mutex_unlock(&set->lock);
		return -EEXIST;
	}
	a = set->arr;
	n = set->nfds;
	if (n == a->cap) {
		/* Grow outside the seqlock: readers keep copying the old array,
		 * which stays allocated on the retired list. */
		b = lfp__pollfd_arr_new(a->cap * 2);
		if (!b) {
			pthread_mutex_unlock(&set->lock);
			return -ENOMEM;
		}
		memcpy(b->fds, a->fds, n * sizeof(*a->fds));
		memcpy(b->ctx, a->ctx, n * sizeof(*a->ctx));
		b->retired = a;
		a = b;
	}
	p.fd = fd;
	p.events = events;
	p.revents = 0;
	lfp__pollfds_write_begin(set);
	lfp__copy_racy_in(&a->fds[n], &p, sizeof(p));
	a->ctx[n] = context;
	/* Release: a grown array's contents before its pointer; pairs with
	 * the reader's acquire of arr in lfp_pollfds_get (a reader between
	 * F1 and F2 may see either array: both stay valid, see retired). */
	lfp__st_rel_ptr((void **)&set->arr, a);
	lfp__st_rlx_u64(&set->nfds, n + 1);
	lfp__pollfds_write_end(set);
	pthread_mutex_unlock(&set->lock);
	return 0;
}

/* Take the writers' lock and find fd: its index, with the lock held; or
 * -EINVAL / -ENOENT, without it. */
LFP_INLINE long lfp__pollfds_lock_find(struct lfp_pollfds *set, int fd)
{
	long i;

	if (!set)
		return -EINVAL;
	pthread_mutex_lock(&set->lock);
	i = lfp__pollfds_find(set, fd);
	if (i < 0) {
		pthread_mutex_unlock(&set->lock);
		return -ENOENT;
	}
	return i;
}

/* Change fd's events; -ENOENT when absent.  The same events is no change. */
LFP_INLINE int lfp_pollfds_mod(struct lfp_pollfds *set, int fd, short events)
{
	long i;
	struct pollfd p;

	i = lfp__pollfds_lock_find(set, fd);
	if (i < 0)
		return (int)i;
	if (set->arr->fds[i].events != events) {
		p = set->arr->fds[i];
		p.events = events;
		lfp__pollfds_write_begin(set);
		lfp__copy_racy_in(&set->arr->fds[i], &p, sizeof(p));
		lfp__pollfds_write_end(set);
	}
	pthread_mutex_unlock(&set->lock);
	return 0;
}

/* Remove fd (the last entry takes its place); -ENOENT when absent. */
LFP_INLINE int lfp_pollfds_del(struct lfp_pollfds *set, int fd)
{
	long i;
	size_t last;
	struct lfp__pollfd_arr *a;

	i = lfp__pollfds_lock_find(set, fd);
	if (i < 0)
		return (int)i;
	a = set->arr;
	last = set->nfds - 1;
	lfp__pollfds_write_begin(set);
	if ((size_t)i != last) {
		lfp__copy_racy_in(&a->fds[i], &a->fds[last], sizeof(a->fds[i]));
		a->ctx[i] = a->ctx[last];
	}
	lfp__st_rlx_u64(&set->nfds, last);
	lfp__pollfds_write_end(set);
	pthread_mutex_unlock(&set->lock);
	return 0;
}

/*
 * Snapshot the set.  On input out->nfds is the room in out->fd.  Sets
 * out->change_index and out->nfds (entries in the set); fills out->fd and
 * returns 0 when they fit, else returns -LFP_ETOOSMALL (nfds = 0 is the cheap
 * check for a change).  The array is exactly the version of that
 * change_index.  After -LFP_ETOOSMALL out->fd may hold a copy an earlier
 * attempt made before the set changed and grew: its contents are then
 * unspecified (lfp_pollfds(3)).
 */
LFP_INLINE int lfp_pollfds_get(struct lfp_pollfds *set, struct lfp_wait_pollfd *out)
{
	uint64_t s1, ci, n;
	struct lfp__pollfd_arr *a;
	size_t room;

	if (!set || !out || (out->nfds && !out->fd))
		return -EINVAL;
	room = out->nfds;
	for (;;) {
		/* F1: acquire pairs with the release in write_end. */
		s1 = lfp__ld_acq_u64(&set->seq);
		if (s1 & 1) {
			lfp__cpu_relax();
			continue;
		}
		ci = lfp__ld_rlx_u64(&set->change_index);
		n = lfp__ld_rlx_u64(&set->nfds);
		if (n <= room) {
			/* Acquire: pairs with the writer's release of arr. */
			a = (struct lfp__pollfd_arr *)lfp__ld_acq_ptr((void *const *)&set->arr);
			/* A torn read of a stale array is possible here and is
			 * discarded by the check below. */
			lfp__copy_racy_out(out->fd, a->fds,
			                   n <= a->cap ? n * sizeof(*out->fd) : 0);
		}
		/* F2: orders the loads above before the re-check; pairs with
		 * the release fence in write_begin. */
		lfp__fence_acq();
		if (lfp__ld_rlx_u64(&set->seq) == s1)
			break;
	}
	out->change_index = ci;
	out->nfds = (size_t)n;
	return n <= room ? 0 : -LFP_ETOOSMALL;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_POLLFD_H */
