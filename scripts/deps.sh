#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what building and testing mdcom needs, when it is missing (Debian/Ubuntu).
# Usage: scripts/deps.sh [--cross]   (--cross: also the arm-none-eabi toolchain)
set -euo pipefail
want=(cmake ninja-build g++ libgtest-dev python3 python3-matplotlib valgrind)
want+=(clang libclang-rt-14-dev)  # libFuzzer (tests/fuzz); without them the fuzz test is skipped
want+=(iceoryx libiceoryx-binding-c-dev)  # iceoryx peer in mdcom-bench; without them it is built without it
want+=(libsysfs-dev)  # libmetal's Linux layer (OpenAMP interop tests, bench peer); without it they are skipped
want+=(clang-tidy clang-format-14)  # scripts/analyze, scripts/format-check (the analyze stage of scripts/test)
want+=(python3-pytest python3-gi)  # tests/python (pytest) and the GLib event-loop example
[[ "${1:-}" == "--cross" ]] && want+=(gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)
# packaging (tests/package, man pages, scripts/abi-check) and the Linux cross
# builds for armhf/aarch64 run under qemu-user (presets armhf, aarch64)
want+=(pkg-config scdoc abigail-tools)  # packaging: mdcom.pc check, man pages, ABI check
# the .deb packages (tests/package check_deb.py): dpkg-shlibdeps (dpkg-dev) and
# file write their Depends; the wheel (tests/python check_wheel.py): a venv
want+=(dpkg-dev file python3-venv)
[[ "${1:-}" == "--cross" ]] && want+=(g++-arm-linux-gnueabihf g++-aarch64-linux-gnu qemu-user)

