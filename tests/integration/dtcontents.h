/*
 * dtcontents's parts (see dtcontents.c's header for what each checks), each in
 * its own file of the one test program, and what they share.
 */
#ifndef FTMPI_DTCONTENTS_H
#define FTMPI_DTCONTENTS_H

#include <complex.h>
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#include "testlib.h"

extern int rank, size;

/* C, H (dtcontents_darray.c) */
void part_c(void);
void part_h(void);
/* E, F (dtcontents_external.c) */
void external_sizes(void);
void external_exact_cases(void);
void external_round_trip(void);
void part_f(void);
/* G (dtcontents_errors.c) */
void part_g(void);

#endif
