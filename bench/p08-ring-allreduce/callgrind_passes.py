#!/usr/bin/env python3
"""What one ring all-reduce costs in instructions and in memory traffic, counted by callgrind.

Runs `ring-allreduce` under `valgrind --tool=callgrind --cache-sim=yes`, collecting only inside
`ring_allreduce<double>` (every rank is a forked process, so each writes its own profile), once
with --iters 1 and once with --iters 3; the difference over the two extra all-reduces, summed over
the ranks, is the cost of one all-reduce on the whole job, free of start-up, timing and checking.
Instruction counts do not depend on the machine's load. The cache simulation counts the data
cache lines that miss a 32 KiB L1 and an 8 MiB last level (--LL, smaller than the vector, so the
vector streams through memory as it does on a machine with many ranks per L3): each miss is 64
bytes read from the next level, so the lines are the memory traffic the passes over the data make.

    bench/p08-ring-allreduce/callgrind_passes.py --bin build/default/bin --before /path/to/old/bin
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

EVENTS = ("Ir", "Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw")


def profile(binary, world, size, transport, iters):
    """Summed event counts of every rank's ring_allreduce calls in one run."""
    with tempfile.TemporaryDirectory(prefix="ring-callgrind-") as tmp:
        cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--D1=32768,8,64", "--LL=8388608,16,64",
               "--toggle-collect=*ring_allreduce<double>*", f"--callgrind-out-file={tmp}/cg.%p",
               binary, "--world", str(world), "--size", str(size), "--algo", "ring", "--iters", str(iters),
               "--warmup", "0", "--transport", transport, "--shm-spin-us", "0", "--timeout-ms", "600000"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            sys.exit(f"callgrind_passes.py: error: {' '.join(cmd)} exited {out.returncode}:\n{out.stderr[-2000:]}")
        totals = dict.fromkeys(EVENTS, 0)
        for path in glob.glob(os.path.join(tmp, "cg.*")):
            events = None
            with open(path) as f:
                for line in f:
                    if line.startswith("events:"):
                        events = line.split()[1:]
                    elif line.startswith("totals:") or line.startswith("summary:"):
                        for name, value in zip(events, line.split()[1:]):
                            if name in totals:
                                totals[name] += int(value)
                        break
        return totals


def per_allreduce(binary, world, size, transport):
    one = profile(binary, world, size, transport, 1)
    three = profile(binary, world, size, transport, 3)
    return {k: (three[k] - one[k]) / 2 for k in EVENTS}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/default/bin", help="folder holding ring-allreduce")
    ap.add_argument("--before", help="folder holding an earlier ring-allreduce to count beside ours")
    ap.add_argument("--worlds", default="2,4")
    ap.add_argument("--size", type=int, default=1 << 20, help="doubles per rank (default 1 Mi: 8 MiB)")
    # Shared memory only by default: over TCP the copies happen in the kernel, which callgrind does
    # not see (and the collection over TCP came out empty in our runs, not yet understood).
    ap.add_argument("--transports", default="shm")
    a = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("callgrind_passes.py: SKIPPED: no valgrind (apt-get install valgrind)", file=sys.stderr)
        return 77
    builds = [("ours", os.path.join(a.bin, "ring-allreduce"))]
    if a.before:
        builds.insert(0, ("before", os.path.join(a.before, "ring-allreduce")))
    for _, b in builds:
        if not os.access(b, os.X_OK):
            sys.exit(f"callgrind_passes.py: error: --bin/--before: no executable {b}")
    vector = a.size * 8
    print(f"# one ring all-reduce of {a.size} doubles ({vector / 2**20:.0f} MiB) per rank, summed over the ranks;"
          f" callgrind, L1 32 KiB, LL 8 MiB")
    print("# lines/B = (D1mr + D1mw) * 64 / bytes of one rank's vector; LL lines/B the same for the last level")
    header = ("world", "path", "build", "G instr", "M data reads", "M data writes", "L1 lines/B", "LL lines/B")
    print("  ".join(f"{h:>13}" for h in header))
    for world in [int(w) for w in a.worlds.split(",")]:
        for transport in a.transports.split(","):
            for name, binary in builds:
                c = per_allreduce(binary, world, a.size, transport)
                cells = (str(world), transport, name, f"{c['Ir'] / 1e9:.3f}", f"{c['Dr'] / 1e6:.1f}",
                         f"{c['Dw'] / 1e6:.1f}", f"{(c['D1mr'] + c['D1mw']) * 64 / vector:.2f}",
                         f"{(c['DLmr'] + c['DLmw']) * 64 / vector:.2f}")
                print("  ".join(f"{x:>13}" for x in cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
