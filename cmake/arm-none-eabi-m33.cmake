# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: bare-metal Cortex-M33 (ARMv8-M Mainline) with arm-none-eabi-gcc.
# No DSP extension and soft float: CPU0 of the SSE-200 (mps2-an521) has
# neither, and the same flags serve CPU1.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_SIZE arm-none-eabi-size)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(MDCOM_CPU_FLAGS "-mcpu=cortex-m33+nodsp -mthumb -mfloat-abi=soft")
set(CMAKE_C_FLAGS_INIT "${MDCOM_CPU_FLAGS} -ffreestanding -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${MDCOM_CPU_FLAGS} -nostdlib -nostartfiles -Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
