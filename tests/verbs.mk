# Verbs tests, included by the top Makefile. Every tests/test_verbs*.c
# (Criterion) and tests/stress_verbs*.c (standalone, so it can run under TSan)
# is linked with the fake context support/vf/vf.c and the real libibverbs;
# all but the fake's own suite also with the static binding. tests/verbs/
# holds the fake (fake.c, fake.h) and the suites' shared helpers (suite.h).
#
# fake.c defines read(), close() and ibv_get_device_list() itself:
# definitions in the executable interpose on libibverbs.so's calls too,
# whereas -Wl,--wrap=read only rewrites the executable's own references and
# never reaches the read() inside ibv_get_cq_event. The export flags keep the
# three in the dynamic symbol table even if no linked library references them.

DEPS_CHECK += $(filter-out $(DEPS_CHECK),libibverbs-dev ibverbs-providers)

VERBS_FAKE    := support/vf/vf.c
VERBS_LDFLAGS := -Wl,--export-dynamic-symbol=read \
                 -Wl,--export-dynamic-symbol=close \
                 -Wl,--export-dynamic-symbol=ibv_get_device_list
VERBS_LDLIBS  := -libverbs -ldl
VERBS_TEST_DEPS := $(VERBS_FAKE) $(wildcard tests/*.h tests/verbs/*.h support/vf/*.h)
# Struct layouts do not depend on LFP_STATS, so the tests may count signals
# while the binding library is built without the macro.
VERBS_TEST_CFLAGS := $(TEST_CFLAGS) -Isupport/vf

# One rule for every verbs program: the Criterion suites (test_*) link
# -lcriterion; all but the fake's own suite (VERBS_NO_BINDING) link the
# static binding. Explicit targets, so they beat the generic
# $(B)/tests/test_% and stress_% rules, and tests/test_verbs.c and
# tests/stress_verbs.c themselves (an empty stem) are covered too.
VERBS_PROGS      := $(patsubst tests/%.c,$(B)/tests/%,\
                    $(wildcard tests/test_verbs*.c tests/stress_verbs*.c))
VERBS_NO_BINDING := $(B)/tests/test_verbs_fake

$(VERBS_PROGS): $(B)/tests/%: tests/%.c $(VERBS_TEST_DEPS) $(VERBS_A) $(VERBS_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(VERBS_TEST_CFLAGS) -Ibindings/verbs $< $(VERBS_FAKE) -o $@ \
		$(LDFLAGS) $(VERBS_LDFLAGS) $(if $(filter $@,$(VERBS_NO_BINDING)),,$(VERBS_A)) \
		$(if $(filter test_%,$*),-lcriterion) $(VERBS_LDLIBS) $(LDLIBS)

# test_verbs fails an allocation of the binding's on purpose (its
# __wrap_calloc): the wrap rewrites the references of the objects linked
# here, the static binding's among them, and none in shared libraries.
$(B)/tests/test_verbs: LDFLAGS += -Wl,--wrap=calloc

# The broken builds of the verbs stress programs (make check-broken; the
# pairs are in STRESS_DEFECTS, tests/sched.mk): the binding's sources
# compiled into the program with the test-only switch, where the other
# builds link the static binding, which has none.
VERBS_BROKEN := $(patsubst tests/%.c,$(B)/tests/broken/%,$(wildcard tests/stress_verbs*.c))

$(VERBS_BROKEN): $(B)/tests/broken/%: tests/%.c $(VERBS_TEST_DEPS) $(VERBS_SRCS) \
		$(wildcard $(VERBS_DIR)/*.h) $(VERBS_HDR) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(VERBS_TEST_CFLAGS) -DLFP_TEST_BROKEN -DLFP_STRESS_BROKEN \
		-Ibindings/verbs $< $(VERBS_SRCS) $(VERBS_FAKE) -o $@ \
		$(LDFLAGS) $(VERBS_LDFLAGS) $(VERBS_LDLIBS) $(LDLIBS)

# The verbs Criterion suites under valgrind. Criterion runs each test in a
# forked worker whose valgrind errors do not reach the runner's exit status,
# so every process writes its own log (empty under -q unless something is
# wrong) and any error or definite leak fails.
VERBS_TESTS := $(filter $(B)/tests/test_verbs%,$(TESTS))
VALGRIND    ?= valgrind

.PHONY: check-verbs-valgrind
check-verbs-valgrind: check-deps $(VERBS_TESTS)
	@command -v $(VALGRIND) >/dev/null || { echo "error: valgrind not installed" >&2; exit 1; }
	@set -e; for t in $(VERBS_TESTS); do \
		d=$$(mktemp -d); \
		echo "  VALGRIND $$t"; \
		$(VALGRIND) -q --trace-children=yes --leak-check=full \
			--show-leak-kinds=definite --errors-for-leak-kinds=definite \
			--error-exitcode=99 --log-file=$$d/vg.%p $$t --jobs 1 \
			>$$d/out 2>&1 || { cat $$d/out $$d/vg.*; rm -rf $$d; exit 1; }; \
		tail -n 1 $$d/out; \
		if grep -q . $$d/vg.* 2>/dev/null; then cat $$d/vg.*; rm -rf $$d; exit 1; fi; \
		rm -rf $$d; \
	done

# The thread build also runs one verbs program built with clang, whose
# ThreadSanitizer runtime is linked into the program (gcc's is a shared
# library): the fake's read() and close() must still hand each call to the
# sanitizer's interceptor there, or TSan misses fd reuse and reports races
# that are not (support/vf/vf.c, vf__next).  The binding's sources are
# compiled in, with clang, as the broken builds do.
ifeq ($(SANITIZE),thread)
VERBS_CLANG_TSAN := $(B)/tests/stress_verbs_share.clang

$(VERBS_CLANG_TSAN): tests/stress_verbs_share.c $(VERBS_TEST_DEPS) $(VERBS_SRCS) \
		$(wildcard $(VERBS_DIR)/*.h) $(VERBS_HDR) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CLANG,$@)
	$(Q)$(CLANG) $(CFLAGS) $(VERBS_TEST_CFLAGS) -Ibindings/verbs $< $(VERBS_SRCS) \
		$(VERBS_FAKE) -o $@ $(LDFLAGS) $(VERBS_LDFLAGS) $(VERBS_LDLIBS) $(LDLIBS)

check-progs: $(VERBS_CLANG_TSAN)
RUN_PROGS += $(VERBS_CLANG_TSAN)
endif
