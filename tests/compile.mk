# User-style compile checks, included by the top-level Makefile and run by
# `make check` (through check-compile):
#
#   tests/compile/user_*.c   correct user programs: each must build and run
#                            at -O2 and -O3 with -Wall -Wextra -Werror under
#                            gcc and clang (no "may be used uninitialized"
#                            from any public call)
#   tests/compile/strict_late.c
#                            -std=c11 with no feature macro, a system header
#                            first, and the same with lfpoll's header first
#                            (one_header.c): each must fail with lfpoll's own
#                            message naming the fix, not deep inside ring.h
#   tests/compile/include_first.c
#                            lfpoll first, then POSIX, BSD and GNU calls, with
#                            -Werror: -std=gnu11 and -std=c11
#                            -D_POSIX_C_SOURCE=200809L under gcc and clang,
#                            C++17 under g++ and clang++; built and run (the
#                            headers must define no feature-test macro)
#   tests/compile/abi_layout.c
#                            the layouts a compiled binding relies on, pinned
#                            to LFP_ABI_VERSION: fails when one moves and the
#                            version does not
#   tests/test_cq.c          compiled (not run) with gcc -O3 -Werror: its
#                            single reads into entries of each format once
#                            drew -Wstringop-overflow from the CQ's copy
#                            loop, unrolled past sizes ruled out at run time

USER_COMPILE_SRCS := $(wildcard tests/compile/user_*.c)
USER_COMPILE_OUT  := $(B)/compile/user

.PHONY: check-user-compile

check-user-compile: $(USER_COMPILE_SRCS) tests/compile/strict_late.c \
		tests/compile/abi_layout.c tests/test_cq.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(USER_COMPILE_OUT)
	$(Q)$(CC) $(STD_C) $(WARN) -Iinclude $(CK_CFLAGS) -c tests/compile/abi_layout.c \
		-o $(USER_COMPILE_OUT)/abi_layout.o
	$(Q)$(CC) $(STD_C) -O3 $(WARN) -Iinclude $(CK_CFLAGS) $(TEST_CFLAGS) -c tests/test_cq.c \
		-o $(USER_COMPILE_OUT)/test_cq.O3.o
	$(Q)set -e; n=0; \
	for src in $(USER_COMPILE_SRCS); do \
		name=$$(basename $$src .c); \
		for cc in $(CC) $(CLANG); do \
			for opt in -O2 -O3; do \
				out=$(USER_COMPILE_OUT)/$$name.$$(basename $$cc)$$opt; \
				$$cc $(STD_C) $$opt -Wall -Wextra -Werror -Iinclude $(CK_CFLAGS) \
					$$src -o $$out -pthread || \
					{ echo "check-user-compile: $$src failed with $$cc $$opt"; exit 1; }; \
				$$out || { echo "check-user-compile: $$out exited $$?"; exit 1; }; \
				n=$$((n + 1)); \
			done; \
		done; \
	done; \
	for src in tests/compile/strict_late.c tests/compile/one_header.c; do \
		err=$(USER_COMPILE_OUT)/$$(basename $$src .c).strict.err; \
		if $(CC) -std=c11 -Iinclude $(CK_CFLAGS) -DLFP_HEADER='<lfpoll/eq.h>' -c $$src \
			-o $(USER_COMPILE_OUT)/strict.o 2>$$err; then \
			echo "check-user-compile: $$src compiled under -std=c11 with no feature macro; the POSIX guard is gone"; exit 1; \
		fi; \
		grep -q 'compile with -D_POSIX_C_SOURCE=200809L' $$err || \
			{ echo "check-user-compile: $$src failed without lfpoll's message:"; \
			  head -5 $$err; exit 1; }; \
	done; \
	echo "check-user-compile: $$n builds of user programs at -O2/-O3 -Werror (gcc, clang) ran; strict -std=c11 stops with the fix named"

# lfpoll first, then the C library's POSIX, BSD and GNU calls, in each mode.
INCLUDE_FIRST_MODES := '$(CC) -std=gnu11' '$(CC) $(STD_C)' '$(CLANG) -std=gnu11' \
	'$(CLANG) $(STD_C)' '$(CXX) -x c++ -std=c++17' '$(CLANGXX) -x c++ -std=c++17'

.PHONY: check-include-first
check-include-first: tests/compile/include_first.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(USER_COMPILE_OUT)
	$(Q)set -e; n=0; for mode in $(INCLUDE_FIRST_MODES); do \
		n=$$((n + 1)); out=$(USER_COMPILE_OUT)/include_first.$$n; \
		$$mode -O2 -Wall -Wextra -Werror -Iinclude $(CK_CFLAGS) \
			tests/compile/include_first.c -o $$out -pthread || \
			{ echo "check-include-first: failed: $$mode"; exit 1; }; \
		$$out || { echo "check-include-first: $$out ($$mode) exited $$?"; exit 1; }; \
	done; \
	echo "check-include-first: lfpoll first, then POSIX/BSD/GNU calls: $$n modes built with -Werror and ran"

check-compile: check-user-compile check-include-first
