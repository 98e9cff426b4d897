/*
 * Does the installed test kit (liblfpoll_vf) still interpose? Built by
 * tests/install/run against the installed tree, with the flags of
 * `pkg-config lfpoll-vf`, in both link orders; exit 0 when every call below
 * reached the kit, 1 naming the one that did not.
 *
 *   read()   libibverbs' ibv_get_cq_event reads the channel: a read fault
 *            the kit injects must make it fail;
 *   close()  libibverbs' ibv_destroy_comp_channel closes the channel: the
 *            kit must see it (the channel leaves its live count);
 *   ibv_get_device_list()
 *            called by the program, and looked up by name in the global
 *            scope as another library's call would resolve: both must
 *            reach the kit's failure switch.
 *
 * The same program linked with the kit built as a shared library after
 * -libverbs must fail (the real ibv_get_device_list wins): tests/install/run
 * builds that too, to show that this check can fail.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <lfpoll/vf.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

typedef struct ibv_device **(*devlist_fn)(int *);

static int fail(const char *what)
{
	printf("vf_interpose: %s\n", what);
	return 1;
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *ev_cq;
	devlist_fn lookup;
	void *ev_ctx, *sym;
	int live, n = -1;
	const char *why = vf_priv_canary();

	if (why)
		return fail(why);
	ctx = vf_ctx_create();
	ch = ctx ? vf_channel_create(ctx) : NULL;
	cq = ch ? vf_cq_create(ctx, ch, NULL, 4) : NULL;
	if (!cq)
		return fail("cannot build the device-free context");

	/* read(): one completion event, the first read of it fails. */
	if (ibv_req_notify_cq(cq, 0) || vf_cq_push(cq, 1, IBV_WC_SUCCESS, 0) ||
	    vf_inject_read(ch->fd, EIO, 1))
		return fail("cannot raise a completion event");
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0)
		return fail("read: libibverbs' read of the channel did not reach the kit");
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) != 0 || ev_cq != cq)
		return fail("read: the event was lost after the injected fault");
	ibv_ack_cq_events(cq, 1);
	if (vf_cq_destroy(cq, 1000))
		return fail("vf_cq_destroy");

	/* close(): libibverbs closes the channel's fd. */
	live = vf_live();
	if (ibv_destroy_comp_channel(ch))
		return fail("ibv_destroy_comp_channel");
	if (vf_live() != live - 1)
		return fail("close: libibverbs' close of the channel did not reach the kit");

	/* ibv_get_device_list(): direct, and resolved by name. */
	vf_device_list_fail(EPERM);
	errno = 0;
	if (ibv_get_device_list(&n) || errno != EPERM)
		return fail("ibv_get_device_list: the program's call did not reach the kit");
	sym = dlsym(RTLD_DEFAULT, "ibv_get_device_list");
	if (!sym)
		return fail("ibv_get_device_list: not found by name");
	lookup = (devlist_fn)sym;
	errno = 0;
	if (lookup(&n) || errno != EPERM)
		return fail("ibv_get_device_list: a lookup by name did not reach the kit");
	vf_device_list_fail(0);

	if (vf_ctx_destroy(ctx))
		return fail("vf_ctx_destroy: objects left alive");
	printf("vf_interpose: read, close and ibv_get_device_list reach the kit\n");
	return 0;
}
