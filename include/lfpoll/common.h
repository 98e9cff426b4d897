/*
 * lfpoll: errors, flags, enums and the object model shared by every header.
 *
 * Every call returns 0 or a count on success and a negative errno on failure.
 * Three error values keep libfabric's numbers so that ported code keeps its
 * constants: LFP_ETOOSMALL, LFP_EAVAIL and LFP_EOVERRUN.
 */
#ifndef LFPOLL_COMMON_H
#define LFPOLL_COMMON_H

/*
 * lfpoll uses POSIX.1-2008 calls (clock_gettime, posix_memalign,
 * condition-variable clocks), and defines no feature-test macro: which
 * interfaces the C library shows is the includer's choice for the whole
 * translation unit.  The default GNU modes (-std=gnu11, C++) show them; a
 * strict -std=c11 needs -D_POSIX_C_SOURCE=200809L (or _XOPEN_SOURCE 700,
 * _DEFAULT_SOURCE, _GNU_SOURCE), checked below.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/*
 * Under a strict -std=c11 with no feature macro the C library hides the
 * POSIX calls lfpoll needs: stop here with the fix, not deep in ring.h.
 * glibc shows POSIX.1-2001 and later with __USE_XOPEN2K; elsewhere, a
 * strict mode with none of the macros is the case to catch.
 */
#if defined(__GLIBC__) ? !defined(__USE_XOPEN2K) :                          \
    (defined(__STRICT_ANSI__) && !defined(__cplusplus) &&                   \
     !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) &&                \
     !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE) && !defined(_GNU_SOURCE))
#  error "lfpoll needs POSIX.1-2008: compile with -D_POSIX_C_SOURCE=200809L (or -std=gnu11), defined before any #include"
#endif

#ifndef LFP_INLINE
/* Every lfpoll call is static inline; override to add attributes. */
#  define LFP_INLINE static inline
#endif
/*
 * Only for the small internal helpers whose callers pass constant sizes
 * (typed rings): inlining lets the compiler turn the copy into fixed moves.
 */
#ifndef LFP_FORCE_INLINE
#  define LFP_FORCE_INLINE static inline __attribute__((always_inline))
#endif
/* The rare paths of inline calls (the EQ's overrun and void entries): out
 * of line, so that the common path inlines small, with no register saves
 * for them. */
#ifndef LFP_SLOW
#  define LFP_SLOW static __attribute__((noinline, cold, unused))
#endif
/* Hot code kept out of line on purpose: used where an inline copy at every
 * call site would cost more than the call (the single-producer,
 * single-consumer paths of EQs and CQs, whose call sites stay small). */
#ifndef LFP_OUTLINE
#  define LFP_OUTLINE static __attribute__((noinline, unused))
#endif
/* For generated functions a file may not call (typed rings). */
#define LFP__UNUSED __attribute__((unused))
/* Whether the compiler knows x here (after inlining): the inline EQ calls
 * copy inline only a payload whose size is known, where the copy becomes
 * a few moves; any other size goes to the out-of-line path, which calls
 * memcpy anyway. */
#define LFP__CONSTANT(x) __builtin_constant_p(x)
/* Branch hints: the fast path's tests of rare cases. */
#define LFP__LIKELY(x)   __builtin_expect(!!(x), 1)
#define LFP__UNLIKELY(x) __builtin_expect(!!(x), 0)

#include "internal/atomic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cache-line size, and the distance that keeps two hot fields from sharing
 * an adjacent-line prefetch pair. */
#define LFP_CACHELINE      64
#define LFP_CACHELINE_PAIR 128

/*
 * 8-byte alignment, on every 64-bit word lfpoll accesses atomically and on
 * the public structs holding such words that a caller may place itself
 * (struct lfp_ring, struct lfp_pollfds).  On 32-bit x86 a uint64_t member
 * is only 4-byte aligned, so such a word could cross a cache line, where a
 * 64-bit load is not one access (a torn read) and a locked cmpxchg8b is a
 * split lock.  8-aligned, none crosses a line (tests/ilp32/align.c).
 * Elsewhere the compiler already aligns them so.
 */
#define LFP__ALIGN8 __attribute__((aligned(8)))

/*
 * A failed system call's error as a negative errno, never 0: a failure path
 * that could return 0 lets the compiler assume success without the output
 * written ("may be used uninitialized" in correct callers at -O2).
 */
