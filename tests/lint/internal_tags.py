#!/usr/bin/env python3
"""No internal tag is built or read by hand: outside the tag layout
(mpi/p2p/internal_tag.hpp) and the wire format (transport/match_bits.hpp),
no line of the library that names a tag or an epoch shifts by a literal
count or masks with a literal. Such a line is where a field's width is
miscounted unseen (a validate epoch once lost its top bit that way).

usage: internal_tags.py SOURCE_ROOT"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import report  # noqa: E402

LAYOUT = {os.path.join("mpi", "p2p", "internal_tag.hpp"), os.path.join("transport", "match_bits.hpp")}
NAMES = re.compile(r"tag|epoch", re.I)
HAND = re.compile(r"(<<|>>)\s*\d+|&\s*(0x[0-9a-fA-F]+|\d{2,})\b")


def main():
    root = sys.argv[1]
    found = []
    for top in ("mpi", "ft", "transport", "runtime"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if rel in LAYOUT or rel.startswith(os.path.join("mpi", "include")):
                    continue
                with open(path, encoding="utf-8") as src:
                    for n, line in enumerate(src, 1):
                        code = line.split("//")[0]
                        if NAMES.search(code) and HAND.search(code):
                            found.append(f"{rel}:{n}: {line.strip()}")
    return report(found, f"internal tags built by hand outside the layout: {len(found)}")


if __name__ == "__main__":
    sys.exit(main())
