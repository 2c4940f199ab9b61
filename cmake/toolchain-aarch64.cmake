# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: the Linux side of 64-bit ARM SoCs (i.MX8, ZynqMP, AM64x): Debian gcc-aarch64-linux-gnu.
# Builds the Linux port, libmdcom.so and the tools for the target; the tests
# run under qemu-user (qemu-aarch64, Debian qemu-user) through CMAKE_CROSSCOMPILING_EMULATOR,
# so no binfmt registration is needed. A Yocto/Buildroot SDK brings its own
# toolchain file instead (CMAKE_SYSTEM_NAME Linux is what selects the port).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(MDCOM_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${MDCOM_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${MDCOM_CROSS_TRIPLE}-g++)
set(CMAKE_AR ${MDCOM_CROSS_TRIPLE}-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${MDCOM_CROSS_TRIPLE}-ranlib CACHE FILEPATH "")
set(CMAKE_STRIP ${MDCOM_CROSS_TRIPLE}-strip CACHE FILEPATH "")
# Debian's cross toolchains keep the target's libc in /usr/<triple>.
set(CMAKE_FIND_ROOT_PATH /usr/${MDCOM_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(MDCOM_QEMU_USER qemu-aarch64)
if(MDCOM_QEMU_USER)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${MDCOM_QEMU_USER} -L /usr/${MDCOM_CROSS_TRIPLE})
endif()
