"""The plugin's added compile time for the examples (and
bench/three_functions.cpp): clang++-19 -c with the
Kiln plugin (cold: empty nvcc cache and PCH cache; warm: everything cached)
against the same command without the plugin. Median of three runs each,
wall clock. Writes JSON."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--sources", nargs="*",
                default=[os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                      "three_functions.cpp")],
                help="more files to measure beside the examples")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cfg = os.path.join(a.build, "bin", "kiln-config")
plugin = subprocess.check_output([cfg, "--plugin"], text=True).strip()
cxxflags = subprocess.check_output([cfg, "--cxxflags"], text=True).split()
clang = shutil.which("clang++-19") or "clang++"


def compile_time(src, with_plugin, cache):
    env = dict(os.environ, KILN_CACHE_DIR=cache)
    cmd = [clang, "-O2", *cxxflags, "-c", src, "-o", os.devnull]
    if with_plugin:
        cmd.insert(1, f"-fplugin={plugin}")
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    return time.perf_counter() - t


rows = []
examples = [os.path.join(root, "examples", ex + ".cpp")
            for ex in ["sin_plus_cos", "sin2_cos2", "seed_model", "gelu_tanh"]]
for src in examples + [os.path.abspath(s) for s in a.sources]:
    ex = os.path.splitext(os.path.basename(src))[0]
    plain, cold, warm = [], [], []
    for _ in range(a.runs):
        plain.append(compile_time(src, False, "/nonexistent"))
        with tempfile.TemporaryDirectory() as cache:
            cold.append(compile_time(src, True, cache))
            warm.append(compile_time(src, True, cache))
    rows.append({"example": ex, "plain_s": statistics.median(plain),
                 "plugin_cold_s": statistics.median(cold),
                 "plugin_warm_s": statistics.median(warm)})
    print(json.dumps(rows[-1]), flush=True)
with open(a.out, "w") as f:
    json.dump({"machine": f"{os.cpu_count()} cores, {os.uname().machine}",
               "rows": rows}, f, indent=1)
