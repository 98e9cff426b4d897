# The libfabric provider's tests (tests/fabric/), included by the top-level
# Makefile. Not part of `make check`: .ci/run runs them.
#
#   make check-fabric      both of these:
#   make check-fabtests    libfabric's unit tests (fabtests 1.17 eq_test,
#                          cq_test, cntr_test, dom_test), built unmodified
#                          from $(FABTESTS) into $(B)/fabtests/, run on the
#                          lfpoll provider and on udp (tests/fabric/run-fabtests);
#                          without $(FABTESTS) it says so and passes
#   make check-prov-edges  tests/fabric/prov_edges.c: old-API readerr and
#                          open flags, on the provider
#   make check-fabdiff     the differential program on a fixed list of seeds
#   make fabdiff           the same for FABDIFF_SECONDS (60) of random seeds
#
# With SANITIZE=address the provider, the fabtests and the differential
# program are all built with ASan+UBSan (the programs load the sanitizer
# runtime before libfabric opens the provider).

FABTESTS ?= ../shared/reference/fabtests-1.17
FABDIFF_SECONDS ?= 60

FT_OUT    := $(B)/fabtests
FT_TESTS  := $(addprefix $(FT_OUT)/,eq_test cq_test cntr_test dom_test)
FT_COMMON := unit/common.c common/shared.c common/hmem.c common/hmem_cuda.c \
             common/hmem_rocr.c common/hmem_ze.c common/hmem_neuron.c
FT_COMMON_OBJS := $(patsubst %.c,$(FT_OUT)/obj/%.o,$(FT_COMMON))
FT_SAN    := $(filter -fsanitize=% -fno-omit-frame-pointer -fno-sanitize-recover=%,$(CFLAGS))
# Their own flags (fabtests' README): not lfpoll's warnings.
FT_CFLAGS := -O1 -g1 -w -D_GNU_SOURCE -I$(FABTESTS)/include -I$(FABTESTS)/include/unix \
             $(FI_CFLAGS) $(FT_SAN)

$(FT_OUT)/obj/%.o: $(FABTESTS)/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(FT_CFLAGS) -c $< -o $@

$(FT_TESTS): $(FT_OUT)/%: $(FT_OUT)/obj/unit/%.o $(FT_COMMON_OBJS)
	$(call say,LD,$@)
	$(Q)$(CC) $(FT_SAN) $^ -o $@ $(FI_LIBS) -lpthread -ldl -lm

.PHONY: check-fabric check-fabtests check-fabdiff fabdiff fabric-deps \
	fabtests-run check-prov-edges prov-edges-run

fabric-deps:
	@$(ENSURE) libfabric-dev

check-fabric: fabric-deps
	@$(MAKE) --no-print-directory fabtests-run
	@$(MAKE) --no-print-directory prov-edges-run
	@$(MAKE) --no-print-directory fabdiff-run FABDIFF_ARGS=--quick
ifeq ($(SANITIZE),)
	@$(MAKE) --no-print-directory fabdiff-clockjump-run
endif

check-fabtests: fabric-deps
	@$(MAKE) --no-print-directory fabtests-run

fabtests-run:
	@if [ ! -d '$(FABTESTS)/unit' ]; then \
		echo "check-fabtests: $(FABTESTS) not found: libfabric's unit tests not run"; \
		exit 0; \
	fi; \
	$(MAKE) -s --no-print-directory $(FABRIC_SO) $(FT_TESTS) && \
	sh tests/fabric/run-fabtests '$(abspath $(dir $(FABRIC_SO)))' $(FT_TESTS) && \
	d=$$(mktemp -d) && \
	$(MAKE) --no-print-directory install-fabric PREFIX=$$d >/dev/null && \
	if sh tests/fabric/run-fabtests "$$d/lib/libfabric" $(FT_OUT)/eq_test >$$d/log 2>&1; then \
		echo "check-fabtests: eq_test passes on the provider as make install places it"; \
		rm -rf $$d; \
	else \
		cat $$d/log; echo "check-fabtests: FAILED on the installed provider"; rm -rf $$d; exit 1; \
	fi

# The differential program (tests/fabric/fabdiff.c): libfabric's API only,
# lfpoll's provider beside udp and tcp in one process. Every difference it
# finds must be a divergence the porting guide lists (--doc).
FABDIFF     := $(B)/tests/fabric/fabdiff
FABDIFF_DOC := docs/porting-from-libfabric.md

$(FABDIFF): tests/fabric/fabdiff.c $(FABRIC_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(FABRIC_DIR) $(FI_CFLAGS) $< -o $@ $(LDFLAGS) $(FI_LIBS)

.PHONY: fabdiff-run
fabdiff-run: $(FABRIC_SO) $(FABDIFF)
	@env -u FI_PROVIDER FI_PROVIDER_PATH='$(abspath $(dir $(FABRIC_SO)))' \
		$(FABDIFF) --doc $(FABDIFF_DOC) $(FABDIFF_ARGS)

# fabdiff under a clock that jumps 5 ms at every read (clockjump.c), on
# fixed seeds: every timed wait of the baselines times out before it
# scans, an outcome fabdiff's shadow must allow for.  Without sanitizers
# only (a sanitizer's runtime must be the first library loaded).
CLOCKJUMP := $(B)/tests/fabric/clockjump.so

$(CLOCKJUMP): tests/fabric/clockjump.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC $< -o $@ -ldl

.PHONY: fabdiff-clockjump-run
fabdiff-clockjump-run: $(FABRIC_SO) $(FABDIFF) $(CLOCKJUMP)
	@echo "fabdiff, with a clock that jumps 5 ms at every read:"
	@env -u FI_PROVIDER FI_PROVIDER_PATH='$(abspath $(dir $(FABRIC_SO)))' \
		LD_PRELOAD='$(abspath $(CLOCKJUMP))' \
		$(FABDIFF) --seed 1 --count 300

# The provider's edges fabtests and fabdiff do not reach (prov_edges.c).
PROV_EDGES := $(B)/tests/fabric/prov_edges

$(PROV_EDGES): tests/fabric/prov_edges.c $(FABRIC_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(FABRIC_DIR) $(FI_CFLAGS) $< -o $@ $(LDFLAGS) $(FI_LIBS)

prov-edges-run: $(FABRIC_SO) $(PROV_EDGES)
	@env -u FI_PROVIDER FI_PROVIDER_PATH='$(abspath $(dir $(FABRIC_SO)))' \
		$(PROV_EDGES)

check-prov-edges: fabric-deps
	@$(MAKE) --no-print-directory prov-edges-run

check-fabdiff: fabric-deps
	@$(MAKE) --no-print-directory fabdiff-run FABDIFF_ARGS=--quick

fabdiff: fabric-deps
	@$(MAKE) --no-print-directory fabdiff-run FABDIFF_ARGS='--seconds $(FABDIFF_SECONDS)'
