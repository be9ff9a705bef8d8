"""Prints a device call's tables: ncu per kernel (every ncu-*.csv in the
folder) and kernel time per workload, Kiln variants (<variant>-<round>.jsonl)
beside torch.compile (torch.jsonl: default mode, and a column per other mode),
medians over rounds. (raw-2026-11-30-h200-item2/table.py, with the modes.)"""
import csv, glob, json, os, statistics, sys
o = sys.argv[1]
def load(f):
    try: return [json.loads(l) for l in open(f) if l.startswith('{"workload')]
    except FileNotFoundError: return []
for f in sorted(glob.glob(f"{o}/ncu-*.csv")):
    rows = [l for l in open(f).read().splitlines() if l.startswith('"')]
    hdr = None; recs = {}
    for row in csv.reader(rows):
        if row[0] == "ID": hdr = row; continue
        d = dict(zip(hdr, row)); key = (int(d["ID"]), d["Kernel Name"][:50])
        recs.setdefault(key, {})[d["Metric Name"]] = d["Metric Value"].replace(",", "")
    print(f"--- {os.path.basename(f)}: us, dram %, rd MB, wr MB, warps %, regs, block, grid, inst M, L2 hit %")
    for (i, n), m in sorted(recs.items()):
        g = lambda k: m.get(k, "0")
        try:
            print(f"{n:50s} {float(g('gpu__time_duration.sum'))/1e3:7.1f} {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):>6s} "
                  f"{float(g('dram__bytes_read.sum'))/1e6:6.0f} {float(g('dram__bytes_write.sum'))/1e6:6.0f} {g('sm__warps_active.avg.pct_of_peak_sustained_active'):>6s} "
                  f"{g('launch__registers_per_thread'):>4s} {g('launch__block_size'):>5s} {g('launch__grid_size'):>7s} "
                  f"{float(g('smsp__inst_executed.sum'))/1e6:7.2f} {g('lts__t_sector_hit_rate.pct'):>6s}")
        except ValueError:
            print(n, m)
# torch.compile: default mode's figure in the torch column; other modes
# (max-autotune) in a column each.
torch, tmodes = {}, {}
for r in load(f"{o}/torch.jsonl"):
    if r.get("mode", "default") == "default":
        torch[r["workload"]] = r
    else:
        tmodes.setdefault(r["mode"], {})[r["workload"]] = r
runs = {}
for f in glob.glob(f"{o}/*-[0-9].jsonl"):
    v = os.path.basename(f).rsplit("-", 1)[0]
    for r in load(f):
        runs.setdefault(r["workload"], {}).setdefault(v, []).append(r)
vs = sorted({v for w in runs.values() for v in w})
ms = sorted(tmodes)
print(f"{'workload':30s} " + " ".join(f"{v:>9s}" for v in vs) + f" {'torch':>8s}" + "".join(f" {m[:14]:>14s}" for m in ms)
      + "  (kernel time ms, median of rounds; torch/Kiln for base, or for new without base)")
for w in sorted(runs):
    cells = []
    for v in vs:
        rs = runs[w].get(v)
        cells.append(f"{statistics.median(r['kt_ms'] for r in rs):9.4f}{'' if all(r['ok'] for r in rs) else '!'}" if rs else " " * 9)
    t = torch.get(w, {}).get("kt_ms")
    base = runs[w].get("base") or runs[w].get("wbase") or runs[w].get("new")
    kb = statistics.median(r['kt_ms'] for r in base) if base else None
    ratio = f" {t / kb:5.3f}" if t and kb else ""
    extra = ""
    for m in ms:
        tm = tmodes[m].get(w, {}).get("kt_ms")
        extra += f" {tm:8.4f} {tm / kb:5.3f}" if tm and kb else " " * 15
    print(f"{w:30s} " + " ".join(cells) + (f" {t:8.4f}{ratio}" if t else " " * 15) + extra)
