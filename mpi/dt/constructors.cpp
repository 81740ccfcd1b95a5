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

// Indexed family: displacement i is disp[i] * unit bytes. Contents: count,
// the block lengths (or the one block length), then the displacements, with
// the ints (int displacements) or as addresses (MPI_Aint ones).
template <typename Disp>
int indexed(const char *call, int combiner, int count, const int *lens, int same_len, const Disp *disps, MPI_Aint unit,
            MPI_Datatype old, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor(call, count, old, newtype));
    if (lens != nullptr) FTMPI_CHECK(check_array(call, lens, count, "array_of_blocklengths"));
    else FTMPI_CHECK(check_blocklength(call, same_len));
    FTMPI_CHECK(check_array(call, disps, count, "array_of_displacements"));
    std::vector<Piece> pieces;
    pieces.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        const int len = lens != nullptr ? lens[i] : same_len;
        if (lens != nullptr) FTMPI_CHECK(check_blocklength(call, len, "array_of_blocklengths", i));
        pieces.push_back({static_cast<MPI_Aint>(disps[i]) * unit, static_cast<std::size_t>(len), old});
    }
    Contents c{combiner, {count}, {}, {old}};
    if (lens != nullptr) c.ints.insert(c.ints.end(), lens, lens + count);
    else c.ints.push_back(same_len);
    if constexpr (std::is_same_v<Disp, int>) c.ints.insert(c.ints.end(), disps, disps + count);
    else c.addrs.assign(disps, disps + count);
    return finish_type(build_layout(pieces), std::move(c), newtype);
}

// MPI_Type_create_subarray, and (I = MPI_Count) MPI_Type_create_subarray_c
// with values beyond INT_MAX: its contents then hold them as large counts.
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

}  // namespace

namespace ftmpi::mpi {

int subarray_large(const char *call, int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                   const MPI_Count *starts, int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return subarray(call, ndims, sizes, subsizes, starts, order, oldtype, newtype);
}

}  // namespace ftmpi::mpi

namespace {

// Names set on predefined types (their `name` points into this map).
std::map<MPI_Datatype, std::string> g_predefined_names;

}  // namespace

extern "C" {

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor("MPI_Type_contiguous", count, oldtype, newtype));
    return finish_type(build_layout({{0, static_cast<std::size_t>(count), oldtype}}),
                       {MPI_COMBINER_CONTIGUOUS, {count}, {}, {oldtype}}, newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_hvector";
    FTMPI_TRY(check_constructor(call, count, oldtype, newtype));
    FTMPI_CHECK(check_blocklength(call, blocklength));
    return finish_type(
        strided_layout(static_cast<std::size_t>(count), static_cast<std::size_t>(blocklength), stride, oldtype),
        {MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {oldtype}}, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_vector";
    FTMPI_TRY(check_constructor(call, count, oldtype, newtype));
    FTMPI_CHECK(check_blocklength(call, blocklength));
    return finish_type(strided_layout(static_cast<std::size_t>(count), static_cast<std::size_t>(blocklength),
                                      static_cast<MPI_Aint>(stride) * oldtype->extent, oldtype),
                       {MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {oldtype}}, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_indexed";
    FTMPI_CHECK(check_array(call, array_of_blocklengths, count, "array_of_blocklengths"));
    return indexed(call, MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                   valid_type(oldtype) ? oldtype->extent : 0, oldtype, newtype);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                             MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_hindexed";
    FTMPI_CHECK(check_array(call, array_of_blocklengths, count, "array_of_blocklengths"));
    return indexed(call, MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0, array_of_displacements, 1, oldtype,
                   newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, valid_type(oldtype) ? oldtype->extent : 0, oldtype, newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength,
                   array_of_displacements, 1, oldtype, newtype);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_struct";
    FTMPI_CHECK(check_count(call, MPI_COMM_NULL, count));
    FTMPI_CHECK(check_array(call, array_of_blocklengths, count, "array_of_blocklengths"));
    FTMPI_CHECK(check_array(call, array_of_displacements, count, "array_of_displacements"));
    FTMPI_CHECK(check_array(call, array_of_types, count, "array_of_types"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, newtype, "newtype"));
    std::vector<Piece> pieces;
    pieces.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        FTMPI_CHECK(check_blocklength(call, array_of_blocklengths[i], "array_of_blocklengths", i));
        if (!valid_type(array_of_types[i]))
            return raise(MPI_COMM_NULL, MPI_ERR_TYPE, call, "invalid datatype (argument array_of_types[%d])", i);
        pieces.push_back(
            {array_of_displacements[i], static_cast<std::size_t>(array_of_blocklengths[i]), array_of_types[i]});
    }
    Contents c{MPI_COMBINER_STRUCT,
               {count},
               {array_of_displacements, array_of_displacements + count},
               {array_of_types, array_of_types + count}};
    c.ints.insert(c.ints.end(), array_of_blocklengths, array_of_blocklengths + count);
    return finish_type(build_layout(pieces, true), std::move(c), newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
    FTMPI_TRY(check_constructor("MPI_Type_create_resized", 0, oldtype, newtype));
    return finish_type(resized_layout(layout_of(oldtype), lb, extent),
                       {MPI_COMBINER_RESIZED, {}, {lb, extent}, {oldtype}}, newtype);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
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
