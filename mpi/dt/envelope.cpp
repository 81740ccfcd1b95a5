// MPI_Type_get_envelope and MPI_Type_get_contents: how a datatype was made.
//
// Predefined types are MPI_COMBINER_NAMED and have no contents. A derived
// type reports the Contents its constructor recorded (mpi/dt/derived.hpp).
// Errors (reported on MPI_COMM_NULL): MPI_ERR_TYPE for a bad handle, MPI_ERR_ARG
// for a NULL output, max_* too small, or contents asked of a named type.
#include <algorithm>

#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

// Room for `have` entries of array `arg` whose bound `max_arg` says `max`.
int check_room(const char *call, int max, std::size_t have, const char *max_arg, const void *array, const char *arg) {
    if (max < 0 || static_cast<std::size_t>(max) < have)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is %d but the datatype has %zu (argument %s)", max_arg, max,
                     have, arg);
    return check_array(call, array, static_cast<int>(have), arg);
}

}  // namespace

extern "C" {

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                          int *combiner) {
    const char *call = "MPI_Type_get_envelope";
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_integers, "num_integers"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_addresses, "num_addresses"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_datatypes, "num_datatypes"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, combiner, "combiner"));
    if (datatype->derived == nullptr) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    const Contents &c = datatype->derived->contents;
    *num_integers = static_cast<int>(c.ints.size());
    *num_addresses = static_cast<int>(c.addrs.size());
    *num_datatypes = static_cast<int>(c.types.size());
    *combiner = c.combiner;
    return MPI_SUCCESS;
}

// Each derived type in array_of_datatypes is a new handle the caller frees
// (the same object, which lives until every handle to it is freed); the
// predefined ones (and MPI_Type_create_f90_* types) are returned as they are.
int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    const char *call = "MPI_Type_get_contents";
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    if (datatype->derived == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "datatype %s is predefined (MPI_COMBINER_NAMED): it has no contents", datatype->name);
    const Contents &c = datatype->derived->contents;
    FTMPI_CHECK(check_room(call, max_integers, c.ints.size(), "max_integers", array_of_integers, "array_of_integers"));
    FTMPI_CHECK(
        check_room(call, max_addresses, c.addrs.size(), "max_addresses", array_of_addresses, "array_of_addresses"));
    FTMPI_CHECK(
        check_room(call, max_datatypes, c.types.size(), "max_datatypes", array_of_datatypes, "array_of_datatypes"));
    std::copy(c.ints.begin(), c.ints.end(), array_of_integers);
    std::copy(c.addrs.begin(), c.addrs.end(), array_of_addresses);
    for (std::size_t i = 0; i < c.types.size(); ++i) {
        dt_new_handle(c.types[i]);
        array_of_datatypes[i] = c.types[i];
    }
    return MPI_SUCCESS;
}

}  // extern "C"
