# lfpoll: plain GNU make, no configure step.
#
#   make [all]            build the .pc files, the CMake package, the examples
#                         and each module whose dependencies are here
#                         (bindings/<name>/<name>.mk: the verbs .so and .a;
#                         support/vf/vf.mk: the test kit liblfpoll_vf.a); a
#                         module whose dependency is missing is skipped with
#                         a one-line note; the core needs only Concurrency
#                         Kit's headers (scripts/ensure-deps checks them first)
#   make check            header compile tests, Criterion suites, stress tests,
#                         the installed tree and the man pages (tests/install/)
#   make check SANITIZE=address   the same under ASan+UBSan
#   make check SANITIZE=thread    the stress programs under TSan (Criterion
#                                 cannot start under TSan; see README)
#   make check-deb        the Debian packages built from a copy of the tree,
#                         checked and used (scripts/check-deb)
#   make check-pkg        what a package build runs as its tests (debian/rules)
#   make bench            every benchmark side by side with its peers
#   make install / uninstall / clean   (install needs no cmake and no pandoc)
#   make docs             regenerate the committed roff pages docs/man/*.3
#                         from docs/man/*.3.md (needs pandoc; install does not)
#   V=1                   show the commands
#   NO_INSTALL=1          never install missing packages (as LFP_NO_INSTALL=1
#                         in the environment): scripts/ensure-deps only says
#                         what is missing

# The first target in this file would otherwise be the default goal.
.DEFAULT_GOAL := all

PREFIX     ?= /usr/local
includedir ?= $(PREFIX)/include
libdir     ?= $(PREFIX)/lib
mandir     ?= $(PREFIX)/share/man
pkgconfigdir ?= $(libdir)/pkgconfig
cmakedir   ?= $(libdir)/cmake/lfpoll
DESTDIR    ?=
# run after an install as root without DESTDIR, so the loader finds the binding
LDCONFIG   ?= ldconfig

VERSION    := 0.1.0

CC         ?= cc
CXX        ?= c++
# The ASan+UBSan build is compiled at -O1, as those sanitizers advise: it
# finds the same faults, compiles in half the time, and make check runs
# every test at -O2 too.  The TSan build keeps -O2 (it checks what users run).
# Both carry line tables only (-g1): all a sanitizer's report needs, file
# and line, at about a quarter less compile time than -g.
ifeq ($(SANITIZE),address)
CFLAGS     ?= -O1 -g1
else ifeq ($(SANITIZE),thread)
CFLAGS     ?= -O2 -g1
else
CFLAGS     ?= -O2 -g
endif
CXXFLAGS   ?= -O2 -g
PKG_CONFIG ?= pkg-config

# Concurrency Kit headers only: lfpoll never links libck.  Only its -I flags:
# Debian's ck.pc also carries the -D__x86_64__ of the machine that built it.
CK_CFLAGS  := $(filter -I%,$(shell $(PKG_CONFIG) --cflags ck 2>/dev/null))

WARN       := -Wall -Wextra -Wpedantic -Werror
# The headers define no feature-test macro (include/lfpoll/common.h): a
# strict C11 build gives the POSIX level, as a user's would.
STD_C      := -std=c11 -D_POSIX_C_SOURCE=200809L
override CFLAGS   += $(STD_C) $(WARN) -Iinclude $(CK_CFLAGS) -pthread -MMD -MP
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

# Every build directory `make clean` removes; fragments append theirs.
CLEAN_DIRS := build build-address build-thread $(B)

ifeq ($(V),1)
  Q :=
  say :=
else
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2);
endif

