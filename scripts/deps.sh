#!/usr/bin/env bash
# Installs the Debian packages HotKV needs, and only those that are missing, so a second run
# costs a dpkg query and nothing more.
#   scripts/deps.sh --run    what building and talking to the server needs (scripts/run.sh)
#   scripts/deps.sh          ... and what the benchmarks and the usual tests use
#   scripts/deps.sh --test   ... and what only the test suite uses
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libasio-dev libfmt-dev libspdlog-dev libcli11-dev libabsl-dev
  libluajit2-5.1-dev lua-cjson-dev libmsgpack-dev liblzf-dev libjemalloc-dev libssl-dev redis-tools
)
# The tests and benchmarks: Catch2 and Google Benchmark, redis-server as the reference, Debian's
# python3 with redis-py (the integration tests run /usr/bin/python3), tcl for Redis's own suite
# (which reads processes with ps), openssl the command (the TLS tests make their certificates
# with it), iproute2 (the protected-mode test lists this machine's addresses with ip) and bc
# (scripts/acl_bench.sh). A minimal Debian has none of them.
if [[ ${1:-} != --run ]]; then
  packages+=(catch2 libbenchmark-dev redis-server python3 python3-redis netcat-openbsd
             libhiredis-dev tcl procps util-linux openssl iproute2 bc)
fi

# `scripts/deps.sh --test` adds what only the tests need: a browser for the sale report, the
# job frameworks the queue tests run real workers of (RQ, Celery with kombu), and the
# redis-sentinel processes the failover tests run (test_sentinel.py), and the Prometheus
# exporter that scrapes a server in test_prometheus_exporter.py, and clang with its
# sanitizer and libFuzzer runtimes for the sanitized build and the fuzz targets.
if [[ ${1:-} == --test ]]; then
  packages+=(chromium python3-rq python3-celery redis-sentinel prometheus-redis-exporter
             clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "deps: installing ${missing[*]}"
# sudo clears the environment: the setting that keeps apt from asking questions goes on the
# command line.
sudo_cmd=(env DEBIAN_FRONTEND=noninteractive)
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo "${sudo_cmd[@]}")
fi
# An install that was cut short (Ctrl-C, a lost connection) leaves packages unpacked but not
# configured, and apt refuses to go on until they are: finish them first (nothing to do, and
# instant, otherwise).
"${sudo_cmd[@]}" dpkg --configure -a
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian packages start a redis-server on 6379 (a redis-sentinel on 26379, the exporter on 9121) as
# services; HotKV's default port is 6379, and the tests and benchmarks start their own servers
# and sentinels on free ports, so the packaged ones are stopped.
for service in redis-server redis-sentinel prometheus-redis-exporter; do
  if command -v systemctl >/dev/null 2>&1; then
    "${sudo_cmd[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
  fi
  if command -v service >/dev/null 2>&1; then
    "${sudo_cmd[@]}" service "$service" stop >/dev/null 2>&1 || true
  fi
done
