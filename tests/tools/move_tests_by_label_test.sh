#!/usr/bin/env bash
# tools/move-tests-by-label (ctest: tools.move-tests-by-label, label unit) on a stand-in
# checkout: the top-level test files of a listed lab go to unit/ or integration/ by name, a
# relative include climbs one more level, the paths READMEs cite follow, headers stay, the lab
# leaves GPULAB_TESTS_LABELLED_BY_FILE_NAME and the other listed labs stay on it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'move_tests_by_label_test: FAIL: %s\n' "$*" >&2; exit 1; }

cd "$work"
git init -q .
mkdir -p cmake tools tests/p91-first tests/p92-second labs/p91-first
cp "$root/tools/move-tests-by-label" tools/
cat >cmake/GpulabLab.cmake <<'CMAKE'
set(GPULAB_TESTS_LABELLED_BY_FILE_NAME
  p91-first p92-second)
CMAKE
printf '#include "../../labs/p91-first/x.hpp"\n#include "shared.hpp"\n' >tests/p91-first/a_test.cpp
printf '// cli\n' >tests/p91-first/cli_integration_test.cpp
printf '// shared\n' >tests/p91-first/shared.hpp
printf '// second\n' >tests/p92-second/b_test.cpp
printf '| `tests/p91-first/a_test.cpp`, `tests/p91-first/cli_integration_test.cpp` | what |\n`tests/p91-first/a_test.cpp.orig` stays\n' \
  >labs/p91-first/README.md
git add -A
git -c user.name=t -c user.email=t@t commit -qm stand-in

out=$(tools/move-tests-by-label p91-first) || fail "the script failed: $out"
[ -f tests/p91-first/unit/a_test.cpp ] || fail "a_test.cpp is not in unit/"
[ -f tests/p91-first/integration/cli_integration_test.cpp ] || fail "cli_integration_test.cpp is not in integration/"
[ -f tests/p91-first/shared.hpp ] || fail "the shared header moved"
[ -f tests/p92-second/b_test.cpp ] || fail "a lab not named was moved"
[ "$(git status --porcelain tests/p91-first | grep -c '^R')" -eq 2 ] || fail "not moved with git mv: $(git status --porcelain)"
grep -qx '#include "../../../labs/p91-first/x.hpp"' tests/p91-first/unit/a_test.cpp ||
  fail "the relative include was not rewritten: $(cat tests/p91-first/unit/a_test.cpp)"
grep -qx '#include "shared.hpp"' tests/p91-first/unit/a_test.cpp || fail "a plain include changed"
grep -qF '`tests/p91-first/unit/a_test.cpp`, `tests/p91-first/integration/cli_integration_test.cpp`' labs/p91-first/README.md ||
  fail "the README's paths were not rewritten: $(cat labs/p91-first/README.md)"
grep -qF '`tests/p91-first/a_test.cpp.orig` stays' labs/p91-first/README.md || fail "a longer name was rewritten"
list=$(tr -s ' \n' ' ' <cmake/GpulabLab.cmake)
[ "$list" = "set(GPULAB_TESTS_LABELLED_BY_FILE_NAME p92-second) " ] || fail "the list is now: $list"

# No argument: every lab still listed; then nothing is left to do.
tools/move-tests-by-label >/dev/null || fail "the no-argument run failed"
[ -f tests/p92-second/unit/b_test.cpp ] || fail "the no-argument run did not move the listed lab"
out=$(tools/move-tests-by-label)
[[ $out == *"nothing to move"* ]] || fail "an empty list printed: $out"

set +e
out=$(tools/move-tests-by-label p99-none 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && [[ $out == *"error: no lab test folder tests/p99-none"* ]] || fail "an unknown lab: rc $rc, $out"
echo "move_tests_by_label_test: ok"
