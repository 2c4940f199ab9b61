# SPDX-License-Identifier: BSD-3-Clause
# Builds the real OpenAMP (open-amp + libmetal) from the source tarballs in
# ../shared/third_party at BUILD time, into the build directory (never into the
# source tree), for the interop tests (tests/interop) and the `openamp` peer of
# mdcom-bench. Sets MDCOM_OPENAMP_FOUND and, when OFF, MDCOM_OPENAMP_WHY and
# MDCOM_OPENAMP_BY_DESIGN (1: excluded on purpose; 0: a prerequisite is
# missing on this machine); when
# ON, the target mdcom_openamp (headers + static libraries) and the step target
# mdcom_openamp_build that users must depend on.
#
# libmetal is built for its Linux system layer, which needs libsysfs
# (scripts/deps.sh installs libsysfs-dev). Its metal_init() fails with -ENODEV
# on machines without a uio/vfio bus; the peers do not need libmetal's device
# layer (only metal_io regions, mutexes, atomics), so they tolerate that
# result; OpenAMP's own code is built unmodified.
include_guard(GLOBAL)
include(ExternalProject)

set(MDCOM_THIRD_PARTY_DIR "${CMAKE_SOURCE_DIR}/../shared/third_party" CACHE PATH
    "Directory with the open-amp and libmetal source tarballs (interop tests)")
file(GLOB _mdcom_oa_tgz "${MDCOM_THIRD_PARTY_DIR}/open-amp-*.tar.gz")
file(GLOB _mdcom_lm_tgz "${MDCOM_THIRD_PARTY_DIR}/libmetal-*.tar.gz")
set(MDCOM_OPENAMP_FOUND OFF)
set(MDCOM_OPENAMP_WHY "")
set(MDCOM_OPENAMP_BY_DESIGN 1)
find_path(MDCOM_SYSFS_INCLUDE sysfs/libsysfs.h)
find_library(MDCOM_SYSFS_LIB sysfs)
if(NOT MDCOM_PORT STREQUAL "linux")
  set(MDCOM_OPENAMP_WHY "the OpenAMP peer needs the Linux port (MDCOM_PORT=${MDCOM_PORT})")
elseif(CMAKE_CROSSCOMPILING)
  set(MDCOM_OPENAMP_WHY "not in cross builds: the OpenAMP peer is built for the host only")
elseif(MDCOM_SANITIZE MATCHES "thread")
  set(MDCOM_OPENAMP_WHY "not under ThreadSanitizer: OpenAMP's lock-free rings are plain loads/stores")
elseif(NOT _mdcom_oa_tgz OR NOT _mdcom_lm_tgz)
  set(MDCOM_OPENAMP_WHY "no open-amp-*.tar.gz / libmetal-*.tar.gz in ${MDCOM_THIRD_PARTY_DIR}")
  set(MDCOM_OPENAMP_BY_DESIGN 0)
elseif(NOT MDCOM_SYSFS_INCLUDE OR NOT MDCOM_SYSFS_LIB)
  set(MDCOM_OPENAMP_WHY "libsysfs-dev is missing (libmetal's Linux layer needs it, see scripts/deps.sh)")
  set(MDCOM_OPENAMP_BY_DESIGN 0)
else()
  set(MDCOM_OPENAMP_FOUND ON)
  list(GET _mdcom_oa_tgz 0 _mdcom_oa_tgz)
  list(GET _mdcom_lm_tgz 0 _mdcom_lm_tgz)
  set(_pfx "${CMAKE_BINARY_DIR}/_openamp")
  set(_inst "${_pfx}/install")
  set(_cflags "-O2 -g")
  if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
    # libmetal builds itself with -Werror, and its atomic.h tests
    # ATOMIC_VAR_INIT, which clang's stdatomic.h marks deprecated
    string(APPEND _cflags " -Wno-deprecated-pragma")
  endif()
  if(MDCOM_SANITIZE)
    # the peers' own code is checked too (ASan/UBSan presets)
    string(APPEND _cflags " -fsanitize=${MDCOM_SANITIZE} -fno-omit-frame-pointer")
  endif()
  set(_common -DCMAKE_BUILD_TYPE=None -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
      "-DCMAKE_C_FLAGS=${_cflags}" -DCMAKE_INSTALL_PREFIX=${_inst}
      -DWITH_SHARED_LIB=OFF -DWITH_STATIC_LIB=ON -DWITH_DOC=OFF)
  ExternalProject_Add(mdcom_libmetal_ext
    URL ${_mdcom_lm_tgz}
    DOWNLOAD_EXTRACT_TIMESTAMP ON
    PREFIX ${_pfx}/libmetal
    CMAKE_ARGS ${_common} -DWITH_TESTS=OFF -DWITH_EXAMPLES=OFF -DWITH_DEFAULT_LOGGER=ON
    BUILD_BYPRODUCTS ${_inst}/lib/libmetal.a)
  ExternalProject_Add(mdcom_openamp_ext
    URL ${_mdcom_oa_tgz}
    DOWNLOAD_EXTRACT_TIMESTAMP ON
    PREFIX ${_pfx}/open-amp
    DEPENDS mdcom_libmetal_ext
    CMAKE_ARGS ${_common} -DWITH_APPS=OFF -DWITH_PROXY=OFF
               -DCMAKE_INCLUDE_PATH=${_inst}/include -DCMAKE_LIBRARY_PATH=${_inst}/lib
    BUILD_BYPRODUCTS ${_inst}/lib/libopen_amp.a)
  file(MAKE_DIRECTORY ${_inst}/include)
  add_custom_target(mdcom_openamp_build DEPENDS mdcom_openamp_ext)
  add_library(mdcom_openamp INTERFACE)
  target_include_directories(mdcom_openamp SYSTEM INTERFACE ${_inst}/include)
  target_link_libraries(mdcom_openamp INTERFACE ${_inst}/lib/libopen_amp.a ${_inst}/lib/libmetal.a
                        ${MDCOM_SYSFS_LIB} Threads::Threads rt)
endif()
# visible to every directory that includes this file (bench/ and tests/)
set(MDCOM_OPENAMP_FOUND ${MDCOM_OPENAMP_FOUND} CACHE INTERNAL "")
set(MDCOM_OPENAMP_WHY "${MDCOM_OPENAMP_WHY}" CACHE INTERNAL "")
set(MDCOM_OPENAMP_BY_DESIGN ${MDCOM_OPENAMP_BY_DESIGN} CACHE INTERNAL "")
