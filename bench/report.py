"""Makes the benchmark table from the JSON lines of kiln_bench,
torch_bench.py and first_call.py (and build_cost.json): each column's
median time and its ratio to the hardware floor (fewest bytes over the copy
bandwidth measured in the same run). Rows Kiln cannot compile say
"unsupported"; no number is invented.

    python3 report.py <folder with kiln.jsonl torch.jsonl ...> --out results.md
"""
import argparse
import json
import os

KT = 20            # calls per event pair in kernel time (bench/kiln_bench.cpp)
PEAK_BF16 = 790.0  # TFLOP/s, dense bf16 on the H200 (the matmul issue's figure)


def load(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def fmt_ms(ms, floor):
    if ms is None:
        return "—"
    return f"{ms:.3f} ({100 * floor / ms:.0f}%)" if floor else f"{ms:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--out")
    a = ap.parse_args()
    kiln = load(os.path.join(a.folder, "kiln.jsonl"))
    # torch.jsonl, and torch_<mode>.jsonl from runs of other modes: one
    # record per workload.
    torch = {}
    for name in sorted(os.listdir(a.folder)):
        if name.startswith("torch") and name.endswith(".jsonl"):
            for r in load(os.path.join(a.folder, name)):
                if "workload" in r:
                    torch.setdefault(r["workload"], {}).update(r)
    first = {r["first_call"]: r for r in load(os.path.join(a.folder, "first_call.jsonl"))}
    gpu = open(os.path.join(a.folder, "gpu.txt")).read().strip() if os.path.exists(
        os.path.join(a.folder, "gpu.txt")) else "?"
    bw = next((r["bandwidth"] for r in kiln if "bandwidth" in r), None)
    bare = next((r["bare_launch_us"] for r in kiln if "bare_launch_us" in r), None)

    lines = [f"GPU: {gpu}", "",
             f"Copy bandwidth (device-to-device, read + write, measured in this run): "
             f"{bw / 1e12:.2f} TB/s" if bw else "Copy bandwidth: not measured", ""]
    modes = sorted({k[len("compiled_"):-len("_kt_ms")] for t in torch.values() for k in t
                    if k.startswith("compiled_") and k.endswith("_kt_ms") and k != "compiled_kt_ms"})
    for measure, suffix, what in [
            ("Kernel time", "_kt_ms",
             f"{KT} back-to-back calls between one pair of CUDA events, divided by {KT}: the host "
             "runs ahead and its per-call overhead hides behind the GPU, as in Triton's do_bench. "
             "This is the comparison of the generated code."),
            ("Single-call latency", "_ms",
             "one call between one pair of CUDA events, from an idle stream: the host's per-call "
             "cost (guards, allocation, launch; Python and Dynamo's guards for PyTorch) is in it.")]:
        lines += [f"**{measure}**: median ms per call over fresh random inputs; {what} "
                  "In parentheses: the share of the floor reached (floor / time), or for matrix "
                  f"products the TFLOP/s achieved. Floor = fewest bytes a call must move / copy "
                  f"bandwidth, or for bf16 products 2·M·N·K / {PEAK_BF16:.0f} TFLOP/s.", "",
                  "| workload | shape | floor ms | Kiln eager | Kiln compiled | PyTorch eager "
                  "| torch.compile | " + "".join(f"torch.compile {m.replace('_', '-')} | " for m in modes)
                  + "Kiln vs torch.compile | check |",
                  "|---|---|---|---|---|---|---|" + "---|" * len(modes) + "---|---|"]
        for r in kiln:
            if "workload" not in r or r.get("small") or "bandwidth" in r:
                continue
            t = torch.get(r["workload"], {})
            flops = r.get("flops") or 0
            nbytes = r.get("bytes_alg") or r["bytes"]
            if flops:
                floor = flops / (PEAK_BF16 * 1e12) * 1e3 if "bf16" in r["shape"] else None
                cell = lambda ms: "—" if ms is None else f"{ms:.3f} ({flops / ms / 1e9:.0f} TFLOP/s)"
            else:
                floor = nbytes / bw * 1e3 if bw else None
                cell = lambda ms: fmt_ms(ms, floor)
            kc = r.get("compiled" + suffix)
            tc = t.get("compiled" + suffix)
            comp = cell(kc) if kc is not None else "unsupported (eager)"
            vs = f"{tc / kc:.2f}x" if kc and tc else "—"
            note = ("ok" if r.get("ok") else "MISMATCH") + (
                f", {r.get('kernels_per_call')} launch" + ("es" if r.get("kernels_per_call", 1) > 1 else "")
                if kc is not None else "")
            if t.get("compiled_kernels"):  # the profiler's count, one call
                note += f" (torch.compile: {t['compiled_kernels']})"
            if r.get("error"):
                note = "error: " + r["error"]
            if t.get("error"):
                note += "; torch: " + t["error"][:80]
            floor_txt = f"{floor:.3f}" if floor else "—"
            if r.get("bytes_alg"):
                floor_txt += f" ({r['bytes_alg'] / r['bytes'] * 8:.0f} B/elem: two reads)"
            lines.append(f"| {r['workload']} | {r['shape']} | {floor_txt} | "
                         f"{cell(r.get('eager' + suffix))} | {comp} | "
                         f"{cell(t.get('eager' + suffix))} | {cell(tc)} | "
                         + "".join(f"{cell(t.get('compiled_' + m + suffix))} | " for m in modes)
                         + f"{vs} | {note} |")
        lines.append("")
    lines += ["", "Small calls: microseconds per call, each cell kernel time (runs of 200 "
              "back-to-back calls per event pair) / single-call latency (one call per pair)"
              + (f"; a bare kernel launch, back to back, takes {bare:.2f} µs." if bare else "."),
              "A workload named '... graphed' is the same function compiled with "
              "mode=reduce-overhead (replayed as a CUDA graph); its torch columns are the "
              "plain workload's, torch.compile's reduce-overhead beside its default.", "",
              "| workload | shape | kernels per call (Kiln, torch.compile) | Kiln eager | "
              "Kiln compiled | PyTorch eager | torch.compile | torch.compile reduce-overhead |",
              "|---|---|---|---|---|---|---|---|"]
    for r in kiln:
        if not r.get("small"):
            continue
        t = torch.get(r["workload"].removesuffix(" graphed"), {})
        f = lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "—"
        both = lambda d, k: f"{f(d.get(k + '_us'))} / {f(d.get(k + '_single_us'))}"
        comp = both(r, "compiled") if "compiled_us" in r else "unsupported"
        kern = f"{r.get('kernels_per_call', '—')}, {t.get('compiled_kernels', '—')}"
        lines.append(f"| {r['workload']} | {r['shape']} | {kern} | {both(r, 'eager')} | {comp} | "
                     f"{both(t, 'eager')} | {both(t, 'compiled')} | "
                     f"{both(t, 'compiled_reduce_overhead')} |")
    if first:
        lines += ["", "First call in a fresh process (wall seconds from process start to the "
                  "first result of sin(x)+cos(y) on 2^20 floats, median of 5; compiled minus eager "
                  "is the cost of compiling at run time):", "",
                  "| | compiled | eager | compiled − eager |", "|---|---|---|---|"]
        for k, label in [("kiln", "Kiln (ahead of time)"), ("torch", "torch.compile, empty caches")]:
            r = first.get(k)
            if r:
                lines.append(f"| {label} | {r['compiled_s']:.3f} | {r['eager_s']:.3f} | "
                             f"{r['compiled_s'] - r['eager_s']:+.3f} |")
        r = first.get("torch")
        if r and "compiled_warm_cache_s" in r:
            lines.append(f"| torch.compile, warm caches | {r['compiled_warm_cache_s']:.3f} | "
                         f"{r['eager_s']:.3f} | {r['compiled_warm_cache_s'] - r['eager_s']:+.3f} |")
    bc_path = os.path.join(a.folder, "build_cost.json")
    if os.path.exists(bc_path):
        bc = json.load(open(bc_path))
        lines += ["", f"Build cost (seconds to compile each example with clang++-19 -O2 -c, "
                  f"median of 3, on the build machine: {bc['machine']}):", "",
                  "| example | no plugin | plugin, cold caches | plugin, warm caches |",
                  "|---|---|---|---|"]
        for r in bc["rows"]:
            lines.append(f"| {r['example']} | {r['plain_s']:.2f} | {r['plugin_cold_s']:.2f} | "
                         f"{r['plugin_warm_s']:.2f} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        open(a.out, "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
