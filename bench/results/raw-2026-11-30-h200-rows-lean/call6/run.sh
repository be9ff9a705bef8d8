#!/usr/bin/env bash
# Device call 6: the LLaMA example (examples/llama, built at 9c028b7 with
# `ninja -C build llama_block`) on the H200: compiled against eager and
# against float64, at the small size as shipped and at LLaMA-7B's widths.
export LD_LIBRARY_PATH=$PWD/.bench
timeout 200 build/bin/llama_block --device cuda 2>&1 | tail -4
timeout 300 build/bin/llama_block --device cuda --size 7b 2>&1 | tail -4
