#!/bin/sh
# wrong-nic.sh — the wrong-NIC drill end to end (docs/runbooks/collective-wrong-nic.md), as root:
# builds four "hosts" (network namespaces, wrong-nic-hosts.sh: a management NIC eno1 shaped to
# 40 Mbit/s listed before the fabric NIC ens2), runs ring-allreduce across them twice — with
# NCCL's default interface rule, then with NCCL_SOCKET_IFNAME=ens2 — and prints each run's output
# and the bytes every NIC actually sent, read from /sys/class/net/*/statistics in each namespace.
# Removes the namespaces however it ends. ring-allreduce comes from PATH (the README check puts
# build/<preset>/bin first). Exit 77 with the reason when this machine cannot run it.
set -u
world=4
if [ "$(id -u)" != 0 ]; then echo "wrong-nic.sh: SKIPPED: needs root (network namespaces)" >&2; exit 77; fi
for p in ring-allreduce ip tc; do
  command -v "$p" >/dev/null || { echo "wrong-nic.sh: SKIPPED: $p not found" >&2; exit 77; }
done
here=$(cd "$(dirname "$0")" && pwd)
prefix=wrongnic-$$
d=$(mktemp -d /tmp/wrong-nic-XXXXXX)
cleanup() {
  "$here/wrong-nic-hosts.sh" down "$prefix"
  rm -rf "$d"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
"$here/wrong-nic-hosts.sh" up "$prefix" "$world" 40mbit || exit 1

list=$(seq -s, -f "$prefix-r%g" 0 $((world - 1)))
# Bytes NIC $1 of every host has sent so far, summed.
sent() {
  total=0
  for r in $(seq 0 $((world - 1))); do
    total=$((total + $(ip netns exec "$prefix-r$r" cat "/sys/class/net/$1/statistics/tx_bytes")))
  done
  echo "$total"
}
# run VAR NAME ENV...: one drill run; its output, a row for the table, its slowest rank's busbw in $VAR.
rows=""
run() {
  var=$1
  name=$2
  shift 2
  mgmt0=$(sent eno1)
  fab0=$(sent ens2)
  env "$@" ring-allreduce --world "$world" --rank-netns "$list" --metrics-out "$d/$name.prom" >"$d/$name.out" || {
    cat "$d/$name.out"
    echo "wrong-nic.sh: error: ring-allreduce failed ($name)" >&2
    exit 1
  }
  mgmt=$(($(sent eno1) - mgmt0))
  fab=$(($(sent ens2) - fab0))
  echo "== $name"
  cat "$d/$name.out"
  busbw=$(awk '/^allreduce_bus_bandwidth_bytes_per_second/ { if (min == "" || $2 < min) min = $2 } END { print min }' \
    "$d/$name.prom")
  rows="$rows$(awk -v n="$name" -v m="$mgmt" -v f="$fab" -v b="$busbw" \
    'BEGIN { printf "%-28s %14.2f %14.2f %16.1f", n, m / 1e6, f / 1e6, b / 1e6 }')
"
  eval "$var=$busbw"
}
run wrong "default rule" -u NCCL_SOCKET_IFNAME
run right "NCCL_SOCKET_IFNAME=ens2" NCCL_SOCKET_IFNAME=ens2
echo
echo "bytes every host sent, read from /sys/class/net/<nic>/statistics/tx_bytes in its namespace:"
printf '%-28s %14s %14s %16s\n' "run" "eno1 MB (mgmt)" "ens2 MB (fab)" "min busbw MB/s"
printf '%s' "$rows"
awk -v r="$right" -v w="$wrong" 'BEGIN { printf "the fabric run is %.1fx the management run (slowest rank of each)\n", r / w }'
