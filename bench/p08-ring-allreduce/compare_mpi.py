#!/usr/bin/env python3
"""Our ring against Open MPI's MPI_Allreduce, like for like, on this host.

For each world size, two mpirun launches of `ring-allreduce --compare-mpi`:
Open MPI's default transports (shared memory on one host) and Open MPI forced
to TCP (`--mca btl tcp,self`). Inside each launch the ring over shared memory,
the ring over TCP and MPI_Allreduce are timed on the same buffers, interleaved
round by round (`--rounds`), and the median round counts. The table pairs our
shm ring with Open MPI's default and our TCP ring with Open MPI on TCP.

    bench/p08-ring-allreduce/compare_mpi.py --bin build/default/bin

With `--before DIR` (another build's bin folder, e.g. the commit before a
change) every launch is repeated with that binary right after ours, and
`before shm` / `before tcp` columns show its figures beside ours: a change
measured against its own past in the same run, under the same load.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys


def run(mpirun, binary, world, tcp_only, sizes, rounds, iters, warmup, extra):
    cmd = [mpirun, "--oversubscribe", "-np", str(world)]
    if tcp_only:
        cmd += ["--mca", "btl", "tcp,self"]
    cmd += [binary, "--size", "1024", "--sweep", "--sweep-min", str(min(sizes)), "--sweep-max", str(max(sizes)),
            "--iters", str(iters), "--warmup", str(warmup), "--rounds", str(rounds), "--compare-mpi", "--json"] + extra
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"compare_mpi.py: error: {' '.join(cmd)} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    rows = json.loads(out.stdout)["timing"]["rows"]
    return {(r["via"], r["size_bytes"]): r for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/default/bin", help="folder holding ring-allreduce")
    ap.add_argument("--worlds", default="2,4")
    ap.add_argument("--sizes", default="16777216,67108864", help="bytes, comma separated (doubling from min to max)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--before", help="folder holding an earlier ring-allreduce to time beside ours")
    ap.add_argument("extra", nargs="*", help="more ring-allreduce flags (after --)")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("compare_mpi.py: SKIPPED: no mpirun (apt-get install openmpi-bin)", file=sys.stderr)
        return 77
    binary = os.path.join(a.bin, "ring-allreduce")
    before = os.path.join(a.before, "ring-allreduce") if a.before else None
    for b in (binary, before):
        if b is not None and not os.access(b, os.X_OK):
            sys.exit(f"compare_mpi.py: error: --bin/--before: no executable {b}")
    sizes = [int(s) for s in a.sizes.split(",")]
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"# ring-allreduce --compare-mpi: median of {a.rounds} interleaved rounds, {a.iters} iters after "
          f"{a.warmup} warm-up; load average before: {load}")
    print("# busbw in GB/s; ratio = ours / Open MPI; %memcpy = our busbw / one core's memcpy (same run)")
    header = ("world", "size") + (("before shm",) if before else ()) + (
        "ours shm", "MPI default", "ratio", "%memcpy") + (("before tcp",) if before else ()) + (
        "ours tcp", "MPI tcp", "ratio")
    print("  ".join(f"{h:>11}" for h in header))
    for world in [int(w) for w in a.worlds.split(",")]:
        default = run(mpirun, binary, world, False, sizes, a.rounds, a.iters, a.warmup, a.extra)
        old_default = run(mpirun, before, world, False, sizes, a.rounds, a.iters, a.warmup, a.extra) if before else {}
        tcp = run(mpirun, binary, world, True, sizes, a.rounds, a.iters, a.warmup, a.extra)
        old_tcp = run(mpirun, before, world, True, sizes, a.rounds, a.iters, a.warmup, a.extra) if before else {}
        for size in sorted({s for (_, s) in default}):
            shm, mpi_d = default.get(("shm", size)), default[("mpi", size)]
            ours_t, mpi_t = tcp[("tcp", size)], tcp[("mpi", size)]
            cells = [str(world), f"{size >> 20} MiB"]
            if before:
                old = old_default.get(("shm", size))
                cells.append(f"{old['busbw_GBps']:.3f}" if old else "-")
            if shm is None:
                cells += ["-", f"{mpi_d['busbw_GBps']:.3f}", "-", "-"]
            else:
                cells += [f"{shm['busbw_GBps']:.3f}", f"{mpi_d['busbw_GBps']:.3f}",
                          f"{shm['busbw_GBps'] / mpi_d['busbw_GBps']:.2f}x", f"{100 * shm['busbw_of_memcpy']:.1f}"]
            if before:
                cells.append(f"{old_tcp[('tcp', size)]['busbw_GBps']:.3f}")
            cells += [f"{ours_t['busbw_GBps']:.3f}", f"{mpi_t['busbw_GBps']:.3f}",
                      f"{ours_t['busbw_GBps'] / mpi_t['busbw_GBps']:.2f}x"]
            if any(r["wrong"] for r in (mpi_d, ours_t, mpi_t) + ((shm,) if shm else ())):
                cells.append("WRONG SUMS")
            print("  ".join(f"{c:>11}" for c in cells))
    with open("/proc/loadavg") as f:
        print(f"# load average after: {' '.join(f.read().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
