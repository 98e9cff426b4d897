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
 * lfp__xchg; suffix _rlx (relaxed), _acq (acquire), _rel (release); RMWs are
 * always full barriers (a locked instruction on x86 under ck_pr, SEQ_CST
 * under the builtins).  Callers name, at each use, what the ordering pairs
 * with.
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

/* Set / reset one bit, returning whether it was set before. */
LFP_INLINE int lfp__bts_u32(uint32_t *p, unsigned bit)
{ return (__atomic_fetch_or(p, 1u << bit, __ATOMIC_SEQ_CST) >> bit) & 1; }
LFP_INLINE int lfp__btr_u32(uint32_t *p, unsigned bit)
{ return (__atomic_fetch_and(p, ~(1u << bit), __ATOMIC_SEQ_CST) >> bit) & 1; }

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
 * ck_pr loads and stores are single volatile accesses; acquire and release
 * are expressed with ck_pr_fence_acquire/release, which on a TSO machine such
 * as x86-64 compile to compiler barriers only.  ck_pr RMWs are locked
 * instructions: full barriers.
 */
#define LFP__ATOMIC_OPS(T, S, W)                                               \
LFP_INLINE T lfp__ld_rlx_##S(const T *p)                                       \
{ return ck_pr_load_##W(p); }                                                  \
LFP_INLINE T lfp__ld_acq_##S(const T *p)                                       \
{ T v = ck_pr_load_##W(p); ck_pr_fence_acquire(); return v; }                  \
LFP_INLINE void lfp__st_rlx_##S(T *p, T v)                                     \
{ ck_pr_store_##W(p, v); }                                                     \
LFP_INLINE void lfp__st_rel_##S(T *p, T v)                                     \
{ ck_pr_fence_release(); ck_pr_store_##W(p, v); }                              \
LFP_INLINE int lfp__cas_##S(T *p, T *expected, T desired)                      \
{ return ck_pr_cas_##W##_value(p, *expected, desired, expected); }             \
LFP_INLINE T lfp__faa_##S(T *p, T v)                                           \
{ return ck_pr_faa_##W(p, v); }                                                \
LFP_INLINE T lfp__xchg_##S(T *p, T v)                                          \
{ return ck_pr_fas_##W(p, v); }

LFP__ATOMIC_OPS(uint64_t, u64, 64)
LFP__ATOMIC_OPS(uint32_t, u32, 32)

/* Set / reset one bit, returning whether it was set before (lock bts/btr). */
LFP_INLINE int lfp__bts_u32(uint32_t *p, unsigned bit)
{ return ck_pr_bts_32(p, bit); }
LFP_INLINE int lfp__btr_u32(uint32_t *p, unsigned bit)
{ return ck_pr_btr_32(p, bit); }

LFP_INLINE void *lfp__ld_rlx_ptr(void *const *p)
{ return ck_pr_load_ptr(p); }
LFP_INLINE void *lfp__ld_acq_ptr(void *const *p)
{ void *v = ck_pr_load_ptr(p); ck_pr_fence_acquire(); return v; }
LFP_INLINE void *lfp__xchg_ptr(void **p, void *v)
{ return ck_pr_fas_ptr(p, v); }
LFP_INLINE void lfp__st_rel_ptr(void **p, void *v)
{ ck_pr_fence_release(); ck_pr_store_ptr(p, v); }
LFP_INLINE int lfp__cas_ptr(void **p, void **expected, void *desired)
{ return ck_pr_cas_ptr_value(p, *expected, desired, expected); }

LFP_INLINE void lfp__fence_acq(void) { ck_pr_fence_acquire(); }
LFP_INLINE void lfp__fence_rel(void) { ck_pr_fence_release(); }

/* The n check keeps memcpy from ever seeing a NULL pointer for an empty copy. */
LFP_INLINE void lfp__copy_racy_out(void *dst, const void *src, size_t n)
{ if (n) memcpy(dst, src, n); }
LFP_INLINE void lfp__copy_racy_in(void *dst, const void *src, size_t n)
{ if (n) memcpy(dst, src, n); }

#endif

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
