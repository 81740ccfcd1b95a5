// The datatype constructors, commit, free, dup, names and extents.
//
// Every constructor validates its arguments (MPI_ERR_COUNT, MPI_ERR_ARG,
// MPI_ERR_TYPE; reported on MPI_COMM_NULL, i.e. MPI_COMM_WORLD's handler),
// then flattens into a Layout (mpi/dt/derived.hpp) and returns a new
// uncommitted handle owning it and a record of its arguments (Contents).
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "mpi/comm/attributes.hpp"
#include "mpi/dt/type_checks.hpp"
#include "mpi/dt/derived.hpp"

using namespace ftmpi::mpi;

namespace {

// C is int (the MPI 3.1 constructors) or MPI_Count (their _c forms, whose
// contents record every count-valued argument as a large count).
template <typename C>
constexpr bool k_large = std::is_same_v<C, MPI_Count>;

// The arguments every constructor has: a count, the old type (unless
// `types` gives one per block) and where the new one goes.
template <typename C>
int check_start(const char *call, C count, MPI_Datatype old, MPI_Datatype *newtype, bool has_old = true) {
    if (count < 0)
        return raise(MPI_COMM_NULL, MPI_ERR_COUNT, call, "negative count %lld", static_cast<long long>(count));
    if (has_old) FTMPI_CHECK(check_type(call, MPI_COMM_NULL, old, "oldtype"));
    return check_nonnull(call, MPI_COMM_NULL, newtype, "newtype");
}

template <typename C>
int check_len(const char *call, C len, const char *arg = "blocklength", long long index = -1) {
    if (len >= 0) return MPI_SUCCESS;
    if (index >= 0)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s[%lld] %lld", arg, index,
                     static_cast<long long>(len));
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "negative %s %lld", arg, static_cast<long long>(len));
}

// An array argument of `count` entries (NULL only when count is 0).
template <typename C>
int check_entries(const char *call, const void *p, C count, const char *arg) {
    return check_array(call, p, static_cast<int>(std::min<MPI_Count>(count, 0x7fffffff)), arg);
}

// The indexed family and struct: block i is lens[i] (the _block forms: the
// one len) elements of old (struct: types[i]) at disps[i] * unit bytes. Contents: count,
// the block lengths (or the one), the displacements: ints for int ones,
// addresses for MPI_Aint ones, large counts for all of a _c form's.
template <typename C, typename D>
int indexed(const char *call, int combiner, C count, const std::type_identity_t<C> *lens, std::type_identity_t<C> len,
            const D *disps, MPI_Aint unit, MPI_Datatype old, const MPI_Datatype *types, MPI_Datatype *newtype) {
    const bool is_struct = combiner == MPI_COMBINER_STRUCT;
    const bool per_block = combiner != MPI_COMBINER_INDEXED_BLOCK && combiner != MPI_COMBINER_HINDEXED_BLOCK;
    FTMPI_TRY(check_start(call, count, old, newtype, !is_struct));
    if (per_block) FTMPI_CHECK(check_entries(call, lens, count, "array_of_blocklengths"));
    else FTMPI_CHECK(check_len(call, len));
    FTMPI_CHECK(check_entries(call, disps, count, "array_of_displacements"));
    if (is_struct) FTMPI_CHECK(check_entries(call, types, count, "array_of_types"));
    const auto n = static_cast<std::size_t>(count);
    std::vector<Piece> pieces;
    pieces.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const C l = per_block ? lens[i] : len;
        if (per_block) FTMPI_CHECK(check_len(call, l, "array_of_blocklengths", static_cast<long long>(i)));
        if (is_struct && !valid_type(types[i]))
            return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call, "invalid datatype (argument array_of_types[%zu])", i);
        pieces.push_back(
            {static_cast<MPI_Aint>(disps[i]) * unit, static_cast<std::size_t>(l), is_struct ? types[i] : old});
    }
    Contents c{combiner, {}, {}, {}};
    auto &counts = c.ints;
    if constexpr (k_large<C>) {
        c.large.push_back(count);
        if (per_block) c.large.insert(c.large.end(), lens, lens + n);
        else c.large.push_back(len);
        c.large.insert(c.large.end(), disps, disps + n);
    } else {
        counts.push_back(count);
        if (per_block) counts.insert(counts.end(), lens, lens + n);
        else counts.push_back(len);
        if constexpr (std::is_same_v<D, int>) counts.insert(counts.end(), disps, disps + n);
        else c.addrs.assign(disps, disps + n);
    }
    if (is_struct) c.types.assign(types, types + n);
    else c.types.push_back(old);
    return finish_type(build_layout(pieces, is_struct), std::move(c), newtype);
}

