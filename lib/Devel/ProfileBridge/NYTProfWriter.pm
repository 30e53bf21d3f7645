package Devel::ProfileBridge::NYTProfWriter;
use strict;
use warnings;

our $VERSION = '0.01';

use Devel::ProfileBridge ();

sub _usage {
    my ($file, $msg) = @_;
    require Devel::ProfileBridge::Error;
    Devel::ProfileBridge::Error->throw(format => 'nytprof-writer', class => 'usage', file => $file // '',
        message => $msg);
}

# every method's object: a hash made by new, else the usage error (a forged
# or blessed-by-hand object must not die "Not a HASH reference")
sub _check {
    my ($self) = @_;
    return $self if ref $self && eval { exists $self->{h} };
    _usage(undef, 'not a writer made by Devel::ProfileBridge::NYTProfWriter->new (a forged or copied object is refused)');
}

sub new {
    my ($class, %opts) = @_;
    my $file = delete $opts{file};
    my $compress = delete $opts{compress};
    _usage(undef, 'file must be a path (a string), not ' . Devel::ProfileBridge::_ref_what($file))
        if ref $file && !Devel::ProfileBridge::_stringy($file);
    $file = "$file" if defined $file;
    _usage($file, 'new needs file => PATH') if !defined $file || !length $file;
    _usage(do { (my $f = $file) =~ s/\0/\\0/g; $f }, 'file => PATH contains a NUL byte, which no file name can hold')
        if !ref $file && index($file, "\0") >= 0;
    if (my @bad = sort keys %opts) {
        _usage($file, "unknown option '@bad' (known: file, compress)");
    }
    _usage($file, 'compress must be 0..9, not ' . Devel::ProfileBridge::_ref_what($compress)) if ref $compress;
    _usage($file, "compress must be 0..9, not '$compress'") if defined $compress && $compress !~ /\A[0-9]\z/;
    my $h = _open($file, $compress // -1);    # -1: the writer's default (6, or 1 for a converted profile)
    return bless { h => $h, file => $file }, $class;
}

# The C state belongs to the thread and process that made the writer: no
# copy in a new ithread; a forked child's calls throw and its destruction
# touches no file (c/output.c checks the pid).
sub CLONE_SKIP { 1 }

# a usage error from the C side names no file: it names this writer's
sub _named {
    my ($e, $file) = @_;
    if (ref $e && eval { $e->isa('Devel::ProfileBridge::Error') } && !length($e->{file} // '')
        && defined $file && !ref $file) {
        $e->{file} = $file;
        $e->{line} = Devel::ProfileBridge::Error::_line($e);
    }
    return $e;
}

sub write_chunk {
    my $self = shift;
    _check($self);
    for my $i (grep { ref $_[$_] } 0 .. $#_) { # a value, never a reference's "ARRAY(0x...)" text
        next if Devel::ProfileBridge::_stringy($_[$i]);
        _usage($self->{file}, 'write_chunk: argument ' . ($i + 1) . ' is ' . Devel::ProfileBridge::_ref_what($_[$i])
            . ', not a value');
    }
    _write($self->{h}, @_);    # throws on misuse or when the writer failed
    return $self;
}

sub close {
    my ($self) = @_;
    _check($self);
    _usage($self->{file}, 'close called twice') if $self->{closed}++;
    eval { _close($self->{h}); 1 } or die _named($@, $self->{file});
    return 1;
}

package Devel::ProfileBridge::NYTProfWriter::Handle;
sub CLONE_SKIP { 1 }

package Devel::ProfileBridge::NYTProfWriter;

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

Starts writing.  C<compress> is the zlib level, 0 (none) to 9; by
default 3 (NYTProf's own 6 takes about twice as long for a file about
1.7 times smaller), or 0 (none) once an C<ATTRIBUTE source_format> chunk
before the first binary chunk marks the stream as a converted profile
(whose statement records, one per sample, even level 1 takes longer to
compress than the rest of a conversion takes, for a file about half the
size).
The data goes to a temporary file C<.NAME.XXXXXX> created with
C<O_CREAT|O_EXCL> in the target's directory, which C<close> renames onto
C<$path>: until then, and on any error, C<$path> is left as it was.  A
symlink C<$path> is followed (its target is updated); an existing device or
FIFO is written in place and never replaced; C<-> is standard output (see
L<Devel::ProfileBridge/OUTPUT FILES>).  Throws an C<io>
L<Devel::ProfileBridge::Error> if the temporary file cannot be created, a
C<usage> one for a bad option.

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
tag throws a C<usage> error.

=item close

Finishes the zlib stream, checks that fids are dense, and renames the
temporary file onto the target.  Throws on any error (then the target is
untouched and no temporary file remains).  Calling it twice throws a
C<usage> error.  An object destroyed without C<close> discards what it
wrote.

=back

=head1 THREADS AND FORK

A writer belongs to the thread and process that created it.  A new ithread
gets no copy (C<CLONE_SKIP>); a copied or forged handle (C<Storable::dclone>,
a blessed number) is refused with a C<usage> error, never dereferenced.
After C<fork>, C<write_chunk> and C<close> in the child throw a C<usage>
error and the child's copy going out of scope removes nothing, so the
parent's file comes out exactly as if the child had never existed.

=cut
