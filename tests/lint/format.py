#!/usr/bin/env python3
"""Every C and C++ source of the tree is laid out as .clang-format says
(mpi/include/, the API headers written to the standard's layout, excepted;
tables keep their own layout between clang-format off/on comments).
Skipped (exit 77) where clang-format is not installed.

usage: format.py SOURCE_ROOT"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import report  # noqa: E402
from sizes import sources  # noqa: E402


def main():
    root = sys.argv[1]
    tool = shutil.which("clang-format") or shutil.which("clang-format-14")
    if tool is None:
        print("clang-format not found: layout not checked")
        return 77
    files = [f for f in sources(root) if not f.startswith(os.path.join("mpi", "include") + os.sep)]
    found = []
    for i in range(0, len(files), 64):
        batch = files[i:i + 64]
        r = subprocess.run([tool, "--dry-run", "--style=file"] + batch, cwd=root, capture_output=True, text=True)
        seen = {line.split(":")[0] for line in r.stderr.splitlines() if ": warning: code should be clang-formatted" in line}
        found += sorted(seen)
    return report(found, f"files not laid out as .clang-format says: {len(found)} (clang-format -i FILE)")


if __name__ == "__main__":
    sys.exit(main())
