/* chunk_stacks.h - the stacks of a chunk decoder's stream (c/chunk_stacks.c).
 *
 * For a format whose stacks are its chunks' (NYTProf's and the like): the
 * profile's call events (SUB_RETURN) as stacks, as nytprofcalls builds them
 * (without call events: one-frame stacks of each sub's exclusive time);
 * weights in ns (ATTRIBUTE sample_weight_unit=ns), one thread keyed 0 (the
 * first PID_START's pid).  Calls out's finish().
 */
#ifndef PB_CHUNK_STACKS_H
#define PB_CHUNK_STACKS_H

#include "samples.h"

pb_status pb_chunks_as_samples(pb_status (*dec)(pb_source *, const pb_options *, pb_sink *, pb_error *),
                               pb_source *src, const pb_options *opt, pb_sample_sink *out, pb_error *err);

#endif
