/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_threadx_apicost.c - mdcom-fw-threadx-apicost: the API-cost rows of
 * mdcom-fw-apicost measured in a ThreadX thread with the scheduler running,
 * through ports/threadx (firmware/common/rtos_apicost.c). One application
 * thread; nothing else is ready while it measures.
 */
#include "tx_api.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom_threadx.h"

#define STACK_BYTES 4096u
#define FW_STR_(x) #x
#define FW_STR(x) FW_STR_(x)

void apicost_rtos_main(const char *image);

static TX_THREAD g_thread;
static UCHAR g_stack[STACK_BYTES] __attribute__((aligned(8)));

static void fault(const char *what)
{
    mdcom_bm_puts("apicost: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(4);
}

#ifdef TX_ENABLE_STACK_CHECKING
static VOID stack_error(TX_THREAD *t)
{
    (void)t;
    fault("stack overflow");
}
#endif

static VOID entry(ULONG arg)
{
    (void)arg;
    apicost_rtos_main("mdcom-fw-threadx-apicost (ThreadX " FW_STR(THREADX_MAJOR_VERSION) "." FW_STR(
        THREADX_MINOR_VERSION) "." FW_STR(THREADX_PATCH_VERSION) ")");
}

/* ThreadX calls it from tx_kernel_enter, before the scheduler. */
VOID tx_application_define(VOID *first_unused_memory)
{
    (void)first_unused_memory;
#ifdef TX_ENABLE_STACK_CHECKING
    (void)tx_thread_stack_error_notify(stack_error);
#endif
    if (tx_thread_create(&g_thread, (CHAR *)"apicost", entry, 0, g_stack, sizeof(g_stack), 1, 1,
                         TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS)
        fault("tx_thread_create failed");
}

int main(void)
{
    mdcom_threadx_set_boot_seed(mdcom_bm_boot_token());
    tx_kernel_enter(); /* does not return */
    return 1;
}
