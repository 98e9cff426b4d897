/*
 * support/vf/vf.c: the fake kernel and provider behind a test-owned
 * libibverbs context. Contract in vf.h, method in docs/verbs.md, "Testing without hardware".
 *
 * Locks, in the only order they are ever nested:
 *   ibv_context.mutex (libibverbs: ibv_destroy_comp_channel holds it while it
 *     calls close(), which lands in our interposer)
 *   -> vf__lock: fd registrations, the object registry, discard filters,
 *      counts of records read
 *   -> an object's own ibv mutex (cq->mutex, qp->mutex...: the ack counters)
 *      or a CQ's qlock (its CQE ring and arm state).
 * A CQ's qlock is never held while taking vf__lock; hooks run with no lock.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* this file defines read(); fortify would inline one */

#include "vf.h"

#include <rdma/ib_user_verbs.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(struct ib_uverbs_async_event_desc) == 16, "async record");
_Static_assert(sizeof(struct ib_uverbs_comp_event_desc) == 8, "comp record");

#define VF__CTX_MAGIC 0x7666637478u /* "vfctx" */
#define VF__CQ_MAGIC 0x76666371u    /* "vfcq" */
#define VF__DESTROY_TIMEOUT_MS 2000

static pthread_mutex_t vf__lock = PTHREAD_MUTEX_INITIALIZER;

static void vf__die(const char *what)
{
	fprintf(stderr, "verbs_fake: %s\n", what);
	abort();
}

/* ------------------------------------------------------ real functions */

typedef ssize_t (*vf__read_fn)(int, void *, size_t);
typedef int (*vf__close_fn)(int);
typedef int (*vf__poll_fn)(struct pollfd *, nfds_t, int);
typedef struct ibv_device **(*vf__devlist_fn)(int *);

/*
 * The next definition after this executable: libc's, or a sanitizer's
 * interceptor, which must stay in the chain (TSan learns pipe
 * happens-before and fd reuse from it). A sanitizer runtime linked into
 * the executable itself (clang's) defines its interceptor there, where this
 * file's own definition takes the name and RTLD_NEXT skips past both to
 * libc: TSan then saw no close and reported races between two objects
 * that reused one fd number. So the interceptor is looked up by its own
 * name first (two spellings across LLVM versions). Resolution is
 * idempotent, so the cached pointers are relaxed: a racing thread at worst
 * resolves the same value again.
 */
static void *vf__next(const char *name, const char *version)
{
	static const char *const prefixes[] = { "__interceptor_", "___interceptor_" };
	char iname[64];
	void *p = NULL;
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !p; i++) {
		snprintf(iname, sizeof(iname), "%s%s", prefixes[i], name);
		p = dlsym(RTLD_DEFAULT, iname);
	}
	if (p)
		return p;
	if (version)
		p = dlvsym(RTLD_NEXT, name, version);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

/* The next definitions of the calls this file defines, as vf__next found
 * them: NULL until looked up (vf__resolve, or the first call). */
static _Atomic(void *) vf__read_next;
static _Atomic(void *) vf__close_next;
static _Atomic(void *) vf__poll_next;
static _Atomic(void *) vf__devlist_next;

/* *slot, looked up and kept there the first time: NULL when there is no
 * next definition. */
static void *vf__next_cached(_Atomic(void *) *slot, const char *name,
                             const char *version)
{
	void *p = atomic_load_explicit(slot, memory_order_relaxed);

	if (!p && (p = vf__next(name, version)))
		atomic_store_explicit(slot, p, memory_order_relaxed);
	return p;
}

static ssize_t vf__real_read(int fd, void *buf, size_t n)
{
	void *p = vf__next_cached(&vf__read_next, "read", NULL);
	vf__read_fn f;

	if (!p)
		return syscall(SYS_read, fd, buf, n);
	memcpy(&f, &p, sizeof f);
	return f(fd, buf, n);
}

static int vf__real_close(int fd)
{
	void *p = vf__next_cached(&vf__close_next, "close", NULL);
	vf__close_fn f;

	if (!p)
		return (int)syscall(SYS_close, fd);
	memcpy(&f, &p, sizeof f);
	return f(fd);
}

/* poll by system call, for a process where the lookup found nothing. */
static __attribute__((noinline)) int vf__sys_poll(struct pollfd *fds, nfds_t n,
                                                 int timeout)
{
	struct timespec ts, *tp = NULL;

	if (timeout >= 0) {
		ts.tv_sec = timeout / 1000;
		ts.tv_nsec = (long)(timeout % 1000) * 1000000L;
		tp = &ts;
	}
	return (int)syscall(SYS_ppoll, fds, n, tp, NULL, 0);
}

/*
 * The real poll.  It is where a thread cancelled asleep in poll() unwinds
 * from, so neither it nor the interposer below keeps a local in memory:
 * ASan's redzones around one would stay poisoned past the cancellation,
 * and ASan then fails on the thread's next no-return call.
 */
static int vf__real_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	void *p = vf__next_cached(&vf__poll_next, "poll", NULL);
	vf__poll_fn f;

	if (!p)
		return vf__sys_poll(fds, n, timeout);
	memcpy(&f, &p, sizeof f);
	return f(fds, n, timeout);
}

/*
 * Resolve before main, single-threaded: close() can run in a child between
 * fork and exec, where a first dlsym is not safe. The lazy paths above are
 * the fallback for calls made before this constructor.
 */
static void vf__resolve(void) __attribute__((constructor));

static void vf__resolve(void)
{
	vf__next_cached(&vf__read_next, "read", NULL);
	vf__next_cached(&vf__close_next, "close", NULL);
	vf__next_cached(&vf__poll_next, "poll", NULL);
	vf__next_cached(&vf__devlist_next, "ibv_get_device_list", "IBVERBS_1.1");
}

/* Writes one whole record (records are far below PIPE_BUF: atomic). */
static int vf__write_record(int fd, const void *rec, size_t len)
{
	ssize_t w;

	do
		w = write(fd, rec, len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == len ? 0 : -EIO;
}

/* ------------------------------------------------------------- objects */

enum vf__kind { VF__NOKIND = -1, VF__CQ, VF__QP, VF__SRQ, VF__WQ };

/* Discard the next count records naming (kind, handle): kernel-side purge. */
struct vf__filter {
	struct vf__filter *next;
	enum vf__kind kind;
	uint64_t handle;
	unsigned long count;
};

struct vf__chan;

struct vf__ctx {
	unsigned long magic;
	struct ibv_device dev;
	struct verbs_context vctx;
	int (**page)(void);
	int async_rfd, async_wfd;  /* under vf__lock */
	int gone;                  /* under vf__lock */
	atomic_int destroy_timeout_ms;
	struct vf__filter *filters; /* async records; under vf__lock */
	struct vf__chan *chans;     /* under vf__lock */
};

struct vf__chan {
	struct vf__chan *next;
	struct vf__ctx *ctx;
	struct ibv_comp_channel *ch;
	int rfd, wfd;
	struct vf__filter *filters; /* completion records */
};

/* Registry entry of every live CQ, QP, SRQ and WQ; fields under vf__lock. */
struct vf__obj {
	struct vf__obj *next;
	enum vf__kind kind;
	void *handle;
	struct vf__ctx *ctx;
	pthread_mutex_t *mutex;     /* the ibv object's: ibv_ack_* take it */
	pthread_cond_t *cond;
	uint32_t *async_completed;  /* what ibv_ack_async_event increments */
	int dying;
	unsigned long async_written;
	unsigned long async_read;   /* also under *mutex: destroy waits on it */
};

struct vf__cqe {
	struct ibv_wc wc;
	struct vf_cqe_ex ex;
	int solicited;
};

struct vf__cq {
	/* An extended CQ starts with the fields of a plain one (the cast of
	 * ibv_cq_ex_to_cq), so one fake serves both. */
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;    /* vf_cq_ex_create */
	};
	unsigned long magic;
	int is_ex;
	uint64_t wc_flags;         /* an extended CQ's, as created */
	struct vf__obj obj;
	struct vf__chan *chan;
	unsigned long events_read; /* under vf__lock and cq.mutex */

	pthread_mutex_t qlock;     /* everything below */
	int wfd;
	struct vf__cqe *ring;
	unsigned head, count, depth;
	enum vf_arm armed;
	int dying, gone;
	int fail_arm, fail_poll;
	vf_cq_hook before, after;
	void *hook_arg;
	struct vf_cq_stats st;
	int polling;               /* between start_poll's 0 and end_poll: qlock held */
	int cur;                   /* ring[head] is the current (unconsumed) entry */
};

struct vf__qp { struct ibv_qp qp; struct vf__obj obj; };
struct vf__srq { struct ibv_srq srq; struct vf__obj obj; };
struct vf__wq { struct ibv_wq wq; struct vf__obj obj; };

