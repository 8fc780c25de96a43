#!/usr/bin/env bash
# Runs units of Redis 7.0.15's own Tcl test suite in external mode against a real server, a
# fresh one per unit, and fails when a test that passes on redis-server does not pass here,
# unless tests/redis_suite_known.txt lists it with its reason. A unit that aborts, hangs, times
# out or takes the server down fails too.
#
#   scripts/redis_suite.sh [--server build/hotkv] [--threads 4] [--units "unit/multi ..."]
#                          [--out DIR] [--known FILE] [--baseline FILE]
#   scripts/redis_suite.sh --kind redis --server /usr/bin/redis-server --record-baseline
#
# What redis-server passes is tests/redis_suite_baseline.tsv, recorded by the second form with
# the redis-server that scripts/deps.sh installs (Debian's 7.0.15): the same runner, the same
# units, the same machine. The suite itself comes from scripts/redis_suite_fetch.sh.
#
# The profile is the one every external run of the suite uses: one database, no checks of
# encodings or digests, an unexpected error reply fails its test instead of ending the unit,
# and no tests that need DEBUG, replication, SAVE, the PF debug commands, maxmemory or are
# tagged slow. REDIS_SUITE_UNIT_TIMEOUT (seconds, default 300) bounds each unit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

kind=hotkv
server=build/hotkv
threads=4
units="unit/scripting unit/functions unit/multi unit/type/list unit/type/list-2 unit/type/list-3
unit/bitops unit/bitfield unit/type/zset unit/geo unit/hyperloglog
unit/type/hash unit/type/set unit/type/incr unit/type/string unit/keyspace unit/expire unit/sort
unit/dump unit/tracking unit/pubsub unit/type/stream unit/type/stream-cgroups unit/latency-monitor
unit/info-command unit/protocol unit/slowlog unit/introspection unit/introspection-2"
out=""
known=$root/tests/redis_suite_known.txt
baseline=$root/tests/redis_suite_baseline.tsv
record=0
while (($#)); do
  case $1 in
    --kind) kind=$2; shift 2 ;;
    --server) server=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --units) units=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --known) known=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --record-baseline) record=1; shift ;;
    --suite) export HOTKV_REDIS_SUITE=$2; shift 2 ;;
    *) echo "redis_suite: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $kind == hotkv || $kind == redis ]] || { echo "redis_suite: --kind hotkv|redis" >&2; exit 2; }
suite=$(scripts/redis_suite_fetch.sh)
tclsh=$(command -v tclsh8.6 || command -v tclsh || true)
[[ -n $tclsh ]] || { echo "redis_suite: no tclsh (scripts/deps.sh installs tcl)" >&2; exit 2; }
[[ -n $out ]] || out=$(mktemp -d /tmp/hotkv-redis-suite.XXXXXX)
mkdir -p "$out"
out=$(realpath "$out")
# Made absolute but not resolved: Debian's redis-server is a link to one binary that picks its
# part by the name it was started as.
[[ $server == /* ]] || server=$root/$server
unit_timeout=${REDIS_SUITE_UNIT_TIMEOUT:-300}

# runtest writes into tests/tmp, and a shared tree may be read-only: each run works in a copy.
work=$(mktemp -d /tmp/hotkv-redis-suite-tree.XXXXXX)
cp -a "$suite/runtest" "$suite/tests" "$work/"
chmod -R u+w "$work"
mkdir -p "$work/tests/tmp" "$work/src"
# A few tests call the tools beside the server; never redis-server itself (external mode).
for tool in redis-cli redis-benchmark; do
  if command -v "$tool" >/dev/null 2>&1; then ln -sf "$(command -v "$tool")" "$work/src/$tool"; fi
done

# Tests that cannot run against any external server, whatever it is: they read the server's
# PID. Then the known failures whose reason starts with "skip:": each would wait for ever on
# HotKV (a reply a multi-threaded server legitimately never sends, see that file's header),
# and a unit that hangs fails.
skipfile=$out/skiplist.txt
echo "SRANDMEMBER with a dict containing long chain" >"$skipfile"
if [[ $kind == hotkv && -f $known ]]; then
  awk -F'\t' '!/^#/ && $3 ~ /^skip:/ { print $2 }' "$known" >>"$skipfile"
fi

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
ping_server() { timeout 5 redis-cli -p "$1" ping 2>&1; }

pid=""
stop_server() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  pid=""
}
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT

printf 'unit\tresult\ttest\n' >"$out/tests.tsv"
printf 'unit\tstatus\tseconds\n' >"$out/units.tsv"
for unit in $units; do
  name=${unit//\//_}
  dir=$out/$name
  rm -rf "$dir"
  mkdir -p "$dir/data"
  port=$(free_port)
  # The suite's own test server listens just below --baseport: keep it clear of ours.
  baseport=$(( (port % 20000) + 30000 ))
  if [[ $kind == hotkv ]]; then
    "$server" --port "$port" --threads "$threads" --dir "$dir/data" >"$dir/server.log" 2>&1 &
  else
    "$server" --port "$port" --dir "$dir/data" >"$dir/server.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 100); do
    [[ $(ping_server "$port") == PONG ]] && break
    sleep 0.1
  done
  echo "== $unit ($kind, port $port)"
  started=$SECONDS
  rc=0
  ( cd "$work" && exec env -u TERM timeout -k 15 "$unit_timeout" "$tclsh" tests/test_helper.tcl \
      --host 127.0.0.1 --port "$port" --clients 1 --baseport "$baseport" \
      --singledb --ignore-encoding --ignore-digest --durable --skipfile "$skipfile" \
      --tags "-needs:debug -needs:repl -needs:save -needs:pfdebug -needs:config-maxmemory -slow" \
      --single "$unit" ) >"$dir/runtest.log" 2>&1 </dev/null || rc=$?
  # After the unit: the server answers (it may have hung or gone), and runtest ended by itself.
  after=$(ping_server "$port") || true
  if ! kill -0 "$pid" 2>/dev/null; then
    state=crashed
  elif [[ $after != PONG ]]; then
    state=hung
  elif ((rc == 124 || rc == 137)); then
    state=timeout
  else
    state=ran
  fi
  /usr/bin/python3 scripts/redis_suite_report.py parse "$unit" "$dir/runtest.log" "$state" \
    "$((SECONDS - started))" "$out"
  stop_server
done

if ((record)); then
  cp "$out/tests.tsv" "$baseline"
  cp "$out/units.tsv" "${baseline%.tsv}_units.tsv"
  echo "redis_suite: recorded $baseline from $("$server" --version | head -1)"
  exit 0
fi
/usr/bin/python3 scripts/redis_suite_report.py compare "$baseline" "$out" "$known" $units
