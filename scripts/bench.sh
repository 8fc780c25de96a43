#!/usr/bin/env bash
# Side-by-side throughput of hotkv and redis-server on this machine, in one run.
#
# Both servers start on free loopback ports (redis-server with persistence off) and every case
# runs against them alternately -- redis, hotkv, redis, hotkv -- so drift in a noisy machine hits
# both. redis-benchmark is the load generator. For each run the server's own CPU time
# (utime+stime from /proc/<pid>/stat, all threads) gives CPU microseconds per request. With two or
# more cores the servers are pinned to the first cores and the client to the last one.
# Results are ratios against Redis, never absolute promises.
#
# Usage: scripts/bench.sh [options]
#   --threads N          hotkv --threads (default 1)
#   --repeats R          runs per case and server (default 1); rps is the median
#   --requests N         requests for the -P 1 and hot-key cases (default 200000)
#   --pipeline-requests N  requests for the -P 16 cases (default 10 x --requests)
#   --cases LIST         comma list of: set,get,incr,set-p16,get-p16,incr-p16,decr-hot,
#                        set-c500,incr-c500
#   --hotkv-bin PATH     hotkv binary (default build-release/hotkv, built if missing)
#   --hotkv-cmd 'CMD'    any server command instead of hotkv; {port} is replaced by the port
#                        (also HOTKV_BENCH_CMD), e.g. a second redis-server to test this script
#   --aof POLICY         run both servers with appendonly yes and appendfsync POLICY
#                        (always|everysec|no), each logging into its own temporary directory
#   --no-pin             do not use taskset
# Example: scripts/bench.sh --threads 2 --repeats 3
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

threads=1
repeats=1
requests=200000
pipeline_requests=""
cases="set,get,incr,set-p16,get-p16,incr-p16,decr-hot"
hotkv_bin="${HOTKV_BIN:-build-release/hotkv}"
hotkv_cmd="${HOTKV_BENCH_CMD:-}"
pin=1
aof=""
keyspace=100000        # -r: keys spread over every slot, hence every shard
run_timeout=600        # seconds; redis-benchmark waits forever on a dead server

while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --pipeline-requests) pipeline_requests=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --hotkv-bin) hotkv_bin=$2; shift 2 ;;
    --hotkv-cmd) hotkv_cmd=$2; shift 2 ;;
    --no-pin) pin=0; shift ;;
    --aof) aof=$2; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
done
pipeline_requests=${pipeline_requests:-$((requests * 10))}

for tool in redis-server redis-benchmark redis-cli awk; do
  command -v "$tool" >/dev/null || { echo "bench: $tool not found (scripts/deps.sh)" >&2; exit 2; }
done

if [[ -z $hotkv_cmd ]]; then
  if [[ ! -x $hotkv_bin ]]; then
    echo "bench: $hotkv_bin missing, building a Release hotkv" >&2
    cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-release -j2 --target hotkv
  fi
  hotkv_cmd="$(printf '%q' "$(realpath "$hotkv_bin")") --port {port} --bind 127.0.0.1"
  hotkv_cmd+=" --threads $threads --loglevel warning"
  hotkv_label="hotkv --threads $threads"
else
  hotkv_label="custom: $hotkv_cmd"
fi
redis_cmd="redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --loglevel warning"
if [[ -n $aof ]]; then
  aof_root=$(mktemp -d)
  mkdir -p "$aof_root/redis" "$aof_root/hotkv"
  redis_cmd="redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly yes"
  redis_cmd+=" --appendfsync $aof --dir $aof_root/redis --loglevel warning"
  hotkv_cmd+=" --appendonly yes --appendfsync $aof --dir $aof_root/hotkv"
  hotkv_label+=" (appendonly yes, appendfsync $aof)"
fi

# Pinning: servers on cores 0..n-2, the load generator on the last core.
ncpu=$(nproc)
server_pin=() client_pin=() pin_note="not pinned"
if ((pin && ncpu >= 2)) && command -v taskset >/dev/null; then
  server_cores="0-$((ncpu - 2))"
  ((ncpu == 2)) && server_cores=0
  server_pin=(taskset -c "$server_cores")
  client_pin=(taskset -c "$((ncpu - 1))")
  pin_note="servers pinned to core(s) $server_cores, redis-benchmark to core $((ncpu - 1))"
elif ((pin)); then
  pin_note="not pinned (needs taskset and 2+ cores; this machine has $ncpu)"
fi

clk_tck=$(getconf CLK_TCK)
ulimit -n 4096 2>/dev/null || true # -c 1000 needs the descriptors

workdir=$(mktemp -d /tmp/hotkv-bench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$workdir"
  if [[ -n ${aof_root:-} ]]; then
    rm -rf "$aof_root"
  fi
}
trap cleanup EXIT

