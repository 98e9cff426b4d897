/*
 * support/vf/vf.h: a device-free libibverbs context that drives the REAL
 * libibverbs event path without RDMA hardware (method: docs/verbs.md, "Testing without hardware").
 *
 * The context is a calloc'ed struct verbs_context whose kernel side is two
 * kinds of pipe: the async fd carries struct ib_uverbs_async_event_desc
 * records (16 bytes), each completion channel fd carries struct
 * ib_uverbs_comp_event_desc records (8 bytes, cq_handle = the struct ibv_cq *).
 * Tests and the binding call the real ibv_get_async_event, ibv_ack_async_event,
 * ibv_get_cq_event, ibv_ack_cq_events, ibv_destroy_comp_channel, and the inline
 * ibv_poll_cq / ibv_req_notify_cq, which reach the fake CQ below.
 *
 * Only the event path is faked: never call ibv_close_device, ibv_alloc_pd,
 * ibv_query_* or other verbs that need a provider on a vf context.
 *
 * Linking this file interposes read(), close() and ibv_get_device_list() for
 * the whole process (see tests/verbs.mk; installed, lfpoll_vf(3)): -Wl,--wrap
 * cannot do it, because it only rewrites references in the objects being
 * linked, never libibverbs.so's own read@plt. The interposers pass everything through unless a test asks
 * otherwise. Nothing here depends on Criterion; every function is thread-safe
 * unless its comment says otherwise.
 *
 * Error convention: 0 or a count on success, -errno on failure; constructors
 * return NULL with errno set.
 */
#ifndef LFP_SUPPORT_VF_H
#define LFP_SUPPORT_VF_H

#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ context */

/*
 * A fresh context: abi_compat = __VERBS_ABI_IS_EXTENDED, cmd_fd = -1, mutex
 * initialised, device = a fake struct ibv_device named "vf0", vctx.sz set,
 * async_fd = read end of a pipe, ops.poll_cq / ops.req_notify_cq = the fake
 * CQ, vctx.priv = a private page of VF_PRIV_SLOTS stub functions (see below).
 */
struct ibv_context *vf_ctx_create(void);

/*
 * Frees the context. Channels, CQs, QPs, SRQs and WQs still alive are freed
 * too (their pointers become invalid) and the call returns -EBUSY so a test
 * can assert that it cleaned up; 0 otherwise.
 */
int vf_ctx_destroy(struct ibv_context *ctx);

/*
 * Contexts, channels, CQs, QPs, SRQs and WQs currently alive. A leaked one
 * stays reachable from the fake's tables, so valgrind cannot report it:
 * check vf_live() == 0 at the end of a test instead.
 */
int vf_live(void);

/* Write end of the async pipe, for raw records; vf_async_push is preferred. */
int vf_ctx_async_wfd(struct ibv_context *ctx);

/*
 * Timeout of the fake provider destroy_cq reached through the REAL
 * ibv_destroy_cq (default 2000 ms). On timeout ibv_destroy_cq returns
 * ETIMEDOUT instead of hanging the way the kernel would.
 */
void vf_ctx_set_destroy_timeout(struct ibv_context *ctx, int timeout_ms);

/*
 * "Device gone", the way the kernel shows it after a disassociate: records
 * already queued stay readable, then every read of the async fd and of every
 * channel fd of ctx fails with EIO. Waiters are woken (the pipes' write ends
 * are closed), and poll() says what the kernel says: POLLIN while records
 * are queued, then POLLERR (the fake's poll() turns the pipe's POLLHUP
 * into it; epoll still sees POLLHUP). With
 * fatal_event, an IBV_EVENT_DEVICE_FATAL record (element 0) is queued
 * first. Later pushes fail with -ENODEV.
 */
void vf_ctx_device_gone(struct ibv_context *ctx, int fatal_event);

/* ------------------------------------------------- private provider ops */

/*
 * libibverbs calls provider hooks through vctx.priv, whose layout changes
 * between releases. Every pointer-sized slot of the page holds a distinct stub
 * that counts its calls and returns 0. The slots below are found once per
 * process by making one real call each and reading which slot fired.
 */
#define VF_PRIV_SLOTS 512

enum vf_slot {
	VF_SLOT_CQ_EVENT,    /* called by ibv_get_cq_event after a record */
	VF_SLOT_ASYNC_EVENT, /* called by ibv_get_async_event after a record */
	VF_SLOT_CREATE_CQ,   /* called by ibv_create_cq */
	VF_SLOT_DESTROY_CQ,  /* called by ibv_destroy_cq */
	VF_SLOT_NUM
};

/*
 * NULL when discovery found exactly one distinct slot for each enum vf_slot
 * and the acks fired none; otherwise a message saying what went wrong.
 * A suite must check this first and fail loudly.
 */
const char *vf_priv_canary(void);
int vf_priv_slot(enum vf_slot which);          /* slot index, or -1 */
const char *vf_priv_slot_name(enum vf_slot which);
unsigned long vf_priv_hits(int slot);          /* calls of one stub, all contexts */
unsigned long vf_priv_hits_total(void);

