"""PyTorch's side of the benchmark: the same workloads, shapes and dtypes
as bench/kiln_bench.cpp, in PyTorch eager and torch.compile, timed the same
way (CUDA events, median of many batches after warm-up), two figures each:
kernel time (20 back-to-back calls per event pair, / 20, as Triton's
do_bench sees it) and single-call latency (one call per event pair).
torch.compile in each mode of --modes (default, max-autotune, ...).
Prints one JSON object per line; bench/report.py makes the table.

    python3 torch_bench.py [--reps N] [--modes default,max-autotune] [--only NAME]
    python3 torch_bench.py --first-call [--eager]
    python3 torch_bench.py --sweep   (row ops over kiln_bench --sweep's shapes)
"""
import argparse
import json
import math
import sys
import time

T0 = time.perf_counter()
import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def sin_plus_cos(x, y):
    return torch.sin(x) + torch.cos(y)


def sin2_cos2(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


def seed_model(c, x):
    return (c + x) * (c - x)


def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + torch.tanh(inner))


def sin_cos_loop(x):
    for _ in range(3):
        x = torch.sin(x) + torch.cos(x)
    return x


def where_sum(x, t: float):
    return torch.where(x.sum() > t, x * 2, x)


def var_all(x):
    return torch.var(x)


def softmax_rows(x):
    return torch.softmax(x, -1)


def log_softmax_rows(x):
    return torch.log_softmax(x, -1)


def layer_norm_rows(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def adam_step(p, m, v, g, lr: float, b1: float, b2: float, eps: float, step: int):
    m.mul_(b1).add_(g * (1 - b1))
    v.mul_(b2).add_(g * g * (1 - b2))
    bc1 = 1 - b1 ** step
    bc2 = 1 - b2 ** step
    p.sub_((m / bc1) / (torch.sqrt(v / bc2) + eps) * lr)
    return p


def masked_softmax(s, mask, scale: float):
    return torch.softmax(torch.where(mask, s * scale, -1e9), -1)


def rms_norm_rows(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, 1e-6)


def rms_norm_mixed(x, w):
    xf = x.float()
    r = xf * torch.rsqrt(torch.mean(xf * xf, -1, keepdim=True) + 1e-6)
    return r.to(x.dtype) * w


def softmax_composed(x):
    e = torch.exp(x - torch.amax(x, -1, keepdim=True))
    return e / torch.sum(e, -1, keepdim=True)


def bias_heads_softmax(x, b, H: int):
    B, T, C = x.shape
    return torch.softmax((x + b).view(B, T, H, -1).transpose(1, 2), -1)


def lse_loss(x):
    return (torch.logsumexp(x, -1) - x.mean(-1)).mean()


def layer_norm_composed(x, w, b):
    mu = torch.mean(x, -1, keepdim=True)
    d = x - mu
    var = torch.mean(d * d, -1, keepdim=True)
    return d * torch.rsqrt(var + 1e-5) * w + b


def linear_bias_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b), approximate="tanh")


def matmul_plain(a, b):
    return a @ b


def norm_gelu_matmul(x, g, b, w):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), g, b, 1e-5), approximate="tanh") @ w


def mlp_block(x, w1, b1, w2, b2):
    return x + F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2, b2)


def self_attention(x, wqkv, wo, H):
    B, T, C = x.shape
    q, k, v = F.linear(x, wqkv).split(C, dim=-1)
    q = q.view(B, T, H, -1).transpose(1, 2)
    k = k.view(B, T, H, -1).transpose(1, 2)
    v = v.view(B, T, H, -1).transpose(1, 2)
    p = torch.softmax((q @ k.transpose(-2, -1)) * 0.125, dim=-1)
    return F.linear((p @ v).transpose(1, 2).reshape(B, T, C), wo)


def attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def attention_causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


# The LLaMA-style decoder block of examples/llama/llama_block.h, as Hugging
# Face's LlamaDecoderLayer computes it (bench/llama_check.py checks the two
# agree on identical weights).
def rotate_half(x):
    d = x.shape[-1]
    return torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)


