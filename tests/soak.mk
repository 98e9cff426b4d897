# The soak test, included by the top-level Makefile (tests/*.mk).
#
#   make soak                   run tests/stress_soak for SOAK_SECONDS (default 60)
#   make soak SANITIZE=thread   the same under ThreadSanitizer
#   make soak SOAK_SECONDS=600
#   make soak SOAK_ONLY=poll    one scenario: poll (the fi_poll(3) loop), waiters
#                               (mixed waiters on one object), or one wait
#                               object of the latter: FD, UNSPEC, MUTEX_COND, YIELD
#
# `make check` runs the same program for a few seconds, like every
# tests/stress_*.c.  The soak fails on a hang or a stall (a progress
# watchdog), not on speed.

SOAK_SECONDS ?= 60
SOAK_ONLY    ?=

.PHONY: soak
soak: check-deps $(B)/tests/stress_soak
	@echo "  SOAK   $(B)/tests/stress_soak ($(SOAK_SECONDS) s)"
	@LFP_SOAK_SECONDS='$(SOAK_SECONDS)' LFP_SOAK_ONLY='$(SOAK_ONLY)' \
		$(B)/tests/stress_soak
