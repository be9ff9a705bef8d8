"""The first call in a fresh process: wall time from process start to the
first result of sin(x) + cos(y) (2^20 floats), compiled minus eager, for
Kiln (ahead of time: nothing left to compile, only the module to load) and
for torch.compile (tracing and compiling at the first call). Median of 5."""
import argparse
import os
import tempfile
import json
import statistics
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--kiln", required=True)
ap.add_argument("--torch", required=True)
ap.add_argument("--runs", type=int, default=5)
a = ap.parse_args()


def wall(cmd, env=None):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t


def median_of(cmd, fresh_cache=False):
    times = []
    for _ in range(a.runs):
        env = None
        if fresh_cache:  # torch.compile's on-disk caches start empty
            d = tempfile.mkdtemp()
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=d, TRITON_CACHE_DIR=d + "/triton")
        times.append(wall(cmd, env))
    return statistics.median(times)


k_c = median_of([a.kiln, "--first-call"])
k_e = median_of([a.kiln, "--first-call", "--eager"])
print(json.dumps({"first_call": "kiln", "compiled_s": k_c, "eager_s": k_e}), flush=True)
t_cold = median_of([sys.executable, a.torch, "--first-call"], fresh_cache=True)
t_warm = median_of([sys.executable, a.torch, "--first-call"])
t_e = median_of([sys.executable, a.torch, "--first-call", "--eager"])
print(json.dumps({"first_call": "torch", "compiled_s": t_cold, "compiled_warm_cache_s": t_warm,
                  "eager_s": t_e}), flush=True)
