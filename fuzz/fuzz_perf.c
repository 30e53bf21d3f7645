/* fuzz_perf.c - libFuzzer harness: perf script text decoder -> fold_samples -> NYTProf writer
 * (memory) -> read back; and the collapsed-stack sink.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_PERF, 1);
}
