#!/usr/bin/env bash
# CMake's FindMPI against an installed ftmpi: `find_package(MPI)` with no hints
# (only the installed bin/ first on PATH, as a user who installed ftmpi has it)
# finds ftmpi's wrappers and library and sets MPIEXEC_EXECUTABLE, and ctest
# runs MPI tests through it (tests/cmake).
# Usage: .ci/cmake_check.sh PREFIX
set -euo pipefail
prefix=$1
src=$(cd "$(dirname "$0")/../tests/cmake" && pwd)
work=$(mktemp -d /tmp/ftmpi-cmake.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PATH="$prefix/bin:$PATH"
# With ftmpifort installed, the Fortran component too (all three bindings).
fortran=OFF
[[ -x $prefix/bin/ftmpifort ]] && fortran=ON
cmake -S "$src" -B "$work" -DFTMPI_FORTRAN=$fortran >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$work/CMakeCache.txt"; }
exe=$(cache MPIEXEC_EXECUTABLE)
lib=$(cache MPI_C_LIB_NAMES)
echo "cmake: MPIEXEC_EXECUTABLE=$exe MPI_C_LIB_NAMES=$lib Fortran=$fortran"
[[ $exe == "$prefix"/bin/* ]] || { echo "cmake: MPIEXEC_EXECUTABLE is not ftmpi's" >&2; exit 1; }
[[ $lib == *ftmpi* ]] || { echo "cmake: FindMPI did not pick libftmpi" >&2; exit 1; }
cmake --build "$work" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
(cd "$work" && timeout 180 ctest --output-on-failure)
echo "cmake check: 1 passed, 0 failed"
