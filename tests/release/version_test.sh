#!/usr/bin/env bash
# Every program prints "<program> <version>" for --version and exits 0 (ctest:
# release.version-flag, label unit). The programs are the ones `tools/lab list` shows, read
# from the index this build wrote (build/<preset>/gpulab-labs.tsv), so a new program is
# checked without touching this file; the version is project(VERSION), passed in by CMake.
#   version_test.sh INDEX BIN_DIR VERSION
set -euo pipefail
fail() { printf 'version_test: FAIL: %s\n' "$*" >&2; exit 1; }
[ $# -eq 3 ] || fail "usage: version_test.sh INDEX BIN_DIR VERSION"
index=$1 bin=$2 version=$3
[ -s "$index" ] || fail "no index at $index"
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "version '$version' is not MAJOR.MINOR.PATCH"

out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
checked=0 failed=0
# The second tab-separated field is the comma-separated programs (cut, not `IFS=$'\t' read`,
# which would merge an empty field into the next: tests/tools/lab_list_test.sh).
for prog in $(cut -f2 "$index" | tr ',' ' '); do
  # A program the index names but this build did not make (an optional part whose
  # library is missing here) has nothing to check; tools.lab-list checks the index itself.
  [ -x "$bin/$prog" ] || { printf 'version_test: %s not built here\n' "$prog"; continue; }
  checked=$((checked + 1))
  rc=0
  timeout 60 "$bin/$prog" --version </dev/null >"$out" 2>"$err" || rc=$?
  if [ "$rc" -ne 0 ] || [ "$(cat "$out")" != "$prog $version" ] || [ -s "$err" ]; then
    printf 'version_test: FAIL %s --version: exit %s, stdout "%s", stderr "%s" (expected exit 0, "%s %s")\n' \
      "$prog" "$rc" "$(head -c 200 "$out")" "$(head -c 200 "$err")" "$prog" "$version" >&2
    failed=$((failed + 1))
  fi
done
[ "$checked" -gt 0 ] || fail "no program of $index is built in $bin"
[ "$failed" -eq 0 ] || fail "$failed of $checked programs"
echo "version_test: PASS $checked programs print '<program> $version'"
