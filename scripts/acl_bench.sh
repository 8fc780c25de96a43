#!/usr/bin/env bash
# The cost of ACL checks, side by side with redis-server in one run.
#
# Starts hotkv (--threads 1 unless HOTKV_THREADS says otherwise) and redis-server on free
# loopback ports, defines 100 users on each plus `bench` (on >bench-pass ~key:* +@read +@write),
# then runs `redis-benchmark -t get,set -P 16` as the default user and as `bench`, alternating
# servers (redis, hotkv, redis, hotkv ...) for --repeats rounds. Prints the median requests per
# second of each case, hotkv/redis ratios, and restricted/default ratios per server.
#
# usage: scripts/acl_bench.sh [--server build/hotkv] [--requests N] [--repeats R]
set -euo pipefail
cd "$(dirname "$0")/.."

server=build/hotkv
requests=1000000
repeats=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) server=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
(( repeats >= 1 && repeats <= 20 )) || { echo "--repeats must be 1..20" >&2; exit 2; }
(( requests >= 1000 && requests <= 20000000 )) || { echo "--requests must be 1000..2e7" >&2; exit 2; }

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cores=$(nproc)
server_cpus=0
client_cpus=$((cores - 1))
hp=$(free_port)
rp=$(free_port)
work=$(mktemp -d)
trap 'kill $hpid $rpid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
taskset -c "$server_cpus" "$server" --port "$hp" --bind 127.0.0.1 --threads "${HOTKV_THREADS:-1}" \
  --loglevel warning >"$work/hotkv.log" 2>&1 &
hpid=$!
taskset -c "$server_cpus" redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no \
  --loglevel warning >"$work/redis.log" 2>&1 &
rpid=$!
for p in "$hp" "$rp"; do
  for _ in $(seq 100); do
    redis-cli -p "$p" PING >/dev/null 2>&1 && break
    sleep 0.1
  done
done

for p in "$hp" "$rp"; do
  for i in $(seq 100); do
    redis-cli -p "$p" ACL SETUSER "user$i" on ">pass$i" "~u$i:*" +@read +@write >/dev/null
  done
  redis-cli -p "$p" ACL SETUSER bench on '>bench-pass' '~key:*' +@read +@write >/dev/null
done

run() {  # port user(-/name) -> "set_rps get_rps"
  local port=$1 user=$2 auth=()
  [[ $user != - ]] && auth=(--user "$user" -a bench-pass)
  taskset -c "$client_cpus" redis-benchmark -p "$port" "${auth[@]}" -t set,get -P 16 -c 50 \
    -n "$requests" -r 100000 --csv 2>/dev/null |
    awk -F'"' '/^"SET"/{s=$4} /^"GET"/{g=$4} END{print s, g}'
}

declare -A res
for round in $(seq "$repeats"); do
  for user in - bench; do
    for side in redis hotkv; do
      port=$rp; [[ $side == hotkv ]] && port=$hp
      read -r s g < <(run "$port" "$user")
      res[$side.$user.set]+="$s "
      res[$side.$user.get]+="$g "
      echo "round $round $side user=${user/-/default}: set $s get $g" >&2
    done
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
printf '%-10s %-8s %12s %12s %8s\n' user cmd redis hotkv hotkv/redis
for user in - bench; do
  for cmd in set get; do
    r=$(echo "${res[redis.$user.$cmd]}" | median)
    h=$(echo "${res[hotkv.$user.$cmd]}" | median)
    printf '%-10s %-8s %12s %12s %8.2f\n' "${user/-/default}" "$cmd" "$r" "$h" \
      "$(echo "$h / $r" | bc -l)"
  done
done
for side in redis hotkv; do
  for cmd in set get; do
    d=$(echo "${res[$side.-.$cmd]}" | median)
    b=$(echo "${res[$side.bench.$cmd]}" | median)
    printf 'restricted/default %-6s %-4s %.3f\n' "$side" "$cmd" "$(echo "$b / $d" | bc -l)"
  done
done
