# The broken variants of the schedule-point tests and of the stress
# programs, included by the top-level Makefile (tests/*.mk).
#
#   make check-broken     (1) build tests/stress_sched and run it once per
#                         defect letter, four at a time (tests/run-broken-sched),
#                         with LFP_BROKEN=<letter>, which brings
#                         back that defect's old behaviour (LFP__BROKEN in
#                         include/lfpoll/internal/sched.h); every run must
#                         fail, and fail in that defect's own test (a failure
#                         line "... failed: <letter>: ..."), which is the only
#                         test it runs (LFP_SCHED_ONLY=<its first letter>: the
#                         other tests' passes are make check's to show).
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
#                         "broken: N caught, N missed"; fails if any defect
#                         was missed.
#   make check-broken-tsan  the data races (TSAN_DEFECTS): each program built
#                         with SANITIZE=thread and run with its defect named
#                         must end on a ThreadSanitizer report.
#
# `make check` runs the same programs built without LFP_TEST_BROKEN, and
# there they must pass.

SCHED_DEFECTS ?= A B D1 C E F G G2 G3 G4 G5 I I2 I3 J J2 J3 L S S2 X K T O O3 Q
SCHED_TIMEOUT ?= 300
# program:defect pairs; docs/reliability.md ("Stress and torture programs")
# says what each pair shows.
STRESS_DEFECTS ?= ring:L ring:m cq:F cq:X cq:R eq:X eq:R eq_wake_window:N poll_membership:M \
                  verbs:P verbs_chan:P verbs_cancel:U verbs_async_sread:U verbs_share:Y \
                  verbs_async:Z \
                  sets:R soak:A soak:L wake_barrier:P2 link_barrier:I4 \
                  poll_asym:V2 poll_asym:V
STRESS_TIMEOUT ?= 120
STRESS_BROKEN = $(sort $(foreach pd,$(STRESS_DEFECTS),\
                  $(B)/tests/broken/stress_$(firstword $(subst :, ,$(pd)))))

$(B)/tests/broken/stress_%: tests/stress_%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) -DLFP_TEST_BROKEN -DLFP_STRESS_BROKEN \
		$< -o $@ $(LDFLAGS) $(LDLIBS)

.PHONY: check-broken
check-broken:
	@$(MAKE) --no-print-directory $(CHECK_J) $(B)/tests/stress_sched $(STRESS_BROKEN)
	@sh tests/run-broken-sched $(SCHED_TIMEOUT) $(B)/tests/stress_sched \
		$(SCHED_DEFECTS); missed=$$?; \
	caught=$$(($(words $(SCHED_DEFECTS)) - missed)); \
	for pd in $(STRESS_DEFECTS); do \
		if sh tests/run-broken-one $(STRESS_TIMEOUT) \
			$(B)/tests/broken/stress_$${pd%%:*} $${pd#*:} "CHECK(.*) failed: "; then \
			caught=$$((caught + 1)); else missed=$$((missed + 1)); fi; \
	done; \
	echo "broken: $$caught caught, $$missed missed"; \
	[ $$missed -eq 0 ]

# Defects that only ThreadSanitizer sees: H reads a word without the lock
# its writer holds (lfp_wait's nfds; the verbs async object's held event);
# H2 writes a word under another lock than its reader's (lfp_poll_add
# storing into a link that another set's lfp_poll reads).
# stress_sched runs only its own test of the letter (LFP_SCHED_ONLY).
TSAN_DEFECTS ?= sched:H verbs_async:H poll_membership:H2
TSAN_BROKEN_BIN = $(if $(filter sched,$(1)),build-thread/tests/stress_sched,build-thread/tests/broken/stress_$(1))

.PHONY: check-broken-tsan
check-broken-tsan:
	@$(MAKE) --no-print-directory SANITIZE=thread $(sort $(foreach pd,$(TSAN_DEFECTS),\
		$(call TSAN_BROKEN_BIN,$(firstword $(subst :, ,$(pd))))))
	@caught=0; missed=0; \
	for pd in $(foreach pd,$(TSAN_DEFECTS),$(pd):$(call TSAN_BROKEN_BIN,$(firstword $(subst :, ,$(pd))))); do \
		d=$${pd#*:}; bin=$${d#*:}; d=$${d%%:*}; \
		if LFP_SCHED_ONLY=$$d sh tests/run-broken-one $(STRESS_TIMEOUT) \
			$$bin $$d "ThreadSanitizer: data race"; then \
			caught=$$((caught + 1)); else missed=$$((missed + 1)); fi; \
	done; \
	echo "broken under TSan: $$caught caught, $$missed missed"; \
	[ $$missed -eq 0 ]
