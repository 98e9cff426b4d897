/*
 * liblfpoll_verbs: lfpoll objects over libibverbs completion channels and
 * device async events.  See lfpoll/verbs.h and docs/man/lfp_verbs.3.md.
 *
 * It uses lfpoll's public headers and the binding interface
 * <lfpoll/binding.h> only (docs/man/lfp_binding.3.md); its own shared
 * fields are C11 atomics.
 *
 * Verbs CQ protocol (docs/verbs.md): to make blocking safe, drain the channel
 * (non-blocking reads until EAGAIN, EINTR retried), then poll; if empty,
 * arm with ibv_req_notify_cq and poll again, because a CQE that landed
 * before the arm raises no event.  What the polls find goes to a stash that
 * reads serve first.  Channel events are acked on the CQ they name, in
 * batches; close flushes every ack so ibv_destroy_cq never waits forever.
 *
 * Shared channels: any number of binding CQs, of any wait object, may
 * share a channel.  Whoever drains the channel credits each event to the
 * CQ it names and wakes that CQ's waiters: a wait set through
 * lfp_binding_notify, an FD-mode CQ through its mirror.  The mirror is a
 * per-CQ epoll fd (LFP_GETWAIT) that watches the channel fd and a per-CQ
 * eventfd; the eventfd is written when another CQ credits this one, and
 * read by this CQ's trywait before it looks at anything, so the mirror is
 * readable while the channel holds an unread event (which may be this
 * CQ's) or an event was credited to this CQ since its last trywait.  A
 * trywait that took such a wake and finds work puts it back (a post), for
 * the CQ's other waiters, as lfpoll's own trywait does.
 *
 * Extended CQs (ibv_cq_ex) take the same path: their events name
 * ibv_cq_ex_to_cq(cq), which is armed, registered and acked as a plain CQ;
 * only the poll differs (start_poll, next_poll, end_poll, and the read ops
 * of the fields asked for at creation), and so the stash's entry size.
 *
 * Locking: each verbs CQ has a mutex for its stash and counters (libibverbs
 * takes locks on this path anyway).  A process-wide registry maps ibv_cq to
 * the binding object, so that an event read from a shared channel is
 * credited to the CQ it names; that credit uses atomics only, so no two CQ
 * locks are ever held together.  Opens and closes also keep one record per
 * channel in use, with its count of binding CQs, and under it one record
 * per wait set with the count of that set's CQs on the channel: the first
 * CQ on the channel sets O_NONBLOCK, the first of a set adds the channel fd
 * to the set, the last of a set removes it.  Those changes and the
 * registry's are made under memb_lock, which only open and close take, so
 * they are one step for every other open and close.  It cannot be
 * reg_lock: adding an fd takes the wait set's lock, under which the set's
 * re-check takes a CQ's lock and then reg_lock.  Lock order: memb_lock,
 * then wait set, then CQ, then registry; a credit made under the registry
 * lock wakes another set through its signal, whose mutex is a leaf, as
 * does a trywait step's put-back wake of its own set, under the CQ lock.
 *
 * Close must not run concurrently with any other call on its object
 * (lfp_verbs(3)); each object counts the callers inside its calls, so that
 * close can refuse (-EBUSY) the misuse it can see: a thread still inside.
 */
#define _GNU_SOURCE
#include <lfpoll/verbs.h>
#include <lfpoll/binding.h>

#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

#define STASH 64 /* completions found by trywait's polls, served first */

/* A wait set watching a channel's fd for its CQs on it; memb_lock. */
struct vset {
	struct lfp_wait *ws;
	unsigned users;            /* the set's binding CQs on the channel */
	int in_set;                /* the fd was added to ws */
	struct vset *next;
};

/* A channel in use by binding CQs; memb_lock. */
struct vchan {
	struct ibv_comp_channel *channel;
	unsigned users;            /* binding CQs registered on the channel */
	int orig_fl;               /* fd flags before the first user, or -1 */
	struct vset *sets;         /* the wait sets that watch the fd */
	struct vchan *next;
};

struct vcq;

/* Poll up to n entries into dst: a count, or -errno.  Lock held. */
typedef int (*vcq_poll_fn)(struct vcq *v, void *dst, int n);

struct vcq {
	struct lfp_verbs_cq pub;
	struct ibv_cq *cq;         /* an extended CQ's too: the one events name */
	struct ibv_cq_ex *cqx;     /* an extended CQ, or NULL */
	uint64_t wc_flags;         /* an extended CQ's fields to read */
	vcq_poll_fn poll;          /* ibv_poll_cq, or start/next/end_poll */
	size_t esz;                /* entry: struct ibv_wc or lfp_verbs_wc_ex */
	struct ibv_comp_channel *channel;
	unsigned ack_batch;
	int solicited_only;
	enum lfp_wait_obj wait_obj;
	struct lfp_wait *wait_set;
	struct lfp_binding_member member; /* wait sets and poll sets */
	pthread_mutex_t lock;
	unsigned char *stash;      /* STASH entries of esz bytes */
	unsigned stash_head, stash_len;
	unsigned unacked;          /* channel events read for this CQ, not acked */
	/* Written by other CQs that read an event naming this one. */
	_Atomic uint32_t foreign;  /* events read for us by others, not yet counted */
	_Atomic uint32_t armed;    /* an arm is outstanding (no event read since) */
	int err;                   /* a channel read failed (device gone): reads report it */
	_Atomic uint32_t callers;  /* threads inside read, sread, trywait */
	int evfd;                  /* FD mode: written when credited, else -1 */
	_Atomic uint32_t posts;    /* evfd writes announced, not yet read back */
	int epfd;                  /* FD mode: the mirror (channel fd, evfd), else -1 */
	struct vchan *chan;        /* memb_lock */
	struct vset *vs;           /* memb_lock; the set's record, or NULL */
	struct vcq *next;          /* registry */
};

