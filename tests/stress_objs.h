/*
 * Helpers shared by the stress programs that open lfpoll objects
 * (tests/stress_*.c), on top of stress.h.  Include it after the program's
 * first lfpoll header (and any LFP_SCHED_POINTS or LFP_TEST_BROKEN
 * definition); it includes <lfpoll/lfpoll.h> and "stress.h" itself.
 *
 *   obj_name(o)                  a wait object's name ("FD", "MUTEX_COND", ...)
 *   sleep_us(us)                 one nanosleep of us microseconds (a signal
 *                                may end it early, as the soak's preemption
 *                                does on purpose)
 *   open_ws(obj)                 lfp_wait_open; CHECKs it succeeded
 *   open_cq(obj, ws, size, ctx)  a CQ with wait object obj, or a member of ws
 *                                (LFP_WAIT_SET) when ws is not NULL; sread's
 *                                cond is a threshold (LFP_CQ_COND_THRESHOLD)
 *   open_cntr(obj, ws, ctx)      a counter, the same way
 *   open_eq(obj, size, flags, entry_size, ctx)
 *                                an EQ
 *   wait_at_least(v, want, d)    back off (stress_backoff) until *v >= want,
 *                                failing at the deadline d
 */
#ifndef LFP_TESTS_STRESS_OBJS_H
#define LFP_TESTS_STRESS_OBJS_H

#include <lfpoll/lfpoll.h>

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "stress.h"

static inline const char *obj_name(enum lfp_wait_obj o)
{
	switch (o) {
	case LFP_WAIT_NONE:       return "NONE";
	case LFP_WAIT_FD:         return "FD";
	case LFP_WAIT_POLLFD:     return "POLLFD";
	case LFP_WAIT_MUTEX_COND: return "MUTEX_COND";
	case LFP_WAIT_YIELD:      return "YIELD";
	case LFP_WAIT_UNSPEC:     return "UNSPEC";
	default:                  return "?";
	}
}

static inline void sleep_us(unsigned us)
{
	struct timespec ts;

	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	nanosleep(&ts, NULL);
}

static inline struct lfp_wait *open_ws(enum lfp_wait_obj obj)
{
	struct lfp_wait_attr a = { obj, 0 };
	struct lfp_wait *ws = NULL;
	int ret = lfp_wait_open(&a, &ws);

	CHECK(ret == 0, "lfp_wait_open(%s): %d", obj_name(obj), ret);
	return ws;
}

static inline struct lfp_cq *open_cq(enum lfp_wait_obj obj, struct lfp_wait *ws,
                                     size_t size, void *ctx)
{
	struct lfp_cq_attr a = {
		.size = size, .wait_obj = ws ? LFP_WAIT_SET : obj, .wait_set = ws,
		.wait_cond = LFP_CQ_COND_THRESHOLD /* the sreads pass thresholds */
	};
	struct lfp_cq *cq = NULL;
	int ret = lfp_cq_open(&a, &cq, ctx);

	CHECK(ret == 0, "lfp_cq_open(%s): %d", obj_name(obj), ret);
	return cq;
}

static inline struct lfp_cntr *open_cntr(enum lfp_wait_obj obj,
                                         struct lfp_wait *ws, void *ctx)
{
	struct lfp_cntr_attr a = { .wait_obj = ws ? LFP_WAIT_SET : obj, .wait_set = ws };
	struct lfp_cntr *c = NULL;
	int ret = lfp_cntr_open(&a, &c, ctx);

	CHECK(ret == 0, "lfp_cntr_open(%s): %d", obj_name(obj), ret);
	return c;
}

static inline struct lfp_eq *open_eq(enum lfp_wait_obj obj, size_t size,
                                     uint64_t flags, size_t entry_size, void *ctx)
{
	struct lfp_eq_attr a = {
		.size = size, .flags = flags, .wait_obj = obj, .entry_size = entry_size
	};
	struct lfp_eq *eq = NULL;
	int ret = lfp_eq_open(&a, &eq, ctx);

	CHECK(ret == 0, "lfp_eq_open(%s): %d", obj_name(obj), ret);
	return eq;
}

static inline void wait_at_least(_Atomic uint64_t *v, uint64_t want,
                                 const struct stress_deadline *d)
{
	unsigned spins = 0;

	while (atomic_load(v) < want) {
		stress_backoff(&spins);
		if ((spins & 255) == 0)
			CHECK_DEADLINE(d);
	}
}

#endif /* LFP_TESTS_STRESS_OBJS_H */
