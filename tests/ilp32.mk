# 32-bit builds, included by the top-level Makefile (tests/*.mk).
#
#   make check-ilp32       build tests/ilp32/*.c and a few stress
#                          programs as static 32-bit x86 programs (the i686
#                          cross compiler) and run them, under qemu-i386
#                          where the kernel cannot; skipped, with a line
#                          saying why, off x86 or without either; then
#                          check-ilp32-armv7
#   make check-ilp32-armv7 the same programs for ARMv7 (below), under
#                          qemu-arm where the kernel cannot run them
#   make ilp32-clean       remove build-ilp32/ and build-armv7/
#
# Pointers and size_t are 4 bytes there, so the CQ formats' sizes are
# multiples of 4, not of 8, 64-bit atomics are two-word operations, and a
# uint64_t is 4-aligned: align.c checks that no 64-bit word accessed
# atomically crosses a cache line in objects as they are opened.
# Most of these builds use the compiler's atomics (LFP_ATOMIC_BUILTINS), as
# the TSan build does.  The ring stress program is built a second time
# (stress_ring_ck) on Concurrency Kit, which is what a 32-bit user gets by
# default: its headers are the host's (build-ilp32/ck/ holds links to
# them; its ck_md.h describes x86-64, which is TSO as 32-bit x86 is).  And
# check-ilp32 shows that stress_ring_ck can fail on the defect it is there
# for: stress_ring_ck_w, built with LFP_TEST_BROKEN_W (64-bit words loaded
# and stored with ck_pr, as two 32-bit accesses: docs/reliability.md, "W"),
# must fail with a CHECK line.  Criterion has no 32-bit library: the checks
# are plain programs.  The cross compiler, not gcc -m32: Debian's
# gcc-multilib cannot be installed beside the aarch64 cross compiler that
# check-arm64 needs.
#
# Then the same programs for ARMv7 (armhf, arm-linux-gnueabihf-gcc): a
# 32-bit target that is also weakly ordered, where a 64-bit atomic is an
# exclusive-pair loop.  They use the compiler's atomics, and the ring
# program is built a second time on Concurrency Kit (stress_ring_ck): the
# host's headers, but for ck_md.h, whose x86-64 description (CK_MD_TSO)
# does not fit the target; the build includes tests/arm64/ck_md.h (the
# relaxed model, check-arm64's, which describes ARMv7 as well) first
# instead, and its guard keeps the other out.
# lfpoll's own orderings do not depend on it: off x86 its ck_pr layer
# fences with ck_pr's strict fences, which every description makes dmb
# (internal/atomic.h).  Before any program is built, check-arm64's probe
# (tests/arm64/probe.c) is compiled with each layer's flags and
# tests/arm64/check-dmb must find its barriers: a dmb in each acquire
# load, release store and fence, and on both sides of each RMW's
# ldrex/strex loop (the compiler's seq_cst atomics, or ck_pr's bare loops
# between lfpoll's fences); each probe's bare build must fail it.  Each
# object must hold dmb barriers too, and the programs run under qemu-arm.  The
# emulated CPU orders memory as the x86 host does, so what this shows is
# that 4-byte pointers and a 32-bit size_t with the ARMv7 atomics of both
# layers keep every entry and every wake-up, not the weak orderings
# themselves (those are the spin models' and check-arm64's object-code
# check).  Needs the
# cross compiler, its libc and qemu-user, which ilp32-deps installs; on a
# host without them and without a package manager, skipped with a line.

I32_CC     ?= i686-linux-gnu-gcc
I32_B      := build-ilp32
I32_CFLAGS := -O2 $(STD_C) $(WARN) -Wno-psabi -Iinclude -Itests \
              -DLFP_ATOMIC_BUILTINS -DLFP_STATS -pthread
I32_SRCS   := tests/ilp32/cq_formats.c tests/ilp32/ring_limits.c tests/ilp32/align.c \
              tests/stress_cq.c tests/stress_ring.c tests/stress_sched.c
I32_PROGS  := $(addprefix $(I32_B)/,$(notdir $(basename $(I32_SRCS))))
I32_CK_CFLAGS := $(filter-out -DLFP_ATOMIC_BUILTINS,$(I32_CFLAGS)) -I$(I32_B)/ck
I32_PROGS  += $(I32_B)/stress_ring_ck
I32_BROKEN := $(I32_B)/stress_ring_ck_w

