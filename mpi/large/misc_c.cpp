// The large-count (_c) functions about datatypes, packing, windows, files
// and operations: queries answer in MPI_Count; constructors and packing run
// their int twins when the values fit in an int (contiguous types and
// packing also past that), and otherwise say MPI_ERR_UNSUPPORTED_OPERATION.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/errors.hpp"
#include "mpi/large/count_as.hpp"
#include "mpi/objects.hpp"

using namespace ftmpi::mpi;

namespace {

bool fits(MPI_Count v) { return v >= INT32_MIN && v <= INT32_MAX; }

// A constructor whose count-valued arguments (`n` of them in `v`, and the
// arrays) fit in ints: `make` runs the int twin with them.
template <typename Make>
int construct(const char *call, MPI_Count count, std::initializer_list<const MPI_Count *> arrays, Make make) {
    if (!fits(count) || count < 0) {
        if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, call, "negative count %lld", count);
        return too_large(MPI_COMM_NULL, call, "count");
    }
    std::vector<std::vector<int>> ints;
    for (const MPI_Count *a : arrays) {
        ints.emplace_back(a != nullptr ? static_cast<std::size_t>(count) : 0);
        if (a != nullptr && !ints_of(a, static_cast<int>(count), ints.back().data()))
            return too_large(MPI_COMM_NULL, call, "a block length or displacement");
    }
    CallAlias alias(call);
    return make(static_cast<int>(count), ints);
}

const int *or_null(const std::vector<int> &v, const MPI_Count *orig) { return orig != nullptr ? v.data() : nullptr; }

}  // namespace

extern "C" {

int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size) {
    CallAlias alias("MPI_Type_size_c");
    return MPI_Type_size_x(datatype, size);
}

int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    CallAlias alias("MPI_Type_get_extent_c");
    return MPI_Type_get_extent_x(datatype, lb, extent);
}

int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent) {
    CallAlias alias("MPI_Type_get_true_extent_c");
    return MPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    CallAlias alias("MPI_Get_elements_c");
    return MPI_Get_elements_x(status, datatype, count);
}

int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    const char *call = "MPI_Get_count_c";
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, count, "count"));
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    *count = whole_elements_of(datatype, status->ftmpi_count);
    return MPI_SUCCESS;
}

int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_contiguous_c";
    CallAlias alias(call);
    if (fits(count)) return MPI_Type_contiguous(static_cast<int>(count), oldtype, newtype);
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, oldtype, "oldtype"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, newtype, "newtype"));
    if (!oldtype->committed) return too_large(MPI_COMM_NULL, call, "count (of an uncommitted oldtype)");
    CountAs c(count, oldtype);  // one element of `count` oldtypes
    if (c.count() != 1) return raise(MPI_COMM_NULL, MPI_ERR_NO_MEM, call, "cannot build the type");
    return MPI_Type_dup(c.type(), newtype);
}

int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    const MPI_Count scalars[2] = {blocklength, stride};
    return construct("MPI_Type_vector_c", count, {}, [&](int n, auto &) {
        int s[2];
        if (!ints_of(scalars, 2, s)) return too_large(MPI_COMM_NULL, "MPI_Type_vector_c", "blocklength or stride");
        return MPI_Type_vector(n, s[0], s[1], oldtype, newtype);
    });
}

int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    return construct("MPI_Type_create_hvector_c", count, {}, [&](int n, auto &) {
        if (!fits(blocklength)) return too_large(MPI_COMM_NULL, "MPI_Type_create_hvector_c", "blocklength");
        return MPI_Type_create_hvector(n, static_cast<int>(blocklength), static_cast<MPI_Aint>(stride), oldtype,
                                       newtype);
    });
}

int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return construct("MPI_Type_indexed_c", count, {array_of_blocklengths, array_of_displacements}, [&](int n, auto &v) {
        return MPI_Type_indexed(n, or_null(v[0], array_of_blocklengths), or_null(v[1], array_of_displacements), oldtype,
                                newtype);
    });
}

