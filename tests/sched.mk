# The broken variants of the schedule-point tests and of the stress
# programs, included by the top-level Makefile (tests/*.mk).
#
#   make check-broken     (1) build tests/stress_sched and run it once per
#                         defect letter with LFP_BROKEN=<letter>, which brings
#                         back that defect's old behaviour (LFP__BROKEN in
#                         include/lfpoll/internal/sched.h); every run must
#                         fail, and fail in that defect's own test (a failure
#                         line "... failed: <letter>: ...").
#                         (2) build each stress program named in
#                         STRESS_DEFECTS with -DLFP_TEST_BROKEN
#                         -DLFP_STRESS_BROKEN (tests/broken/) and run it with
#                         each defect listed for it: every run must fail with
#                         a CHECK failure line, so each program is shown to
#                         catch the classes of defect it claims (lost
#                         wake-ups, lost, repeated, torn or reordered entries,
#                         errors overtaken).  Deadlines in these builds are
#                         at most STRESS_BROKEN_LIMIT seconds (tests/stress.h).
#                         Prints each failure line (tests/run-broken-one) and
#                         "broken: N caught, N
#                         missed"; fails if any defect was missed.
#
# `make check` runs the same programs built without LFP_TEST_BROKEN, and
# there they must pass.

SCHED_DEFECTS ?= A B C E F G I J L S X K T O Q
SCHED_TIMEOUT ?= 300
# program:defect pairs; docs/reliability.md ("Stress and torture programs")
# says what each pair shows.
STRESS_DEFECTS ?= ring:L cq:F cq:X cq:R eq:X eq:R eq_wake_window:N poll_membership:M \
                  verbs:P verbs_chan:P verbs_cancel:U verbs_async_sread:U verbs_share:Y \
                  verbs_async:Z \
                  sets:R soak:A soak:L
STRESS_TIMEOUT ?= 120
STRESS_BROKEN = $(sort $(foreach pd,$(STRESS_DEFECTS),\
                  $(B)/tests/broken/stress_$(firstword $(subst :, ,$(pd)))))

$(B)/tests/broken/stress_%: tests/stress_%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) -DLFP_TEST_BROKEN -DLFP_STRESS_BROKEN \
		$< -o $@ $(LDFLAGS) $(LDLIBS)

.PHONY: check-broken
check-broken: $(B)/tests/stress_sched $(STRESS_BROKEN)
	@caught=0; missed=0; \
	for d in $(SCHED_DEFECTS); do \
		if sh tests/run-broken-one $(SCHED_TIMEOUT) $(B)/tests/stress_sched \
			$$d "failed: $$d: "; then \
			caught=$$((caught + 1)); else missed=$$((missed + 1)); fi; \
	done; \
	for pd in $(STRESS_DEFECTS); do \
		if sh tests/run-broken-one $(STRESS_TIMEOUT) \
			$(B)/tests/broken/stress_$${pd%%:*} $${pd#*:} "CHECK(.*) failed: "; then \
			caught=$$((caught + 1)); else missed=$$((missed + 1)); fi; \
	done; \
	echo "broken: $$caught caught, $$missed missed"; \
	[ $$missed -eq 0 ]