HEADERS    := $(wildcard include/lfpoll/*.h)
# The core's CMake package (cmake/*.in); modules add their component files.
CMAKE_FILES := $(B)/cmake/lfpollConfig.cmake $(B)/cmake/lfpollConfigVersion.cmake
# What replaces each @NAME@ in the *.in files (.pc, CMake), as NAME=value;
# modules add theirs. Values hold no space: a flag list is one word (-Wl,a,b).
CK_INCLUDEDIR := $(or $(shell $(PKG_CONFIG) --variable=includedir ck 2>/dev/null),/usr/include)
SUBST := PREFIX=$(PREFIX) includedir=$(includedir) libdir=$(libdir) VERSION=$(VERSION) \
	VERSION_MAJOR=$(word 1,$(subst ., ,$(VERSION))) VERSION_MINOR=$(word 2,$(subst ., ,$(VERSION))) \
	CK_CFLAGS=$(if $(filter /usr/include,$(CK_INCLUDEDIR)),,-I$(CK_INCLUDEDIR)) \
	CK_INCLUDEDIR=$(CK_INCLUDEDIR)

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES     := $(patsubst examples/%.c,$(B)/examples/%,$(EXAMPLE_SRCS))
CXX_EXAMPLE_SRCS := $(wildcard examples/*.cpp)
CXX_EXAMPLES := $(patsubst examples/%.cpp,$(B)/examples/%,$(CXX_EXAMPLE_SRCS))
INTERNAL   := $(wildcard include/lfpoll/internal/*.h)

# Debian packages each job needs (scripts/ensure-deps installs what is missing).
DEPS_CHECK := libck-dev libcriterion-dev pkg-config clang libclang-rt-14-dev \
              libibverbs-dev ibverbs-providers
DEPS_BENCH := libck-dev libdpdk-dev libfabric-dev gnuplot-nox valgrind pkg-config \
              libibverbs-dev ibverbs-providers \
              g++ libatomic-queue-dev libconcurrentqueue-dev \
              libhwloc-dev libnuma-dev clang binutils
# g++ and man-db for the C++ example and the installed man pages (tests/install/).
DEPS_CHECK += g++ man-db
ENSURE     := $(if $(filter-out 0,$(NO_INSTALL)),LFP_NO_INSTALL=1 )CC='$(CC)' \
              PKG_CONFIG='$(PKG_CONFIG)' sh scripts/ensure-deps
# $(call lfp_missing,PACKAGE...): the ones missing here, when the Makefile
# is read; how a module decides whether it is built (never installs).
lfp_missing = $(shell CC='$(CC)' PKG_CONFIG='$(PKG_CONFIG)' sh scripts/ensure-deps --missing $(1))
# What `make` and `make install` need: the core is Concurrency Kit's headers.
DEPS_CORE  := libck-dev
# Where they are, for the cross builds (tests/arm64.mk, tests/ilp32.mk): the
# host's include directory cannot go on a cross compiler's path (it would
# mix the host's libc headers in), so each build links Concurrency Kit's own
# headers into a directory of its own.
CK_INCLUDEDIR ?= $(or $(shell $(PKG_CONFIG) --variable=includedir ck 2>/dev/null),/usr/include)
# $(call ck_links,DIR,SKIP): links in DIR to each of those headers but the
# file named SKIP (empty: none); a recipe's lines.
define ck_links
	$(Q)rm -rf $(1) && mkdir -p $(1)
	$(Q)test -f $(CK_INCLUDEDIR)/ck_pr.h || \
		{ echo "error: no ck_pr.h in $(CK_INCLUDEDIR) (set CK_INCLUDEDIR)" >&2; exit 1; }
	$(Q)for f in $(CK_INCLUDEDIR)/ck_*.h $(CK_INCLUDEDIR)/gcc $(CK_INCLUDEDIR)/spinlock; do \
		if [ -e "$$f" ] && [ "$${f##*/}" != "$(2)" ]; then \
			ln -s "$$(realpath "$$f")" $(1)/ || exit 1; \
		fi; \
	done
endef
# $(call cross_libc,CC): a shell condition, true when the cross compiler CC
# is installed with the static libc its programs link with.
cross_libc = { command -v $(1) >/dev/null 2>&1 && \
               [ "$$($(1) -print-file-name=libc.a)" != libc.a ]; }