static struct vf__obj *vf__objs; /* under vf__lock */
static atomic_ulong vf__discarded;
static atomic_int vf__nlive; /* contexts + channels + objects */

int vf_live(void)
{
	return atomic_load_explicit(&vf__nlive, memory_order_relaxed);
}

static void vf__live(int delta)
{
	atomic_fetch_add_explicit(&vf__nlive, delta, memory_order_relaxed);
}

static struct vf__ctx *vf__ctx_of(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx;

	if (!ibctx)
		vf__die("NULL context");
	ctx = (struct vf__ctx *)(void *)((char *)ibctx -
		offsetof(struct vf__ctx, vctx.context));
	if (ctx->magic != VF__CTX_MAGIC)
		vf__die("not a vf context (created by vf_ctx_create?)");
	return ctx;
}

static struct vf__cq *vf__cq_of(struct ibv_cq *ibcq)
{
	struct vf__cq *cq = (struct vf__cq *)(void *)ibcq;

	if (!ibcq || cq->magic != VF__CQ_MAGIC)
		vf__die("not a vf CQ");
	return cq;
}

/* Under vf__lock. */
static struct vf__obj *vf__lookup(enum vf__kind kind, uint64_t handle)
{
	struct vf__obj *o;

	for (o = vf__objs; o; o = o->next)
		if (o->kind == kind && (uint64_t)(uintptr_t)o->handle == handle)
			return o;
	return NULL;
}

static void vf__register(struct vf__obj *o)
{
	vf__live(1);
	pthread_mutex_lock(&vf__lock);
	o->next = vf__objs;
	vf__objs = o;
	pthread_mutex_unlock(&vf__lock);
}

/* Under vf__lock. */
static void vf__unregister(struct vf__obj *o)
{
	struct vf__obj **pp;

	for (pp = &vf__objs; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			return;
		}
}

static enum vf__kind vf__affiliation(uint32_t type)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		return VF__CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return VF__QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return VF__SRQ;
	case IBV_EVENT_WQ_FATAL:
		return VF__WQ;
	default:
		return VF__NOKIND;
	}
}

/* Under vf__lock. Adds count to the filter for (kind, handle). */
static int vf__filter_add(struct vf__filter **list, enum vf__kind kind,
			  uint64_t handle, unsigned long count)
{
	struct vf__filter *f;

	for (f = *list; f; f = f->next)
		if (f->kind == kind && f->handle == handle) {
			f->count += count;
			return 0;
		}
	f = calloc(1, sizeof *f);
	if (!f)
		return -ENOMEM;
	f->kind = kind;
	f->handle = handle;
	f->count = count;
	f->next = *list;
	*list = f;
	return 0;
}

/* Under vf__lock. True when the record is to be discarded. */
static int vf__filter_take(struct vf__filter **list, enum vf__kind kind,
			   uint64_t handle)
{
	struct vf__filter **pp, *f;

	for (pp = list; (f = *pp); pp = &f->next)
		if (f->kind == kind && f->handle == handle) {
			if (--f->count == 0) {
				*pp = f->next;
				free(f);
			}
			atomic_fetch_add_explicit(&vf__discarded, 1,
						  memory_order_relaxed);
			return 1;
		}
	return 0;
}

static void vf__filters_free(struct vf__filter **list)
{
	while (*list) {
		struct vf__filter *f = *list;

		*list = f->next;
		free(f);
	}
}

/* ------------------------------------------------------------ fd table */

enum vf__fdkind { VF__FD_NONE, VF__FD_CHAN, VF__FD_ASYNC };

struct vf__fd {
	/*
	 * Written under vf__lock, read without it only as a fast-path hint:
	 * a vf fd is registered before its number is handed to anyone, so a
	 * read() of it cannot race with its registration.
	 */
	atomic_int kind;
	atomic_int gone;
	atomic_int err, count;  /* read injection; err is set before count */
	_Atomic(vf_fd_hook_fn) hook;  /* one-shot, before the next read or poll */
	void *_Atomic hook_arg;         /* stored before hook */
	atomic_ulong reads;
	void *owner;            /* vf__chan or vf__ctx; under vf__lock */
};

static struct vf__fd vf__fds[VF_MAX_FD];

static struct vf__fd *vf__fd_at(int fd)
{
	return fd >= 0 && fd < VF_MAX_FD ? &vf__fds[fd] : NULL;
}

static void vf__fd_reset(struct vf__fd *f)
{
	atomic_store_explicit(&f->count, 0, memory_order_relaxed);
	atomic_store_explicit(&f->err, 0, memory_order_relaxed);
	atomic_store_explicit(&f->gone, 0, memory_order_relaxed);
	atomic_store_explicit(&f->reads, 0, memory_order_relaxed);
	atomic_store_explicit(&f->hook, NULL, memory_order_relaxed);
}

/* Under vf__lock. */
static void vf__fd_register(int fd, enum vf__fdkind kind, void *owner)
{
	struct vf__fd *f = vf__fd_at(fd);

	if (!f)
		return; /* callers check fd < VF_MAX_FD first */
	vf__fd_reset(f);
	f->owner = owner;
	atomic_store_explicit(&f->kind, kind, memory_order_relaxed);
}

/* Under vf__lock. */
static void vf__fd_unregister(int fd)
{
	struct vf__fd *f = vf__fd_at(fd);

	if (!f)
		return;
	atomic_store_explicit(&f->kind, VF__FD_NONE, memory_order_relaxed);
	f->owner = NULL;
}

static void vf__fd_gone(int fd)
{
	struct vf__fd *f = vf__fd_at(fd);

	/* release: pairs with the acquire in vf__read_tracked (EOF seen) */
	if (f)
		atomic_store_explicit(&f->gone, 1, memory_order_release);
}

/* The one-shot hook of f, if set: run it, on this thread, once. */
static void vf__hook_take(struct vf__fd *f, int fd)
{
	/* acquire: pairs with the release in vf_fd_hook (arg before fn) */
	vf_fd_hook_fn fn = atomic_exchange_explicit(&f->hook, NULL,
	                                             memory_order_acquire);

	if (fn)
		fn(fd, atomic_load_explicit(&f->hook_arg, memory_order_relaxed));
}

/* One injected error, or 0. */
static int vf__inject_take(struct vf__fd *f)
{
	int c = atomic_load_explicit(&f->count, memory_order_acquire);

	for (;;) {
		if (c == 0)
			return 0;
		if (c < 0)
			break;
		/* acquire: pairs with the release in vf_inject_read, so the
		 * err we read below is the one set with this count. */
		if (atomic_compare_exchange_weak_explicit(&f->count, &c, c - 1,
				memory_order_acquire, memory_order_acquire))
			break;
	}
	return atomic_load_explicit(&f->err, memory_order_relaxed);
}

/* ---------------------------------------------------------- accounting */

/*
 * Under vf__lock: one completion record has been read from chan. Counts it
 * for its CQ (the kernel's comp_events_reported), or reports it for
 * discarding when it names a CQ destroyed before the record was read.
 */
static int vf__account_comp(struct vf__chan *chan, const unsigned char *rec)
{
	struct ib_uverbs_comp_event_desc d;
	struct vf__obj *o;

	memcpy(&d, rec, sizeof d);
	if (vf__filter_take(&chan->filters, VF__CQ, d.cq_handle))
		return 1;
	o = vf__lookup(VF__CQ, d.cq_handle);
	if (o) {
		struct vf__cq *cq = (struct vf__cq *)o->handle;

		pthread_mutex_lock(o->mutex);
		cq->events_read++;
		pthread_cond_broadcast(o->cond);
		pthread_mutex_unlock(o->mutex);
	}
	return 0;
}

/* Under vf__lock: the same for one async record read from ctx's fd. */
static int vf__account_async(struct vf__ctx *ctx, const unsigned char *rec)
{
	struct ib_uverbs_async_event_desc d;
	enum vf__kind kind;
	struct vf__obj *o;

	memcpy(&d, rec, sizeof d);
	kind = vf__affiliation(d.event_type);
	if (kind == VF__NOKIND)
		return 0;
	if (vf__filter_take(&ctx->filters, kind, d.element))
		return 1;
	o = vf__lookup(kind, d.element);
	if (o) {
		pthread_mutex_lock(o->mutex);
		o->async_read++;
		pthread_cond_broadcast(o->cond);
		pthread_mutex_unlock(o->mutex);
	}
	return 0;
}

/*
 * Under vf__lock: accounts the whole records in buf and squeezes out the
 * discarded ones. Returns the bytes left. A partial trailing record (never
 * produced by libibverbs, which reads exactly one record) is left as is.
 */
