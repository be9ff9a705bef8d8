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


# A 3x5 pixel font for the labels (rows top to bottom, 3 bits each).
FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", "-": "000000111000000", "e": "111101111100111",
    "l": "100100100100111", "o": "000111101101111", "s": "011100010001110",
    "t": "010111010010011", "p": "111101111100100", "a": "000111011101111",
    "g": "111101111001111", "r": "000111100100100", "c": "000111100100111",
    "m": "000111111101101", "i": "010000010010010", "d": "001001111101111",
    " ": "000000000000000", "(": "010100100100010", ")": "010001001001010",
}


def text(put, x, y, s, rgb=(0, 0, 0), scale=2):
    """Draws s with its top-left corner at (x, y)."""
    for ch in s:
        bits = FONT.get(ch, FONT[" "])
        for r in range(5):
            for c in range(3):
                if bits[3 * r + c] == "1":
                    for dy in range(scale):
                        for dx in range(scale):
                            put(x + c * scale + dx, y + r * scale + dy, rgb)
        x += 4 * scale


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
    # labels: decades of the loss, the first and last step, the legend
    for d in range(lo, hi + 1):
        text(put, 4, px(steps[0], 10 ** d)[1] - 5, f"1e{d}")
    text(put, M, H - M + 8, str(steps[0]))
    last = str(steps[-1])
    text(put, W - M - 8 * len(last), H - M + 8, last)
    text(put, W // 2 - 16, H - M + 8, "step")
    text(put, 4, 12, "loss (log)")
    text(put, W - M - 140, 12, "eager", (31, 119, 180))
    text(put, W - M - 80, 12, "compiled", (255, 127, 14))
    png(sys.argv[2], img)
    print(f"{sys.argv[2]}: {len(steps)} steps, loss 10^{lo}..10^{hi} "
          f"(log scale); eager blue, compiled orange dashed")


if __name__ == "__main__":
    main()
