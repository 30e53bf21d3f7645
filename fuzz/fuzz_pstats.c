/* fuzz_pstats.c - libFuzzer harness: pstats decoder (a call graph) -> fold_samples -> NYTProf writer
 * (memory) -> read back; and the stack outputs, which must refuse it cleanly.  See fuzz_common.h. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_PSTATS, 1);
}
