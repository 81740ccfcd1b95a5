#!/usr/bin/env python3
"""No source file of the tree over about 600 lines, no function over about
100: past that a file holds several concerns and a function several steps,
and a newcomer cannot hold either in view. mpi.h (the standard's API) and
generated files are excepted. Functions are found by universal-ctags (its
`end` field); without it the function check is skipped (exit 77) after the
file check.

usage: sizes.py SOURCE_ROOT"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import report  # noqa: E402

MAX_FILE = 620  # "about 600"
MAX_FUNCTION = 105  # "about 100"
TOPS = ("runtime", "transport", "ft", "mpi", "launcher", "examples", "benchmarks", "tests")
SUFFIXES = (".c", ".cpp", ".h", ".hpp")
EXCEPTED = {os.path.join("mpi", "include", "mpi.h")}


def sources(root):
    for top in TOPS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x not in ("corpus",)]
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(d, f), root)
                if f.endswith(SUFFIXES) and rel not in EXCEPTED:
                    yield rel


def main():
    root = sys.argv[1]
    found = []
    files = list(sources(root))
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as src:
            n = sum(1 for _ in src)
        if n > MAX_FILE:
            found.append(f"{rel}: {n} lines")
    ctags = shutil.which("ctags-universal") or shutil.which("ctags")
    if ctags is None:
        print("ctags (universal-ctags) not found: function lengths not checked")
        status = report(found, f"files over {MAX_FILE} lines: {len(found)}")
        return status or 77
    out = subprocess.run([ctags, "-L", "-", "--fields=+ne", "--kinds-c++=f", "--kinds-c=f", "--output-format=json",
                          "-o", "-"], input="\n".join(files), capture_output=True, text=True, cwd=root, check=True)
    for line in out.stdout.splitlines():
        t = json.loads(line)
        if "end" in t and t["end"] - t["line"] + 1 > MAX_FUNCTION:
            found.append(f"{t['path']}:{t['line']}: {t['name']}: {t['end'] - t['line'] + 1} lines")
    return report(found, f"files over {MAX_FILE} lines and functions over {MAX_FUNCTION}: {len(found)}")


if __name__ == "__main__":
    sys.exit(main())
