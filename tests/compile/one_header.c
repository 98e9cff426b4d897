/*
 * Compiled once per public header, alone, as C11 and as C++11 with
 * -Wall -Wextra -Wpedantic -Werror: LFP_HEADER names the header.
 */
#include LFP_HEADER

int lfp_compile_test_anchor(void);
int lfp_compile_test_anchor(void)
{
	return 0;
}
