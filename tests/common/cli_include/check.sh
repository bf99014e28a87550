#!/usr/bin/env bash
# Every file that includes gpulab/cli.hpp must use what only it offers (a CLI::App,
# run_program, the add_*_flag helpers): CLI11 costs about ten seconds of compile in each
# file that includes it, so code that only throws UsageError or returns an exit code
# includes gpulab/errors.hpp instead (docs/conventions.md, "How a program behaves").
#   check.sh [--exclude DIR] DIR...   exit 0 when every file passes; 1 and one line per
#                                     offender otherwise (--exclude: the planted fixture)
set -euo pipefail
exclude=/nonexistent
if [ "${1:-}" = "--exclude" ]; then exclude=${2:?--exclude needs a folder}; shift 2; fi
[ $# -ge 1 ] || { echo "usage: check.sh [--exclude DIR] DIR..." >&2; exit 2; }
bad=0
while IFS= read -r -d '' f; do
  grep -qE '#include [<"]gpulab/cli\.hpp[">]' "$f" || continue
  case "$f" in */gpulab/cli.hpp | "$exclude"/*) continue ;; esac
  if ! grep -qE '\bCLI::|\bCLI11_|run_program|add_json_flag|add_quick_flag|add_seed_flag' "$f"; then
    echo "cli-include: $f includes gpulab/cli.hpp but uses no CLI::App: include gpulab/errors.hpp"
    bad=1
  fi
done < <(find "$@" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0)
exit "$bad"
