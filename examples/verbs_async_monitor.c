/*
 * Watch an RDMA device's async events without blocking the caller: the
 * binding moves them into an lfpoll EQ (acking each right after the copy),
 * and this loop prints them with their element.
 *
 *   verbs_async_monitor [device] [seconds]
 *
 * With no RDMA device it says so and exits 0.
 */
#include <lfpoll/verbs.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Print everything the EQ holds: events, then errors. */
static void drain(struct lfp_eq *eq)
{
	struct lfp_verbs_async_entry e;
	struct lfp_eq_err_entry err;
	uint32_t code;
	ssize_t r;

	for (;;) {
		r = lfp_eq_read(eq, &code, &e, sizeof(e), 0);
		if (r == (ssize_t)sizeof(e) && code == LFP_VERBS_ASYNC) {
			print_entry("info", &e);
		} else if (r == -LFP_EAVAIL) {
			memset(&err, 0, sizeof(err));
			err.err_data = &e;
			err.err_data_size = sizeof(e);
			if (lfp_eq_readerr(eq, &err, 0) < 0)
				break;
			if (err.err == LFP_EOVERRUN) {
				printf("the EQ overran\n");
				break;
			}
			print_entry("error", &e);
		} else {
			break;
		}
	}
}

int main(int argc, char **argv)
{
	struct lfp_eq_attr attr = { .size = 256, .wait_obj = LFP_WAIT_NONE,
	                            .entry_size = sizeof(struct lfp_verbs_async_entry) };
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct lfp_verbs_async *va;
	struct lfp_eq *eq;
	struct pollfd pfd;
	int n = 0, i, fd, seconds = argc > 2 ? atoi(argv[2]) : 10;

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
	if (lfp_eq_open(&attr, &eq, NULL) || lfp_verbs_async_open(ctx, eq, &va, NULL)) {
		fprintf(stderr, "cannot set up the async monitor\n");
		return 1;
	}
	lfp_control(&va->fid, LFP_GETWAIT, &fd);
	printf("watching %s for %d s\n", ibv_get_device_name(ctx->device), seconds);
	for (i = 0; i < seconds * 10; i++) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 100) > 0 && lfp_verbs_async_progress(va) == -ENODEV)
			break;
		drain(eq);
	}
	drain(eq);
	lfp_verbs_async_close(va);
	lfp_eq_close(eq);
	ibv_close_device(ctx);
	return 0;
}
