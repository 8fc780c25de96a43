#!/usr/bin/env bash
# scripts/build.sh heals a build directory that a failed or interrupted configure left behind,
# so the README's commands can simply be run again: (1) a cache that remembers a library as
# missing and no build file (what a configure that failed for want of libssl-dev left) is
# configured afresh and finds it; (2) a configure that fails leaves no cache behind, and the
# next run configures; (3) a directory configured with another generator is configured afresh.
# Configures only (a few seconds each): building is what every other test does.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(mktemp -d /tmp/hotkv-build-heals.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export HOTKV_BUILD_DIR=$dir/build
fail() { echo "FAIL: $*" >&2; exit 1; }

# (1) What a configure without libssl-dev left: a cache, a NOTFOUND in it, no build file.
mkdir -p "$HOTKV_BUILD_DIR"
printf 'CMAKE_GENERATOR:INTERNAL=Ninja\nOPENSSL_INCLUDE_DIR:PATH=OPENSSL_INCLUDE_DIR-NOTFOUND\n' \
  >"$HOTKV_BUILD_DIR/CMakeCache.txt"
scripts/build.sh run --configure-only || fail "a half-configured directory did not heal"
[[ -f $HOTKV_BUILD_DIR/build.ninja ]] || fail "no build file after healing"
! grep -q "OPENSSL_INCLUDE_DIR:PATH=OPENSSL_INCLUDE_DIR-NOTFOUND" "$HOTKV_BUILD_DIR/CMakeCache.txt" ||
  fail "the cache still remembers OpenSSL as missing"
echo "ok: a cache without a build file is configured afresh"

# (2) A configure that fails (pkg-config finds nothing: LuaJIT is missing) exits non-zero and
# leaves no cache; the next run, with everything there, configures.
rm -f "$HOTKV_BUILD_DIR/build.ninja"
if PKG_CONFIG_LIBDIR=/nonexistent scripts/build.sh run --configure-only >"$dir/failed.log" 2>&1; then
  fail "configure succeeded without LuaJIT"
fi
grep -q "scripts/deps.sh installs what it needs" "$dir/failed.log" || fail "no hint after a failed configure"
[[ ! -f $HOTKV_BUILD_DIR/CMakeCache.txt ]] || fail "a failed configure left its cache"
scripts/build.sh run --configure-only || fail "no configure after a failed one"
[[ -f $HOTKV_BUILD_DIR/build.ninja ]] || fail "no build file after a failed configure"
echo "ok: a failed configure leaves nothing that stops the next"

# (3) Configured with make before ninja was installed.
sed -i 's/^CMAKE_GENERATOR:INTERNAL=.*/CMAKE_GENERATOR:INTERNAL=Unix Makefiles/' \
  "$HOTKV_BUILD_DIR/CMakeCache.txt"
scripts/build.sh run --configure-only || fail "a directory of another generator did not heal"
grep -qx "CMAKE_GENERATOR:INTERNAL=Ninja" "$HOTKV_BUILD_DIR/CMakeCache.txt" || fail "still not ninja"
echo "ok: a directory of another generator is configured afresh"
echo "3 passed, 0 failed"
