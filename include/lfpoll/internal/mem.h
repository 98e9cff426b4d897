/*
 * lfpoll internal: slot memory that costs nothing until it is used.
 * Do not include directly.
 *
 * A queue's slots are zero when free for their first lap (ring_slot.h), so
 * memory the kernel hands out zeroed needs no initialising pass: mapped
 * anonymous pages stay unbacked until the queue's positions reach them,
 * and an idle queue holds no resident slot page.  Small blocks come from
 * the allocator and are cleared here.
 */
#ifndef LFPOLL_INTERNAL_MEM_H
#define LFPOLL_INTERNAL_MEM_H

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* MAP_ANONYMOUS is outside POSIX.1-2008, so a strict -std=c11 build with
 * _POSIX_C_SOURCE hides it; its Linux value is 0x20 on the architectures
 * named here.  Elsewhere such a build clears the memory itself. */
#if defined(MAP_ANONYMOUS)
#  define LFP__MAP_ANON MAP_ANONYMOUS
#elif defined(MAP_ANON)
#  define LFP__MAP_ANON MAP_ANON
#elif defined(__linux__) && (defined(__x86_64__) || defined(__i386__) || \
      defined(__aarch64__) || defined(__arm__) || defined(__riscv) || \
      defined(__powerpc__) || defined(__s390x__))
#  define LFP__MAP_ANON 0x20
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks from this size on are mapped (whole pages, lazily backed). */
#define LFP__LAZY_BYTES ((size_t)16384)

/* bytes of zeroed memory, 64-byte aligned; free with lfp__zfree(p, bytes). */
LFP_INLINE void *lfp__zalloc(size_t bytes)
{
	void *p;

#ifdef LFP__MAP_ANON
	if (bytes >= LFP__LAZY_BYTES) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | LFP__MAP_ANON, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
#endif
	if (posix_memalign(&p, 64, bytes))
		return NULL;
	memset(p, 0, bytes);
	return p;
}

LFP_INLINE void lfp__zfree(void *p, size_t bytes)
{
	if (!p)
		return;
#ifdef LFP__MAP_ANON
	if (bytes >= LFP__LAZY_BYTES) {
		munmap(p, bytes);
		return;
	}
#else
	(void)bytes;
#endif
	free(p);
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_MEM_H */
