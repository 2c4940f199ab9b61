/* SPDX-License-Identifier: BSD-3-Clause */
/* ev_internal.c - what test_events.cpp reads of the core's private state. */
#include "ev_internal.h"

#include "internal.h"

uint32_t ev_test_waiters(mdcom_fifoch_t *ch)
{
    /* relaxed: a test's look at a count */
    return atomic_load_explicit(&ch->ctl->event.w[1], memory_order_relaxed);
}
