#!/usr/bin/env bash
# Installs what is missing, builds the Release server (the server alone: no tests, tools or
# benchmarks, which it never runs) and starts HotKV in the foreground on
# 127.0.0.1:6379 with scripts/hotkv.conf: in memory plus the append-only log under ./data.
# Flags pass through and override the file: scripts/run.sh --port 7000 --threads 2
# (--appendonly no gives a pure in-memory server).
set -euo pipefail
cd "$(dirname "$0")/.."

# The first run on a new machine installs the packages and builds (README: "What a first run
# costs"); each step says how long it took, so a slow one shows where its time went.
scripts/deps.sh --run
echo "run: packages ready at ${SECONDS} s" >&2
scripts/build.sh run
echo "run: server built at ${SECONDS} s" >&2
mkdir -p data
exec build-run/hotkv --config scripts/hotkv.conf "$@"