struct vasync {
	struct lfp_verbs_async pub;
	struct ibv_context *ctx;
	struct lfp_eq *eq;
	pthread_mutex_t lock;
	int gone;                  /* device fatal or EIO: reading has stopped */
	int have_pending;          /* an event read but not yet accepted by the EQ */
	struct lfp_verbs_async_entry pending;
	int pending_error;
	int overrun;               /* the EQ overran: events are acked, dropped */
	int overrun_told;          /* -LFP_EOVERRUN was returned once */
	_Atomic uint32_t callers;  /* threads inside progress and trywait */
};

static pthread_mutex_t memb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vchan *chan_head;   /* memb_lock */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vcq *reg_head;

static struct vcq *to_vcq(struct lfp_fid *fid)
{
	return (struct vcq *)(void *)fid;
}

/* ------------------------------------------------------------ helpers */

/* libibverbs' "-1 and errno, errno possibly 0" convention as -errno. */
static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return neg_errno();
	return 0;
}

/* Acks pending events (all with force, else only a full batch); lock held. */
static void ack_events(struct vcq *v, int force)
{
	/* Full barrier: pairs with the crediting CQ's add. */
	v->unacked += atomic_exchange(&v->foreign, 0);
	if (v->unacked && (force || v->unacked >= v->ack_batch)) {
		ibv_ack_cq_events(v->cq, v->unacked);
		v->unacked = 0;
	}
}

/* The record of channel ch, or NULL; memb_lock held. */
static struct vchan *chan_find(struct ibv_comp_channel *ch)
{
	struct vchan *c;

	for (c = chan_head; c; c = c->next)
		if (c->channel == ch)
			return c;
	return NULL;
}

/* The first user of c sets O_NONBLOCK on the channel fd.  memb_lock held. */
static int chan_first(struct vchan *c)
{
	int fd = c->channel->fd, fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return neg_errno();
	c->orig_fl = fl;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return neg_errno();
	return 0;
}

/*
 * A user of c leaves (its CQ already unregistered, its set record put); the
 * last one restores the fd flags when failed says the user's open failed (a
 * failed open changes nothing), and frees c.  memb_lock held.
 */
static void chan_put(struct vchan *c, int failed)
{
	struct vchan **pp;

	if (--c->users)
		return;
	if (failed && c->orig_fl >= 0 && !(c->orig_fl & O_NONBLOCK))
		(void)fcntl(c->channel->fd, F_SETFL, c->orig_fl);
	for (pp = &chan_head; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c);
}

/*
 * A CQ of set ws joins channel c: the set's record (made from *spare when
 * it is the set's first CQ on c), and the first adds the fd to the set.
 * The count is taken even on failure: set_put undoes it.  memb_lock held.
 */
static int set_get(struct vchan *c, struct lfp_wait *ws, struct vset **spare,
                   struct vset **vsp)
{
	struct vset *vs;
	int ret;

	for (vs = c->sets; vs && vs->ws != ws; vs = vs->next)
		;
	if (!vs) {
		vs = *spare;
		*spare = NULL;
		vs->ws = ws;
		vs->next = c->sets;
		c->sets = vs;
	}
	*vsp = vs;
	if (vs->users++ == 0) {
		ret = lfp_wait_add_fd(ws, c->channel->fd, POLLIN, vs);
		if (ret)
			return ret;
		vs->in_set = 1;
	}
	return 0;
}

/* A CQ of vs's set leaves c; the set's last takes the fd out.  memb_lock held. */
static void set_put(struct vchan *c, struct vset *vs)
{
	struct vset **pp;

	if (--vs->users)
		return;
	if (vs->in_set)
		(void)lfp_wait_del_fd(vs->ws, c->channel->fd);
	for (pp = &c->sets; *pp; pp = &(*pp)->next)
		if (*pp == vs) {
			*pp = vs->next;
			break;
		}
	free(vs);
}

/*
 * FD mode: the mirror, an epoll fd watching the channel fd and the CQ's own
 * eventfd (level-triggered), so that it is readable while the channel holds
 * an unread event or another CQ credited this one.  0 or -errno; on failure
 * mirror_close frees what was made.
 */
static int mirror_open(struct vcq *v)
{
	struct epoll_event ev;

	v->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (v->evfd < 0)
		return neg_errno();
	v->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (v->epfd < 0)
		return neg_errno();
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = v->channel->fd;
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->channel->fd, &ev))
		return neg_errno();
	ev.data.fd = v->evfd;
	if (epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->evfd, &ev))
		return neg_errno();
	return 0;
}

static void mirror_close(struct vcq *v)
{
	if (v->epfd >= 0)
		(void)close(v->epfd);
	if (v->evfd >= 0)
		(void)close(v->evfd);
	v->epfd = v->evfd = -1;
}

/*
 * Another CQ credited v: make v's mirror readable.  Never blocks.  The
 * post is announced (posts += 1) before the write, so the eventfd's counter
 * never exceeds posts: an owner that finds posts at 0 may skip its read,
 * the eventfd is not readable (the protocol of lfpoll's own eventfd
 * signal).
 */
