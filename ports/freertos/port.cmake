# SPDX-License-Identifier: BSD-3-Clause
# ports/freertos/port.cmake - included by the top-level CMakeLists.txt when
# MDCOM_PORT=freertos (cross builds). The user's FreeRTOS, the FreeRTOS way:
#
#   FREERTOS_KERNEL_PATH       the kernel source tree (FreeRTOS-Kernel, V10.4
#                              or later; its own CMakeLists.txt builds it).
#                              Empty: a FreeRTOS-Kernel-*.tar.gz found in
#                              MDCOM_THIRD_PARTY_DIR is unpacked into the
#                              build tree (tests, CI)
#   FREERTOS_PORT              the kernel's port (GCC_ARM_CM3, GCC_ARM_CM4F
#                              with -mfloat-abi=softfp/hard, GCC_ARM_CM7, ...)
#   FREERTOS_HEAP              1..5 or a heap source file (default 4)
#   MDCOM_FREERTOS_CONFIG_DIR  the directory of the application's
#                              FreeRTOSConfig.h (or define the target
#                              freertos_config before this runs)
#
# The board files, vector table and runtime are the bare-metal port's
# (MDCOM_BOARD, ports/baremetal/port.cmake) with this port's clock: the
# kernel owns SysTick. Targets: the kernel (freertos_kernel), libmdcom with
# port_freertos.c, and mdcom_bm_runtime, which images link.
set(_frt ${CMAKE_CURRENT_LIST_DIR})
set(FREERTOS_KERNEL_PATH "" CACHE PATH "FreeRTOS-Kernel source tree (empty: unpack MDCOM_THIRD_PARTY_DIR/FreeRTOS-Kernel-*.tar.gz)")
set(FREERTOS_PORT "GCC_ARM_CM3" CACHE STRING "FreeRTOS kernel port (GCC_ARM_CM3, GCC_ARM_CM4F, ...)")
set(FREERTOS_HEAP "4" CACHE STRING "FreeRTOS heap (1..5 or a source file)")
set(MDCOM_FREERTOS_CONFIG_DIR "" CACHE PATH "Directory holding the application's FreeRTOSConfig.h")
set(MDCOM_THIRD_PARTY_DIR "${PROJECT_SOURCE_DIR}/../shared/third_party" CACHE PATH
    "Directory with third-party source tarballs (FreeRTOS-Kernel-*.tar.gz, open-amp, libmetal)")

if(TARGET freertos_kernel)
  set(_frt_kernel "") # the application's (its own add_subdirectory)
elseif(NOT FREERTOS_KERNEL_PATH)
  file(GLOB _frt_tgz "${MDCOM_THIRD_PARTY_DIR}/FreeRTOS-Kernel-*.tar.gz")
  if(NOT _frt_tgz)
    message(FATAL_ERROR "MDCOM_PORT=freertos: set FREERTOS_KERNEL_PATH to a FreeRTOS-Kernel tree "
                        "(no FreeRTOS-Kernel-*.tar.gz in MDCOM_THIRD_PARTY_DIR=${MDCOM_THIRD_PARTY_DIR})")
  endif()
  list(GET _frt_tgz 0 _frt_tgz)
  set(_frt_dst ${CMAKE_BINARY_DIR}/_freertos)
  file(GLOB _frt_dir LIST_DIRECTORIES true "${_frt_dst}/FreeRTOS-Kernel*")
  if(NOT _frt_dir)
    message(STATUS "Unpacking ${_frt_tgz} into ${_frt_dst}")
    file(ARCHIVE_EXTRACT INPUT ${_frt_tgz} DESTINATION ${_frt_dst})
    file(GLOB _frt_dir LIST_DIRECTORIES true "${_frt_dst}/FreeRTOS-Kernel*")
  endif()
  list(GET _frt_dir 0 _frt_kernel)
else()
  set(_frt_kernel ${FREERTOS_KERNEL_PATH})
endif()
if(NOT TARGET freertos_kernel AND NOT EXISTS ${_frt_kernel}/tasks.c)
  message(FATAL_ERROR "FREERTOS_KERNEL_PATH '${_frt_kernel}' is no FreeRTOS-Kernel tree (no tasks.c)")
endif()

if(NOT TARGET freertos_config)
  if(NOT MDCOM_FREERTOS_CONFIG_DIR OR NOT EXISTS ${MDCOM_FREERTOS_CONFIG_DIR}/FreeRTOSConfig.h)
    message(FATAL_ERROR "MDCOM_PORT=freertos: MDCOM_FREERTOS_CONFIG_DIR must name the directory of "
                        "the application's FreeRTOSConfig.h (now '${MDCOM_FREERTOS_CONFIG_DIR}')")
  endif()
  add_library(freertos_config INTERFACE)
  target_include_directories(freertos_config SYSTEM INTERFACE ${MDCOM_FREERTOS_CONFIG_DIR})
endif()
# the kernel is the user's code: its own flags, not mdcom's -Werror (and
# not at all when the application added the kernel itself)
if(NOT TARGET freertos_kernel)
  add_subdirectory(${_frt_kernel} ${CMAKE_BINARY_DIR}/freertos_kernel EXCLUDE_FROM_ALL)
endif()
# FreeRTOSConfig.h declares the hooks it names (mdcom_freertos_task_deleted)
target_include_directories(freertos_config INTERFACE ${_frt})

# the bare-metal runtime (startup, board, cortexm.c) with this port's clock
set(MDCOM_BM_CLOCK_SOURCES ${_frt}/bm_runtime.c)
include(${PROJECT_SOURCE_DIR}/ports/baremetal/port.cmake)
set(MDCOM_PORT_SOURCES ${_frt}/port_freertos.c ${PROJECT_SOURCE_DIR}/ports/baremetal/board_hooks.c)
set_source_files_properties(${_frt}/port_freertos.c ${PROJECT_SOURCE_DIR}/ports/baremetal/board_hooks.c PROPERTIES INCLUDE_DIRECTORIES
  "${PROJECT_SOURCE_DIR}/ports/baremetal;${_frt}")
# platform.h does not declare mdcom_platform_freertos(); mdcom_freertos.h does
set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/port_default.c PROPERTIES
  COMPILE_OPTIONS "-include;${_frt}/mdcom_freertos.h")
target_include_directories(mdcom_bm_runtime PUBLIC ${_frt})
target_link_libraries(mdcom_bm_runtime PUBLIC freertos_kernel)
set(MDCOM_FREERTOS_KERNEL_DIR ${_frt_kernel})
unset(_frt)
