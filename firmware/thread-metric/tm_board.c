/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_board.c - what a Thread-Metric image needs from the board, the same for
 * every RTOS (mps2-an386 under QEMU, ports/baremetal's startup, vector table,
 * console and semihosting exit):
 *
 *   tm_cause_interrupt  TM_CAUSE_INTERRUPT of the two interrupt tests: pends
 *                       TM_IRQ (an NVIC line no device of the board drives)
 *                       through NVIC ISPR, then DSB + ISB, so the interrupt
 *                       (and any thread it readied) has run before the
 *                       caller's next instruction
 *   mdcom_bm_app_irq    the board file's hook for interrupts it does not own:
 *                       TM_IRQ calls TM_IRQ_HANDLER, the test's handler
 *                       (tm_interrupt_handler or
 *                       tm_interrupt_preemption_handler; none in other tests)
 *   printf              the tests' only library call: a minimal formatter
 *                       (%d %i %u %x %s %c %%, l modifier) onto UART0. After
 *                       TM_PERIODS "Time Period Total:" lines the image
 *                       exits (semihosting, status 0): the tests themselves
 *                       report for ever
 *   TM_TRAFFIC          the traffic images (tm_traffic.h): each report
 *                       line is followed by the messages the mdcom
 *                       receiver got in the period (the kernel's entry
 *                       starts the receiver)
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "tm_port.h"
#ifdef TM_TRAFFIC
#include "tm_traffic.h"
#endif

#ifndef TM_IRQ
#define TM_IRQ 31u
#endif
#ifndef TM_IRQ_PRIO
#define TM_IRQ_PRIO 0x40u /* an RTOS may be called from it (FreeRTOS: >= configMAX_SYSCALL_...) */
#endif
#ifndef TM_PERIODS
#define TM_PERIODS 1
#endif

#define NVIC_ISPR(n) MDCOM_BM_REG(0xE000E200u + 4u * (n))

#ifdef TM_IRQ_HANDLER
void TM_IRQ_HANDLER(void);
#endif

void tm_board_init(void) { mdcom_bm_nvic_enable(TM_IRQ, TM_IRQ_PRIO); }

void tm_cause_interrupt(void)
{
    NVIC_ISPR(TM_IRQ / 32u) = 1u << (TM_IRQ % 32u);
    __asm__ __volatile__("dsb\n isb" ::: "memory");
}

void mdcom_bm_app_irq(uint32_t irq)
{
#ifdef TM_IRQ_HANDLER
    if (irq == TM_IRQ) {
        TM_IRQ_HANDLER();
        return;
    }
#endif
    /* an interrupt nobody enabled: the run is not what it claims */
    mdcom_bm_puts("FAULT unexpected IRQ ");
    mdcom_bm_put_u32(irq);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(6);
}

/* ---------------------------------------------------------------- */
/* printf                                                             */
/* ---------------------------------------------------------------- */

static char tm_line[160];
static size_t tm_len;
static unsigned tm_reports;
static unsigned long tm_written; /* characters printf has written */

static void tm_flush(void)
{
    static const char total[] = "Time Period Total:";
    int report;
    tm_line[tm_len] = '\0';
    mdcom_bm_puts(tm_line);
    report = tm_len >= sizeof(total) - 1u && memcmp(tm_line, total, sizeof(total) - 1u) == 0;
    tm_len = 0;
#ifdef TM_TRAFFIC
    if (report)
        tm_traffic_period();
#endif
    if (report && ++tm_reports >= (unsigned)TM_PERIODS)
        mdcom_bm_exit(0);
}

static void tm_putc(char c)
{
    tm_line[tm_len++] = c;
    tm_written++;
    if (c == '\n' || tm_len == sizeof(tm_line) - 1u)
        tm_flush();
}

static void tm_put_num(unsigned long v, unsigned base, int neg)
{
    char buf[24];
    size_t n = 0;
    do {
        buf[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (neg)
        tm_putc('-');
    while (n)
        tm_putc(buf[--n]);
}

int printf(const char *restrict fmt, ...)
{
    va_list ap;
    const char *s;
    unsigned long start = tm_written;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        int lng = 0;
        if (*fmt != '%') {
            tm_putc(*fmt);
            continue;
        }
        if (*++fmt == 'l') {
            lng = 1;
            fmt++;
        }
        switch (*fmt) {
        case 'd':
        case 'i': {
            long v = lng ? va_arg(ap, long) : va_arg(ap, int);
            tm_put_num(v < 0 ? 0ul - (unsigned long)v : (unsigned long)v, 10u, v < 0);
            break;
        }
        case 'u':
            tm_put_num(lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10u, 0);
            break;
        case 'x':
            tm_put_num(lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16u, 0);
            break;
        case 'c':
            tm_putc((char)va_arg(ap, int));
            break;
        case 's':
            for (s = va_arg(ap, const char *); *s; s++)
                tm_putc(*s);
            break;
        case '\0':
            fmt--; /* a lone '%' at the end */
            break;
        default:
            tm_putc(*fmt);
            break;
        }
    }
    va_end(ap);
    return (int)(tm_written - start);
}
