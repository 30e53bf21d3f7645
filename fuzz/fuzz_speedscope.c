/* fuzz_speedscope.c - libFuzzer harness: speedscope JSON decoder (yajl, two
 * passes, cursors per profile array) -> fold_samples or the span fold ->
 * NYTProf writer (memory) -> read back; and the collapsed-stack sink.  See
 * fuzz_common.h; JSON tokens in speedscope.dict. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_SPEEDSCOPE, 1);
}
