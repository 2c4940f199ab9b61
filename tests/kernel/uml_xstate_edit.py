#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Edits an unpacked Linux source tree so that its User-Mode Linux (x86_64)
saves and restores the full register state of its processes on any host.

Why: UML keeps each thread's FPU state in a fixed buffer of FP_SIZE longs
(2696 bytes: x87 up to PKRU, AVX-512 included) and hands that buffer to
ptrace(PTRACE_SETREGSET, NT_X86_XSTATE). The host kernel accepts only a buffer
of exactly its own standard-format XSAVE size (arch/x86/kernel/fpu/regset.c:
count != fpu_user_cfg.max_size gives EFAULT). On hosts with AMX that size is
larger (tile data alone is 8 KiB), so the first register restore fails and
init is killed ("ptrace set fp regs failed, errno = 14").

What: ptrace goes through a bounce buffer of the host's size, learnt at boot
from CPUID leaf 0xD and checked against the size the host kernel reports for
the regset. UML's per-thread buffer stays as it is: every state component
that lies wholly inside it is saved and restored; components beyond it (AMX
tile config and data: a UML process cannot enable them, as UML has no
arch_prctl(ARCH_REQ_XCOMP_PERM)) are written back in their init state by
clearing their bits in XSTATE_BV. The same path runs on hosts whose XSAVE
area is smaller than FP_SIZE (copying only the host's size). Not taken: the
FXSAVE-only fallback (have_xstate_support = 0), which would lose AVX and
AVX-512 state of guest threads across context switches.

Boot prints one line, "x86/um: XSTATE host N bytes (CPUID 0xD: M), ..."
(tests/kernel checks it). The edit is idempotent and fails loudly when the
source does not have the expected shape.

Usage: uml_xstate_edit.py <linux source dir>
"""
import sys

import kernel_edit

MARK = "mdcom: XSTATE bounce buffer"

HELPERS = r'''int have_xstate_support;

/*
 * mdcom: XSTATE bounce buffer (tests/kernel/uml_xstate_edit.py in mdcom).
 * PTRACE_SETREGSET NT_X86_XSTATE needs exactly the host's standard-format
 * XSAVE size, which exceeds FP_SIZE longs on hosts with AMX. ptrace uses a
 * buffer of the host's size; the components that fit in FP_SIZE longs are
 * kept, the others (AMX) are restored in their init state.
 */
#include <cpuid.h>
#include <string.h>
#include <os.h>

#define XSTATE_UML_BYTES (FP_SIZE * sizeof(unsigned long))
#define XSTATE_BV_WORD (512 / sizeof(unsigned long)) /* first word of the XSAVE header */
#define XSTATE_PROBE_BYTES (64 * 1024)

static unsigned long xstate_host_bytes;
static unsigned long *xstate_bounce;
static unsigned long long xstate_keep_mask;

static unsigned long xstate_copy_bytes(void)
{
	return xstate_host_bytes < XSTATE_UML_BYTES ? xstate_host_bytes : XSTATE_UML_BYTES;
}

static int xstate_get(int pid, unsigned long *fp_regs)
{
	struct iovec iov = { .iov_base = xstate_bounce, .iov_len = xstate_host_bytes };

	if (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) < 0)
		return -errno;
	memcpy(fp_regs, xstate_bounce, xstate_copy_bytes());
	return 0;
}

static int xstate_set(int pid, unsigned long *fp_regs)
{
	struct iovec iov = { .iov_base = xstate_bounce, .iov_len = xstate_host_bytes };
	unsigned long n = xstate_copy_bytes();

	memcpy(xstate_bounce, fp_regs, n);
	if (xstate_host_bytes > n) {
		memset((char *)xstate_bounce + n, 0, xstate_host_bytes - n);
		xstate_bounce[XSTATE_BV_WORD] &= xstate_keep_mask;
	}
	if (ptrace(PTRACE_SETREGSET, pid, NT_X86_XSTATE, &iov) < 0)
		return -errno;
	return 0;
}

/* Learns the host's XSTATE size from CPUID 0xD and from the host kernel
 * (PTRACE_GETREGSET reports the regset's length), and which components fit
 * in UML's buffer. 0, or -errno (no XSTATE regset on this host). */
static int xstate_init(int pid)
{
	unsigned int eax, ebx, ecx, edx, lo, hi, i;
	unsigned long long xcr0, keep = 3; /* x87 and SSE: the legacy area */
	struct iovec iov;
	void *probe;

	__cpuid_count(0xd, 0, eax, ebx, ecx, edx);
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xcr0 = lo | (unsigned long long)hi << 32;
	probe = malloc(XSTATE_PROBE_BYTES);
	if (probe == NULL)
		panic("x86/um: no memory for the XSTATE probe");
	iov.iov_base = probe;
	iov.iov_len = XSTATE_PROBE_BYTES;
	if (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) < 0) {
		int err = -errno;

		free(probe);
		return err;
	}
	free(probe);
	if (iov.iov_len >= XSTATE_PROBE_BYTES || iov.iov_len < 576)
		panic("x86/um: host XSTATE regset of %lu bytes", (unsigned long)iov.iov_len);
	xstate_host_bytes = iov.iov_len;
	xstate_bounce = malloc(xstate_host_bytes);
	if (xstate_bounce == NULL)
		panic("x86/um: no memory for the XSTATE buffer");
	for (i = 2; i < 63; i++) {
		unsigned int size, offset;

		if (!(xcr0 & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, size, offset, ecx, edx);
		if ((unsigned long)offset + size <= XSTATE_UML_BYTES)
			keep |= 1ULL << i;
	}
	xstate_keep_mask = keep;
	os_info("x86/um: XSTATE host %lu bytes (CPUID 0xD: %u), UML %lu bytes, "
		"XCR0 0x%llx, kept 0x%llx, init state 0x%llx\n",
		xstate_host_bytes, ebx, (unsigned long)XSTATE_UML_BYTES,
		xcr0, xcr0 & keep, xcr0 & ~keep);
	return 0;
}
'''

GET_OLD = '''\t\tiov.iov_base = fp_regs;
\t\tiov.iov_len = FP_SIZE * sizeof(unsigned long);
\t\tif (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) < 0)
\t\t\treturn -errno;
\t\treturn 0;
'''
GET_NEW = '''\t\t(void)iov;
\t\treturn xstate_get(pid, fp_regs);
'''
SET_OLD = GET_OLD.replace("GETREGSET", "SETREGSET")
SET_NEW = GET_NEW.replace("xstate_get", "xstate_set")
INIT_OLD = '''\tif (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) == 0)
\t\thave_xstate_support = 1;
'''
INIT_NEW = '''\tif (ptrace(PTRACE_GETREGSET, pid, NT_X86_XSTATE, &iov) == 0 &&
\t    xstate_init(pid) == 0)
\t\thave_xstate_support = 1;
'''


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kernel_edit.apply("uml_xstate_edit", sys.argv[1], "arch/x86/um/os-Linux/registers.c", MARK,
                      [("int have_xstate_support;\n", HELPERS, "have_xstate_support definition"),
                       (GET_OLD, GET_NEW, "PTRACE_GETREGSET of save_fp_registers"),
                       (SET_OLD, SET_NEW, "PTRACE_SETREGSET of restore_fp_registers"),
                       (INIT_OLD, INIT_NEW, "XSTATE probe of arch_init_registers")],
                      "XSTATE bounce buffer sized from the host")


if __name__ == "__main__":
    main()
