/* write_callgrind.h - a call graph -> Valgrind's callgrind format (write_callgrind.c). */
#ifndef PB_WRITE_CALLGRIND_H
#define PB_WRITE_CALLGRIND_H

#include <stdio.h>
#include "chunk_graph.h"

/* g as a callgrind file on fp (see write_callgrind.c for what each cost
 * is).  Errors in werr: limit (memory), io (a failed write). */
pb_status pb_callgrind_write(const pb_cgraph *g, FILE *fp, pb_error *werr);

#endif
