#!/usr/bin/env bash
# Scrape latency of gpu-exporter (8 simulated GPUs, every metric) next to
# prometheus-node-exporter's (its default collectors), both on loopback,
# measured the same way: wrk holding a fixed request rate (its Lua delay()
# paces each connection), latency percentiles from wrk's own histogram.
#
#   bench/p10-exporter/scrape_latency.sh [BIN_DIR] [RATE_PER_S] [SECONDS]
#   bench/p10-exporter/scrape_latency.sh build/default/bin 200 10
#
# Exits 77 (SKIPPED) if wrk or prometheus-node-exporter is missing.
set -euo pipefail

bin=${1:-build/default/bin}
rate=${2:-200}
secs=${3:-10}
conns=20  # connections wrk keeps open; each paced to rate/conns requests per second

for tool in wrk prometheus-node-exporter python3; do
  command -v "$tool" >/dev/null || { echo "scrape_latency: SKIPPED: $tool not installed" >&2; exit 77; }
done
[[ -x $bin/gpu-exporter ]] || { echo "scrape_latency: error: no $bin/gpu-exporter (build first)" >&2; exit 2; }

work=$(mktemp -d /tmp/p10-scrape-latency.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

delay_ms=$(python3 -c "print(1000.0 * $conns / $rate)")
cat >"$work/paced.lua" <<LUA
-- Each connection waits this long before each request: $conns connections x
-- (1000 / $delay_ms) requests/s = $rate requests/s, if responses are fast.
function delay() return $delay_ms end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %.1f %.1f %.1f %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect + e.read + e.write + e.status + e.timeout))
end
LUA

# gpu-exporter: port 0, read the port it announces.
"$bin/gpu-exporter" --simulate 8 --listen 127.0.0.1:0 2>"$work/gpu.log" &
pids+=($!)
gpu_port=""
for _ in $(seq 100); do
  gpu_port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$work/gpu.log")
  [[ -n $gpu_port ]] && break
  sleep 0.05
done
[[ -n $gpu_port ]] || { echo "scrape_latency: error: gpu-exporter did not start: $(cat "$work/gpu.log")" >&2; exit 1; }

node_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" --log.level=error \
  >"$work/node.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  python3 - "$node_port" <<'PY' 2>/dev/null && break || sleep 0.05
import socket, sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
PY
done

measure() {  # name url
  local size
  size=$(python3 - "$2" <<'PY'
import sys, urllib.request
print(len(urllib.request.urlopen(sys.argv[1]).read()))
PY
)
  local out
  out=$(wrk -t1 -c"$conns" -d"${secs}s" -s "$work/paced.lua" "$2" | sed -n 's/^RESULT //p')
  read -r reqs dur p50 p99 max errs <<<"$out"
  printf '%-34s %9s %11.1f %8.2f %8.2f %8.2f %6s\n' "$1" "$size" \
    "$(python3 -c "print($reqs / ($dur / 1e6))")" \
    "$(python3 -c "print($p50 / 1000)")" "$(python3 -c "print($p99 / 1000)")" \
    "$(python3 -c "print($max / 1000)")" "$errs"
}

node_version=$(prometheus-node-exporter --version 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)
echo "wrk -t1 -c$conns -d${secs}s, paced to $rate requests/s, loopback"
printf '%-34s %9s %11s %8s %8s %8s %6s\n' "target" "bytes" "requests/s" "p50 ms" "p99 ms" "max ms" "errors"
measure "gpu-exporter --simulate 8" "http://127.0.0.1:$gpu_port/metrics"
measure "prometheus-node-exporter ${node_version}" "http://127.0.0.1:$node_port/metrics"
