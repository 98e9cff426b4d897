/*
 * The fi_poll(3) loop, ported to lfpoll (docs/porting-from-libfabric.md,
 * "A worked port").
 *
 * One wait set (FD) carries an EQ, a CQ and a counter; a poll set says
 * which of the CQ and the counter have work.  A producer thread plays the
 * provider: it writes TOTAL completions, each with the source address of
 * the "peer" it came from, counts each one on the counter, and finally
 * posts a "done" event on the EQ.  The main thread runs
 *
 *     lfp_trywait -> poll(2) on the set's fd -> lfp_poll -> drain
 *
 * until every completion, every count and the EQ event are accounted for,
 * then closes everything.  It exits 0 only if each completion was seen
 * exactly once, the counter reached TOTAL with no errors, and every close
 * succeeded.
 *
 *   cc -std=c11 -Iinclude $(pkg-config --cflags ck) \
 *       examples/port_fi_poll_loop.c -pthread
 */
#include <lfpoll/lfpoll.h>      /* first: it enables the POSIX calls */

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define TOTAL     20000
#define NPEERS    4
#define EV_DONE   (LFP_EVENT_USER + 1)

struct objects {
	struct lfp_eq *eq;
	struct lfp_cq *cq;
	struct lfp_cntr *cntr;
};

static char cq_tag[] = "cq", cntr_tag[] = "cntr";