static void mirror_post(struct vcq *v)
{
	uint64_t one = 1;
	ssize_t n;

	/* Full-barrier RMW, after the credit's count: pairs with the relaxed
	 * load in mirror_clear (which only decides whether to read). */
	(void)atomic_fetch_add(&v->posts, 1);
	/* EAGAIN only at a counter of 2^64-2, which is readable already. */
	do
		n = write(v->evfd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/*
 * The first step of v's trywait: clear its credit notification, before it
 * looks at the channel, the credits or the CQ.  A credit whose post this
 * read consumed was counted before the post, so the look that follows sees
 * it; a later post leaves the mirror readable.  Only the owner reads the
 * eventfd, under its lock, and subtracts what the read returned.  Returns
 * whether it consumed a post (a wake that trywait may have to put back).
 * Lock held.
 */
static int mirror_clear(struct vcq *v)
{
	uint64_t cnt;
	ssize_t n;

	/* Relaxed: a stale 0 only skips a read of a readable eventfd, so the
	 * sleep that follows returns at once and the next trywait reads it
	 * (one lap, never a lost wake); a stale non-zero costs one read. */
	if (!atomic_load_explicit(&v->posts, memory_order_relaxed))
		return 0;
	do
		n = read(v->evfd, &cnt, sizeof(cnt));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(cnt))
		return 0;
	/* Relaxed: posts is a count, not a publication; what orders the
	 * credits whose posts were read is the eventfd itself (each was
	 * announced, after its count, before its write). */
	(void)atomic_fetch_sub_explicit(&v->posts, (uint32_t)cnt,
	                                memory_order_relaxed);
	return 1;
}

/* Take v out of the registry; reg_lock held. */
static void reg_unlink(struct vcq *v)
{
	struct vcq **pp;

	for (pp = &reg_head; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			return;
		}
}

static struct vcq *reg_find(struct ibv_cq *cq)
{
	struct vcq *v;

	for (v = reg_head; v; v = v->next)
		if (v->cq == cq)
			return v;
	return NULL;
}

/*
 * Read every pending event of v's channel; lock held.  Events naming v are
 * counted for batched acks; events naming another binding CQ are credited
 * to it (it acks them, and its waiters are woken); events naming a CQ
 * unknown to the binding are acked at once.  Returns the number of events
 * naming v (each was a wake of v's waiters, now taken), or -errno.
 */
static int drain_channel(struct vcq *v)
{
	struct ibv_cq *ev_cq;
	struct vcq *o;
	void *ev_ctx;
	int own = 0;

	for (;;) {
		errno = 0;
		if (ibv_get_cq_event(v->channel, &ev_cq, &ev_ctx)) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return own;
			return neg_errno();
		}
		if (ev_cq == v->cq) {
			own = 1;
			v->unacked++;
			atomic_store_explicit(&v->armed, 0, memory_order_relaxed);
			continue;
		}
		pthread_mutex_lock(&reg_lock);
		o = reg_find(ev_cq);
		if (o) {
			/* Noted unarmed first: the count's full-barrier RMW
			 * then releases the note to o's ack_events exchange,
			 * after which o's trywait reads the note (it re-arms). */
			atomic_store_explicit(&o->armed, 0, memory_order_relaxed);
			(void)atomic_fetch_add(&o->foreign, 1);
			/* Wake o's waiters after the count (design.md P1
			 * before P2): its set, or its mirror.  o stays
			 * registered, so alive, while reg_lock is held. */
			if (o->wait_set)
				lfp_binding_notify(o->wait_set);
			else if (o->evfd >= 0)
				mirror_post(o);
		} else {
			ibv_ack_cq_events(ev_cq, 1);
		}
		pthread_mutex_unlock(&reg_lock);
	}
}

/* A plain CQ: ibv_poll_cq, whose error is a negative errno or -1. */
static int poll_plain(struct vcq *v, void *dst, int n)
{
	int got = ibv_poll_cq(v->cq, n, (struct ibv_wc *)dst);

	if (got < 0)
		return got < -1 ? got : neg_errno();
	return got;
}

/*
 * The current entry of an extended CQ into e: the fields asked for at
 * creation, or with an error status the ones ibv_poll_cq(3) defines then
 * (wr_id, status, vendor_err, qp_num).  Only ops for fields asked for are
 * called: a provider may leave the others NULL.
 */
