#!/usr/bin/env bash
# check_symbols.sh LIBFTMPI_FORT MPI_H FORTRAN_PY: every call of mpi.h with
# a Fortran binding (fortran.py --names) is exported under gfortran's name
# (mpi_send_) and its seven other spellings (mpi_send, mpi_send__, MPI_SEND
# and the PMPI forms) at one address; the calls mpi.h has and Fortran has
# not are the ones fortran_kinds.py lists.
set -euo pipefail
lib=$1 header=$2 fortran=$3
declare -A addr
while read -r a t name; do
  [[ $t == T ]] && addr[$name]=$a
done < <(nm -D --defined-only "$lib")
bad=0 n=0
for name in $("$fortran" --names "$header"); do
  n=$((n + 1))
  lower=${name,,} upper=${name^^}
  main=${addr[${lower}_]:-}
  if [[ -z $main ]]; then echo "FAIL: $name has no Fortran entry point ${lower}_"; bad=1; continue; fi
  for alias in "$lower" "${lower}__" "$upper" "p$lower" "p${lower}_" "p${lower}__" "P$upper"; do
    [[ ${addr[$alias]:-} == "$main" ]] || { echo "FAIL: $name: $alias is not ${lower}_"; bad=1; }
  done
done
((bad == 0)) && echo "fortran symbols: $n calls bound, each under its 8 names"
exit $bad
