#!perl
# losses() / convert --report / info: what a target cannot carry, counted,
# against each profiler's own reader's ground truth.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp);
use File::Temp qw(tempdir);
use Config;
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb97-XXXXXX', TMPDIR => 1, CLEANUP => 1);
sub truth { JSON::PP->new->decode(slurp("$_[0].truth.json")) }
sub count_of {
    my ($l, $re) = @_;
    my ($e) = grep { $_->{what} =~ $re } @$l;
    return $e ? $e->{count} : 0;
}

# EasyProfiler: value records and bookmarks, as EasyProfiler's reader counts them
{
    my $f = "$d/easyprofiler/ep_values.prof";
    my $values = 0;
    $values += @{ $_->{values} } for @{ truth($f)->{threads} };
    is(count_of(Devel::ProfileBridge::losses($f, to => 'pprof'), qr/value records/), $values,
        "ep_values: $values value records not carried to pprof");
    like((grep { $_->{what} =~ /value records/ } @{ Devel::ProfileBridge::losses($f) })[0]{note}, qr/COMMENT/,
        '... kept as COMMENTs in nytprof.out');
    my $b = "$d/easyprofiler/ep_bookmarks.prof";
    is(count_of(Devel::ProfileBridge::losses($b, to => 'speedscope'), qr/bookmarks/), scalar @{ truth($b)->{bookmarks} },
        'ep_bookmarks: its bookmarks not carried to speedscope');
}

# Tachyon: samples with thread-state flags, as CPython's reader counts them
{
    my $f = "$d/tachyon/async_tasks.bin";
    my $h = truth($f)->{status_byte_histogram};
    my $flagged = 0;
    $flagged += $h->{$_} for grep { $_ } keys %$h;
    is(count_of(Devel::ProfileBridge::losses($f, to => 'collapsed'), qr/thread-state flags/), $flagged,
        "async_tasks: $flagged samples with thread-state flags");
}

# StatProfiler: op names, sections, metadata
{
    my ($f) = glob "$d/statprofiler/sections_meta.out.*[0-9a-f]";
    my $t = truth($f);
    my $l = Devel::ProfileBridge::losses($f, to => 'pprof');
    is(count_of(Devel::ProfileBridge::losses($f, to => 'collapsed'), qr/op names/), $t->{total_weight},
       'sections_meta: op names of every sample (its weight) not carried to collapsed');
    ok(!count_of($l, qr/op names/), '... but kept by pprof (label opcode)');
    is(count_of($l, qr/section/), $t->{num_section_events}, 'sections_meta: every section event');
    is_deeply(Devel::ProfileBridge::losses($f, to => 'statprofiler'), [], 'nothing lost to --to statprofiler');
}

# NYTProf to a stack output: its line timings and call counts
{
    my $f = "$d/nytprof/recursion.nytprof.out";
    my $c = Devel::ProfileBridge::chunk_counts($f);
    my $l = Devel::ProfileBridge::losses($f, to => 'pprof');
    is(count_of($l, qr/statement/), $c->{TIME_LINE}, 'recursion.nytprof.out: every TIME_LINE is a line timing pprof lacks');
    is(count_of($l, qr/call counts/), $c->{SUB_CALLERS}, '... and every SUB_CALLERS a call count');
    is_deeply(Devel::ProfileBridge::losses($f), [], 'nothing lost nytprof -> nytprof');
}

# the CLI
{
    my $root = "$FindBin::Bin/..";
    my @inc = map { "-I$_" } grep { -d } "$root/blib/lib", "$root/blib/arch";
    my $out = `"$Config{perlpath}" @inc "$root/bin/profbridge" convert "$d/easyprofiler/ep_values.prof" --to collapsed -o "$tmp/x.folded" --report 2>&1`;
    like($out, qr/^not carried to collapsed:\n  value records \(EASY_VALUE\): 110 \(dropped\)$/m, 'convert --report');
    $out = `"$Config{perlpath}" @inc "$root/bin/profbridge" info "$d/easyprofiler/ep_values.prof" 2>&1`;
    like($out, qr/^not carried to nytprof:\n  value records/m, 'info lists what nytprof.out does not show');
}

done_testing;
