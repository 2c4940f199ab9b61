# SPDX-License-Identifier: BSD-3-Clause
# Install rules, the CMake package (mdcomConfig.cmake, targets mdcom::*),
# mdcom.pc, mdcom-cfg, the man pages and the CPack .deb packages. Included by
# the top CMakeLists after every target exists.
#
# Every rule names its install COMPONENT, one per Debian package (CPack makes
# one .deb of each, see the end of this file); `cmake --install` without
# --component installs them all, as before:
#   runtime  libmdcom0      libmdcom.so.0 and its real file, nothing else
#   dev      libmdcom-dev   headers, libmdcom.so link, static libraries, CMake
#                           package, mdcom.pc, layout-src, man pages section 3
#   tools    mdcom-tools    mdcom-cfg (+ its module), mdcom-stat, mdcom-qemu,
#                           their section 1 pages
#   bench    mdcom-bench    mdcom-bench and its page
#   zenoh    mdcom-zenoh    the bridge and its page, when it was built
#
#   hosted (Linux) build:   mdcom::mdcom (libmdcom.so.0), mdcom::mdcom_static,
#                           mdcom::core, mdcom::rpmsg, headers, mdcom-cfg,
#                           mdcom-stat, mdcom-bench, mdcom.pc, man pages
#   freestanding build:     mdcom::mdcom_static (core + rpmsg + the port),
#                           mdcom::core, mdcom::rpmsg, headers, mdcom-cfg

# A benchmark-only attribution build (MDCOM_BENCH_CUT) is never installed
# or packaged: its core breaks guarantees on purpose.
if(MDCOM_BENCH_CUT)
  return() # the top CMakeLists' first install rule fails; before include(CPack): no package
endif()

include(GNUInstallDirs)