static size_t vf__account(struct vf__fd *f, unsigned char *buf, size_t len)
{
	int kind = atomic_load_explicit(&f->kind, memory_order_relaxed);
	size_t rsz = kind == VF__FD_CHAN ? sizeof(struct ib_uverbs_comp_event_desc)
					 : sizeof(struct ib_uverbs_async_event_desc);
	size_t nrec = len / rsz, keep = 0, i, tail = len - nrec * rsz;

	if (kind == VF__FD_NONE)
		return len;
	for (i = 0; i < nrec; i++) {
		unsigned char *rec = buf + i * rsz;
		int drop = kind == VF__FD_CHAN ? vf__account_comp(f->owner, rec)
					       : vf__account_async(f->owner, rec);

		if (drop)
			continue;
		if (keep != i)
			memmove(buf + keep * rsz, rec, rsz);
		keep++;
	}
	if (tail && keep != nrec)
		memmove(buf + keep * rsz, buf + nrec * rsz, tail);
	return keep * rsz + tail;
}

static ssize_t vf__read_tracked(int fd, struct vf__fd *f, void *buf, size_t n)
{
	for (;;) {
		ssize_t r = vf__real_read(fd, buf, n);
		size_t kept;
		int saved;

		/* acquire: pairs with the release in vf__fd_gone, made before
		 * the write end was closed, which is what gave us this EOF. */
		if (r == 0 && n > 0 &&
		    atomic_load_explicit(&f->gone, memory_order_acquire)) {
			errno = EIO; /* the disassociated kernel queue, empty */
			return -1;
		}
		if (r <= 0)
			return r;
		saved = errno;
		pthread_mutex_lock(&vf__lock);
		kept = vf__account(f, buf, (size_t)r);
		pthread_mutex_unlock(&vf__lock);
		errno = saved;
		if (kept > 0)
			return (ssize_t)kept;
		/* Only purged records: the kernel would not have had them.
		 * Read on (EAGAIN on a non-blocking fd, else block). */
	}
}

/* ---------------------------------------------------------- interposers */

/*
 * read(), close() and ibv_get_device_list() defined in the executable take
 * precedence over libc's and libibverbs's for every caller in the process,
 * libibverbs.so included; -Wl,--wrap would only rewrite this executable's own
 * calls. tests/verbs.mk exports them to the dynamic symbol table.
 */
ssize_t read(int fd, void *buf, size_t n)
{
	struct vf__fd *f = vf__fd_at(fd);
	int err;

	if (!f)
		return vf__real_read(fd, buf, n);
	atomic_fetch_add_explicit(&f->reads, 1, memory_order_relaxed);
	vf__hook_take(f, fd);
	err = vf__inject_take(f);
	if (err) {
		errno = err;
		return -1;
	}
	/* Relaxed hints: vf__read_tracked decides under vf__lock and after
	 * the read, with acquire for gone. */
	if (atomic_load_explicit(&f->kind, memory_order_relaxed) == VF__FD_NONE &&
	    !atomic_load_explicit(&f->gone, memory_order_relaxed))
		return vf__real_read(fd, buf, n);
	return vf__read_tracked(fd, f, buf, n);
}

/* vf_poll_late's setting, for the calling thread. */
static _Thread_local int vf__poll_late_ms;

/* Out of line: its timespec lives in a frame that has returned before any
 * poll that a cancellation may unwind (vf__real_poll). */
static __attribute__((noinline)) void vf__sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void vf_poll_late(int ms)
{
	vf__poll_late_ms = ms;
}

/*
 * poll() as the kernel answers it for a channel or async fd of a device
 * that is gone (ib_uverbs_event_poll): POLLIN while records are queued,
 * POLLERR once none is.  The pipe whose write end vf_ctx_device_gone
 * closed says POLLHUP instead, with POLLIN while data is left.  Every
 * other fd, and every fd before its device is gone, as the real poll.
 * Before it, each fd's hook (vf_fd_hook); after it, vf_poll_late's look.
 */
int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	nfds_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct vf__fd *f = vf__fd_at(fds[i].fd);

		if (f)
			vf__hook_take(f, fds[i].fd);
	}
	ret = vf__real_poll(fds, n, timeout);

	if (ret > 0 && vf__poll_late_ms > 0) { /* a thread scheduled late */
		vf__sleep_ms(vf__poll_late_ms);
		ret = vf__real_poll(fds, n, 0);
	}

	for (i = 0; ret > 0 && i < n; i++) {
		struct vf__fd *f = vf__fd_at(fds[i].fd);

		/* Relaxed: the write end was closed after gone was stored,
		 * so a POLLHUP seen here comes with gone set. */
		if (!f || !(fds[i].revents & POLLHUP) ||
		    !atomic_load_explicit(&f->gone, memory_order_relaxed))
			continue;
		fds[i].revents &= (short)~POLLHUP;
		if (!(fds[i].revents & POLLIN))
			fds[i].revents |= POLLERR;
	}
	return ret;
}

/* Under vf__lock. */
static void vf__chan_free(struct vf__chan *chan, int close_rfd, int free_ch)
{
	struct vf__chan **pp;

	for (pp = &chan->ctx->chans; *pp; pp = &(*pp)->next)
		if (*pp == chan) {
			*pp = chan->next;
			break;
		}
	vf__fd_unregister(chan->rfd);
	vf__filters_free(&chan->filters);
	if (chan->wfd >= 0)
		vf__real_close(chan->wfd);
	if (close_rfd)
		vf__real_close(chan->rfd);
	if (free_ch)
		free(chan->ch);
	free(chan);
	vf__live(-1);
}

int close(int fd)
{
	struct vf__fd *f = vf__fd_at(fd);

	if (f) {
		if (atomic_load_explicit(&f->kind, memory_order_relaxed) != VF__FD_NONE) {
			pthread_mutex_lock(&vf__lock);
			if (atomic_load_explicit(&f->kind, memory_order_relaxed) == VF__FD_CHAN) {
				/* ibv_destroy_comp_channel: it frees the struct. */
				vf__chan_free(f->owner, 0, 0);
			} else if (atomic_load_explicit(&f->kind, memory_order_relaxed) == VF__FD_ASYNC) {
				((struct vf__ctx *)f->owner)->async_rfd = -1;
				vf__fd_unregister(fd);
			}
			pthread_mutex_unlock(&vf__lock);
		}
		vf__fd_reset(f);
	}
	return vf__real_close(fd);
}

/* A setting the test makes before the calls it affects: relaxed. */
static atomic_int vf__devlist_err;

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	int err = atomic_load_explicit(&vf__devlist_err, memory_order_relaxed);
	vf__devlist_fn f;
	void *p;

	if (err) {
		if (num_devices)
			*num_devices = 0;
		errno = err;
		return NULL;
	}
	p = vf__next_cached(&vf__devlist_next, "ibv_get_device_list",
	                    "IBVERBS_1.1");
	if (!p) {
		errno = ENOSYS;
		return NULL;
	}
	memcpy(&f, &p, sizeof f);
	return f(num_devices);
}

void vf_device_list_fail(int err)
{
	atomic_store_explicit(&vf__devlist_err, err, memory_order_relaxed);
}

int vf_inject_read(int fd, int err, int count)
{
	struct vf__fd *f = vf__fd_at(fd);

	if (!f)
		return -EBADF;
	if (err == 0 || count == 0) {
		atomic_store_explicit(&f->count, 0, memory_order_relaxed);
		return 0;
	}
	atomic_store_explicit(&f->err, err, memory_order_relaxed);
	/* release: publishes err to the reader's acquire in vf__inject_take */
	atomic_store_explicit(&f->count, count < 0 ? -1 : count, memory_order_release);
	return 0;
}

int vf_fd_hook(int fd, vf_fd_hook_fn fn, void *arg)
{
	struct vf__fd *f = vf__fd_at(fd);

	if (!f)
		return -EBADF;
	atomic_store_explicit(&f->hook_arg, arg, memory_order_relaxed);
	/* release: publishes arg to vf__hook_take's acquire */
	atomic_store_explicit(&f->hook, fn, memory_order_release);
	return 0;
}

unsigned long vf_fd_reads(int fd)
{
	struct vf__fd *f = vf__fd_at(fd);

	return f ? atomic_load_explicit(&f->reads, memory_order_relaxed) : 0;
}

int vf_fd_pending(int fd)
{
	int n = 0;

	if (ioctl(fd, FIONREAD, &n) < 0)
		return -errno;
	return n;
}

int vf_fd_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

unsigned long vf_records_discarded(void)
{
	return atomic_load_explicit(&vf__discarded, memory_order_relaxed);
}

/* ---------------------------------------------------- private ops page */

