/*
 * io's shared state and helpers; its parts live in io.c (manage),
 * io_views.c (subarray, indexed), io_shared.c (shared) and io_errors.c
 * (errors, datareps).
 */
#ifndef FTMPI_IO_H
#define FTMPI_IO_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

extern int rank, size;
extern char dir[256]; /* the test's directory, the same at every rank */

void path_of(char *out, size_t n, const char *name);
/* Rank 0's POSIX view of the whole file; *len gets its size. */
unsigned char *slurp(const char *path, size_t *len);
void compare_file(const char *path, const unsigned char *ref, size_t ref_len);
void expect_class(int rc, int cls, const char *what);
void expect_size(MPI_File fh, MPI_Offset expected, const char *after);

/* The parts, in the order main runs them. */
void subarray(void);
void split_and_nonblocking(void);
void indexed(void);
void shared(void);
void errors(void);
void datareps(void);

#endif
