# SPDX-License-Identifier: BSD-3-Clause
# mdcomGenerateConfig.cmake - build an MDCOM configuration from a TOML description.
#
#   mdcom_generate_config(<target> <toml-file> [PREFIX <sym>] [LAYOUT])
#
# At build time runs `mdcom-cfg generate <toml-file>` (again whenever the TOML
# file or the tool changes) into ${CMAKE_CURRENT_BINARY_DIR}/<target>/ and
# creates the STATIC library <target> from the generated <sym>_cfg.c. Linking
# <target> gives the include path of <sym>_cfg.h and of mdcom/mdcom.h:
#
#   mdcom_generate_config(demo_cfg ${PROJECT_SOURCE_DIR}/examples/demo.toml)
#   target_link_libraries(app PRIVATE demo_cfg mdcom::mdcom)
#
# Included by the top CMakeLists (in-tree: the tool is tools/mdcom-cfg) and by
# an installed package's mdcomConfig.cmake, which sets MDCOM_CFG_TOOL and
# MDCOM_CFG_INCLUDE_DIR to the installed mdcom-cfg and headers first.
#   /* app.c */ #include "demo_cfg.h"  ... mdcom_init(&m, &demo_config, DEMO_DOM_LINUX, 0);
#
# <sym> defaults to the region name as a C identifier (what `mdcom-cfg
# generate` uses); finding it requires reading the TOML at configure time, so
# the project is re-configured when the TOML changes. With PREFIX the TOML is
# only read at build time.
#
# LAYOUT also computes the configuration's layout on the build host and adds
# it to <target> as C (<sym>_layout.h: `const mdcom_layout_table
# <sym>_layout`), for mdcom_init_opts.layout: a firmware core built with
# MDCOM_RUNTIME_LAYOUT=OFF needs it and carries no code that validates a
# configuration or computes a layout. The build host's C compiler (cc, gcc or
# clang: MDCOM_HOST_CC) compiles tools/mdcom-layout.c with the core's own
# layout code and the generated <sym>_cfg.c, and runs it; an invalid
# configuration fails the build with mdcom_init's message. An installed
# package ships that code in share/mdcom/layout-src.
#
# Needs Python >= 3.11 on the build host (Python3_EXECUTABLE, found by the top
# CMakeLists); works unchanged when cross-compiling (the generated C is
# freestanding). Including this file never fails: only calling the function
# without a Python interpreter does. See docs/configuration.md.

include_guard(GLOBAL)

