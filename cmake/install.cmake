# SPDX-License-Identifier: BSD-3-Clause
# Install rules, the CMake package (mdcomConfig.cmake, targets mdcom::*),
# mdcom.pc, mdcom-cfg, the man pages and the CPack .deb. Included by the top
# CMakeLists after every target exists.
#
#   hosted (Linux) build:   mdcom::mdcom (libmdcom.so.0), mdcom::mdcom_static,
#                           mdcom::core, mdcom::rpmsg, headers, mdcom-cfg,
#                           mdcom-stat, mdcom-bench, mdcom.pc, man pages
#   freestanding build:     mdcom::mdcom_static (core + rpmsg + the port),
#                           mdcom::core, mdcom::rpmsg, headers, mdcom-cfg
include(GNUInstallDirs)

# One version: project(VERSION) must match mdcom.h and tools/mdcom-cfg.
file(STRINGS include/mdcom/mdcom.h _v REGEX "^#define MDCOM_VERSION_STRING ")
file(STRINGS tools/mdcom-cfg _vc REGEX "^MDCOM_VERSION = ")
if(NOT _v MATCHES "\"${PROJECT_VERSION}\"" OR NOT _vc MATCHES "\"${PROJECT_VERSION}\"")
  message(FATAL_ERROR "version ${PROJECT_VERSION} of project() differs from "
                      "MDCOM_VERSION_STRING in include/mdcom/mdcom.h or MDCOM_VERSION in tools/mdcom-cfg")
endif()
include(CMakePackageConfigHelpers)

set(MDCOM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/mdcom)
set(MDCOM_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/mdcom)

set_target_properties(mdcom_core PROPERTIES EXPORT_NAME core)
set_target_properties(mdcom_rpmsg PROPERTIES EXPORT_NAME rpmsg)
set_target_properties(mdcom_static PROPERTIES EXPORT_NAME mdcom_static)
set(_mdcom_export mdcom_static mdcom_core mdcom_rpmsg)
if(TARGET mdcom_shared)
  list(APPEND _mdcom_export mdcom_shared)
endif()
install(TARGETS ${_mdcom_export} EXPORT mdcomTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/mdcom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT mdcomTargets NAMESPACE mdcom:: DESTINATION ${MDCOM_INSTALL_CMAKEDIR})

# mdcom-cfg: script + module together in share/mdcom (the script finds the
# module beside its real path), a relative symlink in bin.
install(PROGRAMS tools/mdcom-cfg DESTINATION ${MDCOM_INSTALL_DATADIR})
install(FILES tools/mdcom_cfg.py DESTINATION ${MDCOM_INSTALL_DATADIR})
file(RELATIVE_PATH _mdcom_cfg_link
  /${CMAKE_INSTALL_BINDIR} /${MDCOM_INSTALL_DATADIR}/mdcom-cfg)
