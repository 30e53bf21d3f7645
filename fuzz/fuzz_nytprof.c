/* fuzz_nytprof.c - libFuzzer harness: nytprof decoder -> chunks -> NYTProf writer (memory)
 * -> read back; and the stack path (chunk_stacks.c) into collapsed, pprof or speedscope, checked to
 * parse.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_NYTPROF, 0);
}
