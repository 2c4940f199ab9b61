# SPDX-License-Identifier: BSD-3-Clause
# mdcom_rtos_e2e_image(<image> <kernel target> <kernel source> <size target>
#                      <what the port's objects are>)
#
# One RTOS test firmware for QEMU mps2-an386 (qemu_freertos_e2e,
# qemu_threadx_e2e): <image>.elf is firmware/common/rtos_e2e.c over the
# kernel's <kernel source> (mdcom_fw/rtos_e2e.h), the master domain of
# firmware/qemu-freertos/freertos.toml (one protocol, frt_proto.h, and one
# Linux peer, tests/qemu/frt_peer.c, for every kernel), linked with
# libmdcom, the bare-metal runtime and <kernel target>; <size target>
# (built by default) prints arm-none-eabi-size of the core, the port, the
# runtime, the kernel and the image.
function(mdcom_rtos_e2e_image image kernel source size_target port_note)
  set(_frt ${PROJECT_SOURCE_DIR}/firmware/qemu-freertos) # freertos.toml, frt_proto.h
  set_target_properties(mdcom_core_obj mdcom_rpmsg_obj mdcom_port_obj PROPERTIES
    POSITION_INDEPENDENT_CODE OFF)
  mdcom_generate_config(${image}_cfg ${_frt}/freertos.toml PREFIX mdcom_frt LAYOUT)
  add_executable(${image} ${source} ${PROJECT_SOURCE_DIR}/firmware/common/rtos_e2e.c
    ${PROJECT_SOURCE_DIR}/firmware/common/fw_boot.c)
  # twice: the core, the runtime and the kernel call each other
  target_link_libraries(${image} PRIVATE ${image}_cfg mdcom_static mdcom_bm_runtime ${kernel}
    mdcom_static mdcom_bm_runtime ${kernel} gcc)
  target_include_directories(${image} PRIVATE ${_frt}
    ${PROJECT_SOURCE_DIR}/firmware/common/include) # mdcom_fw/proto.h: CRC-32, the SMEM bump
  target_compile_options(${image} PRIVATE ${MDCOM_WARNINGS})
  target_link_options(${image} PRIVATE -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${image}.map)
  set_target_properties(${image} PROPERTIES SUFFIX .elf)

  find_program(MDCOM_ARM_SIZE arm-none-eabi-size)
  if(MDCOM_ARM_SIZE)
    add_custom_target(${size_target} ALL
      COMMAND ${MDCOM_ARM_SIZE} -t $<TARGET_FILE:mdcom_core>
      COMMAND ${CMAKE_COMMAND} -E echo "${port_note}"
      COMMAND ${MDCOM_ARM_SIZE} -t $<TARGET_OBJECTS:mdcom_port_obj>
      COMMAND ${MDCOM_ARM_SIZE} -t $<TARGET_FILE:mdcom_bm_runtime>
      COMMAND ${MDCOM_ARM_SIZE} -t $<TARGET_FILE:${kernel}>
      COMMAND ${MDCOM_ARM_SIZE} $<TARGET_FILE:${image}>
      DEPENDS mdcom_core ${image}
      COMMENT "arm-none-eabi-size: core, port, runtime, kernel, firmware image"
      COMMAND_EXPAND_LISTS VERBATIM)
  endif()
endfunction()

# mdcom_rtos_kp_image(<image> <kernel target> <kernel source>)
#
# The kill-point firmware of qemu_<kernel>_killpoints: <image>.elf is
# firmware/common/rtos_kp.c over the kernel's <kernel source> (the same
# image glue as the e2e image), linked with a build of the core made with
# -DMDCOM_KILLPOINTS (every store to shared memory calls the image's
# mdcom_kp() first: src/core/shm_access.h) and the port's objects unchanged.
# Only this image links that core; the library is never built this way.
function(mdcom_rtos_kp_image image kernel source)
  set(_c ${PROJECT_SOURCE_DIR}/firmware/common)
  mdcom_generate_config(${image}_cfg ${_c}/rtos_kp.toml PREFIX mdcom_kp LAYOUT)
  set(_src ${MDCOM_CORE_SOURCES})
  list(TRANSFORM _src PREPEND ${PROJECT_SOURCE_DIR}/)
  add_library(${image}_core STATIC ${_src})
  target_include_directories(${image}_core PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/src/core ${MDCOM_ARCH_DIR})
  target_compile_definitions(${image}_core PRIVATE MDCOM_KILLPOINTS=1
    MDCOM_MAX_INSTANCES=${MDCOM_MAX_INSTANCES} MDCOM_MAX_CHANNELS=${MDCOM_MAX_CHANNELS}
    MDCOM_RUNTIME_LAYOUT=$<BOOL:${MDCOM_RUNTIME_LAYOUT}>)
  target_compile_options(${image}_core PRIVATE ${MDCOM_WARNINGS})
  add_library(${image}_port STATIC $<TARGET_OBJECTS:mdcom_port_obj>)
  add_executable(${image} ${source} ${_c}/rtos_kp.c ${_c}/fw_boot.c)
  # twice: the core, the port, the runtime and the kernel call each other
  target_link_libraries(${image} PRIVATE ${image}_cfg ${image}_core ${image}_port mdcom_bm_runtime
    ${kernel} ${image}_core ${image}_port mdcom_bm_runtime ${kernel} gcc)
  target_include_directories(${image} PRIVATE ${_c}/include)
  target_compile_options(${image} PRIVATE ${MDCOM_WARNINGS})
  target_link_options(${image} PRIVATE -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${image}.map)
  set_target_properties(${image} PROPERTIES SUFFIX .elf)
endfunction()

# mdcom_rtos_resp_image(<image> <kernel target> <kernel source>)
#
# The RTOS responder image <image>.elf for QEMU mps2-an386: the master domain
# of firmware/qemu-m4/qemu_m4.toml running mdcom-fw-resp's responder
# (firmware/common/rtos_resp.c over mdcom_fw_common) in the main thread that
# the kernel's <kernel source> (mdcom_fw/rtos_e2e.h) starts, the same
# <kernel source> as the e2e image's with FW_IMAGE naming this one.
function(mdcom_rtos_resp_image image kernel source)
  set_target_properties(mdcom_core_obj mdcom_rpmsg_obj mdcom_port_obj PROPERTIES
    POSITION_INDEPENDENT_CODE OFF)
  mdcom_generate_config(${image}_cfg ${PROJECT_SOURCE_DIR}/firmware/qemu-m4/qemu_m4.toml
    PREFIX mdcom_m4 LAYOUT)
  add_executable(${image} ${source} ${PROJECT_SOURCE_DIR}/firmware/common/rtos_resp.c)
  target_compile_definitions(${image} PRIVATE FW_IMAGE="${image}")
  # twice: the core, the runtime and the kernel call each other
  target_link_libraries(${image} PRIVATE ${image}_cfg mdcom_fw_common mdcom_static
    mdcom_bm_runtime ${kernel} mdcom_static mdcom_bm_runtime ${kernel} gcc)
  target_compile_options(${image} PRIVATE ${MDCOM_WARNINGS})
  target_link_options(${image} PRIVATE -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${image}.map)
  set_target_properties(${image} PROPERTIES SUFFIX .elf)
endfunction()
