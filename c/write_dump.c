/* write_dump.c - the dump target: a profile's chunk stream as JSON Lines
 * (one chunk a line, json_lines.c's conventions) on the stream pb_write
 * opened through output.h (write_dump.h). */
#include <stdio.h>
#include <stdlib.h>
#include "write_dump.h"
#include "json_lines.h"

pb_sink *pb_dump_new(FILE *out, pb_error *werr)
{
    pb_sink *s = (pb_sink *)malloc(sizeof *s);
    if (!s) {
        pb_fail(werr, PB_ERR_LIMIT, 0, "out of memory");
        return NULL;
    }
    pb_json_sink_init(s, out);
    return s;
}

void pb_dump_free(pb_sink *s) { free(s); }
