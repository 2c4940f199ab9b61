# SPDX-License-Identifier: BSD-3-Clause
# mdcom_rtos_apicost_image(<image> <kernel target> <kernel source>)
#
# <image>.elf: the API-cost rows of mdcom-fw-apicost (firmware/common/apicost.c
# and rtos_apicost.c, the configuration of firmware/qemu-m4/qemu_m4.toml) in a
# task of the kernel's <kernel source>, through this build's RTOS port, for
# `mdcom-bench --target qemu-m4 api`. The samples read the MPS2 FPGAIO
# COUNTER (25 MHz): the kernel owns SysTick.
function(mdcom_rtos_apicost_image image kernel source)
  set_target_properties(mdcom_core_obj mdcom_rpmsg_obj mdcom_port_obj PROPERTIES
    POSITION_INDEPENDENT_CODE OFF)
  mdcom_generate_config(${image}_cfg ${PROJECT_SOURCE_DIR}/firmware/qemu-m4/qemu_m4.toml
    PREFIX mdcom_m4 LAYOUT)
  add_executable(${image} ${source} ${PROJECT_SOURCE_DIR}/firmware/common/rtos_apicost.c
    ${PROJECT_SOURCE_DIR}/firmware/common/apicost.c)
  target_link_libraries(${image} PRIVATE ${image}_cfg mdcom_static mdcom_bm_runtime ${kernel}
    mdcom_static mdcom_bm_runtime ${kernel} gcc)
  target_include_directories(${image} PRIVATE ${PROJECT_SOURCE_DIR}/firmware/common/include)
  target_compile_definitions(${image} PRIVATE FW_APICOST_COUNTER=0x40028018u
    FW_APICOST_COUNTER_HZ=25000000u)
  target_compile_options(${image} PRIVATE ${MDCOM_WARNINGS})
  target_link_options(${image} PRIVATE -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${image}.map)
  set_target_properties(${image} PROPERTIES SUFFIX .elf)
endfunction()