/*
 * The real ibv_create_cq and ibv_destroy_cq work on a vf context when the
 * canary passed: the create_cq and destroy_cq slots of each context's page are
 * real fake-provider functions (ibv_create_cq builds a fake CQ with the depth
 * cqe; ibv_destroy_cq behaves like vf_cq_destroy with the context's timeout).
 */

/* ------------------------------------------------- completion channels */

/*
 * A malloc'ed struct ibv_comp_channel: fd = read end of a pipe (blocking;
 * set O_NONBLOCK with fcntl as with a real channel), refcnt 0, context = ctx.
 * Destroy it with the REAL ibv_destroy_comp_channel: it returns EBUSY while a
 * CQ uses it, else closes fd and frees the struct; the fake notices the
 * close and closes its write end. Never close channel->fd yourself.
 */
struct ibv_comp_channel *vf_channel_create(struct ibv_context *ctx);
int vf_channel_wfd(struct ibv_comp_channel *ch); /* write end, or -1 */

/* ------------------------------------------------------------ fake CQ */

/*
 * A calloc'ed struct ibv_cq set up as verbs_init_cq does (context, channel
 * with channel->refcnt++, cq_context, mutex, cond, counters 0), cqe = depth,
 * holding at most depth CQEs. channel may be NULL.
 */
struct ibv_cq *vf_cq_create(struct ibv_context *ctx, struct ibv_comp_channel *ch,
			    void *cq_context, int depth);

/*
 * Models the kernel's destroy: no record is written for cq once this starts;
 * waits until cq->comp_events_completed equals the completion events READ
 * (and cq->async_events_completed the CQ_ERR events read), the counts the
 * kernel reports as comp_events_reported / async_events_reported. Events
 * written but never read are discarded, as the kernel does: a later read of
 * the channel skips them. Returns 0 (cq freed, channel->refcnt--), or
 * -ETIMEDOUT after timeout_ms with cq still alive (retry after acking).
 */
int vf_cq_destroy(struct ibv_cq *cq, int timeout_ms);

/*
 * Adds a CQE (wr_id, status, opcode IBV_WC_RECV). If the CQ is armed and the
 * CQE qualifies (any CQE for a next-completion arm; for a solicited-only arm,
 * a solicited CQE or one with status != IBV_WC_SUCCESS) exactly one record is
 * written to the channel and the CQ disarms. A CQE queued while unarmed never
 * produces an event, even when the CQ is armed later.
 * Returns 0, -ENOSPC (CQ full: overrun), -ESHUTDOWN (destroy in progress),
 * -ENODEV (device gone) or the -errno of the pipe write.
 */
int vf_cq_push(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status status,
	       int solicited);
int vf_cq_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc, int solicited);

/* ------------------------------------------------------- extended CQ */

/* What only an extended CQ reports, beside the struct ibv_wc fields. */
struct vf_cqe_ex {
	uint64_t completion_ts;           /* IBV_WC_EX_WITH_COMPLETION_TIMESTAMP */
	uint64_t completion_wallclock_ns; /* ..._COMPLETION_TIMESTAMP_WALLCLOCK */
	uint16_t cvlan;                   /* IBV_WC_EX_WITH_CVLAN */
	uint32_t flow_tag;                /* IBV_WC_EX_WITH_FLOW_TAG */
	struct ibv_wc_tm_info tm_info;    /* IBV_WC_EX_WITH_TM_INFO */
};

/*
 * An extended CQ, as ibv_create_cq_ex returns one (the real ibv_create_cq_ex
 * reaches this too, through the context's create_cq_ex op; then comp_mask
 * and flags must be 0).  Built as vf_cq_create builds a plain one, with the
 * same queue, arm rules, hooks and faults: ibv_cq_ex_to_cq(cq) is what
 * vf_cq_push, vf_cq_stats, vf_cq_destroy (or the real ibv_destroy_cq) and
 * the channel's records take.  start_poll returns ENOENT when empty (then
 * no end_poll), the next ibv_poll_cq fault as its errno, and otherwise
 * holds the CQ's lock until end_poll, as a provider may; next_poll
 * consumes the current entry; end_poll consumes the current one if
 * next_poll has not.  read_opcode, read_vendor_err and read_wc_flags are
 * always set; every other read op only when its IBV_WC_EX_WITH_* flag is
 * in wc_flags, NULL otherwise, as providers leave them: reading a field
 * that was not asked for crashes.  Misuse of the poll calls is fatal.
 * wc_flags outside IBV_CREATE_CQ_SUP_WC_FLAGS: NULL, errno EOPNOTSUPP.
 */
struct ibv_cq_ex *vf_cq_ex_create(struct ibv_context *ctx, struct ibv_comp_channel *ch,
				  void *cq_context, int depth, uint64_t wc_flags);

/* vf_cq_push_wc with the extended fields (ex NULL: zeros). */
int vf_cq_push_ex(struct ibv_cq *cq, const struct ibv_wc *wc,
		  const struct vf_cqe_ex *ex, int solicited);

