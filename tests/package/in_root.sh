#!/bin/bash
# Runs inside the clean Debian root that package_test.sh made (chroot), as root.
#   in_root.sh install          apt installs /tmp/debs/*.deb with their Depends only
#   in_root.sh smoke VERSION    what a user does first with the installed packages
# Only bash and what a minbase root has (no curl, no jq): HTTP through bash's /dev/tcp.
set -uo pipefail

failed=0
pass() { printf 'PASS  %s\n' "$*"; }
bad() { printf 'FAIL  %s\n' "$*"; failed=1; }

# until_deadline SECONDS CMD...: runs CMD every 0.5 s until it succeeds or SECONDS pass.
until_deadline() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.5
  done
}

install_packages() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || echo "in-root: apt-get update failed; installing from the cached package lists"
  if ! apt-get install -y -q --no-install-recommends /tmp/debs/*.deb >/tmp/apt.log 2>&1; then
    tail -n 30 /tmp/apt.log
    bad "apt-get install of the packages failed (the last lines of its output above)"
    return 1
  fi
  pass "apt installed $(grep -c '^Setting up' /tmp/apt.log) packages: the 3 of gpulab and what they depend on"
  local p
  for p in gpulab-hal gpulab-labs gpulab-platform; do
    dpkg-query -W -f='${Status}\n' "$p" | grep -qx 'install ok installed' || { bad "$p is not installed"; return 1; }
    pass "$p $(dpkg-query -W -f='${Version}' "$p") installed"
  done
}

# http_get HOST:PORT PATH: the response (status line, headers, body) on stdout.
# A subshell: a refused connection must not end the caller.
http_get() (
  exec 3<>"/dev/tcp/${1%:*}/${1##*:}" || exit 1
  printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$2" "$1" >&3
  cat <&3
)

# start_unit UNIT LOG: runs the unit's ExecStart the way systemd would (its EnvironmentFile
# read, %H the host name, its StateDirectory made), in the background; the pid in $unit_pid.
start_unit() {
  local unit=/lib/systemd/system/$1 exec env state
  [ -f "$unit" ] || { bad "$unit is not installed"; return 1; }
  exec=$(sed -n 's/^ExecStart=//p' "$unit")
  env=$(sed -n 's/^EnvironmentFile=-\{0,1\}//p' "$unit")
  state=$(sed -n 's/^StateDirectory=//p' "$unit")
  [ -n "$exec" ] && [ -f "$env" ] || { bad "$unit: no ExecStart, or its EnvironmentFile '$env' is missing"; return 1; }
  [ -z "$state" ] || mkdir -p "/var/lib/$state"
  exec=${exec//%H/$(cat /proc/sys/kernel/hostname)}
  (set -a && . "$env" && set +a && eval "exec $exec") >"$2" 2>&1 &
  unit_pid=$!
}

smoke() {
  local version=$1 f out name

  # Every ELF file the packages installed finds its shared libraries (static ones have none).
  local missing=""
  while IFS= read -r f; do
    out=$(ldd "$f" 2>&1) || continue   # "not a dynamic executable"
    if grep -q 'not found' <<<"$out"; then missing+="$f: $(grep 'not found' <<<"$out" | tr -s ' \t\n' ' ')"$'\n'; fi
  done < <(find /opt/gpulab -type f)
  if [ -z "$missing" ]; then pass "every program and backend under /opt/gpulab finds its libraries"; else bad "missing libraries:"$'\n'"$missing"; fi

  # Every program on PATH answers --version with the package's version (the helpers other
  # programs run, hog and the static tools, are not on PATH).
  local n=0
  for f in /usr/bin/*; do
    [ -L "$f" ] && [[ $(readlink "$f") == /opt/gpulab/bin/* ]] || continue
    name=${f##*/}
    out=$("$name" --version 2>&1)
    if [ "$out" = "$name $version" ]; then n=$((n + 1)); else bad "$name --version printed '$out', not '$name $version'"; fi
  done
  if [ "$n" -gt 0 ]; then pass "$n programs on PATH print '<program> $version' (gpulabctl: $(gpulabctl --version))"; else bad "no gpulab program on PATH"; fi

  # A tiny lab run.
  if out=$(membench roofline --spec --decode 2>&1) && grep -q '^== roofline' <<<"$out"; then
    pass "membench roofline --spec --decode ran ($(wc -l <<<"$out") lines)"
  else
    bad "membench roofline --spec --decode: $out"
  fi

  # tamperlab checks the SHA-256 of its own code against the seal the build wrote into it:
  # stripping for the package must not have broken it.
  if out=$(tamperlab --key GPULAB-1234-ABCD-4C1B 2>&1) && grep -q '^code integrity  *PASS' <<<"$out"; then
    pass "tamperlab: its code still matches the build-time seal"
  else
    bad "tamperlab --key GPULAB-1234-ABCD-4C1B: $out"
  fi

  # The control plane from its unit and settings file, answering on loopback.
  start_unit gpulabd.service /tmp/gpulabd.log || return 1
  local control_pid=$unit_pid listen
  listen=$(. /etc/gpulab/gpulabd.env && echo "$GPULAB_LISTEN")
  if until_deadline 60 http_get "$listen" /v1/version >/tmp/version.http 2>/dev/null &&
    grep -q "\"version\":\"$version\"" /tmp/version.http; then
    pass "gpulabd.service: GET http://$listen/v1/version -> $(tail -n 1 /tmp/version.http)"
  else
    bad "gpulabd.service did not answer /v1/version on $listen within 60 s: $(cat /tmp/version.http /tmp/gpulabd.log 2>/dev/null)"
    kill "$control_pid" 2>/dev/null
    return 1
  fi

  # An agent from its unit registers this root's HAL devices, and a matmul job runs on it:
  # gpulab-task and the backends, from the packages, doing real work.
  export GPULAB_CONTROL=http://$listen
  start_unit gpulab-agent.service /tmp/agent.log || return 1
  local agent_pid=$unit_pid id
  if until_deadline 120 bash -c 'gpulabctl nodes 2>/dev/null | grep -q " ready "'; then
    pass "gpulab-agent.service registered: $(gpulabctl nodes | sed -n 2p | tr -s ' ')"
  else
    bad "no node ready within 120 s: $(gpulabctl nodes 2>&1; cat /tmp/agent.log)"
  fi
  printf '{"name": "smoke", "kind": "matmul", "backend": "cpu_ref", "params": {"n": 64}}\n' >/tmp/job.json
  out=$(gpulabctl submit /tmp/job.json 2>&1)
  id=$(sed -n 's/^submitted \(j-[0-9]*\) .*/\1/p' <<<"$out")
  if [ -n "$id" ]; then
    if until_deadline 180 bash -c "gpulabctl jobs | grep -Eq '^$id .* (succeeded|failed|cancelled)( |\$)'" &&
      gpulabctl jobs | grep -Eq "^$id .* succeeded( |\$)"; then
      pass "matmul job $id on cpu_ref succeeded"
    else
      bad "matmul job $id did not succeed within 180 s: $(gpulabctl describe "$id" 2>&1; gpulabctl logs "$id" 2>&1)"
    fi
  else
    bad "gpulabctl submit: $out"
  fi

  kill -TERM "$agent_pid" "$control_pid" 2>/dev/null
  wait "$agent_pid" "$control_pid" 2>/dev/null
  return "$failed"
}

case "${1:-}" in
  install) install_packages ;;
  smoke) smoke "${2:?smoke needs the version}" ;;
  *) echo "usage: in_root.sh install | smoke VERSION" >&2; exit 2 ;;
esac
