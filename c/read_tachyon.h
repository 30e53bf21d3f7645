/* read_tachyon.h - the Tachyon header, as the sniffer (c/formats.c) and the
 * decoder (c/read_tachyon.c) read it. */
#ifndef PB_READ_TACHYON_H
#define PB_READ_TACHYON_H

#include "options.h"

struct pb_fold_decoder; /* fold_samples.h */

/* The decoder (the row in formats.c lists it; formats.h says what it gives) */
extern const struct pb_fold_decoder pb_tachyon_decoder;

/* Tachyon v1 has two incompatible 64-byte headers (tachyon-format.md,
 * "Versions that exist"): the pre-rc one (u32 sample count at 28) and the
 * Python 3.15 one (u64 sample count at 28, every later field 4 bytes on,
 * a u32 bit field at 60; "VERIFIED against a real CPython 3.15.2").  pb_tachyon_header() decides which one h holds
 * from the header's own consistency (reserved bytes, table offsets in order,
 * inside file_size when that is known: UINT64_MAX otherwise) and fills *th.
 * swap: the file's byte order is not the host's.  Returns the layout
 * (PB_TACH_314 / PB_TACH_315), or 0 when neither reading is consistent. */
enum { PB_TACH_314 = 314, PB_TACH_315 = 315 };
typedef struct {
    int layout;
    uint64_t sample_count;
    uint32_t thread_count, compression, mode_field;
    uint64_t str_off, frame_off;
} pb_tach_header;
int pb_tachyon_header(const unsigned char *h, int swap, uint64_t file_size, pb_tach_header *th);
/* The 3.15 header's field at offset 60, as CPython 3.15.2 reads it: bits
 * 0-2 = profiling mode + 1 (0 not stored; 1 wall, 2 cpu, 3 gil, 4 all,
 * 5 exception; 6 and 7 CPython's reader refuses), bit 3 = capture features
 * recorded, bits 4-8 = the features (CPython's capture_config names below);
 * higher bits ignored. */
#define PB_TACH_MODE_BITS(field) ((field) & 7u)
#define PB_TACH_MODE_INVALID(field) (PB_TACH_MODE_BITS(field) >= 6u)
#define PB_TACH_HAS_CAPTURE(field) (((field) >> 3) & 1u)
#define PB_TACH_CAPTURE(field) (((field) >> 4) & 0x1Fu)
enum {
    PB_TACH_CAPTURE_ALL_THREADS = 1,
    PB_TACH_CAPTURE_NATIVE = 2,
    PB_TACH_CAPTURE_GC = 4,
    PB_TACH_CAPTURE_OPCODES = 8,
    PB_TACH_CAPTURE_BLOCKING = 16
};
/* name of the field's profiling mode: "wall", "cpu", "gil", "all",
 * "exception"; NULL when none is stored (bits 0-2 zero) or CPython refuses it */
const char *pb_tachyon_mode_name(uint32_t mode_field);
/* name of capture feature bit k (0..4): "all_threads", "native", "gc",
 * "opcodes", "blocking"; NULL past them */
const char *pb_tachyon_capture_name(unsigned k);

#endif
