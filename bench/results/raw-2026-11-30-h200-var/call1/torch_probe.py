"""Device probe, torch.compile's side of bench/experiments/long_rows.cpp:
the same workloads, shapes and timing (kernel time: 20 back-to-back calls
per event pair / 20, median of 30; single call: one call per event pair).
  torch_probe.py [--calls N] [--modes default,max-autotune-no-cudagraphs] [NAME...]
With --calls N each compiled function is called N times, then once more
between cudaProfilerStart and Stop (for TORCH_LOGS=output_code and ncu
--profile-from-start off)."""
import argparse
import json
import statistics
import torch
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--calls", type=int, default=0)
ap.add_argument("--modes", default="default")
ap.add_argument("names", nargs="*")
a = ap.parse_args()
dev = "cuda"


def timed(fn, args, per):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    out = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(per):
            fn(*args)
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) / per)
    return statistics.median(out)


def work():
    x = torch.randn(1 << 26, device=dev)
    yield "where(sum(x)>t,2x,x) 2^26", (lambda x: torch.where(x.sum() > 0.0, x * 2, x)), (x,)
    yield "var(x) 2^26", (lambda x: torch.var(x)), (x,)
    del x
    T = 1024
    s = torch.randn(8, 16, T, T, device=dev).bfloat16()
    causal = torch.ones(T, T, device=dev, dtype=torch.bool).tril()
    yield "masked softmax 8x16x1024x1024 bf16", (lambda s, m: torch.softmax(torch.where(m, s * 0.125, -1e9), -1)), (s, causal)
    del s
    for rows, cols in [(32768, 1024), (16384, 4096), (43690, 768), (8192, 4096), (4096, 8192), (262144, 128)]:
        x = torch.randn(rows, cols, device=dev)
        w, b = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
        xh, wh = x.bfloat16(), w.bfloat16()
        s = f"{rows}x{cols}"
        yield f"softmax {s} f32", (lambda x: torch.softmax(x, -1)), (x,)
        yield f"log_softmax {s} f32", (lambda x: torch.log_softmax(x, -1)), (x,)
        yield f"layer norm {s} f32", (lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)), (x, w, b)
        yield f"RMS norm {s} bf16", (lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)), (xh, wh)


for name, fn, args in work():
    if a.names and not any(n in name for n in a.names):
        continue
    for mode in a.modes.split(","):
        torch._dynamo.reset()
        c = torch.compile(fn, mode=None if mode == "default" else mode)
        if a.calls:
            for _ in range(a.calls):
                c(*args)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()  # ncu --profile-from-start off: this call only
            c(*args)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            print("ran", name, mode, flush=True)
            continue
        kt = timed(c, args, 20)
        one = timed(c, args, 1)
        print(json.dumps({"workload": name, "mode": mode, "kt_ms": round(kt, 5), "ms": round(one, 5)}), flush=True)
