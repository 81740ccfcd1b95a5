/*
 * coll's state and helpers shared by its files: coll.c (the collectives
 * against the sequential reference, the test) and coll_more.c (the other
 * checks).
 */
#ifndef FTMPI_COLL_H
#define FTMPI_COLL_H

#include "testlib.h"

extern int rank, size;
/* The communicator under test: MPI_COMM_WORLD, then one from MPI_Comm_split. */
extern MPI_Comm tc;

size_t esize(MPI_Datatype t);
void *xmalloc(size_t n);
/* Completes a nonblocking collective while user traffic on the same
 * communicator runs around a ring, received with wildcards. */
void finish(MPI_Request *coll, int nb);

/* coll_more.c */
void t_noncommutative(int nb);
void t_minloc(int nb);
void t_overlap(void);
void t_many(void);
void t_errors(void);
void t_derived(void);

#endif
