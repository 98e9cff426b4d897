# User-style compile checks, included by the top-level Makefile and run by
# `make check` (through check-compile):
#
#   tests/compile/user_*.c   correct user programs: each must build and run
#                            at -O2 and -O3 with -Wall -Wextra -Werror under
#                            gcc and clang (no "may be used uninitialized"
#                            from any public call)
#   tests/compile/strict_late.c
#                            -std=c11 with a system header before lfpoll's:
#                            must fail with lfpoll's own message naming the
#                            fix, not deep inside ring.h
#   tests/compile/abi_layout.c
#                            the layouts a compiled binding relies on, pinned
#                            to LFP_ABI_VERSION: fails when one moves and the
#                            version does not

USER_COMPILE_SRCS := $(wildcard tests/compile/user_*.c)
USER_COMPILE_OUT  := $(B)/compile/user

.PHONY: check-user-compile

check-user-compile: $(USER_COMPILE_SRCS) tests/compile/strict_late.c \
		tests/compile/abi_layout.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(USER_COMPILE_OUT)
	$(Q)$(CC) -std=c11 $(WARN) -Iinclude $(CK_CFLAGS) -c tests/compile/abi_layout.c \
		-o $(USER_COMPILE_OUT)/abi_layout.o
	$(Q)set -e; n=0; \
	for src in $(USER_COMPILE_SRCS); do \
		name=$$(basename $$src .c); \
		for cc in $(CC) $(CLANG); do \
			for opt in -O2 -O3; do \
				out=$(USER_COMPILE_OUT)/$$name.$$(basename $$cc)$$opt; \
				$$cc -std=c11 $$opt -Wall -Wextra -Werror -Iinclude $(CK_CFLAGS) \
					$$src -o $$out -pthread || \
					{ echo "check-user-compile: $$src failed with $$cc $$opt"; exit 1; }; \
				$$out || { echo "check-user-compile: $$out exited $$?"; exit 1; }; \
				n=$$((n + 1)); \
			done; \
		done; \
	done; \
	if $(CC) -std=c11 -Iinclude $(CK_CFLAGS) -c tests/compile/strict_late.c \
		-o $(USER_COMPILE_OUT)/strict_late.o 2>$(USER_COMPILE_OUT)/strict_late.err; then \
		echo "check-user-compile: strict_late.c compiled; the POSIX guard is gone"; exit 1; \
	fi; \
	grep -q 'include an lfpoll header before any system header' \
		$(USER_COMPILE_OUT)/strict_late.err || \
		{ echo "check-user-compile: strict_late.c failed without lfpoll's message:"; \
		  head -5 $(USER_COMPILE_OUT)/strict_late.err; exit 1; }; \
	echo "check-user-compile: $$n builds of user programs at -O2/-O3 -Werror (gcc, clang) ran; strict -std=c11 stops with the fix named"

check-compile: check-user-compile
