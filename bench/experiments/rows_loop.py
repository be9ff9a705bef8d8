"""The generated rows kernel's row loop and its first loads into registers
(c0[k] from in0), as async_rows.py and tma_rows.py find it to rewrite."""
import re

ROWS_LOOP = re.compile(
    r"  for \(int64_t row = (?P<start>[^;]*); row < sp.rows; row \+= (?P<step>.*?)\) \{\n"
    r"(?P<setup>(?:    const int64_t [^\n]*\n)+)"
    r"    #pragma unroll\n"
    r"    for \(int k = 0; k < SLOTS; \+\+k\) \{\n"
    r"      const int e = \(lane \+ k \* tpr\) \* V;\n"
    r"      if \(k < sp.vpt && e < R\) \{\n"
    r"        c0\[k\] = kiln_vec_load<V>\(in0 \+ b1 \+ e\);\n"
    r"      \}\n"
    r"    \}\n")


def find(src):
    """The match of the row loop in src, and the storage type of input 0."""
    m = ROWS_LOOP.search(src)
    assert m, "rows loop not found"
    return m, re.search(r"kiln_vec<([^,]*), V> c0\[SLOTS\]", src).group(1)
