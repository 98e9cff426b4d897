# The standalone stress programs cross-built for aarch64 and run under
# qemu-user; included by the top-level Makefile (tests/*.mk).
#
#   make check-arm64       build build-arm64/tests/stress_* (static, aarch64)
#                          and run each under qemu-aarch64 via tests/run-tests
#   make arm64-clean       remove build-arm64/
#
# What it proves and what it does not: tests/arm64/README.md.
#
# Concurrency Kit's headers come from the host's libck-dev, but its ck_md.h
# was generated for x86-64 (CK_MD_TSO, under which ck_pr's acquire and
# release fences are compiler barriers), so tests/arm64/ck_md.h, the
# aarch64 description (CK_MD_RMO), must be found first.  The host's include
# directory cannot go on the cross compiler's path (it would mix x86 libc
# headers into the build), so build-arm64/ck/ holds links to Concurrency
# Kit's own headers only, without ck_md.h.
#
# Before any stress program is built, tests/arm64/probe.c must compile (it
# #errors unless the build is aarch64 with CK_MD_RMO from tests/arm64/ck_md.h
# and the ck_pr mapping) and tests/arm64/check-dmb must find the barriers in
# its object code: a dmb in each acquire/release function, and a dmb on both
# sides of each RMW's ldxr/stxr loop.  The probe's bare build, whose
# relaxed accesses break each of those rules once, must fail the check.
#
# tests/stress_verbs*.c are left out: they link libibverbs and the binding,
# and the cross toolchain has no aarch64 libibverbs (the fake device context
# they run on also interposes on libibverbs.so's read(), which a static
# link cannot reproduce).

A64_CC      ?= aarch64-linux-gnu-gcc
A64_OBJDUMP ?= aarch64-linux-gnu-objdump
A64_QEMU    ?= qemu-aarch64
A64_B       := build-arm64
A64_CK      := $(A64_B)/ck
A64_CFLAGS  := -O2 $(STD_C) $(WARN) -Iinclude -Itests/arm64 -I$(A64_CK) \
               -DLFP_STATS -Itests -pthread
A64_LDFLAGS := -pthread -static

A64_SRCS    := $(filter-out tests/stress_verbs%,$(wildcard tests/stress_*.c))
A64_STRESS  := $(patsubst tests/%.c,$(A64_B)/tests/%,$(A64_SRCS))
# One qemu-aarch64 launcher per program, so that tests/run-tests runs and
# names them like the native ones.
A64_RUN     := $(patsubst tests/%.c,$(A64_B)/run/%,$(A64_SRCS))
A64_OBJS    := $(addsuffix .o,$(A64_STRESS))
A64_DEPS    := $(HEADERS) $(INTERNAL) tests/arm64/ck_md.h $(wildcard tests/*.h) \
               $(A64_B)/ck/.stamp

.PHONY: check-arm64 arm64-deps arm64-build arm64-clean
.SECONDARY: $(A64_OBJS) $(A64_STRESS)

# Only the packages whose files are missing go to scripts/ensure-deps, so
# that it need not know how to detect a cross compiler, a cross libc or qemu.
arm64-deps:
	@missing=libck-dev; \
	command -v $(A64_CC) >/dev/null 2>&1 || missing="$$missing gcc-aarch64-linux-gnu"; \
	$(call cross_libc,$(A64_CC)) || missing="$$missing libc6-dev-arm64-cross"; \
	command -v $(A64_QEMU) >/dev/null 2>&1 || missing="$$missing qemu-user"; \
	$(ENSURE) $$missing

# Links to every Concurrency Kit header except ck_md.h.
$(A64_B)/ck/.stamp: tests/arm64.mk
	$(call ck_links,$(A64_CK),ck_md.h)
	$(Q)touch $@

# The memory-model guard and the dmb check.
$(A64_B)/probe.o: tests/arm64/probe.c $(A64_DEPS)
	@mkdir -p $(dir $@)
	$(call say,A64CC,$@)
	$(Q)$(A64_CC) $(A64_CFLAGS) -c $< -o $@

# The probe's bare build (relaxed accesses the check must reject).
$(A64_B)/probe_bare.o: tests/arm64/probe.c $(A64_DEPS)
	@mkdir -p $(dir $@)
	$(call say,A64CC,$@)
	$(Q)$(A64_CC) $(A64_CFLAGS) -DLFP_TESTS_PROBE_BARE -c $< -o $@

$(A64_B)/probe.ok: $(A64_B)/probe.o $(A64_B)/probe_bare.o tests/arm64/check-dmb
	$(call say,DMB,$<)
	$(Q)sh tests/arm64/check-dmb $(A64_OBJDUMP) $<
	$(Q)sh tests/arm64/check-dmb --bare $(A64_OBJDUMP) $(A64_B)/probe_bare.o
	$(Q)touch $@

# Compiled to an object first, so that the dmb looked for is in the
# program's and lfpoll's code, not in the static libc.
$(A64_B)/tests/stress_%.o: tests/stress_%.c $(A64_DEPS) | $(A64_B)/probe.ok
	@mkdir -p $(dir $@)
	$(call say,A64CC,$@)
	$(Q)$(A64_CC) $(A64_CFLAGS) -c $< -o $@

$(A64_B)/tests/stress_%: $(A64_B)/tests/stress_%.o
	$(call say,A64LD,$@)
	$(Q)n=$$($(A64_OBJDUMP) -d $< | grep -c '[[:space:]]dmb[[:space:]]'); \
		[ "$$n" -gt 0 ] || { echo "error: $< has no dmb" >&2; exit 1; }
	$(Q)$(A64_CC) $< -o $@ $(A64_LDFLAGS)

$(A64_B)/run/stress_%: $(A64_B)/tests/stress_%
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s "$$@"\n' '$(A64_QEMU)' "$$(realpath $<)" > $@
	$(Q)chmod +x $@

arm64-build: $(A64_RUN)

# The programs take seconds under qemu and carry their own deadlines; a
# hang fails after 5 minutes rather than run-tests' default 15.  They make
# half of a native run's rounds (LFP_STRESS=short, tests/stress.h): the
# emulated CPU orders memory as the x86 host does, so the races are the
# native runs' to hunt (tests/arm64/README.md).
check-arm64: arm64-deps
	@$(MAKE) --no-print-directory $(CHECK_J) arm64-build
	@LFP_STRESS=$${LFP_STRESS:-short} LFP_TEST_TIMEOUT=$${LFP_TEST_TIMEOUT:-300} \
		sh tests/run-tests $(A64_RUN)

CLEAN_DIRS += $(A64_B)

arm64-clean:
	rm -rf $(A64_B)