def llama_attention_mlp(x, q, k, v, w, causal):
    B, T, C = x.shape
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                       enable_gqa=k.shape[1] != q.shape[1])
    r = x + F.linear(o.transpose(1, 2).reshape(B, T, C), w["wo"])
    m = F.rms_norm(r, (C,), w["mlp_norm"], w["eps"])
    return r + F.linear(F.silu(F.linear(m, w["w_gate"])) * F.linear(m, w["w_up"]), w["w_down"])


def llama_qkv(x, cos, sin, w):
    B, T, C = x.shape
    H, Hkv = w["heads"], w["kv_heads"]
    D = C // H
    h = F.rms_norm(x, (C,), w["attn_norm"], w["eps"])
    q = F.linear(h, w["wq"]).view(B, T, H, D).transpose(1, 2)
    k = F.linear(h, w["wk"]).view(B, T, Hkv, D).transpose(1, 2)
    v = F.linear(h, w["wv"]).view(B, T, Hkv, D).transpose(1, 2)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    return q, k, v


def llama_prefill(x, cos, sin, w):
    q, k, v = llama_qkv(x, cos, sin, w)
    return llama_attention_mlp(x, q, k, v, w, True)


def llama_decode(x, k_cache, v_cache, cos, sin, w):
    q, k, v = llama_qkv(x, cos, sin, w)
    k = torch.cat((k_cache, k), dim=2)
    v = torch.cat((v_cache, v), dim=2)
    return llama_attention_mlp(x, q, k, v, w, False)


def llama_decode_cached(x, k_cache, v_cache, S, cos, sin, w):
    """Decode over a static cache updated in place (gpt-fast's form): the
    new key and value written at position S, attention over 0..S."""
    q, k, v = llama_qkv(x, cos, sin, w)
    k_cache[:, :, S:S + 1].copy_(k)
    v_cache[:, :, S:S + 1].copy_(v)
    return llama_attention_mlp(x, q, k_cache[:, :, :S + 1], v_cache[:, :, :S + 1], w, False)


def llama_weights(C, H, Hkv, M, dev, dt=torch.bfloat16):
    D = C // H
    def lin(o, i):
        return (torch.randn(o, i, device=dev) / math.sqrt(i)).to(dt)
    return {"attn_norm": (torch.randn(C, device=dev) * 0.1 + 1).to(dt),
            "wq": lin(H * D, C), "wk": lin(Hkv * D, C), "wv": lin(Hkv * D, C),
            "wo": lin(C, H * D), "mlp_norm": (torch.randn(C, device=dev) * 0.1 + 1).to(dt),
            "w_gate": lin(M, C), "w_up": lin(M, C), "w_down": lin(C, M),
            "heads": H, "kv_heads": Hkv, "eps": 1e-5}


def rope_tables(C, H, start, n, dev, dt=torch.bfloat16, theta=10000.0):
    D = C // H
    inv = theta ** (-torch.arange(0, D, 2, dtype=torch.float64, device=dev) / D)
    pos = torch.arange(start, start + n, dtype=torch.float64, device=dev)
    a = torch.outer(pos, inv)
    a = torch.cat((a, a), dim=-1)
    return a.cos().to(dt), a.sin().to(dt)


def layer_norm_gelu(x, w, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), approximate="tanh")


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def time_calls(fn, warmup, reps, calls=1):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        out.append(start.elapsed_time(stop) / calls)
    return out


def rel_diff(a, b):
    a, b = a.double(), b.double()
    den = b.abs().max().item()
    num = (a - b).abs().max().item()
    return num / den if den > 0 else num


BACK_TO_BACK = 20
OPTS = argparse.Namespace(modes=["default"], only=None)


