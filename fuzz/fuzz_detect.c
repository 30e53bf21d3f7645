/* fuzz_detect.c - libFuzzer harness: format detection, then whichever
 * decoder it picks -> NYTProf writer (memory) -> read back.  The sniffer's
 * answer must be self-consistent: a known format has a name and a decoder.
 * See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pb_format_info info;
    memset(&info, 0xA5, sizeof info);
    pb_detect_bytes(data, size, &info);
    if ((unsigned)info.format >= PB_FMT_COUNT)
        abort();
    if (info.format != PB_FMT_UNKNOWN) {
        if (info.name == NULL || strcmp(info.name, pb_format_name(info.format)) != 0)
            abort();
        if (memchr(info.version, 0, sizeof info.version) == NULL ||
            memchr(info.compression, 0, sizeof info.compression) == NULL ||
            memchr(info.byte_order, 0, sizeof info.byte_order) == NULL || info.n_facts > PB_MAX_FACTS)
            abort();
        for (size_t i = 0; i < info.n_facts; i++)
            if (!info.facts[i].key || memchr(info.facts[i].value, 0, sizeof info.facts[i].value) == NULL)
                abort();
    }
    fuzz_convert(data, size, PB_FMT_UNKNOWN, 0);
    fuzz_collapse(data, size, PB_FMT_UNKNOWN);
    return 0;
}