install(CODE "
  set(_bindir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  file(MAKE_DIRECTORY \"\${_bindir}\")
  file(REMOVE \"\${_bindir}/mdcom-cfg\")
  file(CREATE_LINK \"${_mdcom_cfg_link}\" \"\${_bindir}/mdcom-cfg\" SYMBOLIC)
  message(STATUS \"Installing: \${_bindir}/mdcom-cfg -> ${_mdcom_cfg_link}\")")

# The layout code and its host tool, for mdcom_generate_config(... LAYOUT) in
# a firmware project (compiled there by the build host's C compiler).
install(FILES tools/mdcom-layout.c DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/tools)
install(FILES src/wire.c DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/src)
install(FILES src/core/layout.c src/core/msg.c src/core/verify.c src/core/layout.h
        DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/src/core)

# Tools built in other directories (tools/ installs mdcom-stat itself).
if(TARGET mdcom-bench)
  install(TARGETS mdcom-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# CMake package
configure_package_config_file(cmake/mdcomConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/mdcomConfig.cmake
  INSTALL_DESTINATION ${MDCOM_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR MDCOM_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mdcomConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mdcomConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/mdcomConfigVersion.cmake
  cmake/mdcomGenerateConfig.cmake
  DESTINATION ${MDCOM_INSTALL_CMAKEDIR})

# pkg-config (hosted builds: the shared library and its static twin)
# The .pc is written when installing, with the prefix of that install
# (`cmake --install <build> --prefix P` gives P, a CPack .deb /usr), so its
# paths are right wherever the tree goes; the prefix stays absolute, as
# sysroot-aware pkg-config (Yocto, Buildroot: PKG_CONFIG_SYSROOT_DIR) expects.
if(TARGET mdcom_shared)
  set(_pc ${CMAKE_CURRENT_BINARY_DIR}/mdcom.pc)
  install(CODE "
    set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
    set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
    set(CMAKE_INSTALL_DATADIR \"${CMAKE_INSTALL_DATADIR}\")
    set(CMAKE_INSTALL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    configure_file(\"${PROJECT_SOURCE_DIR}/cmake/mdcom.pc.in\" \"${_pc}\" @ONLY)")
  install(FILES ${_pc} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  unset(_pc)
endif()

# Man pages: docs/man/*.<section>.scd -> <name>.<section> with scdoc.
# A page documents every function its NAME section lists (mdcom_fifoch(3):
# mdcom_fifoch_open, mdcom_fifoch_send, ...); each of those other names gets a
# one-line page ".so man3/<page>" beside it, so that `man mdcom_fifoch_send`
# finds the page (tests/package test_man.py checks every export has one).
function(mdcom_man_links src page sec)
  file(READ ${src} text)
  string(REGEX MATCH "# NAME\n+([^#]*)" _ "${text}")
  set(names "${CMAKE_MATCH_1}")
  string(FIND "${names}" " -" dash)  # the names end at " - what it is"
  if(dash LESS 0)
    message(FATAL_ERROR "${src}: NAME has no ' - ' after the names")
  endif()
  string(SUBSTRING "${names}" 0 ${dash} names)
  string(REGEX MATCHALL "[A-Za-z0-9_.-]+" names "${names}")
  get_filename_component(self ${page} NAME_WLE)     # mdcom_fifoch
  foreach(n ${names})
    if(NOT n STREQUAL self)
      set(link ${CMAKE_CURRENT_BINARY_DIR}/man/links/${n}.${sec})
      file(CONFIGURE OUTPUT ${link} CONTENT ".so man${sec}/${page}\n")
      install(FILES ${link} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
    endif()
  endforeach()
endfunction()
if(MDCOM_TARGET_HOSTED)
  find_program(MDCOM_SCDOC scdoc)
  file(GLOB _mdcom_man_src CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.scd)
  if(MDCOM_SCDOC AND _mdcom_man_src)
    set(_mdcom_man_out "")
    foreach(src ${_mdcom_man_src})
      get_filename_component(page ${src} NAME_WLE)        # mdcom-cfg.1
      string(REGEX REPLACE ".*\\.([0-9])$" "\\1" sec ${page})
      set(out ${CMAKE_CURRENT_BINARY_DIR}/man/${page})
      add_custom_command(OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
        COMMAND ${MDCOM_SCDOC} < ${src} > ${out}
        DEPENDS ${src}
        COMMENT "scdoc ${page}"
        VERBATIM)
      list(APPEND _mdcom_man_out ${out})
      install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
      mdcom_man_links(${src} ${page} ${sec})
    endforeach()
    add_custom_target(mdcom-man ALL DEPENDS ${_mdcom_man_out})
  elseif(_mdcom_man_src)
    message(WARNING "scdoc not found: man pages are not built (scripts/deps.sh installs it)")
  endif()
endif()

install(FILES LICENSE README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

# .deb: `cpack -G DEB` in a hosted build directory (tests/package builds one).
set(CPACK_PACKAGE_NAME mdcom)
set(CPACK_PACKAGE_VENDOR "mdcom")
set(CPACK_PACKAGE_CONTACT "mdcom maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Multi-domain communication: IPC between Linux processes and firmware on other cores")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, python3 (>= 3.11)")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE armhf)
  endif()
endif()
include(CPack)
