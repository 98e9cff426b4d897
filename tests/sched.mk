# The schedule-point tests' broken variants, included by the top-level
# Makefile (tests/*.mk).
#
#   make check-broken     build tests/stress_sched and run it once per defect
#                         letter with LFP_BROKEN=<letter>, which brings back
#                         that defect's old behaviour (LFP__BROKEN in
#                         include/lfpoll/internal/sched.h); every run must
#                         fail, and fail in that defect's own test (a failure
#                         line "... failed: <letter>: ...").  Prints each
#                         failure line and "broken: N caught, N missed";
#                         fails if any defect was missed.
#
# `make check` runs the same program without LFP_BROKEN, like every
# tests/stress_*.c, and there it must pass.

SCHED_DEFECTS ?= A B C E F G I J L S X
SCHED_TIMEOUT ?= 300

.PHONY: check-broken
check-broken: $(B)/tests/stress_sched
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
	rm -f "$$log"; \
	echo "broken: $$caught caught, $$missed missed"; \
	[ $$missed -eq 0 ]
