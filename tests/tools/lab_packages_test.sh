#!/usr/bin/env bash
# tools/lab packages [PROGRAM] (ctest: tools.lab-packages, label unit): what `tools/lab run`
# installs for one program — the build's own packages plus those of its lab and the labs it
# builds on — and what `tools/lab test` installs (every line of tools/packages.txt).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lab="$root/tools/lab"
fail() { printf 'lab_packages_test: FAIL: %s\n' "$*" >&2; exit 1; }
has() { grep -qx "$2" <<<"$1" || fail "$3: '$2' missing from: $(tr '\n' ' ' <<<"$1")"; }
hasnt() { ! grep -qx "$2" <<<"$1" || fail "$3: '$2' should not be installed: $(tr '\n' ' ' <<<"$1")"; }

all=$("$lab" packages)
lines=$(grep -v '^[[:space:]]*#' "$root/tools/packages.txt" | awk 'NF {print $1}')
[ "$all" = "$lines" ] || fail "tools/lab packages (no program) is not every line of tools/packages.txt"

build_only=$(awk '/^[[:space:]]*#/ || NF == 0 { next } { c = index($0, "#"); if (c && substr($0, c + 1) ~ /^[[:space:]]*the build/) print $1 }' \
  "$root/tools/packages.txt")
[ -n "$build_only" ] || fail "no line of tools/packages.txt says 'the build'"
simt=$("$lab" packages simt-sim)
[ "$simt" = "$build_only" ] || fail "simt-sim (no library of its own) should get only the build's packages, got: $(tr '\n' ' ' <<<"$simt")"

ring=$("$lab" packages ring-allreduce)
has "$ring" libopenmpi-dev ring-allreduce
hasnt "$ring" libgrpc++-dev ring-allreduce

# gpulab-serve's lab builds on p07-paged-kv (xxhash) and p09-hal (PoCL, OpenBLAS).
serve=$("$lab" packages gpulab-serve)
for p in libxxhash-dev pocl-opencl-icd libopenblas-dev libcpp-httplib-dev; do has "$serve" "$p" gpulab-serve; done
hasnt "$serve" libsqlite3-dev gpulab-serve

# A program named with its main file in the PROGRAMS line (hwfp:hwfp_main.cpp).
has "$("$lab" packages hwfp)" libssl-dev hwfp

# A lab name inside a longer one is not a match: p05-streams gets p05-caching-allocator's
# packages through its LABS line, and nothing that only names another p05 lab.
streams=$("$lab" packages stream-sched)
has "$streams" libmimalloc2.0 stream-sched

# Programs a lab's own CMake builds and declares with gpulab_lab_programs(): the eBPF probe
# (labs/p10-exporter/ebpf/ebpf.cmake) gets what its build needs, and p10-exporter's packages;
# fakegpud gets FUSE.
ebpf=$("$lab" packages gpulab-ioctl-latency)
for p in libbpf-dev bpftool clang libcpp-httplib-dev; do has "$ebpf" "$p" gpulab-ioctl-latency; done
hasnt "$ebpf" libfuse3-dev gpulab-ioctl-latency
has "$("$lab" packages fakegpud)" libfuse3-dev fakegpud
# A word inside a declared name is not a program.
set +e
"$lab" packages ioctl-latency >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "ioctl-latency (part of gpulab-ioctl-latency) exits $rc, not 2"

set +e
out=$("$lab" packages no-such-program 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "an unknown program exits $rc, not 2"
[ "$out" = "lab: error: no lab lists program 'no-such-program' in its PROGRAMS line or a gpulab_lab_programs() call (tools/lab list shows the programs)" ] ||
  fail "an unknown program printed: $out"
echo "lab_packages_test: ok"
