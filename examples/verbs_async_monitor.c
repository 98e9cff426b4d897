/*
 * Watch an RDMA device's async events without blocking the caller: the
 * binding moves them into an lfpoll EQ (acking each right after the copy),
 * and this loop prints them with their element. It sleeps in poll() on the
 * async fd only after lfp_trywait() returned 0 (the rule of
 * lfp_trywait(3)), and it reports an overrun of its EQ, which loses
 * events, instead of going on as if none were missed.
 *
 *   verbs_async_monitor [device] [seconds]
 *
 * Exit status: 0 at the end of the time, 1 on an error or a lost device,
 * 2 when the EQ overran. With no RDMA device it says so and exits 0.
 */
#include <lfpoll/verbs.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MONITOR_EQ_SIZE 256
static void print_entry(const char *kind, const struct lfp_verbs_async_entry *e)
{
	printf("%-5s %-20s ", kind, lfp_verbs_event_str(e->type));
	switch (e->type) {
	case IBV_EVENT_CQ_ERR:
		printf("cq %p\n", (void *)e->element.cq);
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		printf("srq %p\n", (void *)e->element.srq);
		break;
	case IBV_EVENT_WQ_FATAL:
		printf("wq %p\n", (void *)e->element.wq);
		break;
	case IBV_EVENT_PORT_ACTIVE: case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE: case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE: case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		printf("port %d\n", e->element.port_num);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		printf("device\n");
		break;
	default:
		if ((unsigned)e->type <= IBV_EVENT_WQ_FATAL)
			printf("qp %p\n", (void *)e->element.qp);
		else
			printf("(type %d)\n", (int)e->type);
	}
}

/*
 * Print everything the EQ holds, in the order the device sent it (each
 * entry says its class in e.err). Returns 1 once the EQ has overrun (it
 * holds no more events: some were lost), else 0.
 */
static int drain(struct lfp_eq *eq)
{
	struct lfp_verbs_async_entry e;
	struct lfp_eq_err_entry err;
	uint32_t code;
	ssize_t r;

	for (;;) {
		r = lfp_eq_read(eq, &code, &e, sizeof(e), 0);
		if (r == (ssize_t)sizeof(e) && code == LFP_VERBS_ASYNC) {
			print_entry(e.err == ENODEV ? "fatal" : e.err ? "error" : "info", &e);
		} else if (r == -LFP_EAVAIL) {
			/* The binding writes no error entries: this is the
			 * overrun, which every readerr now reports. */
			memset(&err, 0, sizeof(err));
			if (lfp_eq_readerr(eq, &err, 0) < 0)
				return 0;
			return err.err == LFP_EOVERRUN;
		} else {
			/* -EAGAIN: empty; -LFP_EOVERRUN: overrun, nothing left. */
			return r == -LFP_EOVERRUN;
		}
	}
}

static long ms_until(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000L + (end->tv_nsec - now.tv_nsec) / 1000000L;
}

/*
 * Monitor ctx for the given time: progress moves the device's events into
 * the EQ, the EQ is drained, and only a trywait that returns 0 lets the
 * loop sleep. Returns the exit status described at the top.
 */
static int monitor(struct ibv_context *ctx, int seconds)
{
	struct lfp_eq_attr attr = { .size = MONITOR_EQ_SIZE, .wait_obj = LFP_WAIT_NONE,
	                            .entry_size = sizeof(struct lfp_verbs_async_entry) };
	struct lfp_verbs_async *va;
	struct lfp_fid *fid;
	struct lfp_eq *eq;
	struct pollfd pfd = { .events = POLLIN };
	struct timespec end;
	long left;
	int r, status = 0;

	if (lfp_eq_open(&attr, &eq, NULL))
		return 1;
	if (lfp_verbs_async_open(ctx, eq, &va, NULL) ||
	    lfp_control(&va->fid, LFP_GETWAIT, &pfd.fd)) {
		fprintf(stderr, "cannot set up the async monitor\n");
		lfp_eq_close(eq);
		return 1;
	}
	fid = &va->fid;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	for (;;) {
		r = lfp_verbs_async_progress(va);
		if (drain(eq) || r == -LFP_EOVERRUN) {
			printf("events lost: the EQ (%d entries) overran; stopping\n",
			       MONITOR_EQ_SIZE);
			status = 2;
			break;
		}
		if (r == -ENODEV) {
			printf("the device is gone\n");
			status = 1;
			break;
		}
		if (r < 0) {
			fprintf(stderr, "lfp_verbs_async_progress: %s\n", strerror(-r));
			status = 1;
			break;
		}
		left = ms_until(&end);
		if (left <= 0)
			break;
		/* Sleep only when nothing can be pending (lfp_trywait(3)). */
		r = lfp_trywait(&fid, 1);
		if (r == -EAGAIN)
			continue;
		if (r < 0) {
			fprintf(stderr, "lfp_trywait: %s\n", strerror(-r));
			status = 1;
			break;
		}
		poll(&pfd, 1, (int)left);
	}
	lfp_verbs_async_close(va);
	lfp_eq_close(eq);
	return status;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0, i, status, seconds = argc > 2 ? atoi(argv[2]) : 10;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		printf("no RDMA device found (%s): nothing to monitor\n",
		       errno ? strerror(errno) : "none listed");
		if (list)
			ibv_free_device_list(list);
		return 0;
	}
	for (i = 0; i < n && argc > 1; i++)
		if (strcmp(ibv_get_device_name(list[i]), argv[1]) == 0)
			break;
	if (i == n) {
		fprintf(stderr, "no device named %s\n", argv[1]);
		ibv_free_device_list(list);
		return 1;
	}
	ctx = ibv_open_device(list[argc > 1 ? i : 0]);
	ibv_free_device_list(list);
	if (!ctx) {
		perror("ibv_open_device");
		return 1;
	}
	printf("watching %s for %d s\n", ibv_get_device_name(ctx->device), seconds);
	status = monitor(ctx, seconds);
	ibv_close_device(ctx);
	return status;
}
