/*
 * Build-time probe for `make check-arm64` (tests/arm64.mk).
 *
 * Compiled with the same flags as the arm64 stress programs, it fails to
 * compile unless the build is aarch64 with Concurrency Kit's relaxed memory
 * model from tests/arm64/ck_md.h and lfpoll's ck_pr mapping (not the
 * __atomic one).  tests/arm64/check-dmb then disassembles the functions
 * below and fails unless
 *   - each lfp_arm64_probe_<fence>() contains a dmb: an acquire load, a
 *     release store, lfpoll's acquire and release fences, and ck_pr's own
 *     (non-strict) acquire fence, which is a compiler barrier only under
 *     the x86 ck_md.h (CK_MD_TSO);
 *   - each lfp_arm64_probe_rmw_<op>() has a dmb before its exclusive load
 *     and after its exclusive store: lfpoll's RMWs are full barriers, and
 *     ck_pr's aarch64 ldxr/stxr loops order nothing by themselves.
 */
#include <lfpoll/lfpoll.h>

#if !defined(__aarch64__)
#  error "not an aarch64 build"
#endif
#if !defined(LFP_TESTS_ARM64_CK_MD)
#  error "the system ck_md.h was used: tests/arm64 must come first on the include path"
#endif
#if defined(CK_MD_TSO) || defined(CK_MD_PSO)
#  error "CK_MD_TSO/CK_MD_PSO defined for aarch64: ck_pr fences would emit no dmb"
#endif
#if !defined(CK_MD_RMO)
#  error "CK_MD_RMO not defined for aarch64"
#endif
#if defined(LFP_ATOMIC_BUILTINS)
#  error "lfpoll maps to __atomic builtins here; the ck_pr mapping is not under test"
#endif

/* Not static, so that each survives as a symbol to disassemble. */
uint32_t lfp_arm64_probe_ld_acq(const uint32_t *p);
void lfp_arm64_probe_st_rel(uint32_t *p, uint32_t v);
void lfp_arm64_probe_fence_acq(void);
void lfp_arm64_probe_fence_rel(void);
void lfp_arm64_probe_ck_fence_acquire(void);
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

void lfp_arm64_probe_ck_fence_acquire(void)
{
	ck_pr_fence_acquire();
}

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
