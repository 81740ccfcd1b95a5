#!/bin/sh
# Agreement cost, two builds side by side in one run (A/B): for each job
# size, `runs` runs of benchmarks/recovery.c with each build, interleaved
# (A, B, A, B, ...), so both see the same machine state. Prints the median
# per-call agree and iagree time of each build and B's ratio to A.
#
#   benchmarks/agree_ab.sh <build dir A> <build dir B> [runs (default 5)] [sizes (default "3 4 5 6 7 8")]
#
# A build dir is a meson build of ftmpi (launcher/ftmpirun and
# benchmarks/bench_recovery inside).
set -eu
a=$1 b=$2 runs=${3:-5} sizes=${4:-"3 4 5 6 7 8"}
field() { sed -n "s/^$1 *\([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{ t[NR] = $1 } END { print (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }'; }
printf "%5s %12s %12s %7s %12s %12s %7s\n" ranks "agree A us" "agree B us" "B/A" "iagree A" "iagree B" "B/A"
for n in $sizes; do
    out=$(mktemp -d)
    i=0
    while [ "$i" -lt "$runs" ]; do
        for side in a b; do
            dir=$a
            [ "$side" = b ] && dir=$b
            timeout 300 "$dir/launcher/ftmpirun" -n "$n" "$dir/benchmarks/bench_recovery" >"$out/run" 2>/dev/null || true
            field agree_us <"$out/run" >>"$out/agree_$side"
            field iagree_us <"$out/run" >>"$out/iagree_$side"
        done
        i=$((i + 1))
    done
    ga=$(median <"$out/agree_a") gb=$(median <"$out/agree_b") ia=$(median <"$out/iagree_a") ib=$(median <"$out/iagree_b")
    awk -v n="$n" -v ga="$ga" -v gb="$gb" -v ia="$ia" -v ib="$ib" 'BEGIN {
        printf "%5d %12.2f %12.2f %7.2f %12.2f %12.2f %7.2f\n", n, ga, gb, gb / ga, ia, ib, ib / ia }'
    rm -rf "$out"
done
