/*
 * Helpers for ftmpi's multi-process test programs (plain C99 + mpi.h, so the
 * same programs build with any MPI's mpicc).
 *
 * CHECK prints the failed condition with rank, file and line, then aborts the
 * whole job with exit code 99, so a failing check can never pass silently.
 */
#ifndef FTMPI_TESTLIB_H
#define FTMPI_TESTLIB_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tl_rank(void) {
    int r = -1, init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

#define CHECK(cond, ...)                                                                               \
    do {                                                                                               \
        if (!(cond)) {                                                                                 \
            fprintf(stderr, "CHECK FAILED rank %d %s:%d: %s: ", tl_rank(), __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                              \
            fputc('\n', stderr);                                                                       \
            fflush(stderr);                                                                            \
            MPI_Abort(MPI_COMM_WORLD, 99);                                                             \
        }                                                                                              \
    } while (0)

#define MPI_OK(call)                                                   \
    do {                                                               \
        int tl_rc_ = (call);                                           \
        CHECK(tl_rc_ == MPI_SUCCESS, "%s returned %d", #call, tl_rc_); \
    } while (0)

/* The error class of an MPI return code. */
static inline int tl_class_of(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* MPI_Init, this process's rank and the job size in MPI_COMM_WORLD, and a
   check that the job has at least `min_size` ranks. */
static inline void tl_init(int *argc, char ***argv, int *rank, int *size, int min_size) {
    MPI_OK(MPI_Init(argc, argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, size));
    CHECK(*size >= min_size, "needs at least %d ranks, got %d", min_size, *size);
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE, which must be granted,
   then this process's rank and the job size in MPI_COMM_WORLD. */
static inline void tl_init_multiple(int *argc, char ***argv, int *rank, int *size) {
    int provided = -1;
    MPI_OK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread: provided %d", provided);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, size));
}

/* Deterministic byte pattern of message `seed` at offset i. */
static inline unsigned char tl_pattern(uint64_t seed, size_t i) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    return (unsigned char)(x ^ (x >> 17));
}

static inline void tl_fill(unsigned char *buf, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; ++i) buf[i] = tl_pattern(seed, i);
}

/* Index of the first wrong byte, or (size_t)-1 when all n bytes are right. */
static inline size_t tl_verify(const unsigned char *buf, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; ++i)
        if (buf[i] != tl_pattern(seed, i)) return i;
    return (size_t)-1;
}

#endif
