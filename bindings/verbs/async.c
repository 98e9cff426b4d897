/*
 * A device's async events moved into an lfpoll EQ (docs/verbs.md, "Async
 * events").  The async object reads the context's async fd, copies and
 * acks each event, and queues it; one event the EQ refuses is held until
 * the EQ has room.
 */
#define _GNU_SOURCE
#include "verbs_priv.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct vasync {
	struct lfp_verbs_async pub;
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	int eqfd;                  /* the EQ's fd (LFP_WAIT_FD), or -1: no sread */
	pthread_mutex_t lock;
	int gone;                  /* device fatal or EIO: reading has stopped */
	int have_pending;          /* an event read but not yet accepted by the EQ */
	struct lfp_verbs_async_entry pending;
	int overrun;               /* the EQ overran: events are acked, dropped */
	int overrun_told;          /* -LFP_EOVERRUN was returned once */
	_Atomic uint32_t callers;  /* threads inside progress and trywait */
};

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return neg_errno();
	return 0;
}

static const char *const event_names[] = {
	"CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST",
	"SQ_DRAINED", "PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL", "PORT_ACTIVE",
	"PORT_ERR", "LID_CHANGE", "PKEY_CHANGE", "SM_CHANGE", "SRQ_ERR",
	"SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED", "CLIENT_REREGISTER",
	"GID_CHANGE", "WQ_FATAL"
};

enum elem { E_NONE, E_CQ, E_QP, E_SRQ, E_WQ, E_PORT };

/* Element and class of each known type; unknown types carry no element. */
static const struct {
	unsigned char elem;
	unsigned char error;
} event_kind[] = {
	{ E_CQ, 1 }, { E_QP, 1 }, { E_QP, 1 }, { E_QP, 1 }, { E_QP, 0 },
	{ E_QP, 0 }, { E_QP, 0 }, { E_QP, 1 }, { E_NONE, 1 }, { E_PORT, 0 },
	{ E_PORT, 1 }, { E_PORT, 0 }, { E_PORT, 0 }, { E_PORT, 0 }, { E_SRQ, 1 },
	{ E_SRQ, 0 }, { E_QP, 0 }, { E_PORT, 0 }, { E_PORT, 0 }, { E_WQ, 1 }
};

#define NKNOWN (sizeof(event_names) / sizeof(event_names[0]))

API const char *lfp_verbs_event_str(enum ibv_event_type type)
{
	if ((unsigned)type < NKNOWN)
		return event_names[type];
	return "UNKNOWN_EVENT";
}

static int vasync_control(struct lfp_fid *fid, int command, void *arg)
{
	struct vasync *a = (struct vasync *)(void *)fid;

	if (!arg)
		return -EINVAL;
	if (command == LFP_GETWAITOBJ) {
		*(enum lfp_wait_obj *)arg = LFP_WAIT_FD;
		return 0;
	}
	if (command != LFP_GETWAIT)
		return -ENOSYS;
	*(int *)arg = a->ctx->async_fd;
	return 0;
}

/* 0 when the async fd has nothing to read (safe to poll it). */
static int vasync_trywait(struct lfp_fid *fid)
{
	struct vasync *a = (struct vasync *)(void *)fid;
	struct pollfd pfd = { a->ctx->async_fd, POLLIN, 0 };
	struct guard g;
	int pending, ret;

	guard_enter(&g, &a->callers);
	/* Under the lock that progress writes it under (a data race
	 * otherwise, H; make check SANITIZE=thread drives the two
	 * together). */
	if (!LFP__BROKEN("H"))
		pthread_mutex_lock(&a->lock);
	pending = a->have_pending;
	if (!LFP__BROKEN("H"))
		pthread_mutex_unlock(&a->lock);
	if (pending)
		ret = -EAGAIN;
	else
		ret = poll(&pfd, 1, 0) > 0 ? -EAGAIN : 0;
	guard_leave(&g);
	return ret;
}

static int vasync_close_fid(struct lfp_fid *fid)
{
	return lfp_verbs_async_close((struct lfp_verbs_async *)(void *)fid);
}