int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return construct("MPI_Type_create_hindexed_c", count, {array_of_blocklengths}, [&](int n, auto &v) {
        std::vector<MPI_Aint> d(array_of_displacements != nullptr ? static_cast<std::size_t>(n) : 0);
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<MPI_Aint>(array_of_displacements[i]);
        return MPI_Type_create_hindexed(n, or_null(v[0], array_of_blocklengths),
                                        array_of_displacements != nullptr ? d.data() : nullptr, oldtype, newtype);
    });
}

int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return construct("MPI_Type_create_indexed_block_c", count, {array_of_displacements}, [&](int n, auto &v) {
        if (!fits(blocklength)) return too_large(MPI_COMM_NULL, "MPI_Type_create_indexed_block_c", "blocklength");
        return MPI_Type_create_indexed_block(n, static_cast<int>(blocklength), or_null(v[0], array_of_displacements),
                                             oldtype, newtype);
    });
}

int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return construct("MPI_Type_create_hindexed_block_c", count, {}, [&](int n, auto &) {
        if (!fits(blocklength)) return too_large(MPI_COMM_NULL, "MPI_Type_create_hindexed_block_c", "blocklength");
        std::vector<MPI_Aint> d(array_of_displacements != nullptr ? static_cast<std::size_t>(n) : 0);
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<MPI_Aint>(array_of_displacements[i]);
        return MPI_Type_create_hindexed_block(n, static_cast<int>(blocklength),
                                              array_of_displacements != nullptr ? d.data() : nullptr, oldtype, newtype);
    });
}

int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                             MPI_Datatype *newtype) {
    return construct("MPI_Type_create_struct_c", count, {array_of_blocklengths}, [&](int n, auto &v) {
        std::vector<MPI_Aint> d(array_of_displacements != nullptr ? static_cast<std::size_t>(n) : 0);
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<MPI_Aint>(array_of_displacements[i]);
        return MPI_Type_create_struct(n, or_null(v[0], array_of_blocklengths),
                                      array_of_displacements != nullptr ? d.data() : nullptr, array_of_types, newtype);
    });
}

int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype) {
    CallAlias alias("MPI_Type_create_resized_c");
    return MPI_Type_create_resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent), newtype);
}

int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype *newtype) {
    return construct(
        "MPI_Type_create_subarray_c", ndims, {array_of_sizes, array_of_subsizes, array_of_starts}, [&](int n, auto &v) {
            return MPI_Type_create_subarray(n, or_null(v[0], array_of_sizes), or_null(v[1], array_of_subsizes),
                                            or_null(v[2], array_of_starts), order, oldtype, newtype);
        });
}

int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return construct("MPI_Type_create_darray_c", ndims, {array_of_gsizes}, [&](int n, auto &v) {
        return MPI_Type_create_darray(size, rank, n, or_null(v[0], array_of_gsizes), array_of_distribs, array_of_dargs,
                                      array_of_psizes, order, oldtype, newtype);
    });
}

// ftmpi builds no type with large-count arguments (the _c constructors
// above make int-argument types), so num_large_counts is 0.
int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                            MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner) {
    const char *call = "MPI_Type_get_envelope_c";
    CallAlias alias(call);
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_integers, "num_integers"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_addresses, "num_addresses"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_large_counts, "num_large_counts"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, num_datatypes, "num_datatypes"));
    int ni = 0, na = 0, nd = 0;
    const int rc = MPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
    if (rc != MPI_SUCCESS) return rc;
    *num_integers = ni;
    *num_addresses = na;
    *num_large_counts = 0;
    *num_datatypes = nd;
    return MPI_SUCCESS;
}

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                            MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                            MPI_Datatype array_of_datatypes[]) {
    (void)max_large_counts;  // none to return (see MPI_Type_get_envelope_c)
    (void)array_of_large_counts;
    auto clamp = [](MPI_Count v) { return v > INT32_MAX ? INT32_MAX : static_cast<int>(v); };
    CallAlias alias("MPI_Type_get_contents_c");
    return MPI_Type_get_contents(datatype, clamp(max_integers), clamp(max_addresses), clamp(max_datatypes),
                                 array_of_integers, array_of_addresses, array_of_datatypes);
}

}  // extern "C"
