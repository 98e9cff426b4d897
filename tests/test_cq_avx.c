/*
 * test_cq.c's tests in a build with 32-byte moves (-mavx where the CPU has
 * AVX: the Makefile), where a CQ copies an entry of 32 to 64 bytes in two
 * overlapping moves instead of a loop of words (lfp__cq_copy).
 */
#include "test_cq.c"
