#!/usr/bin/env python3
"""deploy/kubernetes/ against the Kubernetes schemas, and against our programs' flags.

ctest deploy.kubernetes-validate (label unit; docs/testing.md):
  1. every manifest passes `kubernetes-validate --strict` for each Kubernetes version given,
     and every resource in them was checked (one "passed" line per document);
  2. every fixture in tests/deploy/broken/ is rejected, with the message its "# expect:" line
     names, so the validator is shown to reject what it should (a check that cannot fail
     proves nothing);
  3. every image is gpulab/gpulab:<project version> (one version in one place);
  4. every --flag a container passes to one of our programs appears in that program's --help
     (so a renamed flag breaks this test, not a node at 3 a.m.). Programs not built are listed.
Needs kubernetes-validate from build/tools-venv (tools/lab installs it, pinned with hashes in
tools/requirements-tools.txt); without it, exit 77 (skipped) saying so. Runs no cluster.
"""
import argparse
import glob
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--manifests", required=True)
    ap.add_argument("--broken", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--k8s", action="append", required=True)
    a = ap.parse_args()

    if not os.access(a.validator, os.X_OK):
        print(f"validate_manifests: SKIPPED: no kubernetes-validate at {a.validator} "
              "(tools/lab build installs it into build/tools-venv)", file=sys.stderr)
        return 77
    # PyYAML comes with kubernetes-validate: run under the venv's interpreter.
    venv_python = os.path.join(os.path.dirname(a.validator), "python")
    if os.path.realpath(sys.executable) != os.path.realpath(venv_python) and not os.environ.get("GPULAB_IN_VENV"):
        os.environ["GPULAB_IN_VENV"] = "1"
        os.execv(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:])
    import yaml

    failures = []
    manifests = sorted(glob.glob(os.path.join(a.manifests, "*.yaml")))
    if not manifests:
        failures.append(f"no manifests in {a.manifests}")
    docs = {m: [d for d in yaml.safe_load_all(open(m)) if d is not None] for m in manifests}

    # 1. The schemas, strict.
    for k8s in a.k8s:
        for m in manifests:
            r = subprocess.run([a.validator, "--strict", "-k", k8s, m], capture_output=True, text=True)
            out = r.stdout + r.stderr
            passed = out.count(" passed for resource ")
            if r.returncode != 0 or passed != len(docs[m]) or "WARN" in out:
                failures.append(f"{m} against Kubernetes {k8s}: exit {r.returncode}, "
                                f"{passed} of {len(docs[m])} resources passed:\n{out.strip()}")
        print(f"validate_manifests: {len(manifests)} manifests, "
              f"{sum(len(d) for d in docs.values())} resources, Kubernetes {k8s}: checked")

    # 2. The broken fixtures must fail, each for its own reason.
    broken = sorted(glob.glob(os.path.join(a.broken, "*.yaml")))
    if not broken:
        failures.append(f"no broken fixtures in {a.broken}")
    for b in broken:
        first = open(b).readline()
        m = re.match(r"# expect: (.+)", first)
        if not m:
            failures.append(f"{b}: first line must be '# expect: <part of the error>'")
            continue
        r = subprocess.run([a.validator, "--strict", "-k", a.k8s[0], b], capture_output=True, text=True)
        out = r.stdout + r.stderr
        if r.returncode == 0 or m.group(1) not in out:
            failures.append(f"{b}: expected a rejection mentioning {m.group(1)!r}, got exit {r.returncode}:\n{out.strip()}")
    print(f"validate_manifests: {len(broken)} broken fixtures: checked")

    # 3 and 4. Images and flags.
    help_cache = {}

    def help_text(program, sub):
        key = (program, sub)
        if key not in help_cache:
            exe = os.path.join(a.bin, program)
            if not os.access(exe, os.X_OK):
                help_cache[key] = None
            else:
                cmd = [exe] + ([sub] if sub else []) + ["--help"]
                help_cache[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
        return help_cache[key]

    not_built = set()
    flags_checked = 0
    for m, ds in docs.items():
        for d in ds:
            pod = (d.get("spec") or {}).get("template", {}).get("spec")
            if not pod:
                continue
            for c in pod.get("containers", []):
                where = f"{m}: {d['kind']}/{d['metadata']['name']} container {c.get('name')}"
                if c.get("image") != f"gpulab/gpulab:{a.version}":
                    failures.append(f"{where}: image {c.get('image')!r}, expected 'gpulab/gpulab:{a.version}'")
                program = os.path.basename((c.get("command") or [""])[0])
                args = c.get("args") or []
                sub = args[0] if args and not args[0].startswith("-") else None
                text = help_text(program, sub)
                if text is None:
                    not_built.add(program)
                    continue
                for arg in args:
                    if not arg.startswith("--"):
                        continue
                    flag = arg.split("=", 1)[0]
                    flags_checked += 1
                    if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text):
                        failures.append(f"{where}: {flag} is not a flag of '{program}{' ' + sub if sub else ''}' (see its --help)")
    print(f"validate_manifests: {flags_checked} flags found in their program's --help"
          + (f"; not built here, flags unchecked: {', '.join(sorted(not_built))}" if not_built else ""))

    for f in failures:
        print(f"validate_manifests: FAIL {f}", file=sys.stderr)
    if failures:
        return 1
    print("validate_manifests: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
