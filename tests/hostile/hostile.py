#!/usr/bin/env python3
"""The standing hostile-input suite (docs/testing.md, label `hostile`).

    hostile.py TABLE --bin DIR --root DIR [--only ID] [--list]

Each line of TABLE is one program and one input it takes:

    ID  PROGRAM  ARGS...  [@sample=PATH] [@ok=VARIANT,...]
    ID  PROGRAM  ARGS...{out}...  [@name=FILE] [@setup="PROGRAM ARGS"]... [@old=PATH] [@ready=PATH]

ARGS holds `{}` where a file goes, `{n}` where a number goes or `{out}` where
an output file goes, and may use `{dir}` for a scratch directory of the line's
own. A `{}` line runs once per bad file (missing, a directory, empty, garbage bytes, /dev/zero, one 50 MB
line, numbers no parser should take) and, with @sample, once per damaged copy
of a valid file (cut in half, CRLF line ends, a UTF-8 byte-order mark). A `{n}`
line runs once per bad number (nan, inf, negative, past 64 bits, 1e999, 12x).
An `{out}` line (root only: mknod, mount) runs once per hostile output target:
a private character device with /dev/full's numbers (one error line naming it,
and it stays a device), one with /dev/null's (success, still a device), a full
tmpfs and a read-only tmpfs, each holding an old file that must survive byte
for byte (docs in README.md).

Every run has a memory limit (prlimit --as) and a time limit (timeout -s KILL).
A run fails the suite when it dies of a signal, hits the time limit, runs out
of memory (std::bad_alloc), exits with anything but 1 or 2, or prints no
`error:` line on stderr. The damaged-sample variants may also succeed (a file
cut in half can still be valid), and @ok lists variants that may succeed for
this line; neither may crash, hang or exit with another code.

Each @setup runs once before the line (a program of --bin with its ARGS, which
must exit 0: a key to sign with, say). For `{out}` lines: @name is the output
file's name (default "out", some programs look at the extension; `{outdir}` in
place of `{out}` passes its directory, for a flag that takes one),
@old is a file whose bytes stand as the old output (default: a line of text;
a program that reads its output first needs a valid one), and @ready marks a
daemon: once PATH exists (after the output is written) it gets SIGTERM and
must exit 0.
"""
import argparse
import ctypes
import errno
import os
import random
import shlex
import signal
import stat
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
OUTPUT_VARIANTS = ("full-device", "null-device", "full-disk", "read-only")
OLD_OUTPUT = b"the old output file: a failed write must leave these bytes alone\n"
TMPFS_BYTES = 64 << 10

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
MS_RDONLY, MS_REMOUNT, MS_REC, MS_PRIVATE, MNT_DETACH, CLONE_NEWNS = 1, 32, 16384, 1 << 18, 2, 0x20000


class Unavailable(Exception):
    """This machine does not let us build the target (not root, no mount permission): a skip."""


def not_permitted(err):
    return err in (errno.EPERM, errno.EACCES)


def mount(source, target, fstype, flags, data):
    if libc.mount(source, target.encode() if target else None, fstype, flags, data) != 0:
        err = ctypes.get_errno()
        what = f"cannot mount {fstype.decode() if fstype else 'again'} on {target}: {os.strerror(err)}"
        raise (Unavailable if not_permitted(err) else OSError)(what)