def count_kernels(call):
    """CUDA kernels (and copies) one call launches, as the profiler sees them."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        call()
        torch.cuda.synchronize()
    return sum(1 for e in p.events()
               if e.device_type == torch.autograd.DeviceType.CUDA)


def run(name, fn, args, reps, fresh=None, kernels=False):
    """fresh: for workloads that update their arguments, the initial state
    as new tensors, for the checked calls (the timed ones use args).
    kernels: also count the kernels one call launches (the profiler)."""
    if OPTS.only and OPTS.only not in name:
        return
    rec = {"workload": name, "impl": "torch"}
    checked = (lambda f: f(*fresh())) if fresh else (lambda f: f(*args))
    try:
        eager = checked(fn)
        call = lambda: fn(*args)
        if "default" in OPTS.modes:  # other modes' runs add to this one's record
            rec["eager_ms"] = median(time_calls(call, 3, reps))
            rec["eager_kt_ms"] = median(time_calls(call, 3, reps, BACK_TO_BACK))
        for mode in OPTS.modes:
            key = "compiled" if mode == "default" else "compiled_" + mode.replace("-", "_")
            torch._dynamo.reset()
            compiled_fn = torch.compile(fn, mode=None if mode == "default" else mode)
            out = checked(compiled_fn)
            rec[key + "_rel_diff"] = rel_diff(out, eager)
            ccall = lambda: compiled_fn(*args)
            rec[key + "_ms"] = median(time_calls(ccall, 3, reps))
            rec[key + "_kt_ms"] = median(time_calls(ccall, 3, reps, BACK_TO_BACK))
            if kernels:
                rec[key + "_kernels"] = count_kernels(ccall)
    except Exception as e:  # report, never invent a number
        rec["error"] = f"{type(e).__name__}: {e}"[:300]
    print(json.dumps(rec), flush=True)


def run_small(name, fn, args, reps):
    """Microseconds per call: kernel time (200 back-to-back calls per event
    pair) and single-call latency (one call per pair), eager and in each
    torch.compile mode of --modes."""
    # Small calls run in default mode and in reduce-overhead (CUDA graphs),
    # the mode made for them.
    modes = [m for m in OPTS.modes if m in ("default", "reduce-overhead")]
    if (OPTS.only and OPTS.only not in name) or not modes:
        return
    rec = {"workload": name, "impl": "torch", "small": True}
    try:
        call = lambda: fn(*args)
        rec["eager_us"] = median(time_calls(call, 100, reps, 200)) * 1e3
        rec["eager_single_us"] = median(time_calls(call, 100, reps)) * 1e3
        rec["eager_kernels"] = count_kernels(call)
        eager = fn(*args).clone()
        for mode in modes:
            key = "compiled" if mode == "default" else "compiled_" + mode.replace("-", "_")
            torch._dynamo.reset()
            compiled_fn = torch.compile(fn, mode=None if mode == "default" else mode)
            ccall = lambda: compiled_fn(*args)
            for _ in range(3):  # reduce-overhead records its graph after warm-up calls
                out = ccall()
            rec[key + "_rel_diff"] = rel_diff(out, eager)
            rec[key + "_us"] = median(time_calls(ccall, 100, reps, 200)) * 1e3
            rec[key + "_single_us"] = median(time_calls(ccall, 100, reps)) * 1e3
            if mode == "default":
                rec[key + "_kernels"] = count_kernels(ccall)
    except Exception as e:
        rec["error"] = f"{type(e).__name__}: {e}"[:300]
    print(json.dumps(rec), flush=True)


def small_chain(x, g, b):
    """bench/workloads.h's small_chain: layer norm, 8 pointwise ops, softmax."""
    h = F.layer_norm(x, (x.shape[-1],), g, b, 1e-5)
    a = F.gelu(h * 1.702, approximate="tanh") + 0.1 * torch.sin(h)
    z = a * torch.sigmoid(h) - 0.5 * torch.tanh(a)
    return torch.softmax(z, -1)


def small_model(x, g, b, w1, w2):
    """bench/workloads.h's small_model: two blocks of layer norm and a
    1024 -> 64 -> 1024 MLP with a residual, then softmax and column stats."""
    C = x.shape[-1]
    h = F.layer_norm(x, (C,), g, b, 1e-5)
    o = F.linear(F.gelu(F.linear(h, w1), approximate="tanh"), w2) + x
    h2 = F.layer_norm(o, (C,), g, b, 1e-5)
    o2 = F.linear(F.gelu(F.linear(h2, w1), approximate="tanh"), w2) + o
    s = torch.softmax(o2 * 0.5, -1)
    return s - s.mean(0, keepdim=True) + o2.amax(0, keepdim=True)


