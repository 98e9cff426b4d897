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
#                         Prints each failure line and "broken: N caught, N
#                         missed"; fails if any defect was missed.
#
# `make check` runs the same programs built without LFP_TEST_BROKEN, and
# there they must pass.

SCHED_DEFECTS ?= A B C E F G I J L S X K T O Q
SCHED_TIMEOUT ?= 300
# program:defect pairs; tests/README.md says what each pair shows.
STRESS_DEFECTS ?= ring:L ring:X cq:F cq:X cq:R eq:X eq:R eq_wake_window:N \
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
	@caught=0; missed=0; log=$$(mktemp); \
	for d in $(SCHED_DEFECTS); do \
		LFP_BROKEN=$$d timeout -k 10 $(SCHED_TIMEOUT) $(B)/tests/stress_sched >"$$log" 2>&1; \
		rc=$$?; \
		line=$$(grep -a -m 1 "failed: $$d: " "$$log"); \
		if [ $$rc -ne 0 ] && [ -n "$$line" ]; then \
			caught=$$((caught + 1)); \
			printf '  CAUGHT %s  %s\n' "$$d" "$$line"; \
		else \
			missed=$$((missed + 1)); \
			printf '  MISSED %s  (exit %s, no "failed: %s:" line)\n' "$$d" "$$rc" "$$d"; \
			tail -n 20 "$$log" | sed 's/^/         /'; \
		fi; \
	done; \
	for pd in $(STRESS_DEFECTS); do \
		p=$${pd%%:*}; d=$${pd#*:}; \
		LFP_BROKEN=$$d timeout -k 10 $(STRESS_TIMEOUT) $(B)/tests/broken/stress_$$p >"$$log" 2>&1; \
		rc=$$?; \
		line=$$(grep -a -m 1 "CHECK(.*) failed: " "$$log" | cut -c 1-200); \
		if [ $$rc -ne 0 ] && [ $$rc -ne 124 ] && [ -n "$$line" ]; then \
			caught=$$((caught + 1)); \
			printf '  CAUGHT stress_%s %s  %s\n' "$$p" "$$d" "$$line"; \
		else \
			missed=$$((missed + 1)); \
			printf '  MISSED stress_%s %s  (exit %s, no CHECK failure line)\n' "$$p" "$$d" "$$rc"; \
			tail -n 20 "$$log" | sed 's/^/         /'; \
		fi; \
	done; \
	rm -f "$$log"; \
	echo "broken: $$caught caught, $$missed missed"; \
	[ $$missed -eq 0 ]
