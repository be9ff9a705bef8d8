"""Which float division and exp torch.compile's softmax / RMS norm kernels
use: compiles both on the GPU into a fresh Triton cache and counts the
relevant PTX instructions in each generated kernel. Experiment only."""
import glob, os, re, sys, tempfile
cache = tempfile.mkdtemp()
os.environ["TRITON_CACHE_DIR"] = cache
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
import torch

def rms(x, w):
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

x = torch.randn(32768, 1024, device="cuda")
torch.compile(lambda t: torch.softmax(t, -1))(x)
xb = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
wb = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
torch.compile(torch.nn.functional.rms_norm)(xb, (4096,), wb, 1e-6)
pats = ["div.rn.f32", "div.full.f32", "div.approx.f32", "rcp.rn.f32", "rcp.approx", "ex2.approx", "rsqrt.approx", "sqrt.rn"]
for f in sorted(glob.glob(cache + "/**/*.ptx", recursive=True)):
    s = open(f).read()
    name = re.search(r"\.entry (\w+)", s).group(1)
    print(name, {p: s.count(p) for p in pats if s.count(p)})
