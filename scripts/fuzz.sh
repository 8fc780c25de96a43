#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for a while, one after the other.
#   scripts/fuzz.sh [seconds per target, default 60] [target ...]
# Builds the sanitized flavour first if needed (scripts/build.sh asan, with clang: the fuzz
# targets live in build-asan/ next to hotkv and hotkv_tests). Each target runs on a copy of its
# seed corpus, tests/fuzz/corpus/<target>/, in build-asan/fuzz/<target>/ (the corpus it grows
# there is kept for the next run), with its dictionary tests/fuzz/<target>.dict if there is one.
# Exits non-zero, naming the input that crashed, hung or leaked, if any target finds something;
# rerun that input with `build-asan/hotkv_fuzz_<target> <file>`.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
build=${HOTKV_ASAN_DIR:-build-asan}

scripts/build.sh asan >/dev/null
shopt -s nullglob
targets=("$@")
if ((${#targets[@]} == 0)); then
  for bin in "$build"/hotkv_fuzz_*; do
    targets+=("${bin##*/hotkv_fuzz_}")
  done
fi
if ((${#targets[@]} == 0)); then
  echo "fuzz: no fuzz targets in $build (the asan flavour builds them only with clang)" >&2
  exit 1
fi

# No abort_on_error: libFuzzer writes the input itself when the sanitizer reports.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for target in "${targets[@]}"; do
  work=$build/fuzz/$target
  mkdir -p "$work/corpus" "$work/found"
  if [[ -d tests/fuzz/corpus/$target ]]; then
    cp -n tests/fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
  fi
  dict=()
  if [[ -f tests/fuzz/$target.dict ]]; then
    dict=(-dict="tests/fuzz/$target.dict")
  fi
  echo "fuzz: $target for ${seconds}s"
  # -timeout: one input running this long is a hang; -rss_limit_mb bounds the process.
  if ! "$build/hotkv_fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$work/found/" "${dict[@]}" \
      "$work/corpus" >"$work/log" 2>&1; then
    tail -n 60 "$work/log" >&2
    found=("$work"/found/*)
    echo "fuzz: $target FOUND A PROBLEM: ${found[*]:-(no input written; see $work/log)}" >&2
    failed+=("$target")
  fi
  # The last status line: executions, coverage (cov:, ft:) and corpus size reached.
  grep -E '^#[0-9]+.*(DONE|cov:)' "$work/log" | tail -n 1 || true
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/log" || true
done

if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
