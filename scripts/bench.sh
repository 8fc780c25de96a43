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
# Streams and pub/sub (not in the default list; they need the drivers in bench/tools/, built as
# hotkv_stream_bench and hotkv_pubsub_bench, and built here if missing):
#   xadd, xadd-p16  redis-benchmark `XADD <key> * field value` at -c 50, -P 1 / -P 16. Each run
#                   appends to a fresh key (the same name on both servers), checked with XLEN
#                   and deleted after the run, outside the CPU window.
#   xreadgroup      hotkv_stream_bench fills a fresh stream with --stream-entries entries
#                   (pipelined XADD), creates a group at 0, then 4 consumers (one connection
#                   each) loop XREADGROUP COUNT 50 + one XACK until it is drained; rate is
#                   entries acknowledged per second and CPU is per entry, both over the drain only.
#   brpop           hotkv_queue_bench: 50 consumers (one connection each) wait in BRPOP on one
#                   empty list while 4 producers push --requests distinct entries one LPUSH at
#                   a time; every entry must be popped exactly once. Rate is entries per second
#                   from the first push to the last pop, CPU is per entry over that window.
#   publish         hotkv_pubsub_bench subscribes 100 connections to a fresh channel, then
#                   redis-benchmark sends --publish-requests `PUBLISH <ch> <16 bytes>` at -c 50
#                   -P 1. Two rows: messages delivered per second (first to last arrival) with
#                   CPU per delivered message, and PUBLISH calls per second with CPU per call; the
#                   CPU window runs until the last message arrived.
#
# Inventory reserve on one hot item (not in the default list; `reserve-all` runs all eight):
#   reserve, reserve-p16, reserve-c1000, reserve-c1000-p16            in stock
#   reserve-soldout, reserve-soldout-p16, reserve-soldout-c1000, reserve-soldout-c1000-p16
#                   -c 50 or -c 1000, -P 1 or -P 16. hotkv runs its native
#                   `INV.RESERVE <item> h:__rand_int__ 1 600000`; redis runs the seed's
#                   check-and-decrement Lua script (GET stock, EXISTS hold, SET hold EX, DECR) as
#                   `EVALSHA <sha> 2 <stock> hold:__rand_int__ 600`, in database 9 (the holds are
#                   keys there). In stock: the item is created with 10^12 units, so it never runs
#                   out; sold out: with 0. Each run uses a fresh item, created before the CPU
#                   window; after it the units taken are checked (a warning if they are not what
#                   was asked) and the holds dropped (DEL of the item, FLUSHDB of database 9),
#                   outside the CPU window. The load generator is hotkv_command_bench
#                   (bench/tools/command_load.cpp: redis-benchmark's -c/-P/-n loop for one
#                   custom command, built like the other drivers), on both servers, with
#                   __rand_int__ a counter so that no hold id repeats: redis-benchmark exits at
#                   the first error reply, and INV.RESERVE answers -SOLDOUT when sold out and
#                   -HOLDEXISTS for a repeated random id (-r 10^9 draws ~20 repeats in 200,000).
#
# Usage: scripts/bench.sh [options]
#   --threads LIST       hotkv --threads, or a comma list of them (`default` = one per core, the
#                        server's own default): each is a hotkv server of its own, alternated
#                        with redis-server in the same run, e.g. --threads 1,default prints
#                        each against redis and the default against --threads 1 (default 1)
#   --repeats R          runs per case and server (default 1); rps is the median
#   --requests N         requests for the -P 1 and hot-key cases (default 200000)
#   --pipeline-requests N  requests for the -P 16 cases (default 10 x --requests)
#   --stream-entries N   entries the xreadgroup case drains (default --requests)
#   --publish-requests N PUBLISH calls in the publish case (default --requests / 10; each is
#                        delivered 100 times)
#   --pipe-requests N    SETs the pipe case sends through redis-cli --pipe (default 1000000)
#   --cases LIST         comma list of: set,get,incr,set-p16,get-p16,incr-p16,decr-hot,mset,
#                        mset-p16 (redis-benchmark's 10-key MSET), pipe (redis-cli --pipe of
#                        random-key SETs),
#                        set-c500,incr-c500,xadd,xadd-p16,xreadgroup,brpop,publish, the reserve
#                        cases above, or reserve-all for the eight of them; evalsha,
#                        evalsha-p16, evalsha-c1000, evalsha-c1000-p16, undeclared(-p16,
#                        -c1000, -c1000-p16: the warehouse script with keys outside KEYS),
#                        multi-1shard, multi-2shard, hincrby(-p16), sadd(-p16), zadd(-p16),
#                        or scripts-all; lpush, lpush-p16, lpop, lpop-p16, rpop, rpop-p16 on one
#                        hot list (the pops take what the pushes left, so list them after the
#                        pushes; each pop case sends --requests), or lists-all; lrange-100
#                        (after the pushes); setbit, bitcount (after setbit); pfadd,
#                        pfadd-p16 (random elements into one HyperLogLog), pfcount (its cached
#                        count), pfcount-union (PFCOUNT of the key twice: the union path that
#                        merges and estimates every call); list the counts after the adds
#   --hotkv-bin PATH     hotkv binary (default build-release/hotkv, built if missing)
#   --hotkv-cmd 'CMD'    any server command instead of hotkv; {port} is replaced by the port
#                        (also HOTKV_BENCH_CMD), e.g. a second redis-server to test this script
#   --redis-cmd 'CMD'    the reference server's command instead of redis-server ({port} as
#                        above), e.g. hotkv with its defaults against --hotkv-cmd's hotkv with
#                        one setting changed (latency tracking off: what it costs)
#   --aof POLICY         run both servers with appendonly yes and appendfsync POLICY
#                        (always|everysec|no), each logging into its own temporary directory
#   --tools-dir DIR      where hotkv_stream_bench and hotkv_pubsub_bench are (default
#                        build-release, built there if missing)
#   --replicas N         attach N redis-server replicas (no persistence, disk-less load off)
#                        to every server under test, started next to it and waited for until
#                        their link is up; CPU per request stays the master's own
#   --replica-kind K     redis (default): the replicas are redis-server for every master;
#                        own: a hotkv master gets hotkv replicas (--threads 1, same binary), so
#                        that effects Redis has no command for (INV.*) are applied, not refused
#   --server-args 'ARGS' settings for every server under test, hotkv and redis-server alike
#                        (both take `--name value` on their command line), e.g.
#                        '--maxmemory 8mb --maxmemory-policy allkeys-lru' to measure with
#                        eviction running
#   --no-pin             do not use taskset
# Example: scripts/bench.sh --threads 1,default --repeats 3
#          scripts/bench.sh --cases xadd,xadd-p16,xreadgroup,publish --repeats 3
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

