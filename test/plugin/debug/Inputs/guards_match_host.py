#!/usr/bin/env python3
"""Checks that explain.json's guards are the checks the generated host code
makes: for every fast path of the function folder given, the set of guard
messages equals the set of messages the host code passes to
rt::guard_failed (the CUDA guards log run-time strings, so they are
matched by the expression that makes the string). Prints one line per fast path, or the
differences, and exits non-zero on a mismatch."""
import json
import os
import re
import sys

LITERAL = re.compile(r'guard_failed\(kFn, ("(?:[^"\\]|\\.)*"|[^()]*(?:\([^()]*\))?)\)')
# A run-time message: the expression, and the words explain.json gives it.
RUNTIME = {"kiln_no_cuda_reason": "why this file has no CUDA kernels",
           "kiln::rt::module_load_error(kiln_module)": "why the device cannot run them"}


def host_messages(text):
    out = set()
    for m in LITERAL.finditer(text):
        lit = m.group(1)
        if lit.startswith('"'):
            out.add(bytes(lit[1:-1], "utf-8").decode("unicode_escape"))
        else:
            out.add(RUNTIME.get(lit, lit))
    return out


folder = sys.argv[1]
with open(os.path.join(folder, "explain.json")) as f:
    explain = json.load(f)
ok = True
for path in explain["fast_paths"]:
    with open(os.path.join(folder, path["folder"], "host.cpp")) as f:
        host = host_messages(f.read())
    listed = set()
    for g in explain["guards"]:
        if g["fast_path"] == path["name"]:
            listed.add(next((w for w in RUNTIME.values() if g["message"].startswith(w)),
                            g["message"]))
    if host == listed and host:
        print(f"{path['name']}: {len(host)} guard messages match")
    else:
        ok = False
        for m in sorted(host - listed):
            print(f"{path['name']}: in host.cpp only: {m}")
        for m in sorted(listed - host):
            print(f"{path['name']}: in explain.json only: {m}")
sys.exit(0 if ok else 1)