if(NOT MDCOM_CFG_TOOL)
  get_filename_component(_mdcom_cfg_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
  set(MDCOM_CFG_TOOL "${_mdcom_cfg_root}/tools/mdcom-cfg")
  set(MDCOM_CFG_INCLUDE_DIR "${_mdcom_cfg_root}/include")
  set_property(GLOBAL PROPERTY MDCOM_LAYOUT_SOURCE_DIR "${_mdcom_cfg_root}")
  unset(_mdcom_cfg_root)
endif()
set_property(GLOBAL PROPERTY MDCOM_CFG_TOOL "${MDCOM_CFG_TOOL}")
set_property(GLOBAL PROPERTY MDCOM_CFG_INCLUDE_DIR "${MDCOM_CFG_INCLUDE_DIR}")
if(Python3_EXECUTABLE)
  set_property(GLOBAL PROPERTY MDCOM_CFG_PYTHON "${Python3_EXECUTABLE}")
endif()

# _mdcom_cfg_python(<out-var>): the interpreter to run mdcom-cfg with.
function(_mdcom_cfg_python out)
  if(Python3_EXECUTABLE)
    set(py "${Python3_EXECUTABLE}")
  else()
    get_property(py GLOBAL PROPERTY MDCOM_CFG_PYTHON)
  endif()
  if(NOT py)
    find_package(Python3 3.11 COMPONENTS Interpreter)
    set(py "${Python3_EXECUTABLE}")
  endif()
  if(NOT py)
    message(FATAL_ERROR "mdcom_generate_config: needs Python >= 3.11 on the build host "
                        "(set Python3_EXECUTABLE)")
  endif()
  set(${out} "${py}" PARENT_SCOPE)
endfunction()

# _mdcom_cfg_default_prefix(<out-var> <python> <tool> <toml>): the default
# symbol prefix of <toml>, read with `mdcom-cfg dump --json` (also validates).
function(_mdcom_cfg_default_prefix out py tool toml)
  execute_process(
    COMMAND "${py}" "${tool}" dump "${toml}" --json
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE json
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    message(FATAL_ERROR "mdcom_generate_config: invalid configuration:\n${err}")
  endif()
  string(JSON sym GET "${json}" prefix)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${toml}")
  set(${out} "${sym}" PARENT_SCOPE)
endfunction()

function(mdcom_generate_config target toml)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "LAYOUT" "PREFIX" "")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mdcom_generate_config(${target}): unexpected arguments "
                        "'${ARG_UNPARSED_ARGUMENTS}' (usage: <target> <toml> [PREFIX <sym>] [LAYOUT])")
  endif()
  get_property(tool GLOBAL PROPERTY MDCOM_CFG_TOOL)
  get_property(incdir GLOBAL PROPERTY MDCOM_CFG_INCLUDE_DIR)
  # the tool's Python module lies beside the (real) script
  get_filename_component(tool_dir "${tool}" REALPATH)
  get_filename_component(tool_dir "${tool_dir}" DIRECTORY)
  _mdcom_cfg_python(py)

  get_filename_component(toml "${toml}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${toml}")
    message(FATAL_ERROR "mdcom_generate_config(${target}): no such file: ${toml}")
  endif()
  if(ARG_PREFIX)
    set(sym "${ARG_PREFIX}")
  else()
    _mdcom_cfg_default_prefix(sym "${py}" "${tool}" "${toml}")
  endif()

  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  get_filename_component(toml_name "${toml}" NAME)
  add_custom_command(
    OUTPUT "${out}/${sym}_cfg.h" "${out}/${sym}_cfg.c"
    COMMAND "${py}" "${tool}" generate "${toml}" --out-dir "${out}" --prefix "${sym}"
    DEPENDS "${toml}" "${tool}" "${tool_dir}/mdcom_cfg.py"
    COMMENT "mdcom-cfg: generating ${sym}_cfg.c from ${toml_name}"
    VERBATIM)

  add_library(${target} STATIC "${out}/${sym}_cfg.c" "${out}/${sym}_cfg.h")
  if(ARG_LAYOUT)
    _mdcom_cfg_layout(${target} "${out}" "${sym}")
  endif()
  target_include_directories(${target} PUBLIC "${out}" "${incdir}")
  set_target_properties(${target} PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF LINKER_LANGUAGE C)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  if(DEFINED MDCOM_WARNINGS)
    target_compile_options(${target} PRIVATE ${MDCOM_WARNINGS})
  endif()
endfunction()

# _mdcom_cfg_layout(<target> <out-dir> <sym>): <sym>_layout.c/.h, computed on
# the build host by the core's layout code (LAYOUT above).
function(_mdcom_cfg_layout target out sym)
  get_property(root GLOBAL PROPERTY MDCOM_LAYOUT_SOURCE_DIR)
  get_property(incdir GLOBAL PROPERTY MDCOM_CFG_INCLUDE_DIR)
  if(NOT root)
    message(FATAL_ERROR "mdcom_generate_config(${target} ... LAYOUT): the layout code was not "
                        "found (mdcom source tree or share/mdcom/layout-src)")
  endif()
  find_program(MDCOM_HOST_CC NAMES cc gcc clang
               DOC "the build host's C compiler (mdcom_generate_config LAYOUT)")
  if(NOT MDCOM_HOST_CC)
    message(FATAL_ERROR "mdcom_generate_config(${target} ... LAYOUT): no C compiler for the "
                        "build host (cc, gcc or clang; set MDCOM_HOST_CC)")
  endif()
  set(srcs "${root}/tools/mdcom-layout.c" "${root}/src/wire.c" "${root}/src/core/layout.c"
           "${root}/src/core/msg.c" "${root}/src/core/verify.c")
  add_custom_command(
    OUTPUT "${out}/${sym}_layout.c" "${out}/${sym}_layout.h"
    COMMAND "${MDCOM_HOST_CC}" -std=c11 -O1 -Wall -Wextra
            "-I${incdir}" "-I${root}/src" "-I${root}/src/core" "-I${out}"
            "-DMDCOM_LAYOUT_CONFIG=${sym}_config" ${srcs} "${out}/${sym}_cfg.c"
            -o "${out}/${sym}_layout_gen"
    COMMAND "${out}/${sym}_layout_gen" "${sym}" "${out}/${sym}_layout.c" "${out}/${sym}_layout.h"
    DEPENDS ${srcs} "${out}/${sym}_cfg.c" "${out}/${sym}_cfg.h" "${root}/src/core/layout.h"
            "${incdir}/mdcom/wire.h" "${incdir}/mdcom/mdcom.h"
    COMMENT "mdcom-layout: computing ${sym}_config's layout on the build host"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}/${sym}_layout.c" "${out}/${sym}_layout.h")
endfunction()
