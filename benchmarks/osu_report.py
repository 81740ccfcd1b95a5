#!/usr/bin/env python3
"""ftmpi's ratio to the best peer over the outputs of benchmarks/osu_compare.sh.

usage: osu_report.py RAW-DIR [--summary]

RAW-DIR holds one OSU output per run, named NP.BENCHMARK.MPI.REP (NP "2n":
two nodes, one rank each). Every
figure is the median over the repetitions; the ratio is ftmpi's time over
the best peer's (for bandwidths, the best peer's over ftmpi's), so that a
ratio above 1 is always ftmpi slower. The summary gives per benchmark the
median ratio over its sizes and the worst one.
"""
import os
import statistics
import sys

PEERS = ("ompi", "mpich")


def higher_is_better(bench):
    return "_bw" in bench or "bibw" in bench or "mbw_mr" in bench


def nonblocking(bench):
    return bench.startswith("osu_i") and bench != "osu_init"


def numbers(line):
    try:
        return [float(f) for f in line.split()]
    except ValueError:
        return None


def figures(bench, text):
    """{size: value} from one OSU output."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        f = numbers(line)
        if not f:
            continue
        if bench.endswith("barrier"):
            # No size column: barrier prints its latency; ibarrier
            # Overall, Compute, Pure Comm., Overlap.
            out[0] = f[2] if nonblocking(bench) and len(f) >= 4 else f[0]
        elif len(f) >= 2 and f[0].is_integer():
            # Nonblocking: Size, Overall, Compute, Pure Comm., Overlap.
            out[int(f[0])] = f[3] if nonblocking(bench) and len(f) >= 4 else f[1]
    return out


def load(raw):
    """{(np, bench): {mpi: {size: [values]}}}"""
    runs = {}
    for name in sorted(os.listdir(raw)):
        parts = name.split(".")
        if len(parts) != 4:
            continue
        np_, bench, mpi, _ = parts
        with open(os.path.join(raw, name), errors="replace") as f:
            got = figures(bench, f.read())
        sizes = runs.setdefault((np_, bench), {}).setdefault(mpi, {})
        for size, value in got.items():
            sizes.setdefault(size, []).append(value)
    return runs


def size_name(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20}M"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10}K"
    return str(n)


def ratios(bench, by_mpi):
    """[(size, {mpi: median}, ratio or None)] over the sizes ftmpi has."""
    rows = []
    for size in sorted(by_mpi.get("ftmpi", {})):
        med = {m: statistics.median(v[size]) for m, v in by_mpi.items() if size in v}
        peers = [med[m] for m in PEERS if m in med]
        ratio = None
        if peers and med["ftmpi"] > 0:
            if higher_is_better(bench):
                ratio = max(peers) / med["ftmpi"]
            elif min(peers) > 0:
                ratio = med["ftmpi"] / min(peers)
        rows.append((size, med, ratio))
    return rows


def main():
    raw = sys.argv[1]
    summary_only = "--summary" in sys.argv[2:]
    runs = load(raw)
    summary = []
    for (np_, bench), by_mpi in sorted(runs.items(), key=lambda kv: (kv[0][0].endswith("n"), int(kv[0][0].rstrip("n")), kv[0][1])):
        rows = ratios(bench, by_mpi)
        unit = "MB/s" if higher_is_better(bench) else "us"
        if not summary_only:
            where = "2 nodes, 1 rank each" if np_.endswith("n") else f"{np_} ranks"
            print(f"\n## {bench}, {where} ({unit}; ratio > 1: ftmpi slower)")
            print(f"{'size':>8} {'ftmpi':>10} {'ompi':>10} {'mpich':>10} {'ratio':>7}")
            for size, med, ratio in rows:
                cells = " ".join(f"{med[m]:10.2f}" if m in med else f"{'-':>10}" for m in ("ftmpi",) + PEERS)
                mark = "  <-" if ratio is not None and ratio > 1.5 else ""
                print(f"{size_name(size):>8} {cells} {ratio:7.2f}{mark}" if ratio is not None
                      else f"{size_name(size):>8} {cells} {'-':>7}")
        got = [(r, s) for s, _, r in rows if r is not None]
        if got:
            worst = max(got)
            summary.append((bench, np_, statistics.median(r for r, _ in got), worst[0], worst[1]))
        else:
            summary.append((bench, np_, None, None, None))
    print("\n## Summary: ftmpi over the best peer (> 1: slower); 4 ranks against Open MPI; 2n: two nodes")
    print(f"{'benchmark':<26} {'ranks':>5} {'median':>7} {'worst':>7} {'at':>6}")
    for bench, np_, med, worst, at in summary:
        if med is None:
            print(f"{bench:<26} {np_:>5} {'-':>7} {'-':>7} {'-':>6}")
        else:
            flag = "  <-" if med > 1.0 or worst > 1.5 else ""
            print(f"{bench:<26} {np_:>5} {med:7.2f} {worst:7.2f} {size_name(at):>6}{flag}")


if __name__ == "__main__":
    main()
