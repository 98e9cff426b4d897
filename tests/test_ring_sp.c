/* test_ring.c's tests on a ring opened with LFP_SINGLE_PRODUCER. */
#define RING_FLAGS LFP_SINGLE_PRODUCER
#include "test_ring.c"
