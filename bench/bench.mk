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

# atomic_queue and moodycamel's ConcurrentQueue: C++ headers (their Debian
# packages' libraries are not needed), compiled into bench/peer_cxx.cpp.
BENCH_CXXSTD := -std=c++17
BENCH_HAVE_ATOMIC_QUEUE := $(shell $(CXX) $(BENCH_CXXSTD) -include atomic_queue/atomic_queue.h \
	-E -x c++ /dev/null >/dev/null 2>&1 && echo 1)
BENCH_HAVE_CONCURRENTQUEUE := $(shell $(CXX) $(BENCH_CXXSTD) -include concurrentqueue/concurrentqueue.h \
	-E -x c++ /dev/null >/dev/null 2>&1 && echo 1)

# ---------------------------------------------------------------- ring
ifeq ($(BENCH_HAVE_CK_RING),1)
  BENCH_CFLAGS_ring += -DHAVE_CK_RING
endif
ifeq ($(BENCH_HAVE_DPDK),1)
  BENCH_CFLAGS_ring += -DHAVE_DPDK $(BENCH_DPDK_CFLAGS)
  BENCH_LDLIBS_ring += -lrte_ring -lrte_eal
endif

# The C++ peers, when either is found: bench/peer_cxx.o linked into the
# ring benchmarks.  With
# gcc and g++ of one version the ring benchmark is built with link-time
# optimisation, so that their calls inline into the shared worker loops as
# the C peers' do; otherwise each of their operations is one call.
BENCH_RING_PEERS_D := $(if $(BENCH_HAVE_ATOMIC_QUEUE),-DHAVE_ATOMIC_QUEUE) \
	$(if $(BENCH_HAVE_CONCURRENTQUEUE),-DHAVE_CONCURRENTQUEUE)
ifneq ($(strip $(BENCH_RING_PEERS_D)),)
  BENCH_RING_LTO := $(shell v=$$($(CC) -v 2>&1 | grep '^gcc version') && \
	[ "$$v" = "$$($(CXX) -v 2>&1 | grep '^gcc version')" ] && echo -flto=auto)
  BENCH_CFLAGS_ring += $(BENCH_RING_PEERS_D) $(BENCH_RING_LTO)
  BENCH_LDLIBS_ring += $(B)/bench/peer_cxx.o -lstdc++
  $(B)/bench/ring: $(B)/bench/peer_cxx.o
endif

# No exceptions: the peers' try calls do not throw, and the C caller could
# not catch them.
$(B)/bench/peer_cxx.o: bench/peer_cxx.cpp bench/peer_cxx.h bench/bench.mk
	@mkdir -p $(dir $@)
	$(call say,CXX,$@)
	$(Q)$(CXX) $(filter-out -O2 -g -std=%,$(CXXFLAGS)) $(BENCH_CXXSTD) -O2 -g \
		$(BENCH_MARCH) -fno-exceptions -fno-rtti $(BENCH_RING_PEERS_D) \
		$(BENCH_RING_LTO) -c $< -o $@

# sweep: the ring benchmark's implementations, placed by topology with
# libhwloc (and libnuma for memory, where present); without hwloc it
# builds and says it cannot place anything.
BENCH_HAVE_HWLOC := $(shell $(PKG_CONFIG) --exists hwloc 2>/dev/null && echo 1)
BENCH_HAVE_NUMA := $(shell printf '\043include <numa.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
BENCH_CFLAGS_sweep := $(BENCH_CFLAGS_ring) \
	$(if $(BENCH_HAVE_HWLOC),-DHAVE_HWLOC $(shell $(PKG_CONFIG) --cflags hwloc)) \
	$(if $(BENCH_HAVE_NUMA),-DHAVE_NUMA)
BENCH_LDLIBS_sweep := bench/topo.c $(BENCH_LDLIBS_ring) \
	$(if $(BENCH_HAVE_HWLOC),$(shell $(PKG_CONFIG) --libs hwloc)) \
	$(if $(BENCH_HAVE_NUMA),-lnuma)
$(B)/bench/sweep: bench/topo.c $(if $(BENCH_RING_PEERS_D),$(B)/bench/peer_cxx.o)

# footprint: the call sites of bench/wrappers.c compiled alone with -O2 by
# gcc and by clang, as a user's code would be (no -march; POSIX.1-2008
# visible, as the headers require), read back with
# nm and objdump; a compiler that is missing leaves its rows skipped.
BENCH_WRAP_CLANG := $(shell command -v $(CLANG) >/dev/null 2>&1 && echo 1)
BENCH_WRAPPERS := $(B)/bench/wrappers.gcc.o $(if $(BENCH_WRAP_CLANG),$(B)/bench/wrappers.clang.o)
BENCH_CFLAGS_footprint := -DWRAPPERS_GCC='"$(abspath $(B)/bench/wrappers.gcc.o)"' \
	$(if $(BENCH_WRAP_CLANG),-DWRAPPERS_CLANG='"$(abspath $(B)/bench/wrappers.clang.o)"')
$(B)/bench/footprint: $(BENCH_WRAPPERS)

$(B)/bench/wrappers.gcc.o: bench/wrappers.c $(HEADERS) $(INTERNAL) bench/bench.mk
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)gcc $(STD_C) -O2 $(WARN) -Iinclude $(CK_CFLAGS) -c $< -o $@

$(B)/bench/wrappers.clang.o: bench/wrappers.c $(HEADERS) $(INTERNAL) bench/bench.mk
	@mkdir -p $(dir $@)
	$(call say,CLANG,$@)
	$(Q)$(CLANG) $(STD_C) -O2 $(WARN) -Iinclude $(CK_CFLAGS) -c $< -o $@

# eq, and rtt (the blocking round trips of the same EQs)
BENCH_LDLIBS_eq := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)
BENCH_CFLAGS_eq := $(if $(BENCH_LDLIBS_eq),-DHAVE_FABRIC $(shell $(PKG_CONFIG) --cflags libfabric 2>/dev/null))
BENCH_LDLIBS_rtt := $(BENCH_LDLIBS_eq)
BENCH_CFLAGS_rtt := $(BENCH_CFLAGS_eq)

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
