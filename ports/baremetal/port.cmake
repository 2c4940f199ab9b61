# SPDX-License-Identifier: BSD-3-Clause
# ports/baremetal/port.cmake - included by the top-level CMakeLists.txt when
# MDCOM_PORT=baremetal (cross builds). Selects the board (MDCOM_BOARD), puts
# the port into libmdcom and defines mdcom_bm_runtime: startup, generic
# Cortex-M services, mem*, and the board file, which firmware images link
# (with the board's linker script).
#
# An RTOS port reuses all of it (ports/freertos/port.cmake includes this
# file): it sets MDCOM_BM_CLOCK_SOURCES to its own clock first (the kernel
# owns SysTick there) and replaces MDCOM_PORT_SOURCES after.
set(MDCOM_BOARD mps2-an386 CACHE STRING "Board of the bare-metal port (ports/baremetal/boards/<board>)")
set(_bm ${CMAKE_CURRENT_LIST_DIR})
# an application's own board (board.cmake, board.c, memory.ld) outside the tree
set(MDCOM_BOARD_DIR "${_bm}/boards/${MDCOM_BOARD}" CACHE PATH
    "Directory of the board files (default ports/baremetal/boards/<MDCOM_BOARD>)")
if(NOT EXISTS ${MDCOM_BOARD_DIR}/board.cmake)
  message(FATAL_ERROR "MDCOM_BOARD '${MDCOM_BOARD}': no ${MDCOM_BOARD_DIR}/board.cmake")
endif()
include(${MDCOM_BOARD_DIR}/board.cmake)

set(MDCOM_PORT_SOURCES ${_bm}/port_baremetal.c ${_bm}/board_hooks.c)
set_source_files_properties(${_bm}/port_baremetal.c ${_bm}/board_hooks.c PROPERTIES
  INCLUDE_DIRECTORIES ${_bm})
# platform.h does not declare mdcom_platform_baremetal(); board.h does
set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/port_default.c PROPERTIES
  COMPILE_OPTIONS "-include;${_bm}/board.h")

if(NOT DEFINED MDCOM_BM_CLOCK_SOURCES)
  set(MDCOM_BM_CLOCK_SOURCES ${_bm}/systick.c) # SysTick, 64-bit ns (bare metal)
endif()
add_library(mdcom_bm_runtime STATIC
  ${_bm}/startup.c ${_bm}/cortexm.c ${_bm}/mem.c ${MDCOM_BM_CLOCK_SOURCES} ${MDCOM_BOARD_SOURCES})
target_include_directories(mdcom_bm_runtime PUBLIC ${_bm} ${MDCOM_BOARD_DIR}
  ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_compile_definitions(mdcom_bm_runtime PRIVATE MDCOM_BM_NUM_IRQS=${MDCOM_BOARD_NUM_IRQS})
target_compile_options(mdcom_bm_runtime PRIVATE ${MDCOM_WARNINGS})
set_source_files_properties(${_bm}/mem.c PROPERTIES
  COMPILE_OPTIONS "-fno-tree-loop-distribute-patterns;-fno-strict-aliasing")
# An image may link another memory map of the board (a second core's):
# target property MDCOM_LDSCRIPT of the image; default the board's.
target_link_options(mdcom_bm_runtime INTERFACE
  "-T$<IF:$<BOOL:$<TARGET_PROPERTY:MDCOM_LDSCRIPT>>,$<TARGET_PROPERTY:MDCOM_LDSCRIPT>,${MDCOM_BOARD_LDSCRIPT}>"
  -L${_bm})
unset(_bm)
