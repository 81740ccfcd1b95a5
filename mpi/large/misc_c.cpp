// The large-count (_c) functions about datatypes: queries answer in
// MPI_Count, and the constructors build their types here with MPI_Count
// inside (the layouts of the int forms), recording their count-valued
// arguments as large counts, as MPI 4.0's decoding tables say, for
// MPI_Type_get_envelope_c / _contents_c (mpi/dt/envelope.cpp).
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

// Every _c constructor builds its type here, with MPI_Count inside, and
// records its count-valued arguments as large counts (MPI 4.0's decoding
// tables), whatever their values: large() after the count's check.
template <typename Large>
int construct(const char *call, MPI_Count count, Large large) {
    CallAlias alias(call);
    if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, call, "negative count %lld", count);
    return large();
}

// The checks of a constructor built here: the old type (or types), where the
// new one goes, block lengths >= 0 (MPI_ERR_ARG, as the int forms say).
int check_large(const char *call, MPI_Datatype old, MPI_Datatype *newtype) {
    if (old != nullptr) FTMPI_CHECK(check_type(call, MPI_COMM_NULL, old, "oldtype"));
    return check_nonnull(call, MPI_COMM_NULL, newtype, "newtype");
}
int check_length(const char *call, MPI_Count len, const char *arg, MPI_Count index = -1) {
    if (len >= 0) return MPI_SUCCESS;
    if (index >= 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s[%lld] %lld", arg, index, len);
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s %lld", arg, len);
}
int check_lengths(const char *call, MPI_Count n, const MPI_Count *lens, const char *arg) {
    if (n > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, lens, arg));
    for (MPI_Count i = 0; i < n; ++i) FTMPI_CHECK(check_length(call, lens[i], arg, i));
    return MPI_SUCCESS;
}

// The indexed family built here: block i is lens[i] (or len) elements of
// old (or types[i]) at displs[i] * unit bytes. Contents: the count, the
// block lengths (or the one), the displacements, as large counts.
int indexed_large(const char *call, int combiner, MPI_Count count, const MPI_Count *lens, MPI_Count len,
                  const MPI_Count *displs, MPI_Aint unit, MPI_Datatype old, const MPI_Datatype *types,
                  MPI_Datatype *newtype) {
    FTMPI_CHECK(check_large(call, old, newtype));
    if (lens != nullptr || types != nullptr) FTMPI_CHECK(check_lengths(call, count, lens, "array_of_blocklengths"));
    else FTMPI_CHECK(check_length(call, len, "blocklength"));
    if (count > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, displs, "array_of_displacements"));
    if (types != nullptr || old == nullptr) {
        if (count > 0) FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, types, "array_of_types"));
        for (MPI_Count i = 0; i < count; ++i)
            if (!valid_type(types[i]))
                return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call, "invalid datatype (argument array_of_types[%lld])", i);
    }
    const auto n = static_cast<std::size_t>(count);
    std::vector<Piece> pieces(n);
    Contents c{combiner, {}, {}, {}, {count}};
    for (std::size_t i = 0; i < n; ++i) {
        const MPI_Count l = lens != nullptr ? lens[i] : len;
        pieces[i] = {static_cast<MPI_Aint>(displs[i]) * unit, static_cast<std::size_t>(l),
                     types != nullptr ? types[i] : old};
        if (lens != nullptr) c.large.push_back(l);
    }
    if (lens == nullptr) c.large.push_back(len);
    c.large.insert(c.large.end(), displs, displs + n);
    if (types != nullptr) c.types.assign(types, types + n);
    else c.types.push_back(old);
    return finish_type(build_layout(pieces, types != nullptr), std::move(c), newtype);
}

// vector and hvector built here (stride in bytes).
int strided_large(const char *call, int combiner, MPI_Count count, MPI_Count len, MPI_Count stride,
                  MPI_Aint stride_bytes, MPI_Datatype old, MPI_Datatype *newtype) {
    FTMPI_CHECK(check_large(call, old, newtype));
    FTMPI_CHECK(check_length(call, len, "blocklength"));
    return finish_type(
        strided_layout(static_cast<std::size_t>(count), static_cast<std::size_t>(len), stride_bytes, old),
        {combiner, {}, {}, {old}, {count, len, stride}}, newtype);
}

MPI_Aint extent_of(MPI_Datatype t) { return valid_type(t) ? t->extent : 0; }

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
    return construct(call, count, [&] {
        FTMPI_CHECK(check_large(call, oldtype, newtype));
        return finish_type(build_layout({{0, static_cast<std::size_t>(count), oldtype}}),
                           {MPI_COMBINER_CONTIGUOUS, {}, {}, {oldtype}, {count}}, newtype);
    });
}

int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    const char *call = "MPI_Type_vector_c";
    return construct(call, count, [&] {
        return strided_large(call, MPI_COMBINER_VECTOR, count, blocklength, stride,
                             static_cast<MPI_Aint>(stride) * extent_of(oldtype), oldtype, newtype);
    });
}

int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_hvector_c";
    return construct(call, count, [&] {
        return strided_large(call, MPI_COMBINER_HVECTOR, count, blocklength, stride, static_cast<MPI_Aint>(stride),
                             oldtype, newtype);
    });
}

int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_indexed_c";
    return construct(call, count, [&] {
        return indexed_large(call, MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                             extent_of(oldtype), oldtype, nullptr, newtype);
    });
}

// The h forms' displacements are bytes.
int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_hindexed_c";
    return construct(call, count, [&] {
        return indexed_large(call, MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0, array_of_displacements, 1,
                             oldtype, nullptr, newtype);
    });
}

int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_indexed_block_c";
    return construct(call, count, [&] {
        return indexed_large(call, MPI_COMBINER_INDEXED_BLOCK, count, nullptr, blocklength, array_of_displacements,
                             extent_of(oldtype), oldtype, nullptr, newtype);
    });
}

int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_hindexed_block_c";
    return construct(call, count, [&] {
        return indexed_large(call, MPI_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength, array_of_displacements, 1,
                             oldtype, nullptr, newtype);
    });
}

int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                             MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_struct_c";
    return construct(call, count, [&] {
        return indexed_large(call, MPI_COMBINER_STRUCT, count, array_of_blocklengths, 0, array_of_displacements, 1,
                             nullptr, array_of_types, newtype);
    });
}

// The int form's type, its bounds recorded as large counts.
int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype) {
    CallAlias alias("MPI_Type_create_resized_c");
    const int rc = MPI_Type_create_resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent), newtype);
    if (rc != MPI_SUCCESS) return rc;
    Contents &c = (*newtype)->derived->contents;
    c.addrs.clear();
    c.large = {lb, extent};
    return MPI_SUCCESS;
}

int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_subarray_c";
    CallAlias alias(call);
    return subarray_large(call, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype);
}

int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                             int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_darray_c";
    CallAlias alias(call);
    return darray_large(call, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
                        order, oldtype, newtype);
}

}  // extern "C"