static void read_ex(struct vcq *v, struct lfp_verbs_wc_ex *e)
{
	struct ibv_cq_ex *x = v->cqx;
	uint64_t f = v->wc_flags;

	memset(e, 0, sizeof(*e));
	e->wr_id = x->wr_id;
	e->status = x->status;
	if (e->status != IBV_WC_SUCCESS) {
		e->vendor_err = ibv_wc_read_vendor_err(x);
		e->fields = f & IBV_WC_EX_WITH_QP_NUM;
		if (f & IBV_WC_EX_WITH_QP_NUM)
			e->qp_num = ibv_wc_read_qp_num(x);
		return;
	}
	e->opcode = ibv_wc_read_opcode(x);
	e->wc_flags = ibv_wc_read_wc_flags(x);
	e->fields = f;
	if (f & IBV_WC_EX_WITH_BYTE_LEN)
		e->byte_len = ibv_wc_read_byte_len(x);
	if (f & IBV_WC_EX_WITH_IMM)
		e->imm_data = ibv_wc_read_imm_data(x);
	if (f & IBV_WC_EX_WITH_QP_NUM)
		e->qp_num = ibv_wc_read_qp_num(x);
	if (f & IBV_WC_EX_WITH_SRC_QP)
		e->src_qp = ibv_wc_read_src_qp(x);
	if (f & IBV_WC_EX_WITH_SLID)
		e->slid = ibv_wc_read_slid(x);
	if (f & IBV_WC_EX_WITH_SL)
		e->sl = ibv_wc_read_sl(x);
	if (f & IBV_WC_EX_WITH_DLID_PATH_BITS)
		e->dlid_path_bits = ibv_wc_read_dlid_path_bits(x);
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		e->completion_ts = ibv_wc_read_completion_ts(x);
	if (f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		e->completion_wallclock_ns = ibv_wc_read_completion_wallclock_ns(x);
	if (f & IBV_WC_EX_WITH_CVLAN)
		e->cvlan = ibv_wc_read_cvlan(x);
	if (f & IBV_WC_EX_WITH_FLOW_TAG)
		e->flow_tag = ibv_wc_read_flow_tag(x);
	if (f & IBV_WC_EX_WITH_TM_INFO)
		ibv_wc_read_tm_info(x, &e->tm_info);
}

/*
 * An extended CQ: ibv_start_poll (ENOENT: empty, and no end_poll), one
 * ibv_next_poll per further entry, ibv_end_poll.  Their errors are
 * positive errnos; one after some entries ends the batch, and the next
 * poll meets it again.
 */
static int poll_ex(struct vcq *v, void *dst, int n)
{
	struct lfp_verbs_wc_ex *e = (struct lfp_verbs_wc_ex *)dst;
	struct ibv_poll_cq_attr pa;
	int got = 0, ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_start_poll(v->cqx, &pa);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return ret > 0 ? -ret : -EIO;
	for (;;) {
		read_ex(v, &e[got++]);
		if (got == n || ibv_next_poll(v->cqx))
			break;
	}
	ibv_end_poll(v->cqx);
	return got;
}

/* Poll the CQ into the stash's free room; lock held.  Count or -errno. */
static int poll_into_stash(struct vcq *v)
{
	unsigned room = STASH - v->stash_len, tail, n;
	int got;

	if (room == 0)
		return 0;
	tail = (v->stash_head + v->stash_len) % STASH;
	n = STASH - tail < room ? STASH - tail : room;
	got = v->poll(v, v->stash + (size_t)tail * v->esz, (int)n);
	if (got < 0)
		return got;
	v->stash_len += (unsigned)got;
	return got;
}

/*
 * The trywait step after its first reads; lock held.  0 when blocking on
 * the channel is safe, -EAGAIN when completions are stashed, -errno on
 * failure.  *took is set when the drain read an event naming v.
 */
static int vcq_step(struct vcq *v, int *took)
{
	int ret;

	ret = drain_channel(v);
	if (ret < 0) {
		v->err = ret; /* sticky: the reader of a set member sees it too */
		return ret;
	}
	if (ret > 0)
		*took = 1;
	ack_events(v, 0);
	if (v->stash_len)
		return -EAGAIN;
	ret = poll_into_stash(v);
	if (ret)
		return ret < 0 ? ret : -EAGAIN;
	if (!atomic_load_explicit(&v->armed, memory_order_relaxed)) {
		/* Noted before the arm: the event it raises may be read at
		 * once by another CQ on the channel, which clears the note;
		 * noting after would wipe that out and leave us unarmed. */
		atomic_store_explicit(&v->armed, 1, memory_order_relaxed);
		ret = ibv_req_notify_cq(v->cq, v->solicited_only);
		if (ret) {
			atomic_store_explicit(&v->armed, 0, memory_order_relaxed);
			return -ret; /* a positive errno */
		}
	}
	/* A CQE that landed before the arm raised no event: look again. */
	ret = poll_into_stash(v);
	if (ret)
		return ret < 0 ? ret : -EAGAIN;
	return 0;
}

/*
 * The trywait step; lock held.  0 when blocking on the channel is safe,
 * -EAGAIN when completions are stashed, -errno on failure.
 *
 * A step that took a wake (a post on v's eventfd, or an event naming v,
 * which made the channel fd readable for every waiter of v) and then
 * reports work puts the wake back, as lfpoll's own trywait does
 * (design.md 2.2): its caller may take only part of the work, and another
 * thread asleep on v's fd (or v's set) must not sleep on with the rest.
 * The wake stays until a step finds nothing, which clears it.  The put-back
 * is a post (mirror_post's protocol) or a set notify (the set's signal
 * mutex is a leaf), made after the step's polls: a waiter it wakes runs its
 * own step and finds what is left, or nothing.
 */
static int vcq_trywait_locked(struct vcq *v)
{
	int took = v->evfd >= 0 && mirror_clear(v);
	int ret = vcq_step(v, &took);

	if (ret && took) {
		if (v->evfd >= 0)
			mirror_post(v);
		else if (v->wait_set)
			lfp_binding_notify(v->wait_set);
	}
	return ret;
}

/* ------------------------------------------------------------ fid ops */

static int vcq_trywait(struct lfp_fid *fid)
{
	struct vcq *v = to_vcq(fid);
	struct lfp_fid *set;
	int ret;

	if (v->wait_obj == LFP_WAIT_NONE)
		return -EINVAL;
	(void)atomic_fetch_add(&v->callers, 1);
	if (v->wait_set) {
		set = &v->wait_set->fid;
		ret = lfp_trywait(&set, 1); /* re-checks every member */
	} else {
		pthread_mutex_lock(&v->lock);
		ret = vcq_trywait_locked(v);
		pthread_mutex_unlock(&v->lock);
	}
	(void)atomic_fetch_sub(&v->callers, 1);
	return ret;
}

/*
 * Readiness for wait sets and poll sets: the full trywait step, so that a
 * set that finds nothing has also re-armed the CQ.  Errors count as ready:
 * the reader will see them.
 */
static int vcq_ready(struct lfp_fid *fid)
{
	struct vcq *v = to_vcq(fid);
	int ret;

	pthread_mutex_lock(&v->lock);
	ret = vcq_trywait_locked(v);
	pthread_mutex_unlock(&v->lock);
	return ret != 0;
}

static int vcq_control(struct lfp_fid *fid, int command, void *arg)
{
	struct vcq *v = to_vcq(fid);

	if (!arg)
		return -EINVAL;
	if (command == LFP_GETWAITOBJ) {
		*(enum lfp_wait_obj *)arg = v->wait_obj;
		return 0;
	}
	if (command != LFP_GETWAIT)
		return -ENOSYS;
	if (v->wait_obj != LFP_WAIT_FD)
		return -ENODATA;
	*(int *)arg = v->epfd;
	return 0;
}

static struct lfp__poll_link *vcq_poll_link(struct lfp_fid *fid)
{
	return lfp_binding_poll_link(&to_vcq(fid)->member);
}

static int vcq_close_fid(struct lfp_fid *fid)
{
	return lfp_verbs_cq_close((struct lfp_verbs_cq *)(void *)fid);
}

static const struct lfp_fid_ops vcq_ops = {
	vcq_close_fid, vcq_control, vcq_trywait, vcq_ready, NULL, vcq_poll_link
};

/* ------------------------------------------------------------ verbs CQ */

/*
 * Both opens: cq is the plain CQ, or the extended CQ cqx seen as one
 * (ibv_cq_ex_to_cq), which is what its channel's events name.
 */
static int vcq_open(struct ibv_cq *cq, struct ibv_cq_ex *cqx, uint64_t wc_flags,
                    struct ibv_comp_channel *channel,
                    const struct lfp_verbs_cq_attr *attr,
                    struct lfp_verbs_cq **vcqp, void *context)
{
	struct lfp_verbs_cq_attr a;
	struct vchan *c, *spare;
	struct vset *spare_set = NULL;
	struct vcq *v, *o;
	int ret = 0;

	if (!cq || !channel || !vcqp || channel->fd < 0 || cq->channel != channel)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	if (attr)
		a = *attr;
	if (a.wait_obj == LFP_WAIT_UNSPEC)
		a.wait_obj = LFP_WAIT_FD;
	if (a.wait_obj != LFP_WAIT_NONE && a.wait_obj != LFP_WAIT_FD &&
	    a.wait_obj != LFP_WAIT_SET)
		return -EINVAL;
	if ((a.wait_obj == LFP_WAIT_SET) != (a.wait_set != NULL))
		return -EINVAL;
	if (a.wait_set && lfp_binding_check(&a.wait_set->fid))
		return -EPROTO; /* built with other lfpoll headers */
	v = calloc(1, sizeof(*v));
	spare = calloc(1, sizeof(*spare)); /* the channel's record, if first */
	if (a.wait_set)
		spare_set = calloc(1, sizeof(*spare_set)); /* the set's, if first */
	if (v) {
		v->esz = cqx ? sizeof(struct lfp_verbs_wc_ex) : sizeof(struct ibv_wc);
		v->stash = calloc(STASH, v->esz);
	}
	if (!v || !v->stash || !spare || (a.wait_set && !spare_set)) {
		if (v)
			free(v->stash);
		free(v);
		free(spare);
		free(spare_set);
		return -ENOMEM;
	}
	/* Filled by the device: no producer pushes its poll link (sticky). */
	lfp_binding_init(&v->pub.fid, cqx ? LFP_CLASS_VERBS_CQ_EX : LFP_CLASS_VERBS_CQ,
	                 context, &vcq_ops, &v->member, 1);
	v->cq = cq;
	v->cqx = cqx;
	v->wc_flags = wc_flags;
	v->poll = cqx ? poll_ex : poll_plain;
	v->channel = channel;
	v->ack_batch = a.ack_batch ? a.ack_batch : LFP_VERBS_ACK_BATCH;
	v->solicited_only = a.solicited_only;
	v->wait_obj = a.wait_obj;
	/* Set before v is published: a drain that credits v wakes it. */
	v->wait_set = a.wait_set;
	v->evfd = v->epfd = -1;
	v->armed = 1; /* before it is published and armed: see vcq_trywait_locked */
	if (pthread_mutex_init(&v->lock, NULL)) {
		free(v->stash);
		free(v);
		free(spare);
		free(spare_set);
		return -ENOMEM;
	}
	/* The mirror too, so a credit finds it. */
	if (a.wait_obj == LFP_WAIT_FD) {
		ret = mirror_open(v);
		if (ret)
			goto fail;
	}

	/* One binding object per CQ; any number of CQs, of any wait objects,
	 * on one channel.  The check comes first: a refused open changes
	 * nothing, not even the fd's flags. */
	pthread_mutex_lock(&memb_lock);
	pthread_mutex_lock(&reg_lock);
	for (o = reg_head; o && !ret; o = o->next)
		if (o->cq == cq)
			ret = -EEXIST;
	if (!ret) {
		v->next = reg_head;
		reg_head = v;
	}
	pthread_mutex_unlock(&reg_lock);
	if (ret) {
		pthread_mutex_unlock(&memb_lock);
		goto fail;
	}
	c = chan_find(channel);
	if (!c) {
		c = spare;
		spare = NULL;
		c->channel = channel;
		c->orig_fl = -1;
		c->next = chan_head;
		chan_head = c;
	}
	v->chan = c;
	/* The first user sets O_NONBLOCK, the first of a set adds the fd;
	 * every later one finds it done, since this runs under memb_lock as
	 * the last user's removal does. */
	if (c->users++ == 0) {
		ret = chan_first(c);
		if (ret)
			goto fail_reg;
	}
	if (a.wait_set) {
		ret = set_get(c, a.wait_set, &spare_set, &v->vs);
		if (ret)
			goto fail_reg;
	}
	pthread_mutex_unlock(&memb_lock);
	free(spare);
	free(spare_set);
	spare = NULL;
	spare_set = NULL;

	/* Arm at open (docs/verbs.md), with solicited_only.  Not under
	 * memb_lock: other opens and closes go on meanwhile.  Before v joins
	 * its wait set: until the arm has worked, no re-check of the set may
	 * run v's trywait step, which would poll the CQ's completions into a
	 * stash that a failed open could only drop. */
	ret = ibv_req_notify_cq(cq, v->solicited_only);
	if (ret) {
		ret = -ret;
		pthread_mutex_lock(&memb_lock);
		goto fail_reg;
	}
	if (a.wait_set) {
		pthread_mutex_lock(&memb_lock);
		ret = lfp_binding_join(a.wait_set, &v->member);
		if (ret)
			goto fail_reg;
		pthread_mutex_unlock(&memb_lock);
		/* A CQE that landed before the arm raised no event, and a
		 * waiter of the set whose re-check ran before v joined would
		 * sleep with it pending.  Wake the set so that its re-check
		 * polls v (design.md P2-P4: the notify's full barrier follows
		 * the join; a waiter that arms its signal after it re-checks
		 * after it, and one armed before it is woken).  Meanwhile an
		 * event for v that made the channel fd readable is drained by
		 * no member of the set: its waiters may return from lfp_wait
		 * and find nothing until v has joined, never sleep on it.  FD
		 * and NONE objects have no waiter before open returns. */
		lfp_binding_notify(a.wait_set);
	}
	*vcqp = &v->pub;
	return 0;

fail_reg: /* memb_lock held; v is in no set (it joins only as the last step) */
	pthread_mutex_lock(&reg_lock);
	reg_unlink(v);
	pthread_mutex_unlock(&reg_lock);
	/* Unregistered: the events other CQs read for v meanwhile are acked.
	 * Nothing else ran v's trywait step (it joined no set), so v polled
	 * nothing: the CQ's completions are still the application's.  v is
	 * touched by nobody else now; the lock is taken anyway, as close does
	 * (memb_lock, then CQ). */
	pthread_mutex_lock(&v->lock);
	ack_events(v, 1);
	pthread_mutex_unlock(&v->lock);
	if (v->vs)
		set_put(v->chan, v->vs);
	chan_put(v->chan, 1);
	pthread_mutex_unlock(&memb_lock);
fail:
	mirror_close(v);
	pthread_mutex_destroy(&v->lock);
	free(v->stash);
	free(v);
	free(spare);
	free(spare_set);
	return ret;
}

API int lfp_verbs_cq_open(struct ibv_cq *cq, struct ibv_comp_channel *channel,
                          const struct lfp_verbs_cq_attr *attr,
                          struct lfp_verbs_cq **vcqp, void *context)
{
	return vcq_open(cq, NULL, 0, channel, attr, vcqp, context);
}

API int lfp_verbs_cq_ex_open(struct ibv_cq_ex *cq, struct ibv_comp_channel *channel,
                             const struct lfp_verbs_cq_ex_attr *attr,
                             struct lfp_verbs_cq **vcqp, void *context)
{
	uint64_t f = attr ? attr->wc_flags : 0;

	if (!cq)
		return -EINVAL;
	/* Fields the binding does not know how to read. */
	if (f & ~(uint64_t)IBV_CREATE_CQ_SUP_WC_FLAGS)
		return -EINVAL;
	return vcq_open(ibv_cq_ex_to_cq(cq), cq, f, channel, attr ? &attr->cq : NULL,
	                vcqp, context);
}

/*
 * Up to n entries (of v->esz bytes), the stash first, then the CQ.  CQEs
 * with an error status come back as polled.  Returns the count, -EAGAIN,
 * or -errno.
 */
static int vcq_read(struct vcq *v, void *out, int n)
{
	unsigned char *dst = (unsigned char *)out;
	int got = 0, r;

	pthread_mutex_lock(&v->lock);
	while (got < n && v->stash_len) {
		memcpy(dst + (size_t)got * v->esz,
		       v->stash + (size_t)v->stash_head * v->esz, v->esz);
		got++;
		v->stash_head = (v->stash_head + 1) % STASH;
		v->stash_len--;
	}
	if (got < n) {
		r = v->poll(v, dst + (size_t)got * v->esz, n - got);
		if (r < 0 && got == 0) {
			pthread_mutex_unlock(&v->lock);
			return r;
		}
		if (r > 0)
			got += r;
	}
	if (!got && v->err)
		got = v->err;
	/* Events other CQs credited to v are acked in batches here too, for
	 * a CQ that is read and never waited on.  Relaxed: a hint only; the
	 * exchange in ack_events is what pairs with the credit. */
	if (atomic_load_explicit(&v->foreign, memory_order_relaxed))
		ack_events(v, 0);
	pthread_mutex_unlock(&v->lock);
	return got ? got : -EAGAIN;
}

/* The caller's read of entries of the kind ex names (-EINVAL otherwise). */
static int vcq_read_api(struct lfp_verbs_cq *vcq, void *out, int n, int ex)
{
	struct vcq *v = (struct vcq *)vcq;
	int ret;

	if (!v || !out || n <= 0 || (v->cqx != NULL) != ex)
		return -EINVAL;
	(void)atomic_fetch_add(&v->callers, 1);
	ret = vcq_read(v, out, n);
	(void)atomic_fetch_sub(&v->callers, 1);
	return ret;
}

API int lfp_verbs_cq_read(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n)
{
	return vcq_read_api(vcq, wc, n, 0);
}

API int lfp_verbs_cq_ex_read(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                             int n)
{
	return vcq_read_api(vcq, wc, n, 1);
}

/*
 * Blocking read: timeout in ms (< 0 infinite).  -EAGAIN on timeout;
 * -ENOSYS for NONE and SET (wait on the set instead).
 */
static int vcq_sread(struct vcq *v, void *out, int n, int timeout)
{
	struct pollfd pfd[2];
	int64_t deadline;
	int ret;

	deadline = lfp_binding_deadline(timeout);
	for (;;) {
		ret = vcq_read(v, out, n);
		if (ret != -EAGAIN || timeout == 0)
			return ret;
		pthread_mutex_lock(&v->lock);
		ret = vcq_trywait_locked(v);
		pthread_mutex_unlock(&v->lock);
		if (ret == -EAGAIN) {
			/* Work was seen, but another reader may take it: the
			 * deadline holds on every lap, not only after a sleep
			 * (docs/design.md, "Timeouts"). */
			if (lfp_binding_expired(deadline))
				return vcq_read(v, out, n);
			continue;
		}
		if (ret)
			return ret;
		/* What the mirror watches, watched directly: the channel
		 * (an event, maybe ours) and the credit eventfd. */
		pfd[0].fd = v->channel->fd;
		pfd[1].fd = v->evfd;
		pfd[0].events = pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		ret = poll(pfd, 2, lfp_binding_ms_left(deadline));
		if (ret < 0 && errno != EINTR)
			return neg_errno();
		if (pfd[0].revents & (POLLERR | POLLNVAL))
			return -EIO; /* the device is gone */
		if (ret == 0 && lfp_binding_expired(deadline))
			return vcq_read(v, out, n);
	}
}

static int vcq_sread_api(struct lfp_verbs_cq *vcq, void *out, int n, int timeout,
                         int ex)
{
	struct vcq *v = (struct vcq *)vcq;
	int ret;

	if (!v || !out || n <= 0 || (v->cqx != NULL) != ex)
		return -EINVAL;
	if (v->wait_obj != LFP_WAIT_FD)
		return -ENOSYS;
	/* Counted for the whole call, sleep included: close sees it. */
	(void)atomic_fetch_add(&v->callers, 1);
	ret = vcq_sread(v, out, n, timeout);
	(void)atomic_fetch_sub(&v->callers, 1);
	return ret;
}

API int lfp_verbs_cq_sread(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n,
                           int timeout)
{
	return vcq_sread_api(vcq, wc, n, timeout, 0);
}

API int lfp_verbs_cq_ex_sread(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                              int n, int timeout)
{
	return vcq_sread_api(vcq, wc, n, timeout, 1);
}

/*
 * Close: -EBUSY while in a poll set or while a thread is inside another call
 * on the object (the misuse close can see).  Reads what is left on the
 * channel, crediting other CQs' events to them, and acks every event read
 * for this CQ, so that the caller's ibv_destroy_cq does not wait.  Stashed
 * completions are dropped.  The last CQ of a wait set on a channel takes
 * the fd out of the set.
 */
API int lfp_verbs_cq_close(struct lfp_verbs_cq *vcq)
{
	struct vcq *v = (struct vcq *)vcq;

	if (!v)
		return -EINVAL;
	if (lfp_binding_in_poll_set(&v->member))
		return -EBUSY;
	pthread_mutex_lock(&v->lock);
	if (atomic_load(&v->callers)) {
		pthread_mutex_unlock(&v->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_lock(&memb_lock);
	if (v->wait_set)
		lfp_binding_leave(v->wait_set, &v->member);
	pthread_mutex_lock(&v->lock);
	(void)drain_channel(v);
	pthread_mutex_lock(&reg_lock);
	reg_unlink(v);
	pthread_mutex_unlock(&reg_lock);
	/* Unregistered: nobody credits us any more; count what was credited. */
	ack_events(v, 1);
	pthread_mutex_unlock(&v->lock);
	if (v->vs)
		set_put(v->chan, v->vs);
	chan_put(v->chan, 0);
	pthread_mutex_unlock(&memb_lock);
	/* Unregistered: no credit posts to the mirror any more. */
	mirror_close(v);
	pthread_mutex_destroy(&v->lock);
	free(v->stash);
	free(v);
	return 0;
}

/* ------------------------------------------------------------ async */

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

static const char *async_strerror(int prov_errno, const void *err_data)
{
	(void)err_data;
	return lfp_verbs_event_str((enum ibv_event_type)prov_errno);
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
	int pending, ret;

	(void)atomic_fetch_add(&a->callers, 1);
	/* Under the lock that progress writes it under (a data race
	 * otherwise; make check SANITIZE=thread drives the two together). */
	pthread_mutex_lock(&a->lock);
	pending = a->have_pending;
	pthread_mutex_unlock(&a->lock);
	if (pending)
		ret = -EAGAIN;
	else
		ret = poll(&pfd, 1, 0) > 0 ? -EAGAIN : 0;
	(void)atomic_fetch_sub(&a->callers, 1);
	return ret;
}

static int vasync_close_fid(struct lfp_fid *fid)
{
	return lfp_verbs_async_close((struct lfp_verbs_async *)(void *)fid);
}

static const struct lfp_fid_ops vasync_ops = {
	vasync_close_fid, vasync_control, vasync_trywait, NULL, NULL, NULL
};

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
	ret = set_nonblock(ctx->async_fd);
	if (ret)
		return ret;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	if (pthread_mutex_init(&a->lock, NULL)) {
		free(a);
		return -ENOMEM;
	}
	/* It joins no set: no member. */
	lfp_binding_init(&a->pub.fid, LFP_CLASS_VERBS_ASYNC, context, &vasync_ops,
	                 NULL, 0);
	a->ctx = ctx;
	a->eq = eq;
	/* lfp_eq_close is -EBUSY now; async events are named in strerror. */
	(void)lfp_binding_eq_attach(eq, async_strerror);
	*vap = &a->pub;
	return 0;
}

/* Queue the held event into the EQ: 0, or -errno with the event still held. */
static int deliver(struct vasync *a)
{
	struct lfp_eq_err_entry err;
	ssize_t r;

	if (a->pending_error) {
		memset(&err, 0, sizeof(err));
		err.fid = &a->pub.fid;
		err.context = a->pub.fid.context;
		err.err = a->pending.type == IBV_EVENT_DEVICE_FATAL ? ENODEV : EIO;
		err.prov_errno = (int)a->pending.type;
		err.err_data = &a->pending;
		err.err_data_size = sizeof(a->pending);
		r = lfp_eq_write_err(a->eq, &err);
	} else {
		r = lfp_eq_write(a->eq, LFP_VERBS_ASYNC, &a->pending,
		                 sizeof(a->pending), 0);
	}
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

static int vasync_progress(struct vasync *a)
{
	struct ibv_async_event ev;
	struct pollfd pfd;
	unsigned t;
	int moved = 0, ret, was_overrun = a->overrun;

	for (;;) {
		/* A held event the EQ still refuses: keep it, read nothing
		 * more (the fd holds the rest, in order, until there is room). */
		if (a->have_pending && !flush_pending(a, &moved)) {
			ret = 0;
			break;
		}
		if (a->gone) {
			ret = moved ? 0 : -ENODEV;
			break;
		}
		pfd.fd = a->ctx->async_fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
			a->gone = 1;
			continue;
		}
		errno = 0;
		if (ibv_get_async_event(a->ctx, &ev)) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				ret = 0;
				break;
			}
			/* EIO: disassociated.  errno 0: EOF or a short read,
			 * which a live device never gives.  Gone either way. */
			if (errno == EIO || errno == 0) {
				a->gone = 1;
				continue;
			}
			ret = neg_errno();
			break;
		}
		memset(&a->pending, 0, sizeof(a->pending));
		a->pending.fid = &a->pub.fid;
		a->pending.context = a->pub.fid.context;
		a->pending.type = ev.event_type;
		t = (unsigned)ev.event_type;
		switch (t < NKNOWN ? event_kind[t].elem : E_NONE) {
		case E_CQ:   a->pending.element.cq = ev.element.cq; break;
		case E_QP:   a->pending.element.qp = ev.element.qp; break;
		case E_SRQ:  a->pending.element.srq = ev.element.srq; break;
		case E_WQ:   a->pending.element.wq = ev.element.wq; break;
		case E_PORT:
		/* Unknown types too: libibverbs decodes their element as a
		 * port number; pass it through, as the type is. */
		default:     a->pending.element.port_num = ev.element.port_num; break;
		}
		a->pending_error = t < NKNOWN && event_kind[t].error;
		a->have_pending = 1;
		/* Copied: ack now, so the owner can destroy the object. */
		ibv_ack_async_event(&ev);
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
	int ret;

	if (!a)
		return -EINVAL;
	(void)atomic_fetch_add(&a->callers, 1);
	pthread_mutex_lock(&a->lock);
	ret = vasync_progress(a);
	pthread_mutex_unlock(&a->lock);
	(void)atomic_fetch_sub(&a->callers, 1);
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
	int moved = 0, held;

	if (!a)
		return -EINVAL;
	/* Before the lock, which progress holds for its whole call. */
	if (atomic_load(&a->callers))
		return -EBUSY;
	pthread_mutex_lock(&a->lock);
	held = a->have_pending && !flush_pending(a, &moved);
	pthread_mutex_unlock(&a->lock);
	if (held)
		return -EBUSY;
	lfp_binding_eq_detach(a->eq);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return 0;
}
