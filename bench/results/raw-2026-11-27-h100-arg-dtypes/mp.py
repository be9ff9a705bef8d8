import torch, torch.nn.functional as F
R, C = 16384, 4096
x = torch.randn(R, C, device="cuda").bfloat16(); wb = torch.randn(C, device="cuda").bfloat16(); wf = torch.randn(C, device="cuda")
p = torch.randn(R * C, device="cuda"); g = torch.randn(R * C, device="cuda").bfloat16()
def rms_mixed(x, w):
    xf = x.float(); r = xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6); return r.to(x.dtype) * w
def rms_f32_weight(x, w):
    xf = x.float(); return (xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6) * w).to(x.dtype)
def sgd(p, g, lr):
    p.sub_(lr * g)
def t(fn, calls):
    for _ in range(5): fn()
    ms = []
    for _ in range(30):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls): fn()
        b.record(); b.synchronize(); ms.append(a.elapsed_time(b) / calls)
    ms.sort(); return ms[len(ms) // 2]
for name, f, args in [("rms_norm bf16, F.rms_norm eager", lambda x, w: F.rms_norm(x, (C,), w, 1e-6), (x, wb)),
                      ("rms_mixed bf16 x, bf16 w", rms_mixed, (x, wb)),
                      ("rms_f32_weight bf16 x, f32 w", rms_f32_weight, (x, wf)),
                      ("sgd f32 p, bf16 g, in place", sgd, (p, g, 1e-9))]:
    c = torch.compile(f)
    fn = lambda: c(*args)
    print(f"| torch.compile {name} | {t(fn, 20):.4f} | {t(fn, 1):.4f} |")
