#!/bin/bash
# Device run 3: ncu stall reasons and shared-memory wavefronts per version.
cd "$(dirname "$0")"
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"
for v in 1 2 3; do
  ONLY=$v ONCE=1 timeout 120 ncu --clock-control none -k regex:attn_ -c 1 --metrics "$M" \
    ./attn_h time "B16 H8 S1024 D64" > $OUT/ncu3_v$v.txt 2>&1
done
python3 - "$OUT" <<'PY'
import re,sys,glob
rows={}
for v in (1,2,3):
    for l in open(f"{sys.argv[1]}/ncu3_v{v}.txt"):
        m=re.match(r'\s+(\S+)\s+(\S+)?\s+([\d,.]+)\s*$',l)
        if m and ('__' in m.group(1)):
            rows.setdefault(m.group(1),{})[v]=float(m.group(3).replace(',',''))
for k,d in sorted(rows.items()):
    if max(d.values())<0.05: continue
    k2=k.replace('smsp__average_warps_issue_stalled_','stall_').replace('_per_issue_active.ratio','')
    print(f"{k2[:70]:70s}"+''.join(f" {d.get(v,float('nan')):12.3f}" for v in (1,2,3)))
PY