# ---------------------------------------------------------------- tests
TEST_SRCS   := $(wildcard tests/test_*.c)
STRESS_SRCS := $(wildcard tests/stress_*.c)
TESTS       := $(patsubst tests/%.c,$(B)/tests/%,$(TEST_SRCS))
STRESSES    := $(patsubst tests/%.c,$(B)/tests/%,$(STRESS_SRCS))
# Test programs carry line tables only (-g1, after CFLAGS: it wins over
# its -g): enough for a failure's backtrace, and the test builds take
# about a quarter less time.  TEST_G=-g (or empty) for a debugger's full view.
TEST_G      ?= -g1
TEST_CFLAGS := -DLFP_STATS -Itests $(TEST_G)

$(B)/tests/test_%: tests/test_%.c $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) $< -o $@ $(LDFLAGS) -lcriterion $(LDLIBS)

# test_cq_avx: test_cq.c with 32-byte moves, where this CPU has them (the
# CQ's copy takes another path there: include/lfpoll/cq.h, lfp__cq_copy).
$(B)/tests/test_cq_avx: override CFLAGS += $(if $(shell grep -qw avx /proc/cpuinfo 2>/dev/null && echo y),-mavx)
$(B)/tests/test_cq_avx: tests/test_cq.c

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
	$(Q)$(CC) $(STD_C) $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.cxx.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.clang.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CLANG,$<)
	$(Q)$(CLANG) $(STD_C) $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/%.clangxx.o: include/lfpoll/%.h tests/compile/one_header.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CLANG++,$<)
	$(Q)$(CLANGXX) -x c++ -std=c++11 $(WARN) -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/$*.h>' \
		-c tests/compile/one_header.c -o $@

