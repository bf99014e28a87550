#!/usr/bin/env bash
# The systemd units the gpulab-platform package installs (deploy/systemd/) parse cleanly:
# `systemd-analyze verify` prints nothing for them (ctest package.systemd-units, label unit).
# It needs no running systemd; gpulabd is not installed here, so ExecStart points at /bin/true.
# A typo in a directive (Restart=on-falure) is printed and fails the test. Exit 77 without
# systemd-analyze.
#   units_test.sh DEPLOY_SYSTEMD_DIR
set -euo pipefail
src=${1:?usage: units_test.sh DEPLOY_SYSTEMD_DIR}
command -v systemd-analyze >/dev/null || { echo "units-test: SKIPPED: systemd-analyze is not installed (systemd)" >&2; exit 77; }
dir=$(mktemp -d /tmp/gpulab-units-XXXXXX)
trap 'rm -rf "$dir"' EXIT
units=()
for unit in "$src"/*.service; do
  sed 's|^ExecStart=/opt/gpulab/bin/gpulabd |ExecStart=/bin/true |' "$unit" >"$dir/${unit##*/}"
  grep -q '^ExecStart=/bin/true ' "$dir/${unit##*/}" || { echo "units-test: FAIL: ${unit##*/}: ExecStart is not /opt/gpulab/bin/gpulabd ..." >&2; exit 1; }
  env_file=$(sed -n 's/^EnvironmentFile=//p' "$unit")
  [ -f "$src/$(basename "$env_file")" ] || { echo "units-test: FAIL: ${unit##*/}: EnvironmentFile $env_file is not in $src" >&2; exit 1; }
  units+=("$dir/${unit##*/}")
done
[ ${#units[@]} -eq 2 ] || { echo "units-test: FAIL: expected gpulabd.service and gpulab-agent.service in $src" >&2; exit 1; }
out=$(systemd-analyze verify --man=no "${units[@]}" 2>&1) || true
if [ -n "$out" ]; then
  printf '%s\n' "$out" >&2
  echo "units-test: FAIL: systemd-analyze verify has complaints (above)" >&2
  exit 1
fi
echo "units-test: PASS systemd-analyze verify accepts ${units[*]##*/}"
