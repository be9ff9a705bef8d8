#!/usr/bin/env python3
"""Prints the guards of each explain.json given as the remarks word them:
`<check>` plus ` (<dtype> variant)` / ` (<dtypes> variants)` when only
some variants make the check."""
import json
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        for g in json.load(f)["guards"]:
            v = g["variants"]
            suffix = ""
            if v:
                suffix = f" ({', '.join(v)} variant{'s' if len(v) > 1 else ''})"
            print(g["check"] + suffix)
