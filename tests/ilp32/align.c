/*
 * Where the 64-bit words that lfpoll accesses atomically lie, in objects
 * as they are opened.  On 32-bit x86 a uint64_t inside a struct is only
 * 4-byte aligned, and the layer's 64-bit atomics (one SSE or x87 move, or
 * cmpxchg8b: include/lfpoll/internal/atomic.h) are single accesses only
 * while the word does not cross a cache line; a locked cmpxchg8b across
 * two lines is a split lock, which some kernels answer with SIGBUS.  So
 * every such word of every object kind, and every slot word of a ring in
 * each mode and a spread of slot sizes, must lie within one 64-byte line.
 * On x86-64 the compiler aligns them and the check holds trivially; make
 * check-ilp32 runs it as a 32-bit program.  Exits 1 at the first word
 * that crosses a line, naming it.
 */
#include <lfpoll/lfpoll.h>

#include <stdio.h>
#include <stdlib.h>

static unsigned checked;

static void word_at(const void *p, const char *what)
{
	uintptr_t a = (uintptr_t)p;

	checked++;
	if (a % 4 != 0 || a % 64 + sizeof(uint64_t) > 64) {
		printf("align: FAIL: %s at %p (%u bytes into its line): a 64-bit "
		       "atomic word crosses a cache line\n", what, p,
		       (unsigned)(a % 64));
		exit(1);
	}
}

#define WORD(obj, field) word_at(&(obj)->field, #obj "->" #field)

static void ring_words(struct lfp_ring *r, const char *what)
{
	uint64_t pos;

	word_at(&r->head, what);
	word_at(&r->tail, what);
	word_at(&r->head_seen, what);
	word_at(&r->tail_seen, what);
	word_at(&r->len_change, what);
	word_at(&r->change_seen, what);
	if (r->words) /* per-slot: each slot's word */
		for (pos = 0; pos <= r->mask; pos++)
			word_at(r->words + pos * r->stride, what);
}

static void pollfds_words(struct lfp_pollfds *p, const char *what)
{
	word_at(&p->seq, what);
	word_at(&p->change_index, what);
	word_at(&p->nfds, what);
}

static void check_rings(void)
{
	static const uint64_t modes[] = {
		0, LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER,
		LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER
	};
	static const size_t sizes[] = { 1, 4, 7, 8, 12, 20, 28, 36, 48, 56, 60, 64,
	                                100, 128 };
	unsigned m, s;
	char what[64];

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			struct lfp_ring *r;
			int ret = lfp_ring_create_flags(16, sizes[s], modes[m], &r);

			if (ret) {
				printf("align: FAIL: lfp_ring_create_flags(16, %zu, "
				       "%llu) = %d\n", sizes[s],
				       (unsigned long long)modes[m], ret);
				exit(1);
			}
			snprintf(what, sizeof(what), "ring (mode %llu, slot %zu)",
			         (unsigned long long)modes[m], sizes[s]);
			ring_words(r, what);
			lfp_ring_destroy(r);
		}
}

/*
 * The complete types a caller may embed (lfp_ring(3), lfp_pollfds(3)),
 * where the caller's struct, not lfpoll, places them: after a 60-byte
 * member, say, which a 4-byte alignment left 60 bytes into a line.  Their
 * 8-byte alignment, with their 64-bit words at multiples of 8, keeps every
 * word in one line wherever they land.
 */
static struct { char tag[60]; struct lfp_ring r; } ring_after_60;
static struct { char tag[60]; struct lfp_pollfds p; } pollfds_after_60;

static void check_embedded(void)
{
	static const uint64_t modes[] = {
		0, LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER
	};
	static unsigned char mem[16 * 256] __attribute__((aligned(64)));
	struct lfp_pollfds *p = &pollfds_after_60.p;
	unsigned m;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		if (lfp_ring_memsize_flags(16, 64, modes[m]) > sizeof(mem) ||
		    lfp_ring_init_flags(&ring_after_60.r, mem, 16, 64, modes[m])) {
			printf("align: FAIL: lfp_ring_init_flags (mode %llu)\n",
			       (unsigned long long)modes[m]);
			exit(1);
		}
		ring_words(&ring_after_60.r, "a ring embedded after 60 bytes");
	}
	if (lfp_pollfds_init(p)) {
		printf("align: FAIL: lfp_pollfds_init\n");
		exit(1);
	}
	pollfds_words(p, "a pollfd set embedded after 60 bytes");
	lfp_pollfds_fini(p);
}

static void check_objects(void)
{
	static const enum lfp_cq_format fmts[] = {
		LFP_CQ_FORMAT_CONTEXT, LFP_CQ_FORMAT_MSG, LFP_CQ_FORMAT_DATA,
		LFP_CQ_FORMAT_TAGGED
	};
	struct lfp_wait_attr wa = { .wait_obj = LFP_WAIT_FD };
	struct lfp_cntr_attr ka = { .wait_obj = LFP_WAIT_FD };
	struct lfp_eq_attr ea = { .size = 16, .wait_obj = LFP_WAIT_FD };
	struct lfp_wait *ws;
	struct lfp_cntr *c;
	struct lfp_eq *eq;
	unsigned f;

	if (lfp_wait_open(&wa, &ws) || lfp_cntr_open(&ka, &c, NULL) ||
	    lfp_eq_open(&ea, &eq, NULL)) {
		printf("align: FAIL: an open failed\n");
		exit(1);
	}
	pollfds_words(&ws->pollfds, "ws->pollfds");
	WORD(ws, sig.stat_signals);
	WORD(c, value);
	WORD(c, err);
	WORD(c, events);
	WORD(c, trywait_seen);
	WORD(c, link.seen);
	WORD(c, w.member.seen);
	WORD(c, own.stat_signals);
	WORD(eq, w.member.seen);
	WORD(eq, own.stat_signals);
	ring_words(&eq->events, "eq->events");
	ring_words(&eq->errq.ring, "eq->errq.ring");
	for (f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
		struct lfp_cq_attr qa = { .size = 16, .format = fmts[f],
		                          .wait_obj = LFP_WAIT_FD };
		struct lfp_cq *cq;

		if (lfp_cq_open(&qa, &cq, NULL)) {
			printf("align: FAIL: lfp_cq_open (format %d)\n", (int)fmts[f]);
			exit(1);
		}
		WORD(cq, signals);
		WORD(cq, signals_seen);
		WORD(cq, link.seen);
		WORD(cq, w.member.seen);
		WORD(cq, own.stat_signals);
		ring_words(&cq->entries, "cq->entries");
		ring_words(&cq->errq.ring, "cq->errq.ring");
		lfp_cq_close(cq);
	}
	lfp_eq_close(eq);
	lfp_cntr_close(c);
	lfp_wait_close(ws);
}

int main(void)
{
	check_rings();
	check_embedded();
	check_objects();
	printf("align: %u 64-bit atomic words (%zu-bit build), none across a "
	       "cache line\n", checked, sizeof(void *) * 8);
	return 0;
}