typedef int (*vf__slot_fn)(void);

static atomic_ulong vf__hits[VF_PRIV_SLOTS];

static int vf__hit(int slot)
{
	atomic_fetch_add_explicit(&vf__hits[slot], 1, memory_order_relaxed);
	return 0;
}

/*
 * 512 stubs, vf__stub_abc for slot a*64 + b*8 + c (octal digits). Called
 * through pointers of other types by libibverbs: on x86-64 and aarch64 the
 * extra arguments are ignored and the 0 in the return register reads as
 * 0, NULL or nothing.
 */
#define VF__STUB(a, b, c) \
	static int vf__stub_##a##b##c(void) { return vf__hit((a) * 64 + (b) * 8 + (c)); }
#define VF__STUB8(a, b) VF__STUB(a, b, 0) VF__STUB(a, b, 1) VF__STUB(a, b, 2) \
	VF__STUB(a, b, 3) VF__STUB(a, b, 4) VF__STUB(a, b, 5) VF__STUB(a, b, 6) \
	VF__STUB(a, b, 7)
#define VF__STUB64(a) VF__STUB8(a, 0) VF__STUB8(a, 1) VF__STUB8(a, 2) \
	VF__STUB8(a, 3) VF__STUB8(a, 4) VF__STUB8(a, 5) VF__STUB8(a, 6) \
	VF__STUB8(a, 7)
VF__STUB64(0) VF__STUB64(1) VF__STUB64(2) VF__STUB64(3)
VF__STUB64(4) VF__STUB64(5) VF__STUB64(6) VF__STUB64(7)

#define VF__REF(a, b, c) vf__stub_##a##b##c,
#define VF__REF8(a, b) VF__REF(a, b, 0) VF__REF(a, b, 1) VF__REF(a, b, 2) \
	VF__REF(a, b, 3) VF__REF(a, b, 4) VF__REF(a, b, 5) VF__REF(a, b, 6) \
	VF__REF(a, b, 7)
#define VF__REF64(a) VF__REF8(a, 0) VF__REF8(a, 1) VF__REF8(a, 2) \
	VF__REF8(a, 3) VF__REF8(a, 4) VF__REF8(a, 5) VF__REF8(a, 6) \
	VF__REF8(a, 7)

static const vf__slot_fn vf__stubs[VF_PRIV_SLOTS] = {
	VF__REF64(0) VF__REF64(1) VF__REF64(2) VF__REF64(3)
	VF__REF64(4) VF__REF64(5) VF__REF64(6) VF__REF64(7)
};

unsigned long vf_priv_hits(int slot)
{
	if (slot < 0 || slot >= VF_PRIV_SLOTS)
		return 0;
	return atomic_load_explicit(&vf__hits[slot], memory_order_relaxed);
}

unsigned long vf_priv_hits_total(void)
{
	unsigned long t = 0;
	int i;

	for (i = 0; i < VF_PRIV_SLOTS; i++)
		t += atomic_load_explicit(&vf__hits[i], memory_order_relaxed);
	return t;
}

static int vf__slot_of[VF_SLOT_NUM] = { -1, -1, -1, -1 };
static char vf__canary_buf[640];
static const char *vf__canary = "verbs_fake: slot discovery has not run";
static pthread_once_t vf__discover_once = PTHREAD_ONCE_INIT;

static const char *const vf__slot_names[VF_SLOT_NUM] = {
	"cq_event (ibv_get_cq_event)",
	"async_event (ibv_get_async_event)",
	"create_cq (ibv_create_cq)",
	"destroy_cq (ibv_destroy_cq)",
};

const char *vf_priv_slot_name(enum vf_slot which)
{
	return (unsigned)which < VF_SLOT_NUM ? vf__slot_names[which] : "?";
}

static void vf__snapshot(unsigned long *snap)
{
	int i;

	for (i = 0; i < VF_PRIV_SLOTS; i++)
		snap[i] = atomic_load_explicit(&vf__hits[i], memory_order_relaxed);
}

/* Slots whose count moved since snap; *slot = the last such, else -1. */
static int vf__fired(const unsigned long *snap, int *slot)
{
	int i, n = 0;

	*slot = -1;
	for (i = 0; i < VF_PRIV_SLOTS; i++)
		if (atomic_load_explicit(&vf__hits[i], memory_order_relaxed) != snap[i]) {
			n++;
			*slot = i;
		}
	return n;
}

static void vf__canary_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void vf__canary_fail(const char *fmt, ...)
{
	static const char prefix[] =
		"verbs_fake: libibverbs private-ops slot discovery failed: ";
	static const char suffix[] =
		". The event path of this libibverbs build no longer matches "
		"docs/verbs.md (\"Provider hooks: slot discovery and the "
		"canary\"), so the fake context cannot drive it.";
	size_t len = sizeof prefix - 1;
	va_list ap;

	memcpy(vf__canary_buf, prefix, len);
	va_start(ap, fmt);
	vsnprintf(vf__canary_buf + len, sizeof vf__canary_buf - len, fmt, ap);
	va_end(ap);
	len = strlen(vf__canary_buf);
	snprintf(vf__canary_buf + len, sizeof vf__canary_buf - len, "%s", suffix);
	vf__canary = vf__canary_buf;
}

/*
 * Runs each libibverbs call once on a scratch context whose page holds only
 * stubs, and records which slot fired. Every check that fails leaves a
 * message for vf_priv_canary().
 */
static void vf__discover(void)
{
	static unsigned long snap[VF_PRIV_SLOTS];
	struct verbs_context *sv = calloc(1, sizeof *sv);
	int (**page)(void) = calloc(VF_PRIV_SLOTS, sizeof *page);
	struct ibv_device dev;
	struct ibv_comp_channel ch;
	struct ibv_cq cq;
	struct ibv_qp qp;
	struct ibv_async_event ev;
	struct ib_uverbs_comp_event_desc cd;
	struct ib_uverbs_async_event_desc ad;
	struct ibv_cq *got = NULL;
	void *got_ctx = NULL;
	int marker, cp[2] = { -1, -1 }, ap[2] = { -1, -1 }, n, slot, i, j;

	vf__canary = NULL;
	memset(&dev, 0, sizeof dev);
	memset(&ch, 0, sizeof ch);
	memset(&cq, 0, sizeof cq);
	memset(&qp, 0, sizeof qp);
	if (!sv || !page || pipe2(cp, O_CLOEXEC) || pipe2(ap, O_CLOEXEC)) {
		vf__canary_fail("could not allocate the scratch context");
		goto out;
	}
	memcpy(page, vf__stubs, sizeof vf__stubs);
	sv->sz = sizeof *sv;
	sv->priv = (struct verbs_ex_private *)(void *)page;
	sv->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	sv->context.cmd_fd = -1;
	sv->context.async_fd = ap[0];
	sv->context.device = &dev;
	pthread_mutex_init(&sv->context.mutex, NULL);
	ch.context = &sv->context;
	ch.fd = cp[0];
	cq.context = &sv->context;
	cq.cq_context = &marker;
	pthread_mutex_init(&cq.mutex, NULL);
	pthread_cond_init(&cq.cond, NULL);
	qp.context = &sv->context;
	pthread_mutex_init(&qp.mutex, NULL);
	pthread_cond_init(&qp.cond, NULL);

	/* cq_event */
	memset(&cd, 0, sizeof cd);
	cd.cq_handle = (uintptr_t)&cq;
	if (vf__write_record(cp[1], &cd, sizeof cd)) {
		vf__canary_fail("could not write a completion record");
		goto out;
	}
	vf__snapshot(snap);
	if (ibv_get_cq_event(&ch, &got, &got_ctx) || got != &cq || got_ctx != &marker) {
		vf__canary_fail("ibv_get_cq_event did not return the record's cq and cq_context");
		goto out;
	}
	n = vf__fired(snap, &slot);
	if (n != 1) {
		vf__canary_fail("ibv_get_cq_event called %d private-ops slots, want exactly 1", n);
		goto out;
	}
	vf__slot_of[VF_SLOT_CQ_EVENT] = slot;

	/* async_event */
	memset(&ad, 0, sizeof ad);
	ad.element = (uintptr_t)&qp;
	ad.event_type = IBV_EVENT_QP_FATAL;
	if (vf__write_record(ap[1], &ad, sizeof ad)) {
		vf__canary_fail("could not write an async record");
		goto out;
	}
	vf__snapshot(snap);
	if (ibv_get_async_event(&sv->context, &ev) || ev.event_type != IBV_EVENT_QP_FATAL ||
	    ev.element.qp != &qp) {
		vf__canary_fail("ibv_get_async_event did not decode a QP_FATAL record");
		goto out;
	}
	n = vf__fired(snap, &slot);
	if (n != 1) {
		vf__canary_fail("ibv_get_async_event called %d private-ops slots, want exactly 1", n);
		goto out;
	}
	vf__slot_of[VF_SLOT_ASYNC_EVENT] = slot;

	/* The acks must touch only the objects' mutex, cond and counters. */
	vf__snapshot(snap);
	ibv_ack_cq_events(&cq, 1);
	ibv_ack_async_event(&ev);
	n = vf__fired(snap, &slot);
	if (n != 0 || cq.comp_events_completed != 1 || qp.events_completed != 1) {
		vf__canary_fail("ibv_ack_cq_events + ibv_ack_async_event called %d slots "
				"(want 0) and left comp_events_completed %u, "
				"events_completed %u (want 1, 1)", n,
				cq.comp_events_completed, qp.events_completed);
		goto out;
	}

	/* create_cq: the stub returns NULL, so ibv_create_cq fails cleanly. */
	vf__snapshot(snap);
	if (ibv_create_cq(&sv->context, 1, NULL, NULL, 0) != NULL) {
		vf__canary_fail("ibv_create_cq returned a CQ from a stub");
		goto out;
	}
	n = vf__fired(snap, &slot);
	if (n != 1) {
		vf__canary_fail("ibv_create_cq called %d private-ops slots, want exactly 1", n);
		goto out;
	}
	vf__slot_of[VF_SLOT_CREATE_CQ] = slot;

	/* destroy_cq: no channel, so libibverbs touches no refcount. */
	vf__snapshot(snap);
	if (ibv_destroy_cq(&cq) != 0) {
		vf__canary_fail("ibv_destroy_cq failed on a stub");
		goto out;
	}
	n = vf__fired(snap, &slot);
	if (n != 1) {
		vf__canary_fail("ibv_destroy_cq called %d private-ops slots, want exactly 1", n);
		goto out;
	}
	vf__slot_of[VF_SLOT_DESTROY_CQ] = slot;

	for (i = 0; i < VF_SLOT_NUM; i++)
		for (j = i + 1; j < VF_SLOT_NUM; j++)
			if (vf__slot_of[i] == vf__slot_of[j]) {
				vf__canary_fail("%s and %s both called slot %d",
						vf__slot_names[i], vf__slot_names[j],
						vf__slot_of[i]);
				goto out;
			}
out:
	if (vf__canary)
		for (i = 0; i < VF_SLOT_NUM; i++)
			vf__slot_of[i] = -1;
	for (i = 0; i < 2; i++) {
		if (cp[i] >= 0)
			vf__real_close(cp[i]);
		if (ap[i] >= 0)
			vf__real_close(ap[i]);
	}
	pthread_mutex_destroy(&cq.mutex);
	pthread_cond_destroy(&cq.cond);
	pthread_mutex_destroy(&qp.mutex);
	pthread_cond_destroy(&qp.cond);
	if (sv)
		pthread_mutex_destroy(&sv->context.mutex);
	free(page);
	free(sv);
	/* Discovery's own calls are not the tests' business. */
	for (i = 0; i < VF_PRIV_SLOTS; i++)
		atomic_store_explicit(&vf__hits[i], 0, memory_order_relaxed);
}

