/* Strict C11 with a system header first: the C library has already hidden
 * POSIX, so lfpoll must stop with a message that says what to do.
 * tests/compile.mk requires this file NOT to compile, with that message. */
#include <stdio.h>
#include <lfpoll/eq.h>

int main(void)
{
	return 0;
}
