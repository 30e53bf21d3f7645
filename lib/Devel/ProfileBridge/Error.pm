package Devel::ProfileBridge::Error;
use strict;
use warnings;

our $VERSION = '0.01';

# Who raised an error that is not about a format (a bad option, a file that
# cannot be opened): the Perl API by default, the CLI sets 'profbridge'.
our $PROGRAM = 'Devel::ProfileBridge';

use overload
    '""'     => sub { $_[0]->line . "\n" },
    'bool'   => sub { 1 },
    fallback => 1;

sub format  { $_[0]->{format} }
sub class   { $_[0]->{class} }
sub offset  { $_[0]->{offset} }
sub file    { $_[0]->{file} }
sub message { $_[0]->{message} }
sub line {
    my ($e) = @_;
    my $l = $e->{line};
    $l =~ s/\Aprofbridge: /$PROGRAM: / if defined $e->{format} && $e->{format} eq 'profbridge';
    return $l;
}

sub throw {
    my ($class, %f) = @_;
    my $self = bless {%f}, $class;
    $self->{line} //= _line($self);
    die $self;
}

# The one line: what came from a profile (or a file name) is shown with its
# control bytes (C0, DEL, C1 as UTF-8) as \xHH, as the C core shows them, so
# it can neither drive the terminal nor split the line.
sub _esc {
    my ($s) = @_;
    return '' unless defined $s;
    $s =~ s/([\x00-\x1f\x7f]|\xc2[\x80-\x9f])/sprintf '\\x%02x', ord substr $1, -1/ge;
    $s =~ s/([\x80-\x9f])/sprintf '\\x%02x', ord $1/ge if utf8::is_utf8($s);
    return $s;
}

sub _line {
    my ($e) = @_;
    my ($f, $c, $m, $file) = ($e->{format}, $e->{class}, _esc($e->{message}), _esc($e->{file}));
    return "$f: $c: $m at byte $e->{offset} of $file" if defined $e->{offset};
    return length $file ? "$f: $c: $file: $m" : "$f: $c: $m";
}

1;
__END__

=head1 NAME

Devel::ProfileBridge::Error - the exception every decoder and writer throws

=head1 SYNOPSIS

  use Devel::ProfileBridge::ReadStream qw(for_chunks);
  eval { for_chunks { } filename => 'x.bin'; 1 } or do {
      my $e = $@;
      die $e unless ref $e && $e->isa('Devel::ProfileBridge::Error');
      warn "bad profile ", $e->file, " (", $e->class, ") at byte ", $e->offset, "\n";
  };

=head1 DESCRIPTION

Every error found in a profile (by the C decoders in F<c/>) reaches Perl as
one exception object of this class.  It stringifies to one line, followed by
a newline:

  <format>: <class>: <what> at byte <offset> of <file>

for example

  tachyon: corrupt: frame index 91 out of range (frame count 40) at byte 1234 of x.bin

Errors that have no byte offset (the file cannot be opened) read
C<< <format>: io: <file>: <what> >>, and those that name no file (a bad
option: C<Devel::ProfileBridge: usage: convert: compress must be 0..9, not '12'>)
C<< <format>: <class>: <what> >>.  An error that is not about a format
(a bad option, a file that cannot be opened or is no profile) has the
format C<profbridge>; its line names the caller instead:
C<Devel::ProfileBridge> from the Perl API, C<profbridge> from the command
(which sets C<$Devel::ProfileBridge::Error::PROGRAM>); a usage error names the file the caller
gave (a writer's C<file>).  In the line, control bytes of the
message and the file name (C0, DEL, and C1 as UTF-8) are shown as C<\xHH>:
a profile or a file name cannot drive the terminal or split the line.
C<message> and C<file> keep them as they were.

=head1 METHODS

=over

=item format

The decoder that found the problem: C<nytprof>, C<pynytprof>,
C<easyprofiler>, C<tachyon>, C<statprofiler>, or C<profbridge> before the
format is known; C<gzip> for a compressed input; the writer for output
errors: C<nytprof-writer>, C<statprofiler-writer>, C<collapsed>, C<pprof>,
C<speedscope>, C<dump>; C<profbridge> for a bad option or argument of the
API (class C<usage>), C<for_chunks> for a child forked in a callback.

=item class

One of C<truncated> (the input ended inside a record), C<corrupt> (bytes
that cannot be valid), C<unsupported> (a valid file of a version or feature
this distribution does not read; the message says which versions it reads),
C<limit> (a resource limit such as C<max_decompressed_bytes> tripped),
C<io> (the operating system refused to open, read, write or rename a file),
or C<usage> (an API was misused: a writer call out of order, a writer used
after C<fork> in the child, a handle that is not one this distribution
made, a bad option value).

=item offset

The byte offset in the file (an integer, counted from 0) at which the
problem was detected, so that C<dd>, C<xxd -s> or a hex editor finds it.
For data inside a compressed region (NYTProf after C<z>, Tachyon zstd
sample data) it is where the compressed block that produced the bad data
begins in the file: the exact deflate block start for zlib, the start of
the block handed to the decompressor for zstd (a position in the inflated
stream could lie far past the end of the file).  C<undef> for C<io> errors.

=item file

The file name as given.

=item message

The "what" part: which record was being read and what was expected
(for C<usage>: the call and what is wrong with it).

=item line

The whole line (what stringification gives, without the newline).

=item throw(format => $f, class => $c, message => $m, file => $path, offset => $n)

Class method: builds the object (composing C<line> from the fields when it
is not given) and dies with it.  The XS layer calls it for every C error;
code that wraps this distribution can use it to raise the same kind of
exception.  C<offset> may be C<undef>.

=back

=cut
