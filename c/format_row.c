/* format_row.c - the facts a format's sniffer adds to what it found
 * (pb_format_info, format_row.h). */
#include <stdio.h>
#include <string.h>
#include "format_row.h"

void pb_info_fact(pb_format_info *info, const char *key, int type, const char *value, const char *note)
{
    pb_fact *f;
    if (info->n_facts >= PB_MAX_FACTS)
        return;
    f = &info->facts[info->n_facts++];
    f->key = key;
    f->type = type;
    snprintf(f->value, sizeof f->value, "%s", value);
    snprintf(f->note, sizeof f->note, "%s", note);
}

const char *pb_info_fact_value(const pb_format_info *info, const char *key)
{
    size_t i;
    for (i = 0; i < info->n_facts; i++)
        if (strcmp(info->facts[i].key, key) == 0)
            return info->facts[i].value;
    return NULL;
}
