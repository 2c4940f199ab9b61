/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FreeRTOSConfig.h - FreeRTOS on CPU0 of QEMU mps2-an521 (Cortex-M33 at
 * 20 MHz, no FPU, running in the Secure state with no TrustZone split):
 * the kernel port GCC_ARM_CM33_NTZ_NONSECURE run secure-only. Everything
 * else is the an386 test firmware's configuration.
 */
#include "../qemu-freertos/FreeRTOSConfig.h"

#undef configCPU_CLOCK_HZ
#define configCPU_CLOCK_HZ 20000000u /* the an521 SYSCLK */
/* the cores run Secure (ports/baremetal/boards/mps2-an521): tasks return
 * to the secure PSP (EXC_RETURN 0xfffffffd), no calls into a secure side */
#define configRUN_FREERTOS_SECURE_ONLY 1
#define configENABLE_MVE 0
