/*
 * lfpoll's structs, enums and flags against libfabric's, checked when the
 * provider is compiled.  The provider passes entry buffers straight through
 * and copies error entries and wait objects whole, so a difference here
 * must stop the build, not corrupt a read.  docs/porting-from-libfabric.md
 * cites this file for "same fields in the same order".
 */
#include "prov.h"

/* As long long: the enums are of different types on purpose. */
#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " != " #b)

/* Field f at the same offset with the same size in both structs. */
#define SAME_FIELD(fs, ls, f)                                              \
	_Static_assert(offsetof(struct fs, f) == offsetof(struct ls, f) &&     \
	               sizeof(((struct fs *)0)->f) == sizeof(((struct ls *)0)->f), \
	               #fs "." #f " and " #ls "." #f " differ")

#define SAME_SIZE(fs, ls) \
	_Static_assert(sizeof(struct fs) == sizeof(struct ls), \
	               "sizeof " #fs " != sizeof " #ls)

/* Error numbers: libfabric's extra ones are lfpoll's; the rest are errno. */
SAME(FI_ETOOSMALL, LFP_ETOOSMALL);
SAME(FI_EAVAIL, LFP_EAVAIL);
SAME(FI_EOVERRUN, LFP_EOVERRUN);
SAME(FI_EAGAIN, EAGAIN);
SAME(FI_ETIMEDOUT, ETIMEDOUT);

/* Flags. */
SAME(FI_PEEK, LFP_PEEK);
SAME(FI_WRITE, LFP_WRITE);
SAME(FI_AFFINITY, LFP_AFFINITY);
SAME(FI_ADDR_NOTAVAIL, LFP_ADDR_NOTAVAIL);
SAME(sizeof(fi_addr_t), sizeof(lfp_addr_t));

/* Enums the provider casts across (the CQ formats it maps: cq.c). */
SAME(FI_WAIT_NONE, LFP_WAIT_NONE);
SAME(FI_WAIT_UNSPEC, LFP_WAIT_UNSPEC);
SAME(FI_WAIT_SET, LFP_WAIT_SET);
SAME(FI_WAIT_FD, LFP_WAIT_FD);
SAME(FI_WAIT_MUTEX_COND, LFP_WAIT_MUTEX_COND);
SAME(FI_WAIT_YIELD, LFP_WAIT_YIELD);
SAME(FI_WAIT_POLLFD, LFP_WAIT_POLLFD);
SAME(FI_CQ_COND_NONE, LFP_CQ_COND_NONE);
SAME(FI_CQ_COND_THRESHOLD, LFP_CQ_COND_THRESHOLD);
SAME(FI_CNTR_EVENTS_COMP, LFP_CNTR_EVENTS_COMP);
SAME(sizeof(enum fi_wait_obj), sizeof(enum lfp_wait_obj));

/* EQ entries. */
SAME_SIZE(fi_eq_entry, lfp_eq_entry);
SAME_FIELD(fi_eq_entry, lfp_eq_entry, fid);
SAME_FIELD(fi_eq_entry, lfp_eq_entry, context);
SAME_FIELD(fi_eq_entry, lfp_eq_entry, data);

SAME_SIZE(fi_eq_err_entry, lfp_eq_err_entry);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, fid);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, context);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, data);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, err);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, prov_errno);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, err_data);
SAME_FIELD(fi_eq_err_entry, lfp_eq_err_entry, err_data_size);

/* CQ entries, every format. */
SAME_SIZE(fi_cq_entry, lfp_cq_entry);
SAME_FIELD(fi_cq_entry, lfp_cq_entry, op_context);

SAME_SIZE(fi_cq_msg_entry, lfp_cq_msg_entry);
SAME_FIELD(fi_cq_msg_entry, lfp_cq_msg_entry, op_context);
SAME_FIELD(fi_cq_msg_entry, lfp_cq_msg_entry, flags);
SAME_FIELD(fi_cq_msg_entry, lfp_cq_msg_entry, len);

SAME_SIZE(fi_cq_data_entry, lfp_cq_data_entry);
SAME_FIELD(fi_cq_data_entry, lfp_cq_data_entry, op_context);
SAME_FIELD(fi_cq_data_entry, lfp_cq_data_entry, flags);
SAME_FIELD(fi_cq_data_entry, lfp_cq_data_entry, len);
SAME_FIELD(fi_cq_data_entry, lfp_cq_data_entry, buf);
SAME_FIELD(fi_cq_data_entry, lfp_cq_data_entry, data);

SAME_SIZE(fi_cq_tagged_entry, lfp_cq_tagged_entry);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, op_context);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, flags);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, len);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, buf);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, data);
SAME_FIELD(fi_cq_tagged_entry, lfp_cq_tagged_entry, tag);

SAME_SIZE(fi_cq_err_entry, lfp_cq_err_entry);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, op_context);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, flags);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, len);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, buf);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, data);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, tag);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, olen);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, err);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, prov_errno);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, err_data);
SAME_FIELD(fi_cq_err_entry, lfp_cq_err_entry, err_data_size);

/*
 * The attribute structs: libfabric's fields in libfabric's order (lfpoll's
 * EQ attribute adds entry_size after them).  The provider converts them
 * field by field anyway (the CQ format numbers differ); these show that a
 * ported initializer keeps its meaning.
 */
SAME_FIELD(fi_eq_attr, lfp_eq_attr, size);
SAME_FIELD(fi_eq_attr, lfp_eq_attr, flags);
SAME_FIELD(fi_eq_attr, lfp_eq_attr, wait_obj);
SAME_FIELD(fi_eq_attr, lfp_eq_attr, signaling_vector);
SAME_FIELD(fi_eq_attr, lfp_eq_attr, wait_set);
_Static_assert(offsetof(struct lfp_eq_attr, entry_size) >= sizeof(struct fi_eq_attr),
               "lfp_eq_attr.entry_size must come after libfabric's fields");

SAME_SIZE(fi_cq_attr, lfp_cq_attr);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, size);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, flags);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, format);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, wait_obj);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, signaling_vector);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, wait_cond);
SAME_FIELD(fi_cq_attr, lfp_cq_attr, wait_set);

SAME_SIZE(fi_cntr_attr, lfp_cntr_attr);
SAME_FIELD(fi_cntr_attr, lfp_cntr_attr, events);
SAME_FIELD(fi_cntr_attr, lfp_cntr_attr, wait_obj);
SAME_FIELD(fi_cntr_attr, lfp_cntr_attr, wait_set);
SAME_FIELD(fi_cntr_attr, lfp_cntr_attr, flags);

SAME_SIZE(fi_wait_attr, lfp_wait_attr);
SAME_FIELD(fi_wait_attr, lfp_wait_attr, wait_obj);
SAME_FIELD(fi_wait_attr, lfp_wait_attr, flags);

SAME_SIZE(fi_poll_attr, lfp_poll_attr);
SAME_FIELD(fi_poll_attr, lfp_poll_attr, flags);

/* What FI_GETWAIT hands back. */
SAME_SIZE(fi_mutex_cond, lfp_mutex_cond);
SAME_FIELD(fi_mutex_cond, lfp_mutex_cond, mutex);
SAME_FIELD(fi_mutex_cond, lfp_mutex_cond, cond);

SAME_SIZE(fi_wait_pollfd, lfp_wait_pollfd);
SAME_FIELD(fi_wait_pollfd, lfp_wait_pollfd, change_index);
SAME_FIELD(fi_wait_pollfd, lfp_wait_pollfd, nfds);
SAME_FIELD(fi_wait_pollfd, lfp_wait_pollfd, fd);
