#!/usr/bin/env bash
# Runs the planted-race program under the project's TSan suppressions and passes only if
# ThreadSanitizer reports the race in our handler (planted_race_bump_counter). A suppression
# file that matched any stack through libgrpc (race:libgrpc.so) would hide it: this fails then.
set -uo pipefail
prog=$1 supp=$2
out=$(TSAN_OPTIONS="halt_on_error=0 exitcode=66 suppressions=$supp" "$prog" 2>&1)
rc=$?
if [ "$rc" -ne 66 ]; then
  printf '%s\n' "$out" | tail -40
  echo "expect_race: the planted race was not reported (exit $rc, wanted TSan's 66)"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q 'WARNING: ThreadSanitizer: data race' ||
   ! printf '%s\n' "$out" | grep -q 'planted_race_bump_counter'; then
  printf '%s\n' "$out" | tail -40
  echo "expect_race: TSan exited 66 but did not report the race in planted_race_bump_counter"
  exit 1
fi
echo "expect_race: TSan reported the planted race in planted_race_bump_counter on gRPC's threads"
