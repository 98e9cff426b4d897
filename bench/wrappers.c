/*
 * bench/wrappers.c: the call sites bench/footprint.c measures.  Each
 * function is one line a user writes around one lfpoll call; compiled
 * alone with -O2 by gcc and by clang (bench/bench.mk), its size (nm -S) is
 * what including the headers costs at that call site, and its calls
 * (objdump -dr) show whether a system call or a pthread call was inlined
 * into it.  Not a program: the object files are only read.
 */
#include <lfpoll/lfpoll.h>

ssize_t cs_eq_write(struct lfp_eq *eq, const struct lfp_eq_entry *e);
ssize_t cs_eq_read(struct lfp_eq *eq, uint32_t *event, struct lfp_eq_entry *e);
ssize_t cs_eq_write_spsc(struct lfp_eq *eq, const struct lfp_eq_entry *e);
ssize_t cs_eq_read_spsc(struct lfp_eq *eq, uint32_t *event,
                        struct lfp_eq_entry *e);
ssize_t cs_cq_write1(struct lfp_cq *cq, const struct lfp_cq_entry *e);
ssize_t cs_cq_read32(struct lfp_cq *cq, struct lfp_cq_entry *buf);
ssize_t cs_cq_write1_spsc(struct lfp_cq *cq, const struct lfp_cq_entry *e);
ssize_t cs_cq_read1_spsc(struct lfp_cq *cq, struct lfp_cq_entry *buf);
int cs_ring_enqueue(struct lfp_ring *r, const void *e);
ssize_t cs_ring_dequeue(struct lfp_ring *r, void *e);

ssize_t cs_eq_write(struct lfp_eq *eq, const struct lfp_eq_entry *e)
{
	return lfp_eq_write(eq, LFP_NOTIFY, e, sizeof(*e), 0);
}

ssize_t cs_eq_read(struct lfp_eq *eq, uint32_t *event, struct lfp_eq_entry *e)
{
	return lfp_eq_read(eq, event, e, sizeof(*e), 0);
}

ssize_t cs_eq_write_spsc(struct lfp_eq *eq, const struct lfp_eq_entry *e)
{
	return lfp_eq_write_spsc(eq, LFP_NOTIFY, e, sizeof(*e), 0);
}

ssize_t cs_eq_read_spsc(struct lfp_eq *eq, uint32_t *event,
                        struct lfp_eq_entry *e)
{
	return lfp_eq_read_spsc(eq, event, e, sizeof(*e), 0);
}

ssize_t cs_cq_write1(struct lfp_cq *cq, const struct lfp_cq_entry *e)
{
	return lfp_cq_write(cq, e, 1);
}

ssize_t cs_cq_read32(struct lfp_cq *cq, struct lfp_cq_entry *buf)
{
	return lfp_cq_read(cq, buf, 32);
}

ssize_t cs_cq_write1_spsc(struct lfp_cq *cq, const struct lfp_cq_entry *e)
{
	return lfp_cq_write_spsc(cq, e, 1);
}

ssize_t cs_cq_read1_spsc(struct lfp_cq *cq, struct lfp_cq_entry *buf)
{
	return lfp_cq_read_spsc(cq, buf, 1);
}

int cs_ring_enqueue(struct lfp_ring *r, const void *e)
{
	return lfp_ring_enqueue(r, e, 64);
}

ssize_t cs_ring_dequeue(struct lfp_ring *r, void *e)
{
	return lfp_ring_dequeue(r, e, 64);
}
