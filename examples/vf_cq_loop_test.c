/*
 * A test of a verbs completion loop that needs no RDMA device, written the
 * way a user tests their own code with lfpoll's test kit (lfpoll_vf(3)):
 *
 *   cc vf_cq_loop_test.c $(pkg-config --cflags --libs lfpoll-verbs lfpoll-vf)
 *   ./a.out            # exit 0: passed
 *
 * The code under test is completion_loop(): it reads a verbs CQ through
 * lfpoll's binding and sleeps in poll() when the CQ is empty, following the
 * trywait rule of lfp_trywait(3). The test runs it on a device-free context
 * whose completion channel is a pipe: another thread pushes completions as
 * a device would, one read of the channel fails with EINTR, and at the end
 * the device goes away. The loop must see every completion once, and then
 * return an error instead of sleeping forever. The real libibverbs runs
 * underneath: ibv_create_cq, ibv_get_cq_event, ibv_ack_cq_events,
 * ibv_req_notify_cq and ibv_destroy_cq.
 */
#include <lfpoll/verbs.h>
#include <lfpoll/vf.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define TOTAL 1000
#define SLEEP_GUARD_MS 10000 /* a loop that sleeps through work fails, not hangs */

/*
 * The code under test: reads completions until want arrived, adding their
 * wr_ids to *sum. Returns the count, or a negative errno (-ENODEV, -EIO:
 * the device is gone; -ETIMEDOUT: slept through work).
 */
static int completion_loop(struct lfp_verbs_cq *vcq, int fd, int want, uint64_t *sum)
{
	struct lfp_fid *fid = &vcq->fid;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct ibv_wc wc[16];
	int got = 0, n, i;

	while (got < want) {
		n = lfp_verbs_cq_read(vcq, wc, 16);
		if (n > 0) {
			for (i = 0; i < n; i++)
				*sum += wc[i].wr_id;
			got += n;
			continue;
		}
		if (n != -EAGAIN)
			return n;
		/* Empty: announce the sleep, then sleep only on 0. */
		n = lfp_trywait(&fid, 1);
		if (n == -EAGAIN)
			continue;
		if (n < 0)
			return n;
		if (poll(&pfd, 1, SLEEP_GUARD_MS) == 0)
			return -ETIMEDOUT;
	}
	return got;
}

/* The "device": TOTAL completions, with pauses so the loop also sleeps. */
static void *device(void *arg)
{
	struct ibv_cq *cq = arg;
	struct timespec pause = { 0, 200000 };
	uint64_t i;

	for (i = 1; i <= TOTAL; i++) {
		if (vf_cq_push(cq, i, IBV_WC_SUCCESS, 0) != 0)
			return (void *)1;
		if (i % 50 == 0)
			nanosleep(&pause, NULL);
	}
	return NULL;
}

#define CHECK(cond, what)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "FAIL: %s\n", what);                \
			return 1;                                           \
		}                                                           \
	} while (0)

int main(void)
{
	struct lfp_verbs_cq_attr attr = { .wait_obj = LFP_WAIT_FD };
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct lfp_verbs_cq *vcq;
	struct ibv_cq *cq;
	const char *why;
	pthread_t t;
	uint64_t sum = 0;
	void *res;
	int fd, r;

	/* The kit fits this libibverbs, or nothing below means anything. */
	why = vf_priv_canary();
	CHECK(why == NULL, why);
	ctx = vf_ctx_create();
	CHECK(ctx != NULL, "vf_ctx_create");
	ch = vf_channel_create(ctx);
	CHECK(ch != NULL, "vf_channel_create");
	cq = ibv_create_cq(ctx, 4 * TOTAL, NULL, ch, 0);
	CHECK(cq != NULL, "ibv_create_cq on the device-free context");
	CHECK(lfp_verbs_cq_open(cq, ch, &attr, &vcq, NULL) == 0, "lfp_verbs_cq_open");
	CHECK(lfp_control(&vcq->fid, LFP_GETWAIT, &fd) == 0, "LFP_GETWAIT");

	/* A signal interrupts the next read of the channel, wherever it is. */
	CHECK(vf_inject_read(ch->fd, EINTR, 1) == 0, "vf_inject_read");
	CHECK(pthread_create(&t, NULL, device, cq) == 0, "pthread_create");
	r = completion_loop(vcq, fd, TOTAL, &sum);
	pthread_join(t, &res);
	CHECK(res == NULL, "vf_cq_push failed");
	CHECK(r == TOTAL, "the loop did not return every completion");
	CHECK(sum == (uint64_t)TOTAL * (TOTAL + 1) / 2, "a completion was lost or seen twice");
	/* libibverbs read the channel through the kit (its read() interposer). */
	CHECK(vf_fd_reads(ch->fd) > 0, "libibverbs' reads of the channel did not reach the kit");

	/* The device goes away: the loop must return, not sleep forever. */
	vf_ctx_device_gone(ctx, 0);
	r = completion_loop(vcq, fd, 1, &sum);
	CHECK(r == -EIO || r == -ENODEV, "the loop did not report the lost device");

	CHECK(lfp_verbs_cq_close(vcq) == 0, "lfp_verbs_cq_close");
	CHECK(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel");
	/* 0 only when every fake object is gone: the channel's close reached the kit. */
	CHECK(vf_ctx_destroy(ctx) == 0, "objects left alive at the end");
	printf("completion loop: %d completions, fault and device loss handled\n", TOTAL);
	return 0;
}
