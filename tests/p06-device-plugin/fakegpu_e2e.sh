#!/usr/bin/env bash
# End to end across three labs: the device plugin (P06) advertises one fakegpu
# (P04's fakegpud), the mock kubelet allocates it over the real gRPC API, and
# mininer (P04) starts a container with exactly the DeviceSpec the plugin
# returned — the unmodified fakegpu client must pass every check inside.
# Usage: fakegpu_e2e.sh BIN_DIR        exit 0 pass, 1 fail, 77 cannot run here
set -uo pipefail
bin=$1
skip() { echo "SKIPPED: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces and a FUSE mount)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
for p in fakegpud fakegpu-client-static mininer gpu-device-plugin mock-kubelet; do
  [ -x "$bin/$p" ] || skip "$p is not built (configure p04-fakegpu, p04-mininer and p06-device-plugin together)"
done
[ -x /bin/busybox ] || skip "busybox-static is not installed (mininer mkrootfs needs it)"
command -v jq >/dev/null || skip "jq is not installed"

work=$(mktemp -d /tmp/gpulab-e2e-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  umount "$work/dev" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/dev" "$work/sock"
"$bin/fakegpud" --foreground "$work/dev" 2>"$work/fakegpud.log" &
pids+=($!)
for _ in $(seq 100); do [ -e "$work/dev/fakegpu" ] && break; sleep 0.05; done
[ -e "$work/dev/fakegpu" ] || fail "fakegpud did not mount: $(cat "$work/fakegpud.log")"

cat >"$work/node.json" <<JSON
{ "product": "gpulab-fakegpu", "memory_gb": 1, "backend": "fakegpu",
  "gpus": [{"uuid": "GPU-fake0", "device_node": "$work/dev/fakegpu", "container_path": "/dev/fakegpu"}],
  "nvlink_pairs": [] }
JSON
"$bin/gpu-device-plugin" --mode whole --config "$work/node.json" --socket-dir "$work/sock" 2>"$work/plugin.log" &
pids+=($!)

"$bin/mock-kubelet" --socket-dir "$work/sock" --resource nvidia.com/gpu --allocate 1 --timeout 20 --json \
  >"$work/alloc.json" 2>"$work/kubelet.log" || fail "allocation failed: $(cat "$work/kubelet.log" "$work/plugin.log")"
host=$(jq -r '.allocate.device_specs[0].host_path' "$work/alloc.json")
container=$(jq -r '.allocate.device_specs[0].container_path' "$work/alloc.json")
visible=$(jq -r '.allocate.envs.NVIDIA_VISIBLE_DEVICES' "$work/alloc.json")
echo "allocated: NVIDIA_VISIBLE_DEVICES=$visible device $host -> $container"
[ "$host" = "$work/dev/fakegpu" ] || fail "DeviceSpec host_path is '$host', expected $work/dev/fakegpu"
[ "$container" = "/dev/fakegpu" ] || fail "DeviceSpec container_path is '$container', expected /dev/fakegpu"
[ "$visible" = "GPU-fake0" ] || fail "NVIDIA_VISIBLE_DEVICES is '$visible', expected GPU-fake0"

"$bin/mininer" mkrootfs "$work/rootfs" >/dev/null 2>"$work/mkrootfs.log" || fail "mkrootfs: $(cat "$work/mkrootfs.log")"
out=$("$bin/mininer" run --rootfs "$work/rootfs" --device "$host:$container" \
        --inject "$bin/fakegpu-client-static:/bin/fakegpu-client" \
        /bin/fakegpu-client --device "$container" 2>&1)
rc=$?
echo "$out" | grep -v '^mininer: ' 
[ $rc -eq 0 ] || fail "the client in the container exited $rc"
echo "$out" | grep -q '^ALL CHECKS PASSED' || fail "no 'ALL CHECKS PASSED' from the client in the container"
echo "PASS a GPU allocated by gpu-device-plugin reached a mininer container and passed the fakegpu client's checks"
