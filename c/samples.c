/* samples.c - the typed header facts of the sample layer (samples.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "samples.h"

const char *pb_sample_attr_text(pb_str value, char *buf, size_t cap)
{
    size_t n = value.len < cap - 1 ? value.len : cap - 1;
    if (n)
        memcpy(buf, value.ptr, n);
    buf[n] = '\0';
    return buf;
}

int pb_sample_facts_take(pb_sample_facts *f, const char *key, pb_str value)
{
    char b[64];
    pb_sample_attr_text(value, b, sizeof b);
    if (!strcmp(key, "sample_interval_us"))
        f->interval_ns = strtoull(b, NULL, 10) * 1000u;
    else if (!strcmp(key, "clock"))
        f->cpu = strncmp(b, "cpu", 3) == 0;
    else if (!strcmp(key, "basetime"))
        f->basetime = strtoull(b, NULL, 10);
    else if (!strcmp(key, "profile_duration_sec")) {
        double d = strtod(b, NULL);
        if (d > 0 && d < 1e9)
            f->duration_ns = (uint64_t)(d * 1e9);
    } else if (!strcmp(key, "source_format"))
        f->weight_ns = !strcmp(b, "easyprofiler");
    else if (!strcmp(key, "sample_weight_unit"))
        f->weight_ns = !strcmp(b, "ns");
    else
        return 0;
    return 1;
}
