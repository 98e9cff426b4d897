# lfpoll: plain GNU make, no configure step.
#
#   make [all]            build the verbs binding, examples and benchmarks
#   make check            header compile tests, Criterion suites, stress tests
#   make check SANITIZE=address   the same under ASan+UBSan
#   make check SANITIZE=thread    the stress programs under TSan (Criterion
#                                 cannot start under TSan; see README)
#   make bench            every benchmark side by side with its peers
#   make install / uninstall / clean / docs
#   V=1                   show the commands

PREFIX     ?= /usr/local
includedir ?= $(PREFIX)/include
libdir     ?= $(PREFIX)/lib
mandir     ?= $(PREFIX)/share/man
pkgconfigdir ?= $(libdir)/pkgconfig
DESTDIR    ?=

VERSION    := 0.1.0

CC         ?= cc
CXX        ?= c++
CFLAGS     ?= -O2 -g
CXXFLAGS   ?= -O2 -g
PKG_CONFIG ?= pkg-config

# Concurrency Kit headers only: lfpoll never links libck.
CK_CFLAGS  := $(shell $(PKG_CONFIG) --cflags ck 2>/dev/null)

WARN       := -Wall -Wextra -Wpedantic -Werror
override CFLAGS   += -std=c11 $(WARN) -Iinclude $(CK_CFLAGS) -pthread -MMD -MP
override CXXFLAGS += -std=c++11 $(WARN) -Iinclude $(CK_CFLAGS) -pthread
override LDFLAGS  += -pthread

SANITIZE ?=
ifeq ($(SANITIZE),)
  B := build
else ifeq ($(SANITIZE),address)
  B := build-address
  override CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  override LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SANITIZE),thread)
  B := build-thread
  override CFLAGS  += -fsanitize=thread -fno-omit-frame-pointer
  override LDFLAGS += -fsanitize=thread
else
  $(error SANITIZE must be address or thread)
endif

ifeq ($(V),1)
  Q :=
  say :=
else
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2);
endif

