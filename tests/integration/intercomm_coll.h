/*
 * intercomm_coll's state and helpers, shared by its files: intercomm_coll.c
 * (setup, the failure modes), intercomm_coll_ops.c (the collectives) and
 * intercomm_coll_comms.c (split and create).
 */
#ifndef FTMPI_INTERCOMM_COLL_H
#define FTMPI_INTERCOMM_COLL_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <stdlib.h>

#include "ftlib.h"

extern int world, wsize, side, lrank, lsize, rsize, a_size;
extern MPI_Comm inter;
extern MPI_Datatype pair_t; /* two unsigned: an affine map x -> m*x + c */
extern MPI_Op compose_op;   /* "first map, then second": associative, not commutative */

static inline int remote_world(int j) { return side == 0 ? a_size + j : j; }
static inline int local_world(int j) { return side == 0 ? j : a_size + j; }
static inline int val(int w, int i) { return w * 1000 + i; }

/* Runs `blocking`, or `nonblocking` (which sets req_) and waits; MPI_SUCCESS expected. */
#define COLL(nb, blocking, nonblocking)                 \
    do {                                                \
        if (!(nb)) {                                    \
            MPI_OK(blocking);                           \
        } else {                                        \
            MPI_Request req_ = MPI_REQUEST_NULL;        \
            MPI_OK(nonblocking);                        \
            MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE)); \
        }                                               \
    } while (0)

static inline int *ints(int n, int fill) {
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; ++i) p[i] = fill;
    return p;
}

/* The root argument of a rooted collective whose root is local rank `rroot`
   of group `rside`. */
static inline int root_arg(int rside, int rroot) {
    if (side != rside) return rroot;
    return lrank == rroot ? MPI_ROOT : MPI_PROC_NULL;
}

/* (a then b) = (a.m * b.m, b.m * a.c + b.c); inout = in op inout. */
void compose(void *in, void *inout, int *len, MPI_Datatype *t);

/* intercomm_coll_ops.c: every collective, the erroneous calls, then split
   and create (intercomm_coll_comms.c), all checked. */
void correctness(void);
/* intercomm_coll_comms.c */
void test_split(void);
void test_split_type(void);
void test_create(void);

#endif
