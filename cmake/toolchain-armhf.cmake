# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: the Linux side of 32-bit ARM SoCs (STM32MP1, i.MX7): Debian
# gcc-arm-linux-gnueabihf, tests under qemu-arm (see toolchain-linux-cross.cmake).
set(CMAKE_SYSTEM_PROCESSOR arm)
set(MDCOM_CROSS_TRIPLE arm-linux-gnueabihf)
set(MDCOM_QEMU_USER_NAME qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-linux-cross.cmake)
# 64-bit off_t, as Debian (from trixie) and Yocto build 32-bit ARM: region
# files and the tests' sparse >4 GiB files need it.
set(CMAKE_C_FLAGS_INIT "-D_FILE_OFFSET_BITS=64")
set(CMAKE_CXX_FLAGS_INIT "-D_FILE_OFFSET_BITS=64")