/*
 * Hooks run by every ibv_req_notify_cq on cq, without any fake lock held, so
 * they may call vf_cq_push, ibv_poll_cq or vf_cq_set_hooks: before runs ahead
 * of the arm (a CQE landing between the last empty poll and the arm), after
 * runs once the CQ is armed (an event whose CQE the caller's next poll drains).
 */
typedef void (*vf_cq_hook)(struct ibv_cq *cq, int solicited_only, void *arg);
void vf_cq_set_hooks(struct ibv_cq *cq, vf_cq_hook before, vf_cq_hook after,
		     void *arg);

/* The next ibv_req_notify_cq returns err (positive, as providers do) without
 * arming; the next ibv_poll_cq returns -err. 0 cancels. */
void vf_cq_fail_next_arm(struct ibv_cq *cq, int err);
void vf_cq_fail_next_poll(struct ibv_cq *cq, int err);

enum vf_arm { VF_ARM_NONE, VF_ARM_NEXT, VF_ARM_SOLICITED };

struct vf_cq_stats {
	unsigned long cqes_pushed;
	unsigned long cqes_polled;
	unsigned long polls;            /* ibv_poll_cq calls */
	unsigned long arm_calls;        /* ibv_req_notify_cq calls */
	unsigned long arms;             /* of which armed the CQ */
	unsigned long events_written;   /* completion records written */
	unsigned long events_read;      /* ... read by the user */
	unsigned long async_written;    /* CQ_ERR records written */
	unsigned long async_read;       /* ... read by the user */
	unsigned queued;                /* CQEs waiting to be polled */
	enum vf_arm armed;
};
void vf_cq_stats(struct ibv_cq *cq, struct vf_cq_stats *st);

/* ------------------------------------------------------- async events */

/*
 * Writes one whole async record. element is what the kernel ABI carries:
 * the object pointer for affiliated events (VF_ELEM(cq)), the port number for
 * port events, anything for DEVICE_FATAL and unknown types. For affiliated
 * types (CQ_ERR: a vf CQ; QP events: a vf QP; SRQ events: a vf SRQ;
 * WQ_FATAL: a vf WQ) the object must be alive: -EINVAL otherwise, -ESHUTDOWN
 * while it is being destroyed, -ENODEV after vf_ctx_device_gone.
 */
int vf_async_push(struct ibv_context *ctx, enum ibv_event_type type,
		  uint64_t element);
#define VF_ELEM(p) ((uint64_t)(uintptr_t)(p))

/*
 * Objects for affiliated events: calloc'ed, context set, mutex and cond
 * initialised, events_completed 0 (what ibv_ack_async_event touches).
 * Destroy models the kernel as vf_cq_destroy does: waits until
 * events_completed equals the events read, discards unread ones, returns 0
 * or -ETIMEDOUT.
 */
struct ibv_qp *vf_qp_create(struct ibv_context *ctx);
int vf_qp_destroy(struct ibv_qp *qp, int timeout_ms);
struct ibv_srq *vf_srq_create(struct ibv_context *ctx);
int vf_srq_destroy(struct ibv_srq *srq, int timeout_ms);
struct ibv_wq *vf_wq_create(struct ibv_context *ctx);
int vf_wq_destroy(struct ibv_wq *wq, int timeout_ms);

/* ---------------------------------------------------- fault injection */

#define VF_MAX_FD 4096 /* fds at or above this pass through untouched */
#define VF_FOREVER (-1)

/*
 * The next count reads of fd (any fd, through the interposed read, which
 * libibverbs uses) fail with -1 and errno err, consuming no data; count
 * VF_FOREVER keeps failing until cleared; err 0 or count 0 clears. The
 * setting is dropped when fd is closed. Returns 0 or -EBADF.
 */
int vf_inject_read(int fd, int err, int count);

/*
 * The next read or poll() of fd (through the interposed calls) first calls
 * fn(fd, arg) on that thread, once; fn may act as another thread would at
 * that moment.  A later call replaces a hook not yet run; fn NULL clears
 * it.  Returns 0 or -EBADF.
 */
typedef void (*vf_fd_hook_fn)(int fd, void *arg);
int vf_fd_hook(int fd, vf_fd_hook_fn fn, void *arg);

/*
 * For the calling thread: a poll() that finds an fd ready sleeps ms, then
 * looks again without waiting and returns what that look found, as a
 * thread scheduled late after its wake would.  0 turns it off.
 */
void vf_poll_late(int ms);

/* Reads of fd seen by the interposer since fd was last closed. */
unsigned long vf_fd_reads(int fd);

/* Records purged so far because their object was destroyed unread. */
unsigned long vf_records_discarded(void);

/* Bytes waiting in a pipe (FIONREAD), or -errno. */
int vf_fd_pending(int fd);

/* Sets or clears O_NONBLOCK. Returns 0 or -errno. */
int vf_fd_set_nonblock(int fd, int on);

/*
 * err != 0: ibv_get_device_list returns NULL with errno err and *num 0
 * (ENOSYS is what a kernel without RDMA returns). 0: the real function.
 */
void vf_device_list_fail(int err);

#ifdef __cplusplus
}
#endif

#endif /* LFP_SUPPORT_VF_H */
