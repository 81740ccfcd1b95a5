/*
 * mpit's checks and helpers shared by its files: mpit.c (control variables,
 * categories, the test) and mpit_pvars.c (performance variables).
 */
#ifndef FTMPI_MPIT_H
#define FTMPI_MPIT_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv, strdup */
#endif
#include <errno.h>

#include "ftlib.h"

extern int rank, size;

static inline int mpi_live(void) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

/* CHECK that also works before MPI_Init and after MPI_Finalize. */
#define T_CHECK(cond, ...)                                                                        \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            fprintf(stderr, "CHECK FAILED rank %d %s:%d: %s: ", rank, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            fflush(stderr);                                                                       \
            if (mpi_live()) MPI_Abort(MPI_COMM_WORLD, 99);                                        \
            _exit(99);                                                                            \
        }                                                                                         \
    } while (0)

#define T_RC(call, want)                                                                         \
    do {                                                                                         \
        int t_rc_ = (call);                                                                      \
        T_CHECK(t_rc_ == (want), "%s returned %d, expected %s (%d)", #call, t_rc_, #want, want); \
    } while (0)
#define T_OK(call) T_RC(call, MPI_SUCCESS)

/* mpit.c: a control variable's index (by name) and integer value. */
int cvar_index(const char *name);
long long cvar_int(int index);

/* mpit_pvars.c */
enum { SENT, SENT_BYTES, RECEIVED, RECEIVED_BYTES, NCOUNTERS };
/* One session's four counter handles. */
struct counters {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NCOUNTERS];
};
int pvar_index(const char *name, int var_class);
MPI_T_pvar_handle pvar_alloc(MPI_T_pvar_session s, const char *name, int var_class);
unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h);
int mpi_state(void);
void check_pvar_info(void);
void check_pvar_errors(void);
void check_p2p_counts(struct counters *all);
void check_bsend(void);

#endif
