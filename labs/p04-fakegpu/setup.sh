#!/bin/sh
# p04-fakegpu: unpack Debian's kernel image (the one matching linux-headers-amd64)
# under $GPULAB_BUILD_ROOT/p04-fakegpu-vm/<version>/, for the qemu `vm` test, and the
# newest Debian kernel after it under p04-fakegpu-vm/upgrade/<version>/, for the
# kernel-upgrade drill (a module built for the old kernel, booted on the new one).
# Never installs it (apt-get download + dpkg -x). Idempotent. If the download is
# impossible, says why and succeeds: the vm test then skips with that reason.
set -u
root=${GPULAB_BUILD_ROOT:?GPULAB_BUILD_ROOT must name the build root}
dest=$root/p04-fakegpu-vm
note() { echo "p04-fakegpu setup: $*" >&2; }

kver=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n 1)
if [ -z "$kver" ]; then
  note "no /usr/src/linux-headers-*-amd64 (install linux-headers-amd64); the vm test will skip"
  exit 0
fi
# unpack VERSION DIR: linux-image-VERSION's boot/ under DIR/VERSION (idempotent).
unpack() {
  ver=$1 into=$2
  [ -f "$into/$ver/boot/vmlinuz-$ver" ] && return 0
  mkdir -p "$dest/download" || return 1
  cd "$dest/download" || return 1
  rm -f ./*.deb
  pkg=""
  for candidate in "linux-image-$ver" "linux-image-$ver-unsigned"; do
    if apt-get download "$candidate" >/dev/null 2>&1; then
      pkg=$candidate
      break
    fi
  done
  if [ -z "$pkg" ]; then
    note "cannot download linux-image-$ver (no network or no apt source?); its vm test will skip"
    return 1
  fi
  rm -rf "$into/$ver.tmp"
  if ! dpkg -x ./*.deb "$into/$ver.tmp"; then
    note "dpkg -x of $pkg failed; its vm test will skip"
    rm -rf "$into/$ver.tmp"
    return 1
  fi
  # Only boot/ is needed: the VM loads no Debian module, only fakegpu.ko (saves ~390 MB).
  rm -rf "$into/$ver.tmp/lib/modules" "$into/$ver.tmp/usr"
  rm -rf "${into:?}/$ver"
  mv "$into/$ver.tmp" "$into/$ver"
  rm -f ./*.deb
  note "unpacked $pkg into $into/$ver (kernel $into/$ver/boot/vmlinuz-$ver)"
}

unpack "$kver" "$dest"

# The upgrade: the newest standard amd64 kernel Debian offers that sorts after the headers'.
newest=$(apt-cache search --names-only '^linux-image-[0-9].*-amd64$' 2>/dev/null | awk '{print $1}' |
  grep -v -e '-cloud-' -e '-rt-' -e '-dbg' -e '-unsigned' | sed 's/^linux-image-//; s/-amd64$//' |
  sort -V | tail -n 1)
if [ -z "$newest" ] || [ "$(printf '%s\n%s-amd64\n' "$kver" "$newest-amd64" | sort -V | tail -n 1)" = "$kver" ]; then
  note "no Debian kernel newer than $kver in the apt lists; the kernel-upgrade drill will skip"
  exit 0
fi
# Keep one upgrade kernel: the drill's CMake picks the only one there.
for old in "$dest"/upgrade/*; do
  [ -d "$old" ] && [ "$old" != "$dest/upgrade/$newest-amd64" ] && rm -rf "$old"
done
mkdir -p "$dest/upgrade" && unpack "$newest-amd64" "$dest/upgrade"
exit 0
