#include <lfpoll/eq.h>
#include <stdio.h>

int main(void)
{
	struct lfp_eq_attr attr = { .size = 64, .wait_obj = LFP_WAIT_FD };
	struct lfp_eq *eq;
	uint32_t event;
	char msg[64];

	if (lfp_eq_open(&attr, &eq, NULL))
		return 1;
	lfp_eq_write(eq, LFP_EVENT_USER, "hello", 6, 0);   /* any thread */
	if (lfp_eq_sread(eq, &event, msg, sizeof(msg), 1000, 0) > 0)
		printf("event %u: %s\n", event, msg);           /* prints hello */
	return lfp_eq_close(eq) ? 1 : 0;
}