threads=1
repeats=1
requests=200000
pipeline_requests=""
stream_entries=""
publish_requests=""
cases="set,get,incr,set-p16,get-p16,incr-p16,decr-hot"
hotkv_bin="${HOTKV_BIN:-build-release/hotkv}"
hotkv_cmd="${HOTKV_BENCH_CMD:-}"
redis_cmd_arg=""
tools_dir="${HOTKV_BENCH_TOOLS:-build-release}"
pin=1
aof=""
replicas=0
replica_kind=redis
server_args=""
keyspace=100000        # -r: keys spread over every slot, hence every shard
pipe_requests=1000000  # the pipe case's SETs
run_timeout=600        # seconds; redis-benchmark waits forever on a dead server
subscribers=100        # publish case: subscriber connections on one channel
stream_consumers=4     # xreadgroup case: consumers in the group
queue_consumers=50     # brpop case: connections waiting in BRPOP
queue_producers=4      # brpop case: connections pushing
publish_message=0123456789abcdef
reserve_cases=(reserve reserve-p16 reserve-c1000 reserve-c1000-p16 reserve-soldout
  reserve-soldout-p16 reserve-soldout-c1000 reserve-soldout-c1000-p16)
reserve_in_stock=1000000000000 # units of an in-stock item: never runs out during a run
scripts_cases=(evalsha evalsha-p16 evalsha-c1000 evalsha-c1000-p16 undeclared undeclared-p16
  undeclared-c1000 undeclared-c1000-p16 multi-1shard multi-2shard hincrby hincrby-p16 sadd
  sadd-p16 zadd zadd-p16)
lists_cases=(lpush lpush-p16 lpop lpop-p16 rpop rpop-p16)
reserve_db=9                   # redis: the reserve cases' stock and hold keys live here
# The check-and-decrement script of the redis side (the same as hotkv-sale --style lua):
# KEYS[1] stock, KEYS[2] hold; ARGV[1] hold TTL in seconds. Units left, -1 sold out, -2 held.
reserve_lua="local left = tonumber(redis.call('GET', KEYS[1]))
if left == nil or left < 1 then
  return -1
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -2
end
redis.call('SET', KEYS[2], ARGV[2] or '1', 'EX', ARGV[1])
return redis.call('DECR', KEYS[1])"

# The warehouse reserve as its design writes it: hold:<id> and reservation_expiry are not in
# KEYS and have no hash tag, so with several threads HotKV runs it with every shard parked.
warehouse_lua="local available = tonumber(redis.call('HGET', KEYS[1], 'available') or '0')
local qty = tonumber(ARGV[1])
if available < qty then return {0, available} end
redis.call('HINCRBY', KEYS[1], 'available', -qty)
redis.call('HINCRBY', KEYS[1], 'reserved', qty)
local hold_key = 'hold:' .. ARGV[3]
redis.call('HSET', hold_key, 'warehouse_key', KEYS[1], 'qty', qty, 'status', 'held')
redis.call('EXPIRE', hold_key, ARGV[2])
local expiry_score = tonumber(redis.call('TIME')[1]) + tonumber(ARGV[2])
redis.call('ZADD', 'reservation_expiry', expiry_score, ARGV[3])
return {1, available - qty}"

while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --pipe-requests) pipe_requests=$2; shift 2 ;;
    --pipeline-requests) pipeline_requests=$2; shift 2 ;;
    --stream-entries) stream_entries=$2; shift 2 ;;
    --publish-requests) publish_requests=$2; shift 2 ;;
    --tools-dir) tools_dir=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --hotkv-bin) hotkv_bin=$2; shift 2 ;;
    --hotkv-cmd) hotkv_cmd=$2; shift 2 ;;
    --redis-cmd) redis_cmd_arg=$2; shift 2 ;;
    --no-pin) pin=0; shift ;;
    --replicas) replicas=$2; shift 2 ;;
    --replica-kind) replica_kind=$2; shift 2 ;;
    --aof) aof=$2; shift 2 ;;
    --server-args) server_args=$2; shift 2 ;;
    -h | --help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; exit 2 ;;
  esac
done
pipeline_requests=${pipeline_requests:-$((requests * 10))}
stream_entries=${stream_entries:-$requests}
publish_requests=${publish_requests:-$((requests / 10))}

for tool in redis-server redis-benchmark redis-cli awk; do
  command -v "$tool" >/dev/null || { echo "bench: $tool not found (scripts/deps.sh)" >&2; exit 2; }
done

