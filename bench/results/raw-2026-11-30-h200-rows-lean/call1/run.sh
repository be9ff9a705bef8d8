#!/bin/bash
# Device call 1: the cat copy variants and the RMS norm variants, event
# timing then ncu. Staged: .bench/copy/{cat_copy,rms_lean}, .bench/dr (runtime).
export LD_LIBRARY_PATH=$PWD/.bench/dr:$LD_LIBRARY_PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader > $O/gpu.txt
.bench/copy/rms_lean > $O/rms16.txt 2>&1
.bench/copy/rms_lean t 64 > $O/rms64.txt 2>&1
.bench/copy/cat_copy > $O/cat.txt 2>&1
N="ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv"
$N -k 'regex:^(g0|g1|l[1-5]|h)$' -c 40 .bench/copy/rms_lean --once > $O/ncu-rms.csv 2>&1
$N -k 'regex:^(inner|pieces|out_|grid2d)' .bench/copy/cat_copy --once > $O/ncu-cat.csv 2>&1
python3 - "$O" <<'PY'
import csv, sys, collections
o = sys.argv[1]
for f in ('ncu-rms.csv', 'ncu-cat.csv'):
    rows = [l for l in open(f'{o}/{f}') if l.startswith('"')]
    d = collections.defaultdict(list)
    for r in csv.DictReader(rows):
        d[(r['Kernel Name'][:40], r['Block Size'], r['Grid Size'])].append(float(r['Metric Value'].replace(',', '')) / 1000)
    print(f)
    for k, v in d.items():
        print(f'  {k[0]:<40} {k[1]:>12} {k[2]:>14} ' + ' '.join(f'{x:8.2f}' for x in v))
PY
cat $O/gpu.txt $O/rms16.txt $O/rms64.txt $O/cat.txt