const char *vf_priv_canary(void)
{
	pthread_once(&vf__discover_once, vf__discover);
	return vf__canary;
}

int vf_priv_slot(enum vf_slot which)
{
	pthread_once(&vf__discover_once, vf__discover);
	return (unsigned)which < VF_SLOT_NUM ? vf__slot_of[which] : -1;
}

/* ------------------------------------------------------------- fake CQ */

static int vf__poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct vf__cq *cq = vf__cq_of(ibcq);
	int k = 0;

	pthread_mutex_lock(&cq->qlock);
	cq->st.polls++;
	if (cq->fail_poll) {
		k = -cq->fail_poll;
		cq->fail_poll = 0;
		pthread_mutex_unlock(&cq->qlock);
		return k;
	}
	while (k < n && cq->count) {
		wc[k++] = cq->ring[cq->head].wc;
		cq->head = (cq->head + 1) % cq->depth;
		cq->count--;
	}
	cq->st.cqes_polled += (unsigned long)k;
	pthread_mutex_unlock(&cq->qlock);
	return k;
}

static int vf__req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vf__cq *cq = vf__cq_of(ibcq);
	vf_cq_hook before, after;
	void *arg;
	int err;

	pthread_mutex_lock(&cq->qlock);
	cq->st.arm_calls++;
	before = cq->before;
	after = cq->after;
	arg = cq->hook_arg;
	pthread_mutex_unlock(&cq->qlock);

	if (before)
		before(ibcq, solicited_only, arg);

	pthread_mutex_lock(&cq->qlock);
	err = cq->fail_arm;
	cq->fail_arm = 0;
	if (!err && !cq->dying && !cq->gone) {
		/* A next-completion request widens a solicited arm, never the
		 * reverse. The queue is not looked at: only CQEs added from
		 * now on can fire. */
		if (!solicited_only)
			cq->armed = VF_ARM_NEXT;
		else if (cq->armed == VF_ARM_NONE)
			cq->armed = VF_ARM_SOLICITED;
		cq->st.arms++;
	}
	pthread_mutex_unlock(&cq->qlock);
	if (err)
		return err;

	if (after)
		after(ibcq, solicited_only, arg);
	return 0;
}

/* Allocates a CQ and registers it; the ibv_cq part is left to the caller. */
static struct vf__cq *vf__cq_alloc(struct vf__ctx *ctx, struct ibv_comp_channel *ch,
				   int depth)
{
	struct vf__cq *cq;
	struct vf__fd *f;

	if (depth < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof *cq);
	if (!cq || !(cq->ring = calloc((size_t)depth, sizeof *cq->ring))) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->magic = VF__CQ_MAGIC;
	cq->depth = (unsigned)depth;
	cq->wfd = -1;
	pthread_mutex_init(&cq->qlock, NULL);
	cq->obj.kind = VF__CQ;
	cq->obj.handle = &cq->cq;
	cq->obj.ctx = ctx;
	cq->obj.mutex = &cq->cq.mutex;
	cq->obj.cond = &cq->cq.cond;
	cq->obj.async_completed = &cq->cq.async_events_completed;

	pthread_mutex_lock(&vf__lock);
	if (ch) {
		f = vf__fd_at(ch->fd);
		if (f && atomic_load_explicit(&f->kind, memory_order_relaxed) == VF__FD_CHAN) {
			cq->chan = f->owner;
			cq->wfd = cq->chan->wfd;
		}
	}
	cq->gone = ctx->gone;
	vf__live(1);
	cq->obj.next = vf__objs;
	vf__objs = &cq->obj;
	pthread_mutex_unlock(&vf__lock);
	return cq;
}

static void vf__cq_free(struct vf__cq *cq)
{
	vf__live(-1);
	pthread_mutex_destroy(&cq->cq.mutex);
	pthread_cond_destroy(&cq->cq.cond);
	pthread_mutex_destroy(&cq->qlock);
	cq->magic = 0;
	free(cq->ring);
	free(cq);
}

struct ibv_cq *vf_cq_create(struct ibv_context *ibctx, struct ibv_comp_channel *ch,
			    void *cq_context, int depth)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__cq *cq = vf__cq_alloc(ctx, ch, depth);

	if (!cq)
		return NULL;
	/* What verbs_init_cq does for ibv_create_cq. */
	cq->cq.context = ibctx;
	cq->cq.channel = ch;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = depth;
	cq->cq.comp_events_completed = 0;
	cq->cq.async_events_completed = 0;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (ch) {
		pthread_mutex_lock(&ibctx->mutex);
		ch->refcnt++;
		pthread_mutex_unlock(&ibctx->mutex);
	}
	return &cq->cq;
}

/* ------------------------------------------------------- extended CQ */

/*
 * start_poll .. end_poll hold qlock, as a provider holds its CQ lock: a
 * push waits until the poller is done.  Misuse (start while polling, next
 * or end without a successful start, a read outside) is fatal, so a test
 * sees the binding's mistake instead of a wrong answer.
 */
static struct vf__cq *vf__polling(struct ibv_cq_ex *cqx, const char *what)
{
	struct vf__cq *cq = vf__cq_of(ibv_cq_ex_to_cq(cqx));

	if (!cq->is_ex || !cq->polling || !cq->cur)
		vf__die(what);
	return cq;
}

static const struct vf__cqe *vf__current(struct ibv_cq_ex *cqx)
{
	struct vf__cq *cq = vf__polling(cqx, "ibv_wc_read_* outside a poll");

	return &cq->ring[cq->head];
}