LFP_INLINE int lfp__neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * The result of an out-of-line error path, which is always negative: said
 * so to the compiler, which cannot see inside the call, so that a caller's
 * output (written only on success) is not "maybe used uninitialized".
 */
LFP_INLINE ssize_t lfp__failed(ssize_t r)
{
	if (r >= 0)
		__builtin_unreachable();
	return r;
}

/*
 * The layout version of lfpoll's object structs.  Every object records the
 * value of the headers that built it (fid.abi); a compiled binding checks
 * it against its own (lfp_binding_check).  Bump it whenever a struct that a
 * binding may touch changes layout; tests/compile/abi_layout.c fails until
 * you do.
 */
#define LFP_ABI_VERSION 9

/* lfpoll-specific error values (libfabric's numbers). */
#define LFP_ETOOSMALL 257 /* the caller's buffer is smaller than the entry */
#define LFP_EAVAIL    259 /* an error entry is available: call readerr */
#define LFP_EOVERRUN  268 /* the queue overran and is no longer usable */

/* Flags (uint64_t). Values match libfabric's FI_ flags of the same name. */
#define LFP_WRITE            (1ULL << 9)
#define LFP_PEEK             (1ULL << 19)
#define LFP_AFFINITY         (1ULL << 29)
/* Extension: a full EQ returns -EAGAIN to the writer instead of overrunning. */
#define LFP_EQ_BACKPRESSURE  (1ULL << 60)
/*
 * Extensions, at open (rings, EQs, CQs): only one thread at a time writes
 * (LFP_SINGLE_PRODUCER) or reads (LFP_SINGLE_CONSUMER).  That side then
 * claims positions without a CAS; with both, the queue is a wait-free
 * index ring that copies a burst in one pass per side.  Built with
 * LFP_DEBUG, a second thread on a single side aborts with a message.
 */
#define LFP_SINGLE_PRODUCER  (1ULL << 58)
#define LFP_SINGLE_CONSUMER  (1ULL << 59)

enum lfp_wait_obj {
	LFP_WAIT_NONE,
	LFP_WAIT_UNSPEC,
	LFP_WAIT_SET,
	LFP_WAIT_FD,
	LFP_WAIT_MUTEX_COND,
	LFP_WAIT_YIELD,
	LFP_WAIT_POLLFD
};

/* Object classes.  Bindings use values from LFP_CLASS_BINDING up. */
enum {
	LFP_CLASS_EQ = 1,
	LFP_CLASS_CQ,
	LFP_CLASS_CNTR,
	LFP_CLASS_WAIT,
	LFP_CLASS_POLL,
	LFP_CLASS_BINDING = 0x100
};

/* lfp_control commands. */
enum {
	LFP_GETWAIT = 1,  /* arg: int * (FD), struct lfp_mutex_cond * or struct lfp_wait_pollfd * */
	LFP_GETWAITOBJ    /* arg: enum lfp_wait_obj * */
};

struct lfp_mutex_cond {
	pthread_mutex_t *mutex;
	pthread_cond_t *cond;
};

/* The change_index-tracked array of pollfds (see pollfd.h). */
struct lfp_wait_pollfd {
	uint64_t change_index;
	size_t nfds;
	struct pollfd *fd;
};

struct lfp_fid;
/* A poll set's hold on an object: opaque (a binding gets its objects' from
 * lfp_binding_poll_link, binding.h). */
struct lfp_poll_link;

/*
 * What every object class provides.  Bindings fill one of these to add a
 * class that lfp_trywait, poll sets and wait sets can work with.
 *   close     release the object; -EBUSY while still in use.
 *   control   LFP_GETWAIT / LFP_GETWAITOBJ; -ENOSYS for others.
 *   trywait   clear the object's notification, then re-check its sources:
 *             0 when blocking is safe, -EAGAIN when work is pending.
 *   ready     queue-like objects: > 0 while the object holds work.
 *   events    event-like objects (counters): a count that moves on every
 *             event, so a set reports the object when it moved since the
 *             set last saw it; NULL for queue-like objects.
 *   poll_link the object's link for poll sets (NULL: cannot join one).
 */
struct lfp_fid_ops {
	int (*close)(struct lfp_fid *fid);
	int (*control)(struct lfp_fid *fid, int command, void *arg);
	int (*trywait)(struct lfp_fid *fid);
	int (*ready)(struct lfp_fid *fid);
	uint64_t (*events)(struct lfp_fid *fid);
	struct lfp_poll_link *(*poll_link)(struct lfp_fid *fid);
};

