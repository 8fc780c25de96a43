#!/usr/bin/env bash
# Long crash test: kill -9 the server under load N times (default 500) with appendfsync always
# and everysec, restarting it each time, and check that nothing acknowledged was lost and no
# cross-shard MSET was half applied. CI runs the same test with 20 iterations.
#   scripts/crash_test.sh [iterations] [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-500}
threads=${2:-4}
scripts/build.sh test
HOTKV_CRASH_ITERATIONS=$iterations exec /usr/bin/python3 tests/integration/test_persistence.py \
  --server build/hotkv --threads "$threads" --only kill9