static void vf__set_current(struct vf__cq *cq)
{
	cq->cur = 1;
	cq->cqx.wr_id = cq->ring[cq->head].wc.wr_id;
	cq->cqx.status = cq->ring[cq->head].wc.status;
}

static void vf__consume(struct vf__cq *cq)
{
	cq->head = (cq->head + 1) % cq->depth;
	cq->count--;
	cq->st.cqes_polled++;
	cq->cur = 0;
}

static int vf__start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct vf__cq *cq = vf__cq_of(ibv_cq_ex_to_cq(cqx));
	int err;

	if (!attr || attr->comp_mask)
		return EINVAL;
	pthread_mutex_lock(&cq->qlock);
	if (cq->polling)
		vf__die("start_poll while polling (no end_poll)");
	cq->st.polls++;
	err = cq->fail_poll;
	cq->fail_poll = 0;
	if (!err && cq->count == 0)
		err = ENOENT;
	if (err) {
		pthread_mutex_unlock(&cq->qlock);
		return err; /* no end_poll may follow */
	}
	cq->polling = 1;
	vf__set_current(cq);
	return 0;
}

static int vf__next_poll(struct ibv_cq_ex *cqx)
{
	struct vf__cq *cq = vf__polling(cqx, "next_poll without a current entry");

	vf__consume(cq);
	if (cq->count == 0)
		return ENOENT;
	vf__set_current(cq);
	return 0;
}

static void vf__end_poll(struct ibv_cq_ex *cqx)
{
	struct vf__cq *cq = vf__cq_of(ibv_cq_ex_to_cq(cqx));

	if (!cq->is_ex || !cq->polling)
		vf__die("end_poll without a successful start_poll");
	if (cq->cur)
		vf__consume(cq);
	cq->polling = 0;
	pthread_mutex_unlock(&cq->qlock);
}

static enum ibv_wc_opcode vf__read_opcode(struct ibv_cq_ex *c) { return vf__current(c)->wc.opcode; }
static uint32_t vf__read_vendor_err(struct ibv_cq_ex *c) { return vf__current(c)->wc.vendor_err; }
static uint32_t vf__read_byte_len(struct ibv_cq_ex *c) { return vf__current(c)->wc.byte_len; }
static __be32 vf__read_imm_data(struct ibv_cq_ex *c) { return vf__current(c)->wc.imm_data; }
static uint32_t vf__read_qp_num(struct ibv_cq_ex *c) { return vf__current(c)->wc.qp_num; }
static uint32_t vf__read_src_qp(struct ibv_cq_ex *c) { return vf__current(c)->wc.src_qp; }
static unsigned int vf__read_wc_flags(struct ibv_cq_ex *c) { return vf__current(c)->wc.wc_flags; }
static uint32_t vf__read_slid(struct ibv_cq_ex *c) { return vf__current(c)->wc.slid; }
static uint8_t vf__read_sl(struct ibv_cq_ex *c) { return vf__current(c)->wc.sl; }
static uint8_t vf__read_dlid_path_bits(struct ibv_cq_ex *c) { return vf__current(c)->wc.dlid_path_bits; }
static uint64_t vf__read_completion_ts(struct ibv_cq_ex *c) { return vf__current(c)->ex.completion_ts; }
static uint16_t vf__read_cvlan(struct ibv_cq_ex *c) { return vf__current(c)->ex.cvlan; }
static uint32_t vf__read_flow_tag(struct ibv_cq_ex *c) { return vf__current(c)->ex.flow_tag; }
static void vf__read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *tm)
{
	*tm = vf__current(c)->ex.tm_info;
}
static uint64_t vf__read_wallclock(struct ibv_cq_ex *c)
{
	return vf__current(c)->ex.completion_wallclock_ns;
}

