#!/usr/bin/env bash
# A fresh Debian 12 machine in a folder: what a newcomer has before the README's first command.
# CI runs the README's commands in one (.ci/run), so a package the project forgot to install,
# or a file it expects beside the checkout, fails there instead of hiding behind a machine that
# already has it. Needs root, debootstrap and git; it reaches only Debian's package mirror.
#
#   scripts/fresh_machine.sh create DIR [--user NAME]   debootstrap --variant=minbase bookworm into
#                                                       DIR/root, clone this checkout's HEAD into
#                                                       it; --user adds a user with sudo who owns
#                                                       the clone (root owns it otherwise)
#   scripts/fresh_machine.sh run DIR CMD...             run CMD in the clone, as its owner
#   scripts/fresh_machine.sh destroy DIR                stop what runs there, unmount, delete
#
# The machine shares this one's network (loopback included) and kernel; /proc, /sys and /dev
# are mounted into it on create and unmounted on destroy. HOTKV_DEBIAN_MIRROR picks the mirror
# (default: the first Debian one in this machine's apt sources, else deb.debian.org).
set -euo pipefail
project=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '7,13p' "$0" >&2; exit 2; }
(($# >= 2)) || usage
action=$1 dir=$2
shift 2
root=$dir/root

mirror() {
  if [[ -n ${HOTKV_DEBIAN_MIRROR:-} ]]; then echo "$HOTKV_DEBIAN_MIRROR"; return; fi
  local found
  found=$(grep -hoE '(URIs:|^deb) +https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list \
            /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
          grep -oE 'https?://[^ ]*' | head -1) || true
  echo "${found:-http://deb.debian.org/debian}"
}

mount_all() {
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  mountpoint -q "$root/sys" || mount -t sysfs sys "$root/sys"
  if ! mountpoint -q "$root/dev"; then
    mount --rbind /dev "$root/dev"
    mount --make-rslave "$root/dev"
  fi
}

unmount_all() {
  local m
  # Deepest first: /dev carries devpts and shm under it.
  for m in $(awk -v r="$(realpath -m "$root")" 'index($2, r "/") == 1 { print $2 }' /proc/mounts |
             sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

owner() { cat "$dir/owner"; }

case $action in
  create)
    user=root
    if [[ ${1:-} == --user ]]; then user=$2; shift 2; fi
    [[ ! -e $root ]] || { echo "fresh_machine: $root exists (destroy it first)" >&2; exit 1; }
    mkdir -p "$dir"
    started=$SECONDS
    debootstrap --variant=minbase bookworm "$root" "$(mirror)" >"$dir/debootstrap.log" 2>&1 ||
      { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
    # What a real Debian 12 machine has beyond the base system: the updates and security
    # suites, name resolution, and an /etc/hosts that says what localhost is.
    m=$(mirror)
    cat >"$root/etc/apt/sources.list" <<EOF
deb $m bookworm main
deb $m bookworm-updates main
deb ${m%/debian*}/debian-security bookworm-security main
EOF
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
      "$(uname -n)" >"$root/etc/hosts"
    mount_all
    home=/root
    if [[ $user != root ]]; then
      # A user with sudo, as on a developer's machine: sudo is the one package installed here,
      # since the README's commands call it to install everything else.
      chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
        'apt-get update -qq && apt-get install -y -qq --no-install-recommends sudo >/dev/null'
      chroot "$root" useradd --create-home --shell /bin/bash "$user"
      echo "$user ALL=(ALL) NOPASSWD: ALL" >"$root/etc/sudoers.d/$user"
      home=/home/$user
    fi
    git clone --quiet --no-hardlinks "$project" "$root$home/hotkv"
    git -C "$root$home/hotkv" checkout --quiet "$(git -C "$project" rev-parse HEAD)"
    chroot "$root" chown -R "$user:" "$home/hotkv"
    echo "$user" >"$dir/owner"
    echo "$home/hotkv" >"$dir/checkout"
    echo "fresh_machine: Debian 12 minbase at $root, $(git -C "$project" rev-parse --short HEAD) cloned for $user in $((SECONDS - started)) s"
    ;;
  run)
    (($# >= 1)) || usage
    user=$(owner)
    checkout=$(cat "$dir/checkout")
    home=$(dirname "$checkout")
    mount_all
    exec chroot --userspec="$user:$user" "$root" /usr/bin/env -i HOME="$home" USER="$user" \
      LOGNAME="$user" LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      /bin/bash -c 'cd "$1" && shift && exec "$@"' bash "$checkout" "$@"
    ;;
  destroy)
    if [[ -d $root ]]; then
      # Every process whose root is this machine (a server left running, say).
      for p in /proc/[0-9]*; do
        if [[ $(readlink "$p/root" 2>/dev/null) == "$(realpath "$root")" ]]; then
          kill -9 "${p#/proc/}" 2>/dev/null || true
        fi
      done
      unmount_all
      rm -rf --one-file-system "$dir"
    fi
    ;;
  *) usage ;;
esac
