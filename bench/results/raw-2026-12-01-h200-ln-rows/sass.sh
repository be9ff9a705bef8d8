#!/bin/bash
cd "$(dirname "$0")"
cuobjdump -sass ln_rows_variants > $OUT/all.sass 2>&1 || nvdisasm --help | head -2
python3 - $OUT/all.sass $OUT <<'PY'
import re, sys
text = open(sys.argv[1]).read()
parts = re.split(r"\n\s*Function : ", text)
for p in parts[1:]:
    name = p.split("\n", 1)[0].strip()
    keep = None
    if name == "__kiln_ln_k0_f32_rows4full": keep = "kiln"
    elif name == "k1g": keep = "k1g"
    elif "ln_variantILi0ELi0ELi0ELi1E" in name: keep = "two"
    elif "ln_triILi1ELi256E" in name: keep = "tri256"
    if keep:
        body = p
        n = len(re.findall(r"/\*[0-9a-f]{4,}\*/", body))
        open(f"{sys.argv[2]}/{keep}.sass", "w").write(body)
        print(keep, name[:60], "instructions (static):", n)
PY
rm $OUT/all.sass
