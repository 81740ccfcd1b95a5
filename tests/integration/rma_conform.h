/*
 * rma_conform's files: rma_conform.c (epochs, dynamic, shared_query, the
 * test) and rma_conform_list.c (list).
 */
#ifndef FTMPI_RMA_CONFORM_H
#define FTMPI_RMA_CONFORM_H

#include "testlib.h"

extern int rank, size;

void list(void);

#endif