def private_mount_namespace():
    """Mounts made from here on die with this process, even if it is killed."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return False
    return libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0


def fill(directory):
    """Writes a filler file until the file system has no byte left."""
    fd = os.open(os.path.join(directory, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"f" * size)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)


class OutputTarget:
    """One hostile place to write `name` to, in a fresh directory under `scratch`;
    unmounted on exit, whatever happened."""

    def __init__(self, variant, scratch, name, old):
        self.variant, self.name, self.old = variant, name, old
        self.dir = tempfile.mkdtemp(prefix=variant + ".", dir=scratch)
        self.path = os.path.join(self.dir, name)
        self.mounted = False

    def __enter__(self):
        if self.variant in ("full-device", "null-device"):
            self.rdev = os.makedev(1, 7 if self.variant == "full-device" else 3)
            try:
                os.mknod(self.path, stat.S_IFCHR | 0o666, self.rdev)
                # A scratch directory on a `nodev` mount makes the node but refuses to open it.
                os.close(os.open(self.path, os.O_WRONLY))
            except OSError as e:
                raise (Unavailable if not_permitted(e.errno) else OSError)(f"cannot make and open the device node {self.path}: {e.strerror}")
            return self
        mount(b"tmpfs", self.dir, b"tmpfs", 0, f"size={TMPFS_BYTES}".encode())
        self.mounted = True
        with open(self.path, "wb") as f:
            f.write(self.old)
        if self.variant == "full-disk":
            fill(self.dir)
        else:
            mount(None, self.dir, None, MS_REMOUNT | MS_RDONLY, None)
        return self

    def __exit__(self, *exc):
        if self.mounted:
            libc.umount2(self.dir.encode(), MNT_DETACH)

    def expect_success(self):
        return self.variant == "null-device"

    def damage(self):
        """What the run did to the target that it must not have, or None."""
        names = sorted(os.listdir(self.dir))
        if self.variant in ("full-device", "null-device"):
            st = os.lstat(self.path)
            if not stat.S_ISCHR(st.st_mode) or st.st_rdev != self.rdev:
                return f"{self.path} is no longer the character device {os.major(self.rdev)},{os.minor(self.rdev)}"
            expected = [self.name]
        else:
            with open(self.path, "rb") as f:
                if f.read() != self.old:
                    return f"the old {self.name} was changed"
            expected = sorted([self.name] + (["filler"] if self.variant == "full-disk" else []))
        if names != expected:
            return f"left {', '.join(n for n in names if n not in expected)} behind"
        return None


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
            if len(args) < 3 or not any(k in a for a in args[2:] for k in ("{}", "{n}", "{out}", "{outdir}")):
                sys.exit(f"{path}:{n}: expected ID PROGRAM ARGS... with {{}}, {{n}}, {{out}} or {{outdir}}")
            lines.append({"id": args[0], "program": args[1], "args": args[2:],
                          "sample": opts.get("sample"), "ok": set(filter(None, opts.get("ok", "").split(","))),
                          "output": any("{out}" in a or "{outdir}" in a for a in args[2:]), "name": opts.get("name", "out"),
                          "setup": [w.split("=", 1)[1] for w in words if w.startswith("@setup=")],
                          "old": opts.get("old"), "ready": opts.get("ready")})
    return lines


def run_case(binary, args, cwd, ready=None):
    """Exit code (negative: a signal), stderr, peak resident bytes, seconds. With `ready`,
    the program is a daemon: once that path exists it gets SIGTERM (through timeout)."""
    cmd = ["prlimit", f"--as={ADDRESS_SPACE}", "timeout", "-s", "KILL", str(TIME_LIMIT_S), binary] + args
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        # wait4's usage covers timeout's own child, the program: its peak RSS.
        if ready:
            signalled = False
            while True:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if not signalled and os.path.exists(ready):
                    p.send_signal(signal.SIGTERM)
                    signalled = True
                time.sleep(0.02)
        else:
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


def output_verdict(code, err, target):
    """Why this run at a hostile output target failed, or None."""
    if code == 137 or code < 0:
        return f"killed (exit {code}): a signal or the {TIME_LIMIT_S} s limit"
    if code == 124:
        return f"did not finish within {TIME_LIMIT_S} s"
    lines = err.splitlines()
    if target.expect_success():
        if code != 0:
            return f"exit {code}, expected 0: {target.name} is a character device like /dev/null"
    elif code not in (1, 2):
        return f"exit {code}, expected 1 or 2"
    elif len(lines) != 1 or "error:" not in lines[0] or target.path not in lines[0]:
        return f"expected one 'error:' line naming {target.path}, got {len(lines)} line(s)"
    return target.damage()


def run_setup(line, o, workdir):
    """Runs the line's @setup commands; an error message, or None."""
    for command in line["setup"]:
        words = shlex.split(command.replace("{dir}", workdir))
        r = subprocess.run([os.path.join(o.bin, words[0])] + words[1:], cwd=o.root, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIME_LIMIT_S)
        if r.returncode != 0:
            return f"@setup {command!r} exited {r.returncode}: {r.stderr.decode(errors='replace').strip()}"
    return None


