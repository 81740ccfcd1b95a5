#!/usr/bin/env python3
"""ftmpi_info works, and docs/running.md's knob table names exactly the knobs
of runtime/config.hpp's table, as ftmpi_info --knobs prints them.

usage: knob_docs.py FTMPI_INFO SOURCE_ROOT"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import report  # noqa: E402


def main():
    info, root = sys.argv[1], sys.argv[2]
    problems = []
    env = dict(os.environ, FTMPI_EAGER_LIMIT="4096")
    env.pop("FTMPI_RX_BUFFERS", None)
    out = subprocess.run([info], capture_output=True, text=True, env=env, timeout=60)
    if out.returncode != 0:
        problems.append(f"ftmpi_info exited {out.returncode}: {out.stderr}")
    text = out.stdout
    for want in (r"^ftmpi \d+\.\d+\.\d+$", r"^MPI standard: \d\.\d$", r"^libfabric providers on this node: .+$",
                 r"^  FTMPI_EAGER_LIMIT = 4096 \(set; default 8192\)$",
                 r"^  FTMPI_RX_BUFFERS = 64 \(unset; default 64\)$"):
        if not re.search(want, text, re.M):
            problems.append(f"ftmpi_info's output has no line matching {want!r}")
    bad = subprocess.run([info, "--nonsense"], capture_output=True, text=True, timeout=60)
    if bad.returncode != 2 or "usage" not in bad.stderr:
        problems.append(f"ftmpi_info --nonsense: exit {bad.returncode}, stderr {bad.stderr!r}")
    knobs = subprocess.run([info, "--knobs"], capture_output=True, text=True, timeout=60).stdout
    table = set(re.findall(r"^  (FTMPI_[A-Z0-9_]+) = ", knobs, re.M))
    with open(os.path.join(root, "docs", "running.md"), encoding="utf-8") as f:
        documented = set(re.findall(r"^\| `(FTMPI_[A-Z0-9_]+)` \|", f.read(), re.M))
    if not table:
        problems.append("ftmpi_info --knobs printed no knob")
    for k in sorted(table - documented):
        problems.append(f"{k} is a knob but docs/running.md's table does not list it")
    for k in sorted(documented - table):
        problems.append(f"docs/running.md lists {k}, which is no knob")
    return report(problems,
                  f"knobs: {len(table)} in the table, {len(documented)} documented; problems: {len(problems)}")


if __name__ == "__main__":
    sys.exit(main())
