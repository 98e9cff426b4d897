/* A correct user program that gcc once rejected at -O2 -Werror
 * ("'ws' may be used uninitialized"): an open call's failure paths could
 * return 0 without writing *wsp.  tests/compile.mk builds it. */
#include <lfpoll/wait.h>

int main(void)
{
	struct lfp_wait *ws;

	if (lfp_wait_open(NULL, &ws))
		return 1;
	return lfp_wait(ws, 0) == -ETIMEDOUT ? lfp_wait_close(ws) : 1;
}
