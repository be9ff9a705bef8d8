#!/usr/bin/env bash
# Second call: the unit tests and lit binaries again, with libkiln_blas.so
# beside libkiln_rt.so (the CPU twins and references need it).
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; mkdir -p $out
L=$PWD/lib
c=$(python3 -c 'import glob,site;f=[g for d in site.getsitepackages() for g in sorted(glob.glob(d+"/nvidia/cu*/lib/libcudnn.so.9*"))];print(f[0] if f else "")' 2>/dev/null)
if [ -n "$c" ]; then export KILN_CUDNN=$c; L=$L:$(dirname $c); fi
echo "== unit tests"
LD_LIBRARY_PATH=$PWD/new:$L timeout 300 ./kiln_unit_tests --gtest_filter='*Attention*' > $out/unit.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED|  OK) |tests ran" $out/unit.txt
for t in exec-attention-cuda exec-attention-cuda.eager; do
  echo "== $t"; LD_LIBRARY_PATH=$PWD/new:$L timeout 300 ./lit/$t > $out/$t.txt 2>&1; echo "rc=$?"
  grep -E "MISMATCH|cases|^ok" $out/$t.txt | tail -8
done
