/*
 * Every listening socket of a single-node job (the ranks' and ftmpirun's) is
 * bound to loopback (issue 18): rank 0 lists them with `ss -Hlntup` once
 * every rank has finished MPI_Init, and checks each one that belongs to a
 * process of the job. Needs ss (iproute2).
 */
#define _DEFAULT_SOURCE
#include <unistd.h>

#include "testlib.h"

int main(int argc, char **argv) {
    int me, size;
    tl_init(&argc, &argv, &me, &size, 1);
    int pid = (int)getpid(), *pids = malloc(sizeof(int) * (size_t)size);
    MPI_OK(MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (me == 0) {
        FILE *ss = popen("ss -Hlntup 2>&1", "r");
        CHECK(ss != NULL, "cannot run ss");
        char line[1024];
        int seen = 0, lines = 0;
        while (fgets(line, sizeof line, ss)) {
            ++lines;
            int owner = 0;
            for (const char *p = strstr(line, "pid="); p && !owner; p = strstr(p + 4, "pid=")) {
                const int q = atoi(p + 4);
                if (q == (int)getppid()) owner = q; /* ftmpirun */
                for (int r = 0; r < size; ++r)
                    if (q == pids[r]) owner = q;
            }
            if (!owner) continue;
            ++seen;
            /* Fields: netid state recv-q send-q local peer process. */
            char netid[16], state[16], local[256];
            int rq, sq;
            CHECK(sscanf(line, "%15s %15s %d %d %255s", netid, state, &rq, &sq, local) == 5, "ss line: %s", line);
            CHECK(strncmp(local, "127.", 4) == 0 || strncmp(local, "[::1]", 5) == 0 ||
                      strncmp(local, "[::ffff:127.", 12) == 0,
                  "process %d listens on %s, not loopback: %s", owner, local, line);
        }
        const int rc = pclose(ss);
        CHECK(rc == 0 && lines > 0, "ss failed (exit status %d, %d lines)", rc, lines);
        CHECK(seen > 0, "no listener of the job found");
        printf("listeners: %d sockets of the job, all on loopback\n", seen);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(pids);
    MPI_Finalize();
    return 0;
}
