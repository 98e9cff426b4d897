/*
 * The size checks of rings, EQs and CQs at the edge of size_t.  Every
 * capacity and a spread of slot sizes, in every mode: a ring whose memory
 * cannot fit in a size_t must be refused (memsize 0, init -EINVAL, create
 * and the queue opens an error), and one that is accepted must be given
 * at least its payloads' bytes.  On a 64-bit build nothing reaches the
 * edge and the program checks the accepted side; make check-ilp32 runs it
 * as a 32-bit program, where capacities of 2^26 and more do.  (The check
 * once computed its bound with a subtraction that wrapped for capacities
 * of 2^29 and 2^30 there: every slot size passed, and the rings got 0 or
 * 2^31 bytes.)  Exits 1 at the first failure.
 */
#include <lfpoll/cq.h>
#include <lfpoll/eq.h>
#include <lfpoll/ring.h>

#include <stdio.h>
#include <stdlib.h>

#define FAIL(...) (printf("ring_limits: FAIL: " __VA_ARGS__), putchar('\n'), \
                   exit(1))

static const uint64_t modes[] = {
	0, LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER,
	LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER
};
static const size_t slots[] = {
	1, 7, 8, 9, 48, 55, 56, 57, 63, 64, 65, 120, 128, 1000, 4096,
	(size_t)1 << 20, (size_t)1 << 24, (size_t)INT32_MAX
};

int main(void)
{
	uint64_t align_mem[64];
	unsigned m, s, k, checked = 0, refused = 0;

	for (k = 1; k <= 30; k++) {
		size_t cap = (size_t)1 << k;

		for (s = 0; s < sizeof(slots) / sizeof(slots[0]); s++) {
			/* The payloads alone, computed where nothing wraps:
			 * cap <= 2^30 and slot < 2^31. */
			uint64_t payload = (uint64_t)cap * slots[s];
			int fits = payload <= (uint64_t)SIZE_MAX;

			for (m = 0; m < 4; m++) {
				size_t bytes = lfp_ring_memsize_flags(cap, slots[s], modes[m]);
				struct lfp_ring r, *rp = NULL;
				int ret;

				checked++;
				if (bytes != 0 && bytes < payload)
					FAIL("capacity 2^%u, slot %zu, mode %u: memsize %zu, "
					     "less than the payloads' %llu bytes", k, slots[s],
					     m, bytes, (unsigned long long)payload);
				if (fits)
					continue;
				refused++;
				if (bytes != 0)
					FAIL("capacity 2^%u, slot %zu, mode %u: memsize %zu for "
					     "a ring that cannot fit in a size_t", k, slots[s],
					     m, bytes);
				/* init must refuse before it touches mem. */
				ret = lfp_ring_init_flags(&r, align_mem, cap, slots[s], modes[m]);
				if (ret != -EINVAL)
					FAIL("capacity 2^%u, slot %zu, mode %u: init returned "
					     "%d, not -EINVAL", k, slots[s], m, ret);
				ret = lfp_ring_create_flags(cap, slots[s], modes[m], &rp);
				if (ret == 0)
					FAIL("capacity 2^%u, slot %zu, mode %u: create "
					     "accepted a ring that cannot fit", k, slots[s], m);
			}
			/* The queues whose entries are this ring's slots. */
			if (!fits && slots[s] >= 8 && slots[s] <= 4096) {
				struct lfp_eq_attr ea = { 0 };
				struct lfp_cq_attr ca = { 0 };
				struct lfp_eq *eq = NULL;
				struct lfp_cq *cq = NULL;

				for (m = 0; m < 4; m++) {
					ea.size = cap;
					ea.entry_size = slots[s];
					ea.flags = modes[m];
					ea.wait_obj = LFP_WAIT_NONE;
					if (lfp_eq_open(&ea, &eq, NULL) == 0)
						FAIL("EQ of 2^%u entries of %zu bytes, mode %u: "
						     "opened", k, slots[s], m);
					ca.size = cap;
					ca.flags = modes[m];
					ca.format = LFP_CQ_FORMAT_TAGGED;
					ca.wait_obj = LFP_WAIT_NONE;
					if ((uint64_t)cap * sizeof(struct lfp_cq_tagged_entry) >
					    (uint64_t)SIZE_MAX &&
					    lfp_cq_open(&ca, &cq, NULL) == 0)
						FAIL("CQ of 2^%u entries, mode %u: opened", k, m);
				}
			}
		}
	}
	printf("ring_limits: %u shapes checked, %u refused as too large for a "
	       "%zu-byte size_t\n", checked, refused, sizeof(size_t));
	return 0;
}
