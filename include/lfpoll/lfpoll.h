/*
 * lfpoll: the umbrella header.  Includes every core header.
 */
#ifndef LFPOLL_LFPOLL_H
#define LFPOLL_LFPOLL_H

#include "common.h"
#include "ring.h"
#include "pollfd.h"
#include "wait.h"
#include "poll.h"
#include "eq.h"
#include "cq.h"
#include "cntr.h"

#endif /* LFPOLL_LFPOLL_H */
