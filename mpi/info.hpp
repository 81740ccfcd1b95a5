// Hints kept by communicators and windows (MPI_*_set_info / get_info).
#pragma once

#include "mpi/objects.hpp"

namespace ftmpi::mpi {

using Hints = std::vector<std::pair<std::string, std::string>>;

// The hints an object of one kind takes (MPI_*_get_info returns only these).
enum class HintKind { comm, win, file };

// Sets the keys of `info` (a valid info object, or MPI_INFO_NULL) that
// objects of `kind` take in `into`, replacing values; the others are ignored
// (MPI-3.1 §6.4.4, §11.2.7, §13.2.8: an implementation ignores hints it
// does not know, and get_info returns the hints in use).
void merge_hints(Hints &into, MPI_Info info, HintKind kind);

// MPI_INFO_ENV's keys from this launch (MPI_Init; thread_level is the level
// the program asked for).
void fill_info_env(int size, int thread_level);

// "MPI_THREAD_SINGLE" ... "MPI_THREAD_MULTIPLE" (info keys thread_level);
// null for another value.
const char *thread_level_name(int level);

// A new info object holding `hints` (MPI_*_get_info's info_used).
MPI_Info info_of(const Hints &hints);

}  // namespace ftmpi::mpi
