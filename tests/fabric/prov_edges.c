/*
 * tests/fabric/prov_edges.c: the provider's edges that fabtests and fabdiff
 * do not reach, through libfabric's API only (make check-fabric runs it on
 * the provider it builds, under ASan+UBSan with SANITIZE=address).
 *
 *  1. A fabric opened for an API before 1.5 passes fi_cq_readerr the CQ
 *     struct of that API, which ends before err_data_size: the provider
 *     must write nothing past it (it wrote err_data_size there) and give
 *     its own copy of the error data (fi_cq(3)).  The EQ's struct has had
 *     err_data_size since 1.0: fi_eq_readerr fills it, with the provider's
 *     copy of the data.
 *  2. EQ and CQ open flags: the ones fi_eq(3) and fi_cq(3) define are
 *     taken, any other bit is refused.  lfpoll's own open flags sit among
 *     those bits; taken through fi_eq_open or fi_cq_open, they made a
 *     queue single-producer or single-consumer, and two threads' writes
 *     or reads then hung.
 *  3. A CQ's wait_cond is ignored with FI_WAIT_NONE (fi_cq(3)); the
 *     provider passed it on, and lfpoll refused one it does not know.
 *
 * Exits 0 when every check holds, 1 with a line per failed check.
 */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <lfpoll/fi_lfpoll.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed;

#define EXPECT(cond, ...)                                                       \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("prov_edges: %s:%d: ", __FILE__, __LINE__);     \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			failed = 1;                                             \
		}                                                               \
	} while (0)

#define MUST(x)                                                                 \
	do {                                                                    \
		int must_ret_ = (int)(x);                                       \
		if (must_ret_ < 0) {                                            \
			printf("prov_edges: %s: %s\n", #x,                     \
			       fi_strerror(-must_ret_));                        \
			exit(1);                                                \
		}                                                               \
	} while (0)

struct world {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct lfp_fi_producer_ops *prod;
};

static void world_open(struct world *w, uint32_t api)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		exit(1);
	hints->fabric_attr->prov_name = strdup("lfpoll");
	MUST(fi_getinfo(api, NULL, NULL, 0, hints, &w->info));
	fi_freeinfo(hints);
	MUST(fi_fabric(w->info->fabric_attr, &w->fabric, NULL));
	MUST(fi_domain(w->fabric, w->info, &w->domain, NULL));
	MUST(fi_open_ops(&w->domain->fid, LFP_FI_PRODUCER_OPS, 0,
	                 (void **)&w->prod, NULL));
}

static void world_close(struct world *w)
{
	MUST(fi_close(&w->domain->fid));
	MUST(fi_close(&w->fabric->fid));
	fi_freeinfo(w->info);
}

/* ------------------------------------------------------------ 1 */

#define GUARD 0xab
static const char edata[] = "ERRDATA";

/*
 * A caller's error entry: the struct of its API, `used` bytes, then GUARD
 * bytes to the end of the buffer, which the provider must leave alone.
 */
union err_buf {
	struct fi_cq_err_entry cq;
	struct fi_eq_err_entry eq;
	unsigned char b[sizeof(struct fi_cq_err_entry) +
	                sizeof(struct fi_eq_err_entry) + 16];
};

static void err_buf_init(union err_buf *u, size_t used)
{
	memset(u->b, GUARD, sizeof(u->b));
	memset(u->b, 0, used);
}

/* After an old-API readerr by `call` into u: nothing written past `used`,
 * and err_data the provider's copy of the data. */
static void expect_old_api_err(const char *call, const union err_buf *u,
                               size_t used, const void *err_data)
{
	size_t i;

	for (i = used; i < sizeof(u->b) && u->b[i] == GUARD; i++)
		;
	EXPECT(i == sizeof(u->b), "API 1.4: %s wrote past the caller's struct "
	       "of %zu bytes", call, used);
	EXPECT(err_data && memcmp(err_data, edata, sizeof(edata)) == 0,
	       "API 1.4: %s: no provider copy of the error data", call);
}

