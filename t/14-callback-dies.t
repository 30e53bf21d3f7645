#!perl
# A callback (or a __WARN__ handler) that dies leaves the C decoder through
# Perl's longjmp, past every C frame of the decode.  What the decoder, its
# fold and any trace it opened own must still be released: no memory and no
# file descriptor may be left behind, whatever the format and wherever in
# the stream the exception comes.  (Before the pb_cleanups table of chunk.h,
# each die left behind about 65 bytes for NYTProf, 210 for Pynytprof, 13 KB
# for Tachyon, 16 KB for EasyProfiler, 138 KB for StatProfiler, and with
# files => [...] 153 KB and an open file descriptor.)
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw spew_raw);
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

# The C heap is measured with glibc's mallinfo2 (undef elsewhere, and 0 --
# so undef -- under a preloaded ASan runtime, where t/c/asan-perl.sh still
# runs every dying path here and t/c/test_cleanups.c checks for leaks).
my $heap_ok = defined Devel::ProfileBridge::_heap_in_use() && ($ENV{LD_PRELOAD} // '') !~ /asan|ubsan/;
diag('C heap not measurable here: only exceptions and descriptors are checked') unless $heap_ok;

sub heap_grew_ok {
    my ($h0, $h1, $what) = @_;
  SKIP: {
        skip 'C heap not measurable', 1 unless $heap_ok;
        my $grew = $h1 - $h0;
        cmp_ok($grew, '<', 4096, "C heap after $what: grew $grew bytes (< 4 KB)");
    }
}

sub heap { return $heap_ok ? Devel::ProfileBridge::_heap_in_use() : 0 }

# $run n times (after 3 to warm up Perl's own arenas) leaves no descriptor and no C heap behind
sub leaves_nothing_ok {
    my ($run, $n, $what) = @_;
    $run->() for 1 .. 3;
    my ($fd0, $h0) = (fds(), heap());
    $run->() for 1 .. $n;
    my ($fd1, $h1) = (fds(), heap());
    is($fd1, $fd0, 'no file descriptor left open');
    heap_grew_ok($h0, $h1, $what);
}

my @fork = sort glob('t/data/statprofiler/fork.out.*.0000000[0-9]');
@fork = grep { !/\.(?:json|jsonl)$/ } @fork;
my @inputs = (
    [ 'nytprof (zlib)',   filename => 't/data/nytprof/evals.nytprof.out' ],
    [ 'nytprof (plain)',  filename => 't/data/nytprof/evals.nocompress.nytprof.out' ],
    [ 'pynytprof',        filename => 't/data/pynytprof/strings.nytprof.out' ],
    [ 'easyprofiler',     filename => 't/data/easyprofiler/ep_threads.prof' ],
    [ 'tachyon',          filename => 't/data/tachyon/multithread.bin' ],
    [ 'statprofiler',     filename => (glob('t/data/statprofiler/sections_meta.out.*.00000001'))[0] ],
    [ 'statprofiler files => [...]', files => \@fork ],
);

sub fds { my @f = glob("/proc/$$/fd/*"); return scalar @f }

# the first half of $src, written to $cut (what a killed profiler leaves)
sub cut_in_half {
    my ($src, $cut) = @_;
    my $data = slurp_raw($src);
    return spew_raw($cut, substr($data, 0, int(length($data) / 2)));
}

# die at the $k-th chunk (1-based), $rounds times; returns the exceptions seen
sub die_at {
    my ($k, $rounds, @args) = @_;
    my %seen;
    for (1 .. $rounds) {
        my $n = 0;
        eval { for_chunks { die "stop at $k\n" if ++$n == $k } @args; 1 } and next;
        $seen{$@}++;
    }
    return \%seen;
}

for my $in (@inputs) {
    my ($name, @args) = @$in;
    subtest $name => sub {
        my $total = 0;
        for_chunks { $total++ } @args;
        ok($total > 10, "$total chunks");
        # first chunk, a quarter, the middle, the last: inside the header,
        # the body and (for the sampling formats) the fold's finish
        my @at = (1, int($total / 4) || 1, int($total / 2) || 1, $total);
        die_at($_, 3, @args) for @at;    # warm up Perl's own arenas
        my $rounds = 60;
        my @seen;
        # nothing but the dying calls between the two measurements
        my ($fd0, $h0) = (fds(), heap());
        push @seen, die_at($_, $rounds, @args) for @at;
        my ($fd1, $h1) = (fds(), heap());
        for my $k (@at) {
            is_deeply(shift @seen, { "stop at $k\n" => $rounds },
                      "die at chunk $k of $total: the exception arrives unchanged");
        }
        is($fd1, $fd0, 'no file descriptor left open by ' . (@at * $rounds) . ' dying callbacks');
        heap_grew_ok($h0, $h1, (@at * $rounds) . ' dying callbacks');
    };
}

subtest 'a __WARN__ handler that dies on a salvage warning' => sub {
    my $dir = tempdir(CLEANUP => 1);
    my $cut = cut_in_half('t/data/tachyon/multithread.bin', "$dir/cut.bin");
    my $run = sub {
        local $SIG{__WARN__} = sub { die "warned: $_[0]" };
        my $ok = eval { for_chunks { 1 } filename => $cut, salvage => 1; 1 };
        return $ok ? '' : $@;
    };
    like($run->(), qr/^warned: tachyon: truncated: .*salvaged/, 'the salvage warning, made fatal, arrives');
    leaves_nothing_ok($run, 100, '100 fatal warnings');
};

subtest 'convert: a __WARN__ handler that dies leaves no temp file behind' => sub {
    # the conversion's warnings are given only once it is complete: the
    # exception arrives, the target is whole (renamed into place), and no
    # temp file, descriptor or heap is left behind
    my $dir = tempdir(CLEANUP => 1);
    my $cut = cut_in_half('t/data/nytprof/evals.nocompress.nytprof.out', "$dir/cut.out");
    my $target = "$dir/out.nytprof";
    my $run = sub {
        local $SIG{__WARN__} = sub { die "warned: $_[0]" };
        my $ok = eval { Devel::ProfileBridge::convert(in => $cut, out => $target, salvage => 1); 1 };
        return $ok ? '' : $@;
    };
    like($run->(), qr/^warned: nytprof: truncated: .*salvaged/, 'the salvage warning, made fatal, arrives');
    opendir my $dh, $dir or die;
    my @left = sort grep { !/^\.\.?$/ } readdir $dh;
    is_deeply(\@left, [qw(cut.out out.nytprof)], 'only the input and the finished target are in the directory');
    my $threads = 0;
    eval { for_chunks { $threads++ if $_[0] eq 'PID_END' } filename => $target; 1 } or diag($@);
    ok($threads > 0, "the target reads back whole ($threads PID_END)");
    leaves_nothing_ok($run, 50, '50 conversions ending in a fatal warning');
};

done_testing;