/* The ops of an extended CQ; read ops only for the fields asked for. */
static void vf__cq_ex_ops(struct ibv_cq_ex *x, uint64_t f)
{
	x->start_poll = vf__start_poll;
	x->next_poll = vf__next_poll;
	x->end_poll = vf__end_poll;
	x->read_opcode = vf__read_opcode;
	x->read_vendor_err = vf__read_vendor_err;
	x->read_wc_flags = vf__read_wc_flags;
	if (f & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = vf__read_byte_len;
	if (f & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = vf__read_imm_data;
	if (f & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = vf__read_qp_num;
	if (f & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = vf__read_src_qp;
	if (f & IBV_WC_EX_WITH_SLID)
		x->read_slid = vf__read_slid;
	if (f & IBV_WC_EX_WITH_SL)
		x->read_sl = vf__read_sl;
	if (f & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = vf__read_dlid_path_bits;
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		x->read_completion_ts = vf__read_completion_ts;
	if (f & IBV_WC_EX_WITH_CVLAN)
		x->read_cvlan = vf__read_cvlan;
	if (f & IBV_WC_EX_WITH_FLOW_TAG)
		x->read_flow_tag = vf__read_flow_tag;
	if (f & IBV_WC_EX_WITH_TM_INFO)
		x->read_tm_info = vf__read_tm_info;
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		x->read_completion_wallclock_ns = vf__read_wallclock;
}

struct ibv_cq_ex *vf_cq_ex_create(struct ibv_context *ibctx, struct ibv_comp_channel *ch,
				  void *cq_context, int depth, uint64_t wc_flags)
{
	struct ibv_cq *ibcq;
	struct vf__cq *cq;

	if (wc_flags & ~(uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	ibcq = vf_cq_create(ibctx, ch, cq_context, depth);
	if (!ibcq)
		return NULL;
	cq = vf__cq_of(ibcq);
	/* Not yet visible to any other thread: no lock needed. */
	cq->is_ex = 1;
	cq->wc_flags = wc_flags;
	vf__cq_ex_ops(&cq->cqx, wc_flags);
	return &cq->cqx;
}

/* The context's create_cq_ex op, behind the real (inline) ibv_create_cq_ex. */
static struct ibv_cq_ex *vf__create_cq_ex(struct ibv_context *ibctx,
					  struct ibv_cq_init_attr_ex *attr)
{
	if (!attr || attr->comp_mask || attr->flags || attr->cqe == 0 ||
	    attr->cqe > INT32_MAX) {
		errno = attr && attr->comp_mask ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return vf_cq_ex_create(ibctx, attr->channel, attr->cq_context,
			       (int)attr->cqe, attr->wc_flags);
}

static int vf__deadline(struct timespec *ts, int timeout_ms)
{
	if (timeout_ms < 0)
		return 0;
	clock_gettime(CLOCK_REALTIME, ts); /* the clock of a default cond */
	ts->tv_sec += timeout_ms / 1000;
	ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
	return 1;
}

/* Under o->mutex: every event read has been acked. */
static int vf__balanced(struct vf__obj *o)
{
	if (*o->async_completed != (uint32_t)o->async_read)
		return 0;
	if (o->kind == VF__CQ) {
		struct vf__cq *cq = (struct vf__cq *)o->handle;

		return cq->cq.comp_events_completed == (uint32_t)cq->events_read;
	}
	return 1;
}

/*
 * The kernel's destroy: stop new events, wait until the acks match the
 * events read (the counts ibv_cmd_destroy_* waits for), purge unread ones.
 * Returns 0 with o unregistered, or -ETIMEDOUT with o still registered.
 */
static int vf__retire(struct vf__obj *o, int timeout_ms)
{
	struct timespec dl;
	int timed = vf__deadline(&dl, timeout_ms);
	struct vf__cq *cq = o->kind == VF__CQ ? (struct vf__cq *)o->handle : NULL;

	pthread_mutex_lock(&vf__lock);
	o->dying = 1;
	if (cq) {
		pthread_mutex_lock(&cq->qlock);
		cq->dying = 1;
		cq->armed = VF_ARM_NONE;
		pthread_mutex_unlock(&cq->qlock);
	}
	for (;;) {
		int rc = 0;

		pthread_mutex_lock(o->mutex);
		if (vf__balanced(o)) {
			pthread_mutex_unlock(o->mutex);
			break;
		}
		pthread_mutex_unlock(&vf__lock);
		while (!vf__balanced(o) && rc != ETIMEDOUT)
			rc = timed ? pthread_cond_timedwait(o->cond, o->mutex, &dl)
				   : pthread_cond_wait(o->cond, o->mutex);
		if (rc == ETIMEDOUT && !vf__balanced(o)) {
			pthread_mutex_unlock(o->mutex);
			return -ETIMEDOUT;
		}
		pthread_mutex_unlock(o->mutex);
		/* A read may have been counted meanwhile: check again under
		 * vf__lock, which every count of a read holds. */
		pthread_mutex_lock(&vf__lock);
	}

	vf__unregister(o);
	if (o->async_written > o->async_read)
		vf__filter_add(&o->ctx->filters, o->kind, (uintptr_t)o->handle,
			       o->async_written - o->async_read);
	if (cq && cq->chan) {
		unsigned long written;

		pthread_mutex_lock(&cq->qlock);
		written = cq->st.events_written;
		pthread_mutex_unlock(&cq->qlock);
		if (written > cq->events_read)
			vf__filter_add(&cq->chan->filters, VF__CQ, (uintptr_t)o->handle,
				       written - cq->events_read);
	}
	pthread_mutex_unlock(&vf__lock);
	return 0;
}

int vf_cq_destroy(struct ibv_cq *ibcq, int timeout_ms)
{
	struct vf__cq *cq = vf__cq_of(ibcq);
	struct ibv_comp_channel *ch = cq->cq.channel;
	struct ibv_context *ibctx = cq->cq.context;
	int ret = vf__retire(&cq->obj, timeout_ms);

	if (ret)
		return ret;
	vf__cq_free(cq);
	if (ch) {
		pthread_mutex_lock(&ibctx->mutex);
		ch->refcnt--;
		pthread_mutex_unlock(&ibctx->mutex);
	}
	return 0;
}

/* The provider create_cq slot behind the real ibv_create_cq. */
static struct ibv_cq *vf__prov_create_cq(struct ibv_context *ibctx, int cqe,
					 struct ibv_comp_channel *ch, int comp_vector)
{
	struct vf__cq *cq;

	(void)comp_vector;
	vf__hit(vf__slot_of[VF_SLOT_CREATE_CQ]);
	cq = vf__cq_alloc(vf__ctx_of(ibctx), ch, cqe);
	if (!cq)
		return NULL;
	cq->cq.cqe = cqe; /* verbs_init_cq sets the rest */
	return &cq->cq;
}

/* The provider destroy_cq slot behind the real ibv_destroy_cq: a positive
 * errno, as providers return; libibverbs then drops channel->refcnt. */
static int vf__prov_destroy_cq(struct ibv_cq *ibcq)
{
	struct vf__cq *cq = vf__cq_of(ibcq);
	struct vf__ctx *ctx = vf__ctx_of(cq->cq.context);
	int ret;

	vf__hit(vf__slot_of[VF_SLOT_DESTROY_CQ]);
	ret = vf__retire(&cq->obj,
			 atomic_load_explicit(&ctx->destroy_timeout_ms, memory_order_relaxed));
	if (ret)
		return -ret;
	vf__cq_free(cq);
	return 0;
}

int vf_cq_push_wc(struct ibv_cq *ibcq, const struct ibv_wc *wc, int solicited)
{
	return vf_cq_push_ex(ibcq, wc, NULL, solicited);
}

int vf_cq_push_ex(struct ibv_cq *ibcq, const struct ibv_wc *wc,
		  const struct vf_cqe_ex *ex, int solicited)
{
	struct vf__cq *cq = vf__cq_of(ibcq);
	int ret = 0;

	pthread_mutex_lock(&cq->qlock);
	if (cq->polling)
		vf__die("vf_cq_push from inside the caller's own start_poll/end_poll");
	if (cq->gone) {
		ret = -ENODEV;
	} else if (cq->dying) {
		ret = -ESHUTDOWN;
	} else if (cq->count == cq->depth) {
		ret = -ENOSPC;
	} else {
		struct vf__cqe *e = &cq->ring[(cq->head + cq->count) % cq->depth];

		e->wc = *wc;
		if (ex)
			e->ex = *ex;
		else
			memset(&e->ex, 0, sizeof e->ex);
		e->solicited = solicited;
		cq->count++;
		cq->st.cqes_pushed++;
		if (cq->armed == VF_ARM_NEXT ||
		    (cq->armed == VF_ARM_SOLICITED &&
		     (solicited || wc->status != IBV_WC_SUCCESS))) {
			cq->armed = VF_ARM_NONE; /* one-shot */
			if (cq->wfd >= 0) {
				struct ib_uverbs_comp_event_desc d;

				memset(&d, 0, sizeof d);
				d.cq_handle = (uintptr_t)&cq->cq;
				ret = vf__write_record(cq->wfd, &d, sizeof d);
				if (!ret)
					cq->st.events_written++;
			}
		}
	}
	pthread_mutex_unlock(&cq->qlock);
	return ret;
}

int vf_cq_push(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
	       int solicited)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof wc);
	wc.wr_id = wr_id;
	wc.status = status;
	wc.opcode = IBV_WC_RECV;
	return vf_cq_push_wc(cq, &wc, solicited);
}

void vf_cq_set_hooks(struct ibv_cq *ibcq, vf_cq_hook before, vf_cq_hook after, void *arg)
{
	struct vf__cq *cq = vf__cq_of(ibcq);

	pthread_mutex_lock(&cq->qlock);
	cq->before = before;
	cq->after = after;
	cq->hook_arg = arg;
	pthread_mutex_unlock(&cq->qlock);
}

void vf_cq_fail_next_arm(struct ibv_cq *ibcq, int err)
{
	struct vf__cq *cq = vf__cq_of(ibcq);

	pthread_mutex_lock(&cq->qlock);
	cq->fail_arm = err;
	pthread_mutex_unlock(&cq->qlock);
}

void vf_cq_fail_next_poll(struct ibv_cq *ibcq, int err)
{
	struct vf__cq *cq = vf__cq_of(ibcq);

	pthread_mutex_lock(&cq->qlock);
	cq->fail_poll = err;
	pthread_mutex_unlock(&cq->qlock);
}

void vf_cq_stats(struct ibv_cq *ibcq, struct vf_cq_stats *st)
{
	struct vf__cq *cq = vf__cq_of(ibcq);

	pthread_mutex_lock(&vf__lock);
	pthread_mutex_lock(&cq->qlock);
	*st = cq->st;
	st->queued = cq->count;
	st->armed = cq->armed;
	st->events_read = cq->events_read;
	st->async_written = cq->obj.async_written;
	st->async_read = cq->obj.async_read;
	pthread_mutex_unlock(&cq->qlock);
	pthread_mutex_unlock(&vf__lock);
}

/* ------------------------------------------------------------- context */

struct ibv_context *vf_ctx_create(void)
{
	struct vf__ctx *ctx;
	int p[2];
	const char *canary = vf_priv_canary();

	ctx = calloc(1, sizeof *ctx);
	if (!ctx)
		return NULL;
	ctx->page = calloc(VF_PRIV_SLOTS, sizeof *ctx->page);
	if (!ctx->page || pipe2(p, O_CLOEXEC)) {
		free(ctx->page);
		free(ctx);
		errno = ENOMEM;
		return NULL;
	}
	if (p[0] >= VF_MAX_FD || p[1] >= VF_MAX_FD) {
		vf__real_close(p[0]);
		vf__real_close(p[1]);
		free(ctx->page);
		free(ctx);
		errno = EMFILE;
		return NULL;
	}
	/* Pushes never block the test: a full pipe is an error. */
	fcntl(p[1], F_SETFL, O_NONBLOCK);

	memcpy(ctx->page, vf__stubs, sizeof vf__stubs);
	if (!canary) {
		ctx->page[vf__slot_of[VF_SLOT_CREATE_CQ]] =
			(vf__slot_fn)(void (*)(void))vf__prov_create_cq;
		ctx->page[vf__slot_of[VF_SLOT_DESTROY_CQ]] =
			(vf__slot_fn)(void (*)(void))vf__prov_destroy_cq;
	}
	ctx->magic = VF__CTX_MAGIC;
	ctx->async_rfd = p[0];
	ctx->async_wfd = p[1];
	atomic_store_explicit(&ctx->destroy_timeout_ms, VF__DESTROY_TIMEOUT_MS,
			      memory_order_relaxed);

	strcpy(ctx->dev.name, "vf0");
	strcpy(ctx->dev.dev_name, "uverbs0");
	strcpy(ctx->dev.dev_path, "/sys/class/infiniband_verbs/uverbs0");
	strcpy(ctx->dev.ibdev_path, "/sys/class/infiniband/vf0");
	ctx->dev.node_type = IBV_NODE_CA;
	ctx->dev.transport_type = IBV_TRANSPORT_IB;

	ctx->vctx.sz = sizeof ctx->vctx;
	ctx->vctx.priv = (struct verbs_ex_private *)(void *)ctx->page;
	ctx->vctx.context.device = &ctx->dev;
	ctx->vctx.context.cmd_fd = -1;
	ctx->vctx.context.async_fd = p[0];
	ctx->vctx.context.num_comp_vectors = 1;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->vctx.context.ops.poll_cq = vf__poll_cq;
	ctx->vctx.context.ops.req_notify_cq = vf__req_notify_cq;
	ctx->vctx.create_cq_ex = vf__create_cq_ex;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);

	vf__live(1);
	pthread_mutex_lock(&vf__lock);
	vf__fd_register(p[0], VF__FD_ASYNC, ctx);
	pthread_mutex_unlock(&vf__lock);
	return &ctx->vctx.context;
}

static void vf__obj_free(struct vf__obj *o)
{
	switch (o->kind) {
	case VF__CQ:
		vf__cq_free((struct vf__cq *)o->handle);
		return;
	default:
		vf__live(-1);
		pthread_mutex_destroy(o->mutex);
		pthread_cond_destroy(o->cond);
		free(o->handle); /* the ibv_* struct is the first member */
		return;
	}
}

int vf_ctx_destroy(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__obj **pp, *o;
	int left = 0;

	pthread_mutex_lock(&vf__lock);
	for (pp = &vf__objs; (o = *pp);) {
		if (o->ctx != ctx) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		vf__obj_free(o);
		left++;
	}
	while (ctx->chans) {
		vf__chan_free(ctx->chans, 1, 1);
		left++;
	}
	if (ctx->async_rfd >= 0) {
		vf__fd_unregister(ctx->async_rfd);
		vf__real_close(ctx->async_rfd);
	}
	if (ctx->async_wfd >= 0)
		vf__real_close(ctx->async_wfd);
	vf__filters_free(&ctx->filters);
	pthread_mutex_unlock(&vf__lock);

	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	ctx->magic = 0;
	free(ctx->page);
	free(ctx);
	vf__live(-1);
	return left ? -EBUSY : 0;
}

int vf_ctx_async_wfd(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	int fd;

	pthread_mutex_lock(&vf__lock);
	fd = ctx->async_wfd;
	pthread_mutex_unlock(&vf__lock);
	return fd;
}

void vf_ctx_set_destroy_timeout(struct ibv_context *ibctx, int timeout_ms)
{
	atomic_store_explicit(&vf__ctx_of(ibctx)->destroy_timeout_ms, timeout_ms,
			      memory_order_relaxed);
}

void vf_ctx_device_gone(struct ibv_context *ibctx, int fatal_event)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__chan *chan;
	struct vf__obj *o;

	if (fatal_event)
		vf_async_push(ibctx, IBV_EVENT_DEVICE_FATAL, 0);

	pthread_mutex_lock(&vf__lock);
	ctx->gone = 1;
	/* First stop every writer, then close the write ends. */
	for (o = vf__objs; o; o = o->next)
		if (o->ctx == ctx && o->kind == VF__CQ) {
			struct vf__cq *cq = (struct vf__cq *)o->handle;

			pthread_mutex_lock(&cq->qlock);
			cq->gone = 1;
			cq->wfd = -1;
			pthread_mutex_unlock(&cq->qlock);
		}
	for (chan = ctx->chans; chan; chan = chan->next) {
		vf__fd_gone(chan->rfd);
		if (chan->wfd >= 0)
			vf__real_close(chan->wfd);
		chan->wfd = -1;
	}
	vf__fd_gone(ctx->async_rfd);
	if (ctx->async_wfd >= 0)
		vf__real_close(ctx->async_wfd);
	ctx->async_wfd = -1;
	pthread_mutex_unlock(&vf__lock);
}

/* ------------------------------------------------------------ channels */

struct ibv_comp_channel *vf_channel_create(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct ibv_comp_channel *ch;
	struct vf__chan *chan;
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return NULL;
	if (p[0] >= VF_MAX_FD || p[1] >= VF_MAX_FD) {
		vf__real_close(p[0]);
		vf__real_close(p[1]);
		errno = EMFILE;
		return NULL;
	}
	/* malloc, as ibv_create_comp_channel does: ibv_destroy_comp_channel
	 * frees it. */
	ch = malloc(sizeof *ch);
	chan = calloc(1, sizeof *chan);
	if (!ch || !chan) {
		free(ch);
		free(chan);
		vf__real_close(p[0]);
		vf__real_close(p[1]);
		errno = ENOMEM;
		return NULL;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	ch->context = ibctx;
	ch->fd = p[0];
	ch->refcnt = 0;
	chan->ctx = ctx;
	chan->ch = ch;
	chan->rfd = p[0];
	chan->wfd = p[1];

	vf__live(1);
	pthread_mutex_lock(&vf__lock);
	vf__fd_register(p[0], VF__FD_CHAN, chan);
	chan->next = ctx->chans;
	ctx->chans = chan;
	pthread_mutex_unlock(&vf__lock);
	return ch;
}

int vf_channel_wfd(struct ibv_comp_channel *ch)
{
	struct vf__fd *f = vf__fd_at(ch->fd);
	int fd = -1;

	pthread_mutex_lock(&vf__lock);
	if (f && atomic_load_explicit(&f->kind, memory_order_relaxed) == VF__FD_CHAN)
		fd = ((struct vf__chan *)f->owner)->wfd;
	pthread_mutex_unlock(&vf__lock);
	return fd;
}

/* --------------------------------------------------------------- async */

int vf_async_push(struct ibv_context *ibctx, enum ibv_event_type type, uint64_t element)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct ib_uverbs_async_event_desc d;
	enum vf__kind kind = vf__affiliation((uint32_t)type);
	struct vf__obj *o = NULL;
	int ret;

	memset(&d, 0, sizeof d);
	d.element = element;
	d.event_type = (uint32_t)type;

	pthread_mutex_lock(&vf__lock);
	if (ctx->gone || ctx->async_wfd < 0) {
		ret = -ENODEV;
		goto out;
	}
	if (kind != VF__NOKIND) {
		o = vf__lookup(kind, element);
		if (!o || o->ctx != ctx) {
			ret = -EINVAL;
			goto out;
		}
		if (o->dying) {
			ret = -ESHUTDOWN;
			goto out;
		}
	}
	ret = vf__write_record(ctx->async_wfd, &d, sizeof d);
	if (!ret && o)
		o->async_written++; /* under vf__lock, like the purge count */
out:
	pthread_mutex_unlock(&vf__lock);
	return ret;
}

static void vf__obj_init(struct vf__obj *o, enum vf__kind kind, void *handle,
			 struct vf__ctx *ctx, pthread_mutex_t *m, pthread_cond_t *c,
			 uint32_t *completed)
{
	o->kind = kind;
	o->handle = handle;
	o->ctx = ctx;
	o->mutex = m;
	o->cond = c;
	o->async_completed = completed;
	pthread_mutex_init(m, NULL);
	pthread_cond_init(c, NULL);
	vf__register(o);
}

struct ibv_qp *vf_qp_create(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__qp *q = calloc(1, sizeof *q);

	if (!q)
		return NULL;
	q->qp.context = ibctx;
	q->qp.qp_type = IBV_QPT_RC;
	q->qp.state = IBV_QPS_RESET;
	vf__obj_init(&q->obj, VF__QP, &q->qp, ctx, &q->qp.mutex, &q->qp.cond,
		     &q->qp.events_completed);
	return &q->qp;
}

struct ibv_srq *vf_srq_create(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__srq *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->srq.context = ibctx;
	vf__obj_init(&s->obj, VF__SRQ, &s->srq, ctx, &s->srq.mutex, &s->srq.cond,
		     &s->srq.events_completed);
	return &s->srq;
}

struct ibv_wq *vf_wq_create(struct ibv_context *ibctx)
{
	struct vf__ctx *ctx = vf__ctx_of(ibctx);
	struct vf__wq *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->wq.context = ibctx;
	w->wq.wq_type = IBV_WQT_RQ;
	w->wq.state = IBV_WQS_RESET;
	vf__obj_init(&w->obj, VF__WQ, &w->wq, ctx, &w->wq.mutex, &w->wq.cond,
		     &w->wq.events_completed);
	return &w->wq;
}

static int vf__obj_destroy(enum vf__kind kind, void *handle, int timeout_ms)
{
	struct vf__obj *o;
	int ret;

	pthread_mutex_lock(&vf__lock);
	o = vf__lookup(kind, (uintptr_t)handle);
	pthread_mutex_unlock(&vf__lock);
	if (!o)
		return -EINVAL;
	ret = vf__retire(o, timeout_ms);
	if (!ret)
		vf__obj_free(o);
	return ret;
}

int vf_qp_destroy(struct ibv_qp *qp, int timeout_ms)
{
	return vf__obj_destroy(VF__QP, qp, timeout_ms);
}

int vf_srq_destroy(struct ibv_srq *srq, int timeout_ms)
{
	return vf__obj_destroy(VF__SRQ, srq, timeout_ms);
}

int vf_wq_destroy(struct ibv_wq *wq, int timeout_ms)
{
	return vf__obj_destroy(VF__WQ, wq, timeout_ms);
}
