/*
 * lfpoll verbs binding: libibverbs completion channels and async events as
 * lfpoll objects (liblfpoll_verbs; pkg-config lfpoll-verbs).
 *
 * A verbs CQ is an lfp_fid: lfp_trywait drains its channel events (acks
 * batched), re-arms it and polls again, keeping what that poll found in a
 * stash so no completion is lost; it joins poll sets and wait sets.  Any
 * number of verbs CQs, with any wait objects, may share a channel: an event
 * is acked on the CQ it names and wakes that CQ, whoever reads it, and an
 * FD-mode CQ's LFP_GETWAIT fd is its own.  An extended CQ (ibv_cq_ex) is
 * served the same way and read into struct lfp_verbs_wc_ex, with the fields
 * asked for at its creation.  A verbs async object moves the
 * device's async events into an lfpoll EQ, all as EQ events in the order
 * the device sent them, the error class marked in each entry.
 *
 * A CQ the application polls itself, on a channel binding CQs use, gets
 * its channel events through an events object.
 *
 * The binding never owns the ibv_context, ibv_cq or ibv_comp_channel it is
 * given: the caller destroys them after the binding's close.  Every call
 * returns 0 or a count, or a negative errno.  Every call is thread-safe
 * except a close, which must not run concurrently with any other call on
 * the same object (-EBUSY when it sees a thread still inside one).  The
 * blocking calls (the sreads) are cancellation points while they sleep,
 * and no call is one otherwise.  A forked child must not use the objects
 * it inherits (lfp_verbs(3)).
 */
#ifndef LFPOLL_VERBS_H
#define LFPOLL_VERBS_H

/* lfpoll first: under a strict -std=c11 it names the feature macro to set. */
#include <lfpoll/lfpoll.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LFP_CLASS_VERBS_CQ    (LFP_CLASS_BINDING + 1)
#define LFP_CLASS_VERBS_ASYNC (LFP_CLASS_BINDING + 2)
#define LFP_CLASS_VERBS_CQ_EX (LFP_CLASS_BINDING + 3)
#define LFP_CLASS_VERBS_CQ_EVENTS (LFP_CLASS_BINDING + 4)

/* EQ event code of every async event (payload: struct lfp_verbs_async_entry). */
#define LFP_VERBS_ASYNC       (LFP_EVENT_USER - 1)

/* Channel events read before they are acked, when ack_batch is 0. */
#define LFP_VERBS_ACK_BATCH   64

struct lfp_verbs_cq_attr {
	unsigned ack_batch;          /* 0: LFP_VERBS_ACK_BATCH; 1: ack each */
	int solicited_only;          /* arm for solicited and error CQEs only */
	enum lfp_wait_obj wait_obj;  /* NONE, UNSPEC (= FD), FD or SET */
	struct lfp_wait *wait_set;   /* with LFP_WAIT_SET */
};

/* Opaque beyond its fid; a plain or an extended CQ, or an events object. */
struct lfp_verbs_cq {
	struct lfp_fid fid;
};

/* An extended CQ (ibv_create_cq_ex): the plain attributes, and the fields. */
struct lfp_verbs_cq_ex_attr {
	struct lfp_verbs_cq_attr cq;
	uint64_t wc_flags;           /* IBV_WC_EX_WITH_*, as given to ibv_create_cq_ex */
};

/*
 * One completion of an extended CQ.  wr_id and status always; with
 * IBV_WC_SUCCESS also opcode, wc_flags and every field asked for in
 * wc_flags at open; with another status vendor_err, and qp_num if asked
 * (what ibv_poll_cq(3) defines for a failed completion).  fields holds the
 * IBV_WC_EX_WITH_* flags of the fields read; the others are 0.
 */
struct lfp_verbs_wc_ex {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	unsigned int wc_flags;              /* IBV_WC_GRH, IBV_WC_WITH_IMM, ... */
	uint64_t fields;                    /* IBV_WC_EX_WITH_* read */
	uint32_t byte_len;                  /* BYTE_LEN */
	__be32 imm_data;                    /* IMM: immediate data, or invalidated rkey */
	uint32_t qp_num;                    /* QP_NUM */
	uint32_t src_qp;                    /* SRC_QP */
	uint32_t slid;                      /* SLID */
	uint8_t sl;                         /* SL */
	uint8_t dlid_path_bits;             /* DLID_PATH_BITS */
	uint16_t cvlan;                     /* CVLAN */
	uint32_t flow_tag;                  /* FLOW_TAG */
	uint64_t completion_ts;             /* COMPLETION_TIMESTAMP: device clock */
	uint64_t completion_wallclock_ns;   /* COMPLETION_TIMESTAMP_WALLCLOCK */
	struct ibv_wc_tm_info tm_info;      /* TM_INFO */
};

/*
 * One async event, the payload of an EQ event LFP_VERBS_ASYNC.  Every
 * event is one, in the order the device sent them; err gives the class:
 * 0 for an info event, EIO for an error-class event, ENODEV for
 * DEVICE_FATAL.
 */
struct lfp_verbs_async_entry {
	struct lfp_fid *fid;         /* the async object's */
	void *context;               /* the async object's context */
	enum ibv_event_type type;
	int err;                     /* 0: info; EIO: error class; ENODEV: DEVICE_FATAL */
	union {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_srq *srq;
		struct ibv_wq *wq;
		int port_num;
	} element;
};

struct lfp_verbs_async {
	struct lfp_fid fid;
};

int lfp_verbs_cq_open(struct ibv_cq *cq, struct ibv_comp_channel *channel,
                      const struct lfp_verbs_cq_attr *attr,
                      struct lfp_verbs_cq **vcq, void *context);
int lfp_verbs_cq_read(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n);
int lfp_verbs_cq_sread(struct lfp_verbs_cq *vcq, struct ibv_wc *wc, int n,
                       int timeout);
int lfp_verbs_cq_close(struct lfp_verbs_cq *vcq);

int lfp_verbs_cq_ex_open(struct ibv_cq_ex *cq, struct ibv_comp_channel *channel,
                         const struct lfp_verbs_cq_ex_attr *attr,
                         struct lfp_verbs_cq **vcq, void *context);
int lfp_verbs_cq_ex_read(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                         int n);
int lfp_verbs_cq_ex_sread(struct lfp_verbs_cq *vcq, struct lfp_verbs_wc_ex *wc,
                          int n, int timeout);

/*
 * A CQ the application polls and arms itself, on a channel that binding CQs
 * use: its channel events, whoever reads them, are handed to this object
 * (already acked) instead of dropped.  The binding never polls or arms it.
 */
int lfp_verbs_cq_events_open(struct ibv_cq *cq, struct ibv_comp_channel *channel,
                             const struct lfp_verbs_cq_attr *attr,
                             struct lfp_verbs_cq **vcq, void *context);
int lfp_verbs_cq_events_read(struct lfp_verbs_cq *vcq);

int lfp_verbs_async_open(struct ibv_context *ctx, struct lfp_eq *eq,
                         struct lfp_verbs_async **va, void *context);
int lfp_verbs_async_progress(struct lfp_verbs_async *va);
ssize_t lfp_verbs_async_sread(struct lfp_verbs_async *va, uint32_t *event,
                              void *buf, size_t len, int timeout,
                              uint64_t flags);
int lfp_verbs_async_close(struct lfp_verbs_async *va);

const char *lfp_verbs_event_str(enum ibv_event_type type);

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_VERBS_H */
