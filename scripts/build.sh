#!/usr/bin/env bash
# Configures and builds one flavour of HotKV into its own directory.
#   scripts/build.sh release   -> build-release/ (Release, with benchmarks)
#   scripts/build.sh test      -> build/         (RelWithDebInfo, what the tests run)
#   scripts/build.sh asan      -> build-asan/    (AddressSanitizer + UBSan, no benchmarks)
#   scripts/build.sh run       -> build-run/     (Release, the server alone: what run.sh starts)
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-test}
jobs=${HOTKV_JOBS:-2}
targets=()
case "$flavour" in
  release) dir=build-release; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  test) dir=build; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DHOTKV_SANITIZE=ON -DHOTKV_BUILD_BENCH=OFF) ;;
  run) dir=build-run; targets=(--target hotkv)
    args=(-DCMAKE_BUILD_TYPE=Release -DHOTKV_BUILD_BENCH=OFF -DHOTKV_BUILD_TESTS=OFF) ;;
  *) echo "usage: scripts/build.sh release|test|asan|run" >&2; exit 2 ;;
esac

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
if [[ ! -f $dir/CMakeCache.txt ]]; then
  cmake -S . -B "$dir" "${generator[@]}" "${args[@]}" >/dev/null
fi
cmake --build "$dir" -j "$jobs" "${targets[@]}"
