/*
 * Respawn: give the job back its lost ranks (ULFM + MPI_Comm_spawn).
 *
 * The job iterates; each iteration every rank contributes its rank number
 * to an allgather and checks it got 0..n-1 in order, so the job is at full
 * size with every rank number in its place. Kill number k (k = 0, 1, ...)
 * happens at iteration 20k + 10: the victim raises SIGKILL on itself. The
 * victims alternate between a pseudo-random rank and the rank respawned
 * last (so freshly spawned processes die too).
 *
 * Recovery, at the survivors: revoke the world, shrink it, spawn as many
 * processes as died (this program, with "--respawned"), merge (survivors
 * first), tell each child the rank number it takes (a dead rank's, in
 * order), and split the merged communicator by rank number: every
 * survivor keeps its rank, each child takes a dead rank's. A failure during
 * the recovery makes it start over. The job goes on at full size.
 *
 *   ftmpirun -n 4 ./respawn [kills (default 10)] [seed] [kill|stop]
 *
 * With `stop` the victims stop (SIGSTOP) instead: the failure detector, or
 * ftmpirun for a process alone in its spawned job, finds them and has them
 * killed.
 *
 * The first survivor prints one line per recovery: the rank numbers
 * respawned, that the survivors kept theirs, and the time from the
 * iteration of the failure to the job at full size again, with its parts:
 * detection (until the failed allgather returned), revoke + shrink, spawn
 * (until the children connected), merge + split. Exits 0 once every kill
 * was recovered from.
 */
#include <limits.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL(...)                                 \
    do {                                          \
        fprintf(stderr, "respawn: " __VA_ARGS__); \
        fputc('\n', stderr);                      \
        MPI_Abort(MPI_COMM_WORLD, 2);             \
    } while (0)

/* What a child needs to join: its rank number, the iteration, the kills so
   far and wanted, the rank respawned last and the seed of the victims. */
struct Joining {
    int rank, iter, kills, target, last_respawned, seed, sig;
};
#define JOINING_INTS 7

/* Joins the children of `inter` (the survivors' side when `parent` is 0)
   into one communicator ordered by rank number. `dead` lists the rank
   numbers the children take (survivors' side). */
static int rejoin(MPI_Comm inter, int parent, int myrank, const int *dead, int ndead, struct Joining *state,
                  MPI_Comm *world) {
    MPI_Comm merged;
    int rc = MPI_Intercomm_merge(inter, parent ? 1 : 0, &merged);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    int me;
    MPI_Comm_rank(merged, &me);
    if (!parent) {
        /* survivors are merged ranks 0..s-1; children s..s+ndead-1 */
        int s;
        MPI_Comm_size(inter, &s);
        if (me == 0)
            for (int i = 0; i < ndead && rc == MPI_SUCCESS; ++i) {
                struct Joining j = *state;
                j.rank = dead[i];
                rc = MPI_Send(&j, JOINING_INTS, MPI_INT, s + i, 77, merged);
            }
    } else {
        rc = MPI_Recv(state, JOINING_INTS, MPI_INT, 0, 77, merged, MPI_STATUS_IGNORE);
        myrank = state->rank;
    }
    /* every member must reach the split: a failure shows there */
    int ok = rc == MPI_SUCCESS;
    int arc = MPIX_Comm_agree(merged, &ok);
    if (arc != MPI_SUCCESS || !ok) {
        MPI_Comm_free(&merged);
        return arc != MPI_SUCCESS ? arc : MPI_ERR_OTHER;
    }
    rc = MPI_Comm_split(merged, 0, myrank, world);
    MPI_Comm_free(&merged);
    if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(*world, MPI_ERRORS_RETURN);
    return rc;
}

/* The pseudo-random victim of kill k: the same at every process. */
static int pick(unsigned seed, int k, int n) {
    unsigned x = seed * 2654435761u ^ (unsigned)(k + 1) * 0x9E3779B9u;
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return (int)(x % (unsigned)n);
}

/* Brings the job back to full size after a failure of `world` (n ranks, this
   process being rank number `myrank`): revoke, shrink, spawn as many
   children as died, and join them in their dead ranks' places. Returns the
   new world; `st` moves on to the next failure. Tries again from the
   survivors until every survivor agrees it worked. */
