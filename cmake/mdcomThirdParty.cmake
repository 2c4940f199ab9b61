# SPDX-License-Identifier: BSD-3-Clause
# mdcom_third_party_tree(<var> <tarball glob> <what>): the source tree of a
# third-party project for a build that was not given the user's own: the
# first tarball matching <tarball glob> in MDCOM_THIRD_PARTY_DIR, unpacked
# once into ${CMAKE_BINARY_DIR}/_third_party (never into the source tree).
# <var> is set to the tarball's top directory; a missing tarball is a fatal
# error that names <what> (the option that takes the user's tree).
set(MDCOM_THIRD_PARTY_DIR "${PROJECT_SOURCE_DIR}/../shared/third_party" CACHE PATH
    "Directory with third-party source tarballs (threadx-*.tar.gz, FreeRTOS-Kernel-*.tar.gz, ...)")

function(mdcom_third_party_tree var glob what)
  file(GLOB _tgz "${MDCOM_THIRD_PARTY_DIR}/${glob}")
  if(NOT _tgz)
    message(FATAL_ERROR "no ${glob} in MDCOM_THIRD_PARTY_DIR=${MDCOM_THIRD_PARTY_DIR}: set ${what}")
  endif()
  list(GET _tgz 0 _tgz)
  get_filename_component(_name ${_tgz} NAME)
  string(REGEX REPLACE "\\.(tar\\.gz|tgz|tar\\.xz|zip)$" "" _name ${_name})
  set(_dst ${CMAKE_BINARY_DIR}/_third_party/${_name})
  if(NOT EXISTS ${_dst}/.unpacked)
    message(STATUS "Unpacking ${_tgz} into ${_dst}")
    file(REMOVE_RECURSE ${_dst})
    file(ARCHIVE_EXTRACT INPUT ${_tgz} DESTINATION ${_dst})
    file(TOUCH ${_dst}/.unpacked)
  endif()
  # the tarball's one top directory
  file(GLOB _top LIST_DIRECTORIES true "${_dst}/*")
  list(FILTER _top EXCLUDE REGEX "/\\.unpacked$")
  list(LENGTH _top _n)
  if(NOT _n EQUAL 1)
    message(FATAL_ERROR "${_tgz}: expected one top directory, found ${_n}")
  endif()
  set(${var} ${_top} PARENT_SCOPE)
endfunction()
