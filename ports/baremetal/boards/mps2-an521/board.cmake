# SPDX-License-Identifier: BSD-3-Clause
# mps2-an521: ARM MPS2+ AN521, two Cortex-M33 in an SSE-200, QEMU machine
# mps2-an521. One runtime serves both cores (the board file asks the SSE-200
# CPUID register which core it runs on); each core's image links its own
# memory map: memory.ld (CPU0) or, with the target property
# MDCOM_LDSCRIPT set to MDCOM_BOARD_LDSCRIPT_CPU1, memory_cpu1.ld.
set(MDCOM_BOARD_SOURCES ${CMAKE_CURRENT_LIST_DIR}/board.c)
set(MDCOM_BOARD_LDSCRIPT ${CMAKE_CURRENT_LIST_DIR}/memory.ld)
set(MDCOM_BOARD_LDSCRIPT_CPU1 ${CMAKE_CURRENT_LIST_DIR}/memory_cpu1.ld)
set(MDCOM_BOARD_NUM_IRQS 96)
set(MDCOM_BOARD_QEMU_MACHINE mps2-an521)