def run_output_line(line, o, scratch, workdir):
    """(failures, cases run, skip reasons) for one `{out}` line."""
    binary = os.path.join(o.bin, line["program"])
    why = run_setup(line, o, workdir)
    if why:
        return [f"FAIL {line['id']} [setup]: {why}"], 0, []
    old = OLD_OUTPUT
    if line["old"]:
        with open(line["old"].replace("{dir}", workdir), "rb") as f:
            old = f.read()
    ready = line["ready"].replace("{dir}", workdir) if line["ready"] else None
    failures, cases, skips = [], 0, []
    for variant in OUTPUT_VARIANTS:
        try:
            with OutputTarget(variant, scratch, line["name"], old) as target:
                if ready and os.path.lexists(ready):
                    os.unlink(ready)
                args = [a.replace("{outdir}", target.dir).replace("{out}", target.path).replace("{dir}", workdir)
                        for a in line["args"]]
                code, err, _, seconds = run_case(binary, args, o.root, ready)
                cases += 1
                if o.verbose:
                    print(f"{seconds:6.2f} s  exit {code:3}  {line['id']} [{variant}]  {err.strip()[:160]}")
                why = output_verdict(code, err, target)
                if why:
                    failures.append(f"FAIL {line['id']} [{variant}]: {why}\n  $ {shlex.join([line['program']] + args)}"
                                    "\n  " + "\n  ".join(err.splitlines()[-3:] or ["(no stderr)"]))
        except Unavailable as e:
            skips.append(f"{line['id']} [{variant}]: {e}")
    return failures, cases, skips


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
    failures, cases, skips = [], 0, []
    if any(l["output"] for l in lines):
        if os.geteuid() != 0:
            skips += [f"{l['id']}: output targets need root (mknod, mount)" for l in lines if l["output"]]
            lines = [l for l in lines if not l["output"]]
        else:
            private_mount_namespace()  # where it works; the targets unmount themselves anyway
    with tempfile.TemporaryDirectory(prefix="gpulab-hostile-") as scratch:
        files = make_files(scratch) if any("{}" in a for l in lines for a in l["args"]) else {}
        for line in lines:
            binary = os.path.join(o.bin, line["program"])
            workdir = tempfile.mkdtemp(prefix=line["id"] + ".", dir=scratch)
            if line["output"]:
                line_failures, line_cases, line_skips = run_output_line(line, o, scratch, workdir)
                failures += line_failures
                cases += line_cases
                skips += line_skips
                continue
            why = run_setup(line, o, workdir)
            if why:
                failures.append(f"FAIL {line['id']} [setup]: {why}")
                continue
            if any("{n}" in a for a in line["args"]):
                variants = {name: (value, False) for name, value in BAD_NUMBERS.items()}
            else:
                variants = {name: (path, False) for name, path in files.items()}
                # The line's own: a program that may create its input (a state file) creates it there.
                variants["missing"] = (os.path.join(workdir, "does-not-exist"), False)
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
    for why in skips:
        print(f"SKIPPED {why}")
    print(f"hostile: {cases - len(failures)} of {cases} cases handled cleanly"
          + (f", {len(skips)} skipped" if skips else ""))
    if failures:
        return 1
    return 77 if skips and cases == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
