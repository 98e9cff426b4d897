/*
 * Build-time probe for the Arm builds: `make check-arm64` (tests/arm64.mk)
 * and the ARMv7 leg of `make check-ilp32` (tests/ilp32.mk).
 *
 * Compiled with the flags of the programs it guards, it fails to compile
 * unless the build is aarch64 with Concurrency Kit's relaxed memory model
 * from tests/arm64/ck_md.h and lfpoll's ck_pr mapping (not the __atomic
 * one), or ARMv7 with either mapping (ck_pr only with that ck_md.h).
 * tests/arm64/check-dmb then disassembles the functions below and fails
 * unless
 *   - each lfp_arm64_probe_<fence>() contains a dmb: an acquire load, a
 *     release store, lfpoll's acquire and release fences, and, in the
 *     ck_pr mapping, ck_pr's own (non-strict) acquire fence, which is a
 *     compiler barrier only under the x86 ck_md.h (CK_MD_TSO);
 *   - each lfp_arm64_probe_rmw_<op>() has a dmb before its exclusive load
 *     and after its exclusive store: lfpoll's RMWs are full barriers, and
 *     the exclusive-pair loops (ldxr/stxr, ldrex/strex) order nothing by
 *     themselves.
 *
 * With LFP_TESTS_PROBE_BARE it also holds a relaxed load and relaxed
 * CASes with a dmb on neither side, before only and after only: the
 * build in which check-dmb must fail, naming those four and nothing else,
 * so that each of its rules is shown to catch what it is for.
 */
#include <lfpoll/lfpoll.h>

#if defined(__aarch64__)
#  if defined(LFP_ATOMIC_BUILTINS)
#    error "lfpoll maps to __atomic builtins here; the ck_pr mapping is not under test"
#  endif
#elif defined(__arm__) && (defined(__ARM_ARCH_7A__) || defined(__ARM_ARCH_7__))
   /* ARMv7: both mappings are built and probed. */
#else
#  error "not an aarch64 or ARMv7 build"
#endif
#if !defined(LFP_ATOMIC_BUILTINS)
#  if !defined(LFP_TESTS_ARM64_CK_MD)
#    error "the system ck_md.h was used: tests/arm64/ck_md.h must come first"
#  endif
#  if defined(CK_MD_TSO) || defined(CK_MD_PSO)
#    error "CK_MD_TSO/CK_MD_PSO defined for Arm: ck_pr fences would emit no dmb"
#  endif
#  if !defined(CK_MD_RMO)
#    error "CK_MD_RMO not defined for Arm"
#  endif
#endif

/* Not static, so that each survives as a symbol to disassemble. */
uint32_t lfp_arm64_probe_ld_acq(const uint32_t *p);
void lfp_arm64_probe_st_rel(uint32_t *p, uint32_t v);
void lfp_arm64_probe_fence_acq(void);
void lfp_arm64_probe_fence_rel(void);
int lfp_arm64_probe_rmw_cas(uint32_t *p, uint32_t *expected, uint32_t v);
uint64_t lfp_arm64_probe_rmw_faa(uint64_t *p, uint64_t v);
void *lfp_arm64_probe_rmw_xchg(void **p, void *v);

uint32_t lfp_arm64_probe_ld_acq(const uint32_t *p)
{
	return lfp__ld_acq_u32(p);
}

void lfp_arm64_probe_st_rel(uint32_t *p, uint32_t v)
{
	lfp__st_rel_u32(p, v);
}

void lfp_arm64_probe_fence_acq(void)
{
	lfp__fence_acq();
}

void lfp_arm64_probe_fence_rel(void)
{
	lfp__fence_rel();
}

#if !defined(LFP_ATOMIC_BUILTINS)
void lfp_arm64_probe_ck_fence_acquire(void);

void lfp_arm64_probe_ck_fence_acquire(void)
{
	ck_pr_fence_acquire();
}
#endif

int lfp_arm64_probe_rmw_cas(uint32_t *p, uint32_t *expected, uint32_t v)
{
	return lfp__cas_u32(p, expected, v);
}

uint64_t lfp_arm64_probe_rmw_faa(uint64_t *p, uint64_t v)
{
	return lfp__faa_u64(p, v);
}

void *lfp_arm64_probe_rmw_xchg(void **p, void *v)
{
	return lfp__xchg_ptr(p, v);
}

#if defined(LFP_TESTS_PROBE_BARE)
uint32_t lfp_arm64_probe_bare_ld(const uint32_t *p);
int lfp_arm64_probe_rmw_bare_cas(uint32_t *p, uint32_t *expected, uint32_t v);
int lfp_arm64_probe_rmw_bare_cas_rel(uint32_t *p, uint32_t *expected,
                                     uint32_t v);
int lfp_arm64_probe_rmw_bare_cas_acq(uint32_t *p, uint32_t *expected,
                                     uint32_t v);

static inline int bare_cas(uint32_t *p, uint32_t *expected, uint32_t v)
{
#  if defined(LFP_ATOMIC_BUILTINS)
	return __atomic_compare_exchange_n(p, expected, v, 0, __ATOMIC_RELAXED,
	                                   __ATOMIC_RELAXED);
#  else
	return ck_pr_cas_32_value(p, *expected, v, expected);
#  endif
}

uint32_t lfp_arm64_probe_bare_ld(const uint32_t *p)
{
	return lfp__ld_rlx_u32(p);
}

/* No dmb at all. */
int lfp_arm64_probe_rmw_bare_cas(uint32_t *p, uint32_t *expected, uint32_t v)
{
	return bare_cas(p, expected, v);
}

/* A dmb before the exclusive pair only. */
int lfp_arm64_probe_rmw_bare_cas_rel(uint32_t *p, uint32_t *expected,
                                     uint32_t v)
{
	lfp__fence_rel();
	return bare_cas(p, expected, v);
}

/* A dmb after it only. */
int lfp_arm64_probe_rmw_bare_cas_acq(uint32_t *p, uint32_t *expected,
                                     uint32_t v)
{
	int ok = bare_cas(p, expected, v);

	lfp__fence_acq();
	return ok;
}
#endif
