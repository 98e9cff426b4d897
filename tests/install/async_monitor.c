/*
 * examples/verbs_async_monitor.c on the device-free context of the
 * installed test kit (tests/install/run builds it against the installed
 * tree, with -I of the examples folder). Its monitor() must:
 *
 *   1. report the events pushed while it sleeps, and end at once with
 *      status 1 when the device is lost (DEVICE_FATAL, then EIO), long
 *      before its time is up: it slept in poll() with the trywait rule and
 *      woke for them;
 *   2. report an overrun of its EQ (more events than MONITOR_EQ_SIZE at
 *      once) with status 2, instead of going on as if none were missed.
 *
 * Exit 0 when both hold; the example's own output goes to stdout.
 */
#include <lfpoll/vf.h>

#include <pthread.h>

#define main verbs_async_monitor_main
#include "verbs_async_monitor.c"
#undef main

/* The device: two port events and then its loss, while monitor() sleeps. */
static void *device(void *arg)
{
	struct ibv_context *ctx = arg;
	struct timespec pause = { 0, 200 * 1000000L };

	nanosleep(&pause, NULL);
	if (vf_async_push(ctx, IBV_EVENT_PORT_ACTIVE, 1) ||
	    vf_async_push(ctx, IBV_EVENT_LID_CHANGE, 1))
		return (void *)1;
	nanosleep(&pause, NULL);
	vf_ctx_device_gone(ctx, 1);
	return NULL;
}

static int check(int cond, const char *what)
{
	if (!cond)
		fprintf(stderr, "async_monitor: FAIL: %s\n", what);
	return cond ? 0 : 1;
}

int main(void)
{
	struct ibv_context *ctx;
	struct timespec end;
	pthread_t t;
	void *res;
	int i, status, fail = 0;
	const char *why = vf_priv_canary();

	if (why)
		return check(0, why);

	/* 1: woken by events and by the loss of the device. */
	ctx = vf_ctx_create();
	if (!ctx || pthread_create(&t, NULL, device, ctx))
		return check(0, "setup");
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 20;
	status = monitor(ctx, 30);
	pthread_join(t, &res);
	fail |= check(res == NULL, "vf_async_push");
	fail |= check(status == 1, "the lost device did not end the monitor with status 1");
	fail |= check(ms_until(&end) > 0, "the monitor slept through the events");
	fail |= check(vf_ctx_destroy(ctx) == 0, "objects left alive");

	/* 2: more events at once than the EQ holds. */
	ctx = vf_ctx_create();
	if (!ctx)
		return check(0, "setup");
	for (i = 0; i < MONITOR_EQ_SIZE + 16; i++)
		if (vf_async_push(ctx, IBV_EVENT_PORT_ACTIVE, 1))
			return check(0, "vf_async_push");
	status = monitor(ctx, 30);
	fail |= check(status == 2, "the monitor did not report the overrun of its EQ");
	fail |= check(vf_ctx_destroy(ctx) == 0, "objects left alive");
	return fail;
}
