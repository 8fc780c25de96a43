#!/usr/bin/env bash
# Configures and builds one flavour of HotKV into its own directory.
#   scripts/build.sh release   -> build-release/ (Release, with benchmarks)
#   scripts/build.sh test      -> build/         (RelWithDebInfo, what the tests run)
#   scripts/build.sh asan      -> build-asan/    (AddressSanitizer + UBSan, no benchmarks; with
#                                                 clang also the libFuzzer targets, tests/fuzz)
#   scripts/build.sh run       -> build-run/     (Release, the server alone: what run.sh starts)
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-test}
jobs=${HOTKV_JOBS:-2}
targets=()
case "$flavour" in
  release) dir=build-release; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  test) dir=build; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DHOTKV_SANITIZE=ON -DHOTKV_BUILD_BENCH=OFF)
    # Built with clang when it is installed (scripts/deps.sh --test): the same build then links
    # the fuzz targets, so fuzzing costs no second build of the engine. HOTKV_ASAN_CXX=g++
    # keeps GCC (no fuzz targets).
    asan_cxx=${HOTKV_ASAN_CXX:-clang++}
    if [[ $asan_cxx == clang++* ]] && command -v "$asan_cxx" >/dev/null 2>&1; then
      args+=(-DCMAKE_C_COMPILER="${asan_cxx/clang++/clang}" -DCMAKE_CXX_COMPILER="$asan_cxx"
             -DHOTKV_FUZZ=ON)
    else
      asan_cxx=g++
      args+=(-DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++)
    fi
    dir=${HOTKV_ASAN_DIR:-$dir} ;;
  run) dir=build-run; targets=(--target hotkv)
    args=(-DCMAKE_BUILD_TYPE=Release -DHOTKV_BUILD_BENCH=OFF -DHOTKV_BUILD_TESTS=OFF) ;;
  *) echo "usage: scripts/build.sh release|test|asan|run" >&2; exit 2 ;;
esac

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
# A directory configured with another compiler (an older GCC build-asan) is configured afresh:
# CMake cannot switch the compiler of an existing cache.
if [[ -f $dir/CMakeCache.txt && $flavour == asan ]] &&
   ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=\(.*/\)\?${asan_cxx}\$" "$dir/CMakeCache.txt"; then
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
if [[ ! -f $dir/CMakeCache.txt ]]; then
  cmake -S . -B "$dir" "${generator[@]}" "${args[@]}" >/dev/null
fi
cmake --build "$dir" -j "$jobs" "${targets[@]}"
