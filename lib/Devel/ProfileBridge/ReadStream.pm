package Devel::ProfileBridge::ReadStream;
use strict;
use warnings;

our $VERSION = '0.01';

use Exporter 'import';
our @EXPORT_OK = qw(for_chunks);

use Devel::ProfileBridge ();

sub for_chunks (&%) {
    my ($cb, %opts) = @_;
    return Devel::ProfileBridge::for_chunks($cb, %opts);
}

1;
__END__

=head1 NAME

Devel::ProfileBridge::ReadStream - drop-in for Devel::NYTProf::ReadStream that reads every profile format

=head1 SYNOPSIS

  use Devel::ProfileBridge::ReadStream qw(for_chunks);

  for_chunks {
      my $tag = shift;
      print "$.: $tag @_\n";
  } filename => 'nytprof.out';

  # only some tags; the others are skipped in C, without a Perl call
  my %calls;
  for_chunks {
      SUB_CALLERS => sub { my (undef, $fid, $line, $count) = @_; $calls{"$fid:$line"} += $count },
  } filename => 'profile.bin';   # a Tachyon, EasyProfiler, StatProfiler, Pynytprof or NYTProf file

=head1 DESCRIPTION

C<for_chunks> reads a profile and calls your callback once per chunk, with
exactly the tags, argument lists, argument types and order of
L<Devel::NYTProf::ReadStream> in Devel::NYTProf 6.12 (see
L<Devel::ProfileBridge/CHUNKS>).  On a real F<nytprof.out> the stream is
identical to NYTProf's own.  Foreign formats are presented as the same
chunks (L<Devel::ProfileBridge/MAPPING FOREIGN PROFILES>).

Where a script could tell the two readers apart, it can't: C<$!> and C<$@>
are left as the caller had them, inside every callback and afterwards (so a
script that dies in a callback exits 255, as under NYTProf), and the first
line of a F<nytprof.out> is parsed as NYTProf 6.12 parses it, with
C<sscanf("NYTProf %d %d\n")> over the whole line: any white space or none
between the fields, signs, leading zeros, trailing text and any length are
accepted, the major version must be 5, a minor version above 0 gives one
warning, and the C<VERSION> chunk carries the minor as NYTProf delivers it
(an unsigned 32-bit value: C<-1> arrives as C<4294967295>).

