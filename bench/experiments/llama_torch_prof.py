"""torch.compile's LLaMA block kernels one by one, for Nsight Compute: the
block of bench/torch_bench.py at LLaMA-7B's widths, compiled (default mode
or --mode), warmed up, then --calls calls between
torch.cuda.profiler.start() and stop(), so that
  ncu --profile-from-start off --clock-control none --cache-control none \
      --metrics gpu__time_duration.sum --csv python3 llama_torch_prof.py decode
lists exactly those calls' kernels (llama_decode_prof.cpp does the same for
Kiln's). Also prints the kernel time of a call (20 back-to-back calls per
event pair, median of --reps) and its single-call latency (one call from
an idle stream). `cached` is the decode step over static caches updated in
place (torch_bench.llama_decode_cached)."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_bench as tb  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("which", choices=["prefill", "decode", "cached"])
ap.add_argument("--calls", type=int, default=3)
ap.add_argument("--reps", type=int, default=30)
ap.add_argument("--mode", default=None)
a = ap.parse_args()
dev = "cuda"
torch.manual_seed(0)
C, H, M = 4096, 32, 11008
w = tb.llama_weights(C, H, H, M, dev)
if a.which == "prefill":
    cos, sin = tb.rope_tables(C, H, 0, 2048, dev)
    args = (torch.randn(1, 2048, C, device=dev).bfloat16(), cos, sin, w)
    fn = tb.llama_prefill
elif a.which == "cached":
    # Static caches of 4096 positions, the first 2048 filled, written in
    # place at 2048 (tb.llama_decode_cached).
    dcos, dsin = tb.rope_tables(C, H, 2048, 1, dev)
    kc = torch.zeros(16, H, 4096, C // H, device=dev).bfloat16()
    vc = torch.zeros(16, H, 4096, C // H, device=dev).bfloat16()
    kc[:, :, :2048] = torch.randn(16, H, 2048, C // H, device=dev).bfloat16()
    vc[:, :, :2048] = torch.randn(16, H, 2048, C // H, device=dev).bfloat16()
    args = (torch.randn(16, 1, C, device=dev).bfloat16(), kc, vc, 2048, dcos, dsin, w)
    fn = tb.llama_decode_cached
else:
    dcos, dsin = tb.rope_tables(C, H, 2048, 1, dev)
    args = (torch.randn(16, 1, C, device=dev).bfloat16(),
            torch.randn(16, H, 2048, C // H, device=dev).bfloat16(),
            torch.randn(16, H, 2048, C // H, device=dev).bfloat16(), dcos, dsin, w)
    fn = tb.llama_decode
cf = torch.compile(fn, mode=a.mode)
for _ in range(10):
    cf(*args)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(a.calls):
    cf(*args)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
kt = tb.median(tb.time_calls(lambda: cf(*args), 3, a.reps, 20))
one = tb.median(tb.time_calls(lambda: cf(*args), 3, a.reps))
print(f"{a.which}: torch.compile ({a.mode or 'default'}) kernel time {kt:.4f} ms, "
      f"single call {one:.4f} ms")
