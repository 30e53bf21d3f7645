/* pbdump - decode a profile with the C core and print its chunk stream as
 * JSON Lines in exactly the conventions of ../shared/tools/nytprof-dump-chunks
 * (so outputs can be compared byte for byte).  A test and debugging tool.
 *
 *   pbdump [-f FORMAT] [-c] FILE      -c: only tag counts
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pb.h"
#include "harness.h"
#include "json_lines.h"

static void warn_cb(pb_sink *self, const char *msg)
{
    (void)self;
    fprintf(stderr, "warning: %s\n", msg);
}

int main(int argc, char **argv)
{
    pb_sink sink;
    pb_count_sink cs;
    pb_error err;
    pb_format fmt = PB_FMT_UNKNOWN;
    int counts = 0, i;
    const char *file = NULL;
    pb_status st;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc)
            fmt = pb_format_from_name(argv[++i]);
        else if (!strcmp(argv[i], "-c"))
            counts = 1;
        else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: pbdump [-f FORMAT] [-c] FILE\n");
        return 1;
    }
    pb_json_sink_init(&sink, stdout);
    sink.warn = warn_cb;
    pb_count_sink_init(&cs);
    cs.sink.warn = warn_cb;
    st = pb_decode_file(file, fmt, NULL, counts ? &cs.sink : &sink, &err);
    if (counts)
        for (i = 0; i < PB_TAG_COUNT; i++)
            if (cs.count[i])
                printf("%s %llu\n", pb_tag_name[i], (unsigned long long)cs.count[i]);
    return st != PB_OK ? hx_fail(&err) : 0;
}
