// Predefined datatypes and the datatype queries (size, extent, name, counts).
#include "mpi/dt/predefined.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"

// Size: the data bytes (a pair type's members, not its padding); extent: the
// C++ object's. Contiguous unless a pair type has padding.
#define FTMPI_DEFINE_TYPE(symbol, ctype, label, category)                                             \
    ftmpi_predefined_datatype_s ftmpi_dt_##symbol{                                                    \
        {{ftmpi::mpi::Magic::datatype, ftmpi::mpi::data_size_v<ctype>, 0, sizeof(ctype), label, true, \
          ftmpi::mpi::data_size_v<ctype> == sizeof(ctype), true, alignof(ctype), nullptr}}};

extern "C" {
FTMPI_PREDEFINED_TYPES(FTMPI_DEFINE_TYPE)
#undef FTMPI_DEFINE_TYPE
}

namespace ftmpi::mpi {
namespace {
#define FTMPI_TYPE_HANDLE(symbol, ctype, label, category) reinterpret_cast<MPI_Datatype>(&ftmpi_dt_##symbol),
const MPI_Datatype k_predefined[] = {FTMPI_PREDEFINED_TYPES(FTMPI_TYPE_HANDLE)};
#undef FTMPI_TYPE_HANDLE
constexpr int k_predefined_count = static_cast<int>(sizeof k_predefined / sizeof k_predefined[0]);

#define FTMPI_TYPE_MEMBERS(symbol, ctype, label, category)        \
    Members{MembersOf<ctype>::n,                                  \
            {MembersOf<ctype>::off[0], MembersOf<ctype>::off[1]}, \
            {MembersOf<ctype>::size[0], MembersOf<ctype>::size[1]}},
const Members k_members[] = {FTMPI_PREDEFINED_TYPES(FTMPI_TYPE_MEMBERS)};
#undef FTMPI_TYPE_MEMBERS
}  // namespace

const Members &members_of(MPI_Datatype t) { return k_members[predefined_index(t)]; }

int predefined_index(MPI_Datatype t) {
    for (int i = 0; i < k_predefined_count; ++i)
        if (k_predefined[i] == t) return i;
    return -1;
}

MPI_Datatype predefined_at(int index) {
    return index >= 0 && index < k_predefined_count ? k_predefined[index] : MPI_DATATYPE_NULL;
}

}  // namespace ftmpi::mpi

extern "C" {

int MPI_Type_size(MPI_Datatype datatype, int *size) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_size", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_size", MPI_COMM_NULL, size, "size"));
    // A size an int cannot hold: MPI_UNDEFINED (MPI 3.1 §4.1.5; MPI_Type_size_x has it).
    *size = datatype->size > static_cast<std::size_t>(INT32_MAX) ? MPI_UNDEFINED : static_cast<int>(datatype->size);
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_size_x", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_size_x", MPI_COMM_NULL, size, "size"));
    *size = static_cast<MPI_Count>(datatype->size);
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_get_extent", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_extent", MPI_COMM_NULL, lb, "lb"));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_extent", MPI_COMM_NULL, extent, "extent"));
    *lb = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *name, int *resultlen) {
    FTMPI_CHECK(ftmpi::mpi::check_type("MPI_Type_get_name", MPI_COMM_NULL, datatype));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_name", MPI_COMM_NULL, name, "name"));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_get_name", MPI_COMM_NULL, resultlen, "resultlen"));
    std::strncpy(name, datatype->name, MPI_MAX_OBJECT_NAME - 1);
    name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

