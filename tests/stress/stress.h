/*
 * The stress program's state and helpers, shared by its files: stress.c (the
 * rounds, the generation's objects, respawn, the program) and stress_round.c
 * (the checked operations of a round).
 */
#ifndef FTMPI_STRESS_H
#define FTMPI_STRESS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* setenv */
#endif
#include <mpi.h>
#include <mpi-ext.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int wrank;
extern int bad;
extern MPI_Comm comm;
extern int gen, round_no;
extern int use_rma, use_io, use_threads, use_spawn;
extern const char *io_dir;
extern int rounds;
extern const char *features;
extern const char *child_kill; /* -K: the kills of the first respawn's children */
extern int world_size;         /* the job's size at the start: respawns go back to it */
extern int respawns;           /* respawns so far, the same in every member of comm */

/* A failure explains an error when its class is one of these. */
int failure_class(int rc);
/* 0 when rc is success, 1 when a failure explains it, and a bug otherwise. */
int check_rc(int rc, const char *what);
void wrong(const char *what, long at, long got, long want);

/* The value rank `r` contributes at index i in this round. */
static inline int val(int r, int i) { return (r + 1) * 1000 + round_no * 7 + (i % 13); }

/* stress_round.c: each returns 1 when a call failed (check_rc). */
int ring_on(MPI_Comm c, int bytes, int tag);
int ring(int bytes);
int allreduce(int count);
int bcast(int bytes);
int reduce_max(int count);
int allgather(int count);
int alltoall(int count);
int scan_sum(void);
int gather_scatter(int count);
int dup_barrier(void);

#endif
