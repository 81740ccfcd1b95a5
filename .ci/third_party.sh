#!/usr/bin/env bash
# Unmodified third-party MPI programs, built with the installed ftmpicc as a
# user would, then run under ftmpirun:
#   - OSU micro-benchmarks 7.2: the whole suite builds; every benchmark runs
#     to completion with small sizes: the point-to-point and one-sided ones
#     (two-process programs; osu_latency_mt under MPI_THREAD_MULTIPLE,
#     osu_latency_mp forking its helpers) at 2 ranks, every blocking,
#     nonblocking and neighborhood collective and the start-up ones at 4;
#   - Intel MPI Benchmarks: IMB-RMA, IMB-MPI1, IMB-NBC and IMB-EXT build under
#     their own -Werror and run their whole lists at 2 ranks (small sizes);
#     IMB-IO builds and runs its blocking benchmarks (its nonblocking ones
#     spend 10 ms of CPU per repetition by design: minutes even when small).
# usage: .ci/third_party.sh PREFIX   (ftmpi installed there)
# The sources are the tarballs in $FTMPI_THIRD_PARTY (default:
# ../shared/third_party next to the checkout); without them it says so and
# exits 0 (nothing to check here).
set -euo pipefail
prefix=$1
src=${FTMPI_THIRD_PARTY:-$(cd "$(dirname "$0")/../.." && pwd)/shared/third_party}
osu_tar=$src/osu-micro-benchmarks-7.2.tar.gz
imb_tar=$src/mpi-benchmarks.tar.gz
if [[ ! -f $osu_tar || ! -f $imb_tar ]]; then
  echo "third-party check: SKIPPED (no $osu_tar or $imb_tar)"
  exit 0
fi
work=$(mktemp -d /tmp/ftmpi-third-party.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc=$prefix/bin/ftmpicc cxx=$prefix/bin/ftmpicxx run=$prefix/bin/ftmpirun

tar xzf "$osu_tar" -C "$work"
osu=$work/osu-micro-benchmarks-7.2/c/mpi
(cd "$work"/osu-micro-benchmarks-7.2 && ./configure CC="$cc" CXX="$cxx" >/dev/null && make -j2 >/dev/null) ||
  { echo "FAIL: OSU 7.2 does not build"; exit 1; }
passed=0
# osu NP BENCHMARK [RESULT-REGEX]: runs it with small sizes, and checks it
# printed results (by default a "size value" line).
osu_run() {
  local np=$1 b=$2 re=${3:-'^[0-9]+ +[0-9.]+'} out=$work/${2//\//_}.out opts=(-i 50 -x 5)
  [[ $b == startup/* ]] && opts=() || [[ $b == */osu_*barrier ]] || opts+=(-m 1:1024)
  if ! timeout 120 "$run" -n "$np" "$osu/$b" "${opts[@]}" >"$out" 2>&1 ||
     ! grep -qE "$re" "$out"; then
    echo "FAIL: $b at $np ranks"; cat "$out"; exit 1
  fi
  passed=$((passed + 1))
}
for b in osu_put_latency osu_get_latency osu_acc_latency osu_put_bw osu_get_bw osu_cas_latency \
         osu_fop_latency osu_get_acc_latency osu_put_bibw; do
  osu_run 2 one-sided/$b
done
for b in allgather allgatherv alltoall alltoallv alltoallw; do
  osu_run 4 collective/neighborhood/osu_neighbor_$b
  osu_run 4 collective/neighborhood/osu_ineighbor_$b
done
for b in latency bw bibw latency_mp latency_mt mbw_mr multi_lat; do
  osu_run 2 pt2pt/standard/osu_$b
done
for b in latency bw bibw; do
  osu_run 2 pt2pt/persistent/osu_${b}_persistent
done
for b in allgather allgatherv allreduce alltoall alltoallv alltoallw bcast gather gatherv reduce \
         reduce_scatter scatter scatterv; do
  osu_run 4 collective/blocking/osu_$b
  osu_run 4 collective/non_blocking/osu_i$b
done
osu_run 4 collective/blocking/osu_barrier '^ +[0-9.]+$'
osu_run 4 collective/non_blocking/osu_ibarrier '^ +[0-9.]+ +[0-9.]+'
osu_run 4 startup/osu_hello 'This is a test with 4 processes'
osu_run 4 startup/osu_init 'nprocs: 4'

tar xzf "$imb_tar" -C "$work"
# IMB's top-level Makefile builds IMB-X with a plain `make -C src_cpp
# TARGET=X` (not $(MAKE)), so -j never reaches it: that step is run here as
# the top level runs it, with -j2, and the binary taken the same way.
imb_build() {
  make -j2 -C "$work"/mpi-benchmarks/src_cpp -f Makefile TARGET="${1#IMB-}" CC="$cc" CXX="$cxx" >/dev/null 2>&1 &&
    cp "$work/mpi-benchmarks/src_cpp/$1" "$work"/mpi-benchmarks/
}
for t in IMB-RMA IMB-MPI1 IMB-NBC IMB-EXT; do
  imb_build $t || { echo "FAIL: $t does not build"; exit 1; }
  if ! timeout 300 "$run" -n 2 "$work"/mpi-benchmarks/$t -msglog 0:8 -iter 20 -time 1 >"$work"/$t.out 2>&1 ||
     ! grep -q 'All processes entering MPI_Finalize' "$work"/$t.out; then
    echo "FAIL: $t"; tail -20 "$work"/$t.out; exit 1
  fi
  passed=$((passed + 1))
done
imb_io=(S_Write_indv S_Read_indv S_Write_expl S_Read_expl P_Write_indv P_Read_indv P_Write_expl P_Read_expl
        P_Write_shared P_Read_shared P_Write_priv P_Read_priv C_Write_indv C_Read_indv C_Write_expl C_Read_expl
        C_Write_shared C_Read_shared Open_Close)
imb_build IMB-IO || { echo "FAIL: IMB-IO does not build"; exit 1; }
mkdir "$work"/io
if ! (cd "$work"/io && timeout 300 "$run" -n 2 "$work"/mpi-benchmarks/IMB-IO -msglog 0:8 -iter 20 -time 1 "${imb_io[@]}") \
     >"$work"/IMB-IO.out 2>&1 || ! grep -q 'All processes entering MPI_Finalize' "$work"/IMB-IO.out; then
  echo "FAIL: IMB-IO"; tail -20 "$work"/IMB-IO.out; exit 1
fi
passed=$((passed + 1))
echo "third-party check: $passed passed, 0 failed (OSU: builds; one-sided x9 and point-to-point x10 at 2 ranks, collectives x30, neighborhood x10 and start-up x2 at 4; IMB-RMA, -MPI1, -NBC, -EXT, blocking IMB-IO at 2)"
