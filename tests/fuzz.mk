# libFuzzer targets, included by the top-level Makefile (tests/*.mk).
#
#   make fuzz-build        build build-fuzz/<target> for each tests/fuzz/fuzz_<name>.c
#   make fuzz              run every target for FUZZ_SECONDS (default 60) on a
#                          copy of tests/fuzz/corpus/<target>/ in a temporary
#                          directory (the committed corpus never changes);
#                          prints executions and coverage from libFuzzer's
#                          final stats, fails if any target crashes
#   make fuzz-broken       prove the oracles of every target: build them
#                          with -DLFP_TEST_BROKEN (build-fuzz/broken/)
#                          and, for the defects A (a waiter with its own
#                          condition drains the eventfd), E (a cq_signal
#                          before sread is forgotten), L (a ring burst
#                          that claims n once the first slot is free), p (an
#                          EQ peek that consumes) and c (lfp_poll consumes a
#                          counter's change it had no room for), replay
#                          tests/fuzz/broken-seeds/<defect>/
#                          and fuzz from an empty corpus with a fixed seed;
#                          fails unless each defect is caught by its oracle
#                          (tests/fuzz/run-broken)
#   make fuzz-clean
#
#   FUZZ_SECONDS=N         seconds per target
#   FUZZ_FLAGS='...'       extra libFuzzer flags (e.g. -seed=1)
#   FUZZ_KEEP=1            keep each run's grown corpus (the path is printed)
#   FUZZ_BROKEN_SECONDS=N  fuzz-broken: the most each defect may take (45)
#   FUZZ_BROKEN_SEED=N     fuzz-broken: libFuzzer's -seed (1)
#
# Crashes and timeouts are written to build-fuzz/artifacts/<target>-crash-*;
# replay one with build-fuzz/<target> FILE (LFP_FUZZ_TRACE=1 prints every
# operation).  Seeds named crash-<what> in the corpus reproduce bugs found
# (and fixed) in include/: they stay as regression inputs.  Crash inputs of
# the broken build go to tests/fuzz/broken-seeds/<defect>/, never to the
# corpus.  None of this is part of `make check`.

CLANG        ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ_KEEP    ?=
FUZZ_BROKEN_SECONDS ?= 45
FUZZ_BROKEN_SEED ?= 1
FUZZ_DIR     := build-fuzz
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/,$(FUZZ_NAMES))
FUZZ_CFLAGS  := -g1 -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                $(STD_C) $(WARN) -Iinclude $(CK_CFLAGS) -pthread
DEPS_FUZZ    := clang libclang-rt-14-dev libck-dev pkg-config

.PHONY: fuzz fuzz-build fuzz-broken fuzz-deps fuzz-clean

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< -o $@

fuzz-deps:
	@$(ENSURE) $(DEPS_FUZZ)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory $(CHECK_J) fuzz-build
	@FUZZ_FLAGS='$(FUZZ_FLAGS)' FUZZ_KEEP='$(FUZZ_KEEP)' \
		sh tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_BINS)

# The targets with the test-only switch back to old, defective behaviour.
$(FUZZ_DIR)/broken/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -DLFP_TEST_BROKEN $< -o $@

# Each target's defects, as LETTER:TEXT, TEXT being what its oracle prints
# ('|' between the texts of a defect that more than one oracle catches).
# p and c (lower case: made for this, no fixed defect of that letter) are
# a peek that consumes, caught at the next call that finds the event gone,
# and lfp_poll consuming a counter's change it had no room to report,
# caught by lfp_poll's own count or, once the change is lost, by
# lfp_trywait letting a thread sleep while the set owes that change.
FUZZ_BROKEN_fuzz_wait := 'A:[fd-readable]' 'E:[prompt]'
FUZZ_BROKEN_fuzz_ring := 'L:lfpoll fuzz: lfp_ring_enqueue'
FUZZ_BROKEN_fuzz_eq   := 'p:lfpoll fuzz: model mismatch'
FUZZ_BROKEN_fuzz_sets := 'c:lfp_poll(set|lfp_trywait over'
FUZZ_BROKEN_TARGETS   := fuzz_wait fuzz_ring fuzz_eq fuzz_sets

fuzz-broken: fuzz-deps
	@$(MAKE) --no-print-directory $(CHECK_J) $(foreach t,$(FUZZ_BROKEN_TARGETS),$(FUZZ_DIR)/$(t) $(FUZZ_DIR)/broken/$(t))
	@set -e; $(foreach t,$(FUZZ_BROKEN_TARGETS),\
		FUZZ_BROKEN_SEED='$(FUZZ_BROKEN_SEED)' sh tests/fuzz/run-broken $(FUZZ_BROKEN_SECONDS) \
			$(FUZZ_DIR)/broken/$(t) $(FUZZ_DIR)/$(t) $(FUZZ_BROKEN_$(t));)

CLEAN_DIRS += $(FUZZ_DIR)

fuzz-clean:
	rm -rf $(FUZZ_DIR)