static void old_api_cq_readerr(struct world *w)
{
	/* The struct of an API before 1.5 ends where err_data_size begins. */
	const size_t old = offsetof(struct fi_cq_err_entry, err_data_size);
	struct fi_cq_attr a = { .size = 8, .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_cq_err_entry werr;
	union err_buf u;
	struct fid_cq *cq;
	ssize_t r;

	MUST(fi_cq_open(w->domain, &a, &cq, NULL));
	memset(&werr, 0, sizeof(werr));
	werr.op_context = (void *)&werr;
	werr.err = FI_EIO;
	werr.err_data = (void *)edata;
	werr.err_data_size = sizeof(edata);
	MUST(w->prod->cq_writeerr(cq, &werr));
	err_buf_init(&u, old);
	r = fi_cq_readerr(cq, &u.cq, 0);
	EXPECT(r == 1, "API 1.4: fi_cq_readerr returned %zd", r);
	EXPECT(u.cq.err == FI_EIO && u.cq.op_context == (void *)&werr,
	       "API 1.4: fi_cq_readerr: err %d", u.cq.err);
	expect_old_api_err("fi_cq_readerr", &u, old, u.cq.err_data);
	MUST(fi_close(&cq->fid));
}

static void old_api_eq_readerr(struct world *w)
{
	const size_t old = sizeof(struct fi_eq_err_entry); /* the same in 1.0 */
	struct fi_eq_attr a = { .size = 8 };
	struct fi_eq_err_entry werr;
	union err_buf u;
	struct fid_eq *eq;
	ssize_t r;

	MUST(fi_eq_open(w->fabric, &a, &eq, NULL));
	memset(&werr, 0, sizeof(werr));
	werr.fid = &eq->fid;
	werr.err = FI_EIO;
	werr.err_data = (void *)edata;
	werr.err_data_size = sizeof(edata);
	r = w->prod->eq_write_err(eq, &werr);
	EXPECT(r == (ssize_t)sizeof(werr), "eq_write_err returned %zd", r);
	err_buf_init(&u, old);
	r = fi_eq_readerr(eq, &u.eq, 0);
	EXPECT(r == (ssize_t)sizeof(struct fi_eq_err_entry),
	       "API 1.4: fi_eq_readerr returned %zd", r);
	EXPECT(u.eq.err == FI_EIO, "API 1.4: fi_eq_readerr: err %d", u.eq.err);
	expect_old_api_err("fi_eq_readerr", &u, old, u.eq.err_data);
	EXPECT(u.eq.err_data_size == sizeof(edata), "API 1.4: fi_eq_readerr: "
	       "err_data_size %zu, not the %zu bytes of the data",
	       u.eq.err_data_size, sizeof(edata));
	MUST(fi_close(&eq->fid));
}

/* ------------------------------------------------------------ 2 */

/* Bits no EQ or CQ flag of fi_eq(3) or fi_cq(3) uses: lfpoll's own open
 * flags among them (bits 58 to 60), and one endpoint-bind flag
 * (FI_SELECTIVE_COMPLETION, bit 59) as a common slip. */
static const uint64_t foreign[] = {
	1ULL << 58, 1ULL << 59, 1ULL << 60, FI_SELECTIVE_COMPLETION, 1ULL << 40,
};

static void open_flags(struct world *w)
{
	size_t i;
	int ret;

	for (i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		struct fi_eq_attr ea = { .size = 8, .flags = FI_WRITE | foreign[i] };
		struct fi_cq_attr ca = { .size = 8, .format = FI_CQ_FORMAT_CONTEXT,
		                         .flags = foreign[i] };
		struct fid_eq *eq = NULL;
		struct fid_cq *cq = NULL;

		ret = fi_eq_open(w->fabric, &ea, &eq, NULL);
		EXPECT(ret == -FI_EINVAL, "fi_eq_open with flag bits %#llx returned "
		       "%d, not -FI_EINVAL", (unsigned long long)foreign[i], ret);
		if (!ret)
			MUST(fi_close(&eq->fid));
		ret = fi_cq_open(w->domain, &ca, &cq, NULL);
		EXPECT(ret == -FI_EINVAL, "fi_cq_open with flag bits %#llx returned "
		       "%d, not -FI_EINVAL", (unsigned long long)foreign[i], ret);
		if (!ret)
			MUST(fi_close(&cq->fid));
	}
	{
		struct fi_eq_attr ea = { .size = 8, .flags = FI_WRITE | FI_AFFINITY };
		struct fi_cq_attr ca = { .size = 8, .format = FI_CQ_FORMAT_CONTEXT,
		                         .flags = FI_AFFINITY };
		struct fid_eq *eq;
		struct fid_cq *cq;

		ret = fi_eq_open(w->fabric, &ea, &eq, NULL);
		EXPECT(ret == 0, "fi_eq_open with FI_WRITE | FI_AFFINITY: %d", ret);
		if (!ret)
			MUST(fi_close(&eq->fid));
		ret = fi_cq_open(w->domain, &ca, &cq, NULL);
		EXPECT(ret == 0, "fi_cq_open with FI_AFFINITY: %d", ret);
		if (!ret)
			MUST(fi_close(&cq->fid));
	}
}

/* ------------------------------------------------------------ 3 */

/* fi_cq(3): wait_cond "is ignored if wait_obj is set to FI_WAIT_NONE";
 * with a wait object, a condition fi_cq(3) does not define is refused. */
static void wait_cond_ignored(struct world *w)
{
	struct fi_cq_attr ca = { .size = 8, .format = FI_CQ_FORMAT_CONTEXT,
	                         .wait_obj = FI_WAIT_NONE,
	                         .wait_cond = (enum fi_cq_wait_cond)77 };
	struct fid_cq *cq = NULL;
	int ret;

	ret = fi_cq_open(w->domain, &ca, &cq, NULL);
	EXPECT(ret == 0, "fi_cq_open with FI_WAIT_NONE and wait_cond 77 returned "
	       "%d: the condition is to be ignored", ret);
	if (!ret)
		MUST(fi_close(&cq->fid));
	ca.wait_obj = FI_WAIT_UNSPEC;
	ret = fi_cq_open(w->domain, &ca, &cq, NULL);
	EXPECT(ret == -FI_EINVAL, "fi_cq_open with a wait object and wait_cond 77 "
	       "returned %d, not -FI_EINVAL", ret);
	if (!ret)
		MUST(fi_close(&cq->fid));
}

int main(void)
{
	struct world w;

	alarm(60); /* a hang fails the program */
	world_open(&w, FI_VERSION(1, 4));
	old_api_cq_readerr(&w);
	old_api_eq_readerr(&w);
	world_close(&w);
	world_open(&w, FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION));
	open_flags(&w);
	wait_cond_ignored(&w);
	world_close(&w);
	printf("prov_edges: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
