/* fuzz_easyprofiler.c - libFuzzer harness: easyprofiler decoder -> fold_spans -> NYTProf writer (memory)
 * -> read back; then collapsed, pprof or speedscope (by input size).  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the span stacks (and spans: speedscope's evented form) into the stack outputs too */
    return fuzz_format(data, size, PB_FMT_EASYPROFILER, 1);
}
