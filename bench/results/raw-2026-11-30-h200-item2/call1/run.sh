#!/usr/bin/env bash
# Device call 1 (probe): issue 14's item-2 row workloads and the sweep's
# long rows, Kiln (bench/experiments/long_rows.cpp at 11334a3's kernels)
# beside torch.compile (default mode) in one lease: kernel time and single
# call, ncu of both sides' kernels, and what Inductor generates.
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
D=bench/results/raw-2026-11-30-h200-item2/call1
export LD_LIBRARY_PATH=$PWD/.bench/rt:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt
timeout 60 .bench/lr/long_rows0 > $O/kiln1.jsonl 2> $O/kiln.err
timeout 300 python3 $D/torch_probe.py > $O/torch.jsonl 2> $O/torch.err

M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size,launch__occupancy_limit_registers,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
TORCH_LOGS=output_code timeout 110 ncu --profile-from-start off --clock-control none --kernel-name regex:triton --metrics $M --csv python3 $D/torch_probe.py --calls 2 where "softmax 32768" "norm 16384x4096" > $O/ncu-torch.csv 2> $O/torch_code.txt
for n in where "softmax 32768" "log_softmax 32768" "layer norm 16384x4096" "RMS norm 16384x4096"; do
  timeout 25 ncu --clock-control none --kernel-name regex:__kiln_ --launch-skip 6 --launch-count 3 --metrics $M --csv .bench/lr/long_rows0 "$n" >> $O/ncu-kiln.csv 2>> $O/ncu-kiln.err
done
python3 - $O <<'PY'
import json, sys, csv
o = sys.argv[1]
def load(f):
    try: return [json.loads(l) for l in open(f"{o}/{f}") if l.startswith('{"workload')]
    except FileNotFoundError: return []
k1, k2, t = load("kiln1.jsonl"), load("kiln2.jsonl"), load("torch.jsonl")
tk = {r["workload"]: r for r in t}
for side in ("kiln", "torch"):
    try: txt = open(f"{o}/ncu-{side}.csv").read()
    except FileNotFoundError: continue
    rows = [l for l in txt.splitlines() if l.startswith('"')]
    hdr = None; recs = {}
    for row in csv.reader(rows):
        if row[0] == "ID": hdr = row; continue
        d = dict(zip(hdr, row)); key = (int(d["ID"]), d["Kernel Name"][:48])
        recs.setdefault(key, {})[d["Metric Name"]] = d["Metric Value"]
    print(f"--- ncu {side}: time us, dram %, read MB, write MB, warps active %, regs, block, grid, occ limit regs, inst M, L2 hit %")
    seen = set()
    for (i, n), m in sorted(recs.items()):
        g = lambda k: m.get(k, "?")
        key = (n, g("launch__grid_size"))
        if key in seen: continue
        seen.add(key)
        try:
            print(f"{n:48s} {float(g('gpu__time_duration.sum'))/1e3:7.1f} {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):>6s} "
                  f"{float(g('dram__bytes_read.sum'))/1e6:7.1f} {float(g('dram__bytes_write.sum'))/1e6:7.1f} {g('sm__warps_active.avg.pct_of_peak_sustained_active'):>6s} "
                  f"{g('launch__registers_per_thread'):>4s} {g('launch__block_size'):>5s} {g('launch__grid_size'):>7s} {g('launch__occupancy_limit_registers'):>3s} "
                  f"{float(g('smsp__inst_executed.sum'))/1e6:7.2f} {g('lts__t_sector_hit_rate.pct'):>6s}")
        except ValueError:
            print(n, m)
print(f"{'workload':34s} {'kiln1':>8s} {'kiln2':>8s} {'torch':>8s} {'t/k':>6s} {'kiln 1':>8s} {'torch 1':>8s}")
for a in k1:
    n = a["workload"]; b = next((r for r in k2 if r["workload"] == n), {}); c = tk.get(n, {})
    kk = (a["kt_ms"] + b.get("kt_ms", a["kt_ms"])) / 2; tt = c.get("kt_ms", float('nan'))
    print(f"{n:34s} {a['kt_ms']:8.4f} {b.get('kt_ms', float('nan')):8.4f} {tt:8.4f} {tt/kk:6.3f} {a['ms']:8.4f} {c.get('ms', float('nan')):8.4f} {'' if a['ok'] else 'NOT OK'}")
PY
