#!/usr/bin/env python3
"""Renders `ftsim scale --csv FILE` as a PNG, with the standard library only
(no plotting package is installed here): two panels against log2(n), rounds
and the largest number of messages one process handled, for the agreement,
revoke and the failure notice, with log2(n) (rounds) and 4 log2(n) (messages) drawn for reference.

    build/ft/ftsim scale --csv /tmp/ftsim.csv
    python3 docs/plot_ftsim.py /tmp/ftsim.csv docs/ftsim_scale.png
"""
import csv
import struct
import sys
import zlib

# A 5x7 font for what the labels use (upper case, digits, a few signs).
FONT = {
    'A': "01110 10001 10001 11111 10001 10001 10001", 'B': "11110 10001 10001 11110 10001 10001 11110",
    'C': "01111 10000 10000 10000 10000 10000 01111", 'D': "11110 10001 10001 10001 10001 10001 11110",
    'E': "11111 10000 10000 11110 10000 10000 11111", 'F': "11111 10000 10000 11110 10000 10000 10000",
    'G': "01111 10000 10000 10011 10001 10001 01111", 'H': "10001 10001 10001 11111 10001 10001 10001",
    'I': "01110 00100 00100 00100 00100 00100 01110", 'K': "10001 10010 10100 11000 10100 10010 10001",
    'L': "10000 10000 10000 10000 10000 10000 11111", 'M': "10001 11011 10101 10101 10001 10001 10001",
    'N': "10001 11001 10101 10011 10001 10001 10001", 'O': "01110 10001 10001 10001 10001 10001 01110",
    'P': "11110 10001 10001 11110 10000 10000 10000", 'R': "11110 10001 10001 11110 10100 10010 10001",
    'S': "01111 10000 10000 01110 00001 00001 11110", 'T': "11111 00100 00100 00100 00100 00100 00100",
    'U': "10001 10001 10001 10001 10001 10001 01110", 'V': "10001 10001 10001 10001 10001 01010 00100",
    'W': "10001 10001 10001 10101 10101 10101 01010", 'X': "10001 10001 01010 00100 01010 10001 10001",
    'Y': "10001 10001 01010 00100 00100 00100 00100", 'Z': "11111 00001 00010 00100 01000 10000 11111",
    '0': "01110 10001 10011 10101 11001 10001 01110", '1': "00100 01100 00100 00100 00100 00100 01110",
    '2': "01110 10001 00001 00010 00100 01000 11111", '3': "11110 00001 00001 01110 00001 00001 11110",
    '4': "00010 00110 01010 10010 11111 00010 00010", '5': "11111 10000 11110 00001 00001 10001 01110",
    '6': "00110 01000 10000 11110 10001 10001 01110", '7': "11111 00001 00010 00100 01000 01000 01000",
    '8': "01110 10001 10001 01110 10001 10001 01110", '9': "01110 10001 10001 01111 00001 00010 01100",
    ' ': "00000 00000 00000 00000 00000 00000 00000", '(': "00010 00100 01000 01000 01000 00100 00010",
    ')': "01000 00100 00010 00010 00010 00100 01000", '*': "00000 00100 10101 01110 10101 00100 00000",
    '=': "00000 00000 11111 00000 11111 00000 00000", ',': "00000 00000 00000 00000 00110 00100 01000",
    '.': "00000 00000 00000 00000 00000 01100 01100", '-': "00000 00000 00000 11111 00000 00000 00000",
    ':': "00000 01100 01100 00000 01100 01100 00000", '/': "00001 00010 00010 00100 01000 01000 10000",
}