HEADERS    := $(wildcard include/lfpoll/*.h)
INTERNAL   := $(wildcard include/lfpoll/internal/*.h)

# Debian packages each job needs (scripts/ensure-deps installs what is missing).
DEPS_CHECK := libck-dev libcriterion-dev pkg-config clang libclang-rt-14-dev \
              libibverbs-dev ibverbs-providers
DEPS_BENCH := libck-dev libdpdk-dev libfabric-dev gnuplot-nox valgrind pkg-config \
              libibverbs-dev ibverbs-providers
ENSURE     := sh scripts/ensure-deps

# ---------------------------------------------------------------- tests
TEST_SRCS   := $(wildcard tests/test_*.c)
STRESS_SRCS := $(wildcard tests/stress_*.c)
TESTS       := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRCS))
STRESSES    := $(patsubst tests/%.c,$(B)/tests/%,$(STRESS_SRCS))
TEST_CFLAGS := -DLFP_STATS -Itests

$(B)/tests/test_%: tests/test_%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) -lcriterion $(LDLIBS)

$(B)/tests/stress_%: tests/stress_%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) $(LDLIBS)

# Every public header compiled alone as C11 and as C++11, with gcc and clang.
CLANG       ?= clang
CLANGXX     ?= clang++
COMPILE_C   := $(patsubst include/lfpoll/%.h,$(B)/compile/%.c.o,$(HEADERS))
COMPILE_CXX := $(patsubst include/lfpoll/%.h,$(B)/compile/%.cxx.o,$(HEADERS))
COMPILE_CLANG := $(patsubst include/lfpoll/%.h,$(B)/compile/%.clang.o,$(HEADERS)) \
                 $(patsubst include/lfpoll/%.h,$(B)/compile/%.clangxx.o,$(HEADERS))

$(B)/compile/%.c.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C11,$<)
	$(Q)$(CC) -std=c11 $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.cxx.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.clang.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CLANG,$<)
	$(Q)$(CLANG) -std=c11 $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.clangxx.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CLANG++,$<)
	$(Q)$(CLANGXX) -x c++ -std=c++11 $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

# ---------------------------------------------------------------- verbs binding
# The only compiled part: hidden visibility, an explicit version script, no
# undefined symbols (-z defs), SONAME liblfpoll_verbs.so.0.
VERBS_SONAME := liblfpoll_verbs.so.0
VERBS_SO     := $(B)/liblfpoll_verbs.so.$(VERSION)
VERBS_A      := $(B)/liblfpoll_verbs.a
VERBS_HDR    := bindings/verbs/lfpoll/verbs.h
VERBS_CFLAGS := -Ibindings/verbs -fPIC -fvisibility=hidden

$(B)/verbs/verbs.o: bindings/verbs/verbs.c $(VERBS_HDR) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(VERBS_CFLAGS) -c $< -o $@

$(VERBS_SO): $(B)/verbs/verbs.o bindings/verbs/liblfpoll_verbs.map
	$(call say,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(VERBS_SONAME) \
		-Wl,--version-script=bindings/verbs/liblfpoll_verbs.map -Wl,-z,defs \
		$< -o $@ $(LDFLAGS) -libverbs
	$(Q)ln -sf $(notdir $@) $(B)/$(VERBS_SONAME)
	$(Q)ln -sf $(notdir $@) $(B)/liblfpoll_verbs.so

$(VERBS_A): $(B)/verbs/verbs.o
	$(call say,AR,$@)
	$(Q)$(AR) rcs $@ $<

$(B)/compile/verbs.c.o: $(VERBS_HDR) tests/compile/one_header.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C11,$<)
	$(Q)$(CC) -std=c11 $(WARN) -Iinclude -Ibindings/verbs $(CK_CFLAGS) \
		-DLFP_HEADER='<lfpoll/verbs.h>' -c tests/compile/one_header.c -o $@

$(B)/compile/verbs.cxx.o: $(VERBS_HDR) tests/compile/one_header.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -Ibindings/verbs -DLFP_HEADER='<lfpoll/verbs.h>' \
		-c tests/compile/one_header.c -o $@

.PHONY: all check check-deps check-compile check-run bench bench-deps bench-instr \
	install uninstall clean docs stress model

all: $(B)/lfpoll.pc $(B)/lfpoll-verbs.pc $(VERBS_SO) $(VERBS_A)

check-deps:
	@$(ENSURE) $(DEPS_CHECK)

check-compile: $(COMPILE_C) $(COMPILE_CXX) $(COMPILE_CLANG) \
	$(B)/compile/verbs.c.o $(B)/compile/verbs.cxx.o $(VERBS_SO) $(VERBS_A)

ifeq ($(SANITIZE),thread)
# Criterion's runner cannot start under TSan (its arena fails to map), so the
# thread build runs the standalone stress programs, which carry the same
# multi-threaded assertions.
check-run: $(STRESSES)
	@sh tests/run-tests $(STRESSES)
else
check-run: $(TESTS) $(STRESSES)
	@sh tests/run-tests $(TESTS) $(STRESSES)
endif

# Examples are compiled by check so they never rot; the verbs ones link the
# binding.
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES     := $(patsubst examples/%.c,$(B)/examples/%,$(EXAMPLE_SRCS))

$(B)/examples/verbs_%: examples/verbs_%.c $(VERBS_A) $(VERBS_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Ibindings/verbs $< -o $@ $(LDFLAGS) $(VERBS_A) -libverbs

$(B)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS)

check: check-deps
	@$(MAKE) --no-print-directory check-compile $(EXAMPLES)
	@$(MAKE) --no-print-directory check-run

# Model-check the trywait protocol with spin: the protocol must verify and
# the variant without the producer's barrier must be shown to fail.
model:
	@$(ENSURE) spin gcc
	@sh tests/model/run

# The long form of the stress tests.
stress: check-deps $(STRESSES)
	@LFP_STRESS=long sh tests/run-tests $(STRESSES)

# ---------------------------------------------------------------- bench
BENCH_SRCS := $(filter-out bench/harness.c,$(wildcard bench/*.c))
BENCHES    := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))
BENCH_MARCH ?= -march=native
BENCH_CFLAGS := -O2 -g $(BENCH_MARCH) -Ibench -DLFP_STATS
DPDK_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdpdk 2>/dev/null)
FABRIC_LIBS := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)

$(B)/bench/%: bench/%.c bench/harness.c bench/harness.h $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(filter-out -O2 -g,$(CFLAGS)) $(BENCH_CFLAGS) $(BENCH_CFLAGS_$*) \
		$< bench/harness.c -o $@ $(LDFLAGS) $(BENCH_LDLIBS_$*) -lm

# Per-benchmark flags (BENCH_CFLAGS_<name>, BENCH_LDLIBS_<name>) live in
# bench/bench.mk; extra test rules (the verbs tests) in tests/*.mk.
-include bench/bench.mk $(wildcard tests/*.mk)

bench-deps:
	@$(ENSURE) $(DEPS_BENCH)

bench: bench-deps
	@$(MAKE) --no-print-directory $(BENCHES)
	@sh bench/run $(BENCHES)

# Instructions per item from callgrind, on a -march=x86-64-v2 build
# (valgrind 3.19 cannot decode AVX-512).
bench-instr: bench-deps
	@$(MAKE) --no-print-directory B=build/instr BENCH_MARCH=-march=x86-64-v2 \
		$(patsubst $(B)/%,build/instr/%,$(BENCHES))
	@sh scripts/bench-instr $(patsubst $(B)/%,build/instr/%,$(BENCHES))

# ---------------------------------------------------------------- install
$(B)/%.pc: %.pc.in Makefile
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@includedir@|$(includedir)|g' \
		-e 's|@libdir@|$(libdir)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

MAN_SRCS := $(wildcard docs/man/*.md)
MANS     := $(patsubst docs/man/%.md,$(B)/man/%,$(MAN_SRCS))

$(B)/man/%: docs/man/%.md
	@mkdir -p $(dir $@)
	$(call say,MAN,$@)
	$(Q)pandoc -s -t man $< -o $@

docs: $(MANS)

install: all
	install -d $(DESTDIR)$(includedir)/lfpoll/internal $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(libdir)
	install -m 644 $(HEADERS) $(VERBS_HDR) $(DESTDIR)$(includedir)/lfpoll/
	install -m 644 $(INTERNAL) $(DESTDIR)$(includedir)/lfpoll/internal/
	install -m 644 $(B)/lfpoll.pc $(B)/lfpoll-verbs.pc $(DESTDIR)$(pkgconfigdir)/
	install -m 755 $(VERBS_SO) $(DESTDIR)$(libdir)/
	ln -sf $(notdir $(VERBS_SO)) $(DESTDIR)$(libdir)/$(VERBS_SONAME)
	ln -sf $(notdir $(VERBS_SO)) $(DESTDIR)$(libdir)/liblfpoll_verbs.so
	install -m 644 $(VERBS_A) $(DESTDIR)$(libdir)/
	@if [ -n "$(MANS)" ] && command -v pandoc >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory docs && \
		install -d $(DESTDIR)$(mandir)/man3 && \
		install -m 644 $(MANS) $(DESTDIR)$(mandir)/man3/; fi

uninstall:
	rm -rf $(DESTDIR)$(includedir)/lfpoll
	rm -f $(DESTDIR)$(pkgconfigdir)/lfpoll.pc $(DESTDIR)$(pkgconfigdir)/lfpoll-verbs.pc
	rm -f $(DESTDIR)$(libdir)/liblfpoll_verbs.*
	rm -f $(addprefix $(DESTDIR)$(mandir)/man3/,$(notdir $(MANS)))

clean:
	rm -rf build build-address build-thread

-include $(shell find $(B) -name '*.d' 2>/dev/null)
