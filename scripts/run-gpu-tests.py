#!/usr/bin/env python3
"""Runs the GPU tests staged by scripts/stage-gpu-tests.sh on a machine with
a GPU (no clang or FileCheck needed): each lit test's binary, its output
checked against the test's CHECK / CHECK-NOT lines in order (the subset of
FileCheck these tests use: literal text and {{regex}}), and the unit tests'
CUDA twins. Prints a table; exit status 1 if anything failed."""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tests = os.path.join(root, ".bench", "gpu-tests")
env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, ".bench") + ":" +
           os.environ.get("LD_LIBRARY_PATH", ""))


def pattern(text):
    parts = re.split(r"(\{\{.*?\}\})", text.strip())
    return "".join(p[2:-2] if p.startswith("{{") else re.escape(p) for p in parts)


def check(src, output):
    lines = output.splitlines()
    pos, pending_not = 0, []
    for m in re.finditer(r"//\s*CHECK(-NOT)?:\s*(.*)", open(src).read()):
        rx = re.compile(pattern(m.group(2)))
        if m.group(1):
            pending_not.append(rx)
            continue
        for i in range(pos, len(lines)):
            if rx.search(lines[i]):
                for n in pending_not:
                    if any(n.search(l) for l in lines[pos:i]):
                        return f"CHECK-NOT matched: {n.pattern}"
                pending_not, pos = [], i + 1
                break
        else:
            return f"CHECK not found: {m.group(2)}"
    for n in pending_not:
        if any(n.search(l) for l in lines[pos:]):
            return f"CHECK-NOT matched: {n.pattern}"
    return ""


results = []
for name in sorted(os.listdir(tests)):
    path = os.path.join(tests, name)
    if name.endswith(".cpp") or not os.access(path, os.X_OK) or name == "kiln_unit_tests":
        continue
    p = subprocess.run([path], capture_output=True, text=True, env=env, timeout=300)
    err = check(path + ".cpp", p.stdout) if p.returncode == 0 else f"exit {p.returncode}"
    results.append((name, "PASS" if not err else "FAIL", err or p.stdout.strip().splitlines()[-1]))
    if err:
        print(p.stdout[-3000:], p.stderr[-2000:])
unit = os.path.join(tests, "kiln_unit_tests")
if os.path.exists(unit):
    p = subprocess.run([unit, "--gtest_brief=1"], capture_output=True, text=True, env=env,
                       timeout=600)
    tail = [l for l in p.stdout.splitlines() if "PASSED" in l or "FAILED" in l or "SKIPPED" in l]
    results.append(("kiln_unit_tests", "PASS" if p.returncode == 0 else "FAIL", "; ".join(tail[-4:])))
    if p.returncode:
        print(p.stdout[-5000:])
print("\n| GPU test | result | last line |\n|---|---|---|")
for r in results:
    print(f"| {r[0]} | {r[1]} | {r[2]} |")
sys.exit(0 if all(r[1] == "PASS" for r in results) else 1)
