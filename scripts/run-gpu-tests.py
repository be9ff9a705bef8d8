#!/usr/bin/env python3
"""Runs the GPU tests staged by scripts/stage-gpu-tests.sh on a machine with
a GPU (no clang or FileCheck needed): each lit test's binary, its output
checked against the test's CHECK / CHECK-NOT lines, and its COMPILED lines
(FORCED lines with --forced), in order (the subset of FileCheck these tests
use: literal text and {{regex}}), the unit tests' CUDA twins, and Kiln
beside PyTorch through DLPack (examples/dlpack_torch) when PyTorch is
installed. Prints a table; exit status 1 if anything failed.

  --forced           every guard made to fail (KILN_FORCE_GUARD_FAILURE=1)
  --sanitizer TOOL   each binary under compute-sanitizer --tool TOOL
                     (memcheck, racecheck, initcheck, synccheck); the unit
                     tests run their CUDA tests only
"""
import argparse
import os
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--forced", action="store_true")
ap.add_argument("--sanitizer")
ap.add_argument("--only", help="a regex of test names")
args = ap.parse_args()

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tests = os.path.join(root, ".bench", "gpu-tests")
env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, ".bench") + ":" +
           os.environ.get("LD_LIBRARY_PATH", ""))
# cuDNN (fused attention): where the toolkit has none, the one PyTorch's
# wheel ships (nvidia/cudnn/lib), so the attention tests run both kernels.
if "KILN_CUDNN" not in env:
    import glob
    import site
    dirs = site.getsitepackages() + [site.getusersitepackages()]
    for d in dirs:
        found = sorted(glob.glob(os.path.join(d, "nvidia", "cudnn", "lib", "libcudnn.so.9*")) +
                       glob.glob(os.path.join(d, "nvidia", "cu*", "lib", "libcudnn.so.9*")))
        if found:
            env["KILN_CUDNN"] = found[0]
            env["LD_LIBRARY_PATH"] += ":" + os.path.dirname(found[0])
            break
print("cuDNN for attention:", env.get("KILN_CUDNN", "the toolkit's, if any"))
if args.forced:
    env["KILN_FORCE_GUARD_FAILURE"] = "1"
mode = "FORCED" if args.forced else "COMPILED"
wrap = []
if args.sanitizer:
    wrap = ["compute-sanitizer", "--tool", args.sanitizer, "--error-exitcode", "99",
            "--print-limit", "20"]
    if args.sanitizer == "memcheck":
        wrap += ["--leak-check", "full"]


def pattern(text):
    parts = re.split(r"(\{\{.*?\}\})", text.strip())
    return "".join(p[2:-2] if p.startswith("{{") else re.escape(p) for p in parts)


def check(src, output):
    lines = output.splitlines()
    pos, pending_not = 0, []
    for m in re.finditer(r"//\s*(?:CHECK|%s)(-NOT)?:\s*(.*)" % mode, open(src).read()):
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
    if (not os.path.isfile(path) or name.endswith((".cpp", ".so", ".py")) or
            not os.access(path, os.X_OK) or name == "kiln_unit_tests"):
        continue
    if args.only and not re.search(args.only, name):
        continue
    # As the test's RUN line runs it: `env VAR=value ... %t`, and `2>&1`
    # (stderr checked with stdout, in order).
    run_line = next((l for l in open(path + ".cpp") if "RUN:" in l and re.search(r"%t( |$)", l)), "")
    test_env = dict(env)
    m = re.search(r"env ((?:\w+=\S+ )+)%t", run_line)
    for kv in (m.group(1).split() if m else []):
        k, v = kv.split("=", 1)
        test_env[k] = v
    both = "2>&1" in run_line
    try:
        p = subprocess.run(wrap + [path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT if both else subprocess.PIPE,
                           text=True, env=test_env, timeout=420 if wrap else 300)
    except subprocess.TimeoutExpired:
        results.append((name, "FAIL", "timed out"))
        continue
    err = check(path + ".cpp", p.stdout) if p.returncode == 0 else f"exit {p.returncode}"
    results.append((name, "PASS" if not err else "FAIL", err or p.stdout.strip().splitlines()[-1]))
    if err:
        print(p.stdout[-3000:], (p.stderr or "")[-2000:])
unit = os.path.join(tests, "kiln_unit_tests")
if os.path.exists(unit) and (not args.only or re.search(args.only, "kiln_unit_tests")):
    # Under a sanitizer: the CUDA tests, but the one whose cudaMalloc of
    # 4 TiB fails on purpose (memcheck reports the API error it provokes).
    # Without libkiln_blas.so staged (25 MiB, left here by default), the CPU
    # matrix products cannot run (nor the CPU tests that use one, such as
    # attention's backward): the CUDA tests only, the CPU ones run on the
    # build machine.
    no_blas = not os.path.exists(os.path.join(root, ".bench", "libkiln_blas.so"))
    cuda_only = "--gtest_filter=Cuda*:*/cuda:MatmulCuda*"
    gtest = ["--gtest_brief=1"] + (
        [cuda_only + ":-Cuda.AllocatorReusesFreedBlocksAndReportsOutOfMemory"]
        if wrap else [cuda_only] if no_blas else [])
    p = subprocess.run(wrap + [unit] + gtest, capture_output=True, text=True, env=env,
                       timeout=420)
    tail = [l for l in p.stdout.splitlines() if "PASSED" in l or "FAILED" in l or "SKIPPED" in l]
    results.append(("kiln_unit_tests", "PASS" if p.returncode == 0 else "FAIL", "; ".join(tail[-4:])))
    if p.returncode:
        print(p.stdout[-5000:])
# Kiln beside PyTorch through DLPack (examples/dlpack_torch), where PyTorch is.
torch_py = os.path.join(tests, "kiln_torch.py")
if (os.path.exists(torch_py) and not wrap and
        (not args.only or re.search(args.only, "kiln_torch")) and
        subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0):
    p = subprocess.run([sys.executable, torch_py, os.path.join(tests, "libkiln_torch.so")],
                       capture_output=True, text=True, env=env, timeout=300)
    last = (p.stdout.strip().splitlines() or ["no output"])[-1]
    results.append(("kiln_torch (DLPack, PyTorch)", "PASS" if p.returncode == 0 else "FAIL", last))
    if p.returncode:
        print(p.stdout[-3000:], p.stderr[-3000:])
print("\n| GPU test | result | last line |\n|---|---|---|")
for r in results:
    print(f"| {r[0]} | {r[1]} | {r[2]} |")
sys.exit(0 if all(r[1] == "PASS" for r in results) else 1)