free_port() {
  /usr/bin/python3 -c \
    'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME COMMAND_TEMPLATE -> sets ${NAME}_port and ${NAME}_pid
start_server() {
  local name=$1 template=$2 port cmd pid i
  port=$(free_port)
  cmd=${template//\{port\}/$port}
  "${server_pin[@]}" bash -c "exec $cmd" >"$workdir/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for ((i = 0; i < 100; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "bench: $name exited during start-up:" >&2
      cat "$workdir/$name.log" >&2
      exit 1
    fi
    if [[ $(timeout 2 redis-cli -p "$port" PING 2>/dev/null) == PONG ]]; then
      printf -v "${name}_port" %s "$port"
      printf -v "${name}_pid" %s "$pid"
      return
    fi
    sleep 0.1
  done
  echo "bench: $name did not answer PING within 10 s" >&2
  exit 1
}

# Server CPU time in clock ticks (user + system, all threads).
cpu_ticks() {
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# case_args CASE -> sets n and args (redis-benchmark arguments without host/port)
case_args() {
  case $1 in
    set) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t set) ;;
    get) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t get) ;;
    incr) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t incr) ;;
    set-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t set) ;;
    get-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t get) ;;
    incr-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t incr) ;;
    decr-hot) n=$requests; args=(-c 1000 -P 1 DECR hotkey) ;;
    set-c500) n=$requests; args=(-c 500 -P 1 -r "$keyspace" -t set) ;;
    incr-c500) n=$requests; args=(-c 500 -P 1 -r "$keyspace" -t incr) ;;
    *) echo "bench: unknown case $1" >&2; exit 2 ;;
  esac
}

case_label() {
  case $1 in
    set) echo "SET -c 50 -P 1" ;;
    get) echo "GET -c 50 -P 1" ;;
    incr) echo "INCR -c 50 -P 1" ;;
    set-p16) echo "SET -c 50 -P 16" ;;
    get-p16) echo "GET -c 50 -P 16" ;;
    incr-p16) echo "INCR -c 50 -P 16" ;;
    decr-hot) echo "DECR one hot key -c 1000" ;;
    set-c500) echo "SET -c 500 -P 1" ;;
    incr-c500) echo "INCR -c 500 -P 1" ;;
  esac
}

# run_one NAME CASE -> prints "rps cpu_ticks requests"
run_one() {
  local name=$1 c=$2 port pid before after out rps
  port=${name}_port; port=${!port}
  pid=${name}_pid; pid=${!pid}
  case_args "$c"
  before=$(cpu_ticks "$pid")
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" \
      -n "$n" --csv "${args[@]}" 2>&1); then
    echo "bench: redis-benchmark failed against $name for $c:" >&2
    echo "$out" >&2
    tail -20 "$workdir/$name.log" >&2
    exit 1
  fi
  after=$(cpu_ticks "$pid")
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "bench: $name died during $c" >&2
    tail -20 "$workdir/$name.log" >&2
    exit 1
  fi
  # CSV: a header line, then "NAME","rps",...; the last such line is the result.
  rps=$(printf '%s\n' "$out" | awk -F'","' '/^"/ && !/^"test"/ { r = $2 } END { print r + 0 }')
  if [[ -z $rps || $rps == 0 ]]; then
    echo "bench: could not read requests/s for $name $c from:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "$rps $((after - before)) $n"
}

median() {
  sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

IFS=, read -r -a case_list <<<"$cases"
for c in "${case_list[@]}"; do
  case_args "$c" # exits on an unknown name before anything starts
done

start_server redis "$redis_cmd"
start_server hotkv "$hotkv_cmd"

echo "# hotkv vs redis-server"
echo
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $ncpu cores:" \
  "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "- redis: $(redis-server --version | awk '{ print $3 }'), $redis_cmd"
echo "- hotkv: $hotkv_label"
echo "- $pin_note; $repeats run(s) per case and server, alternating redis/hotkv;" \
  "-n $requests (-P 16: $pipeline_requests), -r $keyspace"
echo "- CPU per request = server utime+stime (CLK_TCK $clk_tck) / requests"
echo

rows=()
for c in "${case_list[@]}"; do
  : >"$workdir/redis.runs"
  : >"$workdir/hotkv.runs"
  for ((r = 1; r <= repeats; r++)); do
    for name in redis hotkv; do
      res=$(run_one "$name" "$c")
      echo "$res" >>"$workdir/$name.runs"
      read -r rps ticks n <<<"$res"
      printf '%-26s run %d/%d %-6s %12.0f req/s %8.2f us CPU/req\n' "$(case_label "$c")" "$r" \
        "$repeats" "$name" "$rps" "$(awk -v t="$ticks" -v k="$clk_tck" -v n="$n" \
        'BEGIN { print t / k / n * 1e6 }')" >&2
    done
  done
  r_rps=$(awk '{ print $1 }' "$workdir/redis.runs" | median)
  h_rps=$(awk '{ print $1 }' "$workdir/hotkv.runs" | median)
  r_cpu=$(awk -v k="$clk_tck" '{ t += $2; n += $3 } END { printf "%.2f", t / k / n * 1e6 }' \
    "$workdir/redis.runs")
  h_cpu=$(awk -v k="$clk_tck" '{ t += $2; n += $3 } END { printf "%.2f", t / k / n * 1e6 }' \
    "$workdir/hotkv.runs")
  ratio=$(awk -v a="$h_rps" -v b="$r_rps" 'BEGIN { printf "%.2f", a / b }')
  rows+=("$(printf '| %s | %.0f | %.0f | %s | %s | %s |' "$(case_label "$c")" "$r_rps" "$h_rps" \
    "$ratio" "$r_cpu" "$h_cpu")")
done

echo "| case | redis rps | hotkv rps | ratio hotkv/redis | redis µs CPU/req | hotkv µs CPU/req |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "rps: median of runs. CPU: total server CPU over total requests (tick resolution" \
  "$((1000 / clk_tck)) ms, so short runs are coarse)."
