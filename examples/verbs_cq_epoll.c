/*
 * Several verbs CQs served from the application's own epoll loop through a
 * wait set's single fd, with the fi_poll(3) trywait rule:
 *
 *   loop: lfp_trywait(set) == 0 ? epoll_wait(...) : 0; read every CQ.
 *
 *   verbs_cq_epoll [ncq] [seconds]
 *
 * With no RDMA device it says so and exits 0.
 */
#include <lfpoll/verbs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define MAXCQ 16

int main(int argc, char **argv)
{
	int ncq = argc > 1 ? atoi(argv[1]) : 4, seconds = argc > 2 ? atoi(argv[2]) : 2;
	struct lfp_wait_attr wattr = { .wait_obj = LFP_WAIT_FD };
	struct lfp_verbs_cq_attr cattr = { .wait_obj = LFP_WAIT_SET };
	struct ibv_comp_channel *ch;
	struct lfp_verbs_cq *vcq[MAXCQ];
	struct ibv_cq *cq[MAXCQ];
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct epoll_event ev;
	struct lfp_wait *ws = NULL;
	struct ibv_wc wc[16];
	long total = 0;
	int n = 0, i, r, ep, wfd, loops;

	if (ncq < 1 || ncq > MAXCQ)
		ncq = 4;
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
	if (!ctx || !(ch = ibv_create_comp_channel(ctx)) || lfp_wait_open(&wattr, &ws)) {
		fprintf(stderr, "cannot open the device, a channel or the wait set\n");
		return 1;
	}
	cattr.wait_set = ws;
	for (i = 0; i < ncq; i++) {
		cq[i] = ibv_create_cq(ctx, 64, NULL, ch, 0);
		if (!cq[i] || lfp_verbs_cq_open(cq[i], ch, &cattr, &vcq[i], cq[i])) {
			fprintf(stderr, "cannot create CQ %d\n", i);
			return 1;
		}
	}
	/* The set's one fd goes into our own epoll loop. */
	lfp_control(&ws->fid, LFP_GETWAIT, &wfd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	epoll_ctl(ep, EPOLL_CTL_ADD, wfd, &ev);
	for (loops = 0; loops < seconds * 10; loops++) {
		struct lfp_fid *f = &ws->fid;

		if (lfp_trywait(&f, 1) == 0)
			epoll_wait(ep, &ev, 1, 100);
		for (i = 0; i < ncq; i++)
			while ((r = lfp_verbs_cq_read(vcq[i], wc, 16)) > 0)
				total += r;
	}
	printf("%d CQs served through one fd: %ld completions\n", ncq, total);
	for (i = 0; i < ncq; i++) {
		lfp_verbs_cq_close(vcq[i]);
		ibv_destroy_cq(cq[i]);
	}
	lfp_wait_close(ws);
	close(ep);
	ibv_destroy_comp_channel(ch);
	ibv_close_device(ctx);
	return 0;
}
