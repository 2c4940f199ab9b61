#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_fuzz.sh - build (if needed) and run the libFuzzer target fuzz_region.
#
#   run_fuzz.sh SRC_DIR OUT_DIR [FUZZER_BINARY] [-- libFuzzer options]
#
# Without FUZZER_BINARY it compiles tests/fuzz/fuzz_region.c and the core with
# clang -fsanitize=fuzzer,address,undefined into OUT_DIR/fuzz_region (exit 77
# = skipped when there is no clang with the libFuzzer runtime). The committed
# corpus (tests/fuzz/corpus) is read, never written: new inputs go to OUT_DIR/new.
set -eu
src=$1 out=$2
shift 2
bin=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then bin=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi

mkdir -p "$out/new"
if [ -z "$bin" ]; then
  cc=${MDCOM_FUZZ_CC:-clang}
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP: no clang (scripts/deps.sh installs clang and libclang-rt-14-dev)"
    exit 77
  fi
  bin=$out/fuzz_region
  case $(uname -m) in x86_64|i?86) arch=x86 ;; *) arch=generic ;; esac
  if ! "$cc" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1 -std=c11 \
      -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
      -I"$src/include" -I"$src/ports/arch/$arch" -DMDCOM_MAX_INSTANCES=4 -DMDCOM_MAX_CHANNELS=64 \
      "$src/tests/fuzz/fuzz_region.c" "$src/src/core/layout.c" "$src/src/core/msg.c" \
      "$src/src/core/verify.c" "$src/src/core/errors.c" "$src/src/core/inst.c" \
      "$src/src/core/attach.c" "$src/src/core/proc.c" "$src/src/core/wait.c" \
      "$src/src/core/master.c" "$src/src/core/reap.c" "$src/src/core/fifo_repair.c" \
      "$src/src/core/format.c" "$src/src/core/fifo.c" "$src/src/core/smem.c" \
      "$src/src/wire.c" -o "$bin.tmp" 2>"$out/build.log"; then
    cat "$out/build.log"
    if grep -q -e "libclang_rt.fuzzer" -e "cannot find" -e "unsupported option" "$out/build.log"; then
      echo "SKIP: $cc has no libFuzzer runtime (Debian: libclang-rt-14-dev)"
      exit 77
    fi
    exit 1
  fi
  mv "$bin.tmp" "$bin"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:print_stacktrace=1:halt_on_error=1"
cd "$out"
exec "$bin" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@" "$out/new" "$src/tests/fuzz/corpus"
