/*
 * lfpoll pollfd set: single-threaded behaviour of pollfd.h.
 *
 * add/mod/del/get, the change_index rule (every effective add, del or mod
 * bumps it; a mod to the same events and every failed call do not), the
 * -LFP_ETOOSMALL protocol of fi_poll(3)'s struct fi_wait_pollfd, and growth
 * far beyond the initial capacity.  The set never touches the fds, so plain
 * numbers serve, except in the test that polls real pipes.  Snapshots taken
 * while another thread changes the set are checked in stress_sets.c.
 */
#include <lfpoll/pollfd.h>

#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "support.h"

static struct lfp_pollfds set;

static void setup(void)
{
	cr_assert_eq(lfp_pollfds_init(&set), 0);
}

static void teardown(void)
{
	lfp_pollfds_fini(&set);
}

/* The set's change_index through the cheap nfds = 0 query. */
static uint64_t change_index(void)
{
	struct lfp_wait_pollfd w = { 0, 0, NULL };
	int ret = lfp_pollfds_get(&set, &w);

	cr_assert(ret == 0 || ret == -LFP_ETOOSMALL, "get(nfds 0): %d", ret);
	return w.change_index;
}

/* A full snapshot; *n entries into fds (room cap). */
static uint64_t snapshot(struct pollfd *fds, size_t cap, size_t *n)
{
	struct lfp_wait_pollfd w;
	int ret;

	w.change_index = 0xdeadbeef;
	w.nfds = cap;
	w.fd = fds;
	ret = lfp_pollfds_get(&set, &w);
	cr_assert_eq(ret, 0, "get with room %zu: %d", cap, ret);
	*n = w.nfds;
	return w.change_index;
}

static const struct pollfd *find(const struct pollfd *fds, size_t n, int fd)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fds[i].fd == fd)
			return &fds[i];
	return NULL;
}

TestSuite(pollfd, .init = setup, .fini = teardown);

Test(pollfd, empty_set)
{
	struct pollfd fds[4];
	size_t n = 99;

	cr_assert_eq(change_index(), 0, "a new set is at change_index 0");
	snapshot(fds, 4, &n);
	cr_assert_eq(n, 0);
	{
		struct lfp_wait_pollfd w = { 7, 0, NULL };

		cr_assert_eq(lfp_pollfds_get(&set, &w), 0, "an empty set fits in 0");
		cr_assert_eq(w.nfds, 0);
		cr_assert_eq(w.change_index, 0);
	}
}

/* A set in raw memory at less than its type's alignment is refused. */
Test(pollfd, init_refuses_a_set_not_8_byte_aligned)
{
	static unsigned char raw[sizeof(struct lfp_pollfds) + 8]
		__attribute__((aligned(64)));
	struct lfp_pollfds *p;
	size_t off;

	cr_assert_geq(_Alignof(struct lfp_pollfds), 8);
	for (off = 1; off < 8; off++)
		cr_assert_eq(lfp_pollfds_init((struct lfp_pollfds *)(void *)(raw + off)),
		             -EINVAL, "set at 8k + %zu", off);
	p = (struct lfp_pollfds *)(void *)(raw + 8);
	cr_assert_eq(lfp_pollfds_init(p), 0);
	lfp_pollfds_fini(p);
}

