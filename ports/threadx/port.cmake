# SPDX-License-Identifier: BSD-3-Clause
# ports/threadx/port.cmake - included by the top-level CMakeLists.txt when
# MDCOM_PORT=threadx (cross builds). The user's ThreadX, built by ThreadX's
# own CMake:
#
#   THREADX_PATH        the ThreadX source tree (eclipse-threadx/threadx 6.x:
#                       its top-level CMakeLists.txt). Empty: a
#                       threadx-*.tar.gz found in MDCOM_THIRD_PARTY_DIR is
#                       unpacked into the build tree (tests, CI)
#   THREADX_ARCH        ThreadX's port (cortex_m4, cortex_m3, cortex_m7, ...)
#   THREADX_TOOLCHAIN   its toolchain directory (gnu)
#   TX_USER_FILE        the application's tx_user.h (ThreadX's own variable;
#                       empty: ThreadX's sample, 100 ticks a second)
#
# An application that adds ThreadX itself (target threadx) keeps its own.
# The board files and vector table are the bare-metal port's (MDCOM_BOARD,
# ports/baremetal/port.cmake), with this port's low-level init and clock
# (tx_runtime.c): ThreadX owns SysTick. Targets: threadx, libmdcom with
# port_threadx.c, and mdcom_bm_runtime, which images link.
set(_tx ${CMAKE_CURRENT_LIST_DIR})
set(THREADX_PATH "" CACHE PATH "ThreadX source tree (empty: unpack MDCOM_THIRD_PARTY_DIR/threadx-*.tar.gz)")
# read by ThreadX's own CMake
set(THREADX_ARCH "cortex_m4" CACHE STRING "ThreadX port (ports/<arch> of ThreadX: cortex_m4, cortex_m3, ...)")
set(THREADX_TOOLCHAIN "gnu" CACHE STRING "ThreadX toolchain (ports/<arch>/<toolchain>: gnu)")
set(TX_USER_FILE "" CACHE FILEPATH "The application's tx_user.h (empty: ThreadX's sample)")
include(${PROJECT_SOURCE_DIR}/cmake/mdcomThirdParty.cmake) # MDCOM_THIRD_PARTY_DIR
if(TARGET threadx)
  set(_tx_src "") # the application's (its own add_subdirectory)
elseif(THREADX_PATH)
  set(_tx_src ${THREADX_PATH})
else()
  mdcom_third_party_tree(_tx_src "threadx-*.tar.gz" "THREADX_PATH to a ThreadX tree")
endif()
if(NOT TARGET threadx)
  if(NOT EXISTS ${_tx_src}/common/inc/tx_api.h OR NOT EXISTS ${_tx_src}/CMakeLists.txt)
    message(FATAL_ERROR "THREADX_PATH '${_tx_src}' is no ThreadX tree (no common/inc/tx_api.h, CMakeLists.txt)")
  endif()
  if(NOT EXISTS ${_tx_src}/ports/${THREADX_ARCH}/${THREADX_TOOLCHAIN})
    message(FATAL_ERROR "ThreadX has no port ${THREADX_ARCH}/${THREADX_TOOLCHAIN} (THREADX_ARCH, THREADX_TOOLCHAIN)")
  endif()
  # the kernel is the user's code: its own flags, not mdcom's -Werror
  add_subdirectory(${_tx_src} ${CMAKE_BINARY_DIR}/threadx EXCLUDE_FROM_ALL)
endif()

# the bare-metal runtime (startup, board, cortexm.c) with this port's
# low-level init, tick and clock
set(MDCOM_BM_CLOCK_SOURCES ${_tx}/tx_runtime.c)
include(${PROJECT_SOURCE_DIR}/ports/baremetal/port.cmake)
set(MDCOM_PORT_SOURCES ${_tx}/port_threadx.c ${PROJECT_SOURCE_DIR}/ports/baremetal/board_hooks.c)
set_source_files_properties(${_tx}/port_threadx.c ${PROJECT_SOURCE_DIR}/ports/baremetal/board_hooks.c
  PROPERTIES INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/ports/baremetal;${_tx}")
# platform.h does not declare mdcom_platform_threadx(); mdcom_threadx.h does
set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/port_default.c PROPERTIES
  COMPILE_OPTIONS "-include;${_tx}/mdcom_threadx.h"
  INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/ports/baremetal") # its board_hooks.h
target_include_directories(mdcom_bm_runtime PUBLIC ${_tx})
target_link_libraries(mdcom_bm_runtime PUBLIC threadx)
unset(_tx)
