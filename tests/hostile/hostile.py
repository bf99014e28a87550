#!/usr/bin/env python3
"""The standing hostile-input suite (docs/testing.md, label `hostile`).

    hostile.py TABLE --bin DIR --root DIR [--only ID] [--list]

Each line of TABLE is one program and one input it takes:

    ID  PROGRAM  ARGS...  [@sample=PATH] [@ok=VARIANT,...]

ARGS holds `{}` where a file goes or `{n}` where a number goes, and may use
`{dir}` for a scratch directory of the line's own. A `{}` line runs once per
bad file (missing, a directory, empty, garbage bytes, /dev/zero, one 50 MB
line, numbers no parser should take) and, with @sample, once per damaged copy
of a valid file (cut in half, CRLF line ends, a UTF-8 byte-order mark). A `{n}`
line runs once per bad number (nan, inf, negative, past 64 bits, 1e999, 12x).

Every run has a memory limit (prlimit --as) and a time limit (timeout -s KILL).
A run fails the suite when it dies of a signal, hits the time limit, runs out
of memory (std::bad_alloc), exits with anything but 1 or 2, or prints no
`error:` line on stderr. The damaged-sample variants may also succeed (a file
cut in half can still be valid), and @ok lists variants that may succeed for
this line; neither may crash, hang or exit with another code.
"""
import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time

ADDRESS_SPACE = 1 << 30  # prlimit --as: cuBLAS (which needs over 512 MiB to load) fits, an endless read does not
PEAK_RSS_LIMIT = 384 << 20  # resident: cuda-kernels' libraries take 215 MiB; a read that stops at the
                            # address-space limit reaches about 516 MiB
TIME_LIMIT_S = 20        # per run; every run here finishes in well under a second

BAD_NUMBERS = {
    "nan": "nan", "inf": "inf", "minus-inf": "-inf", "negative": "-1",
    "past-64-bits": "18446744073709551616", "minus-past-64-bits": "-9223372036854775809",
    "overflow": "1e999", "junk": "12x", "empty": "",
}
SAMPLE_VARIANTS = ("truncated", "crlf", "bom")


def make_files(scratch):
    """The bad files every `{}` line is fed, by variant name."""
    files = {"missing": os.path.join(scratch, "does-not-exist"), "zero": "/dev/zero"}
    files["directory"] = os.path.join(scratch, "a-directory")
    os.mkdir(files["directory"])
    files["empty"] = os.path.join(scratch, "empty")
    open(files["empty"], "wb").close()
    files["garbage"] = os.path.join(scratch, "garbage")
    with open(files["garbage"], "wb") as f:
        f.write(random.Random(1).randbytes(4096))
    # One 50 MB line with no newline: a sparse file of NUL bytes, so making it
    # costs nothing, yet a reader without a cap reads every byte.
    files["long-line"] = os.path.join(scratch, "long-line")
    with open(files["long-line"], "wb") as f:
        f.truncate(50 << 20)
    files["numbers"] = os.path.join(scratch, "numbers")
    with open(files["numbers"], "w") as f:
        f.write("nan,inf,-1,1e999,99999999999999999999\n-nan -inf 0x7fffffffffffffff\n")
    return files


