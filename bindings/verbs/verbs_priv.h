/*
 * Private to liblfpoll_verbs, never installed: what the binding's files
 * share.  chan.c keeps the channel records and the registry and credits
 * the events it reads, mirror.c is an FD-mode CQ's own wait object, cq.c
 * the trywait step, reads and close, cq_open.c the opens, cq_ex.c the
 * extended CQ's poll, async.c the async events.  docs/verbs.md explains the
 * protocols; the names with the lfp_verbs__ prefix are hidden symbols
 * (-fvisibility=hidden), prefixed so that the static library cannot clash
 * with a program's own names.
 */
#ifndef LFP_VERBS_PRIV_H
#define LFP_VERBS_PRIV_H

#include <lfpoll/verbs.h>
#include <lfpoll/binding.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

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
	/* A read of the channel failed (the device is gone): every CQ on
	 * it reports this once empty, whichever CQ's drain met it. */
	atomic_int err;
	unsigned users;            /* binding CQs registered on the channel */
	int orig_fl;               /* fd flags before the first user, or -1 */
	const struct vcq *setter;  /* the open that set them (its failure
	                            * restores them, if it is the last user) */
	struct vset *sets;         /* the wait sets that watch the fd */
	struct vchan *next;
};

struct vcq;

/*
 * What a binding CQ object serves: a plain CQ's completions, an extended
 * CQ's, or only the channel events of a CQ the application polls and arms
 * itself (an events object: the binding never polls or arms it).
 */
enum vcq_kind { VCQ_PLAIN, VCQ_EX, VCQ_EVENTS };

/* The CQ an open wraps: cq is what its channel's events name. */
struct vcq_src {
	enum vcq_kind kind;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;     /* VCQ_EX: the extended CQ */
	uint64_t wc_flags;         /* VCQ_EX: the fields to read */
};

/* Poll up to n entries into dst: a count, or -errno.  Lock held. */
typedef int (*vcq_poll_fn)(struct vcq *v, void *dst, int n);

struct vcq {
	struct lfp_verbs_cq pub;
	enum vcq_kind kind;
	struct ibv_cq *cq;         /* an extended CQ's too: the one events name */
	struct ibv_cq_ex *cqx;     /* an extended CQ, or NULL */
	uint64_t wc_flags;         /* an extended CQ's fields to read */
	vcq_poll_fn poll;          /* ibv_poll_cq, start/next/end_poll, or NULL */
	size_t esz;                /* entry: struct ibv_wc or lfp_verbs_wc_ex */
	struct ibv_comp_channel *channel;
	unsigned ack_batch;
	int solicited_only;
	enum lfp_wait_obj wait_obj;
	struct lfp_wait *wait_set;
	struct lfp_binding_member *member; /* wait sets and poll sets */
	pthread_mutex_t lock;
	unsigned char *stash;      /* STASH entries of esz bytes */
	unsigned stash_head, stash_len;
	unsigned unacked;          /* channel events read for this CQ, not acked */
	unsigned events;           /* VCQ_EVENTS: events not yet handed out */
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

static inline struct vcq *to_vcq(struct lfp_fid *fid)
{
	return (struct vcq *)(void *)fid;
}

/* libibverbs' "-1 and errno, errno possibly 0" convention as -errno. */
static inline int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

/*
 * Cancellation (docs/verbs.md, "Cancellation"): the blocking calls are
 * cancellation points only while asleep.  Every other step runs with
 * cancellation disabled, so that a pending request is not acted on inside
 * the system calls the binding makes (channel, async fd and eventfd reads
 * and writes, a poll that does not sleep, close), nor inside the
 * libibverbs calls that make them, with a lock held or a count raised.
 */
static inline int cancel_off(void)
{
	int old;

	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void cancel_restore(int old)
{
	int ignored;

	(void)pthread_setcancelstate(old, &ignored);
}

/*
 * The close guard: every call but close runs between guard_enter and
 * guard_leave on its object's count of callers, and close is -EBUSY while
 * the count is not 0 (the misuse it can see: a thread still inside a
 * call).  The guard also holds the caller's cancel state, off for the call
 * and back on only in lfp_verbs__sleep, whose cleanup handler leaves the
 * guard if the thread is cancelled there.
 */
struct guard {
	_Atomic uint32_t *callers;
	int cancel;                /* the caller's cancel state */
};

static inline void guard_enter(struct guard *g, _Atomic uint32_t *callers)
{
	g->cancel = cancel_off();
	g->callers = callers;
	/* Sequentially consistent, as guard_busy's load: close sees every
	 * call that entered before its look in the single total order; one
	 * that enters after it is the misuse close cannot catch. */
	(void)atomic_fetch_add(callers, 1);
}

static inline void guard_leave(struct guard *g)
{
	(void)atomic_fetch_sub(g->callers, 1); /* as guard_enter */
	cancel_restore(g->cancel);
}

static inline int guard_busy(_Atomic uint32_t *callers)
{
	return atomic_load(callers) != 0; /* pairs with guard_enter */
}

struct pollfd;

/* guard.c: poll(2) as the only cancellation point of a call in g. */
int lfp_verbs__sleep(struct guard *g, struct pollfd *pfd, unsigned nfds, int ms);

/* chan.c: the channel records, the registry, and crediting. */
int lfp_verbs__register(struct vcq *v);
int lfp_verbs__join_set(struct vcq *v);
void lfp_verbs__unregister(struct vcq *v, int failed);
int lfp_verbs__drain_channel(struct vcq *v);
unsigned lfp_verbs__ack_events(struct vcq *v, int force);

/* mirror.c: an FD-mode CQ's own wait object. */
int lfp_verbs__mirror_open(struct vcq *v);
void lfp_verbs__mirror_close(struct vcq *v);
void lfp_verbs__mirror_post(struct vcq *v);
int lfp_verbs__mirror_clear(struct vcq *v);

/* cq.c: the trywait step and the reads, for both kinds of CQ. */
int lfp_verbs__poll_plain(struct vcq *v, void *dst, int n);
extern const struct lfp_fid_ops lfp_verbs__cq_ops;
int lfp_verbs__cq_read_api(struct lfp_verbs_cq *vcq, void *out, int n,
                           enum vcq_kind kind);
int lfp_verbs__cq_sread_api(struct lfp_verbs_cq *vcq, void *out, int n,
                            int timeout, enum vcq_kind kind);

/* cq_open.c: every open. */
int lfp_verbs__cq_open(const struct vcq_src *src, struct ibv_comp_channel *channel,
                       const struct lfp_verbs_cq_attr *attr,
                       struct lfp_verbs_cq **vcqp, void *context);

/* cq_ex.c: an extended CQ's poll. */
int lfp_verbs__poll_ex(struct vcq *v, void *dst, int n);

#endif /* LFP_VERBS_PRIV_H */