W, H = 1000, 430
BLACK, GREY, WHITE = (0, 0, 0), (200, 200, 200), (255, 255, 255)
COLOURS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (120, 120, 120)]


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = [[WHITE] * w for _ in range(h)]

    def dot(self, x, y, c, size=1):
        for dy in range(-(size // 2), size - size // 2):
            for dx in range(-(size // 2), size - size // 2):
                xx, yy = int(x) + dx, int(y) + dy
                if 0 <= xx < self.w and 0 <= yy < self.h:
                    self.px[yy][xx] = c

    def line(self, x0, y0, x1, y1, c, size=1, dash=0):
        steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        for i in range(steps + 1):
            if dash and (i // dash) % 2:
                continue
            t = i / steps
            self.dot(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, c, size)

    def text(self, x, y, s, c=BLACK, scale=2):
        for ch in s.upper():
            rows = FONT.get(ch, FONT[' ']).split()
            for r, row in enumerate(rows):
                for col, bit in enumerate(row):
                    if bit == '1':
                        for sy in range(scale):
                            for sx in range(scale):
                                self.dot(x + col * scale + sx, y + r * scale + sy, c)
            x += 6 * scale

    def png(self, path):
        raw = b''.join(b'\x00' + bytes(v for p in row for v in p) for row in self.px)

        def chunk(kind, data):
            return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)

        with open(path, 'wb') as f:
            f.write(b'\x89PNG\r\n\x1a\n')
            f.write(chunk(b'IHDR', struct.pack('>IIBBBBB', self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b'IDAT', zlib.compress(raw, 9)))
            f.write(chunk(b'IEND', b''))


def panel(cv, x0, y0, w, h, title, xs, series, ymax):
    """series: [(label, [y...], colour)]; xs: log2 n."""
    xmin, xmax = 0, max(xs) * 1.05
    X = lambda v: x0 + (v - xmin) / (xmax - xmin) * w
    Y = lambda v: y0 + h - v / ymax * h
    for t in range(0, int(ymax) + 1, max(1, int(ymax) // 5)):
        cv.line(x0, Y(t), x0 + w, Y(t), GREY)
        cv.text(x0 - 40, Y(t) - 6, str(t))
    for n, lx in zip(['10', '100', '1E3', '1E4', '1E5'], xs):
        cv.line(X(lx), y0 + h, X(lx), y0 + h + 5, BLACK)
        cv.text(X(lx) - 16, y0 + h + 10, n)
    cv.line(x0, y0 + h, x0 + w, y0 + h, BLACK, 2)
    cv.line(x0, y0, x0, y0 + h, BLACK, 2)
    cv.text(x0, y0 - 28, title)
    cv.text(x0 + w // 2 - 36, y0 + h + 32, 'N (LOG)')
    for i, (label, ys, colour) in enumerate(series):
        dash = 6 if 'LOG2' in label else 0
        pts = [(X(a), Y(b)) for a, b in zip(xs, ys)]
        for (ax, ay), (bx, by) in zip(pts, pts[1:]):
            cv.line(ax, ay, bx, by, colour, 2, dash)
        for px, py in pts:
            cv.dot(px, py, colour, 7)
        cv.line(x0 + 14, y0 + 14 + i * 20, x0 + 40, y0 + 14 + i * 20, colour, 3, dash)
        cv.text(x0 + 48, y0 + 8 + i * 20, label, colour)


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    xs = [float(r['log2n']) for r in rows]
    f = lambda k: [float(r[k]) for r in rows]
    ref = list(xs)
    cv = Canvas(W, H)
    top = max(f('agree_rounds') + ref) * 1.1
    panel(cv, 70, 50, 380, 300, 'ROUNDS TO THE LAST PROCESS', xs,
          [('AGREE', f('agree_rounds'), COLOURS[0]), ('REVOKE', f('revoke_rounds'), COLOURS[1]),
           ('NOTICE', f('notice_rounds'), COLOURS[2]), ('LOG2 N', ref, COLOURS[3])], top)
    ref4 = [4 * x for x in xs]
    top = max(f('revoke_max') + f('agree_max') + ref4) * 1.1
    panel(cv, 580, 50, 380, 300, 'MAX MESSAGES AT ONE PROCESS', xs,
          [('AGREE', f('agree_max'), COLOURS[0]), ('REVOKE', f('revoke_max'), COLOURS[1]),
           ('NOTICE', f('notice_max'), COLOURS[2]), ('4 LOG2 N', ref4, COLOURS[3])], top)
    cv.png(sys.argv[2])


if __name__ == '__main__':
    main()