# One version: project(VERSION) must match mdcom.h, tools/mdcom-cfg and the
# Python package's pyproject.toml (the wheel); the .deb packages take it from
# project() (CPACK_DEBIAN_PACKAGE_VERSION below).
file(STRINGS include/mdcom/mdcom.h _v REGEX "^#define MDCOM_VERSION_STRING ")
file(STRINGS tools/mdcom-cfg _vc REGEX "^MDCOM_VERSION = ")
file(STRINGS bindings/python/pyproject.toml _vp REGEX "^version = ")
if(NOT _v MATCHES "\"${PROJECT_VERSION}\"" OR NOT _vc MATCHES "\"${PROJECT_VERSION}\""
   OR NOT _vp STREQUAL "version = \"${PROJECT_VERSION}\"")
  message(FATAL_ERROR "version ${PROJECT_VERSION} of project() differs from "
                      "MDCOM_VERSION_STRING in include/mdcom/mdcom.h, MDCOM_VERSION in tools/mdcom-cfg "
                      "or version in bindings/python/pyproject.toml")
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
# The shared library's real file and soname link are the runtime package;
# the libmdcom.so link (what -lmdcom finds) and the archives are for building.
install(TARGETS ${_mdcom_export} EXPORT mdcomTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/mdcom DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
install(EXPORT mdcomTargets NAMESPACE mdcom:: DESTINATION ${MDCOM_INSTALL_CMAKEDIR}
  COMPONENT dev)

# mdcom-cfg: script + module together in share/mdcom (the script finds the
# module beside its real path), a relative symlink in bin.
install(PROGRAMS tools/mdcom-cfg DESTINATION ${MDCOM_INSTALL_DATADIR} COMPONENT tools)
install(FILES tools/mdcom_cfg.py DESTINATION ${MDCOM_INSTALL_DATADIR} COMPONENT tools)
file(RELATIVE_PATH _mdcom_cfg_link
  /${CMAKE_INSTALL_BINDIR} /${MDCOM_INSTALL_DATADIR}/mdcom-cfg)
install(CODE "
  set(_bindir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  file(MAKE_DIRECTORY \"\${_bindir}\")
  file(REMOVE \"\${_bindir}/mdcom-cfg\")
  file(CREATE_LINK \"${_mdcom_cfg_link}\" \"\${_bindir}/mdcom-cfg\" SYMBOLIC)
  message(STATUS \"Installing: \${_bindir}/mdcom-cfg -> ${_mdcom_cfg_link}\")"
  COMPONENT tools)

# The layout code and its host tool, for mdcom_generate_config(... LAYOUT) in
# a firmware project (compiled there by the build host's C compiler).
install(FILES tools/mdcom-layout.c DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/tools
        COMPONENT dev)
install(FILES src/wire.c DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/src COMPONENT dev)
install(FILES src/core/layout.c src/core/msg.c src/core/verify.c src/core/layout.h
              src/core/shm_access.h src/core/bench_cut.h
        DESTINATION ${MDCOM_INSTALL_DATADIR}/layout-src/src/core COMPONENT dev)

# Tools built in other directories (tools/ installs mdcom-stat itself,
# harness/qemu-m4 mdcom-qemu, bridge/zenoh mdcom-zenoh).
if(TARGET mdcom-bench)
  install(TARGETS mdcom-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bench)
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
  DESTINATION ${MDCOM_INSTALL_CMAKEDIR} COMPONENT dev)

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
    configure_file(\"${PROJECT_SOURCE_DIR}/cmake/mdcom.pc.in\" \"${_pc}\" @ONLY)"
    COMPONENT dev)
  install(FILES ${_pc} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
  unset(_pc)
endif()

# Man pages: docs/man/*.<section>.scd -> <name>.<section> with scdoc.
# A page documents every function its NAME section lists (mdcom_fifoch(3):
# mdcom_fifoch_open, mdcom_fifoch_send, ...); each of those other names gets a
# one-line page ".so man3/<page>" beside it, so that `man mdcom_fifoch_send`
# finds the page (tests/package test_man.py checks every export has one).
# The component of a page: section 3 documents the API (dev); a command's
# page goes with the command.
function(mdcom_man_component page out)
  if(page MATCHES "\\.3$")
    set(c dev)
  elseif(page MATCHES "^mdcom-bench\\.")
    set(c bench)
  elseif(page MATCHES "^mdcom-zenoh\\.")
    set(c zenoh)
  else()
    set(c tools)
  endif()
  set(${out} ${c} PARENT_SCOPE)
endfunction()
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
      mdcom_man_component(${page} comp)
      install(FILES ${link} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec} COMPONENT ${comp})
    endif()
  endforeach()
endfunction()
if(MDCOM_TARGET_HOSTED)
  find_program(MDCOM_SCDOC scdoc)
  file(GLOB _mdcom_man_src CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.scd)
  if(MDCOM_SCDOC AND _mdcom_man_src)
    # The pages' date (scdoc writes it into .TH) is SOURCE_DATE_EPOCH, else
    # the time of the commit configured, not the day of the build: the pages
    # of libmdcom-dev (Multi-Arch: same) must be the same bytes in the
    # packages of every architecture, built on any day (reproducible builds).
    if(DEFINED ENV{SOURCE_DATE_EPOCH})
      set(_mdcom_man_epoch "$ENV{SOURCE_DATE_EPOCH}")
    else()
      execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
        OUTPUT_VARIABLE _mdcom_man_epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    set(_mdcom_man_env "")
    if(_mdcom_man_epoch MATCHES "^[0-9]+$")
      set(_mdcom_man_env ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${_mdcom_man_epoch})
    endif()
    set(_mdcom_man_out "")
    foreach(src ${_mdcom_man_src})
      get_filename_component(page ${src} NAME_WLE)        # mdcom-cfg.1
      string(REGEX REPLACE ".*\\.([0-9])$" "\\1" sec ${page})
      set(out ${CMAKE_CURRENT_BINARY_DIR}/man/${page})
      add_custom_command(OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
        COMMAND ${_mdcom_man_env} ${MDCOM_SCDOC} < ${src} > ${out}
        DEPENDS ${src}
        COMMENT "scdoc ${page}"
        VERBATIM)
      list(APPEND _mdcom_man_out ${out})
      mdcom_man_component(${page} comp)
      install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec} COMPONENT ${comp})
      mdcom_man_links(${src} ${page} ${sec})
    endforeach()
    add_custom_target(mdcom-man ALL DEPENDS ${_mdcom_man_out})
  elseif(_mdcom_man_src)
    message(WARNING "scdoc not found: man pages are not built (scripts/deps.sh installs it)")
  endif()
endif()

# Debian policy: every package has /usr/share/doc/<package>/copyright; the
# README and the changelog go with the development package.
set(_mdcom_pkgs runtime:libmdcom0 dev:libmdcom-dev tools:mdcom-tools)
if(TARGET mdcom-bench)
  list(APPEND _mdcom_pkgs bench:mdcom-bench)
endif()
if(MDCOM_ZENOH_BIN)
  list(APPEND _mdcom_pkgs zenoh:mdcom-zenoh)
endif()
foreach(_c ${_mdcom_pkgs})
  string(REPLACE ":" ";" _c ${_c})
  list(GET _c 0 _comp)
  list(GET _c 1 _pkg)
  install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_pkg} RENAME copyright
          COMPONENT ${_comp})
endforeach()
install(FILES README.md CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/libmdcom-dev
        COMPONENT dev)

# .deb packages: `cpack -G DEB` in a hosted build directory makes one package
# per component, in Debian's shape (tests/package/check_deb.py builds, checks
# and installs them):
#   libmdcom0     Section libs, Multi-Arch same (only lib/<multiarch>/ files
#                 and its copyright); shlibs file, ldconfig in postinst/postrm
#   libmdcom-dev  Section libdevel, Multi-Arch same; Depends on the exact
#                 libmdcom0 and mdcom-tools (the CMake package's
#                 mdcom_generate_config and mdcom.pc's mdcom_cfg run mdcom-cfg)
#   mdcom-tools   Section devel, Multi-Arch foreign (commands whose interface
#                 is the same on every architecture); mdcom-cfg needs python3.
#                 mdcom-stat links the static library: no libmdcom0 needed
#   mdcom-bench   Section devel; Recommends python3 (its suite's report step)
#   mdcom-zenoh   Section net; only when the bridge was built (MDCOM_ZENOH=ON)
# One version for all: project(VERSION). The ELF files' library dependencies
# come from dpkg-shlibdeps (Debian package dpkg-dev; `file` finds the ELF
# files) when it is there, else "libc6" alone; also in cross builds, whose
# target libraries (libc6-armhf-cross, ...) dpkg-shlibdeps does not know.
set(CPACK_PACKAGE_NAME mdcom)
set(CPACK_PACKAGE_VENDOR "mdcom")
set(CPACK_PACKAGE_CONTACT "mdcom maintainers")
# (no CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each
# package's own CPACK_DEBIAN_<COMPONENT>_DESCRIPTION, whose first line is
# that package's summary)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# stripped, as Debian ships binaries (install/strip: the executables and
# libmdcom.so.0 that install(TARGETS) installs; mdcom-zenoh is cargo's)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/mdcom/mdcom")
set(CPACK_COMPONENTS_ALL runtime dev tools)
if(TARGET mdcom-bench)
  list(APPEND CPACK_COMPONENTS_ALL bench)
endif()
if(MDCOM_ZENOH_BIN)
  list(APPEND CPACK_COMPONENTS_ALL zenoh)
endif()
find_program(MDCOM_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(MDCOM_FILE file)
if(MDCOM_DPKG_SHLIBDEPS AND MDCOM_FILE AND NOT CMAKE_CROSSCOMPILING)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(_mdcom_libc "")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(_mdcom_libc "libc6, ")
endif()
# libmdcom0's shlibs: a program linked against this version needs at least
# it (within one soname a release only adds, CHANGELOG.md "Releases and
# ABI"). CPack also adds a postinst/postrm running ldconfig, as it does for
# any package with a library under usr/lib.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libmdcom0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_MDCOM_MULTIARCH "")
if(CMAKE_LIBRARY_ARCHITECTURE AND CMAKE_INSTALL_LIBDIR STREQUAL "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  # only then can two architectures' packages be installed side by side
  set(CPACK_MDCOM_MULTIARCH libmdcom0=same libmdcom-dev=same)
endif()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${_mdcom_libc}")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "mdcom: inter-domain communication over shared memory (library)
 libmdcom.so.0: FIFO and SMEM channels, RPMsg and event fds between Linux
 processes and firmware on other cores, over one shared-memory region.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libmdcom-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  "libmdcom0 (= ${PROJECT_VERSION}), mdcom-tools (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_DESCRIPTION "mdcom: inter-domain communication over shared memory (development files)
 Headers, the libmdcom.so link, the static libraries, the CMake package
 (find_package(mdcom), mdcom_generate_config), mdcom.pc and the section 3
 man pages.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME mdcom-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
list(APPEND CPACK_MDCOM_MULTIARCH mdcom-tools=foreign)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${_mdcom_libc}python3 (>= 3.11)")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "qemu-system-arm")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "mdcom: inter-domain communication over shared memory (tools)
 mdcom-cfg (a system's TOML to C, checks), mdcom-stat (a live region's
 state and counters) and mdcom-qemu (firmware under QEMU against Linux).")

set(CPACK_DEBIAN_BENCH_PACKAGE_NAME mdcom-bench)
set(CPACK_DEBIAN_BENCH_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_BENCH_PACKAGE_DEPENDS "${_mdcom_libc}")
set(CPACK_DEBIAN_BENCH_PACKAGE_RECOMMENDS "python3")
set(CPACK_DEBIAN_BENCH_DESCRIPTION "mdcom: inter-domain communication over shared memory (benchmark)
 mdcom-bench: latency, throughput and API cost of libmdcom against other
 transports.")

set(CPACK_DEBIAN_ZENOH_PACKAGE_NAME mdcom-zenoh)
set(CPACK_DEBIAN_ZENOH_PACKAGE_SECTION net)
set(CPACK_DEBIAN_ZENOH_PACKAGE_DEPENDS "${_mdcom_libc}")
set(CPACK_DEBIAN_ZENOH_DESCRIPTION "mdcom: inter-domain communication over shared memory (Zenoh bridge)
 mdcom-zenoh: bridges the FIFO channels of an mdcom region onto Zenoh.")
# Multi-Arch: written by cmake/debMultiArch.cmake once CPack has built the packages
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debMultiArch.cmake)
foreach(_c RUNTIME BENCH ZENOH)  # empty when dpkg-shlibdeps writes them
  string(REGEX REPLACE ", $" "" CPACK_DEBIAN_${_c}_PACKAGE_DEPENDS "${CPACK_DEBIAN_${_c}_PACKAGE_DEPENDS}")
endforeach()
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE armhf)
  endif()
endif()
include(CPack)
