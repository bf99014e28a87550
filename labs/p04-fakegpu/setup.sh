#!/bin/sh
# p04-fakegpu: unpack Debian's kernel image (the one matching linux-headers-amd64)
# under $GPULAB_BUILD_ROOT/p04-fakegpu-vm/<version>/, for the qemu `vm` test.
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
if [ -f "$dest/$kver/boot/vmlinuz-$kver" ]; then
  exit 0
fi
mkdir -p "$dest/download" || exit 0
cd "$dest/download" || exit 0
rm -f ./*.deb
pkg=""
for candidate in "linux-image-$kver" "linux-image-$kver-unsigned"; do
  if apt-get download "$candidate" >/dev/null 2>&1; then
    pkg=$candidate
    break
  fi
done
if [ -z "$pkg" ]; then
  note "cannot download linux-image-$kver (no network or no apt source?); the vm test will skip"
  exit 0
fi
rm -rf "$dest/$kver.tmp"
if ! dpkg -x ./*.deb "$dest/$kver.tmp"; then
  note "dpkg -x of $pkg failed; the vm test will skip"
  rm -rf "$dest/$kver.tmp"
  exit 0
fi
# Only boot/ is needed: the VM loads no Debian module, only fakegpu.ko (saves ~390 MB).
rm -rf "$dest/$kver.tmp/lib/modules" "$dest/$kver.tmp/usr"
rm -rf "${dest:?}/$kver"
mv "$dest/$kver.tmp" "$dest/$kver"
rm -f ./*.deb
note "unpacked $pkg into $dest/$kver (kernel $dest/$kver/boot/vmlinuz-$kver)"
