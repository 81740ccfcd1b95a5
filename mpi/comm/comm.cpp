// Communicator objects and the predefined handles that are not datatypes.
#include <cstring>

#include "mpi/checks.hpp"
#include "mpi/ulfm/recovery.hpp"
#include "mpi/p2p/matching.hpp"

extern "C" {
ftmpi_predefined_comm_s ftmpi_comm_world;
ftmpi_predefined_comm_s ftmpi_comm_self;
ftmpi_predefined_group_s ftmpi_group_empty;
ftmpi_predefined_message_s ftmpi_message_no_proc;
char ftmpi_in_place_marker;
int ftmpi_unweighted_marker;
int ftmpi_weights_empty_marker;

ftmpi_predefined_errhandler_s ftmpi_errors_are_fatal{
    {{ftmpi::mpi::Magic::errhandler, ftmpi_errhandler_s::Kind::fatal, nullptr, true}}};
ftmpi_predefined_errhandler_s ftmpi_errors_return{
    {{ftmpi::mpi::Magic::errhandler, ftmpi_errhandler_s::Kind::ret, nullptr, true}}};
ftmpi_predefined_errhandler_s ftmpi_errors_abort{
    {{ftmpi::mpi::Magic::errhandler, ftmpi_errhandler_s::Kind::abort, nullptr, true}}};

// The predefined ops live in mpi/coll/ops.cpp.
}

namespace ftmpi::mpi {

// Context ids of the predefined communicators; 4 to 7 are mpi/dynamic/connect.hpp's,
// user ones start at 8.
constexpr std::uint32_t k_world_context = 0;
constexpr std::uint32_t k_self_context = 2;

void setup_predefined_comms(int rank, int size, int id_base) {
    auto setup = [](ftmpi_comm_s &c, std::uint32_t ctx, std::uint64_t uid, int r, std::vector<int> procs,
                    const char *name) {
        c.magic = Magic::comm;
        c.context = ctx;
        c.uid = uid;
        c.rank = r;
        c.size = static_cast<int>(procs.size());
        c.procs = std::move(procs);
        c.queue = g.engine->open(ctx, uid);
        c.coll_queue = g.engine->open(ctx + 1, uid);
        c.errhandler = initial_errhandler();
        c.predefined = true;
        std::strncpy(c.name, name, sizeof c.name - 1);
    };
    std::vector<int> all(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) all[static_cast<std::size_t>(i)] = id_base + i;
    // A spawned job's MPI_COMM_WORLD has a uid of its own: both worlds use context 0.
    const std::uint64_t world_uid = (static_cast<std::uint64_t>(id_base) << 2) | 1;
    setup(ftmpi_comm_world.obj, k_world_context, world_uid, rank, std::move(all), "MPI_COMM_WORLD");
    setup(ftmpi_comm_self.obj, k_self_context, 2, 0, {id_base + rank}, "MPI_COMM_SELF");
    register_comm(&ftmpi_comm_world.obj);
    register_comm(&ftmpi_comm_self.obj);
    ftmpi_message_no_proc.obj.magic = Magic::message;
    ftmpi_group_empty.obj.predefined = true;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
    FTMPI_TRY(check_init("MPI_Comm_rank"));
    FTMPI_CHECK(check_comm("MPI_Comm_rank", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_rank", comm, rank, "rank"));
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size) {
    FTMPI_TRY(check_init("MPI_Comm_size"));
    FTMPI_CHECK(check_comm("MPI_Comm_size", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_size", comm, size, "size"));
    *size = comm->inter ? static_cast<int>(comm->local_procs.size()) : comm->size;
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name) {
    FTMPI_TRY(check_init("MPI_Comm_set_name"));
    FTMPI_CHECK(check_comm("MPI_Comm_set_name", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_set_name", comm, name, "name"));
    std::strncpy(comm->name, name, MPI_MAX_OBJECT_NAME - 1);
    comm->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen) {
    FTMPI_TRY(check_init("MPI_Comm_get_name"));
    FTMPI_CHECK(check_comm("MPI_Comm_get_name", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_name", comm, name, "name"));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_name", comm, resultlen, "resultlen"));
    std::strcpy(name, comm->name);
    *resultlen = static_cast<int>(std::strlen(name));
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    FTMPI_CHECK(check_comm("MPI_Comm_set_errhandler", comm));
    if (errhandler == MPI_ERRHANDLER_NULL || errhandler->magic != Magic::errhandler)
        return raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler (argument errhandler)");
    errhandler_retain(errhandler);
    errhandler_release(comm->errhandler);
    comm->errhandler = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    FTMPI_CHECK(check_comm("MPI_Comm_get_errhandler", comm));
    FTMPI_CHECK(check_nonnull("MPI_Comm_get_errhandler", comm, errhandler, "errhandler"));
    *errhandler = comm->errhandler ? comm->errhandler : initial_errhandler();
    errhandler_retain(*errhandler);  // the returned handle is the user's to free
    return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler) {
    FTMPI_CHECK(check_nonnull("MPI_Errhandler_free", MPI_COMM_NULL, errhandler, "errhandler"));
    if (*errhandler == MPI_ERRHANDLER_NULL || (*errhandler)->magic != Magic::errhandler)
        return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler");
    errhandler_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

}  // extern "C"