struct lfp_fid {
	uint32_t fclass;
	void *context;
	const struct lfp_fid_ops *ops;
	/* LFP_ABI_VERSION of the headers that built the object, so that a
	 * compiled binding can refuse an object whose layout it does not
	 * know (lfp_binding(3)).  Last, so that initializers of the first
	 * three fields keep compiling. */
	uint32_t abi;
	/* Set at open, never changed after: the object has no wait object,
	 * and its producers make no fence while it is in no poll set; an add
	 * to a poll set pays for their side of the pair with a process-wide
	 * barrier (internal/poll_link.h; docs/design.md 4.1).  In the fid,
	 * near the object's start, where the write's test of it is short. */
	uint32_t asym;
};

/*
 * Whether a member of a set has something to report, as both kinds of set
 * see it: a queue-like object while its ready op says so; an event-like one
 * when its events moved since *seen, the set's last look, which moves
 * *seen on only when consume is set.
 */
LFP_INLINE int lfp__fid_work(struct lfp_fid *fid, uint64_t *seen, int consume)
{
	uint64_t ev;

	if (!fid->ops->events)
		return fid->ops->ready && fid->ops->ready(fid) > 0;
	/* Relaxed: seen is also reset by a counter's add/set; a lost race
	 * there only costs a false positive. */
	ev = fid->ops->events(fid);
	if (ev == lfp__ld_rlx_u64(seen))
		return 0;
	if (consume)
		lfp__st_rlx_u64(seen, ev);
	return 1;
}

/*
 * How every control op begins: -EINVAL without arg; LFP_GETWAITOBJ answered
 * with obj (0); -ENOSYS for a command other than LFP_GETWAIT.  1 means
 * LFP_GETWAIT, which the caller answers.
 */
LFP_INLINE int lfp__control_begin(enum lfp_wait_obj obj, int command, void *arg)
{
	if (!arg)
		return -EINVAL;
	if (command == LFP_GETWAITOBJ) {
		*(enum lfp_wait_obj *)arg = obj;
		return 0;
	}
	return command == LFP_GETWAIT ? 1 : -ENOSYS;
}

LFP_INLINE int lfp_close(struct lfp_fid *fid)
{
	if (!fid || !fid->ops || !fid->ops->close)
		return -EINVAL;
	return fid->ops->close(fid);
}

LFP_INLINE int lfp_control(struct lfp_fid *fid, int command, void *arg)
{
	if (!fid || !fid->ops)
		return -EINVAL;
	if (!fid->ops->control)
		return -ENOSYS;
	return fid->ops->control(fid, command, arg);
}

/*
 * 0 only when blocking on the native wait objects of every fid is safe: each
 * object's notification is cleared and then its sources are re-checked.
 * -EAGAIN at the first that has pending work (the caller drains and asks
 * again); -EINVAL for a NULL array, a zero count, or an object without a
 * wait object.
 */
LFP_INLINE int lfp_trywait(struct lfp_fid **fids, size_t count)
{
	enum lfp_wait_obj obj;
	size_t i;
	int ret;

	if (!fids || count == 0)
		return -EINVAL;
	/* Every object must have a wait object, checked before any is
	 * touched, so the answer does not depend on the array's order. */
	for (i = 0; i < count; i++) {
		if (!fids[i] || !fids[i]->ops || !fids[i]->ops->trywait)
			return -EINVAL;
		if (fids[i]->ops->control &&
		    fids[i]->ops->control(fids[i], LFP_GETWAITOBJ, &obj) == 0 &&
		    obj == LFP_WAIT_NONE)
			return -EINVAL;
	}
	for (i = 0; i < count; i++) {
		ret = fids[i]->ops->trywait(fids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Accepts positive or negative values; never returns NULL. */
LFP_INLINE const char *lfp_strerror(int err)
{
	if (err == INT_MIN)
		return "Unknown error";
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:             return "Success";
	case LFP_ETOOSMALL: return "Buffer too small";
	case LFP_EAVAIL:    return "Error entry available";
	case LFP_EOVERRUN:  return "Queue has been overrun";
	default:            break;
	}
	if (err < LFP_ETOOSMALL)
		return strerror(err);
	return "Unknown error";
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_COMMON_H */
