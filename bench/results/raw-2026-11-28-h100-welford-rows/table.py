import json, sys
def load(p):
    d, bw = {}, None
    for line in open(p):
        try: o = json.loads(line)
        except Exception: continue
        if "workload" in o: d[o["workload"]] = o
        elif "bandwidth" in o: bw = o["bandwidth"]
    return d, bw
new, bw = load(sys.argv[1]); old, _ = load(sys.argv[2]); tor, _ = load(sys.argv[3])
def kt(d, w):
    v = d.get(w, {}).get("compiled_kt_ms")
    return v if isinstance(v, (int, float)) else None
def f(v): return "-" if v is None else f"{v:.4f}"
print("| op | shape | floor | Kiln before | Kiln now | torch.compile | torch.compile / Kiln now | check |")
print("|---|---|---|---|---|---|---|---|")
for w, o in new.items():
    if not w.startswith("sweep"): continue
    op, shape = w[6:].rsplit(" ", 1)
    rows = int(shape.split("x")[0])
    floor = o.get("floor_ms") or (o.get("bytes", 0) / bw * 1e3 if bw and o.get("bytes") else None)
    n, b, t = kt(new, w), kt(old, w), kt(tor, w)
    pct = f" ({100*floor/n:.0f} %)" if floor and n else ""
    ratio = f"{t/n:.2f}x" if t and n else "-"
    print(f"| {op} | {shape} {o.get('shape','').split()[-1]} | {f(floor)} | {f(b)} | {f(n)}{pct} | {f(t)} | {ratio} | {'ok' if o.get('ok') else 'MISMATCH'} |")
