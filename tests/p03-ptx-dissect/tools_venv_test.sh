#!/usr/bin/env bash
# tools/lab's install_pypi_tools (ctest: ptx_dissect.tools-venv, label unit): the venv
# that gives ptx-dissect its cuobjdump. Runs `tools/lab build` in a scratch copy of the
# repository's tools/ with a stand-in python3 (no network, no pip), and checks that it
#   1. installs from tools/requirements-tools.txt with one progress line;
#   2. does nothing on the next run (same pins, binaries in place);
#   3. installs again when the pins change;
#   4. stops with one error line, the tail of pip's output, and no stamp when pip fails.
# `tools/lab build` then stops at configure, where a stand-in cmake refuses to run (a
# real one would configure and build whatever project the working directory holds);
# only what happened before that is checked.
#   tools_venv_test.sh TOOLS_LAB
set -euo pipefail
lab=${1:?usage: tools_venv_test.sh TOOLS_LAB}
fail() { printf 'tools_venv_test: FAIL: %s\n' "$*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/tools" "$tmp/fakebin"
cp "$lab" "$tmp/root/tools/lab"
: >"$tmp/root/tools/packages.txt"
printf 'nvidia-cuda-cuobjdump==1.0 --hash=sha256:%064d\n' 1 >"$tmp/root/tools/requirements-tools.txt"

# python3 -m venv DIR makes DIR/bin/python; that python's "-m pip install ... -r REQ"
# counts its calls and puts a cuobjdump where NVIDIA's wheel puts it and the
# kubernetes-validate entry point where pip puts it.
cat >"$tmp/fakebin/python3" <<'PY'
#!/usr/bin/env bash
[ "$1 $2" = "-m venv" ] || exit 9
mkdir -p "$3/bin"
cat >"$3/bin/python" <<INNER
#!/usr/bin/env bash
echo pip >>"$FAKE_PIP_CALLS"
if [ -n "\${FAKE_PIP_FAIL:-}" ]; then
  echo "Collecting nvidia-cuda-cuobjdump==1.0"
  echo "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE."
  exit 1
fi
mkdir -p "$3/lib/python3.11/site-packages/nvidia/cu13/bin"
touch "$3/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"
printf '#!/bin/sh\n' >"$3/bin/kubernetes-validate" && chmod +x "$3/bin/kubernetes-validate"
echo "Successfully installed nvidia-cuda-cuobjdump-1.0"
INNER
chmod +x "$3/bin/python"
PY
chmod +x "$tmp/fakebin/python3"
printf '#!/bin/sh\necho "cmake: stand-in, not configuring"\nexit 1\n' >"$tmp/fakebin/cmake"
chmod +x "$tmp/fakebin/cmake"
export FAKE_PIP_CALLS=$tmp/pip-calls PATH="$tmp/fakebin:$PATH"
: >"$FAKE_PIP_CALLS"

build() { (cd "$tmp/root" && tools/lab build) 2>"$tmp/stderr" >/dev/null || true; }
calls() { wc -l <"$FAKE_PIP_CALLS" | tr -d ' '; }
line="lab: installing PyPI tools from tools/requirements-tools.txt into build/tools-venv"
venv=$tmp/root/build/tools-venv

build
[ "$(grep -cxF "$line" "$tmp/stderr")" = 1 ] || fail "first run: no progress line: $(cat "$tmp/stderr")"
[ "$(calls)" = 1 ] || fail "first run: pip ran $(calls) times"
grep -q "Successfully installed" "$tmp/stderr" && fail "first run: pip's output reached the terminal"
cmp -s "$tmp/root/tools/requirements-tools.txt" "$venv/requirements-tools.txt" ||
  fail "first run: no copy of the installed pins in the venv"

build
grep -qF "$line" "$tmp/stderr" && fail "second run installed again: $(cat "$tmp/stderr")"
[ "$(calls)" = 1 ] || fail "second run: pip ran again"

printf 'nvidia-cuda-cuobjdump==1.1 --hash=sha256:%064d\n' 2 >"$tmp/root/tools/requirements-tools.txt"
build
grep -qxF "$line" "$tmp/stderr" || fail "changed pins were not installed: $(cat "$tmp/stderr")"
[ "$(calls)" = 2 ] || fail "changed pins: pip ran $(calls) times in all"

printf 'nvidia-cuda-cuobjdump==1.2 --hash=sha256:%064d\n' 3 >"$tmp/root/tools/requirements-tools.txt"
rc=0
(cd "$tmp/root" && FAKE_PIP_FAIL=1 tools/lab build) 2>"$tmp/stderr" >/dev/null || rc=$?
[ "$rc" = 2 ] || fail "failing pip: exit $rc, expected 2"
grep -qF "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES" "$tmp/stderr" || fail "failing pip: its error is not shown"
[ "$(tail -n 1 "$tmp/stderr")" = "lab: error: pip could not install $tmp/root/tools/requirements-tools.txt (log: $tmp/root/build/tools-venv.log)" ] ||
  fail "failing pip: last line is '$(tail -n 1 "$tmp/stderr")'"
cmp -s "$tmp/root/tools/requirements-tools.txt" "$venv/requirements-tools.txt" &&
  fail "failing pip: the venv claims the new pins"
echo "tools_venv_test: 4 cases passed"
