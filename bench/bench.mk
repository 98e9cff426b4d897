# Per-benchmark flags, included by the top-level Makefile:
#   BENCH_CFLAGS_<name>, BENCH_LDLIBS_<name>   for bench/<name>.c
# Each optional peer is compiled in only when it is found here; otherwise the
# benchmark prints its rows as "skipped (reason)".

# Rebuild the benchmarks when these flags change.
$(BENCHES): bench/bench.mk

# ---------------------------------------------------------------- peers
# Concurrency Kit ck_ring (header only, like the ck_pr lfpoll already uses).
BENCH_HAVE_CK_RING := $(shell $(CC) $(CK_CFLAGS) -include ck_ring.h -E -x c /dev/null >/dev/null 2>&1 && echo 1)

# DPDK rte_ring without EAL.  pkg-config's -march=corei7 would override the
# benchmark's -march=native, so it is dropped; the -include rte_config.h stays.
BENCH_DPDK_CFLAGS := $(filter-out -march=% -mcpu=% -mtune=%,$(DPDK_CFLAGS))
BENCH_HAVE_DPDK := $(shell $(PKG_CONFIG) --exists libdpdk 2>/dev/null && \
	$(CC) $(BENCH_DPDK_CFLAGS) -include rte_ring_elem.h -E -x c /dev/null >/dev/null 2>&1 && echo 1)

# ---------------------------------------------------------------- ring
ifeq ($(BENCH_HAVE_CK_RING),1)
  BENCH_CFLAGS_ring += -DHAVE_CK_RING
endif
ifeq ($(BENCH_HAVE_DPDK),1)
  BENCH_CFLAGS_ring += -DHAVE_DPDK $(BENCH_DPDK_CFLAGS)
  BENCH_LDLIBS_ring += -lrte_ring -lrte_eal
endif

# eq
BENCH_LDLIBS_eq := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)
BENCH_CFLAGS_eq := $(if $(BENCH_LDLIBS_eq),-DHAVE_FABRIC $(shell $(PKG_CONFIG) --cflags libfabric 2>/dev/null))

# poll
BENCH_LDLIBS_poll := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)
BENCH_CFLAGS_poll := $(if $(BENCH_LDLIBS_poll),-DHAVE_FABRIC)

# verbs: the binding against raw libibverbs on the device-free context of
# support/vf (shared with the verbs tests, no test code), linked with its
# read/close/ibv_get_device_list interposers.
BENCH_CFLAGS_verbs := -Ibindings/verbs -Isupport/vf
BENCH_LDLIBS_verbs := support/vf/vf.c $(VERBS_A) -libverbs -ldl \
	-Wl,--export-dynamic-symbol=read -Wl,--export-dynamic-symbol=close \
	-Wl,--export-dynamic-symbol=ibv_get_device_list
$(B)/bench/verbs: $(VERBS_A) support/vf/vf.c support/vf/vf.h
