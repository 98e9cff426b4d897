/*
 * Concurrency Kit's machine description for the ARMv7 (armhf) builds of
 * lfpoll's tests: the ARMv7 leg of `make check-ilp32` (tests/ilp32.mk)
 * puts this directory ahead of the system headers, so that ck_pr.h
 * includes this file and not the distribution's ck_md.h.
 *
 * The distribution's file describes x86-64 (CK_MD_TSO), under which
 * ck_pr's acquire and release fences are compiler barriers only: an ARMv7
 * build with it would emit no dmb for them and test nothing about a weakly
 * ordered target.  This one declares the relaxed model, so that each of
 * those fences is the dmb of gcc/arm/ck_pr.h (tests/arm64/ck_md.h does the
 * same for aarch64).  For tests only; not installed.
 */
#ifndef CK_MD_H
#define CK_MD_H

#if !defined(__arm__) || !(defined(__ARM_ARCH_7A__) || defined(__ARM_ARCH_7__))
#  error "tests/armv7/ck_md.h describes ARMv7 only: drop -Itests/armv7 for this target"
#endif

#if defined(CK_MD_TSO) || defined(CK_MD_PSO)
#  error "ARMv7 is weakly ordered: CK_MD_TSO/CK_MD_PSO must not be defined"
#endif

/* Lets the build tell this header from the system one. */
#define LFP_TESTS_ARMV7_CK_MD 1

/* Relaxed memory order: every ck_pr fence emits a barrier instruction. */
#ifndef CK_MD_RMO
#define CK_MD_RMO
#endif

/* The usual ARMv7 L1 line; lfpoll pads with its own LFP_CACHELINE. */
#ifndef CK_MD_CACHELINE
#define CK_MD_CACHELINE (64)
#endif

#ifndef CK_MD_PAGESIZE
#define CK_MD_PAGESIZE (4096)
#endif

/* Features of other targets, off. */
#ifndef CK_MD_LSE_DISABLE
#define CK_MD_LSE_DISABLE
#endif
#ifndef CK_MD_RTM_DISABLE
#define CK_MD_RTM_DISABLE
#endif
#ifndef CK_MD_SSE_DISABLE
#define CK_MD_SSE_DISABLE
#endif
#ifndef CK_MD_PPC32_LWSYNC_DISABLE
#define CK_MD_PPC32_LWSYNC_DISABLE
#endif

/* No pointer packing in a 32-bit address space. */
#ifndef CK_MD_POINTER_PACK_DISABLE
#define CK_MD_POINTER_PACK_DISABLE
#endif
#ifndef CK_MD_VMA_BITS_UNKNOWN
#define CK_MD_VMA_BITS_UNKNOWN
#endif

#define CK_VERSION "0.7.1"
#define CK_GIT_SHA ""

#endif /* CK_MD_H */
