// The MPI-1 calls that MPI-2 deprecated (and MPI-3 removed), which Open MPI
// and MPICH still export and older programs still call: each is the call
// that replaced it.
#include "mpi/checks.hpp"

extern "C" {

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state) {
    return MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
int MPI_Keyval_free(int *keyval) { return MPI_Comm_free_keyval(keyval); }
int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val) {
    return MPI_Comm_set_attr(comm, keyval, attribute_val);
}
int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
    return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
int MPI_Attr_delete(MPI_Comm comm, int keyval) { return MPI_Comm_delete_attr(comm, keyval); }
int MPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler) {
    return MPI_Comm_create_errhandler(fn, errhandler);
}
int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return MPI_Comm_set_errhandler(comm, errhandler); }
int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler) { return MPI_Comm_get_errhandler(comm, errhandler); }
int MPI_Address(void *location, MPI_Aint *address) { return MPI_Get_address(location, address); }
int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent) {
    MPI_Aint lb = 0;
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_extent", MPI_COMM_NULL, extent, "extent"));
    return MPI_Type_get_extent(datatype, &lb, extent);
}
int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement) {
    MPI_Aint extent = 0;
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_lb", MPI_COMM_NULL, displacement, "displacement"));
    return MPI_Type_get_extent(datatype, displacement, &extent);
}
int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement) {
    MPI_Aint lb = 0, extent = 0;
    FTMPI_CHECK(ftmpi::mpi::check_nonnull("MPI_Type_ub", MPI_COMM_NULL, displacement, "displacement"));
    FTMPI_TRY(MPI_Type_get_extent(datatype, &lb, &extent));
    *displacement = lb + extent;
    return MPI_SUCCESS;
}
int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
int MPI_Type_hindexed(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    return MPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}
int MPI_Type_struct(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[],
                    MPI_Datatype *newtype) {
    return MPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}

// The profiling control: the library itself does nothing with it (MPI 3.1
// §14.2.4); a profiling tool that defines MPI_Pcontrol sees the calls.
int MPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

}  // extern "C"