static const struct lfp_fid_ops vasync_ops = {
	vasync_close_fid, vasync_control, vasync_trywait, NULL, NULL, NULL
};

/* The EQ's own fd when its wait object is one, else -1. */
static int eq_fd(struct lfp_eq *eq)
{
	enum lfp_wait_obj obj;
	int fd;

	if (lfp_control(&eq->fid, LFP_GETWAITOBJ, &obj) || obj != LFP_WAIT_FD ||
	    lfp_control(&eq->fid, LFP_GETWAIT, &fd))
		return -1;
	return fd;
}

/*
 * Move async events of ctx into eq.  The EQ must hold a struct
 * lfp_verbs_async_entry per event (entry_size; -EMSGSIZE otherwise).
 * Makes ctx's async fd non-blocking, for every user of the context.
 */
API int lfp_verbs_async_open(struct ibv_context *ctx, struct lfp_eq *eq,
                             struct lfp_verbs_async **vap, void *context)
{
	struct vasync *a;
	int ret;

	if (!ctx || !eq || !vap || ctx->async_fd < 0)
		return -EINVAL;
	if (lfp_binding_check(&eq->fid))
		return -EPROTO; /* built with other lfpoll headers */
	if (eq->entry_size < sizeof(struct lfp_verbs_async_entry))
		return -EMSGSIZE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (pthread_mutex_init(&a->lock, NULL)) {
		free(a);
		return -ENOMEM;
	}
	/* Last of what can fail: a failed open leaves the fd as it was. */
	ret = set_nonblock(ctx->async_fd);
	if (ret) {
		pthread_mutex_destroy(&a->lock);
		free(a);
		return ret;
	}
	/* It joins no set: no member handle. */
	lfp_binding_init(&a->pub.fid, LFP_CLASS_VERBS_ASYNC, context, &vasync_ops);
	a->ctx = ctx;
	a->eq = eq;
	a->eqfd = eq_fd(eq);
	/* lfp_eq_close is -EBUSY now.  The binding writes no error entry,
	 * so it names no provider error. */
	(void)lfp_binding_eq_attach(eq, NULL);
	*vap = &a->pub;
	return 0;
}

/*
 * Queue the held event into the EQ: 0, or -errno with the event still held.
 * Every class goes through the EQ's one event queue, so the EQ's FIFO keeps
 * the device's order across classes; the entry's err tells the classes
 * apart.
 */
static int deliver(struct vasync *a)
{
	ssize_t r = lfp_eq_write(a->eq, LFP_VERBS_ASYNC, &a->pending,
	                         sizeof(a->pending), 0);

	if (r < 0)
		return (int)r;
	a->have_pending = 0;
	return 0;
}

/*
 * The held event: delivered (1), kept because the EQ is full with
 * back-pressure (0), or dropped because the EQ overran (1: it is gone, and
 * the overrun noted).  A DEVICE_FATAL that leaves marks the device gone.
 * Lock held.
 */
static int flush_pending(struct vasync *a, int *moved)
{
	int ret = a->overrun ? -LFP_EOVERRUN : deliver(a);

	if (ret == 0)
		(*moved)++;
	else if (ret == -LFP_EOVERRUN)
		a->overrun = 1; /* final (lfp_eq(3)): acked, dropped */
	else
		return 0; /* -EAGAIN (back-pressure): held until there is room */
	a->have_pending = 0;
	if (a->pending.type == IBV_EVENT_DEVICE_FATAL)
		a->gone = 1;
	return 1;
}

/* The class of event type t: 0 for info, else its err (lfp_verbs(3)). */
static int event_err(unsigned t)
{
	if (t >= NKNOWN || !event_kind[t].error)
		return 0;
	return t == IBV_EVENT_DEVICE_FATAL ? ENODEV : EIO;
}