A32_CC      ?= arm-linux-gnueabihf-gcc
A32_OBJDUMP ?= arm-linux-gnueabihf-objdump
A32_QEMU    ?= qemu-arm
A32_B       := build-armv7
A32_CK      := $(A32_B)/ck
A32_CK_CFLAGS := $(filter-out -DLFP_ATOMIC_BUILTINS,$(I32_CFLAGS)) \
                 -include tests/arm64/ck_md.h -I$(A32_CK)
A32_PROGS   := $(addprefix $(A32_B)/,$(notdir $(basename $(I32_SRCS)))) \
               $(A32_B)/stress_ring_ck
.SECONDARY: $(addsuffix .o,$(A32_PROGS))

.PHONY: check-ilp32 check-ilp32-armv7 ilp32-deps ilp32-clean

ilp32-deps:
	@missing=; \
	command -v $(A32_CC) >/dev/null 2>&1 || missing="gcc-arm-linux-gnueabihf"; \
	$(call cross_libc,$(A32_CC)) || missing="$$missing libc6-dev-armhf-cross"; \
	command -v $(A32_QEMU) >/dev/null 2>&1 || missing="$$missing qemu-user"; \
	[ -f $(CK_INCLUDEDIR)/ck_pr.h ] || missing="$$missing libck-dev"; \
	case "$$(uname -m)" in x86_64|i?86) \
	command -v $(I32_CC) >/dev/null 2>&1 || missing="$$missing gcc-i686-linux-gnu"; \
	$(call cross_libc,$(I32_CC)) || missing="$$missing libc6-dev-i386-cross" ;; esac; \
	[ -z "$$missing" ] || $(ENSURE) $$missing

$(I32_B)/%: tests/ilp32/%.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CFLAGS) $< -o $@ -static

$(I32_B)/stress_%: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CFLAGS) $< -o $@ -static

# Links to all of Concurrency Kit's headers (ck_links, in the Makefile).
$(I32_B)/ck/.stamp: tests/ilp32.mk
	$(call ck_links,$(I32_B)/ck,)
	$(Q)touch $@

$(I32_B)/stress_%_ck: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h) $(I32_B)/ck/.stamp
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CK_CFLAGS) $< -o $@ -static

$(I32_B)/stress_%_ck_w: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h) $(I32_B)/ck/.stamp
	$(call say,CC32,$@)
	$(Q)$(I32_CC) $(I32_CK_CFLAGS) -DLFP_TEST_BROKEN_W $< -o $@ -static

# Where the kernel runs no 32-bit programs, each runs under qemu-i386
# (Debian qemu-user), through a launcher of its own as check-arm64's
# (tests/cross-launchers, for this leg and the ARMv7 one below): user
# emulation keeps the 32-bit size_t and pointers, which is what these
# checks are about.  Without either, a program cannot even start and says
# nothing about lfpoll: skipped, with the reason.
I32_QEMU ?= qemu-i386

check-ilp32: ilp32-deps
	@case "$$(uname -m)" in x86_64|i?86) ;; \
	*) echo "check-ilp32: skipped: not an x86 host"; exit 0 ;; esac; \
	$(MAKE) --no-print-directory $(CHECK_J) $(I32_PROGS) $(I32_BROKEN) || exit 1; \
	progs=$$(sh tests/cross-launchers $(I32_CC) $(I32_QEMU) $(I32_B) $(I32_PROGS)); \
	case $$? in 0) ;; \
	2) echo "check-ilp32: this kernel runs no 32-bit programs: under $(I32_QEMU)" ;; \
	3) echo "check-ilp32: skipped: this kernel runs no 32-bit programs, and $(I32_QEMU) (qemu-user) is missing"; \
	   exit 0 ;; \
	*) exit 1 ;; esac; \
	broken=$$(sh tests/cross-launchers $(I32_CC) $(I32_QEMU) $(I32_B) $(I32_BROKEN)); \
	case $$? in 0|2) ;; *) exit 1 ;; esac; \
	sh tests/run-tests $$progs || exit 1; \
	echo "check-ilp32: the broken build must fail (64-bit words split, W):"; \
	for p in $$broken; do \
		LFP_STRESS=long sh tests/run-broken-one 300 $$p W "CHECK(.*) failed: " || exit 1; \
	done
	@$(MAKE) --no-print-directory check-ilp32-armv7

