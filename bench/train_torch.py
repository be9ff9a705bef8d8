#!/usr/bin/env python3
"""PyTorch's side of bench/train_bench.cpp: the same training steps (a call
and backward() on its result, the leaves' gradients set to None before), in
eager PyTorch and torch.compile (each mode given), timed the same two ways:
kernel time (20 steps between one pair of CUDA events, / 20) and single-step
latency. Also the bytes torch.compile's forward saves for backward (its
saved tensors, from torch.autograd.graph.saved_tensors_hooks).
Prints one JSON object per line."""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def ln_gelu_res(x, w, b):
    return x + F.gelu(F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
                      approximate="tanh")


def xent(logits, onehot):
    picked = (logits * onehot).sum(-1)
    return (torch.logsumexp(logits, -1) - picked).mean()


def mlp_block(x, w1, b1, w2, b2):
    return x + F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2)


def time_steps(step, reps, calls):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            step()
        b.record()
        b.synchronize()
        ms.append(a.elapsed_time(b) / calls)
    return statistics.median(ms)


def saved_bytes(fn, inputs):
    total = [0]
    seen = set()

    def pack(t):
        key = (t.data_ptr(), t.numel(), t.dtype)
        if key not in seen:
            seen.add(key)
            total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*inputs)
    return total[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--modes", default="default,max-autotune-no-cudagraphs")
    ap.add_argument("--only", default="", help="run the workloads whose name contains this")
    args = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    cases = []
    N, C = 16384, 4096
    cases.append(("layer norm + tanh-GELU + residual, fwd+bwd",
                  "16384x4096 f32", ln_gelu_res,
                  [torch.randn(N, C, device=dev), torch.randn(C, device=dev),
                   torch.randn(C, device=dev)], [True, True, True], False))
    N, V = 16384, 32000
    hot = torch.zeros(N, V, device=dev, dtype=torch.bfloat16)
    hot[torch.arange(N, device=dev), (torch.arange(N, device=dev) * 7919) % V] = 1
    cases.append(("softmax cross-entropy (one-hot), fwd+bwd", "16384x32000 bf16",
                  xent, [torch.randn(N, V, device=dev, dtype=torch.bfloat16), hot],
                  [True, False], True))
    N, C, H = 8192, 4096, 16384
    bf = torch.bfloat16
    cases.append(("MLP block 4096-16384-4096 + residual, fwd+bwd", "8192 rows bf16",
                  mlp_block,
                  [torch.randn(N, C, device=dev, dtype=bf),
                   torch.randn(H, C, device=dev, dtype=bf) * 0.02,
                   torch.randn(H, device=dev, dtype=bf) * 0.02,
                   torch.randn(C, H, device=dev, dtype=bf) * 0.02,
                   torch.randn(C, device=dev, dtype=bf) * 0.02],
                  [True] * 5, False))
    for name, shape, fn, inputs, grad, scalar in cases:
        if args.only not in name:
            continue
        rec = {"workload": name, "shape": shape}
        leaves = [t.clone().requires_grad_(g) for t, g in zip(inputs, grad)]
        with torch.no_grad():
            y = fn(*inputs)
        probe = None if scalar else torch.randn_like(y)
        variants = [("eager", fn)]
        for m in args.modes.split(","):
            if m:
                variants.append((m, torch.compile(fn, mode=None if m == "default" else m)))
        for label, f in variants:
            def step(f=f):
                for t, g in zip(leaves, grad):
                    if g:
                        t.grad = None
                out = f(*leaves)
                out.backward(probe)
            rec[label + "_kernel_ms"] = time_steps(step, args.reps, 20)
            rec[label + "_single_ms"] = time_steps(step, args.reps, 1)
            try:
                rec[label + "_saved_bytes"] = saved_bytes(f, leaves)
            except Exception as e:  # hooks a mode does not take
                rec[label + "_saved_bytes"] = "n/a: " + type(e).__name__
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