# One hotkv server per thread count: names hotkv_t1, hotkv_tdefault, ... (hotkv with one).
hotkv_names=() hotkv_cmds=() hotkv_labels=()
IFS=, read -r -a thread_list <<<"$threads"
if [[ -z $hotkv_cmd ]]; then
  if [[ ! -x $hotkv_bin ]]; then
    echo "bench: $hotkv_bin missing, building a Release hotkv" >&2
    cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-release -j2 --target hotkv
  fi
  for t in "${thread_list[@]}"; do
    [[ $t == default || $t =~ ^[0-9]+$ ]] || { echo "bench: bad --threads $t" >&2; exit 2; }
    cmd="$(printf '%q' "$(realpath "$hotkv_bin")") --port {port} --bind 127.0.0.1"
    if [[ $t == default ]]; then
      hotkv_labels+=("hotkv default threads ($(nproc))")
    else
      cmd+=" --threads $t"
      hotkv_labels+=("hotkv --threads $t")
    fi
    hotkv_cmds+=("$cmd --loglevel warning")
    if ((${#thread_list[@]} == 1)); then
      hotkv_names+=(hotkv)
    else
      hotkv_names+=("hotkv_t$t")
    fi
  done
else
  hotkv_names=(hotkv) hotkv_cmds=("$hotkv_cmd") hotkv_labels=("custom: $hotkv_cmd")
fi
redis_cmd="redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --loglevel warning"
if [[ -n $aof ]]; then
  aof_root=$(mktemp -d)
  mkdir -p "$aof_root/redis"
  redis_cmd="redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly yes"
  redis_cmd+=" --appendfsync $aof --dir $aof_root/redis --loglevel warning"
  for i in "${!hotkv_names[@]}"; do
    mkdir -p "$aof_root/${hotkv_names[i]}"
    hotkv_cmds[i]+=" --appendonly yes --appendfsync $aof --dir $aof_root/${hotkv_names[i]}"
    hotkv_labels[i]+=" (appendonly yes, appendfsync $aof)"
  done
fi
if [[ -n $redis_cmd_arg ]]; then
  redis_cmd=$redis_cmd_arg
fi
if [[ -n $server_args ]]; then
  redis_cmd+=" $server_args"
  for i in "${!hotkv_names[@]}"; do
    hotkv_cmds[i]+=" $server_args"
    hotkv_labels[i]+=" ($server_args)"
  done
fi

# Pinning: servers on cores 0..n-2, the load generator on the last core.
ncpu=$(nproc)
server_pin=() client_pin=() pin_note="not pinned"
# Pinning every server to one core would make more threads meaningless: with several thread
# counts, or any above one, nothing is pinned (servers and client share the cores).
if [[ $threads != 1 ]]; then
  pin=0
  pin_note="not pinned (hotkv runs several threads)"
fi
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

# Context switches of the server's threads (voluntary and not, summed over its threads).
ctx_switches() {
  cat /proc/"$1"/task/*/status 2>/dev/null |
    awk '/ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# Server CPU time in clock ticks (user + system, all threads). Each call also logs the
# server's context switches, so a run's window (its two calls) has its own count.
cpu_ticks() {
  ctx_switches "$1" >>"$workdir/ctx.$1"
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# case_args CASE [KEY] -> sets n, kind and args. kind redis-benchmark: args are its arguments
# without host/port; kind xreadgroup and publish run the drivers in bench/tools/. KEY is the
# stream or channel of this run.
case_args() {
  local key=${2:-bench:key}
  kind=redis-benchmark
  case $1 in
    set) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t set) ;;
    get) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t get) ;;
    incr) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t incr) ;;
    set-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t set) ;;
    get-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t get) ;;
    incr-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" -t incr) ;;
    decr-hot) n=$requests; args=(-c 1000 -P 1 DECR hotkey) ;;
    mset) n=$requests; args=(-c 50 -P 1 -r "$keyspace" -t mset) ;;
    mset-p16) n=$requests; args=(-c 50 -P 16 -r "$keyspace" -t mset) ;;
    pipe) n=$pipe_requests; kind=pipe; args=() ;;
    set-c500) n=$requests; args=(-c 500 -P 1 -r "$keyspace" -t set) ;;
    incr-c500) n=$requests; args=(-c 500 -P 1 -r "$keyspace" -t incr) ;;
    xadd) n=$requests; args=(-c 50 -P 1 XADD "$key" '*' field value) ;;
    xadd-p16) n=$pipeline_requests; args=(-c 50 -P 16 XADD "$key" '*' field value) ;;
    xreadgroup) n=$stream_entries; kind=xreadgroup; args=() ;;
    brpop) n=$requests; kind=brpop; args=() ;;
    publish) n=$publish_requests; kind=publish
      args=(-c 50 -P 1 PUBLISH "$key" "$publish_message") ;;
    # The reserve cases: run_reserve adds the command, which differs between the servers.
    reserve | reserve-soldout) n=$requests; kind=reserve; args=(-c 50 -P 1) ;;
    reserve-p16 | reserve-soldout-p16) n=$pipeline_requests; kind=reserve; args=(-c 50 -P 16) ;;
    reserve-c1000 | reserve-soldout-c1000) n=$requests; kind=reserve; args=(-c 1000 -P 1) ;;
    reserve-c1000-p16 | reserve-soldout-c1000-p16) n=$pipeline_requests; kind=reserve
      args=(-c 1000 -P 16) ;;
    # Issue-6 cases: the same EVALSHA on both servers, transactions, hash/set/zset writes.
    evalsha) n=$requests; kind=evalsha; args=(-c 50 -P 1) ;;
    evalsha-p16) n=$pipeline_requests; kind=evalsha; args=(-c 50 -P 16) ;;
    evalsha-c1000) n=$requests; kind=evalsha; args=(-c 1000 -P 1) ;;
    evalsha-c1000-p16) n=$pipeline_requests; kind=evalsha; args=(-c 1000 -P 16) ;;
    undeclared) n=$requests; kind=undeclared; args=(-c 50 -P 1) ;;
    undeclared-p16) n=$pipeline_requests; kind=undeclared; args=(-c 50 -P 16) ;;
    undeclared-c1000) n=$requests; kind=undeclared; args=(-c 1000 -P 1) ;;
    undeclared-c1000-p16) n=$pipeline_requests; kind=undeclared; args=(-c 1000 -P 16) ;;
    multi-1shard) n=$requests; kind=multi; args=(-c 50 -P 1 INCR '{t}a' ';' INCR '{t}b') ;;
    # tx1 and tx2 hash to different shards whenever hotkv has two or more threads.
    multi-2shard) n=$requests; kind=multi; args=(-c 50 -P 1 INCR tx1 ';' INCR tx2) ;;
    hincrby) n=$requests; args=(-c 50 -P 1 -r "$keyspace" HINCRBY counters 'f:__rand_int__' 1) ;;
    hincrby-p16) n=$pipeline_requests
      args=(-c 50 -P 16 -r "$keyspace" HINCRBY counters 'f:__rand_int__' 1) ;;
    sadd) n=$requests; args=(-c 50 -P 1 -r "$keyspace" SADD buyers 'user:__rand_int__') ;;
    sadd-p16) n=$pipeline_requests; args=(-c 50 -P 16 -r "$keyspace" SADD buyers 'user:__rand_int__') ;;
    zadd) n=$requests; args=(-c 50 -P 1 -r "$keyspace" ZADD expiry __rand_int__ 'h:__rand_int__') ;;
    zadd-p16) n=$pipeline_requests
      args=(-c 50 -P 16 -r "$keyspace" ZADD expiry __rand_int__ 'h:__rand_int__') ;;
    lpush) n=$requests; args=(-c 50 -P 1 LPUSH queue 'job:__rand_int__') ;;
    lpush-p16) n=$pipeline_requests; args=(-c 50 -P 16 LPUSH queue 'job:__rand_int__') ;;
    lpop) n=$requests; args=(-c 50 -P 1 LPOP queue) ;;
    lpop-p16) n=$requests; args=(-c 50 -P 16 LPOP queue) ;;
    rpop) n=$requests; args=(-c 50 -P 1 RPOP queue) ;;
    rpop-p16) n=$requests; args=(-c 50 -P 16 RPOP queue) ;;
    # LRANGE reads what the pushes left (list it after them and before the pops).
    lrange-100) n=$requests; args=(-c 50 -P 1 LRANGE queue 0 99) ;;
    # redis-server refuses redis-benchmark's zero-padded __rand_int__ as a bit offset.
    setbit) n=$requests; args=(-c 50 -P 1 SETBIT bits 1048575 1) ;;
    bitcount) n=$requests; args=(-c 50 -P 1 BITCOUNT bits) ;;
    pfadd) n=$requests; args=(-c 50 -P 1 -r "$keyspace" PFADD visitors 'v:__rand_int__') ;;
    pfadd-p16) n=$pipeline_requests
      args=(-c 50 -P 16 -r "$keyspace" PFADD visitors 'v:__rand_int__') ;;
    pfcount) n=$requests; args=(-c 50 -P 1 PFCOUNT visitors) ;;
    pfcount-union) n=$requests; args=(-c 50 -P 1 PFCOUNT visitors visitors) ;;
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
    mset) echo "MSET (10 keys) -c 50 -P 1" ;;
    mset-p16) echo "MSET (10 keys) -c 50 -P 16" ;;
    pipe) echo "redis-cli --pipe $pipe_requests SETs" ;;
    set-c500) echo "SET -c 500 -P 1" ;;
    incr-c500) echo "INCR -c 500 -P 1" ;;
    xadd) echo "XADD -c 50 -P 1" ;;
    xadd-p16) echo "XADD -c 50 -P 16" ;;
    xreadgroup) echo "XREADGROUP+XACK $stream_consumers consumers (entries)" ;;
    brpop) echo "BRPOP $queue_consumers consumers, $queue_producers producers (entries)" ;;
    publish) echo "PUBLISH -c 50 to $subscribers subs (delivered msgs)" ;;
    publish-calls) echo "PUBLISH -c 50 to $subscribers subs (PUBLISH calls)" ;;
    reserve) echo "reserve in stock -c 50" ;;
    reserve-p16) echo "reserve in stock -c 50 -P 16" ;;
    reserve-c1000) echo "reserve in stock -c 1000" ;;
    reserve-c1000-p16) echo "reserve in stock -c 1000 -P 16" ;;
    reserve-soldout) echo "reserve sold out -c 50" ;;
    reserve-soldout-p16) echo "reserve sold out -c 50 -P 16" ;;
    reserve-soldout-c1000) echo "reserve sold out -c 1000" ;;
    reserve-soldout-c1000-p16) echo "reserve sold out -c 1000 -P 16" ;;
    evalsha) echo "EVALSHA check-and-decr -c 50" ;;
    evalsha-p16) echo "EVALSHA check-and-decr -c 50 -P 16" ;;
    evalsha-c1000) echo "EVALSHA check-and-decr -c 1000" ;;
    evalsha-c1000-p16) echo "EVALSHA check-and-decr -c 1000 -P 16" ;;
    undeclared) echo "EVALSHA warehouse (undeclared keys) -c 50" ;;
    undeclared-p16) echo "EVALSHA warehouse (undeclared keys) -c 50 -P 16" ;;
    undeclared-c1000) echo "EVALSHA warehouse (undeclared keys) -c 1000" ;;
    undeclared-c1000-p16) echo "EVALSHA warehouse (undeclared keys) -c 1000 -P 16" ;;
    multi-1shard) echo "MULTI INCR INCR EXEC, 1 shard" ;;
    multi-2shard) echo "MULTI INCR INCR EXEC, 2 shards" ;;
    hincrby) echo "HINCRBY -c 50" ;;
    hincrby-p16) echo "HINCRBY -c 50 -P 16" ;;
    sadd) echo "SADD -c 50" ;;
    sadd-p16) echo "SADD -c 50 -P 16" ;;
    zadd) echo "ZADD -c 50" ;;
    zadd-p16) echo "ZADD -c 50 -P 16" ;;
    lpush) echo "LPUSH hot list -c 50" ;;
    lpush-p16) echo "LPUSH hot list -c 50 -P 16" ;;
    lpop) echo "LPOP hot list -c 50" ;;
    lpop-p16) echo "LPOP hot list -c 50 -P 16" ;;
    rpop) echo "RPOP hot list -c 50" ;;
    rpop-p16) echo "RPOP hot list -c 50 -P 16" ;;
    lrange-100) echo "LRANGE 0 99 hot list -c 50" ;;
    setbit) echo "SETBIT (128 KB bitmap) -c 50" ;;
    bitcount) echo "BITCOUNT 128 KB bitmap -c 50" ;;
    pfadd) echo "PFADD one HLL -c 50" ;;
    pfadd-p16) echo "PFADD one HLL -c 50 -P 16" ;;
    pfcount) echo "PFCOUNT one HLL (cached) -c 50" ;;
    pfcount-union) echo "PFCOUNT key key (union path) -c 50" ;;
  esac
}

fail_run() {
  local name=$1 c=$2 msg=$3 out=$4
  echo "bench: $msg against $name for $c:" >&2
  echo "$out" >&2
  tail -20 "$workdir/$name.log" >&2
  exit 1
}

# run_redis_benchmark NAME CASE PORT PID KEY -> prints "rps cpu_ticks requests"
run_redis_benchmark() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 before after out rps len
  before=$(cpu_ticks "$pid")
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" \
      -n "$n" --csv "${args[@]}" 2>&1); then
    fail_run "$name" "$c" "redis-benchmark failed" "$out"
  fi
  after=$(cpu_ticks "$pid")
  # CSV: a header line, then "NAME","rps",...; the last such line is the result.
  rps=$(printf '%s\n' "$out" | awk -F'","' '/^"/ && !/^"test"/ { r = $2 } END { print r + 0 }')
  if [[ -z $rps || $rps == 0 ]]; then
    fail_run "$name" "$c" "could not read requests/s" "$out"
  fi
  if [[ $c == xadd* ]]; then
    # Both servers must have appended the same entries; the stream goes before the next run.
    len=$(timeout 60 redis-cli -p "$port" XLEN "$key")
    if [[ $len != "$n" ]]; then
      echo "bench: warning: $name $c: XLEN $key is $len, expected $n" >&2
    fi
    timeout 60 redis-cli -p "$port" DEL "$key" >/dev/null
  fi
  echo "$rps $((after - before)) $n"
}

# run_xreadgroup NAME CASE PORT PID KEY -> prints "entries/s cpu_ticks entries"
# The driver reads the server's CPU ticks itself, around the drain only.
run_xreadgroup() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 out
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" "$stream_bin" --port "$port" \
      --key "$key" --entries "$n" --consumers "$stream_consumers" --count 50 \
      --server-pid "$pid" --time-limit $((run_timeout - 60)) 2>&1); then
    fail_run "$name" "$c" "hotkv_stream_bench failed" "$out"
  fi
  printf '%s\n' "$out" | awk '/^entries_acked / {
    for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
    print v["entries_per_sec"], v["server_cpu_ticks"], v["entries_acked"] }'
}

# run_brpop NAME CASE PORT PID KEY -> prints "entries/s cpu_ticks entries"
# The driver reads the server's CPU ticks itself, from the first push on.
run_brpop() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 out
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" "$queue_bin" --port "$port" \
      --key "$key" --entries "$n" --consumers "$queue_consumers" --producers "$queue_producers" \
      --server-pid "$pid" --time-limit $((run_timeout - 60)) 2>&1); then
    fail_run "$name" "$c" "hotkv_queue_bench failed" "$out"
  fi
  printf '%s\n' "$out" | awk '/^entries_popped / {
    for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
    print v["entries_per_sec"], v["server_cpu_ticks"], v["entries_popped"] }'
}

# run_publish NAME CASE PORT PID CHANNEL
#   -> prints "delivered/s cpu_ticks delivered publish_rps publishes"
run_publish() {
  local name=$1 c=$2 port=$3 pid=$4 channel=$5 fanout i before after out rps result
  local fanout_out=$workdir/fanout.out
  : >"$fanout_out" # exists before the first grep, however late the driver starts
  "${client_pin[@]}" "$pubsub_bin" --port "$port" --subscribers "$subscribers" \
    --channel "$channel" --messages "$n" --time-limit $((run_timeout - 60)) --idle-timeout 10 \
    >"$fanout_out" 2>&1 &
  fanout=$!
  for ((i = 0; i < 100; i++)); do
    if grep -q '^ready' "$fanout_out"; then
      break
    fi
    if ! kill -0 "$fanout" 2>/dev/null; then
      fail_run "$name" "$c" "hotkv_pubsub_bench exited before subscribing" "$(cat "$fanout_out")"
    fi
    sleep 0.1
  done
  if ((i == 100)); then
    kill "$fanout" 2>/dev/null || true
    fail_run "$name" "$c" "subscribers not ready within 10 s" "$(cat "$fanout_out")"
  fi
  before=$(cpu_ticks "$pid")
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" redis-benchmark -h 127.0.0.1 -p "$port" \
      -n "$n" --csv "${args[@]}" 2>&1); then
    kill "$fanout" 2>/dev/null || true
    fail_run "$name" "$c" "redis-benchmark failed" "$out"
  fi
  if ! wait "$fanout"; then
    fail_run "$name" "$c" "hotkv_pubsub_bench: not every message arrived" "$(cat "$fanout_out")"
  fi
  after=$(cpu_ticks "$pid")
  rps=$(printf '%s\n' "$out" | awk -F'","' '/^"/ && !/^"test"/ { r = $2 } END { print r + 0 }')
  result=$(awk -v t=$((after - before)) -v rps="$rps" -v n="$n" '/^delivered / {
    for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
    print v["delivered_per_sec"], t, v["delivered"], rps, n }' "$fanout_out")
  if [[ -z $result || $rps == 0 ]]; then
    fail_run "$name" "$c" "could not read the rates" "$out $(cat "$fanout_out")"
  fi
  echo "$result"
}

# run_command_load NAME CASE PORT PID CLIENTS PIPELINE DB CMD...
#   -> prints "rps cpu_ticks requests"
# hotkv_command_bench instead of redis-benchmark, for commands that answer errors; every
# __rand_int__ is a fresh number (a counter).
run_command_load() {
  local name=$1 c=$2 port=$3 pid=$4 clients=$5 pipeline=$6 db=$7 before after out
  shift 7
  before=$(cpu_ticks "$pid")
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" "$command_bin" --port "$port" \
      --clients "$clients" --pipeline "$pipeline" --requests "$n" --ids unique --dbnum "$db" \
      --time-limit $((run_timeout - 60)) -- "$@" 2>&1); then
    fail_run "$name" "$c" "hotkv_command_bench failed" "$out"
  fi
  after=$(cpu_ticks "$pid")
  printf '%s\n' "$out" | awk -v t=$((after - before)) '/^requests / {
    for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
    print v["requests_per_sec"], t, v["requests"] }'
}

# run_reserve NAME CASE PORT PID KEY -> prints "rps cpu_ticks requests"
# Before the CPU window: a fresh item KEY (hotkv: INV.CREATE; redis: a stock counter in database
# $reserve_db, and the script loaded). After it: the units taken are checked against the
# requests, then the holds go.
run_reserve() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 total=$reserve_in_stock db=0 out sha left taken cmd
  [[ $c == reserve-soldout* ]] && total=0
  if [[ $name == redis ]]; then
    db=$reserve_db
    sha=$(timeout 60 redis-cli -p "$port" SCRIPT LOAD "$reserve_lua")
    out=$(timeout 60 redis-cli -p "$port" -n "$db" SET "$key" "$total")
    cmd=(EVALSHA "$sha" 2 "$key" 'hold:__rand_int__' 600)
  else
    out=$(timeout 60 redis-cli -p "$port" INV.CREATE "$key" "$total")
    cmd=(INV.RESERVE "$key" 'h:__rand_int__' 1 600000)
  fi
  [[ $out == OK ]] || fail_run "$name" "$c" "could not create the item" "$out"
  out=$(run_command_load "$name" "$c" "$port" "$pid" "${args[1]}" "${args[3]}" "$db" "${cmd[@]}")
  if [[ $name == redis ]]; then
    left=$(timeout 60 redis-cli -p "$port" -n "$db" GET "$key")
    timeout 300 redis-cli -p "$port" -n "$db" FLUSHDB >/dev/null
  else
    left=$(timeout 60 redis-cli -p "$port" INV.GET "$key" | awk 'p == "available" { print; exit }
      { p = $0 }')
    timeout 300 redis-cli -p "$port" DEL "$key" >/dev/null
  fi
  taken=$((total - left))
  if ((total == 0 ? taken != 0 : taken != n)); then
    echo "bench: warning: $name $c: $taken units taken for $n requests" >&2
  fi
  echo "$out"
}

# run_evalsha NAME CASE PORT PID KEY -> prints "rps cpu_ticks requests"
# The same check-and-decrement script ($reserve_lua) by EVALSHA on both servers, on one hot
# stock key that never runs out; every hold key new.
run_evalsha() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 sha out
  sha=$(timeout 60 redis-cli -p "$port" SCRIPT LOAD "$reserve_lua")
  out=$(timeout 60 redis-cli -p "$port" SET "{$key}:stock" 1000000000)
  [[ $out == OK ]] || fail_run "$name" "$c" "could not set the stock" "$out"
  out=$(run_command_load "$name" "$c" "$port" "$pid" "${args[1]}" "${args[3]}" 0 \
    EVALSHA "$sha" 2 "{$key}:stock" "{$key}:hold:__rand_int__" 600)
  timeout 300 redis-cli -p "$port" FLUSHALL >/dev/null
  echo "$out"
}

# run_undeclared NAME CASE PORT PID KEY -> prints "rps cpu_ticks requests"
# The warehouse reserve ($warehouse_lua) by EVALSHA on both servers: one inventory hash that
# never runs out, a new hold per call, the expiry set growing.
run_undeclared() {
  local name=$1 c=$2 port=$3 pid=$4 key=$5 sha out
  sha=$(timeout 60 redis-cli -p "$port" SCRIPT LOAD "$warehouse_lua")
  out=$(timeout 60 redis-cli -p "$port" HSET "inv:$key" available 1000000000 reserved 0)
  [[ $out == 2 ]] || fail_run "$name" "$c" "could not set the inventory" "$out"
  out=$(run_command_load "$name" "$c" "$port" "$pid" "${args[1]}" "${args[3]}" 0 \
    EVALSHA "$sha" 1 "inv:$key" 1 600 'res-__rand_int__')
  timeout 300 redis-cli -p "$port" FLUSHALL >/dev/null
  echo "$out"
}

# run_multi NAME CASE PORT PID KEY -> prints "rps cpu_ticks requests" (a request = MULTI, the
# commands, EXEC)
# redis-cli --pipe of random-key SETs, from a file written once per run (outside the CPU
# window); rate is SETs per second of the whole transfer.
run_pipe() {
  local name=$1 c=$2 port=$3 pid=$4 before after out start end input=$workdir/pipe.input
  if [[ ! -s $input ]]; then
    awk -v n="$n" 'BEGIN { srand(7); for (i = 0; i < n; i++) {
      k = "pipe:" int(rand() * 1000000000); v = "v" i
      printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v } }' \
      >"$input"
  fi
  before=$(cpu_ticks "$pid")
  start=$(date +%s.%N)
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" redis-cli -p "$port" --pipe <"$input" 2>&1); then
    fail_run "$name" "$c" "redis-cli --pipe failed" "$out"
  fi
  end=$(date +%s.%N)
  after=$(cpu_ticks "$pid")
  [[ $out == *"errors: 0, replies: $n"* ]] || fail_run "$name" "$c" "--pipe lost replies" "$out"
  timeout 300 redis-cli -p "$port" FLUSHALL >/dev/null
  awk -v n="$n" -v s="$start" -v e="$end" -v t=$((after - before)) \
    'BEGIN { print n / (e - s), t, n }'
}

run_multi() {
  local name=$1 c=$2 port=$3 pid=$4 before after out
  before=$(cpu_ticks "$pid")
  if ! out=$(timeout "$run_timeout" "${client_pin[@]}" "$command_bin" --port "$port" \
      --clients "${args[1]}" --pipeline "${args[3]}" --requests "$n" --multi \
      --time-limit $((run_timeout - 60)) -- "${args[@]:4}" 2>&1); then
    fail_run "$name" "$c" "hotkv_command_bench --multi failed" "$out"
  fi
  after=$(cpu_ticks "$pid")
  printf '%s\n' "$out" | awk -v t=$((after - before)) '/^requests / {
    for (i = 1; i < NF; i += 2) v[$i] = $(i + 1)
    print v["requests_per_sec"], t, v["requests"] }'
}

# run_one NAME CASE RUN -> prints "rate cpu_ticks ops [rate2 ops2]"
run_one() {
  local name=$1 c=$2 run=$3 port pid key
  port=${name}_port; port=${!port}
  pid=${name}_pid; pid=${!pid}
  key="bench:$c:$run" # a fresh stream or channel per run, the same name on both servers
  case_args "$c" "$key"
  case $kind in
    redis-benchmark) run_redis_benchmark "$name" "$c" "$port" "$pid" "$key" ;;
    xreadgroup) run_xreadgroup "$name" "$c" "$port" "$pid" "$key" ;;
    brpop) run_brpop "$name" "$c" "$port" "$pid" "$key" ;;
    publish) run_publish "$name" "$c" "$port" "$pid" "$key" ;;
    reserve) run_reserve "$name" "$c" "$port" "$pid" "$key" ;;
    evalsha) run_evalsha "$name" "$c" "$port" "$pid" "$key" ;;
    undeclared) run_undeclared "$name" "$c" "$port" "$pid" "$key" ;;
    multi) run_multi "$name" "$c" "$port" "$pid" "$key" ;;
    pipe) run_pipe "$name" "$c" "$port" "$pid" "$key" ;;
  esac
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "bench: $name died during $c" >&2
    tail -20 "$workdir/$name.log" >&2
    exit 1
  fi
}

median() {
  sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

IFS=, read -r -a case_list <<<"$cases"
if [[ ,$cases, == *,reserve-all,* || ,$cases, == *,scripts-all,* || ,$cases, == *,lists-all,* ]]; then
  expanded=()
  for c in "${case_list[@]}"; do
    if [[ $c == scripts-all ]]; then
      expanded+=("${scripts_cases[@]}")
    elif [[ $c == reserve-all ]]; then
      expanded+=("${reserve_cases[@]}")
    elif [[ $c == lists-all ]]; then
      expanded+=("${lists_cases[@]}")
    else
      expanded+=("$c")
    fi
  done
  case_list=("${expanded[@]}")
fi
need_tools=()
for c in "${case_list[@]}"; do
  case_args "$c" # exits on an unknown name before anything starts
  case $kind in
    xreadgroup) need_tools+=(hotkv_stream_bench) ;;
    brpop) need_tools+=(hotkv_queue_bench) ;;
    publish) need_tools+=(hotkv_pubsub_bench) ;;
    reserve | evalsha | undeclared | multi) need_tools+=(hotkv_command_bench) ;;
  esac
done
for tool in "${need_tools[@]}"; do
  if [[ ! -x $tools_dir/$tool ]]; then
    echo "bench: $tools_dir/$tool missing, building it" >&2
    cmake -S . -B "$tools_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$tools_dir" -j2 --target "$tool"
  fi
done
stream_bin=$(realpath "$tools_dir/hotkv_stream_bench" 2>/dev/null || true)
queue_bin=$(realpath "$tools_dir/hotkv_queue_bench" 2>/dev/null || true)
pubsub_bin=$(realpath "$tools_dir/hotkv_pubsub_bench" 2>/dev/null || true)
command_bin=$(realpath "$tools_dir/hotkv_command_bench" 2>/dev/null || true)

# start_replicas NAME: --replicas redis-server replicas of server NAME, on the servers' cores.
start_replicas() {
  local name=$1 master_port r i
  master_port=${name}_port
  master_port=${!master_port}
  for ((r = 0; r < replicas; r++)); do
    if [[ $replica_kind == own && $name != redis ]]; then
      mkdir -p "$workdir/${name}_replica$r"
      start_server "${name}_replica$r" "$(printf '%q' "$(realpath "$hotkv_bin")") --port {port} \
--bind 127.0.0.1 --threads 1 --loglevel warning --dir $workdir/${name}_replica$r \
--replicaof '127.0.0.1 $master_port'"
    else
      start_server "${name}_replica$r" "redis-server --port {port} --bind 127.0.0.1 --save '' \
--appendonly no --loglevel warning --dir $workdir --replicaof 127.0.0.1 $master_port"
    fi
  done
  for ((i = 0; i < 600; i++)); do
    if [[ $(redis-cli -p "$master_port" INFO replication | grep -c 'state=online') == "$replicas" ]]
    then
      return
    fi
    sleep 0.1
  done
  echo "bench: the replicas of $name did not come online within 60 s" >&2
  exit 1
}

start_server redis "$redis_cmd"
for i in "${!hotkv_names[@]}"; do
  start_server "${hotkv_names[i]}" "${hotkv_cmds[i]}"
done
servers=(redis "${hotkv_names[@]}")
for name in "${servers[@]}"; do
  start_replicas "$name"
done

echo "# hotkv vs redis-server"
echo
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m), $ncpu cores:" \
  "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
echo "- redis: $(redis-server --version | awk '{ print $3 }'), $redis_cmd"
for label in "${hotkv_labels[@]}"; do
  echo "- hotkv: $label"
done
if ((replicas > 0)); then
  if [[ $replica_kind == own ]]; then
    echo "- each server has $replicas replica(s) of its own kind attached (hotkv: --threads 1;" \
      "online before the runs)"
  else
    echo "- each server has $replicas redis-server replica(s) attached (online before the runs)"
  fi
fi
echo "- $pin_note; $repeats run(s) per case and server, alternating ${servers[*]};" \
  "-n $requests (-P 16: $pipeline_requests), -r $keyspace"
if [[ ,$cases, == *,xreadgroup,* ]]; then
  echo "- xreadgroup: $stream_entries entries, $stream_consumers consumers, COUNT 50, one XACK" \
    "per read"
fi
if [[ ,$cases, == *,publish,* ]]; then
  echo "- publish: $publish_requests PUBLISH calls (-c 50 -P 1, 16-byte message) to" \
    "$subscribers subscribers of one channel"
fi
if [[ ,$cases, == *,reserve* ]]; then
  echo "- reserve: hotkv INV.RESERVE <item> h:__rand_int__ 1 600000; redis EVALSHA of a" \
    "check-and-decrement script (GET, EXISTS, SET EX, DECR) 2 <stock> hold:__rand_int__ 600 in" \
    "db $reserve_db; in stock: $reserve_in_stock units, sold out: 0; load from hotkv_command_bench" \
    "(every hold id new)"
fi
if [[ ,$cases, == *,brpop,* ]]; then
  echo "- brpop: $requests entries, $queue_consumers consumers waiting in BRPOP, $queue_producers" \
    "producers sending one LPUSH per entry"
fi
echo "- CPU per request = server utime+stime (CLK_TCK $clk_tck) / requests (entries for" \
  "xreadgroup and brpop, delivered messages or PUBLISH calls for publish)"
echo

# cpu_per_op RUNS_FILE OPS_FIELD -> µs of server CPU per op over every run; two decimals as for
# the other cases, three below 1 µs (a delivered message costs less)
cpu_per_op() {
  awk -v k="$clk_tck" -v f="$2" '{ t += $2; n += $f }
    END { x = t / k / n * 1e6; printf (x < 1 ? "%.3f" : "%.2f"), x }' "$1"
}

# summary_row LABEL RATE_FIELD OPS_FIELD -> one table row from the runs files
median_of() { # FILE FIELD
  awk -v f="$2" '{ print $f }' "$1" | median
}

# summary_row LABEL RPS_FIELD COUNT_FIELD: redis, then each hotkv with its ratio to redis, and
# with two or more hotkv servers the last against the first (rps and CPU per request).
summary_row() {
  local label=$1 rf=$2 of=$3 r_rps h_rps row name first_rps first_cpu cpu
  r_rps=$(median_of "$workdir/redis.runs" "$rf")
  row=$(printf '| %s | %.0f | %s |' "$label" "$r_rps" "$(cpu_per_op "$workdir/redis.runs" "$of")")
  for name in "${hotkv_names[@]}"; do
    h_rps=$(median_of "$workdir/$name.runs" "$rf")
    cpu=$(cpu_per_op "$workdir/$name.runs" "$of")
    row+=$(printf ' %.0f | %s | %s |' "$h_rps" \
      "$(awk -v a="$h_rps" -v b="$r_rps" 'BEGIN { printf "%.2f", a / b }')" "$cpu")
    if [[ -z ${first_rps:-} ]]; then
      first_rps=$h_rps first_cpu=$cpu
    fi
  done
  if ((${#hotkv_names[@]} > 1)); then
    row+=$(awk -v a="$h_rps" -v b="$first_rps" -v c="$cpu" -v d="$first_cpu" \
      'BEGIN { printf " %.2f | %.2f |", a / b, (d > 0 ? c / d : 0) }')
  fi
  printf '%s' "$row"
}

rows=()
for c in "${case_list[@]}"; do
  for name in "${servers[@]}"; do
    : >"$workdir/$name.runs"
  done
  for ((r = 1; r <= repeats; r++)); do
    for name in "${servers[@]}"; do
      pid=${name}_pid
      rm -f "$workdir/ctx.${!pid}"
      res=$(run_one "$name" "$c" "$r")
      echo "$res" >>"$workdir/$name.runs"
      read -r rps ticks n rps2 n2 <<<"$res"
      printf '%-26s run %d/%d %-14s %12.0f req/s %8.2f us CPU/req' "$(case_label "$c")" "$r" \
        "$repeats" "$name" "$rps" "$(awk -v t="$ticks" -v k="$clk_tck" -v n="$n" \
        'BEGIN { print t / k / n * 1e6 }')" >&2
      if [[ -f $workdir/ctx.${!pid} ]] && (($(wc -l <"$workdir/ctx.${!pid}") == 2)); then
        printf ' %6.3f ctx switches/req' "$(awk -v n="$n" 'NR == 1 { a = $1 }
          NR == 2 { print ($1 - a) / n }' "$workdir/ctx.${!pid}")" >&2
      fi
      if [[ -n $rps2 ]]; then
        printf '; %.0f PUBLISH/s, %.2f us CPU/PUBLISH' "$rps2" "$(awk -v t="$ticks" \
          -v k="$clk_tck" -v n="$n2" 'BEGIN { print t / k / n * 1e6 }')" >&2
      fi
      echo >&2
    done
  done
  rows+=("$(summary_row "$(case_label "$c")" 1 3)")
  if [[ $c == publish ]]; then
    rows+=("$(summary_row "$(case_label publish-calls)" 4 5)")
  fi
done

header="| case | redis rps | redis µs CPU/req |"
rule="|---|---:|---:|"
for i in "${!hotkv_names[@]}"; do
  short=${hotkv_labels[i]#hotkv }
  header+=" ${short} rps | ratio to redis | µs CPU/req |"
  rule+="---:|---:|---:|"
done
if ((${#hotkv_names[@]} > 1)); then
  header+=" rps ${hotkv_labels[-1]#hotkv } / ${hotkv_labels[0]#hotkv } | CPU/req ratio |"
  rule+="---:|---:|"
fi
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
echo
echo "rps: median of runs. CPU: total server CPU over total requests (tick resolution" \
  "$((1000 / clk_tck)) ms, so short runs are coarse)."
