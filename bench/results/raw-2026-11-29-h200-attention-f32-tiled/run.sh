#!/usr/bin/env bash
# Issue 15, f32 attention, register-tiled kernel: on the H200, in one call.
# Correctness first (the harness's float64-reference cases for the old and
# new kernel, the attention unit tests, the compiled-attention lit binaries,
# all on the new libkiln_rt.so), then kernel times: the harness (old vs new
# kernel, same process), kiln eager through libkiln_rt.so (old and new
# library), PyTorch eager and torch.compile.
# Layout it runs in (.bench/attn of the checkout, carried): this script,
# attn_h (build.sh), attn_f32, kiln_unit_tests, lit/exec-attention-cuda{,.eager},
# lib/ (libomp.so.5, libsleef.so.3), old/ and new/ (libkiln_rt.so, and
# libkiln_blas.so for the CPU twins), src/ (the sources beside this file).
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p $out
L=$PWD/lib
c=$(python3 -c 'import glob,site;f=[g for d in site.getsitepackages() for g in sorted(glob.glob(d+"/nvidia/cu*/lib/libcudnn.so.9*"))];print(f[0] if f else "")' 2>/dev/null)
if [ -n "$c" ]; then export KILN_CUDNN=$c; L=$L:$(dirname $c); fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== harness check"; ./attn_h check > $out/check.txt 2>&1; tail -1 $out/check.txt; grep "!" $out/check.txt
echo "== unit tests"
LD_LIBRARY_PATH=$PWD/new:$L timeout 300 ./kiln_unit_tests --gtest_filter='*Attention*' > $out/unit.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED" $out/unit.txt | head
for t in exec-attention-cuda exec-attention-cuda.eager; do
  echo "== $t"; LD_LIBRARY_PATH=$PWD/new:$L timeout 300 ./lit/$t > $out/$t.txt 2>&1; echo "rc=$?"
  grep -E "MISMATCH|cases|^ok" $out/$t.txt | tail -6
done
echo "== timing"
./attn_h time > $out/harness_time.txt 2>&1
for v in old new; do LD_LIBRARY_PATH=$PWD/$v:$L ./attn_f32 > $out/kiln_$v.jsonl 2>&1; done
PYTHONUNBUFFERED=1 timeout 400 python3 src/torch_sdpa.py > $out/torch.txt 2>&1
cat $out/harness_time.txt; paste $out/kiln_old.jsonl $out/kiln_new.jsonl | sed -E 's/\{"workload": "attention f32 //g; s/", "kt_ms"//g; s/, "TFLOPs": [0-9.]+\}//g'; grep -E "torch|kernel" $out/torch.txt
