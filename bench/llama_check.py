"""PyTorch against Kiln on identical numbers: reads what
examples/llama/llama_block --write DIR wrote (the block's bf16 weights, its
inputs and Kiln's compiled output, for prefill and decode), runs the same
block in PyTorch (bench/torch_bench.py's llama_prefill/llama_decode: eager
bf16, and float64 as the reference) and prints how far each is from the
float64 result. Exit status 1 when Kiln's output is not within bf16
tolerance of PyTorch's, or further from float64 than twice PyTorch's error.

    python3 bench/llama_check.py DIR [--heads 8 --kv-heads 2 --eps 1e-5]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_bench import llama_decode, llama_prefill  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
          "f64": torch.float64}


def load(dir_, name, dev):
    meta = json.load(open(os.path.join(dir_, name + ".json")))
    raw = open(os.path.join(dir_, meta["file"]), "rb").read()
    out = {}
    for t in meta["tensors"]:
        dt = DTYPES[t["dtype"]]
        n = 1
        for s in t["shape"]:
            n *= s
        size = n * torch.empty((), dtype=dt).element_size()
        buf = bytearray(raw[t["offset"]:t["offset"] + size])
        out[t["name"]] = torch.frombuffer(buf, dtype=dt).view(t["shape"]).to(dev) \
            if n else torch.empty(t["shape"], dtype=dt, device=dev)
    return out


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--eps", type=float, default=1e-5)
    a = ap.parse_args()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    ok = True
    for what in ("prefill", "decode"):
        t = load(a.dir, "llama_" + what, dev)
        names = ("attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_gate", "w_up", "w_down")

        def weights(cast):
            w = {n: cast(t[n]) for n in names}
            w.update(heads=a.heads, kv_heads=a.kv_heads, eps=a.eps)
            return w

        def call(w, cast):
            if what == "prefill":
                return llama_prefill(cast(t["x"]), cast(t["cos"]), cast(t["sin"]), w)
            return llama_decode(cast(t["x"]), cast(t["k_cache"]), cast(t["v_cache"]),
                                cast(t["cos"]), cast(t["sin"]), w)

        same = lambda x: x  # noqa: E731
        wide = lambda x: x.double()  # noqa: E731
        with torch.no_grad():
            torch_out = call(weights(same), same)
            ref = call(weights(wide), wide)
        kiln_out = t["kiln_out"]
        kt, tr, kr = rel(kiln_out, torch_out), rel(torch_out, ref), rel(kiln_out, ref)
        good = kt < 3e-2 and kr <= 2 * tr + 1e-2
        ok &= good
        print(f"{what:8s} {tuple(kiln_out.shape)}: Kiln vs PyTorch bf16 {kt:.2e}; "
              f"from float64: Kiln {kr:.2e}, PyTorch {tr:.2e}  {'ok' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
