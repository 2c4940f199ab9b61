/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_main_threadx.c - the entry of a ThreadX Thread-Metric image, as in
 * ThreadX's threadx_example/threadx_tm_*_example.c: main enters the kernel,
 * and tx_application_define runs the test's tm_main (whose tm_initialize,
 * in tm_porting_layer_threadx.c, creates the test's threads; they run once
 * the scheduler starts). Before that, the test interrupt is enabled
 * (tm_board.c), and in the traffic images mdcom's receiver thread is
 * created (tm_traffic_threadx.c).
 */
#include "tx_api.h"

#include "tm_port.h"
#ifdef TM_TRAFFIC
#include "tm_traffic.h" /* the traffic images: mdcom's receiver thread */
#endif

int main(void);
void tm_main(void); /* the test's (each tm_*_test.c has one) */

int main(void)
{
    tm_board_init();
    tx_kernel_enter(); /* does not return */
    return 1;
}

void tx_application_define(void *first_unused_memory)
{
    (void)first_unused_memory;
#ifdef TM_TRAFFIC
    tm_traffic_start();
#endif
    tm_main();
}
