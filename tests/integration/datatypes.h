/*
 * datatypes's files: datatypes.c (parts A to D, the test) and
 * datatypes_more.c (parts E to H).
 */
#ifndef FTMPI_DATATYPES_H
#define FTMPI_DATATYPES_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "testlib.h"

#define EAGER_N 100
#define RNDV_N 8192

extern int rank, size;

void part_e(void);
void part_f(void);
void part_g(void);
void part_h(void);

#endif
