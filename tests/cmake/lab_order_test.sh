#!/usr/bin/env bash
# cmake/GpulabLabOrder.cmake and gpulab_add_lab() on a stand-in tree (ctest: cmake.lab-order,
# label unit): prerequisites configure first, a lab whose prerequisite did not configure leaves
# the build with "needs lab ..." (transitively) instead of failing, GPULAB_LABS brings in what a
# selected lab builds on, and a LABS line naming no lab, or a cycle, is a configure error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'lab_order_test: FAIL: %s\n' "$*" >&2; exit 1; }
configure() {  # configure SRC BUILD [ARGS...]: cmake's output on stdout, its status in $rc
  local src=$1 build=$2
  shift 2
  rc=0
  out=$(cmake -S "$src" -B "$build" -DGPULAB_CMAKE_DIR="$here/../../cmake" "$@" 2>&1) || rc=$?
}
expect_line() { grep -qE -- "$1" <<<"$out" || fail "$2 (no line matching: $1)"$'\n'"$out"; }

# 1. Everything: order p01, p02, p03, p04 (prerequisites first), the missing chain reported.
configure "$here/lab-order" "$work/all"
[ "$rc" -eq 0 ] || fail "configure failed (status $rc)"$'\n'"$out"
order=$(sed -n 's/^-- configure order: //p' <<<"$out" | tr '\n' ' ')
[ "$order" = "p01-base p02-uses-base p03-uses-p02 p04-alone " ] || fail "configure order: $order"
expect_line 'lab p01-base +OFF +needs libfoo-dev' "the missing package is the root reason"
expect_line 'lab p02-uses-base +OFF +needs lab p01-base$' "a lab on a missing prerequisite leaves the build"
expect_line 'lab p03-uses-p02 +OFF +needs lab p02-uses-base$' "... and so does the lab on that one"
expect_line 'lab p04-alone +ON' "an independent lab still configures"

# 2. GPULAB_LABS=p03-uses-p02 brings in p02 and p01 and leaves p04 out.
configure "$here/lab-order" "$work/selected" -DGPULAB_LABS=p03-uses-p02
[ "$rc" -eq 0 ] || fail "configure with GPULAB_LABS failed"$'\n'"$out"
order=$(sed -n 's/^-- configure order: //p' <<<"$out" | tr '\n' ' ')
[ "$order" = "p01-base p02-uses-base p03-uses-p02 " ] || fail "GPULAB_LABS order: $order"
expect_line 'GPULAB_LABS: p01-base added' "a prerequisite of the selection is announced"
expect_line 'lab p04-alone +OFF +not in GPULAB_LABS' "an unselected lab is left out with its reason"

# 3. Errors: a selection or a LABS line that names no lab, and a cycle.
configure "$here/lab-order" "$work/bad-selection" -DGPULAB_LABS=p99-none
[ "$rc" -ne 0 ] || fail "GPULAB_LABS=p99-none configured"
expect_line "GPULAB_LABS names 'p99-none', which is not a lab folder" "an unknown selection"
cp -r "$here/lab-order" "$work/cycle"
sed -i 's/LABS     p01-base/LABS     p03-uses-p02/' "$work/cycle/labs/p02-uses-base/CMakeLists.txt"
configure "$work/cycle" "$work/cycle-build"
[ "$rc" -ne 0 ] || fail "a LABS cycle configured"
expect_line 'need each other in a cycle' "a cycle"
cp -r "$here/lab-order" "$work/unknown"
sed -i 's/LABS     p01-base/LABS     p00-missing/' "$work/unknown/labs/p02-uses-base/CMakeLists.txt"
configure "$work/unknown" "$work/unknown-build"
[ "$rc" -ne 0 ] || fail "a LABS line naming no lab configured"
expect_line "LABS names 'p00-missing', which is not a" "a LABS line naming no lab"
echo "lab_order_test: ok"
