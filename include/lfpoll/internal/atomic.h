/*
 * lfpoll internal: the one atomic layer every header goes through.
 * Do not include directly; include <lfpoll/common.h> or another public header.
 *
 * By default every operation maps to Concurrency Kit's ck_pr (header only, no
 * libck link).  ThreadSanitizer cannot see ck_pr's inline assembly and volatile
 * accesses, so when the translation unit is built with -fsanitize=thread (or
 * with LFP_ATOMIC_BUILTINS defined) the same operations map to the compiler's
 * __atomic builtins with the same orderings, and the sanitizer checks the real
 * protocol.
 *
 * Naming: lfp__ld (load), lfp__st (store), lfp__cas, lfp__faa (fetch-and-add),
 * lfp__xchg; suffix _rlx (relaxed), _acq (acquire), _rel (release).  RMWs are
 * full barriers under ck_pr on every architecture (a locked instruction on
 * x86, fenced on both sides elsewhere) and SEQ_CST under the builtins, which
 * is weaker: the build the sanitizer checks is never stronger than the one
 * users run.  Callers name, at each use, what the ordering pairs with.
 */
#ifndef LFPOLL_INTERNAL_ATOMIC_H
#define LFPOLL_INTERNAL_ATOMIC_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#if !defined(LFP_ATOMIC_BUILTINS)
#  if defined(__SANITIZE_THREAD__)
#    define LFP_ATOMIC_BUILTINS 1
#  elif defined(__has_feature)
#    if __has_feature(thread_sanitizer)
#      define LFP_ATOMIC_BUILTINS 1
#    endif
#  endif
#endif

#if !defined(LFP_ATOMIC_BUILTINS)
#  include <ck_pr.h>
#endif

#ifndef LFP_INLINE
#  define LFP_INLINE static inline
#endif

#include "sched.h"

#if defined(LFP_ATOMIC_BUILTINS)

