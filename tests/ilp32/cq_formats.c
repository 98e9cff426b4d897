/*
 * Every CQ format through every mode's calls, single entries and a burst:
 * each completion comes back whole with its address, and no read writes a
 * byte past the entries it returns.  A plain program, so that it also
 * builds where Criterion does not: make check runs it as built, and make
 * check-ilp32 as a 32-bit program, where the formats' sizes are multiples
 * of 4, not of 8.  Exits 1 at the first failure.
 */
#include <lfpoll/cq.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) (printf("cq_formats: FAIL: " __VA_ARGS__), putchar('\n'), \
                   exit(1))

static const enum lfp_cq_format fmts[] = {
	LFP_CQ_FORMAT_CONTEXT, LFP_CQ_FORMAT_MSG, LFP_CQ_FORMAT_DATA,
	LFP_CQ_FORMAT_TAGGED
};
static const size_t sizes[] = {
	sizeof(struct lfp_cq_entry), sizeof(struct lfp_cq_msg_entry),
	sizeof(struct lfp_cq_data_entry), sizeof(struct lfp_cq_tagged_entry)
};
static const uint64_t modes[] = {
	0, LFP_SINGLE_PRODUCER, LFP_SINGLE_CONSUMER,
	LFP_SINGLE_PRODUCER | LFP_SINGLE_CONSUMER
};

/* out[0..k*esz) must be in[0..k*esz), the rest of out untouched (0xa5). */
static void check(const unsigned char *in, const unsigned char *out,
                  size_t len, size_t k, size_t esz, const char *what)
{
	size_t i;

	if (memcmp(in, out, k * esz) != 0)
		FAIL("%s: a completion changed", what);
	for (i = k * esz; i < len; i++)
		if (out[i] != 0xa5)
			FAIL("%s: byte %zu past %zu entries of %zu bytes written",
			     what, i, k, esz);
}

int main(void)
{
	unsigned char in[4 * 64], out[4 * 64];
	lfp_addr_t src[3] = { 11, 22, 33 }, got[3];
	struct lfp_cq *cq;
	size_t m, f, i, spsc, esz;
	char what[96];
	ssize_t w, r;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 1);
	for (m = 0; m < 4; m++)
		for (f = 0; f < 4; f++)
			for (spsc = 0; spsc < 2; spsc++) {
				struct lfp_cq_attr a = { .size = 4, .flags = modes[m],
				                         .format = fmts[f] };

				esz = sizes[f];
				snprintf(what, sizeof(what), "mode %zu, format %zu "
				         "(%zu bytes)%s", m, f, esz,
				         spsc ? ", spsc calls" : "");
				if (lfp_cq_open(&a, &cq, NULL))
					FAIL("%s: lfp_cq_open", what);
				/* One: the calls' inline paths. */
				memset(out, 0xa5, sizeof(out));
				w = spsc ? lfp_cq_writefrom_spsc(cq, in, src, 1)
				         : lfp_cq_writefrom(cq, in, src, 1);
				r = spsc ? lfp_cq_readfrom_spsc(cq, out, 1, got)
				         : lfp_cq_readfrom(cq, out, 1, got);
				if (w != 1 || r != 1 || got[0] != src[0])
					FAIL("%s: single: write %zd, read %zd, address "
					     "%llu", what, w, r, (unsigned long long)got[0]);
				check(in, out, sizeof(out), 1, esz, what);
				/* Three, then a read of up to four: out of line. */
				memset(out, 0xa5, sizeof(out));
				w = spsc ? lfp_cq_writefrom_spsc(cq, in, src, 3)
				         : lfp_cq_writefrom(cq, in, src, 3);
				r = spsc ? lfp_cq_readfrom_spsc(cq, out, 4, got)
				         : lfp_cq_readfrom(cq, out, 4, got);
				if (w != 3 || r != 3)
					FAIL("%s: burst: write %zd, read %zd", what, w, r);
				for (i = 0; i < 3; i++)
					if (got[i] != src[i])
						FAIL("%s: burst: address %zu", what, i);
				check(in, out, sizeof(out), 3, esz, what);
				lfp_cq_close(cq);
			}
	printf("cq_formats: PASS 4 modes x 4 formats x 2 sets of calls, "
	       "%zu-byte pointers\n", sizeof(void *));
	return 0;
}
