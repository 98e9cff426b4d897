# libFuzzer targets, included by the top-level Makefile (tests/*.mk).
#
#   make fuzz-build        build build-fuzz/<target> for each tests/fuzz/fuzz_<name>.c
#   make fuzz              run every target for FUZZ_SECONDS (default 60) on a
#                          copy of tests/fuzz/corpus/<target>/ in a temporary
#                          directory (the committed corpus never changes);
#                          prints executions and coverage from libFuzzer's
#                          final stats, fails if any target crashes
#   make fuzz-clean
#
#   FUZZ_SECONDS=N         seconds per target
#   FUZZ_FLAGS='...'       extra libFuzzer flags (e.g. -seed=1)
#   FUZZ_KEEP=1            keep each run's grown corpus (the path is printed)
#   FUZZ_SKIP_KNOWN=1      build with -DLFP_FUZZ_SKIP_KNOWN (in build-fuzz/skip-known/):
#                          the targets step around the known include/ bugs that
#                          the crash-* seeds reproduce, to explore past them
#
# Crashes and timeouts are written to build-fuzz/artifacts/<target>-crash-*;
# replay one with build-fuzz/<target> FILE (LFP_FUZZ_TRACE=1 prints every
# operation).  Seeds named crash-<what> in the corpus are regression inputs
# for bugs found in include/.  None of this is part of `make check`.

CLANG        ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ_KEEP    ?=
FUZZ_SKIP_KNOWN ?=
ifeq ($(FUZZ_SKIP_KNOWN),)
  FUZZ_DIR   := build-fuzz
  FUZZ_DEFS  :=
else
  FUZZ_DIR   := build-fuzz/skip-known
  FUZZ_DEFS  := -DLFP_FUZZ_SKIP_KNOWN
endif
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/,$(FUZZ_NAMES))
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -std=c11 $(WARN) -Iinclude $(CK_CFLAGS) -pthread $(FUZZ_DEFS)
DEPS_FUZZ    := clang libclang-rt-14-dev libck-dev pkg-config

.PHONY: fuzz fuzz-build fuzz-deps fuzz-clean

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,FUZZCC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< -o $@

fuzz-deps:
	@$(ENSURE) $(DEPS_FUZZ)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory fuzz-build
	@FUZZ_FLAGS='$(FUZZ_FLAGS)' FUZZ_KEEP='$(FUZZ_KEEP)' \
		sh tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-clean:
	rm -rf build-fuzz

clean: fuzz-clean