def sample_files(sample, scratch, line_id):
    with open(sample, "rb") as f:
        data = f.read()
    out = {}
    for variant, content in (("truncated", data[: len(data) // 2]),
                             ("crlf", data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")),
                             ("bom", b"\xef\xbb\xbf" + data)):
        path = os.path.join(scratch, f"{line_id}.{variant}{os.path.splitext(sample)[1]}")
        with open(path, "wb") as f:
            f.write(content)
        out[variant] = path
    return out


def parse_table(path):
    lines = []
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            words = shlex.split(text)
            opts = {w[1:].split("=", 1)[0]: w.split("=", 1)[1] for w in words if w.startswith("@")}
            args = [w for w in words if not w.startswith("@")]
            if len(args) < 3 or not any("{}" in a or "{n}" in a for a in args[2:]):
                sys.exit(f"{path}:{n}: expected ID PROGRAM ARGS... with {{}} or {{n}}")
            lines.append({"id": args[0], "program": args[1], "args": args[2:],
                          "sample": opts.get("sample"), "ok": set(filter(None, opts.get("ok", "").split(",")))})
    return lines


def run_case(binary, args, cwd):
    """Exit code (negative: a signal), stderr, peak resident bytes, seconds."""
    cmd = ["prlimit", f"--as={ADDRESS_SPACE}", "timeout", "-s", "KILL", str(TIME_LIMIT_S), binary] + args
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        # wait4's usage covers timeout's own child, the program: its peak RSS.
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return p.returncode, text, usage.ru_maxrss * 1024, time.monotonic() - start


def verdict(code, err, peak, may_succeed):
    if peak > PEAK_RSS_LIMIT or "bad_alloc" in err or "Cannot allocate memory" in err:
        return f"used {peak >> 20} MiB of memory (limit {PEAK_RSS_LIMIT >> 20} MiB)"
    if code == 137 or code < 0:
        return f"killed (exit {code}): a signal or the {TIME_LIMIT_S} s limit"
    if code == 124:
        return f"did not finish within {TIME_LIMIT_S} s"
    if code == 0 and may_succeed:
        return None
    if code not in (1, 2):
        return f"exit {code}, expected 1 or 2"
    if not any("error:" in l for l in err.splitlines()):
        return "no 'error:' line on stderr"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table")
    ap.add_argument("--bin", required=True, help="directory of the built programs")
    ap.add_argument("--root", required=True,
                    help="the repository: programs run there, so ARGS and @sample may name its files")
    ap.add_argument("--only", help="run only this line")
    ap.add_argument("--list", action="store_true", help="print the line ids and exit")
    ap.add_argument("--verbose", action="store_true", help="print every case with its time and exit code")
    o = ap.parse_args()
    lines = parse_table(o.table)
    if o.list:
        for l in lines:
            print(l["id"], l["program"])
        return 0
    if o.only:
        lines = [l for l in lines if l["id"] == o.only]
        if not lines:
            sys.exit(f"no line '{o.only}' in {o.table}")
    failures, cases = [], 0
    with tempfile.TemporaryDirectory(prefix="gpulab-hostile-") as scratch:
        files = make_files(scratch) if any("{}" in a for l in lines for a in l["args"]) else {}
        for line in lines:
            binary = os.path.join(o.bin, line["program"])
            workdir = tempfile.mkdtemp(prefix=line["id"] + ".", dir=scratch)
            if any("{n}" in a for a in line["args"]):
                variants = {name: (value, False) for name, value in BAD_NUMBERS.items()}
            else:
                variants = {name: (path, False) for name, path in files.items()}
                if line["sample"]:
                    for name, path in sample_files(os.path.join(o.root, line["sample"]), scratch, line["id"]).items():
                        variants[name] = (path, True)
            for name, (value, may_succeed) in variants.items():
                args = [a.replace("{}", value).replace("{n}", value).replace("{dir}", workdir) for a in line["args"]]
                code, err, peak, seconds = run_case(binary, args, o.root)
                cases += 1
                if o.verbose:
                    print(f"{seconds:6.2f} s  {peak >> 20:5} MiB  exit {code:3}  {line['id']} [{name}]")
                why = verdict(code, err, peak, may_succeed or name in line["ok"])
                if why:
                    shown = shlex.join([line["program"]] + args)
                    failures.append(f"FAIL {line['id']} [{name}]: {why}\n  $ {shown}\n  "
                                    + "\n  ".join(err.splitlines()[-3:] or ["(no stderr)"]))
    for f in failures:
        print(f)
    print(f"hostile: {cases - len(failures)} of {cases} cases handled cleanly")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
