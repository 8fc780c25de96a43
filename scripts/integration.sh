#!/usr/bin/env bash
# Runs the end-to-end tests in tests/integration by hand, outside ctest: against a hotkv binary
# at each requested --threads, or against the reference redis-server (--kind redis) to prove the
# expectations themselves. Exits non-zero if any script fails.
#
#   scripts/integration.sh                          # build/hotkv, threads 1 and 4
#   scripts/integration.sh --server build-release/hotkv --threads "1 2"
#   scripts/integration.sh --kind redis             # the reference
#   scripts/integration.sh --only protocol          # one script (test_protocol.py)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=/usr/bin/python3 # the Debian interpreter, which has python3-redis
server="$root/build/hotkv"
threads="1 4"
kind=hotkv
only=""

while (($#)); do
  case $1 in
    --server) server=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --kind) kind=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "integration: unknown option $1" >&2; exit 2 ;;
  esac
done

if [[ $kind == hotkv && ! -x $server ]]; then
  echo "integration: no hotkv binary at $server (build it, or pass --server / --kind redis)" >&2
  exit 2
fi

export PYTHONDONTWRITEBYTECODE=1
failed=()
for script in "$root"/tests/integration/test_*.py; do
  name=$(basename "$script" .py)
  name=${name#test_}
  if [[ -n $only && $name != "$only" ]]; then
    continue
  fi
  if [[ $kind == redis ]]; then
    runs=("--kind redis")
  else
    runs=()
    for t in $threads; do
      runs+=("--server $server --threads $t")
    done
  fi
  for args in "${runs[@]}"; do
    echo "== $name $args"
    # shellcheck disable=SC2086 # args is a list of plain words
    if ! timeout 300 "$python" "$script" $args; then
      failed+=("$name ($args)")
    fi
  done
done

if ((${#failed[@]})); then
  printf 'integration: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "integration: all passed"
