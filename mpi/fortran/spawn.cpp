// MPI_Comm_spawn and MPI_Comm_spawn_multiple from Fortran: argument
// vectors are CHARACTER arrays ended by a blank entry (MPI_ARGV_NULL and
// MPI_ARGVS_NULL are sentinels), array_of_argv is column-major
// (ARRAY_OF_ARGV(COUNT, *)), and MPI_ERRCODES_IGNORE is a sentinel too.
#include <mpi.h>

#include <string>
#include <vector>

#include "mpi/fortran/support.hpp"

using namespace ftmpi::fortran;

namespace {

// One argument vector: entries at `first`, `stride` bytes apart, each `len`
// long, up to the first blank one; as C strings with their pointer array.
class Argv {
public:
    Argv(const char *first, std::size_t stride, std::size_t len) {
        for (const char *e = first;; e += stride) {
            StringIn s(e, len);
            if (*s.get() == '\0') break;
            strings_.emplace_back(s.get());
        }
        for (std::string &s : strings_) ptrs_.push_back(s.data());
        ptrs_.push_back(nullptr);
    }
    char **get() { return ptrs_.data(); }

private:
    std::vector<std::string> strings_;
    std::vector<char *> ptrs_;
};

int *errcodes(MPI_Fint *f) { return f == &ftmpi_fc_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : f; }

}  // namespace

extern "C" {

void mpi_comm_spawn_(const char *command, const char *argv, MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierr,
                     std::size_t command_len, std::size_t argv_len) {
    StringIn cmd(command, command_len);
    const bool none = argv == &ftmpi_fc_argv_null_;
    Argv args(argv, argv_len, argv_len);
    MPI_Comm c = MPI_COMM_NULL;
    const int rc = PMPI_Comm_spawn(cmd.get(), none ? MPI_ARGV_NULL : args.get(), *maxprocs, PMPI_Info_f2c(*info), *root,
                                   PMPI_Comm_f2c(*comm), &c, errcodes(array_of_errcodes));
    *intercomm = PMPI_Comm_c2f(c);
    set_ierr(ierr, rc);
}

void mpi_comm_spawn_multiple_(MPI_Fint *count, const char *array_of_commands, const char *array_of_argv,
                              MPI_Fint *array_of_maxprocs, MPI_Fint *array_of_info, MPI_Fint *root, MPI_Fint *comm,
                              MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierr,
                              std::size_t commands_len, std::size_t argv_len) {
    const int n = *count > 0 ? *count : 0;
    const bool none = array_of_argv == &ftmpi_fc_argvs_null_;
    std::vector<std::string> commands;
    std::vector<char *> command_ptrs;
    std::vector<Argv> argvs;
    std::vector<char **> argv_ptrs;
    for (int i = 0; i < n; ++i) {
        commands.emplace_back(
            StringIn(array_of_commands + static_cast<std::size_t>(i) * commands_len, commands_len).get());
        // ARRAY_OF_ARGV(i, j) is at (i + j * count) entries
        if (!none)
            argvs.emplace_back(array_of_argv + static_cast<std::size_t>(i) * argv_len,
                               static_cast<std::size_t>(n) * argv_len, argv_len);
    }
    for (std::string &s : commands) command_ptrs.push_back(s.data());
    for (Argv &a : argvs) argv_ptrs.push_back(a.get());
    Handles<MPI_Info> infos(array_of_info, n, PMPI_Info_f2c);
    MPI_Comm c = MPI_COMM_NULL;
    const int rc =
        PMPI_Comm_spawn_multiple(n, command_ptrs.data(), none ? MPI_ARGVS_NULL : argv_ptrs.data(), array_of_maxprocs,
                                 infos.data(), *root, PMPI_Comm_f2c(*comm), &c, errcodes(array_of_errcodes));
    *intercomm = PMPI_Comm_c2f(c);
    set_ierr(ierr, rc);
}

}  // extern "C"
