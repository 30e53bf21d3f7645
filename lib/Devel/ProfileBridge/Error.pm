package Devel::ProfileBridge::Error;
use strict;
use warnings;

our $VERSION = '0.01';

use overload
    '""'     => sub { $_[0]->{line} . "\n" },
    'bool'   => sub { 1 },
    fallback => 1;

sub format  { $_[0]->{format} }
sub class   { $_[0]->{class} }
sub offset  { $_[0]->{offset} }
sub file    { $_[0]->{file} }
sub message { $_[0]->{message} }
sub line    { $_[0]->{line} }

sub throw {
    my ($class, %f) = @_;
    my $self = bless {%f}, $class;
    $self->{line} //= defined $self->{offset}
        ? "$self->{format}: $self->{class}: $self->{message} at byte $self->{offset} of $self->{file}"
        : length($self->{file} // '') ? "$self->{format}: $self->{class}: $self->{file}: $self->{message}"
        : "$self->{format}: $self->{class}: $self->{message}";    # no file to name
    die $self;
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
C<< <format>: io: <file>: <what> >>; a usage error names the file the
caller gave (a writer's C<file>), and none when there is none
(C<< <format>: usage: <what> >>).

=head1 METHODS

=over

=item format

The decoder that found the problem: C<nytprof>, C<pynytprof>,
C<easyprofiler>, C<tachyon>, C<statprofiler>, or C<profbridge> before the
format is known; C<gzip> for a compressed input; the writer for output
errors: C<nytprof-writer>, C<statprofiler-writer>, C<collapsed>, C<dump>.

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

The "what" part: which record was being read and what was expected.

=item line

The whole line (what stringification gives, without the newline).

=item throw(format => $f, class => $c, message => $m, file => $path, offset => $n)

Class method: builds the object (composing C<line> from the fields when it
is not given) and dies with it.  The XS layer calls it for every C error;
code that wraps this distribution can use it to raise the same kind of
exception.  C<offset> may be C<undef>.

=back

=cut
