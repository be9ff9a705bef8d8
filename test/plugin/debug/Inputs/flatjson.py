#!/usr/bin/env python3
"""Prints a JSON file one leaf per line, `path = value`, in file order, so
that FileCheck can check explain.json:

    function = "f"
    kernels[0].ops[1].op = "cos"
    location.line = 7

An object's key order is printed first as `path.keys = a, b, c` (the top
level: `keys = ...`). Strings print JSON-quoted; a multi-line string prints
as its first line and `(N lines)`."""
import json
import sys


def walk(path, v, out):
    if isinstance(v, dict):
        out.append(f"{path + '.' if path else ''}keys = {', '.join(v.keys())}")
        for k, x in v.items():
            walk(f"{path}.{k}" if path else k, x, out)
    elif isinstance(v, list):
        out.append(f"{path}.size = {len(v)}")
        for i, x in enumerate(v):
            walk(f"{path}[{i}]", x, out)
    elif isinstance(v, str) and "\n" in v.rstrip("\n"):
        lines = v.rstrip("\n").split("\n")
        out.append(f"{path} = {json.dumps(lines[0])} ({len(lines)} lines)")
    else:
        out.append(f"{path} = {json.dumps(v)}")


with open(sys.argv[1]) as f:
    data = json.load(f, object_pairs_hook=dict)
out = []
walk("", data, out)
print("\n".join(out))