Test(pollfd, add_mod_del_and_change_index)
{
	struct pollfd fds[8];
	const struct pollfd *p;
	uint64_t ci = change_index();
	size_t n;

	cr_assert_eq(lfp_pollfds_add(&set, 3, POLLIN, NULL), 0);
	cr_assert_eq(change_index(), ++ci, "add bumps");
	cr_assert_eq(lfp_pollfds_add(&set, 7, POLLOUT, NULL), 0);
	cr_assert_eq(change_index(), ++ci);
	cr_assert_eq(lfp_pollfds_add(&set, 0, POLLIN | POLLPRI, NULL), 0, "fd 0 is valid");
	cr_assert_eq(change_index(), ++ci);

	/* Failed calls leave change_index alone. */
	cr_assert_eq(lfp_pollfds_add(&set, 3, POLLIN, NULL), -EEXIST);
	cr_assert_eq(lfp_pollfds_add(&set, 3, POLLOUT, NULL), -EEXIST,
	             "duplicate with other events");
	cr_assert_eq(lfp_pollfds_add(&set, -1, POLLIN, NULL), -EINVAL);
	cr_assert_eq(lfp_pollfds_mod(&set, 99, POLLIN), -ENOENT);
	cr_assert_eq(lfp_pollfds_del(&set, 99), -ENOENT);
	cr_assert_lt(lfp_pollfds_mod(&set, -1, POLLIN), 0);
	cr_assert_lt(lfp_pollfds_del(&set, -1), 0);
	cr_assert_eq(change_index(), ci, "failed calls changed change_index");

	/* A mod to the same events is no change; to other events it is. */
	cr_assert_eq(lfp_pollfds_mod(&set, 7, POLLOUT), 0);
	cr_assert_eq(change_index(), ci, "mod to the same events bumped");
	cr_assert_eq(lfp_pollfds_mod(&set, 7, POLLIN | POLLOUT), 0);
	cr_assert_eq(change_index(), ++ci, "mod bumps");

	cr_assert_eq(snapshot(fds, 8, &n), ci);
	cr_assert_eq(n, 3);
	p = find(fds, n, 3);
	cr_assert_not_null(p);
	cr_assert_eq(p->events, POLLIN);
	p = find(fds, n, 7);
	cr_assert_not_null(p);
	cr_assert_eq(p->events, POLLIN | POLLOUT);
	p = find(fds, n, 0);
	cr_assert_not_null(p);
	cr_assert_eq(p->events, POLLIN | POLLPRI);

	/* del bumps and removes exactly that fd, wherever it is. */
	cr_assert_eq(lfp_pollfds_del(&set, 3), 0);
	cr_assert_eq(change_index(), ++ci, "del bumps");
	cr_assert_eq(lfp_pollfds_del(&set, 3), -ENOENT, "second del");
	cr_assert_eq(lfp_pollfds_mod(&set, 3, POLLOUT), -ENOENT, "mod after del");
	cr_assert_eq(change_index(), ci);
	cr_assert_eq(snapshot(fds, 8, &n), ci);
	cr_assert_eq(n, 2);
	cr_assert_null(find(fds, n, 3));
	cr_assert_not_null(find(fds, n, 7));
	cr_assert_not_null(find(fds, n, 0));

	/* Re-adding a deleted fd is a fresh add. */
	cr_assert_eq(lfp_pollfds_add(&set, 3, POLLOUT, NULL), 0);
	cr_assert_eq(change_index(), ++ci);
	cr_assert_eq(snapshot(fds, 8, &n), ci);
	cr_assert_eq(n, 3);
	cr_assert_eq(find(fds, n, 3)->events, POLLOUT);

	/* Every returned entry has revents cleared. */
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(fds[i].revents, 0);

	cr_assert_eq(lfp_pollfds_del(&set, 0), 0);
	cr_assert_eq(lfp_pollfds_del(&set, 7), 0);
	cr_assert_eq(lfp_pollfds_del(&set, 3), 0);
	ci += 3;
	cr_assert_eq(snapshot(fds, 8, &n), ci);
	cr_assert_eq(n, 0);
}

Test(pollfd, get_too_small_reports_size_and_change_index)
{
	struct pollfd fds[5];
	struct lfp_wait_pollfd w;
	int i;

	for (i = 0; i < 5; i++)
		cr_assert_eq(lfp_pollfds_add(&set, 10 + i, POLLIN, NULL), 0);

	w.change_index = 0;
	w.nfds = 0;
	w.fd = NULL;
	cr_assert_eq(lfp_pollfds_get(&set, &w), -LFP_ETOOSMALL, "nfds 0");
	cr_assert_eq(w.nfds, 5, "nfds set to the entries needed");
	cr_assert_eq(w.change_index, 5);

	memset(fds, 0x5a, sizeof(fds));
	w.change_index = 0;
	w.nfds = 4;
	w.fd = fds;
	cr_assert_eq(lfp_pollfds_get(&set, &w), -LFP_ETOOSMALL, "one short");
	cr_assert_eq(w.nfds, 5);
	cr_assert_eq(w.change_index, 5);

	w.nfds = 5;
	cr_assert_eq(lfp_pollfds_get(&set, &w), 0, "exact room");
	cr_assert_eq(w.nfds, 5);
	for (i = 0; i < 5; i++)
		cr_assert_not_null(find(fds, 5, 10 + i));

	/* Room to spare: nfds comes back as the entries written. */
	{
		struct pollfd more[9];

		w.nfds = 9;
		w.fd = more;
		cr_assert_eq(lfp_pollfds_get(&set, &w), 0);
		cr_assert_eq(w.nfds, 5);
	}

	/* Room without an array. */
	w.nfds = 3;
	w.fd = NULL;
	cr_assert_eq(lfp_pollfds_get(&set, &w), -EINVAL);
	cr_assert_eq(lfp_pollfds_get(&set, NULL), -EINVAL);
	cr_assert_eq(lfp_pollfds_get(NULL, &w), -EINVAL);
}

Test(pollfd, null_arguments_are_einval)
{
	cr_assert_eq(lfp_pollfds_add(NULL, 1, POLLIN, NULL), -EINVAL);
	cr_assert_eq(lfp_pollfds_mod(NULL, 1, POLLIN), -EINVAL);
	cr_assert_eq(lfp_pollfds_del(NULL, 1), -EINVAL);
	cr_assert_eq(lfp_pollfds_init(NULL), -EINVAL);
	lfp_pollfds_fini(NULL); /* no crash */
}

