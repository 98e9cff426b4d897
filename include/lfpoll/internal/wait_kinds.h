/*
 * lfpoll internal: the table of wait object kinds.  Do not include
 * directly.
 *
 * Each kind is a struct lfp__wait_kind in a file of its own (signal.h says
 * what a kind provides).  A new kind is that file, its value in enum
 * lfp_wait_obj (common.h), and a line here; nothing else names it.
 */
#ifndef LFPOLL_INTERNAL_WAIT_KINDS_H
#define LFPOLL_INTERNAL_WAIT_KINDS_H

#include "signal.h"
#include "wait_fd.h"
#include "wait_mutex_cond.h"
#include "wait_yield.h"
#include "wait_pollfd.h"

#ifdef __cplusplus
extern "C" {
#endif

static const struct lfp__wait_kind *const lfp__wait_kinds[] = {
	&lfp__wait_fd, &lfp__wait_mutex_cond, &lfp__wait_yield, &lfp__wait_pollfd
};

/*
 * The kind UNSPEC resolves to: FD, because it also serves the
 * application's own poll/epoll loop through LFP_GETWAIT, and its blocking
 * round trip is within the noise of MUTEX_COND's on this class of machine
 * (see docs/performance.md).
 */
#define LFP__WAIT_KIND_UNSPEC (&lfp__wait_fd)

/* The kind of obj (UNSPEC resolved), or NULL: NONE, SET, or no kind. */
LFP_INLINE const struct lfp__wait_kind *lfp__wait_kind_of(enum lfp_wait_obj obj)
{
	size_t i;

	if (obj == LFP_WAIT_UNSPEC)
		return LFP__WAIT_KIND_UNSPEC;
	for (i = 0; i < sizeof(lfp__wait_kinds) / sizeof(lfp__wait_kinds[0]); i++)
		if (lfp__wait_kinds[i]->obj == obj)
			return lfp__wait_kinds[i];
	return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_WAIT_KINDS_H */
