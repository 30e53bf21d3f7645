package Devel::ProfileBridge::NYTProfWriter;
use strict;
use warnings;

our $VERSION = '0.01';

use Devel::ProfileBridge ();

sub new {
    my ($class, %opts) = @_;
    my $file = delete $opts{file};
    my $compress = delete $opts{compress};
    if (!defined $file || !length $file) {
        require Carp;
        Carp::croak("Devel::ProfileBridge::NYTProfWriter->new: file => PATH is required");
    }
    if (my @bad = sort keys %opts) {
        require Carp;
        Carp::croak("Devel::ProfileBridge::NYTProfWriter->new: unknown option '@bad' (known: file, compress)");
    }
    $compress = 6 unless defined $compress;
    if ($compress !~ /\A[0-9]\z/) {
        require Carp;
        Carp::croak("Devel::ProfileBridge::NYTProfWriter->new: compress must be 0..9, not '$compress'");
    }
    my $h = _open($file, $compress);
    return bless { h => $h, file => $file }, $class;
}

sub write_chunk {
    my $self = shift;
    _write($self->{h}, @_);    # croaks on misuse or when the writer failed
    return $self;
}

sub close {
    my ($self) = @_;
    my $h = $self->{h};
    $self->{closed}++ and do {
        require Carp;
        Carp::croak("Devel::ProfileBridge::NYTProfWriter: close called twice");
    };
    _close($h);
    return 1;
}

sub DESTROY {
    my ($self) = @_;
    _free($self->{h}) if $self->{h};    # not closed: the target stays as it was
    $self->{h} = 0;
}

1;
__END__

=head1 NAME

Devel::ProfileBridge::NYTProfWriter - write a real nytprof.out from chunks

=head1 SYNOPSIS

  use Devel::ProfileBridge::ReadStream qw(for_chunks);
  use Devel::ProfileBridge::NYTProfWriter;

  # copy any profile into a NYTProf file, chunk by chunk
  my $w = Devel::ProfileBridge::NYTProfWriter->new(file => 'out.nytprof', compress => 6);
  for_chunks { $w->write_chunk(@_) } filename => 'profile.bin';
  $w->close;                     # now out.nytprof exists; nytprofhtml -f out.nytprof

  # or, entirely in C
  Devel::ProfileBridge::convert(in => 'profile.bin', out => 'out.nytprof');

=head1 DESCRIPTION

Writes Devel::NYTProf v5 files (the format Devel::NYTProf 6.x writes, see
L<Devel::ProfileBridge/CHUNKS>) that the real
L<Devel::NYTProf::ReadStream> and C<nytprofhtml> read.  The bytes are
produced by the C writer in F<c/write_nytprof.c>.

=head1 METHODS

=over

=item new(file => $path, compress => $level)

Starts writing.  C<compress> is the zlib level, 0 (none) to 9, default 6.
The data goes to a temporary file C<.NAME.XXXXXX> in the target's directory,
which C<close> renames onto C<$path>: until then, and on any error, C<$path>
is left as it was.  Throws an C<io> L<Devel::ProfileBridge::Error> if the
temporary file cannot be created.

=item write_chunk($tag, @args)

One chunk, with the arguments of the C<for_chunks> callback for that tag
(L<Devel::ProfileBridge/CHUNKS>), so C<< for_chunks { $w->write_chunk(@_) } >>
copies a stream.  Strings with the UTF-8 flag are written as
C<STRING_UTF8>.  With compression on, the writer emits the C<#Compressed ...>
comment and C<z> itself before the first binary chunk when the stream has
no C<START_DEFLATE>; with C<< compress => 0 >> a C<START_DEFLATE> is dropped.

The writer refuses, with a C<corrupt> error that also discards the file,
streams the real tools would crash on: a first chunk that is not
C<VERSION 5 x>, no C<ticks_per_sec> attribute before the first binary
chunk, a C<TIME_*>, C<SUB_INFO> or C<SUB_CALLERS> chunk naming a fid that
no earlier C<NEW_FID> defined, fids that are not dense 1..N, C<nv_size>
other than 8, and text that cannot be one line.  It warns when there are
sub calls but no C<PID_START>/C<PID_END> pair with a positive duration
(C<nytprofhtml> divides by it).  A wrong number of arguments or an unknown
tag croaks.

=item close

Finishes the zlib stream, checks that fids are dense, and renames the
temporary file onto the target.  Throws on any error (then the target is
untouched and no temporary file remains).  Calling it twice croaks.  An
object destroyed without C<close> discards what it wrote.

=back

=cut
