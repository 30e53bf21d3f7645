/* fuzz_easyprofiler.c - libFuzzer harness: easyprofiler decoder -> fold_spans -> NYTProf writer (memory)
 * -> read back.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_convert(data, size, PB_FMT_EASYPROFILER, 1);

    return 0;
}
