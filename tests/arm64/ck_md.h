/*
 * Concurrency Kit's machine description for the Arm builds of lfpoll's
 * tests: `make check-arm64` (tests/arm64.mk) puts this directory ahead of
 * the system headers, so ck_pr.h includes this file instead of the
 * distribution's ck_md.h, and the ARMv7 leg of `make check-ilp32`
 * (tests/ilp32.mk) includes it first, whose guard then keeps the other out.
 *
 * Why it exists: the ck_md.h that Debian's libck-dev installs was generated
 * on x86-64 and defines CK_MD_TSO.  Under CK_MD_TSO ck_pr.h turns
 * ck_pr_fence_acquire, _release, _atomic_load and friends into compiler
 * barriers only, which is right for x86 and wrong for aarch64: a cross build
 * with that header would compile and pass while emitting no dmb for any of
 * lfpoll's acquire/release fences, and would prove nothing about the
 * weakly ordered target.  This file declares the relaxed memory model
 * (CK_MD_RMO), so every ck_pr fence becomes the dmb that
 * gcc/aarch64/ck_pr.h (gcc/arm/ck_pr.h on ARMv7) defines for it.
 *
 * It is for tests only and is not installed.
 */
#ifndef CK_MD_H
#define CK_MD_H

#if !defined(__aarch64__) && \
    !(defined(__arm__) && (defined(__ARM_ARCH_7A__) || defined(__ARM_ARCH_7__)))
#  error "tests/arm64/ck_md.h describes aarch64 and ARMv7 only: drop it for this target"
#endif

/* Defined before this header (by -D or an earlier ck_md.h), TSO would leave
 * the target without fences; refuse rather than build a meaningless test. */
#if defined(CK_MD_TSO) || defined(CK_MD_PSO)
#  error "Arm is weakly ordered: CK_MD_TSO/CK_MD_PSO must not be defined"
#endif

/* Lets tests/arm64/probe.c tell this header from the system one. */
#define LFP_TESTS_ARM64_CK_MD 1

/* Relaxed memory order: every ck_pr fence emits a barrier instruction. */
#ifndef CK_MD_RMO
#define CK_MD_RMO
#endif

/* The common Arm L1 line; lfpoll pads with its own LFP_CACHELINE. */
#ifndef CK_MD_CACHELINE
#define CK_MD_CACHELINE (64)
#endif

/* 4 KiB base pages (kernels with 16 or 64 KiB pages exist; lfpoll does not
 * use this value). */
#ifndef CK_MD_PAGESIZE
#define CK_MD_PAGESIZE (4096)
#endif

/*
 * Base ARMv8.0 LL/SC sequences (ldxr/stxr), not the ARMv8.1 LSE atomics:
 * the cross compiler's default -march is armv8-a, which cannot assemble the
 * LSE instructions, and LL/SC runs on every aarch64 core and under qemu.
 * (ARMv7 has only its ldrex/strex sequences; the macro changes nothing
 * there.)
 */
#ifndef CK_MD_LSE_DISABLE
#define CK_MD_LSE_DISABLE
#endif

/* x86-only features. */
#ifndef CK_MD_RTM_DISABLE
#define CK_MD_RTM_DISABLE
#endif
#ifndef CK_MD_SSE_DISABLE
#define CK_MD_SSE_DISABLE
#endif

/*
 * No pointer packing: the virtual address width of aarch64 Linux depends on
 * the kernel configuration (39, 42, 47, 48 or 52 bits), so no fixed
 * CK_MD_VMA_BITS is given (and ARMv7's 32-bit addresses leave no bits to
 * pack).
 */
#ifndef CK_MD_POINTER_PACK_DISABLE
#define CK_MD_POINTER_PACK_DISABLE
#endif
#ifndef CK_MD_VMA_BITS_UNKNOWN
#define CK_MD_VMA_BITS_UNKNOWN
#endif

/* Only meaningful on 32-bit PowerPC; kept so every feature macro has a value. */
#ifndef CK_MD_PPC32_LWSYNC_DISABLE
#define CK_MD_PPC32_LWSYNC_DISABLE
#endif

#ifndef CK_PR_ENABLE_DOUBLE
#define CK_PR_ENABLE_DOUBLE
#endif

#define CK_VERSION "0.7.1"
#define CK_GIT_SHA ""

#endif /* CK_MD_H */