Two differences are on purpose.  A truncated or damaged file, compressed
or not, delivers every complete chunk before the damage and then throws
(NYTProf's reader stops earlier on a cut zlib stream); and error offsets
are offsets in the file, also inside compressed data
(L<Devel::ProfileBridge::Error/offset>).

=head2 for_chunks { ... } %options

=over

=item the callback

A code block or code reference, called as C<< $cb->($tag, @args) >>; or a
hash reference C<< { TAG => sub {...}, ..., '' => sub {...} } >> whose
C<''> entry, if present, gets every tag not named.  Tags with no callback
are decoded but never turned into Perl calls, so asking only for
C<SUB_INFO> and C<SUB_CALLERS> costs a fraction of a full pass.

As with NYTProf, the argument scalars are reused between calls (they are
aliased in C<@_>): copy them if you keep them.  As in NYTProf's reader
there is one scalar per position, whatever the tag: C<TIME_LINE>'s
C<$_[1]> is the scalar C<SUB_INFO>'s C<$_[1]> will be, so a kept C<\@_> or
C<\$_[1]> shows the values of the latest chunk (C<NEW_FID>'s file name and
C<SRC_LINE>'s text are fresh scalars each time).  The callback is called in
scalar context (C<wantarray> is false, as under NYTProf's C<call_sv>), with
C<$_> and C<$1> as the caller left them; its lexicals, C<local>s and
temporaries are freed when it returns, before the next chunk.  A callback
that is a plain Perl sub runs as a lightweight call (perlcall's
C<MULTICALL>: one sub context for the whole read, not a C<call_sv> per
chunk); C<caller>,
C<@DB::args>, C<return>, C<die>, recursion and a nested C<for_chunks> see
an ordinary call.  An XSUB, a sub holding a C<goto>, and any callback under
the debugger or under a profiler that replaces C<pp_entersub> are called
through C<call_sv> instead.  A C<last> or C<next> that would leave the
callback for a loop outside C<for_chunks> dies (C<Can't "last" outside a
loop block>) where NYTProf's reader crashes.  C<$.> is set to the chunk
sequence number (C<VERSION> is 0) before each call.  As NYTProf does,
C<$.> is localised for the whole call: afterwards (also after a callback
died) it is what the caller had, C<undef> if no filehandle was read yet;
if one was, C<$.> reads that handle's line counter, which NYTProf, and so
we, leave at the last chunk number.

C<for_chunks> returns C<undef>: C<(undef)> in list context, as NYTProf's.

=item filename => $file

The profile to read (default C<nytprof.out>, as NYTProf).  Its format is
detected from its first bytes.

=item format => $name

Skip detection: C<nytprof>, C<pynytprof>, C<easyprofiler>, C<tachyon>,
C<statprofiler> or C<pprof>.

=item thread => $id

For formats that record threads (Tachyon, EasyProfiler, StatProfiler,
pprof, perf script): only this thread (a numeric id, or an EasyProfiler
thread name, a pprof C<thread> label or a perf script comm).

=item sample_type => $name

pprof: the sample type to read (C<alloc_space>, C<samples>, ...; C<info>
lists them), instead of the one C<default_sample_type> names, else the last.
perf script text: the event to read (C<cpu-clock>, C<cycles:u>, ...),
instead of the first one its header declares, else the first one met.
Two-column (differential) folded stacks: C<before> or C<after> (the
default).  callgrind: the event (below).  Other formats ignore it.

=item event => $name

callgrind: the event (cost column) to read, one of the file's C<events:>
(C<Ir>, C<Dr>, C<D1mr>, ..., nytprofcg's C<Ticks>; C<info> lists them as
C<graph_events>), instead of the first; what the CLI's C<--event NAME>
reads.  It is the same option as C<sample_type> under callgrind's name, so
every call that takes C<sample_type> takes it (C<for_chunks>, C<info>,
C<chunk_counts>, C<dump_json>, C<convert>, C<losses>, C<merge>, C<diff>):
a plain string.  Errors (L<Devel::ProfileBridge::Error>, class C<usage>):
C<event> and C<sample_type> naming two different columns
(C<info: event =E<gt> 'Dr' and sample_type =E<gt> 'Ir' name two columns:
give one>); an event the file does not have, naming the file's events
(C<callgrind: usage: no event Nope in this file (its events: Ir, Dr, Dw)
at byte 331 of FILE>).  For another format it is read as C<sample_type>.

=item quiet => 1

Accepted for compatibility.  Unlike NYTProf, which prints C<Reading $file>
unless C<quiet> is set, this module prints nothing by default either.

=item salvage => 1

For files a crashed or killed profiler left behind.  When the decoder meets
a C<truncated> error (never C<corrupt>, C<unsupported> or C<limit>), every
chunk before the cut has already been delivered; instead of dying,
C<for_chunks> then finishes the stream as the format allows (open NYTProf
processes get their C<PID_END>; the sampling and span folds deliver their
C<SUB_INFO>, C<SUB_CALLERS> and C<PID_END> for the samples or blocks read)
and warns with the error line followed by what was salvaged, for example
C<tachyon: truncated: ... at byte 5120 of x.bin; salvaged 912 samples
before it>.  A file that is cut before its first chunk, or before anything
can be salvaged, still throws.  C<chunk_counts>, C<dump_json> and
C<convert> (to nytprof) take the same option.

=item max_decompressed_bytes, max_record_size, max_stack_depth, max_strings, max_frames

Resource limits (bytes, bytes, frames, entries, entries); see
L<Devel::ProfileBridge/LIMITS>.  Tripping one throws a C<limit> error.

=back

Errors throw a L<Devel::ProfileBridge::Error>.  A callback that dies stops
the stream; its exception propagates unchanged.  So does one from a
C<$SIG{__WARN__}> handler that dies on a decoder's warning.  Either way the
file is closed and everything the decoder held is freed, so a long-running
program may use C<die> to stop reading early as often as it likes
(F<t/14-callback-dies.t> checks the file descriptors and the C heap).

A callback may C<fork>, but the child must end inside the callback
(C<exit> or C<POSIX::_exit>): parent and child share the input's file
offset, so both cannot read on.  A child that returns to the reader stops
there, before reading a byte, with a C<usage> error
(C<for_chunks: usage: a for_chunks callback forked and the child returned
to the reader ...>); the parent reads on undisturbed.

=cut
