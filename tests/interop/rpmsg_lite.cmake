# SPDX-License-Identifier: BSD-3-Clause
# NXP RPMsg-Lite for the interop tests, built from the source tarball in
# ../shared/third_party: unpacked at configure time into the build directory
# (mdcom_third_party_tree; never into the source tree) and compiled unmodified, with this
# directory's POSIX environment and platform layers (rl_env_posix.c,
# rl_platform_posix.c, rl_port/). Sets MDCOM_RPMSG_LITE_FOUND, and when OFF
# MDCOM_RPMSG_LITE_WHY and MDCOM_RPMSG_LITE_BY_DESIGN (1: this configuration
# excludes the peer on purpose; 0: a prerequisite is missing). When ON,
# mdcom_rpmsg_lite_peer(<target> COUNT n PAYLOAD n ALIGN n VRING_SIZE n)
# builds a static library of RPMsg-Lite for that wire layout (RPMsg-Lite
# fixes it at compile time) and gives <target>'s users the same IOP_RL_*
# definitions, so that both sides of a test see one layout.
include_guard(GLOBAL)

set(MDCOM_THIRD_PARTY_DIR "${CMAKE_SOURCE_DIR}/../shared/third_party" CACHE PATH
    "Directory with the third-party source tarballs (interop tests)")
file(GLOB _mdcom_rl_tgz "${MDCOM_THIRD_PARTY_DIR}/rpmsg-lite-*.tar.gz")
set(MDCOM_RPMSG_LITE_FOUND OFF)
set(MDCOM_RPMSG_LITE_WHY "")
set(MDCOM_RPMSG_LITE_BY_DESIGN 1)
if(NOT MDCOM_PORT STREQUAL "linux")
  set(MDCOM_RPMSG_LITE_WHY "the RPMsg-Lite peer needs the Linux port (MDCOM_PORT=${MDCOM_PORT})")
elseif(CMAKE_CROSSCOMPILING)
  set(MDCOM_RPMSG_LITE_WHY "not in cross builds: the RPMsg-Lite peer is built for the host only")
elseif(MDCOM_SANITIZE MATCHES "thread")
  set(MDCOM_RPMSG_LITE_WHY "not under ThreadSanitizer: RPMsg-Lite's rings are plain loads/stores")
elseif(NOT _mdcom_rl_tgz)
  set(MDCOM_RPMSG_LITE_WHY "no rpmsg-lite-*.tar.gz in ${MDCOM_THIRD_PARTY_DIR}")
  set(MDCOM_RPMSG_LITE_BY_DESIGN 0)
else()
  include(${PROJECT_SOURCE_DIR}/cmake/mdcomThirdParty.cmake)
  mdcom_third_party_tree(_mdcom_rl_root "rpmsg-lite-*.tar.gz" MDCOM_THIRD_PARTY_DIR)
  if(NOT _mdcom_rl_root OR NOT EXISTS "${_mdcom_rl_root}/lib/rpmsg_lite/rpmsg_lite.c")
    set(MDCOM_RPMSG_LITE_WHY "${_mdcom_rl_root} does not hold lib/rpmsg_lite/rpmsg_lite.c")
    set(MDCOM_RPMSG_LITE_BY_DESIGN 0)
  else()
    set(MDCOM_RPMSG_LITE_FOUND ON)
    set(MDCOM_RPMSG_LITE_SRC "${_mdcom_rl_root}/lib")
  endif()
endif()

function(mdcom_rpmsg_lite_peer target)
  cmake_parse_arguments(L "" "COUNT;PAYLOAD;ALIGN;VRING_SIZE" "" ${ARGN})
  set(_rl "${MDCOM_RPMSG_LITE_SRC}")
  set(_third ${_rl}/rpmsg_lite/rpmsg_lite.c ${_rl}/rpmsg_lite/rpmsg_ns.c
      ${_rl}/virtio/virtqueue.c ${_rl}/common/llist.c)
  set(_here ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  add_library(${target} STATIC ${_third} ${_here}/rl_env_posix.c ${_here}/rl_platform_posix.c)
  # the port's headers first (rpmsg_config.h, rpmsg_platform.h,
  # rpmsg_env_specific.h), then RPMsg-Lite's own, as a port is meant to
  target_include_directories(${target} PUBLIC ${_here}/rl_port
                             ${PROJECT_SOURCE_DIR}/harness/common) # rl_platform_api.h
  target_include_directories(${target} SYSTEM PUBLIC ${_rl}/include)
  target_compile_definitions(${target} PUBLIC IOP_RL_COUNT=${L_COUNT}u IOP_RL_PAYLOAD=${L_PAYLOAD}u
                             IOP_RL_ALIGN=${L_ALIGN}u IOP_RL_VRING_SIZE=${L_VRING_SIZE}u)
  # third-party code: its warnings are not ours to fix
  set_source_files_properties(${_third} PROPERTIES COMPILE_OPTIONS "-w")
  set_source_files_properties(${_here}/rl_env_posix.c ${_here}/rl_platform_posix.c
    PROPERTIES COMPILE_OPTIONS "-Wall;-Wextra;-Werror")
endfunction()

set(MDCOM_RPMSG_LITE_FOUND ${MDCOM_RPMSG_LITE_FOUND} CACHE INTERNAL "")
set(MDCOM_RPMSG_LITE_WHY "${MDCOM_RPMSG_LITE_WHY}" CACHE INTERNAL "")
set(MDCOM_RPMSG_LITE_BY_DESIGN ${MDCOM_RPMSG_LITE_BY_DESIGN} CACHE INTERNAL "")
set(MDCOM_RPMSG_LITE_SRC "${MDCOM_RPMSG_LITE_SRC}" CACHE INTERNAL "")
