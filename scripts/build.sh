#!/usr/bin/env bash
# Configures and builds one flavour of HotKV into its own directory.
#   scripts/build.sh release   -> build-release/ (Release, with benchmarks)
#   scripts/build.sh test      -> build/         (RelWithDebInfo, what the tests run)
#   scripts/build.sh asan      -> build-asan/    (AddressSanitizer + UBSan, no benchmarks; with
#                                                 clang also the libFuzzer targets, tests/fuzz)
#   scripts/build.sh run       -> build-run/     (Release, the server alone: what run.sh starts)
#
# Every flavour compiles the layers as a unity build (16 files a unit, CMakeLists.txt's
# HOTKV_UNITY), the fastest way from nothing: the server alone in 83 s instead of 270 s, the test
# flavour in 369 s instead of 506 s (2 cores). A change to one file then recompiles its unit
# (23 s instead of 9 s in the test flavour): HOTKV_UNITY=OFF scripts/build.sh builds file by
# file, for a long edit-compile session.
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-test}
configure_only=0
[[ ${2:-} == --configure-only ]] && configure_only=1
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
  *) echo "usage: scripts/build.sh release|test|asan|run [--configure-only]" >&2; exit 2 ;;
esac
# Another directory for the flavour (tests/scripts/build_heals.sh builds in a temporary one).
dir=${HOTKV_BUILD_DIR:-$dir}

unity=${HOTKV_UNITY:-ON}
args+=(-DHOTKV_UNITY="$unity")
generator=Ninja build_file=build.ninja
if ! command -v ninja >/dev/null 2>&1; then
  generator="Unix Makefiles" build_file=Makefile
fi
# Without its cache (and build file) the directory is configured from nothing below.
forget_configuration() { rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles" "$dir/$build_file"; }
# CMake cannot switch the generator or the compiler of an existing cache: a directory made with
# another one (make before ninja was installed, an older GCC build-asan) is configured afresh.
if [[ -f $dir/CMakeCache.txt ]] &&
   ! grep -qx "CMAKE_GENERATOR:INTERNAL=$generator" "$dir/CMakeCache.txt"; then
  forget_configuration
fi
if [[ -f $dir/CMakeCache.txt && $flavour == asan ]] &&
   ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=\(.*/\)\?${asan_cxx}\$" "$dir/CMakeCache.txt"; then
  forget_configuration
fi
# The build file is written last, when configuring succeeded: without it the directory is what
# a failed or interrupted configure left (a cache that remembers a library as missing, say),
# and it is configured again from nothing. An interrupted build needs nothing: ninja and make
# go on from the files they finished.
if [[ ! -f $dir/$build_file ]]; then
  forget_configuration
  mkdir -p "$dir"
  if ! cmake -S . -B "$dir" -G "$generator" "${args[@]}" >"$dir/configure.log" 2>&1; then
    cat "$dir/configure.log" >&2
    forget_configuration
    echo "build: configuring $dir failed (log above); scripts/deps.sh installs what it needs" >&2
    exit 1
  fi
fi
if ! grep -qx "HOTKV_UNITY:BOOL=$unity" "$dir/CMakeCache.txt"; then
  cmake -S . -B "$dir" -DHOTKV_UNITY="$unity" >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log" >&2; exit 1; }
fi
((configure_only == 0)) || exit 0
cmake --build "$dir" -j "$jobs" "${targets[@]}"
