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
# Needs ftmpi installed (meson install) and, for the peers, Debian's
# openmpi-bin + libopenmpi-dev and mpich + libmpich-dev; an MPI that is
# missing is left out. Runs as root (Open MPI is told to allow it).
# Point-to-point and the 2-rank collectives bind both ranks to cores; the
# 4-rank collectives oversubscribe the 2 cores, unbound.
set -euo pipefail
prefix=$1 reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0

mpis=()
declare -A cc run bind nobind
if [[ -x $prefix/bin/ftmpicc ]]; then
    mpis+=(ftmpi)
    cc[ftmpi]=$prefix/bin/ftmpicc run[ftmpi]=$prefix/bin/ftmpirun
    bind[ftmpi]="--bind-to core" nobind[ftmpi]="--bind-to none"
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpis+=(ompi)
    cc[ompi]=mpicc.openmpi run[ompi]=mpirun.openmpi
    bind[ompi]="--bind-to core" nobind[ompi]="--oversubscribe --bind-to none"
fi
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
    mpis+=(mpich)
    cc[mpich]=mpicc.mpich run[mpich]=mpirun.mpich
    bind[mpich]="-bind-to core" nobind[mpich]="-bind-to none"
fi
[[ ${#mpis[@]} -gt 0 ]] || { echo "compare.sh: no MPI found" >&2; exit 1; }

for m in "${mpis[@]}"; do
    for prog in pingpong coll hello startup; do
        "${cc[$m]}" -O2 "$here/$prog.c" -o "$work/$prog.$m"
    done
done

# figure NAME MPI VALUE: one sample.
figure() { echo "$3" >>"$work/fig.$1.$2"; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for ((r = 0; r < reps; ++r)); do
    for m in "${mpis[@]}"; do
        # shellcheck disable=SC2086
        timeout 300 "${run[$m]}" -n 2 ${bind[$m]} "$work/pingpong.$m" >"$work/out" 2>/dev/null || true
        figure pp8_us "$m" "$(awk '$1 == 8 { print $2 }' "$work/out")"
        figure pp1k_us "$m" "$(awk '$1 == 1024 { print $2 }' "$work/out")"
        figure bw1m "$m" "$(awk '$1 == 1048576 { print $3 }' "$work/out")"
        figure bw4m "$m" "$(awk '$1 == 4194304 { print $3 }' "$work/out")"
        for np in 2 4; do
            b=${bind[$m]}
            [[ $np -gt 2 ]] && b=${nobind[$m]}
            # shellcheck disable=SC2086
            timeout 300 "${run[$m]}" -n $np $b "$work/coll.$m" 8 >"$work/out" 2>/dev/null || true
            figure "barrier${np}_us" "$m" "$(awk '$1 == "barrier_us" { print $2 }' "$work/out")"
            figure "bcast8_${np}_us" "$m" "$(awk '$1 == 8 { print $2 }' "$work/out")"
            figure "allreduce8_${np}_us" "$m" "$(awk '$1 == 8 { print $3 }' "$work/out")"
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

printf "%-22s" "figure (median of $reps)"
for m in "${mpis[@]}"; do printf " %10s" "$m"; done
printf " %12s %12s\n" "ftmpi/best" "ftmpi/ompi"
for f in pp8_us pp1k_us bw1m bw4m barrier2_us bcast8_2_us allreduce8_2_us barrier4_us bcast8_4_us allreduce8_4_us \
         hello_s to_main_s init_s to_after_init_s finalize_s exit_s; do
    printf "%-22s" "$f"
    declare -A val=()
    for m in "${mpis[@]}"; do
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