/* Copy ev into the held entry, element decoded by type, then ack it. */
static void hold(struct vasync *a, struct ibv_async_event *ev)
{
	unsigned t = (unsigned)ev->event_type;

	memset(&a->pending, 0, sizeof(a->pending));
	a->pending.fid = &a->pub.fid;
	a->pending.context = a->pub.fid.context;
	a->pending.type = ev->event_type;
	a->pending.err = event_err(t);
	switch (t < NKNOWN ? event_kind[t].elem : E_NONE) {
	case E_CQ:   a->pending.element.cq = ev->element.cq; break;
	case E_QP:   a->pending.element.qp = ev->element.qp; break;
	case E_SRQ:  a->pending.element.srq = ev->element.srq; break;
	case E_WQ:   a->pending.element.wq = ev->element.wq; break;
	case E_PORT:
	/* Unknown types too: libibverbs decodes their element as a port
	 * number; pass it through, as the type is. */
	default:     a->pending.element.port_num = ev->element.port_num; break;
	}
	a->have_pending = 1;
	/* Copied: ack now, so the owner can destroy the object. */
	ibv_ack_async_event(ev);
}

/*
 * Read the next event of the async fd into the held entry: 1, 0 when
 * there is none now, or -errno.  A device that is gone (POLLERR, EIO, end
 * of file) is marked so, and 1 returned: the caller's loop sees it.
 * Lock held.
 */
static int read_event(struct vasync *a)
{
	struct pollfd pfd = { a->ctx->async_fd, POLLIN, 0 };
	struct ibv_async_event ev;

	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
		a->gone = 1;
		return 1;
	}
	for (;;) {
		errno = 0;
		if (!ibv_get_async_event(a->ctx, &ev)) {
			hold(a, &ev);
			return 1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		/* EIO: disassociated.  errno 0: EOF or a short read, which a
		 * live device never gives.  Gone either way. */
		if (errno == EIO || errno == 0) {
			a->gone = 1;
			return 1;
		}
		return neg_errno();
	}
}

/*
 * Move every event the async fd holds into the EQ, in the device's order:
 * the count moved, or -errno; lock held.
 */
static int vasync_progress(struct vasync *a)
{
	int moved = 0, ret, was_overrun = a->overrun;

	for (;;) {
		/* A held event the EQ still refuses: keep it, read nothing
		 * more (the fd holds the rest, in order, until there is room).
		 * (Test builds only: Z reads on, and the next event read
		 * replaces the held one; make check-broken.) */
		if (a->have_pending && !flush_pending(a, &moved) &&
		    !LFP__BROKEN("Z")) {
			ret = 0;
			break;
		}
		if (a->gone) {
			ret = moved ? 0 : -ENODEV;
			break;
		}
		ret = read_event(a);
		if (ret <= 0)
			break;
	}
	/* The overrun is told once, by the call that met it; later calls
	 * drain and ack, and return 0 (nothing can be moved) or -ENODEV. */
	if (a->overrun && !was_overrun)
		return -LFP_EOVERRUN;
	return ret < 0 && moved == 0 ? ret : moved;
}

API int lfp_verbs_async_progress(struct lfp_verbs_async *va)
{
	struct vasync *a = (struct vasync *)va;
	struct guard g;
	int ret;

	if (!a)
		return -EINVAL;
	guard_enter(&g, &a->callers);
	pthread_mutex_lock(&a->lock);
	ret = vasync_progress(a);
	pthread_mutex_unlock(&a->lock);
	guard_leave(&g);
	return ret;
}

/*
 * Close: -EBUSY while a thread is inside progress or trywait, and while the
 * EQ still refuses an event that was read and acked (back-pressure): it is
 * delivered here if the EQ has room, never dropped.
 */
API int lfp_verbs_async_close(struct lfp_verbs_async *va)
{
	struct vasync *a = (struct vasync *)va;
	int moved = 0, held, cancel;

	if (!a)
		return -EINVAL;
	/* Before the lock, which progress holds for its whole call. */
	if (guard_busy(&a->callers))
		return -EBUSY;
	cancel = cancel_off(); /* the EQ write may wake its waiters */
	pthread_mutex_lock(&a->lock);
	held = a->have_pending && !flush_pending(a, &moved);
	pthread_mutex_unlock(&a->lock);
	cancel_restore(cancel);
	if (held)
		return -EBUSY;
	lfp_binding_eq_detach(a->eq);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return 0;
}

