/*
 * The pages of the shared-memory rings are mapped in by MPI_Init, not one
 * fault per 64 small messages in the job's first milliseconds: after
 * MPI_Init, each segment of a pair of this process (one per other rank of
 * the node) has both of its 256 KiB rings resident in this process
 * (/proc/self/smaps), before any message of the program's own.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

int main(int argc, char **argv) {
    int rank, size;
    tl_init(&argc, &argv, &rank, &size, 2);
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL, "cannot read /proc/self/smaps");
    char line[512];
    int pairs = 0, in_pair = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) {
            /* a mapping's first line (its range in lower-case hex, then its
               path); the lines of its fields start with a capital */
            in_pair = strstr(line, "/ftmpi-") != NULL && strstr(line, "-pair") != NULL;
            if (in_pair) ++pairs;
            continue;
        }
        long kib;
        if (in_pair && sscanf(line, "Rss: %ld kB", &kib) == 1)
            CHECK(kib >= 2 * 256, "a pair's segment has %ld KiB resident after MPI_Init, expected both rings (512)",
                  kib);
    }
    fclose(f);
    CHECK(pairs == size - 1, "%d pair segments mapped, expected %d", pairs, size - 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("shm_prefault: %d ranks, every pair's rings resident after MPI_Init\n", size);
    MPI_Finalize();
    return 0;
}
