#!/bin/sh
# slo_promtool.sh check|test FILE... — promtool on the SLO pack for ctest.
# Exit 77 (ctest: skipped) with the reason when promtool is not installed.
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIPPED: promtool not found (apt-get install prometheus)"
  exit 77
fi
mode=$1
shift
exec promtool "$mode" rules "$@"
