/* test_ring.c's tests on a ring opened with LFP_SINGLE_CONSUMER. */
#define RING_FLAGS LFP_SINGLE_CONSUMER
#include "test_ring.c"
