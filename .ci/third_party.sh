#!/usr/bin/env bash
# Unmodified third-party MPI programs, built with the installed ftmpicc as a
# user would, then run under ftmpirun:
#   - OSU micro-benchmarks 7.2, one-sided: the 8 latency/bandwidth programs
#     and osu_put_bibw, each to completion at 2 ranks (small sizes);
#   - Intel MPI Benchmarks: IMB-RMA builds and runs its whole list at 2 ranks.
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
(cd "$work"/osu-micro-benchmarks-7.2 && ./configure CC="$cc" CXX="$cxx" >/dev/null &&
  make -j2 -C c/mpi/one-sided >/dev/null)
passed=0
for b in osu_put_latency osu_get_latency osu_acc_latency osu_put_bw osu_get_bw osu_cas_latency \
         osu_fop_latency osu_get_acc_latency osu_put_bibw; do
  out=$work/$b.out
  if ! timeout 120 "$run" -n 2 "$work"/osu-micro-benchmarks-7.2/c/mpi/one-sided/$b -m 1:4096 -i 200 -x 20 >"$out" 2>&1 ||
     ! grep -qE '^[0-9]+ +[0-9.]+' "$out"; then
    echo "FAIL: $b"; cat "$out"; exit 1
  fi
  passed=$((passed + 1))
done

tar xzf "$imb_tar" -C "$work"
make -C "$work"/mpi-benchmarks CC="$cc" CXX="$cxx" IMB-RMA >/dev/null 2>&1 ||
  { echo "FAIL: IMB-RMA does not build"; exit 1; }
if ! timeout 300 "$run" -n 2 "$work"/mpi-benchmarks/IMB-RMA -msglog 0:10 -iter 50 -time 1 >"$work"/imb.out 2>&1 ||
   ! grep -q 'All processes entering MPI_Finalize' "$work"/imb.out; then
  echo "FAIL: IMB-RMA"; tail -20 "$work"/imb.out; exit 1
fi
passed=$((passed + 1))
echo "third-party check: $passed passed, 0 failed (OSU one-sided x9, IMB-RMA)"
