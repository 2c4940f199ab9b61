# SPDX-License-Identifier: BSD-3-Clause
# Common part of the Linux cross toolchains (toolchain-armhf.cmake,
# toolchain-aarch64.cmake), which set CMAKE_SYSTEM_PROCESSOR,
# MDCOM_CROSS_TRIPLE (Debian's gcc-<triple>) and MDCOM_QEMU_USER_NAME first.
# Builds the Linux port, libmdcom.so and the tools for the target; the tests
# run under qemu-user (Debian qemu-user) through CMAKE_CROSSCOMPILING_EMULATOR,
# so no binfmt registration is needed. A Yocto/Buildroot SDK brings its own
# toolchain file instead (CMAKE_SYSTEM_NAME Linux is what selects the port).
set(CMAKE_SYSTEM_NAME Linux)
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
find_program(MDCOM_QEMU_USER ${MDCOM_QEMU_USER_NAME})
if(MDCOM_QEMU_USER)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${MDCOM_QEMU_USER} -L /usr/${MDCOM_CROSS_TRIPLE})
endif()