#define LFP__ATOMIC_OPS(T, S)                                                  \
LFP_INLINE T lfp__ld_rlx_##S(const T *p)                                       \
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }                               \
LFP_INLINE T lfp__ld_acq_##S(const T *p)                                       \
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }                               \
LFP_INLINE void lfp__st_rlx_##S(T *p, T v)                                     \
{ __atomic_store_n(p, v, __ATOMIC_RELAXED); }                                  \
LFP_INLINE void lfp__st_rel_##S(T *p, T v)                                     \
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }                                  \
LFP_INLINE int lfp__cas_##S(T *p, T *expected, T desired)                      \
{ return __atomic_compare_exchange_n(p, expected, desired, 0,                  \
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }    \
LFP_INLINE T lfp__faa_##S(T *p, T v)                                           \
{ return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }                         \
LFP_INLINE T lfp__xchg_##S(T *p, T v)                                          \
{ return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }

LFP__ATOMIC_OPS(uint64_t, u64)
LFP__ATOMIC_OPS(uint32_t, u32)

/* CAS that reports only success, so the expected value never needs a home
 * in memory: a failed caller reloads what it needs. */
LFP_INLINE int lfp__cas_ok_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{ return __atomic_compare_exchange_n(p, &expected, desired, 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }
/* An exchange with no ordering: only for LFP_DEBUG's misuse checks, which
 * must not make the checked build stronger than the one users run. */
LFP_INLINE uint32_t lfp__xchg_rlx_u32(uint32_t *p, uint32_t v)
{ return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }

/* Set / reset one bit, returning whether it was set before. */
LFP_INLINE int lfp__bts_u32(uint32_t *p, unsigned bit)
{ return (__atomic_fetch_or(p, 1u << bit, __ATOMIC_SEQ_CST) >> bit) & 1; }
LFP_INLINE int lfp__btr_u32(uint32_t *p, unsigned bit)
{ return (__atomic_fetch_and(p, ~(1u << bit), __ATOMIC_SEQ_CST) >> bit) & 1; }
/* Clear the bits of mask, returning the word before. */
LFP_INLINE uint32_t lfp__fetch_clear_u32(uint32_t *p, uint32_t mask)
{ return __atomic_fetch_and(p, ~mask, __ATOMIC_SEQ_CST); }

LFP_INLINE void *lfp__ld_rlx_ptr(void *const *p)
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }
LFP_INLINE void *lfp__ld_acq_ptr(void *const *p)
{ return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
LFP_INLINE void *lfp__xchg_ptr(void **p, void *v)
{ return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
LFP_INLINE void lfp__st_rel_ptr(void **p, void *v)
{ __atomic_store_n(p, v, __ATOMIC_RELEASE); }
LFP_INLINE int lfp__cas_ptr(void **p, void **expected, void *desired)
{ return __atomic_compare_exchange_n(p, expected, desired, 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }

/*
 * Standalone fences.  ThreadSanitizer does not model them (GCC says so with
 * -Wtsan), so no lfpoll data may depend on a fence for its happens-before
 * edge under the sanitizer, and none does: the fences order the seqlock
 * reads (whose copies are relaxed atomics here) and the store-load pair of
 * the wake protocol (which guards no data).  The fences are still emitted,
 * so the sanitizer build runs the real protocol; only the warning is quiet.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#  define LFP__FENCE(order)                                                    \
	_Pragma("GCC diagnostic push")                                         \
	_Pragma("GCC diagnostic ignored \"-Wtsan\"")                           \
	__atomic_thread_fence(order);                                          \
	_Pragma("GCC diagnostic pop")
#else
#  define LFP__FENCE(order) __atomic_thread_fence(order);
#endif

LFP_INLINE void lfp__fence_acq(void) { LFP__FENCE(__ATOMIC_ACQUIRE) }
LFP_INLINE void lfp__fence_rel(void) { LFP__FENCE(__ATOMIC_RELEASE) }
LFP_INLINE void lfp__fence_sc(void) { LFP__FENCE(__ATOMIC_SEQ_CST) }
/* After an RMW that must also order later loads (W2, the overrun re-checks,
 * D1 and a poll link's claim): SEQ_CST RMWs do not order the relaxed and
 * acquire accesses around them, so a fence. */
LFP_INLINE void lfp__mb_after_rmw(void) { lfp__fence_sc(); }

/*
 * Seqlock-style copies: bytes that a reader may copy while a writer rewrites
 * them (ring peek), discarded afterwards if the sequence moved.  Under the
 * sanitizer both sides copy with relaxed atomics so that the deliberate,
 * validated race is not a data race in the C11 sense.
 */
LFP_INLINE void lfp__copy_racy_out(void *dst, const void *src, size_t n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

LFP_INLINE void lfp__copy_racy_in(void *dst, const void *src, size_t n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	size_t i;

	for (i = 0; i < n; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

#else /* ck_pr */

/*
 * ck_pr loads and stores are single volatile accesses, ordered here by
 * fences.  RMWs must be full barriers (docs/design.md, "Memory model"): the
 * store-buffering pairs whose store is an RMW (W2 against P2, the poll
 * link's claim against D1) and the Treiber push's store of next before its
 * CAS rely on it.  On
 * x86 a locked instruction is one, and acquire/release need only compiler
 * barriers (TSO).  Elsewhere ck_pr's CAS/FAA/FAS are plain exclusive-pair
 * loops with no ordering at all (aarch64: ldxr/stxr), so LFP__RMW_PRE/POST
 * put a full fence on each side, the way the Linux kernel brackets its fully
 * ordered atomics, and acquire/release use ck_pr's strict fences, which are
 * real fences (dmb) whatever memory model ck_md.h names.
 */
#if defined(__x86_64__) || defined(__i386__)
#  define LFP__RMW_PRE()  ((void)0)
#  define LFP__RMW_POST() ((void)0)
#  define LFP__ACQ()      ck_pr_fence_acquire()
#  define LFP__REL()      ck_pr_fence_release()
#else
/* The strict forms are real fences whatever ck_md.h says, so a ck_md.h
 * generated for another machine cannot weaken them. */
#  define LFP__RMW_PRE()  ck_pr_fence_strict_memory()
#  define LFP__RMW_POST() ck_pr_fence_strict_memory()
#  define LFP__ACQ()      ck_pr_fence_strict_acquire()
#  define LFP__REL()      ck_pr_fence_strict_release()
#endif

/*
 * ck_pr_store_64 on x86-64 lets the compiler give movq an unsigned 32-bit
 * immediate, which movq sign-extends: a store of a constant from 2^31 to
 * 2^32 - 1 (a ticket a caller wrote out, say) did not assemble.  Such a
 * constant, known only once inlined, goes through a register; no other
 * store changes.
 */
#if defined(__x86_64__)
#  define LFP__ST_VALUE(v)                                                     \
	do {                                                                   \
		if (__builtin_constant_p(v) &&                                 \
		    (uint64_t)(v) - 0x80000000u <= 0x7fffffffu)                \
			__asm__("" : "+r"(v));                                 \
	} while (0)
#else
#  define LFP__ST_VALUE(v) ((void)0)
#endif

#define LFP__ATOMIC_OPS(T, S, W)                                               \
LFP_INLINE T lfp__ld_rlx_##S(const T *p)                                       \
{ return ck_pr_load_##W(p); }                                                  \
LFP_INLINE T lfp__ld_acq_##S(const T *p)                                       \
{ T v = ck_pr_load_##W(p); LFP__ACQ(); return v; }                            \
LFP_INLINE void lfp__st_rlx_##S(T *p, T v)                                     \
{ LFP__ST_VALUE(v); ck_pr_store_##W(p, v); }                                   \
LFP_INLINE void lfp__st_rel_##S(T *p, T v)                                     \
{ LFP__REL(); LFP__ST_VALUE(v); ck_pr_store_##W(p, v); }                       \
LFP_INLINE int lfp__cas_##S(T *p, T *expected, T desired)                      \
{ int ok; LFP__RMW_PRE();                                                      \
  ok = ck_pr_cas_##W##_value(p, *expected, desired, expected);                 \
  LFP__RMW_POST(); return ok; }                                                \
LFP_INLINE T lfp__faa_##S(T *p, T v)                                           \
{ T old; LFP__RMW_PRE(); old = ck_pr_faa_##W(p, v); LFP__RMW_POST();           \
  return old; }                                                                \
LFP_INLINE T lfp__xchg_##S(T *p, T v)                                          \
{ T old; LFP__RMW_PRE(); old = ck_pr_fas_##W(p, v); LFP__RMW_POST();           \
  return old; }

LFP__ATOMIC_OPS(uint32_t, u32, 32)

/*
 * 64-bit words (ring positions, slot words, counts) must be loaded and
 * stored in one access.  ck_pr does that only where a register holds 64
 * bits: on 32-bit targets its x86 port has no 64-bit load or store, and its
 * portable port (the one a 32-bit x86 build gets unless __x86__ is defined)
 * makes them volatile accesses, which the compiler splits into two 32-bit
 * moves, so a reader could pair half of a published slot word with half of
 * a free one (docs/reliability.md, "W").  There the compiler's 64-bit
 * atomics (one SSE or x87 move, cmpxchg8b; ldrexd/strexd on Arm) do the
 * accesses, with the same orderings as ck_pr's: the fences around them are
 * this layer's own.  LFP_TEST_BROKEN_W, a test-only build switch
 * (make check-ilp32), brings back the split accesses.
 */
#if defined(__x86_64__) || defined(__aarch64__) ||                            \
    (defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8) ||               \
    defined(LFP_TEST_BROKEN_W)
LFP__ATOMIC_OPS(uint64_t, u64, 64)

/* CAS that reports only success (lock cmpxchg; sete), so the expected
 * value never needs a home in memory: a failed caller reloads what it
 * needs.  A full barrier, as every RMW. */
LFP_INLINE int lfp__cas_ok_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{ int ok; LFP__RMW_PRE(); ok = ck_pr_cas_64(p, expected, desired); LFP__RMW_POST();
  return ok; }
#else
#  if !defined(__GCC_ATOMIC_LLONG_LOCK_FREE) || __GCC_ATOMIC_LLONG_LOCK_FREE != 2
#    error "lfpoll needs lock-free 64-bit atomics, which this target lacks"
#  endif
/* Relaxed accesses plus this layer's fences, as ck_pr's path above; the
 * RMWs are bracketed as every RMW here, so they stay full barriers. */
LFP_INLINE uint64_t lfp__ld_rlx_u64(const uint64_t *p)
{ return __atomic_load_n(p, __ATOMIC_RELAXED); }
LFP_INLINE uint64_t lfp__ld_acq_u64(const uint64_t *p)
{ uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED); LFP__ACQ(); return v; }
LFP_INLINE void lfp__st_rlx_u64(uint64_t *p, uint64_t v)
{ __atomic_store_n(p, v, __ATOMIC_RELAXED); }
LFP_INLINE void lfp__st_rel_u64(uint64_t *p, uint64_t v)
{ LFP__REL(); __atomic_store_n(p, v, __ATOMIC_RELAXED); }
LFP_INLINE int lfp__cas_u64(uint64_t *p, uint64_t *expected, uint64_t desired)
{ int ok; LFP__RMW_PRE();
  ok = __atomic_compare_exchange_n(p, expected, desired, 0,
                                   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  LFP__RMW_POST(); return ok; }
LFP_INLINE uint64_t lfp__faa_u64(uint64_t *p, uint64_t v)
{ uint64_t old; LFP__RMW_PRE(); old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  LFP__RMW_POST(); return old; }
LFP_INLINE uint64_t lfp__xchg_u64(uint64_t *p, uint64_t v)
{ uint64_t old; LFP__RMW_PRE(); old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
  LFP__RMW_POST(); return old; }
LFP_INLINE int lfp__cas_ok_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{ return lfp__cas_u64(p, &expected, desired); }
#endif
/* An exchange for LFP_DEBUG's misuse checks only; they need its atomicity,
 * not its ordering (the builtins build makes it relaxed). */
LFP_INLINE uint32_t lfp__xchg_rlx_u32(uint32_t *p, uint32_t v)
{ return ck_pr_fas_32(p, v); }

/* Set / reset one bit, returning whether it was set before (lock bts/btr).
 * Full barriers, as every RMW. */
LFP_INLINE int lfp__bts_u32(uint32_t *p, unsigned bit)
{ int was; LFP__RMW_PRE(); was = ck_pr_bts_32(p, bit); LFP__RMW_POST(); return was; }
LFP_INLINE int lfp__btr_u32(uint32_t *p, unsigned bit)
{ int was; LFP__RMW_PRE(); was = ck_pr_btr_32(p, bit); LFP__RMW_POST(); return was; }
/* Clear the bits of mask, returning the word before (a full barrier). */
LFP_INLINE uint32_t lfp__fetch_clear_u32(uint32_t *p, uint32_t mask)
{
	uint32_t old = ck_pr_load_32(p);

	/* The CAS is the full barrier (LFP__RMW_PRE/POST inside). */
	while (!lfp__cas_u32(p, &old, old & ~mask))
		;
	return old;
}

LFP_INLINE void *lfp__ld_rlx_ptr(void *const *p)
{ return ck_pr_load_ptr(p); }
LFP_INLINE void *lfp__ld_acq_ptr(void *const *p)
{ void *v = ck_pr_load_ptr(p); LFP__ACQ(); return v; }
LFP_INLINE void *lfp__xchg_ptr(void **p, void *v)
{ void *old; LFP__RMW_PRE(); old = ck_pr_fas_ptr(p, v); LFP__RMW_POST(); return old; }
LFP_INLINE void lfp__st_rel_ptr(void **p, void *v)
{ LFP__REL(); ck_pr_store_ptr(p, v); }
LFP_INLINE int lfp__cas_ptr(void **p, void **expected, void *desired)
{ int ok; LFP__RMW_PRE(); ok = ck_pr_cas_ptr_value(p, *expected, desired, expected);
  LFP__RMW_POST(); return ok; }

LFP_INLINE void lfp__fence_acq(void) { LFP__ACQ(); }
LFP_INLINE void lfp__fence_rel(void) { LFP__REL(); }
/* A full fence (mfence on x86, dmb ish on aarch64). */
LFP_INLINE void lfp__fence_sc(void) { ck_pr_fence_strict_memory(); }
/* After an RMW that must also order later loads (W2, the overrun re-checks,
 * D1 and a poll link's claim): the RMW already is a full barrier here, so
 * only the compiler needs telling. */
LFP_INLINE void lfp__mb_after_rmw(void) { __asm__ __volatile__("" ::: "memory"); }

/* The n check keeps memcpy from ever seeing a NULL pointer for an empty copy. */
LFP_INLINE void lfp__copy_racy_out(void *dst, const void *src, size_t n)
{ if (n) memcpy(dst, src, n); }
LFP_INLINE void lfp__copy_racy_in(void *dst, const void *src, size_t n)
{ if (n) memcpy(dst, src, n); }

#endif

/*
 * A full barrier for a store-buffering pair's plain side (P2, L2): orders
 * earlier stores before later loads.  On x86 a locked OR of 0 into the word
 * at the stack pointer: a full barrier that leaves the word as it was and
 * touches no shared line, at about half an mfence's cost, in one 5-byte
 * instruction; elsewhere the fence.
 */
LFP_INLINE void lfp__mb(void)
{
#if !defined(LFP_ATOMIC_BUILTINS) && defined(__x86_64__)
	__asm__ __volatile__("lock; orl $0, (%%rsp)" ::: "memory", "cc");
#elif !defined(LFP_ATOMIC_BUILTINS) && defined(__i386__)
	__asm__ __volatile__("lock; orl $0, (%%esp)" ::: "memory", "cc");
#else
	lfp__fence_sc();
#endif
}

/* A pause for bounded spins: PAUSE on x86, nothing elsewhere. */
LFP_INLINE void lfp__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* LFPOLL_INTERNAL_ATOMIC_H */
