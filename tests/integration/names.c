/*
 * Ports and the name service (MPI 3.1 §10.4): rank 0 opens a port and
 * publishes it; every rank looks it up and gets the same name; a second
 * publish, an unknown name, an unpublish twice and a port closed twice get
 * their error classes; after the unpublish nobody finds the name. Each rank
 * also publishes a name of its own, which every other rank finds.
 * MPI_Comm_spawn of a program that never calls MPI_Init fails with
 * MPI_ERR_SPAWN (as where nothing can spawn). Plain MPI-2, so it
 * builds with any MPI.
 */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static void expect_class(int rc, int cls, const char *what) {
    CHECK(tl_class_of(rc) == cls, "%s: class %d (rc %d), expected %d", what, tl_class_of(rc), rc, cls);
}

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "a process started by ftmpirun has a parent");

    /* spawning a program that is no MPI program fails under ftmpirun; a
       singleton (or a launcher ftmpi leaves after the wire-up) cannot spawn
       at all */
    const int spawn_class = MPI_ERR_SPAWN;
    MPI_Comm children = MPI_COMM_WORLD;
    int codes[3] = {0, 0, 0};
    expect_class(MPI_Comm_spawn("true", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children, codes),
                 spawn_class, "MPI_Comm_spawn");
    CHECK(children == MPI_COMM_NULL, "intercomm after a failed spawn");
    for (int i = 0; i < 3; ++i) CHECK(tl_class_of(codes[i]) == spawn_class, "errcode %d: %d", i, codes[i]);

    char port[MPI_MAX_PORT_NAME] = "", found[MPI_MAX_PORT_NAME] = "";
    if (rank == 0) {
        MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
        MPI_OK(MPI_Publish_name("ftmpi-test-service", MPI_INFO_NULL, port));
        expect_class(MPI_Publish_name("ftmpi-test-service", MPI_INFO_NULL, port), MPI_ERR_SERVICE,
                     "publishing a name twice");
    }
    MPI_OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Lookup_name("ftmpi-test-service", MPI_INFO_NULL, found));
    CHECK(strcmp(found, port) == 0, "lookup gave \"%s\", published \"%s\"", found, port);
    expect_class(MPI_Lookup_name("ftmpi-test-nobody", MPI_INFO_NULL, found), MPI_ERR_NAME,
                 "looking up an unknown name");

    /* a name per rank, found by every rank */
    char mine[64], other[64], myport[MPI_MAX_PORT_NAME];
    snprintf(mine, sizeof mine, "ftmpi-test-rank-%d", rank);
    MPI_OK(MPI_Open_port(MPI_INFO_NULL, myport));
    CHECK(strcmp(myport, port) != 0 || rank != 0, "two ports of one process share a name");
    MPI_OK(MPI_Publish_name(mine, MPI_INFO_NULL, myport));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    char ports[8][MPI_MAX_PORT_NAME];
    const int n = size < 8 ? size : 8;
    for (int r = 0; r < n; ++r) {
        snprintf(other, sizeof other, "ftmpi-test-rank-%d", r);
        MPI_OK(MPI_Lookup_name(other, MPI_INFO_NULL, ports[r]));
        for (int q = 0; q < r; ++q) CHECK(strcmp(ports[q], ports[r]) != 0, "ranks %d and %d have one port", q, r);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Unpublish_name(mine, MPI_INFO_NULL, myport));
    MPI_OK(MPI_Close_port(myport));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_OK(MPI_Unpublish_name("ftmpi-test-service", MPI_INFO_NULL, port));
        expect_class(MPI_Unpublish_name("ftmpi-test-service", MPI_INFO_NULL, port), MPI_ERR_SERVICE,
                     "unpublishing a name twice");
        MPI_OK(MPI_Close_port(port));
        expect_class(MPI_Close_port(port), MPI_ERR_PORT, "closing a port twice");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    expect_class(MPI_Lookup_name("ftmpi-test-service", MPI_INFO_NULL, found), MPI_ERR_NAME, "lookup after unpublish");
    snprintf(other, sizeof other, "ftmpi-test-rank-%d", (rank + 1) % size);
    expect_class(MPI_Lookup_name(other, MPI_INFO_NULL, found), MPI_ERR_NAME,
                 "lookup of another rank's name after unpublish");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("names: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
