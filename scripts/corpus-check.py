#!/usr/bin/env python3
"""The plugin over real code it did not write: translation units from
Debian's packages (each libstdc++, LLVM ADT/Support, nlohmann, Eigen and
Boost header on its own, googletest's sources) and Kiln's runtime sources,
none annotated, compiled twice with clang++-19: without and with
-fplugin=libkiln.so. Each pair must give byte-identical objects and the same
diagnostics, and the plugin must not crash. Prints the time ratio.

  scripts/corpus-check.py                 every TU found (500+ with Boost)
  scripts/corpus-check.py --sample 40     a fixed sample (CI)

Headers that do not compile on their own without the plugin are skipped
(counted). Exit status 1 on any difference."""
import argparse
import concurrent.futures
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Headers compiled on their own: (label, include root, glob under it, flags).
HEADER_SETS = [
    ("libstdc++", "/usr/include/c++/12", "*", []),
    ("LLVM", "/usr/lib/llvm-19/include", "llvm/ADT/*.h", ["-I/usr/lib/llvm-19/include"]),
    ("LLVM", "/usr/lib/llvm-19/include", "llvm/Support/*.h", ["-I/usr/lib/llvm-19/include"]),
    ("nlohmann", "/usr/include", "nlohmann/*.hpp", []),
    ("Eigen", "/usr/include/eigen3", "Eigen/*", ["-I/usr/include/eigen3"]),
    ("Boost", "/usr/include", "boost/*.hpp", []),
]


def corpus():
    tus = []
    for label, root, pattern, flags in HEADER_SETS:
        for p in sorted(glob.glob(os.path.join(root, pattern))):
            if os.path.isfile(p):
                rel = os.path.relpath(p, root)
                tus.append((f"{label} <{rel}>", "#include <%s>\n" % rel, flags))
    gt = "/usr/src/googletest/googletest"
    for p in sorted(glob.glob(os.path.join(gt, "src", "gtest*.cc"))):
        if not p.endswith("gtest-all.cc"):
            tus.append((f"googletest {os.path.basename(p)}", open(p).read(),
                        ["-I" + gt, "-I" + os.path.join(gt, "include")]))
    rt = os.path.join(ROOT, "runtime")
    for p in sorted(glob.glob(os.path.join(rt, "src", "*.cpp"))):
        tus.append((f"kiln runtime {os.path.basename(p)}", open(p).read(),
                    ["-I" + os.path.join(rt, "include"), "-I" + os.path.join(rt, "src"),
                     "-fopenmp"]))
    return tus


def compile_pair(cxx, plugin, work, index, name, text, flags):
    src = os.path.join(work, "tu%d.cpp" % index)
    with open(src, "w") as f:
        f.write(text)
    base = [cxx, "-std=c++20", "-O1", "-g0", "-c", src] + flags
    out = {}
    for side, extra in (("eager", []), ("plugin", ["-fplugin=" + plugin])):
        obj = os.path.join(work, "tu%d.%s.o" % (index, side))
        t0 = time.time()
        p = subprocess.run(base + extra + ["-o", obj], capture_output=True, text=True)
        out[side] = (p.returncode, p.stderr.replace(plugin, ""), time.time() - t0, obj)
    (erc, eerr, et, eobj), (prc, perr, pt, pobj) = out["eager"], out["plugin"]
    if erc != 0 and prc == erc and perr == eerr:
        return name, "skipped", "does not compile on its own", et, pt
    if prc != erc:
        kind = "CRASH" if prc < 0 or "Stack dump" in perr else "DIFFERENT EXIT"
        return name, kind, perr[-1500:], et, pt
    if perr != eerr:
        return name, "NEW DIAGNOSTIC", perr[-1500:], et, pt
    if open(eobj, "rb").read() != open(pobj, "rb").read():
        return name, "OBJECT DIFFERS", "", et, pt
    return name, "same", "", et, pt


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=0, help="this many TUs, a fixed sample")
    ap.add_argument("--build", default=os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--cxx", default=shutil.which("clang++-19") or "clang++")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    plugin = os.path.join(args.build, "lib", "libkiln.so")
    tus = corpus()
    if args.sample and args.sample < len(tus):
        tus = random.Random(19).sample(tus, args.sample)
    work = tempfile.mkdtemp(prefix="kiln-corpus-")
    t0 = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(compile_pair, args.cxx, plugin, work, i, n, t, f)
                for i, (n, t, f) in enumerate(tus)]
        for f in concurrent.futures.as_completed(futs):
            results.append(f.result())
    shutil.rmtree(work, ignore_errors=True)
    bad = [r for r in results if r[1] not in ("same", "skipped")]
    same = [r for r in results if r[1] == "same"]
    skipped = len(results) - len(same) - len(bad)
    for name, kind, detail, _, _ in sorted(bad):
        print("%s: %s\n%s" % (kind, name, detail))
    et = sum(r[3] for r in same)
    pt = sum(r[4] for r in same)
    groups = {}
    for r in same:
        g = r[0].split(" ")[0]
        groups[g] = groups.get(g, 0) + 1
    print("corpus-check: %d TUs compiled with and without the plugin (%s); "
          "%d skipped (do not compile on their own); %d differ; "
          "compile time with/without %.3f (%.0f s / %.0f s); wall %.0f s" %
          (len(same), ", ".join("%s %d" % kv for kv in sorted(groups.items())), skipped,
           len(bad), pt / et if et else 0, pt, et, time.time() - t0))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
