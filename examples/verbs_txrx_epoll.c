/*
 * A send CQ and a receive CQ that share one completion channel, each an
 * lfpoll object in FD mode, served from the application's own epoll loop
 * with the fi_poll(3) trywait rule:
 *
 *   loop: lfp_trywait({tx, rx}) == 0 ? epoll_wait(...) : 0; read the CQs.
 *
 * Each CQ's LFP_GETWAIT fd is its own (not the channel fd), so epoll says
 * which CQ to read, even when the other CQ's trywait read its event from
 * the shared channel.
 *
 *   verbs_txrx_epoll [seconds]
 *
 * With no RDMA device it says so and exits 0.
 */
#include <lfpoll/verbs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

enum { TX, RX };

int main(int argc, char **argv)
{
	static const char *const name[2] = { "send", "receive" };
	int seconds = argc > 1 ? atoi(argv[1]) : 2;
	struct lfp_verbs_cq_attr cattr = { .wait_obj = LFP_WAIT_FD };
	struct ibv_comp_channel *ch;
	struct lfp_verbs_cq *vcq[2];
	struct ibv_cq *cq[2];
	struct lfp_fid *fids[2];
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct epoll_event ev[2];
	struct ibv_wc wc[16];
	long total[2] = { 0, 0 };
	int n = 0, i, k, r, ep, fd, loops;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		printf("no RDMA device found (%s): nothing to serve\n",
		       errno ? strerror(errno) : "none listed");
		if (list)
			ibv_free_device_list(list);
		return 0;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx || !(ch = ibv_create_comp_channel(ctx))) {
		fprintf(stderr, "cannot open the device or a channel\n");
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < 2; i++) {
		/* Both CQs on the one channel. */
		cq[i] = ibv_create_cq(ctx, 64, NULL, ch, 0);
		if (!cq[i] || lfp_verbs_cq_open(cq[i], ch, &cattr, &vcq[i], NULL) ||
		    lfp_control(&vcq[i]->fid, LFP_GETWAIT, &fd)) {
			fprintf(stderr, "cannot create the %s CQ\n", name[i]);
			return 1;
		}
		fids[i] = &vcq[i]->fid;
		memset(&ev[0], 0, sizeof(ev[0]));
		ev[0].events = EPOLLIN;
		ev[0].data.u32 = (uint32_t)i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev[0])) {
			perror("epoll_ctl");
			return 1;
		}
	}
	for (loops = 0; loops < seconds * 10; loops++) {
		/* Sleep only when neither CQ has work; then read the CQs that
		 * epoll names.  Otherwise read both. */
		if (lfp_trywait(fids, 2) == 0) {
			n = epoll_wait(ep, ev, 2, 100);
			for (k = 0; k < n; k++) {
				i = (int)ev[k].data.u32;
				while ((r = lfp_verbs_cq_read(vcq[i], wc, 16)) > 0)
					total[i] += r;
			}
			continue;
		}
		for (i = 0; i < 2; i++)
			while ((r = lfp_verbs_cq_read(vcq[i], wc, 16)) > 0)
				total[i] += r;
	}
	printf("one channel, two CQs: %ld send and %ld receive completions\n",
	       total[TX], total[RX]);
	/* Any order: each close acks the events read for its CQ, whichever
	 * CQ read them, so ibv_destroy_cq does not wait. */
	for (i = 0; i < 2; i++) {
		lfp_verbs_cq_close(vcq[i]);
		ibv_destroy_cq(cq[i]);
	}
	close(ep);
	ibv_destroy_comp_channel(ch);
	ibv_close_device(ctx);
	return 0;
}
