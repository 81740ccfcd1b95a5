#include <cstring>

#include <catch2/catch.hpp>

#include "mpi/errors.hpp"
#include <mpi-ext.h>

using namespace ftmpi::mpi;

TEST_CASE("every error class has a name and a text", "[mpi][errors]") {
    for (int c = 0; c <= MPI_ERR_LASTCODE; ++c) {
        INFO("class " << c);
        REQUIRE(error_class_name(c) != nullptr);
        CHECK(std::strncmp(error_class_name(c), "MPI_", 4) == 0);
        CHECK(std::strlen(error_class_text(c)) > 0);
    }
    CHECK(error_class_name(MPI_ERR_LASTCODE + 1) == nullptr);
}

TEST_CASE("ULFM and older names are the same classes", "[mpi][errors]") {
    STATIC_REQUIRE(MPIX_ERR_PROC_FAILED == MPI_ERR_PROC_FAILED);
    STATIC_REQUIRE(MPIX_ERR_PROC_FAILED_PENDING == MPI_ERR_PROC_FAILED_PENDING);
    STATIC_REQUIRE(MPIX_ERR_REVOKED == MPI_ERR_REVOKED);
    STATIC_REQUIRE(MPI_ERR_RANK_FAIL_STOP == MPI_ERR_PROC_FAILED);
    STATIC_REQUIRE(MPI_ERR_INVALIDATED == MPI_ERR_REVOKED);
    CHECK(std::strcmp(error_class_name(MPI_ERR_PROC_FAILED), "MPI_ERR_PROC_FAILED") == 0);
    CHECK(std::strcmp(error_class_name(MPI_ERR_UNSUPPORTED_OPERATION), "MPI_ERR_UNSUPPORTED_OPERATION") == 0);
}
