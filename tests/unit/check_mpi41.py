#!/usr/bin/env python3
"""check_mpi41.py LIBFTMPI MPI_H LIST: every function of LIST (MPI 4.0 and
4.1's, as MPICH 4.0.2 declares them) is declared in mpi.h and exported by
the library with its PMPI twin at the same address, but those LIST marks
"missing"; a function marked missing that the library now exports fails the
check too, so that the mark goes. Prints how many are there and missing."""
import re
import subprocess
import sys


def main():
    lib, header, listing = sys.argv[1:4]
    syms = {}
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "T":
            syms[f[2]] = f[0]
    declared = set(re.findall(r"^\s*(?:[A-Za-z_][A-Za-z_0-9 ]*[ *])(MPI_[A-Za-z0-9_]+)\s*\(",
                              open(header).read(), re.M))
    bad, have, missing = [], 0, 0
    for line in open(listing):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, *mark = line.split()
        exported = name in syms and syms.get("P" + name) == syms[name]
        if mark == ["missing"]:
            missing += 1
            if name in syms:
                bad.append(f"{name} is marked missing but the library exports it: remove the mark")
            continue
        have += 1
        if name not in declared:
            bad.append(f"{name} is not declared in mpi.h")
        if not exported:
            bad.append(f"{name} is not exported with its PMPI twin")
    for b in bad:
        print("FAIL:", b)
    print(f"MPI 4.1 functions: {have} there, {missing} marked missing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
