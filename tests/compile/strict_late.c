/* Strict C11 with no feature-test macro, a system header first: the C
 * library hides POSIX, and lfpoll must stop with a message that says what
 * to do.  tests/compile.mk requires this file NOT to compile, with that
 * message (and the same for one_header.c, lfpoll's header first). */
#include <stdio.h>
#include <lfpoll/eq.h>

int main(void)
{
	return 0;
}