def sweep(dev, reps):
    """bench/kiln_bench.cpp's sweep(): rows of 16 to 32000 columns, 256
    rows and 2^25 elements. Each shape is a fresh torch.compile (run()
    resets Dynamo), so no shape gets a dynamic-shape kernel."""
    for cols in (16, 32, 64, 128, 768, 1024, 4096, 8192, 32000):
        for rows in (256, (1 << 25) // cols):
            x = torch.randn(rows, cols, device=dev)
            w, b = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
            run(f"sweep softmax {rows}x{cols}", softmax_rows, (x,), reps)
            run(f"sweep layer norm {rows}x{cols}", layer_norm_rows, (x, w, b), reps)
            run(f"sweep RMS norm {rows}x{cols}", rms_norm_rows,
                (x.bfloat16(), w.bfloat16()), reps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--first-call", action="store_true")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--modes", default="default",
                    help="torch.compile modes, comma-separated (default, max-autotune, ...)")
    ap.add_argument("--only", help="only workloads whose name contains this")
    ap.add_argument("--sweep", action="store_true",
                    help="row ops over the shapes of kiln_bench --sweep only")
    a = ap.parse_args()
    OPTS.modes = a.modes.split(",")
    OPTS.only = a.only
    dev = "cuda"
    if a.first_call:
        # Process start to the first result of sin(x) + cos(y) on 2^20 floats.
        x = torch.randn(1 << 20, device=dev)
        y = torch.randn(1 << 20, device=dev)
        f = sin_plus_cos if a.eager else torch.compile(sin_plus_cos)
        f(x, y)
        torch.cuda.synchronize()
        print(json.dumps({"first_call": "eager" if a.eager else "compiled",
                          "in_process_s": time.perf_counter() - T0}))
        return
    torch.manual_seed(0)
    if a.sweep:
        sweep(dev, a.reps)
        return
    n = 1 << 26
    x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
    reps = a.reps
    run("sin(x)+cos(y)", sin_plus_cos, (x, y), reps)
    run("sin^2x+cos^2x", sin2_cos2, (x,), reps)
    run("seed (c+x)(c-x)", seed_model, (y, x), reps)
    run("tanh-GELU", gelu_tanh, (x,), reps)
    run("3x: x=sin x+cos x", sin_cos_loop, (x,), reps)
    run("where(sum(x)>t,2x,x)", where_sum, (x, 0.0), reps)
    run("var(x)", var_all, (x,), reps)
    p0, m0 = torch.randn(n, device=dev), torch.randn(n, device=dev) * 0.1
    v0, g = torch.randn(n, device=dev).abs() * 0.01, torch.randn(n, device=dev)
    state = (p0.clone(), m0.clone(), v0.clone())
    hyper = (1e-3, 0.9, 0.999, 1e-8, 10)
    run("Adam step (in place)", adam_step, (*state, g, *hyper), reps,
        fresh=lambda: (p0.clone(), m0.clone(), v0.clone(), g, *hyper))
    del state
    sx = torch.randn(32768, 1024, device=dev)
    run("softmax", softmax_rows, (sx,), reps)
    run("log_softmax", log_softmax_rows, (sx,), reps)
    run("softmax, composed", softmax_composed, (sx,), reps)
    run("logsumexp loss", lse_loss, (sx,), reps)
    hx, hb = torch.randn(8, 1024, 4096, device=dev), torch.randn(4096, device=dev)
    run("bias, head split, softmax", bias_heads_softmax, (hx, hb, 32), reps)
    del hx
    T = 1024
    ms = torch.randn(8, 16, T, T, device=dev).bfloat16()
    causal = torch.ones(T, T, device=dev, dtype=torch.bool).tril()
    run("masked softmax", masked_softmax, (ms, causal, 0.125), reps)
    del ms
    lx = torch.randn(16384, 4096, device=dev)
    lw, lb = torch.randn(4096, device=dev), torch.randn(4096, device=dev)
    run("layer norm", layer_norm_rows, (lx, lw, lb), reps)
    run("layer norm, composed", layer_norm_composed, (lx, lw, lb), reps)
    run("RMS norm", rms_norm_rows, (lx.bfloat16(), lw.bfloat16()), reps)
    run("RMS norm, mixed precision", rms_norm_mixed, (lx.bfloat16(), lw.bfloat16()), reps)
    # Matrix products, the shapes of bench/kiln_bench.cpp; f32 without TF32.
    torch.backends.cuda.matmul.allow_tf32 = False
    M, K = 8192, 4096
    N, H = K, 4 * K
    mx = torch.randn(M, K, device=dev).bfloat16()
    mw = (torch.randn(N, K, device=dev) / math.sqrt(K)).bfloat16()
    mb = torch.randn(N, device=dev).bfloat16()
    run("linear+bias+tanh-GELU", linear_bias_gelu, (mx, mw, mb), reps)
    lg, lbias = torch.randn(K, device=dev).bfloat16(), torch.randn(K, device=dev).bfloat16()
    kw = (torch.randn(K, N, device=dev) / math.sqrt(K)).bfloat16()
    run("layer norm+tanh-GELU+matmul", norm_gelu_matmul, (mx, lg, lbias, kw), reps)
    w1 = (torch.randn(H, K, device=dev) / math.sqrt(K)).bfloat16()
    w2 = (torch.randn(K, H, device=dev) / math.sqrt(H)).bfloat16()
    b1, b2 = torch.randn(H, device=dev).bfloat16(), torch.randn(K, device=dev).bfloat16()
    run("MLP block (+residual)", mlp_block, (mx, w1, b1, w2, b2), reps)
    ax = torch.randn(8, 1024, 1024, device=dev).bfloat16()
    aqkv = (torch.randn(3 * 1024, 1024, device=dev) / math.sqrt(1024)).bfloat16()
    awo = (torch.randn(1024, 1024, device=dev) / math.sqrt(1024)).bfloat16()
    run("self-attention (model code)", self_attention, (ax, aqkv, awo, 16), reps)
    for name, B, H, T, D, dt, causal in (
            ("attention", 16, 8, 1024, 64, torch.bfloat16, False),
            ("attention, causal", 16, 8, 1024, 64, torch.bfloat16, True),
            ("attention f32", 16, 8, 1024, 64, torch.float32, False),
            ("attention, T=4096 D=128", 4, 16, 4096, 128, torch.bfloat16, False),
            ("attention, T=4096 D=128 causal", 4, 16, 4096, 128, torch.bfloat16, True)):
        q, k, v = (torch.randn(B, H, T, D, device=dev).to(dt) for _ in range(3))
        run(name, attention_causal if causal else attention, (q, k, v), reps)
        del q, k, v
    # The LLaMA-style block at LLaMA-7B's widths: prefill 1 x 2048, decode
    # 16 x 1 over a 2048-token cache (bench/kiln_bench.cpp's shapes).
    C, H, M = 4096, 32, 11008
    lw = llama_weights(C, H, H, M, dev)
    lx = torch.randn(1, 2048, C, device=dev).bfloat16()
    cos, sin = rope_tables(C, H, 0, 2048, dev)
    run("LLaMA block prefill", llama_prefill, (lx, cos, sin, lw), reps, kernels=True)
    xd = torch.randn(16, 1, C, device=dev).bfloat16()
    kc = torch.randn(16, H, 2048, C // H, device=dev).bfloat16()
    vc = torch.randn(16, H, 2048, C // H, device=dev).bfloat16()
    dcos, dsin = rope_tables(C, H, 2048, 1, dev)
    run("LLaMA block decode", llama_decode, (xd, kc, vc, dcos, dsin, lw), reps,
        kernels=True)
    del lw, lx, kc, vc
    fa, fb = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
    run("matmul f32", matmul_plain, (fa, fb), reps)
    tx, ty = torch.randn(4096, device=dev), torch.randn(4096, device=dev)
    run_small("small sin+cos", sin_plus_cos, (tx, ty), reps)
    gx = torch.randn(32, 1024, device=dev)
    gw, gb = torch.randn(1024, device=dev), torch.randn(1024, device=dev)
    run_small("small layer norm+GELU", layer_norm_gelu, (gx, gw, gb), reps)
    mg, mb = torch.randn(1024, device=dev), torch.randn(1024, device=dev)
    run_small("small chain", small_chain, (gx, mg, mb), reps)
    m1 = torch.randn(64, 1024, device=dev) / 32
    m2 = torch.randn(1024, 64, device=dev) / 8
    run_small("small model", small_model, (gx, mg, mb, m1, m2), reps)


if __name__ == "__main__":
    main()
