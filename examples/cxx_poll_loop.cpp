// lfpoll from C++: one pass of a trywait/poll loop over a wait set, a poll
// set and a completion queue.
//
// lfp_wait() and lfp_poll() are functions as well as struct names, and in
// C++ the function hides the type: pointers to a wait set or a poll set need
// the struct keyword (struct lfp_wait *ws, struct lfp_poll *ps). The other
// types (lfp_cq, lfp_cq_attr, ...) can be named without it.
//
//   c++ -std=c++11 cxx_poll_loop.cpp $(pkg-config --cflags --libs lfpoll)
#include <lfpoll/lfpoll.h>

#include <cstdio>

int main()
{
	lfp_wait_attr wattr = {};
	lfp_cq_attr cattr = {};
	struct lfp_wait *ws = nullptr;  // "lfp_wait *ws" does not compile
	struct lfp_poll *ps = nullptr;  // nor does "lfp_poll *ps"
	lfp_cq *cq = nullptr;
	lfp_cq_entry comp = { nullptr };
	static char tag[] = "the cq";
	void *ready[4];
	int served = 0;

	wattr.wait_obj = LFP_WAIT_FD;
	if (lfp_wait_open(&wattr, &ws))
		return 1;
	cattr.wait_obj = LFP_WAIT_SET;
	cattr.wait_set = ws;
	if (lfp_cq_open(&cattr, &cq, tag) || lfp_poll_open(nullptr, &ps) ||
	    lfp_poll_add(ps, &cq->fid, 0))
		return 1;

	comp.op_context = tag;
	lfp_cq_write(cq, &comp, 1);  // a completion arrives (any thread)

	// The loop body: announce the sleep, sleep only if nothing is pending,
	// then ask the poll set which members have work and drain them.
	lfp_fid *fid = &ws->fid;
	if (lfp_trywait(&fid, 1) == 0 && lfp_wait(ws, 1000) != 0)
		return 1;
	int n = lfp_poll(ps, ready, 4);
	for (int i = 0; i < n; i++) {
		while (lfp_cq_read(cq, &comp, 1) == 1)
			served++;
		std::printf("%s: %d completion(s)\n", static_cast<const char *>(ready[i]),
		            served);
	}

	lfp_poll_del(ps, &cq->fid, 0);
	if (lfp_poll_close(ps) || lfp_cq_close(cq) || lfp_wait_close(ws))
		return 1;
	return served == 1 ? 0 : 1;
}
