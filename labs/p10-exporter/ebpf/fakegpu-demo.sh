#!/bin/bash
# fakegpu-demo.sh [--stall-ms N] — gpulab-ioctl-latency on real traffic, for the README:
# mounts a fakegpud of its own on /tmp/ioctl-latency-demo-$$, attaches the probe to its device,
# runs fakegpu-client (the lab's 15 checks: a fixed sequence of ioctls), stops the probe and
# prints its table. --stall-ms N also runs fakegpu-bench and freezes fakegpud (SIGSTOP) for N ms
# in the middle of its ioctl loop, so a call hangs that long in the "driver": the stall drill
# of docs/runbooks/device-ioctl-latency.md.
# Programs come from PATH (the README check puts build/<preset>/bin first). Exit 77 with the
# reason when this machine cannot run it (not root, no FUSE, no BTF).
set -u
stall_ms=0
if [ "${1:-}" = "--stall-ms" ]; then stall_ms=$2; fi
if [ "$(id -u)" != 0 ]; then echo "fakegpu-demo.sh: SKIPPED: needs root (BPF)" >&2; exit 77; fi
for p in gpulab-ioctl-latency fakegpud fakegpu-client fakegpu-bench; do
  command -v "$p" >/dev/null || {
    echo "fakegpu-demo.sh: SKIPPED: $p is not built (the configure summary says why)" >&2; exit 77; }
done
if [ ! -w /dev/fuse ]; then echo "fakegpu-demo.sh: SKIPPED: /dev/fuse is not available" >&2; exit 77; fi

d=/tmp/ioctl-latency-demo-$$
mkdir -p "$d/mnt"
daemon=""
probe=""
cleanup() {
  [ -n "$probe" ] && kill "$probe" 2>/dev/null
  [ -n "$daemon" ] && { kill -CONT "$daemon"; kill "$daemon"; wait "$daemon"; } 2>/dev/null
  mountpoint -q "$d/mnt" && umount -l "$d/mnt"
  rm -rf "$d"
}
trap cleanup EXIT

fakegpud --foreground "$d/mnt" >"$d/fakegpud.log" 2>&1 &
daemon=$!
for _ in $(seq 1 500); do mountpoint -q "$d/mnt" && break; sleep 0.01; done
mountpoint -q "$d/mnt" || { echo "fakegpu-demo.sh: error: fakegpud did not mount: $(cat "$d/fakegpud.log")" >&2; exit 1; }

# A relative --device (from $d) keeps the table's device column the same in every run.
(cd "$d" && exec gpulab-ioctl-latency --device mnt/fakegpu --ready-file ready >table 2>err) &
probe=$!
until [ -e "$d/ready" ]; do
  if ! kill -0 "$probe" 2>/dev/null; then
    wait "$probe"; rc=$?; cat "$d/err" >&2; probe=""; exit "$rc"
  fi
  sleep 0.01
done

fakegpu-client --device "$d/mnt/fakegpu" >"$d/client" || { cat "$d/client" >&2; exit 1; }
if [ "$stall_ms" != 0 ]; then
  fakegpu-bench --device "$d/mnt/fakegpu" --iterations 2000 --jobs 2 >/dev/null &
  bench=$!
  sleep 0.1
  kill -STOP "$daemon"
  sleep "$(awk "BEGIN { print $stall_ms / 1000 }")"
  kill -CONT "$daemon"
  wait "$bench" || exit 1
fi
kill -INT "$probe"
wait "$probe"; rc=$?; probe=""
[ "$rc" = 0 ] || { cat "$d/err" >&2; exit "$rc"; }
cat "$d/table"
