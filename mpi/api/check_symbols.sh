#!/usr/bin/env bash
# check_symbols.sh LIBFTMPI MPI_H PMPI_PY: every MPI_/MPIX_ function the
# library exports has its PMPI_/PMPIX_ twin at the same address, and every
# call mpi.h declares is exported (nothing declared that does not exist).
set -euo pipefail
lib=$1 header=$2 pmpi=$3
syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3, $1}')
declare -A addr
while read -r name a; do addr[$name]=$a; done <<<"$syms"
bad=0 n=0
for name in "${!addr[@]}"; do
  [[ $name == MPI_* || $name == MPIX_* ]] || continue
  n=$((n + 1))
  if [[ ${addr[P$name]:-} != "${addr[$name]}" ]]; then
    echo "FAIL: $name has no PMPI twin at its address"; bad=1
  fi
done
for name in $("$pmpi" --names "$header"); do
  [[ -n ${addr[$name]:-} ]] || { echo "FAIL: mpi.h declares $name, which the library does not export"; bad=1; }
done
((bad == 0)) && echo "pmpi symbols: $n MPI functions exported, each with its PMPI twin; every declared call exists"
exit $bad
