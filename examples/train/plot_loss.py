#!/usr/bin/env python3
"""Draws train_mlp's loss curves (its --csv file) as a PNG, with only the
standard library: eager in blue, compiled in orange (dashed), on a log-scale
loss axis.

    plot_loss.py losses.csv losses.png
"""
import csv
import math
import struct
import sys
import zlib

W, H, M = 640, 400, 48  # image size and margin, pixels


def png(path, pixels):
    rows = b"".join(b"\x00" + bytes(r) for r in pixels)
    def chunk(kind, data):
        c = kind + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows, 9)))
        f.write(chunk(b"IEND", b""))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    steps, eager, comp = [], [], []
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            steps.append(int(row["step"]))
            eager.append(float(row["loss_eager"]))
            comp.append(float(row["loss_compiled"]))
    img = [[255] * (3 * W) for _ in range(H)]
    def put(x, y, rgb):
        if 0 <= x < W and 0 <= y < H:
            img[y][3 * x:3 * x + 3] = rgb
    lo = math.log10(min(eager + comp))
    hi = math.log10(max(eager + comp))
    lo, hi = math.floor(lo), math.ceil(hi)
    def px(step, loss):
        x = M + (step - steps[0]) * (W - 2 * M) / max(1, steps[-1] - steps[0])
        y = H - M - (math.log10(loss) - lo) * (H - 2 * M) / max(1e-9, hi - lo)
        return int(round(x)), int(round(y))
    # axes and decade grid lines
    for x in range(M, W - M + 1):
        put(x, H - M, (0, 0, 0))
        for d in range(lo, hi + 1):
            if x % 4 == 0:
                put(x, px(steps[0], 10 ** d)[1], (190, 190, 190))
    for y in range(M, H - M + 1):
        put(M, y, (0, 0, 0))
    def line(series, rgb, dashed):
        pts = [px(s, l) for s, l in zip(steps, series)]
        for i, ((x0, y0), (x1, y1)) in enumerate(zip(pts, pts[1:])):
            if dashed and (i // 4) % 2:
                continue
            n = max(abs(x1 - x0), abs(y1 - y0), 1)
            for k in range(n + 1):
                x = x0 + (x1 - x0) * k // n
                y = y0 + (y1 - y0) * k // n
                for dy in (0, 1):
                    put(x, y + dy, rgb)
    line(eager, (31, 119, 180), False)
    line(comp, (255, 127, 14), True)
    png(sys.argv[2], img)
    print(f"{sys.argv[2]}: {len(steps)} steps, loss 10^{lo}..10^{hi} "
          f"(log scale); eager blue, compiled orange dashed")


if __name__ == "__main__":
    main()
