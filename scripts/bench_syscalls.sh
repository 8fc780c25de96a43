#!/usr/bin/env bash
# Where a request's CPU goes, hotkv against redis-server, for the flash-sale reserve at
# -c 50 -P 1 in stock (the case of docs/performance.md's request-path section).
#
# Each round starts redis-server (the check-and-decrement Lua script via EVALSHA, as in
# scripts/bench.sh) and hotkv (INV.RESERVE) one after the other on a free loopback port, pinned
# to core 0 with the load generator (hotkv_command_bench) on the last core, and prints per
# request: the server's user and system CPU time (utime/stime from /proc/<pid>/stat), and, when
# `perf` can read tracepoints, its system calls, reads, writes, epoll_waits and the wake-ups it
# caused (sched:sched_waking, mostly the load generator). The last line is the mean CPU ratio.
#
# Usage: scripts/bench_syscalls.sh [--rounds R] [--requests N] [--hotkv-bin PATH]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
requests=200000
hotkv_bin=build-release/hotkv
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --hotkv-bin) hotkv_bin=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "bench_syscalls: unknown option $1" >&2; exit 2 ;;
  esac
done
((rounds >= 1 && rounds <= 20)) || { echo "bench_syscalls: --rounds 1..20" >&2; exit 2; }
((requests >= 1000 && requests <= 5000000)) || {
  echo "bench_syscalls: --requests 1000..5000000" >&2; exit 2; }

load_bin=build-release/hotkv_command_bench
if [[ ! -x $hotkv_bin || ! -x $load_bin ]]; then
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release -j2 --target hotkv hotkv_command_bench
fi
ncpu=$(nproc)
server_pin=(taskset -c 0)
client_pin=(taskset -c "$((ncpu - 1))")
if ((ncpu < 2)) || ! command -v taskset >/dev/null; then
  server_pin=() client_pin=()
fi
use_perf=0
if command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1; then
  use_perf=1
fi
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
workdir=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$workdir"
}
trap cleanup EXIT

script="local s = tonumber(redis.call('GET', KEYS[1]))
if not s or s < 1 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -2 end
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
return redis.call('DECR', KEYS[1])"

wait_ready() {
  for _ in $(seq 100); do
    redis-cli -p "$port" PING >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench_syscalls: server on $port did not answer" >&2
  exit 1
}

# run NAME -> prints "user_us system_us" per request (and the perf lines to stderr)
run() {
  local name=$1 load=()
  if [[ $name == redis ]]; then
    "${server_pin[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
      --loglevel warning >/dev/null 2>&1 &
    pid=$!
    wait_ready
    redis-cli -p "$port" -n 9 SET stock 1000000000000 >/dev/null
    local sha
    sha=$(redis-cli -p "$port" SCRIPT LOAD "$script")
    load=(--dbnum 9 -- EVALSHA "$sha" 2 stock 'hold:__rand_int__' 600)
  else
    "${server_pin[@]}" "$hotkv_bin" --port "$port" --bind 127.0.0.1 --appendonly no --threads 1 \
      --loglevel warning >/dev/null 2>&1 &
    pid=$!
    wait_ready
    redis-cli -p "$port" INV.CREATE item 1000000000000 >/dev/null
    load=(-- INV.RESERVE item 'h:__rand_int__' 1 600000)
  fi
  local perf_pid="" u0 s0 u1 s1
  if ((use_perf)); then
    perf stat -x, -o "$workdir/perf.$name" -p "$pid" -e raw_syscalls:sys_enter \
      -e 'syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_recvmsg' \
      -e 'syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_wait' \
      -e sched:sched_waking &
    perf_pid=$!
    sleep 0.3
  fi
  read -r u0 s0 < <(awk '{ sub(/.*\) /, ""); print $12, $13 }' "/proc/$pid/stat")
  "${client_pin[@]}" "$load_bin" --port "$port" --clients 50 --pipeline 1 \
    --requests "$requests" --ids unique "${load[@]}" >"$workdir/load.$name" 2>&1
  read -r u1 s1 < <(awk '{ sub(/.*\) /, ""); print $12, $13 }' "/proc/$pid/stat")
  if [[ -n $perf_pid ]]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" 2>/dev/null || true
    awk -F, -v n="$requests" -v who="$name" '$3 ~ /:/ && $1 ~ /^[0-9]+$/ {
        sub(/^(raw_)?syscalls:sys_enter_?/, "", $3); if ($3 == "") $3 = "syscalls"
        printf "  %-6s %-20s %.3f per request\n", who, $3, $1 / n }' \
      "$workdir/perf.$name" >&2
  fi
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  local tck
  tck=$(getconf CLK_TCK)
  awk -v a="$((u1 - u0))" -v b="$((s1 - s0))" -v k="$tck" -v n="$requests" \
    'BEGIN { printf "%.2f %.2f\n", a / k / n * 1e6, b / k / n * 1e6 }'
}

echo "reserve in stock, -c 50 -P 1, $requests requests per run; µs of server CPU per request"
sum=0
for ((r = 1; r <= rounds; r++)); do
  read -r ru rs < <(run redis)
  read -r hu hs < <(run hotkv)
  ratio=$(awk -v a="$hu" -v b="$hs" -v c="$ru" -v d="$rs" 'BEGIN { printf "%.2f", (a + b) / (c + d) }')
  printf 'round %d: redis user %s + system %s; hotkv user %s + system %s; CPU ratio %s\n' \
    "$r" "$ru" "$rs" "$hu" "$hs" "$ratio"
  sum=$(awk -v s="$sum" -v x="$ratio" 'BEGIN { print s + x }')
done
awk -v s="$sum" -v n="$rounds" 'BEGIN { printf "mean CPU ratio hotkv/redis: %.2f\n", s / n }'
