/* fuzz_pprof.c - libFuzzer harness: pprof decoder (both passes; a gzipped
 * input through the source's gzip view) -> fold_samples -> NYTProf writer
 * (memory) -> read back; and the stack writers.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_PPROF, 1);
}