// vector (stride in elements, recorded as an int) and hvector (in bytes,
// recorded as an address), or either's _c form (large counts).
template <typename C, typename S>
int strided(const char *call, int combiner, C count, C len, S stride, MPI_Aint stride_bytes, MPI_Datatype old,
            MPI_Datatype *newtype) {
    FTMPI_TRY(check_start(call, count, old, newtype));
    FTMPI_CHECK(check_len(call, len));
    Contents c{combiner, {}, {}, {old}};
    if constexpr (k_large<C>) c.large = {count, len, stride};
    else if constexpr (std::is_same_v<S, int>) c.ints = {count, len, stride};
    else c.ints = {count, len}, c.addrs = {stride};
    return finish_type(
        strided_layout(static_cast<std::size_t>(count), static_cast<std::size_t>(len), stride_bytes, old), std::move(c),
        newtype);
}

template <typename C>
int contiguous(const char *call, C count, MPI_Datatype old, MPI_Datatype *newtype) {
    FTMPI_TRY(check_start(call, count, old, newtype));
    Contents c{MPI_COMBINER_CONTIGUOUS, {}, {}, {old}};
    if constexpr (k_large<C>) c.large = {count};
    else c.ints = {count};
    return finish_type(build_layout({{0, static_cast<std::size_t>(count), old}}), std::move(c), newtype);
}

MPI_Aint extent_of(MPI_Datatype t) { return valid_type(t) ? t->extent : 0; }

// MPI_Type_create_subarray, and (I = MPI_Count) MPI_Type_create_subarray_c,
// whose contents hold the sizes, subsizes and starts as large counts.
template <typename I>
int subarray(const char *call, int ndims, const I *array_of_sizes, const I *array_of_subsizes, const I *array_of_starts,
             int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor(call, 0, oldtype, newtype));
    FTMPI_TRY(check_array_shape(call, ndims,
                                {{array_of_sizes, "array_of_sizes"},
                                 {array_of_subsizes, "array_of_subsizes"},
                                 {array_of_starts, "array_of_starts"}},
                                order));
    for (int d = 0; d < ndims; ++d) {
        const auto size = static_cast<long long>(array_of_sizes[d]), sub = static_cast<long long>(array_of_subsizes[d]),
                   start = static_cast<long long>(array_of_starts[d]);
        if (size <= 0)
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_sizes[%d] is %lld (must be positive)", d, size);
        if (sub < 0 || sub > size)
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_subsizes[%d] is %lld (must be in 0..%lld)", d, sub,
                         size);
        if (start < 0 || start > size - sub)
            return raise(MPI_COMM_NULL, MPI_ERR_ARG, call, "array_of_starts[%d] is %lld (must be in 0..%lld)", d, start,
                         size - sub);
    }
    const auto n = static_cast<std::size_t>(ndims);
    std::vector<MPI_Aint> sizes(array_of_sizes, array_of_sizes + n);
    std::vector<std::vector<IndexRun>> runs(n);
    for (std::size_t d = 0; d < n; ++d)
        runs[d].push_back({static_cast<MPI_Aint>(array_of_starts[d]), static_cast<MPI_Aint>(array_of_subsizes[d])});
    Contents c{MPI_COMBINER_SUBARRAY, {ndims}, {}, {oldtype}};
    for (const I *a : {array_of_sizes, array_of_subsizes, array_of_starts}) {
        if constexpr (std::is_same_v<I, int>) c.ints.insert(c.ints.end(), a, a + n);
        else c.large.insert(c.large.end(), a, a + n);
    }
    c.ints.push_back(order);
    return finish_type(array_layout(sizes, runs, order, oldtype), std::move(c), newtype);
}

// Names set on predefined types (their `name` points into this map).
std::map<MPI_Datatype, std::string> g_predefined_names;

}  // namespace