// Get_count counts whole elements of `datatype`; Get_elements counts basic
// elements (a derived type's signature). Either is MPI_UNDEFINED when the
// message ends inside one.
static int counted(const char *call, const MPI_Status *status, MPI_Datatype datatype, bool basic, MPI_Count *out) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull(call, MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(ftmpi::mpi::check_type(call, MPI_COMM_NULL, datatype));
    *out = basic ? ftmpi::mpi::elements_of(datatype, status->ftmpi_count)
                 : ftmpi::mpi::whole_elements_of(datatype, status->ftmpi_count);
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_count", MPI_COMM_NULL, count, "count"));
    MPI_Count n = 0;
    FTMPI_TRY(counted("MPI_Get_count", status, datatype, false, &n));
    *count = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_elements", MPI_COMM_NULL, count, "count"));
    MPI_Count n = 0;
    FTMPI_TRY(counted("MPI_Get_elements", status, datatype, true, &n));
    *count = n > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(n);
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Get_elements_x", MPI_COMM_NULL, count, "count"));
    return counted("MPI_Get_elements_x", status, datatype, true, count);
}

// For generalized requests and tools: the status then says `count` elements
// of `datatype` arrived (MPI_Get_count and MPI_Get_elements read it back).
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    using namespace ftmpi::mpi;
    FTMPI_CHECK(check_nonnull("MPI_Status_set_elements_x", MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(check_type("MPI_Status_set_elements_x", MPI_COMM_NULL, datatype));
    if (count < 0)
        return raise(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Status_set_elements_x", "negative count %lld",
                     static_cast<long long>(count));
    status->ftmpi_count = static_cast<std::size_t>(count) * datatype->size;
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count) {
    return MPI_Status_set_elements_x(status, datatype, count);
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Status_set_cancelled", MPI_COMM_NULL, status, "status"));
    status->ftmpi_cancelled = flag != 0 ? 1 : 0;
    return MPI_SUCCESS;
}

// MPI 4.1's accessors of the public fields (for languages and tools that
// cannot name them).
static int get_field(const char *call, const MPI_Status *status, int MPI_Status::*field, int *out, const char *arg) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull(call, MPI_COMM_NULL, status, "status"));
    FTMPI_CHECK(ftmpi::mpi::check_nonnull(call, MPI_COMM_NULL, out, arg));
    *out = status->*field;
    return MPI_SUCCESS;
}

static int set_field(const char *call, MPI_Status *status, int MPI_Status::*field, int value) {
    FTMPI_CHECK(ftmpi::mpi::check_nonnull(call, MPI_COMM_NULL, status, "status"));
    status->*field = value;
    return MPI_SUCCESS;
}

int MPI_Status_get_source(MPI_Status *status, int *source) {
    return get_field("MPI_Status_get_source", status, &MPI_Status::MPI_SOURCE, source, "source");
}
int MPI_Status_set_source(MPI_Status *status, int source) {
    return set_field("MPI_Status_set_source", status, &MPI_Status::MPI_SOURCE, source);
}
int MPI_Status_get_tag(MPI_Status *status, int *tag) {
    return get_field("MPI_Status_get_tag", status, &MPI_Status::MPI_TAG, tag, "tag");
}
int MPI_Status_set_tag(MPI_Status *status, int tag) {
    return set_field("MPI_Status_set_tag", status, &MPI_Status::MPI_TAG, tag);
}
int MPI_Status_get_error(MPI_Status *status, int *error) {
    return get_field("MPI_Status_get_error", status, &MPI_Status::MPI_ERROR, error, "error");
}
int MPI_Status_set_error(MPI_Status *status, int error) {
    return set_field("MPI_Status_set_error", status, &MPI_Status::MPI_ERROR, error);
}

// MPI 4.1 §5.1.9: the predefined pair type of MINLOC/MAXLOC for a value
// type and an index type, MPI_DATATYPE_NULL when there is none.
int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type) {
    using namespace ftmpi::mpi;
    const char *call = "MPI_Type_get_value_index";
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, value_type, "value_type"));
    FTMPI_CHECK(check_type(call, MPI_COMM_NULL, index_type, "index_type"));
    FTMPI_CHECK(check_nonnull(call, MPI_COMM_NULL, pair_type, "pair_type"));
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},     {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},       {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},     {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},         {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER}};
    *pair_type = MPI_DATATYPE_NULL;
    for (const auto &p : pairs)
        if (p.value == value_type && p.index == index_type) *pair_type = p.pair;
    return MPI_SUCCESS;
}

}  // extern "C"
