#!/bin/sh
# The `vm` test: boot Debian's own kernel under qemu (software emulation, no KVM),
# with an initramfs of busybox-static, fakegpu.ko and the static clients; load the
# module, run client and evil (and mininer, when built), unload, and check the
# serial console. Exit 0 all checks passed, 1 a check failed, 77 cannot run here.
#
#   run-vm.sh --kernel VMLINUZ --module fakegpu.ko --bin BINDIR [--log FILE] [--bench ARGS]
#             [--expect-refused]
# --expect-refused is the kernel-upgrade drill: VMLINUZ is a newer kernel than the headers
# fakegpu.ko was built against, and the checks are that the kernel refuses the module
# ("invalid module format", with its reason in dmesg) and stays up, as a host does after a
# kernel upgrade whose module was never rebuilt.
set -u
kernel="" module="" bin="" log="" bench_args="" expect_refused=0
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) kernel=$2; shift 2 ;;
    --module) module=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --bench) bench_args=$2; shift 2 ;;
    --expect-refused) expect_refused=1; shift ;;
    *) echo "run-vm.sh: error: unknown argument $1" >&2; exit 2 ;;
  esac
done
skip() { echo "fakegpu vm: SKIPPED: $*" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
busybox=/bin/busybox
[ -x "$busybox" ] || skip "no busybox at /bin/busybox (apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && skip "/bin/busybox is not statically linked (apt-get install busybox-static)"
command -v cpio >/dev/null || skip "cpio is not installed"
[ -n "$kernel" ] && [ -f "$kernel" ] || skip "no Debian kernel image at '${kernel}' (labs/p04-fakegpu/setup.sh unpacks one; tools/lab runs it)"
[ -n "$module" ] && [ -f "$module" ] || skip "no fakegpu.ko at '${module}' (needs linux-headers-amd64 at configure time)"
for p in fakegpu-client-static fakegpu-evil-static; do
  [ -x "$bin/$p" ] || skip "no $bin/$p (sanitizer builds have no static programs)"
done

work=$(mktemp -d /tmp/fakegpu-vm-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin" "$work/root/opt"
cp "$busybox" "$work/root/bin/busybox"
cp "$here/init" "$work/root/init"
chmod 755 "$work/root/init"
cp "$module" "$work/root/fakegpu.ko"
for p in fakegpu-client-static fakegpu-evil-static fakegpu-bench-static mininer-static hog; do
  [ -x "$bin/$p" ] && cp "$bin/$p" "$work/root/opt/"
done
# strace (Debian's, dynamically linked) with its libraries, for the trace of the client on the module.
if strace=$(command -v strace); then
  for f in "$strace" $(ldd "$strace" 2>/dev/null | grep -o '/[^ ]*'); do
    mkdir -p "$work/root$(dirname "$f")" && cp -L "$f" "$work/root$f"
  done
  [ -e "$work/root/lib64" ] || ln -s lib "$work/root/lib64" 2>/dev/null
fi
if [ -n "$bench_args" ]; then
  printf '%s\n' "$bench_args" > "$work/root/opt/bench-args"
else
  rm -f "$work/root/opt/fakegpu-bench-static"
fi
(cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.gz" || { echo "cpio failed" >&2; exit 1; }

console=$work/console.log
# -accel tcg: pure software emulation, so the test runs where KVM does not.
timeout 600 "$qemu" -accel tcg -cpu max -smp 2 -m 512 -nographic -no-reboot -nic none \
  -kernel "$kernel" -initrd "$work/initramfs.gz" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic" \
  > "$console" 2>&1 </dev/null
qrc=$?
# Drop CRs and the terminal resets the firmware and kernel send.
tr -d '\r' < "$console" | sed 's/\x1bc//g; s/\x1b\[[0-9;?]*[A-Za-z]//g' > "$console.txt"
[ -n "$log" ] && cp "$console.txt" "$log"
grep -E '^(VM: |PASS|FAIL|SKIP|ALL CHECKS|fakegpu-|what |ioctl |mmap |waits/s|fresh |mininer)' "$console.txt"

fails=0
expect() {  # expect NAME REGEX: the console must match
  if grep -Eq -- "$2" "$console.txt"; then echo "VM-CHECK PASS $1"; else echo "VM-CHECK FAIL $1 (no line matching: $2)"; fails=$((fails + 1)); fi
}
reject() {  # reject NAME REGEX: the console must not match
  if grep -Eq -- "$2" "$console.txt"; then echo "VM-CHECK FAIL $1 (found: $(grep -E -- "$2" "$console.txt" | head -1))"; fails=$((fails + 1)); else echo "VM-CHECK PASS $1"; fi
}
[ $qrc -eq 124 ] && { echo "VM-CHECK FAIL the VM did not power off within 600 s"; fails=$((fails + 1)); }
if [ $expect_refused -eq 1 ]; then
  built_for=$(strings -a "$module" | sed -n 's/^vermagic=//p' | head -n 1)
  booted=$(sed -n 's/^VM: kernel \([^,]*\),.*/\1/p' "$console.txt")
  echo "VM: module built for: ${built_for:-unknown}"
  echo "VM: kernel booted:    ${booted:-none}"
  case "$built_for" in
    "$booted "*) echo "VM-CHECK FAIL the booted kernel is the one the module was built for"; fails=$((fails + 1)) ;;
    *) echo "VM-CHECK PASS the booted kernel is not the one the module was built for" ;;
  esac
  expect "insmod is refused: invalid module format" "can't insert '/fakegpu.ko': invalid module format"
  expect "insmod fails with ENOEXEC (8)" '^VM: insmod rc=8$'
  expect "the kernel logs why" 'VM: dmesg .*fakegpu.*(disagrees about version of symbol|version magic|struct module size)'
  grep -E 'VM: dmesg .*fakegpu' "$console.txt" | head -n 1
  expect "the kernel stays up (init reaches the end)" '^VM: done$'
  reject "no oops, no BUG" '(Oops|BUG:|general protection|Call Trace)'
  if [ $fails -ne 0 ]; then
    echo "fakegpu vm drill: $fails check(s) failed; console: ${log:-$console.txt}"
    exit 1
  fi
  echo "fakegpu vm drill: ALL CHECKS PASSED (the upgraded kernel refuses the old module)"
  exit 0
fi
expect "module loads" '^VM: insmod rc=0$'
expect "load message" 'fakegpu: loaded, /dev/fakegpu ready'
expect "misc node 0666" '^VM: node crw-rw-rw- 10,'
expect "client passes all checks, fence page included" '^ALL CHECKS PASSED \(15 passed, 0 skipped\)'
expect "client exit 0" '^VM: client rc=0$'
expect "evil fails cleanly, nothing leaked" '^VM: evil rc=0$'
expect "module unloads" '^VM: rmmod rc=0$'
reject "no oops, no BUG" '(Oops|BUG:|general protection|Call Trace)'
# The leak check itself: clean unload says nothing, the pitfall_leak unload must warn.
clean=$(sed -n '/VM: rmmod rc=/q;p' "$console.txt" | grep -c 'fakegpu: leak:')
[ "$clean" -eq 0 ] && echo "VM-CHECK PASS no leak warning on a clean unload" || { echo "VM-CHECK FAIL leak warning on a clean unload"; fails=$((fails + 1)); }
expect "pitfall_leak: client notices (release check fails)" '^VM: pitfall client rc=1$'
expect "pitfall_leak: unload warns about the leak" 'fakegpu: leak: [1-9][0-9]* contexts'
if [ -x "$bin/mininer-static" ]; then
  expect "mininer: client passes inside a container" '^VM: container client rc=0$'
  reject "mininer --device-cgroup: another device (1:5) is refused" '^VM: container other device rc=0$'
else
  echo "VM-CHECK SKIP mininer: no $bin/mininer-static (build labs/p04-mininer for the container run)"
fi
if [ $fails -ne 0 ]; then
  echo "fakegpu vm: $fails check(s) failed; console: ${log:-$console.txt}"
  exit 1
fi
echo "fakegpu vm: ALL VM CHECKS PASSED"
