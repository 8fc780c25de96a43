#!/usr/bin/env bash
# Installs what is missing, builds a Release binary and starts HotKV in the foreground on
# 127.0.0.1:6379 (in memory). Flags pass through: scripts/run.sh --port 7000 --threads 2
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
scripts/build.sh release
exec build-release/hotkv "$@"
