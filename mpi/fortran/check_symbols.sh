#!/usr/bin/env bash
# check_symbols.sh LIBFTMPI_FORT MPI_H FORTRAN_PY: every call of mpi.h has
# its Fortran bindings in the library, or a reason not to (fortran.py
# --unbound, printed). A bound call is exported under gfortran's name
# (mpi_send_) and its seven other spellings (mpi_send, mpi_send__, MPI_SEND
# and the PMPI forms) at one address, and under its mpi_f08 specific name
# (mpi_send_f08ts_, mpi_comm_rank_f08_) with its PMPI twin.
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
f08=0
for spec in $("$fortran" --f08-names "$header"); do
  f08=$((f08 + 1))
  if [[ -z ${addr[$spec]:-} || ${addr[p$spec]:-} != "${addr[$spec]}" ]]; then
    echo "FAIL: mpi_f08's $spec is missing, or its PMPI twin p$spec is elsewhere"; bad=1
  fi
done
echo "calls of mpi.h without a Fortran binding:"
"$fortran" --unbound "$header" | sed 's/^/  /'
((bad == 0)) && echo "fortran symbols: $n calls bound, each under its 8 names; $f08 mpi_f08 specific procedures"
exit $bad
