/* SPDX-License-Identifier: BSD-3-Clause */
/* The vector register check of uml_guest (uml_vecregs.c). */
#ifndef UML_VECREGS_H
#define UML_VECREGS_H

#include <stddef.h>

/* 0: every thread's vector registers survived its context switches; 1: the
 * CPU has no vector state beyond FXSAVE (nothing to check); -1: lost, or not
 * tested. msg says which, in one line. */
int vecregs_check(char *msg, size_t len);

#endif
