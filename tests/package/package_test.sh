#!/usr/bin/env bash
# The Debian packages in a clean Debian root (ctest `package.debian-root`, labels package, root):
# cpack makes gpulab-hal, gpulab-labs and gpulab-platform from this build; debootstrap makes a
# minbase Debian root (cached as a tarball, so only the first run downloads it); apt installs
# the three .deb files there with their Depends only (no Recommends), resolved from the Debian
# mirror; then, with no network but loopback, every installed ELF file must find its libraries,
# the programs answer --version, membench runs, and gpulabd, started from the installed unit's
# ExecStart line and settings file, answers /v1/version, registers an agent and runs a matmul
# job. That is the proof that the packages' dependencies are complete.
#
#   package_test.sh BUILD_DIR CACHE_DIR VERSION
#
# Exit 0 every check passed, 1 a check failed, 77 skipped (not root, a tool missing, or no
# cached root and the mirror unreachable), with the reason on stderr.
set -euo pipefail

build=${1:?usage: package_test.sh BUILD_DIR CACHE_DIR VERSION}
cache=${2:?usage: package_test.sh BUILD_DIR CACHE_DIR VERSION}
version=${3:?usage: package_test.sh BUILD_DIR CACHE_DIR VERSION}
suite=bookworm
mirror=${GPULAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

say() { printf 'package-test: %s\n' "$*"; }
skip() { printf 'package-test: SKIPPED: %s\n' "$*" >&2; exit 77; }
fail() { printf 'package-test: FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "not root (debootstrap, chroot and mounts need it)"
for tool in debootstrap cpack dpkg-deb unshare chroot ip tar; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install debootstrap util-linux iproute2)"
done
[ -f "$build/CPackConfig.cmake" ] || fail "$build/CPackConfig.cmake missing: configure the build first"

work=$(mktemp -d /var/tmp/gpulab-package-test-XXXXXX)
# Every mount lives in a private mount namespace (unshare -m) that ends with its command, so
# nothing is mounted under $work by the time it is removed.
trap 'rm -rf --one-file-system "$work"' EXIT

# 1. The packages, from what is built (CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack builds nothing).
say "cpack: packaging $build"
if ! (cd "$build" && cpack -G DEB -B "$work/debs") >"$work/cpack.log" 2>&1; then
  tail -n 20 "$work/cpack.log" >&2
  fail "cpack failed (is everything built? tools/lab package builds first)"
fi
debs=()
for name in gpulab-hal gpulab-labs gpulab-platform; do
  deb="$work/debs/${name}_${version}_$(dpkg --print-architecture).deb"
  [ -f "$deb" ] || fail "cpack made no $(basename "$deb") (made: $(cd "$work/debs" && ls ./*.deb 2>/dev/null | tr '\n' ' '))"
  debs+=("$deb")
  say "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, Depends: $(dpkg-deb -f "$deb" Depends)"
done

# 2. A clean Debian root, cached: debootstrap only when the tarball is missing.
tarball="$cache/debian-$suite-minbase.tar"
mkdir -p "$cache"
if [ ! -f "$tarball" ]; then
  host=${mirror#*://}; host=${host%%/*}; port=80
  [[ $mirror == https://* ]] && port=443
  [[ $host == *:* ]] && port=${host##*:} && host=${host%:*}
  timeout 20 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null ||
    skip "no cached root ($tarball) and the Debian mirror $host:$port cannot be reached"
  say "debootstrap --variant=minbase $suite from $mirror (first run only; about 3 minutes)"
  start=$SECONDS
  debootstrap --variant=minbase "$suite" "$work/bootstrap" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap failed (log above)"; }
  tar -C "$work/bootstrap" -cf "$tarball.tmp.$$" . && mv "$tarball.tmp.$$" "$tarball"
  rm -rf --one-file-system "$work/bootstrap"
  say "root cached in $tarball after $((SECONDS - start)) s"
fi
root="$work/root"
mkdir "$root"
tar -C "$root" -xf "$tarball"
mkdir -p "$root/tmp/debs" "$cache/apt-archives/partial" "$cache/apt-lists/partial"
cp "${debs[@]}" "$root/tmp/debs/"
cp "$here/in_root.sh" "$root/tmp/in_root.sh"
cp /etc/resolv.conf "$root/etc/resolv.conf"

# enter.sh MODE ARGS...: the root's /proc, /dev and /sys, the downloaded .deb files and
# package lists kept in the cache across runs, then in_root.sh MODE in the root. Run under
# unshare --mount, so the mounts end with it.
cat >"$work/enter.sh" <<'EOF'
set -e
R=$1 C=$2; shift 2
if [ "$1" = smoke ]; then ip link set lo up; fi
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t sysfs sysfs "$R/sys"
mount --bind "$C/apt-archives" "$R/var/cache/apt/archives"
mount --bind "$C/apt-lists" "$R/var/lib/apt/lists"
exec chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
  /bin/bash /tmp/in_root.sh "$@"
EOF

# 3. Install, with the network (the mirror), Depends only.
say "apt-get install ${debs[*]##*/} (Depends only, from $mirror)"
unshare --mount --propagation private bash "$work/enter.sh" "$root" "$cache" install ||
  fail "the packages did not install into a clean $suite root (output above)"

# 4. The smoke test in a network namespace of its own, loopback only: nothing in it may need
# the network, and the control plane's port cannot collide with anything on this machine.
say "smoke test in the root, loopback only"
unshare --net --mount --propagation private bash "$work/enter.sh" "$root" "$cache" smoke "$version" ||
  fail "the smoke test failed in the root (output above)"
say "PASS the packages install into a clean Debian $suite root and run there"