static MPI_Comm recover(MPI_Comm world, int myrank, int n, struct Joining *st, double t_fail, char *program) {
    const double t_detect = MPI_Wtime();
    double t_shrunk = 0, t_spawned = 0;
    MPIX_Comm_revoke(world);
    for (;;) {
        MPI_Comm shrunk, inter, fresh;
        if (MPIX_Comm_shrink(world, &shrunk) != MPI_SUCCESS) continue;
        t_shrunk = MPI_Wtime();
        MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
        int s, me;
        MPI_Comm_size(shrunk, &s);
        MPI_Comm_rank(shrunk, &me);
        /* who is still here: the dead rank numbers are the others */
        int *alive = calloc((size_t)n, sizeof(int)), *gathered = malloc(sizeof(int) * (size_t)s);
        int ok = MPI_Allgather(&myrank, 1, MPI_INT, gathered, 1, MPI_INT, shrunk) == MPI_SUCCESS;
        int dead[64], ndead = 0;
        for (int i = 0; ok && i < s; ++i) alive[gathered[i]] = 1;
        for (int r = 0; ok && r < n; ++r)
            if (!alive[r]) dead[ndead++] = r;
        /* restart from the earliest iteration any survivor was at */
        int lowest = st->iter;
        ok = ok && MPI_Allreduce(&st->iter, &lowest, 1, MPI_INT, MPI_MIN, shrunk) == MPI_SUCCESS;
        /* when the failure's iteration began (one node: one clock; a
           process that joined since then has no time of its own) */
        ok = ok && MPI_Allreduce(MPI_IN_PLACE, &t_fail, 1, MPI_DOUBLE, MPI_MAX, shrunk) == MPI_SUCCESS;
        free(alive);
        free(gathered);
        char *args[] = {"--respawned", NULL};
        int rc = ok ? MPI_Comm_spawn(program, args, ndead, MPI_INFO_NULL, 0, shrunk, &inter, MPI_ERRCODES_IGNORE)
                    : MPI_ERR_OTHER;
        if (rc == MPI_SUCCESS) {
            t_spawned = MPI_Wtime();
            MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
            struct Joining j = {0, lowest, st->kills + 1, st->target, dead[ndead - 1], st->seed, st->sig};
            rc = rejoin(inter, 0, myrank, dead, ndead, &j, &fresh);
            MPI_Comm_disconnect(&inter);
        }
        int done = rc == MPI_SUCCESS;
        /* every survivor agrees before it leaves the loop */
        MPIX_Comm_agree(shrunk, &done);
        if (!done) {
            if (rc == MPI_SUCCESS) MPI_Comm_free(&fresh);
            MPI_Comm_free(&world);
            world = shrunk; /* start over from the survivors; rank numbers stay the full job's (n) */
            continue;
        }
        MPI_Comm_free(&shrunk);
        MPI_Comm_free(&world);
        int newrank;
        MPI_Comm_rank(fresh, &newrank);
        if (newrank != myrank) FAIL("survivor with rank %d got rank %d", myrank, newrank);
        st->iter = lowest;
        ++st->kills;
        st->last_respawned = dead[ndead - 1];
        if (me == 0) { /* a survivor */
            char list[256] = "";
            for (int i = 0; i < ndead; ++i)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", dead[i]);
            const double t_done = MPI_Wtime();
            printf(
                "recovery %d: rank %s respawned, every survivor kept its rank, full size (%d) again "
                "%.3f s after the failure's iteration began (detected %.3f, revoke+shrink %.3f, spawn "
                "%.3f, merge+split %.3f)\n",
                st->kills, list, n, t_done - t_fail, t_detect - t_fail, t_shrunk - t_detect, t_spawned - t_shrunk,
                t_done - t_spawned);
            fflush(stdout);
        }
        return fresh;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int respawned = argc > 1 && strcmp(argv[1], "--respawned") == 0;
    const int kills_wanted = !respawned && argc > 1 ? atoi(argv[1]) : 10;
    const int seed_arg = !respawned && argc > 2 ? atoi(argv[2]) : 7;
    const int sig_arg = !respawned && argc > 3 && strcmp(argv[3], "stop") == 0 ? SIGSTOP : SIGKILL;
    MPI_Comm world;
    /* respawned processes have this from the root */
    struct Joining state = {0, 0, 0, kills_wanted, -1, seed_arg, sig_arg};
    int myrank;
    if (respawned) {
        MPI_Comm parent;
        MPI_Comm_get_parent(&parent);
        if (parent == MPI_COMM_NULL) FAIL("--respawned, but no parent");
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        if (rejoin(parent, 1, -1, NULL, 0, &state, &world) != MPI_SUCCESS) {
            /* the recovery failed while we joined: the survivors start over
               with fresh children; this one just leaves */
            MPI_Finalize();
            return 0;
        }
        MPI_Comm_disconnect(&parent);
        myrank = state.rank;
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &world);
        MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
        MPI_Comm_rank(world, &myrank);
    }
    int n;
    MPI_Comm_size(world, &n);
    int *all = malloc(sizeof(int) * (size_t)n);
    double t_fail = 0;
    while (state.kills < state.target) {
        if (state.iter == 20 * state.kills + 10) {
            t_fail = MPI_Wtime();
            const int last = state.last_respawned;
            int victim = (state.kills % 2 == 1 && last >= 0) ? last : pick((unsigned)state.seed, state.kills, n);
            if (myrank == victim) raise(state.sig);
        }
        int rc = MPI_Allgather(&myrank, 1, MPI_INT, all, 1, MPI_INT, world);
        if (rc == MPI_SUCCESS) {
            for (int r = 0; r < n; ++r)
                if (all[r] != r) FAIL("iteration %d: slot %d holds rank %d", state.iter, r, all[r]);
            ++state.iter;
            continue;
        }
        world = recover(world, myrank, n, &state, t_fail, argv[0]); /* until the job is at full size again */
    }
    /* the respawned processes check their place too */
    int r;
    MPI_Comm_rank(world, &r);
    if (r != myrank) FAIL("rank %d sits at %d", myrank, r);
    MPI_Allgather(&myrank, 1, MPI_INT, all, 1, MPI_INT, world);
    for (int i = 0; i < n; ++i)
        if (all[i] != i) FAIL("at the end, slot %d holds rank %d", i, all[i]);
    if (myrank == 0)
        printf("respawn: %d failures recovered, %d ranks at the end, iteration %d\n", state.kills, n, state.iter);
    free(all);
    MPI_Comm_free(&world);
    MPI_Finalize();
    return 0;
}
