# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: bare-metal Cortex-M33 (ARMv8-M Mainline) with arm-none-eabi-gcc.
# No DSP extension and soft float: CPU0 of the SSE-200 (mps2-an521) has
# neither, and the same flags serve CPU1. The rest is arm-none-eabi.cmake's.
set(MDCOM_CPU_FLAGS "-mcpu=cortex-m33+nodsp -mthumb -mfloat-abi=soft")
include(${CMAKE_CURRENT_LIST_DIR}/arm-none-eabi.cmake)
