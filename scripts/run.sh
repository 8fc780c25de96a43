#!/usr/bin/env bash
# Installs what is missing, builds the Release server (the server alone: no tests, tools or
# benchmarks, which it never runs) and starts HotKV in the foreground on
# 127.0.0.1:6379 with scripts/hotkv.conf: in memory plus the append-only log under ./data.
# Flags pass through and override the file: scripts/run.sh --port 7000 --threads 2
# (--appendonly no gives a pure in-memory server).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --run
scripts/build.sh run
mkdir -p data
exec build-run/hotkv --config scripts/hotkv.conf "$@"
