#!/usr/bin/env bash
# Probe: launch shapes, registers, instructions and durations of decode's small kernels, both sides; Inductor's code.
set -u
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; mkdir -p $O
P=.bench/prof/llama_decode_prof
M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum,sm__cycles_active.max,dram__bytes_read.sum,lts__t_bytes.sum,launch__shared_mem_per_block_static
NCU="ncu --profile-from-start off --clock-control none --cache-control none --metrics $M --csv"
timeout 150 $NCU $P decode --calls 1 --reps 1 > $O/ncu-kiln.csv 2> $O/ncu-kiln.err
timeout 200 env TORCH_LOGS=output_code python3 bench/experiments/llama_torch_prof.py decode --calls 0 > $O/torch-code.txt 2>&1
timeout 150 $NCU python3 bench/experiments/llama_torch_prof.py decode --calls 1 --reps 1 > $O/ncu-torch.csv 2> $O/ncu-torch.err
python3 - $O <<'PY'
import csv, io, sys, collections
o = sys.argv[1]
for side in ("kiln", "torch"):
    txt = open(f"{o}/ncu-{side}.csv").read()
    lines = [l for l in txt.splitlines() if l.startswith('"')]
    k = collections.OrderedDict()
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        key = (r["ID"], r["Kernel Name"][:60])
        k.setdefault(key, {})[r["Metric Name"]] = r["Metric Value"] + " " + r["Metric Unit"]
    print("==", side)
    for (i, n), m in k.items():
        print(i, n, " | ".join(f"{a.split('__')[1][:18]}={b}" for a, b in m.items()))
PY
