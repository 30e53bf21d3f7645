/* present.h - a foreign profile's chunk stream made to read like a Perl one
 * in NYTProf's tools (nytprofhtml, nytprofcsv, nytprofcalls).
 *
 * A chunk filter that sits in front of the nytprof.out writer (write_nytprof.c).
 * It stays out of the way until the stream names its source with
 * ATTRIBUTE source_format (every foreign decoder sends one early; a real
 * NYTProf file never does, so it passes through byte for byte).  From then:
 *
 * Names (pb_nytprof_name): every sub name in SUB_INFO, SUB_CALLERS and
 * SUB_RETURN is rewritten so that nytprofhtml, which prints sub names into
 * its pages without HTML escaping, shows them, and splits their package at
 * the last "::" where the source language puts it:
 *   - '<' becomes '[' and a '>' that closes it becomes ']':
 *     "<module>" -> "[module]", "std::vector<int>::push_back" ->
 *     "std::vector[int]::push_back"; after "operator" the brackets are the
 *     operator's own ("operator<<" -> "operator[[", "operator->" unchanged);
 *   - "::" inside (), <> or {} becomes '.': "ns::C::f(std::string const&)"
 *     -> "ns::C::f(std.string const&)", whose package is "ns::C";
 *   - everything else (spaces, '&', '*', Perl's "__ANON__[file:12]") is kept.
 *   Real profiles never contain '[' where a foreign one had '<', so names stay
 *   distinct.
 * File names (NEW_FID) get the same mapping, after the source look-up below:
 * "<frozen runpy>" -> "[frozen runpy]" (nytprofhtml prints those unescaped
 * too).  Only nytprof.out is presented so: the stack outputs show the
 * source's own names (pb_frame.own, samples.h).
 *
 * Source (savesrc): for each NEW_FID of a real file (not IS_FAKE / IS_EVAL,
 * no saved source yet) the file is looked up, in this order, as
 *   1. its name as given (absolute, or relative to the working directory);
 *   2. under each source root, after removing the first matching strip
 *      prefix (else the name itself, a leading '/' dropped);
 *   3. in source_base (the input's directory): a relative name as it is, an
 *      absolute one by its base name (a profile copied beside its program).
 * A candidate is used only by the source policy: a regular file not under
 * /proc, /sys, /dev nor on a pseudo file system (fstatfs), whatever
 * opt->source_any says; unless opt->source_any (which lifts the rest),
 * whose realpath lies under an allowed directory (a source
 * root, the working directory, source_base; the last two not when "/"),
 * and, for a candidate built in a root or in source_base, under that one; its
 * name with an extension of the stream's language (its row's, pb_sink.row
 * (format_row.h), set by the driver or, for a nytprof.out converted from
 * another format, by the NYTProf decoder: language and source_names;
 * ATTRIBUTE source_format "merged" with no row -> any row's; no row -> none), or
 * for Python/Perl no extension and a "#!" first line naming the
 * interpreter.  Opened once (realpath, O_NOFOLLOW, same dev/inode as the
 * stat), read whole into one buffer, at most 64 MiB counted as bytes
 * arrive; a read error is a warning.  The lists are in present.c.
 * A file so read is embedded as NYTProf's savesrc does it: the fid gets
 * HAS_SRC | SAVE_SRC, the bytes read and mtime, and one SRC_LINE per line (at
 * most max_line lines; bytes as they are).  nytprofhtml then shows the code and
 * never compares the file on disk with the profile's time.  A file looked for
 * and not embedded (not found, or kept out by the policy) gets IS_FAKE
 * (nytprofhtml then says "no source code available" on its page instead of
 * warning "Unable to open", and never opens it itself); at the end one
 * warning names the files not found, another those the policy kept out.  A
 * foreign stream with no NEW_FID or no PID_START at all (an empty profile)
 * gets a fake fid "(empty profile)" and pid 1 at finish, so nytprofhtml can
 * draw its empty report.
 *
 * A format whose subs come without lines (its row's PB_NO_SUB_LINES):
 * the def / class headers of
 * each file embedded are noted, and a SUB_INFO with lines 0-0 whose name is
 * defined there exactly once gets its fid and lines (<module>: the first
 * file, all of it), so nytprofhtml does not take it for an xsub.
 */
#ifndef PB_PRESENT_H
#define PB_PRESENT_H

#include "options.h"

typedef struct pb_present pb_present;

/* opt: no_source, source_any, source_roots, strip_prefixes, source_base, max_line (NULL:
 * defaults).  NULL on out-of-memory (err filled). */
pb_present *pb_present_new(pb_sink *out, const pb_options *opt, pb_error *err);
/* The sink to hand to the decoder. */
pb_sink *pb_present_sink(pb_present *p);
/* After a successful decode: call events rebuilt from call edges where the
 * stream had none (a tracer of call edges), then the warning naming files not found.
 * PB_ERR_ABORT when the consumer stopped, PB_ERR_LIMIT (memory). */
pb_status pb_present_finish(pb_present *p);
/* Source files embedded / not found so far. */
void pb_present_counts(const pb_present *p, uint32_t *embedded, uint32_t *missing);
void pb_present_free(pb_present *p);

/* The mapping above.  Writes at most cap-1 bytes and a NUL into out (out may
 * be NULL when cap is 0); returns the full length, like snprintf. */
size_t pb_nytprof_name(const char *in, size_t len, char *out, size_t cap);
/* Where the package of name in[0..len) ends under the mapping above: the
 * offset of its last "::" outside (), <> and {} ("ns::C::f(std::string)" ->
 * 5; "operator<<(std::ostream&, const T&)" and "max<std::string>" have
 * none: (size_t)-1), so a name whose every "::" is inside brackets is one
 * without a package. */
size_t pb_name_package_end(const char *in, size_t len);

#endif
