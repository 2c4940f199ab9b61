/* SPDX-License-Identifier: BSD-3-Clause */
/* ev_internal.h - the waiter count of a FIFO channel (tests only). */
#ifndef MDCOM_TESTS_EV_INTERNAL_H
#define MDCOM_TESTS_EV_INTERNAL_H
#include <stdint.h>

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif
uint32_t ev_test_waiters(mdcom_fifoch_t *ch);
#ifdef __cplusplus
}
#endif
#endif
