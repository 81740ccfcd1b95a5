#!/usr/bin/env bash
# The OSU micro-benchmarks 7.2, unmodified, built and run as users do with
# ftmpi, Debian's Open MPI and MPICH in one session, and ftmpi's ratio to
# the best of the others per benchmark and size (benchmarks/osu_report.py).
#
#   benchmarks/osu_compare.sh <ftmpi install prefix> [repetitions (default 2)]
#
# Each repetition runs every benchmark with each MPI in turn (alternating,
# so that the machine's state drifts over all of them alike; each
# repetition starts with the next MPI):
#   - at 2 ranks bound to cores: the point-to-point benchmarks (standard and
#     persistent), the one-sided ones, and every blocking and nonblocking
#     collective;
#   - at 4 ranks on 2 cores, each MPI with its own default placement: the
#     collectives and the neighborhood ones, ftmpi and Open MPI only (MPICH
#     spends milliseconds per call oversubscribed: hours for the suite).
#   - with FTMPI_OSU_NP=2n, between two nodes of the emulated cluster
#     (tests/cluster/rig.sh, started and stopped here): latency and
#     bandwidth, one rank per node under srun, each MPI over tcp (ftmpi over
#     libfabric's tcp provider, Open MPI's tcp BTL, MPICH's UCX tcp).
# osu_latency_mt and osu_latency_mp are left out (threads and forked helpers
# on 2 cores measure the scheduler). For the nonblocking collectives the
# figure is OSU's "Pure Comm." time, the collective alone.
#
# Environment:
#   FTMPI_OSU_ONLY   a regular expression: only the benchmarks it matches
#                    (for example 'osu_reduce$|osu_fop')
#   FTMPI_OSU_NP     the rank counts to run (default "2 4"; "2n": two nodes)
#   FTMPI_OSU_BUILD  a directory that keeps the three builds between runs
#                    (default: a temporary one)
#   FTMPI_OSU_RAW    a directory that keeps every run's output
#   FTMPI_OSU_OPTS   options given to every benchmark (for example
#                    "-i 200 -x 20": fewer iterations, for more repetitions)
#   FTMPI_THIRD_PARTY  where osu-micro-benchmarks-7.2.tar.gz is (default
#                    ../shared/third_party next to the checkout)
#
# Needs ftmpi installed (meson install) and, for the peers, Debian's
# openmpi-bin + libopenmpi-dev and mpich + libmpich-dev; an MPI that is
# missing is left out. Runs as root (Open MPI is told to allow it).
set -euo pipefail
prefix=$1 reps=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
src=${FTMPI_THIRD_PARTY:-$(cd "$here/../.." && pwd)/shared/third_party}
tarball=$src/osu-micro-benchmarks-7.2.tar.gz
[[ -f $tarball ]] || { echo "osu_compare.sh: no $tarball" >&2; exit 1; }
only=${FTMPI_OSU_ONLY:-.} nps=${FTMPI_OSU_NP:-2 4} extra=${FTMPI_OSU_OPTS:-}
work=$(mktemp -d /tmp/ftmpi-osu.XXXXXX)
trap 'rm -rf "$work"' EXIT
build=${FTMPI_OSU_BUILD:-$work/build} raw=${FTMPI_OSU_RAW:-$work/raw}
mkdir -p "$build" "$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0

mpis=()
declare -A cc cxx run bind over
if [[ -x $prefix/bin/ftmpicc ]]; then
    mpis+=(ftmpi)
    cc[ftmpi]=$prefix/bin/ftmpicc cxx[ftmpi]=$prefix/bin/ftmpicxx run[ftmpi]=$prefix/bin/ftmpirun
    bind[ftmpi]="--bind-to core" over[ftmpi]=""
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    mpis+=(ompi)
    cc[ompi]=mpicc.openmpi cxx[ompi]=mpicxx.openmpi run[ompi]=mpirun.openmpi
    bind[ompi]="--bind-to core" over[ompi]="--oversubscribe"
fi
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
    mpis+=(mpich)
    cc[mpich]=mpicc.mpich cxx[mpich]=mpicxx.mpich run[mpich]=mpirun.mpich
    bind[mpich]="-bind-to core" over[mpich]=""