/* The snapshot matches a model of the set after random operations. */
Test(pollfd, random_operations_match_a_model)
{
	enum { MAXFD = 64 };
	short model[MAXFD];   /* 0: absent, else the events */
	struct pollfd fds[MAXFD];
	uint64_t rng = 12345, ci = 0;
	size_t n, count = 0;
	int i, step, fd, ret;
	short ev;

	memset(model, 0, sizeof(model));
	for (step = 0; step < 5000; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		fd = (int)((rng >> 33) % MAXFD);
		ev = (short)(1 + (rng >> 50) % 3); /* POLLIN, POLLPRI, or both */
		switch ((rng >> 20) % 3) {
		case 0:
			ret = lfp_pollfds_add(&set, fd, ev, NULL);
			if (model[fd]) {
				cr_assert_eq(ret, -EEXIST);
			} else {
				cr_assert_eq(ret, 0);
				model[fd] = ev;
				count++;
				ci++;
			}
			break;
		case 1:
			ret = lfp_pollfds_mod(&set, fd, ev);
			if (!model[fd]) {
				cr_assert_eq(ret, -ENOENT);
			} else {
				cr_assert_eq(ret, 0);
				if (model[fd] != ev)
					ci++;
				model[fd] = ev;
			}
			break;
		default:
			ret = lfp_pollfds_del(&set, fd);
			if (!model[fd]) {
				cr_assert_eq(ret, -ENOENT);
			} else {
				cr_assert_eq(ret, 0);
				model[fd] = 0;
				count--;
				ci++;
			}
			break;
		}
		if (step % 7 == 0 || step == 4999) {
			cr_assert_eq(snapshot(fds, MAXFD, &n), ci, "step %d", step);
			cr_assert_eq(n, count, "step %d: %zu entries, model %zu", step, n, count);
			for (i = 0; i < (int)n; i++) {
				cr_assert(fds[i].fd >= 0 && fds[i].fd < MAXFD);
				cr_assert_eq(fds[i].events, model[fds[i].fd],
				             "step %d: fd %d", step, fds[i].fd);
			}
			/* No duplicates: n distinct fds, all in the model. */
			for (i = 0; i < (int)n; i++)
				cr_assert_eq(find(fds + i + 1, n - (size_t)i - 1, fds[i].fd), NULL,
				             "fd %d twice", fds[i].fd);
		}
	}
}

Test(pollfd, grows_far_beyond_initial_capacity)
{
	enum { N = 1000 };
	struct pollfd *fds = calloc(N, sizeof(*fds));
	struct lfp_wait_pollfd w;
	size_t n, i;
	char *seen = calloc(N, 1);

	cr_assert_not_null(fds);
	cr_assert_not_null(seen);
	for (i = 0; i < N; i++)
		cr_assert_eq(lfp_pollfds_add(&set, (int)(1000 + i), POLLIN, (void *)i), 0);
	cr_assert_eq(change_index(), N);
	w.nfds = N - 1;
	w.fd = fds;
	cr_assert_eq(lfp_pollfds_get(&set, &w), -LFP_ETOOSMALL);
	cr_assert_eq(w.nfds, N);
	cr_assert_eq(snapshot(fds, N, &n), N);
	cr_assert_eq(n, N);
	for (i = 0; i < N; i++) {
		int fd = fds[i].fd - 1000;

		cr_assert(fd >= 0 && fd < N, "fd %d", fds[i].fd);
		cr_assert_eq(seen[fd], 0, "fd %d twice", fds[i].fd);
		seen[fd] = 1;
	}
	/* Delete the odd ones, then the set holds exactly the even ones. */
	for (i = 1; i < N; i += 2)
		cr_assert_eq(lfp_pollfds_del(&set, (int)(1000 + i)), 0);
	cr_assert_eq(snapshot(fds, N, &n), N + N / 2);
	cr_assert_eq(n, N / 2);
	memset(seen, 0, N);
	for (i = 0; i < n; i++) {
		int fd = fds[i].fd - 1000;

		cr_assert(fd >= 0 && fd < N && fd % 2 == 0, "fd %d", fds[i].fd);
		cr_assert_eq(seen[fd], 0);
		seen[fd] = 1;
	}
	free(fds);
	free(seen);
}

/* With real pipes, the snapshot is usable in poll(2) directly. */
Test(pollfd, snapshot_works_with_poll)
{
	int p1[2], p2[2];
	struct pollfd fds[4];
	size_t n, i;
	char c = 'x';

	cr_assert_eq(pipe(p1), 0);
	cr_assert_eq(pipe(p2), 0);
	cr_assert_eq(lfp_pollfds_add(&set, p1[0], POLLIN, NULL), 0);
	cr_assert_eq(lfp_pollfds_add(&set, p2[0], POLLIN, NULL), 0);
	snapshot(fds, 4, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(poll(fds, n, 0), 0, "nothing written yet");
	cr_assert_eq(write(p2[1], &c, 1), 1);
	snapshot(fds, 4, &n);
	cr_assert_eq(poll(fds, n, 0), 1);
	for (i = 0; i < n; i++)
		cr_assert_eq(!!(fds[i].revents & POLLIN), fds[i].fd == p2[0]);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
}
