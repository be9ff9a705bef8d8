import csv, sys, io
o = sys.argv[1]
for side in sys.argv[2:]:
    rows = []
    txt = open(f"{o}/ncu-{side}-decode.csv").read()
    lines = [l for l in txt.splitlines() if l.startswith('"')]
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            v = float(r["Metric Value"].replace(",", ""))
            u = r["Metric Unit"]
            us = {"ns": v / 1e3, "nsecond": v / 1e3, "us": v, "usecond": v, "ms": v * 1e3, "msecond": v * 1e3}.get(u, v)
            rows.append((r["Kernel Name"][:70], us, u))
    n = len(rows) // 3 if rows else 0
    print(f"== {side}: {len(rows)} kernels in 3 calls (unit {rows[0][2] if rows else '?'})")
    tot = 0
    for i in range(n):
        v = sorted([rows[i + k * n][1] for k in range(3)])[1]
        tot += v
        print(f"{i:3d} {v:9.2f}  {rows[i][0]}")
    print(f"    {tot:9.2f} total")
