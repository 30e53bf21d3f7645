/* fuzz_v8.c - libFuzzer harness: V8 .cpuprofile decoder (yajl, two cursors)
 * -> fold_samples -> NYTProf writer (memory) -> read back; and the
 * collapsed-stack sink.  See fuzz_common.h; JSON tokens in v8.dict. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_format(data, size, PB_FMT_V8, 1);
}
