#!/bin/sh
# Failure-free cost of the failure detector: the ping-pong benchmark with the
# detector on (FTMPI_DETECTOR=1, the default) and off, alternating runs, and
# the median half round trip of each at every size. Each run's figure is
# itself a median of clock readings, which come in steps of about 5 ns
# here, so the medians over runs move by whole steps; the mean over runs
# (last three columns) resolves finer differences.
#
#   benchmarks/ft_overhead.sh <ftmpirun> <bench_pingpong> [runs] [max_bytes]
set -eu
run=$1 pp=$2 runs=${3:-8} max=${4:-1024}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
    for d in 1 0; do
        FTMPI_DETECTOR=$d "$run" -n 2 "$pp" "$max" | awk -v d=$d '/^ +[0-9]/ {print $1, $2}' >> "$tmp/d$d"
    done
    i=$((i + 1))
done
echo "# bytes  on_us  off_us  on/off  on_mean  off_mean  on/off_mean"
for size in $(awk '{print $1}' "$tmp/d1" | sort -n -u); do
    on=$(awk -v s="$size" '$1 == s {print $2}' "$tmp/d1" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    off=$(awk -v s="$size" '$1 == s {print $2}' "$tmp/d0" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    mon=$(awk -v s="$size" '$1 == s {t += $2; n++} END {print t / n}' "$tmp/d1")
    moff=$(awk -v s="$size" '$1 == s {t += $2; n++} END {print t / n}' "$tmp/d0")
    awk -v s="$size" -v a="$on" -v b="$off" -v c="$mon" -v d="$moff" \
        'BEGIN {printf "%7d  %6.3f  %6.3f  %6.3f  %7.4f  %8.4f  %11.3f\n", s, a, b, a / b, c, d, c / d}'
done