/* The producer: what a provider does inside libfabric. */
static void *producer(void *arg)
{
	struct objects *o = arg;
	struct lfp_cq_data_entry comp = { 0 };
	lfp_addr_t src;
	uint64_t i;

	for (i = 0; i < TOTAL; i++) {
		comp.op_context = o;
		comp.len = 8;
		comp.data = i;
		src = i % NPEERS;               /* fi_addr_t of the sender */
		while (lfp_cq_writefrom(o->cq, &comp, &src, 1) == -EAGAIN)
			sched_yield();          /* CQ full: keep it, retry */
		lfp_cntr_inc(o->cntr, 1);       /* an event, not an add */
	}
	while (lfp_eq_write(o->eq, EV_DONE, NULL, 0, 0) == -EAGAIN)
		sched_yield();
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	static unsigned char seen[TOTAL];
	struct lfp_wait_attr wattr = { .wait_obj = LFP_WAIT_FD };
	struct lfp_eq_attr eattr = { .size = 16, .wait_obj = LFP_WAIT_SET };
	struct lfp_cq_attr cattr = { .size = 256,
	                             .format = LFP_CQ_FORMAT_DATA,
	                             .wait_obj = LFP_WAIT_SET };
	struct lfp_cntr_attr kattr = { .wait_obj = LFP_WAIT_SET };
	struct lfp_wait *ws = NULL;     /* "struct": lfp_wait() is a function */
	struct lfp_poll *ps = NULL;     /* likewise lfp_poll() */
	struct objects o = { NULL, NULL, NULL };
	struct lfp_cq_data_entry comp[32];
	lfp_addr_t src[32];
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	struct lfp_fid *fid;
	void *ctx[4];
	pthread_t t;
	size_t got = 0, dups = 0, bad = 0, sleeps = 0;
	uint64_t counted = 0;
	uint32_t event;
	char evbuf[16];
	int done = 0, failed = 0, started = 0, i, n, ret;
	double deadline;
	ssize_t r;

	/* Open: no fabric, no domain.  Members join the set at open. */
	if (lfp_wait_open(&wattr, &ws))
		return 1;
	eattr.wait_set = cattr.wait_set = kattr.wait_set = ws;
	if (lfp_eq_open(&eattr, &o.eq, NULL) ||
	    lfp_cq_open(&cattr, &o.cq, cq_tag) ||
	    lfp_cntr_open(&kattr, &o.cntr, cntr_tag) ||
	    lfp_poll_open(NULL, &ps) ||
	    lfp_poll_add(ps, &o.cq->fid, 0) ||
	    lfp_poll_add(ps, &o.cntr->fid, 0) ||
	    lfp_control(&ws->fid, LFP_GETWAIT, &pfd.fd)) {
		fprintf(stderr, "setup failed\n");
		failed = 1;
		goto out;
	}
	fid = &ws->fid;                 /* trywait the set, not its members */

	if (pthread_create(&t, NULL, producer, &o)) {
		failed = 1;
		goto out;
	}
	started = 1;

	deadline = now_ms() + 10000;    /* a hang is a failure, not a wait */
	while (!(done && got == TOTAL && counted == TOTAL)) {
		if (now_ms() > deadline) {
			fprintf(stderr, "stuck: %zu completions, %llu counted\n",
			        got, (unsigned long long)counted);
			failed = 1;
			break;
		}

		/* 1. Announce the sleep; sleep only if nothing is pending. */
		ret = lfp_trywait(&fid, 1);
		if (ret == 0) {
			sleeps++;
			if (poll(&pfd, 1, 1000) < 0 && errno != EINTR) {
				failed = 1;
				break;
			}
		} else if (ret != -EAGAIN) {
			fprintf(stderr, "trywait: %s\n", lfp_strerror(ret));
			failed = 1;
			break;
		}

		/* 2. Which CQs and counters have work? */
		n = lfp_poll(ps, ctx, 4);
		if (n < 0) {
			failed = 1;
			break;
		}

		/* 3. Drain them. */
		for (i = 0; i < n; i++) {
			if (ctx[i] == cq_tag) {
				while ((r = lfp_cq_readfrom(o.cq, comp, 32,
				                            src)) > 0) {
					ssize_t k;

					for (k = 0; k < r; k++) {
						uint64_t d = comp[k].data;

						if (d >= TOTAL || comp[k].op_context != &o ||
						    src[k] != d % NPEERS)
							bad++;
						else if (seen[d]++)
							dups++;
						else
							got++;
					}
				}
				if (r != -EAGAIN) {     /* -LFP_EAVAIL: none written */
					fprintf(stderr, "cq_read: %s\n",
					        lfp_strerror((int)r));
					failed = 1;
				}
			} else if (ctx[i] == cntr_tag) {
				counted = lfp_cntr_read(o.cntr);
			} else {
				bad++;
			}
		}

		/* The EQ is in the wait set but never in a poll set: read it
		 * every round, or trywait keeps answering -EAGAIN for it. */
		while ((r = lfp_eq_read(o.eq, &event, evbuf, sizeof(evbuf),
		                        0)) >= 0) {
			if (event == EV_DONE)
				done = 1;
			else
				bad++;
		}
		if (r != -EAGAIN) {
			fprintf(stderr, "eq_read: %s\n", lfp_strerror((int)r));
			failed = 1;
		}
		if (failed)
			break;
	}

out:
	if (started)
		pthread_join(t, NULL);
	if (!failed && (lfp_cntr_readerr(o.cntr) != 0 ||
	                lfp_cntr_read(o.cntr) != TOTAL))
		failed = 1;

	/* Close: leave the poll set first, members before their wait set. */
	if (ps && o.cq && lfp_poll_del(ps, &o.cq->fid, 0))
		failed = 1;
	if (ps && o.cntr && lfp_poll_del(ps, &o.cntr->fid, 0))
		failed = 1;
	if ((o.cq && lfp_cq_close(o.cq)) || (o.cntr && lfp_cntr_close(o.cntr)) ||
	    (o.eq && lfp_eq_close(o.eq)) || (ps && lfp_poll_close(ps)) ||
	    lfp_wait_close(ws))
		failed = 1;

	printf("%zu completions (%zu duplicate, %zu bad), counter %llu, "
	       "%zu sleeps\n", got, dups, bad, (unsigned long long)counted,
	       sleeps);
	return failed || got != TOTAL || dups || bad ? 1 : 0;
}
