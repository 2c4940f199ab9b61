# SPDX-License-Identifier: BSD-3-Clause
# CPack post-build script (CPACK_POST_BUILD_SCRIPTS, cmake/install.cmake):
# writes the Multi-Arch control field, which CPack's DEB generator of the
# CMake versions we support (3.20 ...) cannot write, into the packages just
# built. CPACK_MDCOM_MULTIARCH is "<package>=<value>;..."; a package that has
# the field already (a CMake that writes it) is left as it is. Each package is
# unpacked with dpkg-deb -R, the field appended to DEBIAN/control and the
# package built again with dpkg-deb -b (which also checks the control file),
# files owned by root as CPack makes them.
find_program(_dpkg_deb dpkg-deb)
if(NOT _dpkg_deb)
  message(FATAL_ERROR "dpkg-deb not found: cannot write the packages' Multi-Arch field "
                      "(Debian package dpkg)")
endif()
foreach(_deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT _deb MATCHES "\\.deb$")
    continue()
  endif()
  execute_process(COMMAND ${_dpkg_deb} -f ${_deb} Package Multi-Arch
    OUTPUT_VARIABLE _f OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(_f MATCHES "Multi-Arch:" OR NOT _f MATCHES "Package: ([^\n]+)")
    continue()
  endif()
  set(_pkg ${CMAKE_MATCH_1})
  set(_ma "")
  foreach(_kv IN LISTS CPACK_MDCOM_MULTIARCH)
    if(_kv MATCHES "^${_pkg}=(.+)$")
      set(_ma ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(NOT _ma)
    continue()
  endif()
  set(_dir ${_deb}.multiarch)
  file(REMOVE_RECURSE ${_dir})
  execute_process(COMMAND ${_dpkg_deb} -R ${_deb} ${_dir} COMMAND_ERROR_IS_FATAL ANY)
  file(READ ${_dir}/DEBIAN/control _control)
  string(STRIP "${_control}" _control)  # CPack ends it with an empty line: a second stanza
  file(WRITE ${_dir}/DEBIAN/control "${_control}\nMulti-Arch: ${_ma}\n")
  execute_process(COMMAND ${_dpkg_deb} --root-owner-group -b ${_dir} ${_deb}
    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE ${_dir})
  message(STATUS "${_pkg}: Multi-Arch: ${_ma}")
endforeach()