missing=()
for p in "${want[@]}"; do
  case "$p" in
    cmake) command -v cmake >/dev/null || missing+=("$p") ;;
    ninja-build) command -v ninja >/dev/null || missing+=("$p") ;;
    g++) command -v g++ >/dev/null || missing+=("$p") ;;
    python3) python3 -c 'import sys, tomllib; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || missing+=(python3) ;;
    libgtest-dev) [[ -f /usr/include/gtest/gtest.h ]] || missing+=("$p") ;;
    python3-matplotlib) /usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing+=("$p") ;;
    valgrind) command -v valgrind >/dev/null || missing+=("$p") ;;
    gcc-arm-none-eabi) command -v arm-none-eabi-gcc >/dev/null || missing+=("$p") ;;
    binutils-arm-none-eabi) command -v arm-none-eabi-size >/dev/null || missing+=("$p") ;;
    qemu-system-arm) command -v qemu-system-arm >/dev/null || missing+=("$p") ;;
    clang) command -v clang >/dev/null || missing+=("$p") ;;
    libclang-rt-14-dev) ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || missing+=("$p") ;;
    iceoryx) command -v iox-roudi >/dev/null || missing+=("$p") ;;
    libiceoryx-binding-c-dev) ls /usr/lib/*/cmake/iceoryx_binding_c/iceoryx_binding_cConfig.cmake >/dev/null 2>&1 || missing+=("$p") ;;
    libsysfs-dev) [[ -f /usr/include/sysfs/libsysfs.h ]] || missing+=("$p") ;;
    clang-tidy) command -v clang-tidy >/dev/null || missing+=("$p") ;;
    clang-format-14) command -v clang-format-14 >/dev/null || missing+=("$p") ;;
    python3-pytest) python3 -c 'import pytest' 2>/dev/null || /usr/bin/python3 -c 'import pytest' 2>/dev/null || missing+=("$p") ;;
    python3-gi) /usr/bin/python3 -c 'import gi' 2>/dev/null || missing+=("$p") ;;
    pkg-config) command -v pkg-config >/dev/null || missing+=("$p") ;;
    scdoc) command -v scdoc >/dev/null || missing+=("$p") ;;
    abigail-tools) command -v abidiff >/dev/null || missing+=("$p") ;;
    dpkg-dev) command -v dpkg-shlibdeps >/dev/null || missing+=("$p") ;;
    file) command -v file >/dev/null || missing+=("$p") ;;
    python3-venv) python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=("$p") ;;
    g++-arm-linux-gnueabihf) command -v arm-linux-gnueabihf-g++ >/dev/null || missing+=("$p") ;;
    g++-aarch64-linux-gnu) command -v aarch64-linux-gnu-g++ >/dev/null || missing+=("$p") ;;
    qemu-user) command -v qemu-arm >/dev/null && command -v qemu-aarch64 >/dev/null || missing+=("$p") ;;
    libnewlib-arm-none-eabi) [[ -f /usr/lib/arm-none-eabi/include/errno.h ]] || missing+=("$p") ;;
  esac
done
if ((${#missing[@]})); then
  echo "mdcom: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# mdcom-zenoh (bridge/zenoh/rs) is Rust on crates.io's zenoh: it needs cargo and
# rustc >= 1.75 (Debian 12's cargo is older: use rustup). Without it the build
# leaves the bridge out and tests/bridge skips. Its crates are fetched by cargo.
if ! { PATH="$HOME/.cargo/bin:$PATH" cargo --version >/dev/null 2>&1; }; then
  echo "mdcom: cargo not found: mdcom-zenoh is not built (install Rust >= 1.75: https://rustup.rs)" >&2
fi
# tests/bridge plays a plain Zenoh client next to the bridges with the
# eclipse-zenoh package from PyPI, pinned, for the python3 that CMake finds
# first; without it those two tests skip
ZENOH_PY="eclipse-zenoh==1.10.2"
if ! python3 -c 'import zenoh' 2>/dev/null; then
  python3 -m pip --version >/dev/null 2>&1 || {
    sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends python3-pip >/dev/null; } || true; }
  echo "mdcom: installing $ZENOH_PY (pip)" >&2
  python3 -m pip install -q "$ZENOH_PY" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "$ZENOH_PY" ||
    echo "mdcom: could not install $ZENOH_PY: the bridge tests (tests/bridge) will skip" >&2
fi
# the Python benchmark's peer (bindings/python/bench/py_bench.py: iceoryx2's Python package from
# PyPI, pinned); without it the suite's python step has no peer rows
IOX2_PY="iceoryx2==0.10.0"
if ! python3 -c 'import iceoryx2' 2>/dev/null; then
  python3 -m pip install -q "$IOX2_PY" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "$IOX2_PY" 2>/dev/null ||
    echo "mdcom: could not install $IOX2_PY: the python benchmark runs without its peer" >&2
fi

# The wheel of bindings/python (tests/python check_wheel.py): PyPI's build and
# wheel, pinned, for the python3 that CMake finds first; it builds with
# --no-isolation (that interpreter's setuptools, no network at test time).
# setuptools only when the interpreter has none, pinned below 77 (pyproject.toml's
# license table, which later ones deprecate).
WHEEL_PY=("build==1.2.2.post1" "wheel==0.45.1")
python3 -c 'import setuptools' 2>/dev/null || WHEEL_PY+=("setuptools==75.8.0")
if ! python3 -c 'import build, wheel, setuptools' 2>/dev/null; then
  echo "mdcom: installing ${WHEEL_PY[*]} (pip)" >&2
  python3 -m pip install -q "${WHEEL_PY[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${WHEEL_PY[@]}" ||
    echo "mdcom: could not install ${WHEEL_PY[*]}: python_wheel skips (fails with CI=true)" >&2
fi

# The UML kernel of tests/kernel (scripts/uml-kernel builds it from this source
# package, once per config). Installed on its own so that a distribution
# without the package only skips that test; MDCOM_NO_KERNEL=1 skips it here.
if [[ -z "${MDCOM_NO_KERNEL:-}" && $(uname -m) == x86_64 ]]; then
  kmissing=()
  [[ -f /usr/src/linux-source-6.1.tar.xz ]] || kmissing+=(linux-source-6.1)
  for t in flex bison bc; do command -v $t >/dev/null || kmissing+=($t); done
  if ((${#kmissing[@]})); then
    echo "mdcom: installing ${kmissing[*]} (UML kernel for tests/kernel)" >&2
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${kmissing[@]}" >/dev/null; } ||
      echo "mdcom: ${kmissing[*]} not installable here: tests/kernel will be skipped" >&2
  fi
fi
