package Devel::ProfileBridge::StatProfilerWriter;
use strict;
use warnings;
use Scalar::Util ();
use Carp ();

our $VERSION = '0.01';

# The record writer is C (c/write_statprofiler.c); the XS glue in
# xs/ProfileBridge.xs provides the _xs_* functions below.
require Devel::ProfileBridge;

my %DEFAULT = (interval_us => 10000, depth => 20, perl_version => '5.36.0');

# Every misuse is one Devel::ProfileBridge::Error of class "usage"; the
# C writer (c/write_statprofiler.c) holds the state machine and throws the
# same class for calls out of order.
sub _usage {
    my ($file, $msg) = @_;
    require Devel::ProfileBridge::Error;
    Devel::ProfileBridge::Error->throw(format => 'statprofiler-writer', class => 'usage',
        file => $file // '', message => $msg);
}

# every method's object: a hash made by new, else the usage error (a forged
# or blessed-by-hand object must not die "Not a HASH reference")
sub _check {
    my ($self) = @_;
    return $self if ref $self && eval { exists $self->{h} };
    _usage(undef, 'not a writer made by Devel::ProfileBridge::StatProfilerWriter->new (a forged or copied object is refused)');
}

# a string argument: a reference (but an object with its own string form) is refused
sub _str {
    my ($file, $what, $v) = @_;
    return $v unless ref $v;
    return "$v" if Devel::ProfileBridge::_stringy($v);
    _usage($file, "$what must be a string, not " . Devel::ProfileBridge::_ref_what($v));
}

sub new {
    my ($class, %arg) = @_;
    my $file = delete $arg{file};
    _usage(undef, 'file must be a path (a string), not ' . Devel::ProfileBridge::_ref_what($file))
        if ref $file && !Devel::ProfileBridge::_stringy($file);
    $file = "$file" if defined $file;
    _usage($file, 'new needs file => PATH') unless defined $file && length $file;
    _usage(do { (my $f = $file) =~ s/\0/\\0/g; $f }, 'file => PATH contains a NUL byte, which no file name can hold')
        if !ref $file && index($file, "\0") >= 0;
    my $pv = delete $arg{perl_version} // $DEFAULT{perl_version};
    $pv = _str($file, 'perl_version', $pv) if ref $pv && ref \$pv ne 'VSTRING';
    $pv = sprintf '%vd', $pv if ref \$pv eq 'VSTRING';
    $pv =~ s/^v//;
    my ($rev, $ver, $sub) = $pv =~ /^(\d+)\.(\d+)(?:\.(\d+))?$/
        or _usage($file, "perl_version '$pv' is not like 5.36.0");
    my $interval = delete $arg{interval_us} // $DEFAULT{interval_us};
    my $depth = delete $arg{depth} // $DEFAULT{depth};
    for ([interval_us => $interval], [depth => $depth]) {
        _usage($file, "$_->[0] must be a positive integer, not " . Devel::ProfileBridge::_ref_what($_->[1])) if ref $_->[1];
        _usage($file, "$_->[0] must be a positive integer, not '$_->[1]'")
            unless $_->[1] =~ /^\d+$/ && $_->[1] > 0 && $_->[1] <= 0xFFFFFFFF;
    }
    my $meta = delete $arg{metadata} // {};
    _usage($file, 'metadata must be a hash reference') unless ref $meta eq 'HASH';
    _str($file, "metadata value of '$_'", $meta->{$_}) for sort keys %$meta;
    _usage($file, 'unknown option(s) ' . join(', ', sort keys %arg)) if %arg;

    my $h = _xs_open($file, $rev, $ver, $sub // 0, $interval, $depth);
    my $self = bless { h => $h, file => $file, samples => 0 }, $class;
    _xs_header_metadata($h, $_, $meta->{$_}) for sort keys %$meta;
    return $self;
}

# The C state is owned by the thread and process that made the writer: a
# new ithread gets no copy (CLONE_SKIP), a forked child's calls croak and its
# destruction writes and removes nothing.
sub CLONE_SKIP { 1 }

sub _int {
    my ($self, $what, $v) = @_;
    _check($self);
    _usage($self->{file}, "$what must be an integer, not " . Devel::ProfileBridge::_ref_what($v)) if ref $v;
    _usage($self->{file}, "$what must be an integer, not '" . ($v // 'undef') . "'")
        unless defined $v && $v =~ /^-?\d+$/;
    return $v;
}

sub start_sample {
    my ($self, $weight, $op_name) = @_;
    _check($self);
    $weight = $self->_int('weight', $weight // 1);
    _usage($self->{file}, 'weight must be >= 0') if $weight < 0;
    _xs_start_sample($self->{h}, $weight, _str($self->{file}, 'op_name', $op_name // ''));
    return $self;
}

sub sub_frame {
    my ($self, $package, $name, $file, $line, $first_line) = @_;
    _check($self);
    _xs_sub_frame($self->{h}, _str($self->{file}, 'package', $package // 'main'),
        _str($self->{file}, 'name', $name // '__ANON__'), _str($self->{file}, 'file', $file // ''),
        $self->_int('line', $line // 0), $self->_int('first_line', $first_line // -1));
    return $self;
}

sub xsub_frame {
    my ($self, $package, $name) = @_;
    _check($self);
    _xs_xsub_frame($self->{h}, _str($self->{file}, 'package', $package // 'main'), _str($self->{file}, 'name', $name // ''));
    return $self;
}

sub main_frame {
    my ($self, $file, $line) = @_;
    _check($self);
    _xs_main_frame($self->{h}, _str($self->{file}, 'file', $file // ''), $self->_int('line', $line // 0));
    return $self;
}

sub eval_frame {
    my ($self, $file, $line) = @_;
    _check($self);
    _xs_eval_frame($self->{h}, _str($self->{file}, 'file', $file // ''), $self->_int('line', $line // 0));
    return $self;
}

sub eval_source {
    my ($self, $text, $n) = @_;
    _check($self);
    $n = $self->_int('eval number', $n);
    _usage($self->{file}, 'eval number must be >= 0') if $n < 0;
    _xs_eval_source($self->{h}, _str($self->{file}, 'eval source', $text // ''), $n);
    return $self;
}

sub end_sample {
    my ($self) = @_;
    _check($self);
    _xs_end_sample($self->{h});
    $self->{samples}++;
    return $self;
}

sub section_start {
    my ($self, $name) = @_;
    _check($self);
    _xs_section_start($self->{h}, _str($self->{file}, 'section name', $name // ''));
    return $self;
}

sub section_end {
    my ($self, $name) = @_;
    _check($self);
    _xs_section_end($self->{h}, _str($self->{file}, 'section name', $name // ''));
    return $self;
}

sub metadata {
    my ($self, $key, $value) = @_;
    _check($self);
    _usage($self->{file}, 'metadata needs a key') unless defined $key;
    _xs_metadata($self->{h}, _str($self->{file}, 'metadata key', $key), _str($self->{file}, 'metadata value', $value // ''));
    return $self;
}

sub samples { _check($_[0])->{samples} }
sub file    { _check($_[0])->{file} }

sub close {
    my ($self) = @_;
    _check($self);
    _xs_close($self->{h});
    return 1;
}

# A usage error from the C side about the handle itself (closed, forged)
# names no file: it names this writer's.
for my $m (qw(start_sample sub_frame xsub_frame main_frame eval_frame eval_source end_sample section_start
    section_end metadata close)) {
    no strict 'refs';
    no warnings 'redefine';
    my $orig = \&$m;
    *$m = sub {
        my $self = $_[0];
        my @r;
        my $want = wantarray;
        eval { @r = $want ? $orig->(@_) : scalar $orig->(@_); 1 } and return $want ? @r : $r[0];
        my $e = $@;
        if (ref $e && eval { $e->isa('Devel::ProfileBridge::Error') } && !length($e->{file} // '')
            && (Scalar::Util::reftype($self) // '') eq 'HASH' && defined $self->{file} && !ref $self->{file}) {
            $e->{file} = $self->{file};
            $e->{line} = Devel::ProfileBridge::Error::_line($e);
        }
        die $e;
    };
}

package Devel::ProfileBridge::StatProfilerWriter::Handle;
sub CLONE_SKIP { 1 }

1;

__END__

=head1 NAME

Devel::ProfileBridge::StatProfilerWriter - write Devel::StatProfiler trace files

=head1 SYNOPSIS

    use Devel::ProfileBridge::StatProfilerWriter;

    my $w = Devel::ProfileBridge::StatProfilerWriter->new(
        file         => 'statprof.out',
        perl_version => '5.36.0',
        interval_us  => 1000,
        depth        => 20,
        metadata     => { host => 'box1' },
    );
    $w->start_sample(1, 'padsv');
    $w->sub_frame('My::Mod', 'work', 'lib/My/Mod.pm', 12, 10);   # innermost first
    $w->xsub_frame('List::Util', 'sum');
    $w->main_frame('script.pl', 7);                               # outermost
    $w->end_sample;
    $w->section_start('phase1');
    $w->section_end('phase1');
    $w->metadata(iteration => 3);
    $w->close;      # only now does "statprof.out" appear

=head1 DESCRIPTION

Writes the binary trace format of L<Devel::StatProfiler> 0.56 (format
version 1) without needing Devel::StatProfiler: the C<=statprofiler> magic,
a header (perl version, sampling interval in microseconds, stack depth, a
genealogy record with a fresh id, custom metadata), then body records, all
packed in Snappy packets of at most 32000 decompressed bytes, the header
flushed as its own packet, exactly as the profiler writes them.  Declared
record lengths are the true payload sizes (the real reader accepts them;
the profiler itself writes smaller, wrong ones).  Files written here are
read by C<Devel::StatProfiler::Reader>, C<statprofilehtml>, and by this
distribution's C<for_chunks>.

While the trace is being written it lives in a temporary file created with
C<O_CREAT|O_EXCL> next to C<file> (C<< .<file>.XXXXXX >>, never a
predictable name); L</close> renames it to C<file>, so an interrupted
program never leaves a file that looks complete.  The output rules are those
of every writer here (L<Devel::ProfileBridge/OUTPUT FILES>): a symlink is
followed to its target, an existing device or FIFO is written in place and
never replaced, the temporary file is removed on every error and on
SIGINT/SIGTERM/SIGHUP.

Strings are written with the UTF-8 flag only when they cannot be
downgraded to Latin-1, as the profiler does for Perl names.

=head1 METHODS

=head2 new(file => PATH, perl_version => '5.36.0', interval_us => 10000, depth => 20, metadata => {...})

Creates the temporary file for C<PATH>.  C<perl_version> is the profiled perl's version
(string or v-string), C<interval_us> the sampling interval (one unit of
sample weight), C<depth> the stack depth the profiler was told to keep,
C<metadata> custom key/value pairs written in the header (in sorted key
order).  Throws an C<io> error if the file cannot be created.

=head2 start_sample($weight, $op_name)

Starts a sample standing for C<$weight> ticks of the interval (0 is
allowed: the profiler writes weight-0, frameless samples).  C<$op_name> is
the Perl op being run (C<_xsub> when an XSUB was being called).

=head2 sub_frame($package, $name, $file, $line, $first_line)

A Perl sub frame: package and sub name separately (C<main>, C<__ANON__>
for anonymous subs), the file, the line executing in it, and the sub's
first line (-1 when unknown).

=head2 xsub_frame($package, $name)

An XSUB frame (no file or line).

=head2 main_frame($file, $line)

File-level code: the main program or a file being C<require>d / C<do>ne.

=head2 eval_frame($file, $line)

String-eval code; C<$file> is C<(eval N)>.

Frames are given innermost first, between C<start_sample> and
C<end_sample>.

=head2 end_sample

Ends the sample.

=head2 eval_source($text, $n)

The source text of C<(eval $n)>.  Allowed inside or outside a sample (the
profiler writes it inside).

=head2 section_start($name), section_end($name)

Section markers (Devel::StatProfiler::start_section/end_section).

=head2 metadata($key, $value)

A custom metadata record in the body (write_custom_metadata).

=head2 close

Writes the end-of-stream record, flushes, and renames the temporary file to
C<file>.  Throws an C<io> error when the system refuses.

=head2 samples, file

The number of samples ended so far; the final file name.

=head1 ERRORS

Every error is a L<Devel::ProfileBridge::Error> (format
C<statprofiler-writer>).  Misuse has class C<usage>: a frame or
C<end_sample> outside a sample, C<start_sample>, a section, metadata or
C<close> inside a sample, any call after L</close> (C<close called twice>),
non-integer lines or weights, unknown options to C<new>, a handle that is
not one this module made.  The system refusing to create, write or rename
the file is class C<io>.

If the object is destroyed without L</close>, nothing is published: the
temporary file is removed and C<file> (if it existed) stays as it was.

=head1 THREADS AND FORK

A writer belongs to the thread and the process that created it.  A new
ithread does not get a copy (C<CLONE_SKIP>).  After C<fork>, every call in
the child throws a C<usage> error, and the child's copy going out of scope
writes nothing and removes nothing: the parent finishes its file as if the
child had never existed.  The writer keeps no stdio buffer, so a child's
exit cannot flush the parent's data twice.

=head1 CONVERTING

Any sampling profile this distribution reads (Tachyon, StatProfiler) can be
converted with

    profbridge convert IN --to statprofiler -o OUT

Frames are written innermost first; Python functions become sub frames
C<package::name> with file, line and first line; weight comes from the
sample count; the interval from the source.  A source with several threads
gives one trace per thread, named like Devel::StatProfiler's template mode:
C<< OUT.<48 hex id>.00000001 >>.

=head1 SEE ALSO

L<Devel::StatProfiler> (whose 0.56 release defines the record format
written here), L<Devel::StatProfiler::Reader>, L<Devel::ProfileBridge>.

=cut
