#!/usr/bin/env bash
# On the GPU machine, in ONE command: copy bandwidth, every workload in Kiln
# eager and compiled and in PyTorch eager and torch.compile, the first call
# in a fresh process, then the table (printed last, and $OUT/results.md).
# Builds nothing: bench/prepare.sh staged .bench/ here.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/.bench/out}"
mkdir -p "$out"
export LD_LIBRARY_PATH="$root/.bench:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
# torch.compile in each mode given, a process per mode: torch_<mode>.jsonl,
# which report.py adds to torch.jsonl's records.
torch_modes() {
  for m in "$@"; do
    python3 "$root/bench/torch_bench.py" --reps "${REPS:-50}" --modes "$m" 2>"$out/torch_$m.err" \
      | tee "$out/torch_$m.jsonl"
  done
}
if [ "${1:-}" = torch-modes ]; then
  torch_modes ${MODES:-max-autotune-no-cudagraphs}
  exit 0
fi
"$root/.bench/kiln_bench" --reps "${REPS:-50}" | tee "$out/kiln.jsonl"
python3 "$root/bench/torch_bench.py" --reps "${REPS:-50}" 2>"$out/torch.err" | tee "$out/torch.jsonl"
# Other torch.compile modes compile for minutes: MODES=... runs them (alone:
# `bash bench/device_run.sh torch-modes`, when one command would not fit the
# device tool's 10 minutes). For kernel time, max-autotune-no-cudagraphs:
# max-autotune's CUDA graphs copy every non-parameter input into the graph's
# own buffers on each replay (256 MB more traffic for sin(x)+cos(y)).
# MODES=reduce-overhead: torch.compile's CUDA graphs for the small calls
# only (report.py's last column), beside Kiln's mode=reduce-overhead rows.
torch_modes ${MODES:-}
# FIRST_CALL=0 leaves out the fresh-process runs (about 3 minutes).
if [ "${FIRST_CALL:-1}" != 0 ]; then
  python3 "$root/bench/first_call.py" --kiln "$root/.bench/kiln_bench" \
    --torch "$root/bench/torch_bench.py" | tee "$out/first_call.jsonl"
fi
cp "$root/.bench/build_cost.json" "$out/" 2>/dev/null || true
python3 "$root/bench/report.py" "$out" --out "$out/results.md"
