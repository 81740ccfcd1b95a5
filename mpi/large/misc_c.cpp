// The large-count (_c) queries about datatypes and statuses: they answer in
// MPI_Count. (The _c constructors are their int forms' templates in
// mpi/dt/constructors.cpp and darray.cpp; decoding is in envelope.cpp.)
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpi/checks.hpp"
#include "mpi/dt/derived.hpp"
#include "mpi/errors.hpp"
#include "mpi/large/count_as.hpp"
#include "mpi/objects.hpp"

using namespace ftmpi::mpi;

namespace {}  // namespace

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

}  // extern "C"
