#!/usr/bin/env bash
# ftmpi next to Debian's Open MPI and MPICH, in one session, on the same
# sources (benchmarks/pingpong.c, coll.c, hello.c, startup.c): each repetition runs the
# three MPIs back to back, and every figure is the median over the
# repetitions. The last two columns are ftmpi's ratio to the better of the
# two others and to Open MPI alone: for times, < 1 is faster; for
# bandwidth, > 1 is faster. The start-up rows split `-n 2` of startup.c:
# to_main (launcher start to the last rank's main), init (the longest
# MPI_Init), to_after_init (launcher start to the last rank's first
# instruction after MPI_Init), finalize (the longest MPI_Finalize) and exit
# (the last rank's exit to the launcher's).
#
#   benchmarks/compare.sh <ftmpi install prefix> [repetitions (default 5)]
#
# Ping-pong figures at each size of docs/performance.md's table (ppN_us latency, bwN
# MB/s), also for ftmpi over libfabric's tcp (column ftmpi_tcp, left out
# with FTMPI_COMPARE_TCP=0); collectives at 2 ranks from 8 B to 1 MiB, at 4
# ranks the 8-byte ones.
#
# Needs ftmpi installed (meson install) and, for the peers, Debian's
# openmpi-bin + libopenmpi-dev and mpich + libmpich-dev; an MPI that is
# missing is left out. Runs as root (Open MPI is told to allow it).
# Point-to-point and the 2-rank collectives bind both ranks to cores. The
# 4-rank collectives oversubscribe the 2 cores, each MPI with its own
# default placement: ftmpirun binds ranks 0-1 to the first core and 2-3 to
# the second, Open MPI and MPICH leave them unbound. Column ompi_blocks is
# Open MPI given ftmpi's placement (a rankfile, and mpi_yield_when_idle,
# which Open MPI sets by itself only when it sees the oversubscription); it
# is not part of the ratios. Those times are context switches, and each run
# of coll.c settles in one of a few scheduling rhythms (about 11, 22 or 33
# µs for the barrier, 0.4 or 11 µs for the bcast), so ftmpi and Open MPI run
# them FTMPI_COMPARE_OVERSUB_RUNS times (default 3) per repetition and those
# rows are medians of reps x that many runs (MPICH, which takes 8 ms per
# call there, runs once).
set -euo pipefail
prefix=$1 reps=${2:-5} tcp=${FTMPI_COMPARE_TCP:-1} oversub=${FTMPI_COMPARE_OVERSUB_RUNS:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0

mpis=()
# bind: 2 ranks on 2 cores; nobind: start-up; over: 4 ranks on 2 cores.
declare -A cc run bind nobind over
if [[ -x $prefix/bin/ftmpicc ]]; then
    mpis+=(ftmpi)
    cc[ftmpi]=$prefix/bin/ftmpicc run[ftmpi]=$prefix/bin/ftmpirun
    bind[ftmpi]="--bind-to core" nobind[ftmpi]="--bind-to none" over[ftmpi]=""
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpis+=(ompi)
    cc[ompi]=mpicc.openmpi run[ompi]=mpirun.openmpi
    bind[ompi]="--bind-to core" nobind[ompi]="--oversubscribe --bind-to none" over[ompi]=${nobind[ompi]}
    cores=$(nproc)
    for r in 0 1 2 3; do echo "rank $r=localhost slot=$((r * cores / 4))"; done >"$work/rankfile"
    over_blocks="--oversubscribe --rankfile $work/rankfile --bind-to core:overload-allowed --mca mpi_yield_when_idle 1"
fi
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
    mpis+=(mpich)
    cc[mpich]=mpicc.mpich run[mpich]=mpirun.mpich
    bind[mpich]="-bind-to core" nobind[mpich]="-bind-to none" over[mpich]=${nobind[mpich]}
fi
[[ ${#mpis[@]} -gt 0 ]] || { echo "compare.sh: no MPI found" >&2; exit 1; }

for m in "${mpis[@]}"; do
    for prog in pingpong coll hello startup; do
        "${cc[$m]}" -O2 "$here/$prog.c" -o "$work/$prog.$m"
    done
done

# figure NAME MPI VALUE: one sample.
figure() { [[ -z $3 ]] || echo "$3" >>"$work/fig.$1.$2"; }
# 8, 1k, 64k, 1m, 4m: a size in figure names.
size_name() { awk -v n="$1" 'BEGIN { if (n >= 1048576) printf "%dm", n / 1048576; else if (n >= 1024) printf "%dk", n / 1024; else print n }'; }
# The ping-pong output in $work/out: latency (µs) and bandwidth (MB/s) at
# each size of docs/performance.md's table, as MPI $1.
pingpong_figures() {
    local n
    for n in 8 1024 4096 16384 65536 1048576 4194304; do
        figure "pp$(size_name $n)_us" "$1" "$(awk -v n=$n '$1 == n { print $2 }' "$work/out")"
        figure "bw$(size_name $n)" "$1" "$(awk -v n=$n '$1 == n { print $3 }' "$work/out")"
    done
}
# coll_figures MPI COLUMN NP MAX LAUNCH-OPTIONS...: one run of coll.c on NP
# ranks up to MAX bytes, its figures as COLUMN.
coll_figures() {
    local m=$1 col=$2 np=$3 max=$4 n
    shift 4
    timeout 300 "${run[$m]}" -n "$np" "$@" "$work/coll.$m" "$max" >"$work/out" 2>/dev/null || true
    figure "barrier${np}_us" "$col" "$(awk '$1 == "barrier_us" { print $2 }' "$work/out")"
    for n in 8 1024 65536 1048576; do
        [[ $n -gt $max ]] && continue
        figure "bcast$(size_name $n)_${np}_us" "$col" "$(awk -v n=$n '$1 == n { print $2 }' "$work/out")"
        figure "allreduce$(size_name $n)_${np}_us" "$col" "$(awk -v n=$n '$1 == n { print $3 }' "$work/out")"
    done
}
median() { [[ -s $1 ]] || { echo nan; return; }; sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for ((r = 0; r < reps; ++r)); do
    for m in "${mpis[@]}"; do
        # shellcheck disable=SC2086
        timeout 300 "${run[$m]}" -n 2 ${bind[$m]} "$work/pingpong.$m" >"$work/out" 2>/dev/null || true
        pingpong_figures "$m"
        # ftmpi over libfabric's tcp as well (ping-pong only): the path
        # between nodes, on this node.
        if [[ $m == ftmpi && $tcp == 1 ]]; then
            # shellcheck disable=SC2086
            FTMPI_PROVIDER=tcp timeout 300 "${run[$m]}" -n 2 ${bind[$m]} "$work/pingpong.$m" >"$work/out" 2>/dev/null || true
            pingpong_figures ftmpi_tcp
        fi
        # shellcheck disable=SC2086
        coll_figures "$m" "$m" 2 1048576 ${bind[$m]}
        # 4 ranks on 2 cores: the small sizes only (large ones take long
        # oversubscribed), and $oversub runs for ftmpi and Open MPI.
        runs=1
        [[ $m != mpich ]] && runs=$oversub
        for ((k = 0; k < runs; ++k)); do
            # shellcheck disable=SC2086
            coll_figures "$m" "$m" 4 8 ${over[$m]}
            # shellcheck disable=SC2086
            if [[ $m == ompi ]]; then coll_figures ompi ompi_blocks 4 8 $over_blocks; fi
        done
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout 60 "${run[$m]}" -n 2 ${nobind[$m]} "$work/hello.$m" >/dev/null 2>&1 || true
        figure hello_s "$m" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')"
        # Where start-up goes (startup.c prints each rank's wall-clock times):
        # launch to main, MPI_Init, launch to the first instruction after
        # MPI_Init, MPI_Finalize, and the launcher's exit after the last rank.
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        timeout 60 "${run[$m]}" -n 2 ${nobind[$m]} "$work/startup.$m" >"$work/out" 2>/dev/null || true
        end=$(date +%s.%N)
        awk -v t0="$start" -v t9="$end" '$1 == "startup" {
                if ($3 - t0 > a) a = $3 - t0; if ($4 - $3 > b) b = $4 - $3; if ($4 - t0 > c) c = $4 - t0
                if ($6 - $5 > d) d = $6 - $5; if ($6 > last) last = $6; n++ }
            END { if (n == 2) printf "%.4f %.4f %.4f %.4f %.4f\n", a, b, c, d, t9 - last }' "$work/out" >"$work/parts"
        if [[ -s $work/parts ]]; then
            read -r a b c d e <"$work/parts"
            figure to_main_s "$m" "$a"
            figure init_s "$m" "$b"
            figure to_after_init_s "$m" "$c"
            figure finalize_s "$m" "$d"
            figure exit_s "$m" "$e"
        fi
    done
done

cols=("${mpis[@]}")
[[ $tcp == 1 && -n ${cc[ftmpi]:-} ]] && cols+=(ftmpi_tcp)
[[ -n ${cc[ompi]:-} ]] && cols+=(ompi_blocks)
echo "# 4-rank rows: medians of $((reps * oversub)) runs for ftmpi and Open MPI, $reps for MPICH"
printf "%-22s" "figure (median of $reps)"
for m in "${cols[@]}"; do printf " %10s" "$m"; done
printf " %12s %12s\n" "ftmpi/best" "ftmpi/ompi"
for f in pp8_us pp1k_us pp4k_us pp16k_us pp64k_us pp1m_us pp4m_us bw8 bw1k bw4k bw16k bw64k bw1m bw4m \
         barrier2_us bcast8_2_us bcast1k_2_us bcast64k_2_us bcast1m_2_us \
         allreduce8_2_us allreduce1k_2_us allreduce64k_2_us allreduce1m_2_us barrier4_us bcast8_4_us allreduce8_4_us \
         hello_s to_main_s init_s to_after_init_s finalize_s exit_s; do
    printf "%-22s" "$f"
    declare -A val=()
    for m in "${cols[@]}"; do
        val[$m]=$(median "$work/fig.$f.$m")
        printf " %10s" "${val[$m]}"
    done
    ratio=""
    if [[ -n ${val[ftmpi]:-} ]]; then
        best=""
        for m in "${mpis[@]}"; do
            [[ $m == ftmpi || ${val[$m]} == nan ]] && continue
            if [[ -z $best ]]; then best=${val[$m]}
            elif [[ $f == bw* ]]; then best=$(awk -v a="$best" -v b="${val[$m]}" 'BEGIN { print (b > a) ? b : a }')
            else best=$(awk -v a="$best" -v b="${val[$m]}" 'BEGIN { print (b < a) ? b : a }'); fi
        done
        [[ -n $best && ${val[ftmpi]} != nan ]] && ratio=$(awk -v a="${val[ftmpi]}" -v b="$best" 'BEGIN { printf "%.2f", a / b }')
    fi
    vs_ompi=""
    [[ -n ${val[ftmpi]:-} && -n ${val[ompi]:-} && ${val[ftmpi]} != nan && ${val[ompi]} != nan ]] &&
        vs_ompi=$(awk -v a="${val[ftmpi]}" -v b="${val[ompi]}" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
    printf " %12s %12s\n" "${ratio:--}" "${vs_ompi:--}"
    unset val
done
