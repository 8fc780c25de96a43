#!/usr/bin/env bash
# The README's first command as a newcomer runs it: on a fresh Debian 12 machine
# (scripts/fresh_machine.sh, as a user with sudo), a clone of this checkout's HEAD runs
# scripts/run.sh, and the check waits until the server answers PING. It prints how long each
# part took (the machine, the packages, the build, the first PONG) and fails if the server does
# not answer within HOTKV_FIRST_RUN_LIMIT seconds (default 600). Needs root; CI runs it first.
#
#   scripts/first_run_check.sh [DIR]     (default: a new folder under /tmp, deleted afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${HOTKV_FIRST_RUN_LIMIT:-600}
dir=${1:-$(mktemp -d /tmp/hotkv-first-run.XXXXXX)}
rmdir "$dir" 2>/dev/null || true

if ! command -v debootstrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
fi

pid=""
finish() {
  [[ -z $pid ]] || kill -- "-$pid" 2>/dev/null || true
  scripts/fresh_machine.sh destroy "$dir"
}
trap finish EXIT

started=$SECONDS
scripts/fresh_machine.sh create "$dir" --user newcomer
machine_s=$((SECONDS - started))

# A port nobody here listens on (this machine may run a server on 6379); the flag passes
# through run.sh to the server.
port=$(( 20000 + RANDOM % 20000 ))
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done

answers_ping() {
  (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'PING\r\n' >&3 && read -r -t 2 line <&3 &&
   [[ $line == +PONG* ]]) 2>/dev/null
}

log=$dir/run.log
run_started=$SECONDS
setsid scripts/fresh_machine.sh run "$dir" scripts/run.sh --port "$port" >"$log" 2>&1 &
pid=$!
until answers_ping; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -40 "$log"
    echo "first_run_check: scripts/run.sh ended before the server answered (log above)" >&2
    exit 1
  fi
  if ((SECONDS - run_started > limit)); then
    tail -40 "$log"
    echo "first_run_check: no PONG within $limit s of scripts/run.sh (log above)" >&2
    exit 1
  fi
  sleep 1
done
pong_s=$((SECONDS - run_started))
packages_s=$(sed -n 's/^run: packages ready at \([0-9]*\) s$/\1/p' "$log")
built_s=$(sed -n 's/^run: server built at \([0-9]*\) s$/\1/p' "$log")
echo "first_run_check: fresh Debian 12 machine in ${machine_s} s; scripts/run.sh there:" \
     "packages ready at ${packages_s} s, server built at ${built_s} s, first PONG at ${pong_s} s" \
     "($(du -sh --one-file-system "$dir/root" | cut -f1) on disk)"
