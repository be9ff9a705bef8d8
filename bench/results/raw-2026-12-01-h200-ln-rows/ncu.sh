#!/bin/bash
cd "$(dirname "$0")"; OUT=${OUT}
M=gpu__time_duration.sum,sm__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
ncu --metrics $M --csv ./ln_rows_variants 16384 0 > $OUT/ncu.csv 2> $OUT/ncu.err
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
d = collections.OrderedDict()
for r in rows[1:]:
    d.setdefault((r[ii], r[ki][:28]), {})[r[mi]] = r[vi]
short = {"gpu__time_duration.sum": "us", "sm__inst_executed.sum": "inst", "launch__registers_per_thread": "regs",
 "sm__warps_active.avg.pct_of_peak_sustained_active": "warps%", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
 "lts__t_sector_hit_rate.pct": "L2hit%"}
for (i, k), m in d.items():
    out = [k.ljust(28)]
    for key, name in short.items():
        out.append(f"{name}={m.get(key,'?')}")
    st = {key.split('stalled_')[1].split('_per')[0]: m[key] for key in m if 'stalled' in key}
    out.append("stalls " + " ".join(f"{a}={b}" for a, b in st.items()))
    print(" ".join(out))
PY
tail -3 $OUT/ncu.err
