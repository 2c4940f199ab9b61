# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: bare-metal Cortex-M4 with arm-none-eabi-gcc (Debian gcc-arm-none-eabi).
# Another Cortex-M sets MDCOM_CPU_FLAGS and includes this file
# (arm-none-eabi-m33.cmake).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar)
set(CMAKE_RANLIB arm-none-eabi-ranlib)
set(CMAKE_SIZE arm-none-eabi-size)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
if(NOT MDCOM_CPU_FLAGS)
  set(MDCOM_CPU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
endif()
set(CMAKE_C_FLAGS_INIT "${MDCOM_CPU_FLAGS} -ffreestanding -ffunction-sections -fdata-sections")
# assembly too (an RTOS port's context switch: ThreadX's ports/<arch>/gnu/src/*.S)
set(CMAKE_ASM_FLAGS_INIT "${MDCOM_CPU_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${MDCOM_CPU_FLAGS} -nostdlib -nostartfiles -Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
