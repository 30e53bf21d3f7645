#!perl
# End to end, for one profile of every foreign format: profbridge's convert
# writes a nytprof.out that the REAL Devel::NYTProf reads without a single
# warning, and the REAL nytprofhtml renders (exit 0) with the hottest sub
# (by exclusive time, from our own chunk stream) listed in index.html.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(zstd snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

BEGIN {
    eval { require Devel::NYTProf::ReadStream; require Devel::NYTProf::Data; 1 }
        or plan skip_all => 'Devel::NYTProf is not installed';
}
my $html = `which nytprofhtml 2>/dev/null`;
chomp $html;
plan skip_all => 'nytprofhtml not found' unless $html;

my $d = "$FindBin::Bin/data";
my @inputs = (
    [ tachyon      => "$d/tachyon/cpu_recursion.bin" ],
    [ tachyon_zstd => "$d/tachyon/async_tasks.bin" ],
    [ tachyon_315  => "$d/tachyon/v315/cpu_recursion.bin" ],
    [ tachyon_315_zstd => "$d/tachyon/v315/multithread.bin" ],
    [ easyprofiler => "$d/easyprofiler/ep_recursion.prof" ],
    [ easyprofiler_v120 => "$d/easyprofiler/ep_v120_threads.prof" ],
    [ statprofiler => (glob("$d/statprofiler/recursion.out.*[0-9a-f]"))[0] ],
    [ pynytprof_B  => "$d/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out" ],
    [ pynytprof_C  => "$d/pynytprof/tlv/C_rawP_5b7df35/recursion.nytprof.out" ],
    [ pynytprof_D  => "$d/pynytprof/fib.nytprof.out" ],
    [ pstats       => "$d/pstats/replay-recursive_cpu_nogc_none.pstats" ],
);
my $tmp = tempdir('pb90-XXXXXX', TMPDIR => 1, CLEANUP => 1);

for my $in (@inputs) {
    my ($name, $file) = @$in;
    my $out = "$tmp/$name.nytprof";
    ok(eval { Devel::ProfileBridge::convert(in => $file, out => $out); 1 }, "$name: converted") or diag $@;

    # the hottest sub by exclusive time, from our stream
    my %excl;
    &Devel::ProfileBridge::ReadStream::for_chunks(
        { SUB_CALLERS => sub { $excl{ $_[8] } += $_[5] } }, filename => $file);
    my ($hot) = sort { $excl{$b} <=> $excl{$a} || $a cmp $b } keys %excl;

    my @warnings;
    {
        local $SIG{__WARN__} = sub { push @warnings, @_ };
        # Devel::NYTProf::Data also prints its complaints (e.g. statement
        # times that exceed the profile's duration) on STDERR: catch those too
        open my $olderr, '>&', \*STDERR or die;
        close STDERR;
        my $errtext = '';
        open STDERR, '>', \$errtext or die;
        my $n = 0;
        Devel::NYTProf::ReadStream::for_chunks(sub { $n++ }, filename => $out, quiet => 1);
        my $profile = Devel::NYTProf::Data->new({ filename => $out, quiet => 1 });
        close STDERR;
        open STDERR, '>&', $olderr or die;
        ok($n > 0 && $profile, "$name: the real reader loads it");
        push @warnings, $errtext if length $errtext;
    }
    is("@warnings", '', "$name: ... without warnings");

    my $dir = "$tmp/$name-html";
    my $log = `cd '$tmp' && '$html' -f '$out' -o '$dir' 2>&1`;
    is($? >> 8, 0, "$name: nytprofhtml exits 0") or diag $log;
    open my $fh, '<', "$dir/index.html";
    my $index = $fh ? do { local $/; <$fh> } : '';
    if (!defined $hot) {
        # Pynytprof dialect D records no timing and no subs
        ok($name eq 'pynytprof_D' && -s "$dir/index.html", "$name: no subs in the profile; index.html written");
        next;
    }
    (my $hot_html = $hot) =~ s/</&lt;/g;
    my $short = (split /::/, $hot_html)[-1];
    ok(index($index, $hot_html) >= 0 || index($index, "::</span>$short") >= 0 || $index =~ /\Q$short\E/,
        "$name: index.html lists the hottest sub ($hot)");
}

done_testing;
