// MPI_Type_get_envelope and MPI_Type_get_contents: how a datatype was made.
//
// Predefined types are MPI_COMBINER_NAMED and have no contents. A derived
// type reports the Contents its constructor recorded (mpi/dt/derived.hpp).
// Errors (reported on MPI_COMM_NULL): MPI_ERR_TYPE for a bad handle, MPI_ERR_ARG
// for a NULL output, max_* too small, or contents asked of a named type.
#include <algorithm>
#include <type_traits>

#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

// Room for `have` entries of array `arg` whose bound `max_arg` says `max`.
template <typename I>
int check_room(const char *call, I max, std::size_t have, const char *max_arg, const void *array, const char *arg) {
    if (max < 0 || static_cast<std::size_t>(max) < have)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s is %lld but the datatype has %zu (argument %s)", max_arg,
                     static_cast<long long>(max), have, arg);
    return check_array(call, array, static_cast<int>(std::min<std::size_t>(have, 0x7fffffff)), arg);
}

// Both forms: I is int, or MPI_Count (num_large_counts non-null). The int
// form cannot report a type made with counts beyond INT_MAX.
template <typename I>
int envelope(const char *call, MPI_Datatype datatype, I *num_integers, I *num_addresses, I *num_large_counts,
             I *num_datatypes, int *combiner) {
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_integers, "num_integers"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_addresses, "num_addresses"));
    if constexpr (!std::is_same_v<I, int>)
        FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_large_counts, "num_large_counts"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_datatypes, "num_datatypes"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, combiner, "combiner"));
    static const Contents k_named;
    const Contents &c = datatype->derived != nullptr ? datatype->derived->contents : k_named;
    if (std::is_same_v<I, int> && !c.large.empty())
        return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call,
                     "the datatype was made with counts beyond INT_MAX: MPI_Type_get_envelope_c reports them");
    *num_integers = static_cast<I>(c.ints.size());
    *num_addresses = static_cast<I>(c.addrs.size());
    if (num_large_counts != nullptr) *num_large_counts = static_cast<I>(c.large.size());
    *num_datatypes = static_cast<I>(c.types.size());
    *combiner = c.combiner;
    return MPI_SUCCESS;
}

// Each derived type in array_of_datatypes is a new handle the caller frees
// (the same object, which lives until every handle to it is freed); the
// predefined ones (and MPI_Type_create_f90_* types) are returned as they are.
template <typename I>
int contents(const char *call, MPI_Datatype datatype, I max_integers, I max_addresses, I max_large_counts,
             I max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
             MPI_Datatype array_of_datatypes[]) {
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    if (datatype->derived == nullptr)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call,
                     "datatype %s is predefined (MPI_COMBINER_NAMED): it has no contents", datatype->name);
    const Contents &c = datatype->derived->contents;
    if (std::is_same_v<I, int> && !c.large.empty())
        return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call,
                     "the datatype was made with counts beyond INT_MAX: MPI_Type_get_contents_c reports them");
    FTMPI_CHECK(check_room(call, max_integers, c.ints.size(), "max_integers", array_of_integers, "array_of_integers"));
    FTMPI_CHECK(
        check_room(call, max_addresses, c.addrs.size(), "max_addresses", array_of_addresses, "array_of_addresses"));
    if constexpr (!std::is_same_v<I, int>)
        FTMPI_CHECK(check_room(call, max_large_counts, c.large.size(), "max_large_counts", array_of_large_counts,
                               "array_of_large_counts"));
    FTMPI_CHECK(
        check_room(call, max_datatypes, c.types.size(), "max_datatypes", array_of_datatypes, "array_of_datatypes"));
    std::copy(c.ints.begin(), c.ints.end(), array_of_integers);
    std::copy(c.addrs.begin(), c.addrs.end(), array_of_addresses);
    if constexpr (!std::is_same_v<I, int>) std::copy(c.large.begin(), c.large.end(), array_of_large_counts);
    for (std::size_t i = 0; i < c.types.size(); ++i) {
        dt_new_handle(c.types[i]);
        array_of_datatypes[i] = c.types[i];
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                          int *combiner) {
    return envelope<int>("MPI_Type_get_envelope", datatype, num_integers, num_addresses, nullptr, num_datatypes,
                         combiner);
}

int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                            MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner) {
    return envelope<MPI_Count>("MPI_Type_get_envelope_c", datatype, num_integers, num_addresses, num_large_counts,
                               num_datatypes, combiner);
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    return contents<int>("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0, max_datatypes,
                         array_of_integers, array_of_addresses, nullptr, array_of_datatypes);
}

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                            MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                            MPI_Datatype array_of_datatypes[]) {
    return contents<MPI_Count>("MPI_Type_get_contents_c", datatype, max_integers, max_addresses, max_large_counts,
                               max_datatypes, array_of_integers, array_of_addresses, array_of_large_counts,
                               array_of_datatypes);
}

}  // extern "C"
