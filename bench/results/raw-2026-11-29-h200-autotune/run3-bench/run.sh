#!/usr/bin/env bash
# Benchmarks, one lease: Kiln's GEMM workloads without and with autotuning
# (KILN_GEMM_AUTOTUNE=1, a fresh cache), the bias + head split + softmax
# fusion, then PyTorch (eager, torch.compile default and
# max-autotune-no-cudagraphs) on the same workloads; the MLP training step
# likewise. Kernel time and single-call latency, medians.
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.bench:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; mkdir -p $out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
W=("bias, head" "GELU" "MLP block" "matmul f32")
rm -f /tmp/bench.cache
for r in 1 2; do
  for w in "${W[@]}"; do
    ./.bench/kiln_bench --reps 30 --only "$w" 2>>$out/kiln.err >> $out/kiln.jsonl
    [ "$w" = "bias, head" ] && continue
    KILN_GEMM_AUTOTUNE=1 KILN_AUTOTUNE_CACHE=/tmp/bench.cache ./.bench/kiln_bench --reps 30 --only "$w" 2>>$out/kiln-autotune.err >> $out/kiln-autotune.jsonl
  done
done
cp /tmp/bench.cache $out/bench-autotune-cache.txt
for t in 1 2; do
  ./.bench/train_bench --reps 30 --only MLP 2>>$out/train.err >> $out/train.jsonl
  KILN_GEMM_AUTOTUNE=1 KILN_AUTOTUNE_CACHE=/tmp/bench.cache ./.bench/train_bench --reps 30 --only MLP 2>>$out/train.err >> $out/train-autotune.jsonl
done
echo "kiln done"; tail -2 $out/kiln.err
for w in "bias, head" "linear+bias" "layer norm+tanh-GELU+matmul" "MLP block" "matmul f32"; do
  timeout 200 python3 bench/torch_bench.py --reps 30 --modes default,max-autotune-no-cudagraphs --only "$w" 2>>$out/torch.err >> $out/torch.jsonl
done
timeout 150 python3 bench/train_torch.py --reps 30 --only MLP 2>>$out/train-torch.err >> $out/train-torch.jsonl
tail -3 $out/torch.err
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
def rows(f):
    p = os.path.join(out, f)
    return [json.loads(l) for l in open(p) if l.startswith("{")] if os.path.exists(p) else []
for f in ["kiln.jsonl", "kiln-autotune.jsonl", "torch.jsonl", "train.jsonl", "train-autotune.jsonl", "train-torch.jsonl"]:
    print("==", f)
    for r in rows(f):
        keys = [k for k in r if any(s in k for s in ("ms", "median", "kernel", "single", "launch"))]
        print(r.get("workload"), r.get("mode", r.get("side", "")), {k: r[k] for k in keys})
PY