fi
[[ ${#mpis[@]} -gt 0 ]] || { echo "osu_compare.sh: no MPI found" >&2; exit 1; }

# One build of the suite per MPI, with its own compiler wrappers.
for m in "${mpis[@]}"; do
    dir=$build/$m/osu-micro-benchmarks-7.2
    [[ -f $build/$m/built ]] && continue
    rm -rf "${build:?}/$m" && mkdir -p "$build/$m"
    tar xzf "$tarball" -C "$build/$m"
    echo "osu_compare.sh: building OSU 7.2 with $m" >&2
    (cd "$dir" && ./configure CC="${cc[$m]}" CXX="${cxx[$m]}" >"$build/$m/configure.log" 2>&1 &&
        make -j2 >"$build/$m/make.log" 2>&1) || { echo "osu_compare.sh: OSU does not build with $m" >&2; exit 1; }
    touch "$build/$m/built"
done

p2p=(pt2pt/standard/osu_{latency,bw,bibw,multi_lat,mbw_mr} pt2pt/persistent/osu_{latency,bw,bibw}_persistent)
rma=(one-sided/osu_{put_latency,get_latency,acc_latency,fop_latency,cas_latency,get_acc_latency,put_bw,get_bw,put_bibw})
coll=()
for c in allgather allgatherv allreduce alltoall alltoallv alltoallw bcast gather gatherv reduce reduce_scatter scatter scatterv barrier; do
    coll+=("collective/blocking/osu_$c" "collective/non_blocking/osu_i$c")
done
# The neighborhood ones need more than 2 ranks (OSU's topology): 4 only.
neigh=()
for c in allgather allgatherv alltoall alltoallv alltoallw; do
    neigh+=("collective/neighborhood/osu_neighbor_$c" "collective/neighborhood/osu_ineighbor_$c")
done

# Between nodes: the rig's nodes, one rank each, under srun (--mpi=pmix;
# MPICH speaks PMI-2). UCX finds interfaces in /sys, which a network
# namespace entered with nsenter does not remount: each rank gets its own
# /sys, for all three MPIs alike.
nodes_between=(pt2pt/standard/osu_{latency,bw,bibw})
rig=$here/../tests/cluster/rig.sh
declare -A pmi=([ftmpi]=pmix [ompi]=pmix [mpich]=pmi2)
if [[ " $nps " == *" 2n "* ]]; then
    "$rig" start || { echo "osu_compare.sh: the emulated cluster does not start" >&2; exit 1; }
    trap '"$rig" stop >/dev/null 2>&1; rm -rf "$work"' EXIT
fi
across() {
    local m=$1 exe=$2
    # shellcheck disable=SC2086
    timeout 600 "$rig" run srun --mpi="${pmi[$m]}" -N 2 --ntasks-per-node=1 unshare -m sh -c \
        'mount -t sysfs sysfs /sys && exec env OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self UCX_TLS=tcp,self "$0" "$@"' \
        "$exe" $extra
}

# one NP BENCHMARK MPI REP: one run, its output kept as raw/NP.NAME.MPI.REP.
one() {
    local np=$1 b=$2 m=$3 r=$4 opts
    local exe=$build/$m/osu-micro-benchmarks-7.2/c/mpi/$b
    if [[ $np == 2n ]]; then
        across "$m" "$exe" >"$raw/$np.${b##*/}.$m.$r" 2>&1 ||
            echo "osu_compare.sh: ${b##*/} between nodes with $m failed (see $raw)" >&2
        return
    fi
    [[ $np == 2 ]] && opts=${bind[$m]} || opts=${over[$m]}
    # shellcheck disable=SC2086
    timeout 600 "${run[$m]}" -n "$np" $opts "$exe" $extra >"$raw/$np.${b##*/}.$m.$r" 2>&1 ||
        echo "osu_compare.sh: ${b##*/} at $np ranks with $m failed (see $raw)" >&2
}

for ((r = 0; r < reps; ++r)); do
    for np in $nps; do
        if [[ $np == 2 ]]; then list=("${p2p[@]}" "${rma[@]}" "${coll[@]}")
        elif [[ $np == 2n ]]; then list=("${nodes_between[@]}")
        else list=("${coll[@]}" "${neigh[@]}"); fi
        for b in "${list[@]}"; do
            [[ ${b##*/} =~ $only ]] || continue
            # Repetition r starts with the r-th MPI, so that no MPI always
            # has the same place in the sequence (right after another's
            # bandwidth test, say).
            for ((k = 0; k < ${#mpis[@]}; ++k)); do
                m=${mpis[(k + r) % ${#mpis[@]}]}
                [[ $np != 2 && $np != 2n && $m == mpich ]] && continue
                one "$np" "$b" "$m" "$r"
            done
        done
    done
done

echo "# OSU 7.2, $(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $reps repetitions${extra:+, options $extra}"
python3 "$here/osu_report.py" "$raw"
