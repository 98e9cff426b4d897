# 32-bit builds, included by the top-level Makefile (tests/*.mk).
#
#   make check-ilp32       build tests/ilp32/cq_formats and a few stress
#                          programs as static 32-bit x86 programs (the i686
#                          cross compiler) and run them; skipped, with a
#                          line saying why, off x86 or where the kernel
#                          cannot run them
#   make ilp32-clean       remove build-ilp32/
#
# Pointers and size_t are 4 bytes there, so the CQ formats' sizes are
# multiples of 4, not of 8, and 64-bit atomics are two-word operations.
# Concurrency Kit has no 32-bit headers here, so these builds use the
# compiler's atomics (LFP_ATOMIC_BUILTINS), as the TSan build does; and
# Criterion no 32-bit library: the checks are plain programs.  The cross
# compiler, not gcc -m32: Debian's gcc-multilib cannot be installed beside
# the aarch64 cross compiler that check-arm64 needs.

I32_CC     ?= i686-linux-gnu-gcc
I32_B      := build-ilp32
I32_CFLAGS := -O2 $(STD_C) $(WARN) -Wno-psabi -Iinclude -Itests \
              -DLFP_ATOMIC_BUILTINS -DLFP_STATS -pthread
I32_SRCS   := tests/ilp32/cq_formats.c tests/stress_cq.c tests/stress_ring.c \
              tests/stress_sched.c
I32_PROGS  := $(addprefix $(I32_B)/,$(notdir $(basename $(I32_SRCS))))

.PHONY: check-ilp32 ilp32-deps ilp32-clean

ilp32-deps:
	@case "$$(uname -m)" in x86_64|i?86) ;; *) exit 0 ;; esac; \
	missing=; \
	command -v $(I32_CC) >/dev/null 2>&1 || missing="gcc-i686-linux-gnu"; \
	{ command -v $(I32_CC) >/dev/null 2>&1 && \
	  [ "$$($(I32_CC) -print-file-name=libc.a)" != libc.a ]; } || \
		missing="$$missing libc6-dev-i386-cross"; \
	[ -z "$$missing" ] || $(ENSURE) $$missing

$(I32_B)/%: tests/ilp32/%.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CFLAGS) $< -o $@ -static

$(I32_B)/stress_%: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CFLAGS) $< -o $@ -static

# A program that cannot even start says nothing about lfpoll: skip then.
check-ilp32: ilp32-deps
	@case "$$(uname -m)" in x86_64|i?86) ;; \
	*) echo "check-ilp32: skipped: not an x86 host"; exit 0 ;; esac; \
	$(MAKE) --no-print-directory $(CHECK_J) $(I32_PROGS) || exit 1; \
	printf 'int main(void) { return 0; }\n' > $(I32_B)/probe.c && \
	$(I32_CC) $(I32_B)/probe.c -o $(I32_B)/probe -static && \
	if ! $(I32_B)/probe; then \
		echo "check-ilp32: skipped: this kernel does not run 32-bit programs"; \
		exit 0; \
	fi; \
	sh tests/run-tests $(I32_PROGS)

# Built natively too, cq_formats runs in make check beside the stress
# programs (and under both sanitizers): one program checks the formats on
# 64-bit and 32-bit builds.
$(B)/tests/cq_formats: tests/ilp32/cq_formats.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# check-progs's prerequisites were expanded when its rule was read; the
# list check-run runs is expanded when it runs.
check-progs: $(B)/tests/cq_formats
RUN_PROGS += $(B)/tests/cq_formats

CLEAN_DIRS += $(I32_B)

ilp32-clean:
	rm -rf $(I32_B)