# The probe, with each layer's flags (builtins: the compiler's atomics;
# ck: ck_pr's), and the bare build of each (name-bare).
A32_PROBE_FLAGS_builtins := $(I32_CFLAGS)
A32_PROBE_FLAGS_ck       := $(A32_CK_CFLAGS)
A32_PROBES := $(addprefix $(A32_B)/dmb-probe/,builtins.o ck.o)
$(A32_B)/dmb-probe/%.o: tests/arm64/probe.c $(HEADERS) $(INTERNAL) tests/arm64/ck_md.h \
                        $(A32_CK)/.stamp
	@mkdir -p $(dir $@)
	$(call say,ARMCC,$@)
	$(Q)$(A32_CC) $(A32_PROBE_FLAGS_$(patsubst %-bare,%,$*)) \
		$(if $(filter %-bare,$*),-DLFP_TESTS_PROBE_BARE) -c $< -o $@

$(A32_B)/dmb-probe.ok: $(A32_PROBES) $(A32_PROBES:.o=-bare.o) tests/arm64/check-dmb
	$(call say,DMB,$(A32_B)/dmb-probe)
	$(Q)for o in $(A32_PROBES); do \
		sh tests/arm64/check-dmb $(A32_OBJDUMP) $$o || exit 1; \
		sh tests/arm64/check-dmb --bare $(A32_OBJDUMP) $${o%.o}-bare.o || exit 1; \
	done
	$(Q)touch $@

# Compiled to objects first, so that the dmb looked for is in the
# program's and lfpoll's code, not in the static libc.
$(A32_B)/%.o: tests/ilp32/%.c $(HEADERS) $(INTERNAL) | $(A32_B)/dmb-probe.ok
	@mkdir -p $(dir $@)
	$(call say,ARMCC,$@)
	$(Q)$(A32_CC) $(I32_CFLAGS) -c $< -o $@

$(A32_B)/stress_%.o: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h) \
                    | $(A32_B)/dmb-probe.ok
	@mkdir -p $(dir $@)
	$(call say,ARMCC,$@)
	$(Q)$(A32_CC) $(I32_CFLAGS) -c $< -o $@

# Links to every Concurrency Kit header but ck_md.h (tests/arm64 has it).
$(A32_CK)/.stamp: tests/ilp32.mk
	$(call ck_links,$(A32_CK),ck_md.h)
	$(Q)touch $@

$(A32_B)/stress_%_ck.o: tests/stress_%.c $(HEADERS) $(INTERNAL) $(wildcard tests/*.h) \
                        tests/arm64/ck_md.h $(A32_CK)/.stamp | $(A32_B)/dmb-probe.ok
	@mkdir -p $(dir $@)
	$(call say,ARMCC,$@)
	$(Q)$(A32_CC) $(A32_CK_CFLAGS) -c $< -o $@

$(A32_B)/%: $(A32_B)/%.o
	$(call say,ARMLD,$@)
	$(Q)n=$$($(A32_OBJDUMP) -d $< | grep -c '[[:space:]]dmb[[:space:]]'); \
		[ "$$n" -gt 0 ] || { echo "error: $< has no dmb" >&2; exit 1; }
	$(Q)$(A32_CC) $< -o $@ -pthread -static

check-ilp32-armv7: ilp32-deps
	@if ! $(call cross_libc,$(A32_CC)); then \
		echo "check-ilp32: ARMv7: skipped: no $(A32_CC) with its libc"; exit 0; fi; \
	$(MAKE) --no-print-directory $(CHECK_J) $(A32_PROGS) || exit 1; \
	progs=$$(sh tests/cross-launchers $(A32_CC) $(A32_QEMU) $(A32_B) $(A32_PROGS)); \
	case $$? in 0) echo "check-ilp32: ARMv7 (armhf) builds" ;; \
	2) echo "check-ilp32: ARMv7 (armhf) builds, under $(A32_QEMU)" ;; \
	3) echo "check-ilp32: ARMv7: skipped: this kernel runs no ARMv7 programs, and $(A32_QEMU) (qemu-user) is missing"; \
	   exit 0 ;; \
	*) exit 1 ;; esac; \
	sh tests/run-tests $$progs

# Built natively too, cq_formats and ring_limits run in make check beside
# the stress programs (and under both sanitizers): each program checks
# 64-bit and 32-bit builds.
$(B)/tests/%: tests/ilp32/%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# check-progs's prerequisites were expanded when its rule was read; the
# list check-run runs is expanded when it runs.
check-progs: $(B)/tests/cq_formats $(B)/tests/ring_limits
RUN_PROGS += $(B)/tests/cq_formats $(B)/tests/ring_limits

CLEAN_DIRS += $(I32_B) $(A32_B)

ilp32-clean:
	rm -rf $(I32_B) $(A32_B)
