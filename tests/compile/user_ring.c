/* The ring's calls used the way a user writes them, each result used only
 * after its call said it is there: the typed front end's bursts (whose
 * claim once left its first position unset when nothing was claimed) and
 * a peek whose ticket is consumed only after the peek returned a whole
 * entry.  tests/compile.mk builds it at -O2 and -O3 with -Werror under gcc
 * and clang: gcc once warned that each "may be used uninitialized". */
#include <lfpoll/ring.h>

struct job {
	int id;
	double weight;
};

LFP_RING_PROTOTYPE(job, struct job)

/* Not static: another unit could change it, so the compiler cannot know
 * that a peek's length is never -EINVAL. */
size_t entry_size = 8;

static int typed_bursts(void)
{
	struct lfp_ring *r;
	struct job in[4] = { { 1, 1.0 }, { 2, 2.0 }, { 3, 3.0 }, { 4, 4.0 } };
	struct job out[4];
	size_t n;

	if (lfp_ring_create(8, sizeof(struct job), &r))
		return 1;
	n = lfp_ring_enqueue_burst_job(r, in, 4);
	n = n == 4 ? lfp_ring_dequeue_burst_job(r, out, 4) : 0;
	lfp_ring_destroy(r);
	return n != 4 || out[3].id != 4;
}

/* Not static, as in a program where the ring comes from elsewhere. */
int take_one(struct lfp_ring *r, char *buf);

int take_one(struct lfp_ring *r, char *buf)
{
	uint64_t ticket;

	return lfp_ring_peek(r, buf, entry_size, &ticket) == (ssize_t)entry_size &&
	       lfp_ring_consume(r, ticket) == 0;
}

static int peek_then_consume(void)
{
	struct lfp_ring *r;
	char buf[8];
	int taken;

	if (lfp_ring_create(4, 8, &r))
		return 1;
	taken = lfp_ring_enqueue(r, "1234567", 8) ? -1 : take_one(r, buf);
	taken += take_one(r, buf); /* empty: no entry, and no consume */
	lfp_ring_destroy(r);
	return taken != 1 || buf[6] != '7';
}

int main(void)
{
	return typed_bursts() | peek_then_consume();
}
