/*
 * The layout a compiled binding relies on, pinned to LFP_ABI_VERSION.
 *
 * A binding library (bindings/verbs, bindings/libfabric) is built once
 * with lfpoll's headers; programs that link it may be built with other
 * ones.  Objects carry the LFP_ABI_VERSION of the headers that built them
 * and the binding refuses others (lfp_binding_check).  The binding's
 * source names none of the private structs below (binding.h hands it
 * handles), but the inline calls it is built with read them.  So the
 * version must move every time a layout that code touches moves: this
 * file fails to compile when a size or an offset below changes and
 * LFP_ABI_VERSION did not.  Then bump LFP_ABI_VERSION in common.h and
 * record the new figures here under it.
 *
 * The figures are for x86-64 with glibc (pthread_mutex_t is 40 bytes);
 * elsewhere only the version is checked.  tests/compile.mk builds it.
 */
#include <lfpoll/binding.h>

#define LAYOUT(expr) _Static_assert(expr, "layout changed: bump LFP_ABI_VERSION " \
                                          "(common.h) and update tests/compile/abi_layout.c")

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(LFP_ATOMIC_BUILTINS)
/* Version 9: on 32-bit targets struct lfp_ring and struct lfp_pollfds are
 * 8-aligned, and so are the objects that hold them (no x86-64 size or
 * offset moved).  Version 8: on 32-bit targets the signal's stat_signals
 * is 8-aligned (no x86-64 offset moved).  Version 7: the fid holds asym (in what was its tail padding: no size
 * or offset moved), and objects with it set rely on lfp_poll_add's
 * process-wide barrier, which calls built with version 6 do not make.
 * (Version 6: the index ring's sides keep the record of the last run of one
 * metadata word (len_change, last_meta; the consumer's change_seen), and
 * the LFP_DEBUG busy flags moved after them.  Version 5: a signal names
 * its wait object kind by a pointer to the kind's table (struct
 * lfp__wait_kind), and every lfpoll object's fid ops begin a struct
 * lfp__class, through which a wait set hands a joining member its core; a
 * binding's member is a handle lfpoll allocates, no longer a struct the
 * binding embeds.  Version 4: the ring's slot words say "free" with 0, and
 * the ring has modes.) */
#  if LFP_ABI_VERSION == 9
LAYOUT(sizeof(struct lfp_fid) == 32);
LAYOUT(offsetof(struct lfp_fid, asym) == 28);
LAYOUT(offsetof(struct lfp_fid, context) == 8);
LAYOUT(offsetof(struct lfp_fid, ops) == 16);
LAYOUT(offsetof(struct lfp_fid, abi) == 24);
LAYOUT(sizeof(struct lfp_fid_ops) == 48);
LAYOUT(sizeof(struct lfp_eq) == 1224);
LAYOUT(offsetof(struct lfp_eq, entry_size) == 944);
LAYOUT(offsetof(struct lfp_eq, prov_strerror) == 952);
LAYOUT(offsetof(struct lfp_eq, bind_refs) == 964);
LAYOUT(sizeof(struct lfp_wait) == 536);
LAYOUT(offsetof(struct lfp_wait, sig) == 32);
LAYOUT(offsetof(struct lfp_wait, core) == 288);
LAYOUT(offsetof(struct lfp_wait, w) == 368);
LAYOUT(offsetof(struct lfp_wait, nfds) == 440);
LAYOUT(sizeof(struct lfp__class) == 96);
LAYOUT(offsetof(struct lfp__class, waitable) == 56);
LAYOUT(sizeof(struct lfp__waitable) == 64);
LAYOUT(offsetof(struct lfp__waitable, core) == 8);
LAYOUT(sizeof(struct lfp__set_core) == 80);
LAYOUT(sizeof(struct lfp__signal) == 256);
LAYOUT(offsetof(struct lfp__signal, kind) == 128);
LAYOUT(sizeof(struct lfp__wait_kind) == 64);
LAYOUT(offsetof(struct lfp__wait_kind, wake) == 32);
LAYOUT(sizeof(struct lfp__wait_member) == 32);
LAYOUT(sizeof(struct lfp_poll_link) == 40);
LAYOUT(offsetof(struct lfp_poll_link, stack) == 0);
LAYOUT(offsetof(struct lfp_poll_link, queued) == 32);
LAYOUT(offsetof(struct lfp_poll_link, sticky) == 36);
LAYOUT(sizeof(struct lfp_binding_member) == 72);
LAYOUT(sizeof(struct lfp_poll) == 224);
LAYOUT(offsetof(struct lfp_poll, ready) == 32);
LAYOUT(sizeof(struct lfp_ring) == 384);
LAYOUT(offsetof(struct lfp_ring, words) == 8);
LAYOUT(offsetof(struct lfp_ring, data) == 16);
LAYOUT(offsetof(struct lfp_ring, mode) == 60);
LAYOUT(offsetof(struct lfp_ring, head) == 128);
LAYOUT(offsetof(struct lfp_ring, len_change) == 144);
LAYOUT(offsetof(struct lfp_ring, last_meta) == 152);
LAYOUT(offsetof(struct lfp_ring, prod_busy) == 156);
LAYOUT(offsetof(struct lfp_ring, tail) == 256);
LAYOUT(offsetof(struct lfp_ring, change_seen) == 272);
LAYOUT(offsetof(struct lfp_ring, cons_busy) == 280);
LAYOUT(offsetof(struct lfp_eq, events) == 32);
#  else
#    error "LFP_ABI_VERSION moved: record this version's layout above"
#  endif
#endif

int lfp_abi_layout_checked = LFP_ABI_VERSION;
