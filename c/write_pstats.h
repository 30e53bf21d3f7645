/* write_pstats.h - a call graph -> Python's pstats file (write_pstats.c). */
#ifndef PB_WRITE_PSTATS_H
#define PB_WRITE_PSTATS_H

#include <stdio.h>
#include "chunk_graph.h"

/* The marshal dump of g's {(file, line, funcname): (cc, nc, tt, ct, callers)}
 * to fp (see write_pstats.c for every number's meaning).  Errors in werr:
 * limit (memory), io (a failed write). */
pb_status pb_pstats_write(const pb_cgraph *g, FILE *fp, pb_error *werr);

#endif
