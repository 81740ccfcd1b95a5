#!/bin/sh
# Time from a failure to the job back at full size (detection, revoke,
# shrink, spawn, merge, split), measured by examples/respawn.c: each run
# kills 10 ranks one after the other (every other one a freshly respawned
# process) and prints one line per recovery. Prints the median and the
# slowest recovery per job size.
#
#   benchmarks/respawn.sh <ftmpirun> <respawn binary> [runs (default 3)] [sizes (default "4 8")]
set -eu
run=$1 prog=$2 runs=${3:-3} sizes=${4:-"4 8"}
for n in $sizes; do
    out=$(mktemp)
    i=0
    while [ "$i" -lt "$runs" ]; do
        timeout 300 "$run" -n "$n" "$prog" 10 "$((i + 1))" 2>/dev/null |
            sed -n 's/.* again \([0-9.]*\) s after.*/\1/p' >>"$out"
        i=$((i + 1))
    done
    sort -n "$out" | awk -v n="$n" '{ t[NR] = $1 } END {
        if (NR == 0) { printf "%d ranks: no recovery measured\n", n; exit 1 }
        m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        printf "%d ranks: %d recoveries, median %.3f s, slowest %.3f s\n", n, NR, m, t[NR] }'
    rm -f "$out"
done
