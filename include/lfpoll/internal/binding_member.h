/*
 * lfpoll internal: what stands behind binding.h's struct
 * lfp_binding_member.  Do not include directly; bindings never see these
 * fields, only the handle.
 *
 * A binding's object has no struct lfp__class: its fid ops are the
 * binding's own.  What it needs to join sets (the parts an lfpoll object
 * keeps in its struct lfp__waitable and its struct lfp_poll_link) is
 * allocated apart, by lfp_binding_member_open, so no binding struct holds
 * lfpoll's private layout.
 */
#ifndef LFPOLL_INTERNAL_BINDING_MEMBER_H
#define LFPOLL_INTERNAL_BINDING_MEMBER_H

#include "wait_member.h"
#include "poll_link.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lfp_binding_member {
	struct lfp__wait_member wait; /* in a wait set's core */
	struct lfp_poll_link poll;    /* in a poll set; poll.fid is the object */
};

#ifdef __cplusplus
}
#endif

#endif /* LFPOLL_INTERNAL_BINDING_MEMBER_H */
