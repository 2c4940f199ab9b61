# SPDX-License-Identifier: BSD-3-Clause
# Toolchain: the Linux side of 64-bit ARM SoCs (i.MX8, ZynqMP, AM64x): Debian
# gcc-aarch64-linux-gnu, tests under qemu-aarch64 (see toolchain-linux-cross.cmake).
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(MDCOM_CROSS_TRIPLE aarch64-linux-gnu)
set(MDCOM_QEMU_USER_NAME qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-linux-cross.cmake)