/* Progress under the lock, for sread: the count moved, or -errno. */
static int progress_locked(struct vasync *a)
{
	int ret;

	pthread_mutex_lock(&a->lock);
	ret = vasync_progress(a);
	pthread_mutex_unlock(&a->lock);
	return ret;
}

/*
 * Whether sleeping on the EQ's fd and the async fd is safe: 0 once the EQ
 * is armed (lfp_trywait: its next write makes its fd readable) and no event
 * is held.  A held event is this object's to deliver, with no write to
 * come from anyone else: -EAGAIN, and the caller's progress delivers it.
 */
static int sread_arm(struct vasync *a)
{
	struct lfp_fid *eq = &a->eq->fid;
	int ret = lfp_trywait(&eq, 1), held;

	if (ret)
		return ret;
	pthread_mutex_lock(&a->lock);
	held = a->have_pending;
	pthread_mutex_unlock(&a->lock);
	return held ? -EAGAIN : 0;
}

/*
 * The blocking read, in guard g.  Each lap reads the EQ, then moves what
 * the device sent (so the EQ's FIFO keeps the device's order), then arms
 * and sleeps on both sources: the async fd (an event no one has read) and
 * the EQ's fd (a write by another thread's progress, or the
 * application's).  The sleep is the only cancellation point.
 */
static ssize_t vasync_sread(struct vasync *a, struct guard *g, uint32_t *event,
                            void *buf, size_t len, int timeout, uint64_t flags)
{
	int64_t deadline = lfp_binding_deadline(timeout);
	struct pollfd pfd[2];
	ssize_t ret;

	for (;;) {
		ret = lfp_eq_read(a->eq, event, buf, len, flags);
		if (ret == -LFP_EAVAIL)
			(void)progress_locked(a); /* an overrun EQ: drain, ack */
		if (ret != -EAGAIN)
			return ret;
		ret = progress_locked(a);
		if (ret > 0 || ret == -LFP_EOVERRUN)
			continue; /* read what moved, or the overrun */
		if (ret < 0) {
			/* -ENODEV once the EQ is empty: another thread's
			 * progress may have moved the device's last events
			 * (DEVICE_FATAL among them) since our read, and found
			 * the loss itself.  Its lock, which our progress took
			 * after it, makes its writes visible here. */
			ssize_t last = lfp_eq_read(a->eq, event, buf, len, flags);

			return last == -EAGAIN ? ret : last;
		}
		if (timeout == 0 || lfp_binding_expired(deadline))
			return -EAGAIN;
		ret = sread_arm(a);
		if (ret == -EAGAIN)
			continue;
		if (ret)
			return ret;
		pfd[0].fd = a->eqfd;
		pfd[1].fd = a->ctx->async_fd;
		pfd[0].events = pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		ret = lfp_verbs__sleep(g, pfd, 2, lfp_binding_ms_left(deadline));
		if (ret < 0 && ret != -EINTR)
			return ret;
	}
}

/*
 * lfp_eq_sread on the async object's EQ that also moves the device's
 * events into it while it waits: one call for what ibv_get_async_event
 * does.  timeout in ms (< 0 infinite, 0 non-blocking).  Returns as
 * lfp_eq_read; -EAGAIN at the timeout; -ENODEV once the device is gone and
 * the EQ is empty; -ENOSYS when the EQ's wait object is not an fd.
 */
API ssize_t lfp_verbs_async_sread(struct lfp_verbs_async *va, uint32_t *event,
                                  void *buf, size_t len, int timeout,
                                  uint64_t flags)
{
	struct vasync *a = (struct vasync *)va;
	struct guard g;
	ssize_t ret;

	if (!a || !event || (!buf && len) || (flags & ~LFP_PEEK))
		return -EINVAL;
	if (a->eqfd < 0)
		return -ENOSYS;
	/* Counted for the whole call, sleep included: close sees it. */
	guard_enter(&g, &a->callers);
	ret = vasync_sread(a, &g, event, buf, len, timeout, flags);
	guard_leave(&g);
	return ret;
}
