#!/usr/bin/env bash
# Prints the directory of Redis 7.0.15's Tcl test suite (runtest and tests/), fetching it first
# when this machine has none: the upstream tarball that Debian's source package of redis
# carries, from the same mirrors as this machine's packages. Nothing is installed and apt's own
# state is not touched: the source index and the download live under .cache/redis-suite, so
# this works as any user and the second call costs nothing.
#
#   scripts/redis_suite_fetch.sh            -> .cache/redis-suite/redis-7.0.15 (or a local copy)
#
# HOTKV_REDIS_SUITE names a tree to use instead; ../shared/redis-suite/redis-7.0.15, where a
# machine has it, is the same tree already unpacked and is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=7.0.15

has_suite() { [[ -f $1/runtest && -f $1/tests/test_helper.tcl ]]; }

for candidate in "${HOTKV_REDIS_SUITE:-}" "$root/../shared/redis-suite/redis-$version"; do
  if [[ -n $candidate ]] && has_suite "$candidate"; then
    realpath "$candidate"
    exit 0
  fi
done

cache=$root/.cache/redis-suite
tree=$cache/redis-$version
if has_suite "$tree"; then
  echo "$tree"
  exit 0
fi

# A private apt: the machine's own Debian sources, as deb-src entries, with their index and
# downloads kept under the cache.
apt_dir=$cache/apt
rm -rf "$apt_dir"
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/get"
: >"$apt_dir/sources.list"
if [[ -f /etc/apt/sources.list ]]; then
  sed -n -E 's/^deb(\s)/deb-src\1/p' /etc/apt/sources.list >>"$apt_dir/sources.list"
fi
for f in /etc/apt/sources.list.d/*.list; do
  [[ -f $f ]] && sed -n -E 's/^deb(\s)/deb-src\1/p' "$f" >>"$apt_dir/sources.list"
done
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] && sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/parts/$(basename "$f")"
done
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o Debug::NoLocking=1 -o APT::Sandbox::User="$(id -un)" -qq)
echo "redis_suite_fetch: fetching Debian's source package of redis" >&2
apt-get "${apt_opts[@]}" update >&2
(cd "$apt_dir/get" && apt-get "${apt_opts[@]}" source --download-only redis >&2)
tarball=$apt_dir/get/redis_$version.orig.tar.gz
if [[ ! -f $tarball ]]; then
  echo "redis_suite_fetch: Debian's redis source is not $version here:" \
       "$(cd "$apt_dir/get" && ls)" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$cache" "redis-$version/runtest" "redis-$version/tests" "redis-$version/COPYING"
rm -rf "$apt_dir"
has_suite "$tree" || { echo "redis_suite_fetch: $tarball has no test suite" >&2; exit 1; }
echo "$tree"