# ---------------------------------------------------------------- modules
# Each compiled part is a module: a binding, bindings/<name>/<name>.mk, or
# the verbs test kit, support/vf/vf.mk. A module writes its own rules in its
# own folder's terms and adds its targets to these lists:
#
#   BINDING_ALL        built by `make` (all)
#   BINDING_COMPILE    built by `make check` (check-compile)
#   BINDING_INSTALL    phony targets run by `make install`
#   BINDING_UNINSTALL  phony targets run by `make uninstall`
#   BINDING_EXAMPLES   the examples it builds (whether or not it is built):
#                      the core leaves them to it
#
# A module checks its dependencies with $(call lfp_missing,...) when it is
# read; when one is missing it adds a target that prints a one-line note to
# BINDING_ALL and BINDING_INSTALL instead of its own targets. (`make check`
# installs every dependency first, then builds in a fresh make.)
BINDING_ALL       :=
BINDING_COMPILE   :=
BINDING_INSTALL   :=
BINDING_UNINSTALL :=
BINDING_EXAMPLES  :=
include $(sort $(wildcard bindings/*/*.mk)) support/vf/vf.mk
CORE_EXAMPLES := $(filter-out $(BINDING_EXAMPLES),$(EXAMPLES))

# The C++ example needs a C++ compiler; the core does not.
HAVE_CXX := $(if $(shell command -v $(firstword $(CXX)) 2>/dev/null),1)
ifeq ($(HAVE_CXX),1)
  CORE_EXAMPLES += $(CXX_EXAMPLES)
else
  CORE_EXAMPLES += cxx-examples-skipped
.PHONY: cxx-examples-skipped
cxx-examples-skipped:
	@echo "lfpoll: the C++ examples are skipped: no C++ compiler ($(CXX))"
endif

.PHONY: all all-build deps-core check check-deps check-compile check-progs check-run bench bench-deps bench-instr \
	install install-build uninstall clean docs stress model check-build check-install check-docs \
	check-cxx check-cxx-build check-repo check-pkg check-deb FORCE

# `make` first checks what the core needs (installing it as root on Debian,
# naming it in one line elsewhere), then builds in a fresh make, which sees
# what was just installed.
all: deps-core
	@$(MAKE) --no-print-directory all-build

all-build: $(B)/lfpoll.pc $(CMAKE_FILES) $(BINDING_ALL) $(CORE_EXAMPLES)

deps-core:
	@$(ENSURE) $(DEPS_CORE)

check-deps:
	@$(ENSURE) $(DEPS_CHECK)

check-compile: $(COMPILE_C) $(COMPILE_CXX) $(COMPILE_CLANG) $(BINDING_COMPILE)

ifeq ($(SANITIZE),thread)
# Criterion's runner cannot start under TSan (its arena fails to map), so the
# thread build runs the standalone stress programs, which carry the same
# multi-threaded assertions.
RUN_PROGS = $(STRESSES)
else
RUN_PROGS = $(TESTS) $(STRESSES)
endif
check-progs: $(RUN_PROGS)
	@:

check-run: check-progs
	@sh tests/run-tests $(RUN_PROGS)

# Examples are compiled by all and check so they never rot; a module
# builds the ones that link it (BINDING_EXAMPLES).

$(B)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -o $@ $(LDFLAGS)

$(B)/examples/%: examples/%.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)
	$(Q)$(CXX) $(CXXFLAGS) $< -o $@ $(LDFLAGS)

# The C++ examples with both C++ compilers, as a user would build them
# (C++11, -Wall -Wextra -Werror), and run.
CXX_CHECK_FLAGS := -std=c++11 -O2 -Wall -Wextra -Werror -Iinclude $(CK_CFLAGS) -pthread
CXX_CHECKS := $(foreach c,g++ clang++,$(patsubst examples/%.cpp,$(B)/examples/%.$(c),$(CXX_EXAMPLE_SRCS)))

define cxx_check_rule
$(B)/examples/%.$(1): examples/%.cpp $(HEADERS) $(INTERNAL)
	@mkdir -p $$(dir $$@)
	$$(call say,$(1),$$@)
	$$(Q)$(1) $$(CXX_CHECK_FLAGS) $$< -o $$@.tmp -pthread
	$$(Q)./$$@.tmp >/dev/null || { echo "$$@: exit $$$$?" >&2; rm -f $$@.tmp; exit 1; }
	$$(Q)mv $$@.tmp $$@
endef
$(foreach c,g++ clang++,$(eval $(call cxx_check_rule,$(c))))

check-cxx: check-deps
	@$(MAKE) --no-print-directory check-cxx-build

check-cxx-build: $(CXX_CHECKS)
	@:

# tests/install/run: make install (DESTDIR and PREFIX forms), then every
# compile command of the README and the man pages against the installed tree
# only, the programs run, man finds each function, uninstall leaves nothing.
# tests/install/docs: the committed roff pages match their .md (with pandoc)
# and every public function has a page or a link page.
check-install: check-deps
	@$(MAKE) --no-print-directory all
	@MAKE='$(MAKE)' sh tests/install/run '$(B)'

check-docs:
	@sh tests/install/docs

# tests/install/repo: plain make builds all; the README's first lines and
# example; ensure-deps without dpkg and its one-line report; bench/run writes
# into an ignored folder and draws its plots.
# (after check-install: both build all in $(B), which must not race under -j)
check-repo: check-deps check-install
	@$(MAKE) --no-print-directory all
	@MAKE='$(MAKE)' sh tests/install/repo '$(B)'

# Built with the sanitizer flags, the binding and examples would not link into
# an ordinary program: the installed-tree checks run in the plain build only.
ifeq ($(SANITIZE),)
CHECK_MORE := check-docs check-cxx check-install check-repo
endif

# The header and user-program compile checks test how code builds, which a
# sanitizer changes nothing in: the plain build runs them, the sanitizer
# builds do not repeat them.
ifeq ($(SANITIZE),)
CHECK_COMPILE := check-compile
endif

check-build: $(CHECK_COMPILE) $(EXAMPLES) $(CXX_EXAMPLES)
	@:

# check builds on every CPU unless make was given its own -j (most of a
# sanitizer run is compiling); the programs then run one at a time.
CHECK_J := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

check: check-deps $(CHECK_MORE)
	@$(MAKE) --no-print-directory $(CHECK_J) check-build check-progs
	@$(MAKE) --no-print-directory check-run

# For package builds (debian/rules): the header compile tests, the examples
# and every test program on the built tree, with the dependencies the
# package declares. Nothing is installed, and the developer's checks
# (installed-tree, repository, man pages against pandoc) are left out: the
# package build itself installs and the packages replace them.
check-pkg: check-compile check-cxx-build $(CORE_EXAMPLES) $(BINDING_ALL)
	@$(MAKE) --no-print-directory check-run

# The Debian packages built from a copy of the tree and used
# (scripts/check-deb); .ci/run runs it with DEB_BUILD_OPTIONS=nocheck.
DEPS_DEB := dpkg-dev debhelper libck-dev libibverbs-dev libfabric-dev pkg-config
check-deb:
	@$(ENSURE) $(DEPS_DEB)
	@sh scripts/check-deb

# Model-check the trywait protocol with spin: the protocol must verify and
# the variant without the producer's barrier must be shown to fail.
model:
	@$(ENSURE) spin gcc
	@sh tests/model/run

# The long form of the stress tests.
stress: check-deps $(STRESSES)
	@LFP_STRESS=long sh tests/run-tests $(STRESSES)

# ---------------------------------------------------------------- bench
# Every bench/*.c is a program, but for the harness, the placement code the
# sweep links and the call sites footprint reads (bench/bench.mk).
BENCH_SRCS := $(filter-out bench/harness.c bench/topo.c bench/wrappers.c,$(wildcard bench/*.c))
BENCHES    := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))
BENCH_MARCH ?= -march=native
BENCH_CFLAGS := -O2 -g $(BENCH_MARCH) -Ibench -DLFP_STATS
DPDK_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdpdk 2>/dev/null)
FABRIC_LIBS := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)

$(B)/bench/%: bench/%.c bench/harness.c $(wildcard bench/*.h) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(filter-out -O2 -g,$(CFLAGS)) $(BENCH_CFLAGS) $(BENCH_CFLAGS_$*) \
		$< bench/harness.c -o $@ $(LDFLAGS) $(BENCH_LDLIBS_$*) -lm

# Per-benchmark flags (BENCH_CFLAGS_<name>, BENCH_LDLIBS_<name>) live in
# bench/bench.mk; extra test rules (the verbs tests) in tests/*.mk.
-include bench/bench.mk $(wildcard tests/*.mk)

bench-deps:
	@$(ENSURE) $(DEPS_BENCH)

# Results and plots go to $(B)/bench-results/, never into the tracked tree;
# docs/performance.md holds the reference figures.
bench: bench-deps
	@$(MAKE) --no-print-directory $(CHECK_J) $(BENCHES)
	@BENCH_OUT=$(B)/bench-results sh bench/run $(BENCHES)

# Instructions per item from callgrind, on a -march=x86-64-v2 build
# (valgrind 3.19 cannot decode AVX-512).
# The sweep and the footprint have no one-thread timed case to count.
BENCHES_INSTR := $(patsubst $(B)/%,build/instr/%,$(filter-out %/sweep %/footprint,$(BENCHES)))
bench-instr: bench-deps
	@$(MAKE) --no-print-directory B=build/instr BENCH_MARCH=-march=x86-64-v2 \
		$(BENCHES_INSTR)
	@sh scripts/bench-instr $(BENCHES_INSTR)

# ---------------------------------------------------------------- install
# The .pc and CMake files name the install's own directories (never
# DESTDIR). They depend on a stamp holding those directories, rewritten only
# when they change, so `make && make install PREFIX=/x` regenerates them.
# Each @NAME@ of a *.in file is replaced from SUBST; modules add theirs.
$(B)/pc.vars: FORCE
	@mkdir -p $(dir $@)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(SUBST)' ]; then echo '$(SUBST)' > $@; fi

# sed -e 's|@NAME@|value|g' for each NAME=value of SUBST.
lfp_subst = sed $(foreach v,$(SUBST),-e 's|@$(firstword $(subst =, ,$(v)))@|$(patsubst $(firstword $(subst =, ,$(v)))=%,%,$(v))|g')

$(B)/%.pc: %.pc.in $(B)/pc.vars
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	$(Q)$(lfp_subst) $< > $@

$(B)/cmake/%: cmake/%.in $(B)/pc.vars
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	$(Q)$(lfp_subst) $< > $@

# Man pages: the roff pages docs/man/*.3 are generated from docs/man/*.3.md
# by `make docs` and committed, so install needs no pandoc; check-docs keeps
# them in sync. Every name in a page's NAME section other than the page's
# own is installed as a symbolic link to the page (scripts/man-names), so
# that `man NAME` and `man -l man3/NAME.3` both show it: the NAME section is
# their only source, and there is nothing else to keep in sync.
MAN_SRCS := $(wildcard docs/man/*.3.md)
MANS     := $(MAN_SRCS:.md=)

docs:
	@command -v pandoc >/dev/null 2>&1 || { echo "make docs: pandoc not found (Debian: apt-get install pandoc)" >&2; exit 1; }
	@for md in $(MAN_SRCS); do \
		printf '  %-6s %s\n' MAN $${md%.md}; \
		sh scripts/man-gen $$md > $${md%.md}.tmp && mv $${md%.md}.tmp $${md%.md} || exit 1; \
	done

# Like all, `make install` checks the core's dependencies first; a module
# whose dependencies are missing prints its note and installs nothing.
install: deps-core
	@$(MAKE) --no-print-directory install-build

install-build: all-build install-core $(BINDING_INSTALL)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null 2>&1; then $(LDCONFIG); fi

.PHONY: install-core
install-core: $(B)/lfpoll.pc $(CMAKE_FILES)
	install -d $(DESTDIR)$(includedir)/lfpoll/internal $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(cmakedir)
	install -m 644 $(HEADERS) $(DESTDIR)$(includedir)/lfpoll/
	install -m 644 $(INTERNAL) $(DESTDIR)$(includedir)/lfpoll/internal/
	install -m 644 $(B)/lfpoll.pc $(DESTDIR)$(pkgconfigdir)/
	install -m 644 $(CMAKE_FILES) $(DESTDIR)$(cmakedir)/
	install -d $(DESTDIR)$(mandir)/man3
	install -m 644 $(MANS) $(DESTDIR)$(mandir)/man3/
	@sh scripts/man-names $(MAN_SRCS) | while read page name; do \
		[ "$$name" = "$$page" ] && continue; \
		ln -sf "$$page.3" '$(DESTDIR)$(mandir)/man3/'"$$name.3" || exit 1; \
	done
	@echo "installed $(words $(MANS)) man pages and their links in $(DESTDIR)$(mandir)/man3"

uninstall: $(BINDING_UNINSTALL)
	rm -rf $(DESTDIR)$(includedir)/lfpoll
	rm -f $(DESTDIR)$(pkgconfigdir)/lfpoll.pc
	rm -f $(addprefix $(DESTDIR)$(cmakedir)/,$(notdir $(CMAKE_FILES)))
	@rmdir $(DESTDIR)$(cmakedir) 2>/dev/null || :
	rm -f $(addprefix $(DESTDIR)$(mandir)/man3/,$(notdir $(MANS)))
	@sh scripts/man-names $(MAN_SRCS) | while read page name; do \
		rm -f '$(DESTDIR)$(mandir)/man3/'"$$name.3"; done

# The one clean rule: every build directory, the fragments' included
# (tests/*.mk and bench/bench.mk append theirs to CLEAN_DIRS).
clean:
	rm -rf $(sort $(CLEAN_DIRS))

-include $(shell find $(B) -name '*.d' 2>/dev/null)
