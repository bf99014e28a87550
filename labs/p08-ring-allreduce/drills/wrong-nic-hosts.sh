#!/bin/sh
# wrong-nic-hosts.sh up PREFIX WORLD [RATE] | down PREFIX
#
# The wrong-NIC drill's hosts (root): WORLD network namespaces PREFIX-r0 ..
# each a "host" with two NICs, cabled to two switches (bridges) in PREFIX-sw:
#   eno1  10.231.1.(r+1)/24  the management NIC, shaped to RATE (default 40mbit) by a tbf qdisc
#   ens2  10.231.2.(r+1)/24  the fabric, an unshaped veth
# eno1 is created first, so the kernel lists it first, as on a server whose
# on-board management port comes before the fabric card: NCCL's default rule
# (the first interface that is not lo or docker*) then picks the management NIC.
# Nothing is created, addressed or routed in the machine's own namespace.
# `down` deletes the namespaces (and with them every veth and bridge).
set -eu

usage() {
  echo "usage: $0 up PREFIX WORLD [RATE] | down PREFIX" >&2
  exit 2
}

[ $# -ge 2 ] || usage
cmd=$1
prefix=$2
case $prefix in
  *[!A-Za-z0-9-]* | "") echo "$0: error: PREFIX '$prefix': use letters, digits and '-'" >&2; exit 2 ;;
esac

down() {
  for ns in $(ip netns list | awk '{print $1}'); do
    case $ns in
      "$prefix"-r[0-9]* | "$prefix"-sw) ip netns del "$ns" ;;
    esac
  done
}

case $cmd in
  up)
    [ $# -ge 3 ] || usage
    world=$3
    rate=${4:-40mbit}
    case $world in
      *[!0-9]* | "") echo "$0: error: WORLD '$world' is not a number" >&2; exit 2 ;;
    esac
    if [ "$world" -lt 2 ] || [ "$world" -gt 64 ]; then
      echo "$0: error: WORLD $world: use 2..64" >&2
      exit 2
    fi
    trap 'down' EXIT  # a half-built set is removed
    sw=$prefix-sw
    ip netns add "$sw"
    ip -n "$sw" link set lo up
    for br in br-mgmt br-fab; do
      ip -n "$sw" link add "$br" type bridge
      ip -n "$sw" link set "$br" up
    done
    r=0
    while [ "$r" -lt "$world" ]; do
      ns=$prefix-r$r
      ip netns add "$ns"
      ip -n "$ns" link set lo up
      ip -n "$sw" link add "m$r" type veth peer name eno1 netns "$ns"
      ip -n "$sw" link set "m$r" master br-mgmt up
      ip -n "$sw" link add "f$r" type veth peer name ens2 netns "$ns"
      ip -n "$sw" link set "f$r" master br-fab up
      ip -n "$ns" addr add "10.231.1.$((r + 1))/24" dev eno1
      ip -n "$ns" addr add "10.231.2.$((r + 1))/24" dev ens2
      ip -n "$ns" link set eno1 up
      ip -n "$ns" link set ens2 up
      # The management port's line rate: a token bucket on what the host sends.
      tc -n "$ns" qdisc add dev eno1 root tbf rate "$rate" burst 32kb latency 100ms
      r=$((r + 1))
    done
    trap - EXIT
    ;;
  down)
    down
    ;;
  *)
    usage
    ;;
esac
