/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cortexm.h - the generic Cortex-M (ARMv7-M) parts of the bare-metal port:
 * system registers, interrupt masking, SysTick clock, semihosting, and the
 * interface a board file implements (see board.h).
 *
 * Nothing here is board specific: SCB, SysTick and NVIC are architectural
 * (ARMv7-M ARM, B3.2-B3.4), semihosting is the Arm semihosting specification
 * (BKPT 0xAB on M profile).
 */
#ifndef MDCOM_BM_CORTEXM_H
#define MDCOM_BM_CORTEXM_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MDCOM_BM_REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

/* System control space (architectural addresses). */
#define SCB_ICSR MDCOM_BM_REG(0xE000ED04u)
#define SCB_VTOR MDCOM_BM_REG(0xE000ED08u)
#define SCB_AIRCR MDCOM_BM_REG(0xE000ED0Cu)
#define SCB_SHCSR MDCOM_BM_REG(0xE000ED24u)
#define SCB_CFSR MDCOM_BM_REG(0xE000ED28u)
#define SCB_HFSR MDCOM_BM_REG(0xE000ED2Cu)
#define SCB_MMFAR MDCOM_BM_REG(0xE000ED34u)
#define SCB_BFAR MDCOM_BM_REG(0xE000ED38u)
#define SCB_ICSR_PENDSTSET (1u << 26)
#define SCB_AIRCR_RESET (0x05FA0000u | (1u << 2)) /* VECTKEY | SYSRESETREQ */

#define SYST_CSR MDCOM_BM_REG(0xE000E010u)
#define SYST_RVR MDCOM_BM_REG(0xE000E014u)
#define SYST_CVR MDCOM_BM_REG(0xE000E018u)
#define SYST_CSR_ENABLE 0x1u
#define SYST_CSR_TICKINT 0x2u
#define SYST_CSR_CLKSOURCE 0x4u /* processor clock */

#define NVIC_ISER(n) MDCOM_BM_REG(0xE000E100u + 4u * (n))
#define NVIC_ICPR(n) MDCOM_BM_REG(0xE000E280u + 4u * (n))
#define NVIC_IPR8(n) (*(volatile uint8_t *)(uintptr_t)(0xE000E400u + (n)))

static inline uint32_t mdcom_bm_irq_save(void)
{
    uint32_t pm;
    __asm__ __volatile__("mrs %0, primask\n cpsid i" : "=r"(pm)::"memory");
    return pm;
}

static inline void mdcom_bm_irq_restore(uint32_t pm)
{
    __asm__ __volatile__("msr primask, %0" ::"r"(pm) : "memory");
}

static inline void mdcom_bm_irq_enable(void) { __asm__ __volatile__("cpsie i" ::: "memory"); }
static inline void mdcom_bm_wfi(void) { __asm__ __volatile__("dsb\n wfi" ::: "memory"); }
static inline void mdcom_bm_dmb(void) { __asm__ __volatile__("dmb" ::: "memory"); }

static inline void mdcom_bm_nvic_enable(uint32_t irq, uint8_t prio)
{
    NVIC_IPR8(irq) = prio;
    NVIC_ICPR(irq / 32u) = 1u << (irq % 32u);
    NVIC_ISER(irq / 32u) = 1u << (irq % 32u);
}

/* ------------------------------------------------------------------ */
/* SysTick clock (cortexm.c)                                            */
/* ------------------------------------------------------------------ */

/* Start SysTick on the processor clock (cpu_hz) with an interrupt every
 * period_ticks (<= 2^24) ticks; now_ns() extends it to 64 bits. The wait of
 * the doorbell relies on this interrupt to end WFI at its timeout, so the
 * period bounds how late a timed-out wait returns (1 ms: cpu_hz / 1000).
 * period_ticks 0 runs SysTick free (reload 2^24 - 1) without interrupt:
 * for instruction counting (mdcom_bm_ticks), where no interrupt may land
 * inside the measured code; now_ns() is then valid only across < 2^24 ticks. */
void mdcom_bm_systick_start(uint32_t cpu_hz, uint32_t period_ticks);
/* Monotonic nanoseconds since systick_start (callable with IRQs masked). */
uint64_t mdcom_bm_now_ns(void);
/* The raw down-counter (for short intervals: (a - b) & 0xffffff). */
static inline uint32_t mdcom_bm_ticks(void) { return SYST_CVR; }
/* SysTick interrupt handler (installed by startup.c). */
void SysTick_Handler(void);
/* Fault vectors (cortexm.c): report the fault registers and exit(3). */
void HardFault_Handler(void);

/* ------------------------------------------------------------------ */
/* Semihosting (cortexm.c). Only when the debugger/QEMU enables it       */
/* (QEMU: -semihosting-config enable=on,target=native); otherwise a BKPT */
/* faults.                                                               */
/* ------------------------------------------------------------------ */
void mdcom_bm_semihost_write0(const char *s);
/* Terminate the simulation with exit status code (SYS_EXIT_EXTENDED). */
__attribute__((noreturn)) void mdcom_bm_semihost_exit(int code);

/* ------------------------------------------------------------------ */
/* Console and exit (cortexm.c, over the board's console)               */
/* ------------------------------------------------------------------ */
void mdcom_bm_puts(const char *s);
void mdcom_bm_put_u32(uint32_t v);
void mdcom_bm_put_i32(int32_t v);
void mdcom_bm_put_hex(uint32_t v);
/* " key=value" (value in decimal), the field format of the test firmware's
 * report lines. */
void mdcom_bm_put_kv(const char *key, uint32_t v);
/* "RESULT <name> PASS" or "... FAIL" (no newline: fields may follow); 1 when
 * !ok, for the caller's failure count. */
int mdcom_bm_result(const char *name, int ok);
/* Print "exit <code>" on the console, then leave through semihosting (or
 * spin with interrupts masked when the board has no semihosting). */
__attribute__((noreturn)) void mdcom_bm_exit(int code);
/* Request a system reset (SCB AIRCR.SYSRESETREQ). */
__attribute__((noreturn)) void mdcom_bm_reset(void);

/* ------------------------------------------------------------------ */
/* Doorbell (port_baremetal.c)                                           */
/* ------------------------------------------------------------------ */
/* Called by the board's doorbell interrupt handler: a peer rang (once per
 * ring it can tell apart: a UART byte, an MHU interrupt). */
void mdcom_bm_doorbell_raise(void);
/* Rings seen since boot (statistics). */
uint32_t mdcom_bm_doorbell_count(void);

/* Process identity of this image (port_baremetal.c): pid and token written
 * into the region's process table. The pid is foreign (MDCOM_PID_FOREIGN,
 * mdcom/platform.h), the token changes at every boot (see port_baremetal.c). */
#define MDCOM_BM_PID (MDCOM_PID_FOREIGN | 1u)
uint32_t mdcom_bm_boot_token(void);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_BM_CORTEXM_H */
