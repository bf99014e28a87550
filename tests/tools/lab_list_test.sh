#!/usr/bin/env bash
# tools/lab list against a generated index (ctest: tools.lab-list, label unit).
#   lab_list_test.sh [BUILD_INDEX [BIN_DIR]]
# 1. A fixture index with empty fields: an empty "needs" between two tabs must stay empty
#    (bash `IFS=$'\t' read` merged it, so every lab printed "no: needs <its summary>").
# 2. The index this build wrote: every lab prints a verdict from its needs, never its summary,
#    and every program in BIN_DIR that the index names is there (fakegpud included).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { printf 'lab_list_test: FAIL: %s\n' "$*" >&2; exit 1; }

fixture=$(mktemp)
trap 'rm -f "$fixture"' EXIT
printf '%s\t%s\t%s\t%s\n' \
  p01-simt simt-sim "" "P01 L01: SIMT warp simulator" \
  p97-fpga "a-prog,b-prog" fpga "needs an FPGA" \
  p98-empty "" "" "" >"$fixture"
out=$(GPULAB_LAB_INDEX=$fixture "$root/tools/lab" list)
expected=$(printf '%-24s %-34s %s\n' lab programs "runs here" \
  p01-simt simt-sim yes && printf '%-24s %s\n' "" "P01 L01: SIMT warp simulator" &&
  printf '%-24s %-34s %s\n' p97-fpga "a-prog, b-prog" "no: needs fpga" && printf '%-24s %s\n' "" "needs an FPGA" &&
  printf '%-24s %-34s %s\n' p98-empty "" yes)
if [ "$out" != "$expected" ]; then
  diff <(printf '%s\n' "$expected") <(printf '%s\n' "$out") >&2 || true
  fail "tools/lab list of the fixture index (diff above: expected, then actual)"
fi

if [ $# -ge 1 ]; then
  index=$1 bin=${2:-}
  [ -s "$index" ] || fail "no index at $index"
  out=$(GPULAB_LAB_INDEX=$index "$root/tools/lab" list)
  while IFS= read -r line; do
    folder=${line%%$'\t'*}
    summary=${line##*$'\t'}
    verdict=$(printf '%s\n' "$out" | awk -v f="$folder" '$1 == f { sub(/.*  /, ""); print }')
    case "$verdict" in
      yes | "no: needs "*) ;;
      *) fail "$folder: verdict '$verdict'" ;;
    esac
    [ -z "$summary" ] || [[ $verdict != *"$summary"* ]] || fail "$folder: its summary became a need: $verdict"
  done <"$index"
  if [ -n "$bin" ] && [ -x "$bin/fakegpud" ]; then
    grep -q $'^p04-fakegpu\t[^\t]*fakegpud' "$index" || fail "fakegpud is built but not in p04-fakegpu's programs"
  fi
fi
echo "lab_list_test: PASS"