extern "C" {

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return strided("MPI_Type_vector", MPI_COMBINER_VECTOR, count, blocklength, stride,
                   static_cast<MPI_Aint>(stride) * extent_of(oldtype), oldtype, newtype);
}
int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    return strided("MPI_Type_vector_c", MPI_COMBINER_VECTOR, count, blocklength, stride,
                   static_cast<MPI_Aint>(stride) * extent_of(oldtype), oldtype, newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return strided("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count, blocklength, stride, stride, oldtype,
                   newtype);
}
int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    return strided("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, count, blocklength, stride,
                   static_cast<MPI_Aint>(stride), oldtype, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                   extent_of(oldtype), oldtype, nullptr, newtype);
}
int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                   extent_of(oldtype), oldtype, nullptr, newtype);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                   array_of_displacements, 1, oldtype, nullptr, newtype);
}
int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0,
                   array_of_displacements, 1, oldtype, nullptr, newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, extent_of(oldtype), oldtype, nullptr, newtype);
}
int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, extent_of(oldtype), oldtype, nullptr, newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, 1, oldtype, nullptr, newtype);
}
int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, 1, oldtype, nullptr, newtype);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_struct", MPI_COMBINER_STRUCT, count, array_of_blocklengths, 0,
                   array_of_displacements, 1, MPI_DATATYPE_NULL, array_of_types, newtype);
}
int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                             MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_struct_c", MPI_COMBINER_STRUCT, count, array_of_blocklengths, 0,
                   array_of_displacements, 1, MPI_DATATYPE_NULL, array_of_types, newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor("MPI_Type_create_resized", 0, oldtype, newtype));
    return finish_type(resized_layout(layout_of(oldtype), lb, extent),
                       {MPI_COMBINER_RESIZED, {}, {lb, extent}, {oldtype}}, newtype);
}
int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor("MPI_Type_create_resized_c", 0, oldtype, newtype));
    return finish_type(resized_layout(layout_of(oldtype), static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent)),
                       {MPI_COMBINER_RESIZED, {}, {}, {oldtype}, {lb, extent}}, newtype);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                    oldtype, newtype);
}
int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype *newtype) {
    return subarray("MPI_Type_create_subarray_c", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                    oldtype, newtype);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor("MPI_Type_dup", 0, oldtype, newtype));
    MPI_Datatype t = make_type(layout_of(oldtype), {MPI_COMBINER_DUP, {}, {}, {oldtype}});
    t->committed = oldtype->committed;  // a duplicate of a committed type is committed
    if (const int rc = copy_attributes(oldtype, t); rc != MPI_SUCCESS) {  // what it copied is deleted
        dt_release(t);
        return raise(MPI_COMM_NULL, rc, "MPI_Type_dup", "an attribute's copy callback failed");
    }
    *newtype = t;
    return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype *datatype) {
    FTMPI_TRY(check_type_slot("MPI_Type_commit", datatype));
    (*datatype)->committed = true;
    return MPI_SUCCESS;
}

// The handle becomes MPI_DATATYPE_NULL; the type itself lives on while a
// request in progress holds a reference to it.
int MPI_Type_free(MPI_Datatype *datatype) {
    const char *call = "MPI_Type_free";
    FTMPI_TRY(check_type_slot(call, datatype));
    MPI_Datatype t = *datatype;
    if (t->predefined) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call, "cannot free predefined datatype %s", t->name);
    if (t->derived->permanent)
        return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call,
                     "cannot free a datatype returned by MPI_Type_create_f90_* (it is predefined)");
    if (t->derived->handles == 0)
        return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call, "datatype was already freed (every handle to it)");
    // The attributes go with the user's last handle (MPI_Type_get_contents
    // hands out more handles to the same object).
    if (t->derived->handles == 1)
        if (const int rc = delete_attributes(t); rc != MPI_SUCCESS)
            return raise(MPI_COMM_NULL, rc, call, "an attribute's delete callback failed");
    --t->derived->handles;
    dt_release(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent) {
    const char *call = "MPI_Type_get_true_extent";
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, datatype));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, true_lb, "true_lb"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, true_extent, "true_extent"));
    const Layout &l = type_layout(datatype);
    *true_lb = l.true_lb;
    *true_extent = l.true_ub - l.true_lb;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    MPI_Aint l = 0, e = 0;
    FTMPI_TRY(MPI_Type_get_extent(datatype, &l, &e));
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent) {
    MPI_Aint l = 0, e = 0;
    FTMPI_TRY(MPI_Type_get_true_extent(datatype, &l, &e));
    *true_lb = l;
    *true_extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *name) {
    FTMPI_CHECK(check_type("MPI_Type_set_name", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(check_nonnull("MPI_Type_set_name", MPI_COMM_NULL, name, "name"));
    if (datatype->derived != nullptr) {
        std::strncpy(datatype->derived->name, name, MPI_MAX_OBJECT_NAME - 1);
        datatype->derived->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    } else {
        std::string &s = g_predefined_names[datatype];
        s.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
        datatype->name = s.c_str();
    }
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address) {
    FTMPI_CHECK(check_nonnull("MPI_Get_address", MPI_COMM_NULL, address, "address"));
    *address = reinterpret_cast<MPI_Aint>(location);
    return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

}  // extern "C"
