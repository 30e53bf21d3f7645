#!perl
# salvage => 1 (issue 7): a profile cut in the middle -- what a crashed
# profiler or a broken download leaves -- dies without salvage with a
# `truncated` error; with salvage for_chunks delivers the chunks before the
# cut, then one warning ("<format>: truncated: ... at byte N of F; salvaged
# M ... before it"); and convert(..., salvage => 1) writes a nytprof.out that
# the real Devel::NYTProf::ReadStream loads without warnings and that the real
# nytprofhtml renders.  One file of each format.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use File::Temp qw(tempdir);
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream ();
use Devel::NYTProf::ReadStream ();

my $tmp = tempdir('pb82-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $D = 't/data';
my ($sp) = grep { /\.[0-9a-f]{48}\.[0-9a-f]{8}$/ } sort glob("$D/statprofiler/recursion.out.*");
my %cases = (
    nytprof      => "$D/nytprof/recursion.nytprof.out",                         # zlib stream cut
    tachyon      => "$D/tachyon/cpu_recursion.bin",                             # tables lost
    easyprofiler => "$D/easyprofiler/ep_basic.prof",                            # inside a thread's blocks
    pynytprof    => "$D/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out",
    statprofiler => $sp,                                                        # inside a Snappy packet
);

my $nytprofhtml = (grep { -x "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];

for my $format (sort keys %cases) {
    my $src = $cases{$format};
    my $bytes = slurp_raw($src);
    my $cut = "$tmp/cut-$format" . ($format eq 'statprofiler' ? '.out.' . ('0' x 48) . '.00000001' : '');
    open my $fh, '>:raw', $cut or die;
    print {$fh} substr($bytes, 0, int(length($bytes) / 2));
    close $fh;

    subtest "$format cut at half ($cut)" => sub {
        # without salvage: a truncated error
        my $n = 0;
        my $ok = eval { Devel::ProfileBridge::ReadStream::for_chunks(sub { $n++ }, filename => $cut); 1 };
        my $e = $@;
        ok(!$ok, 'dies without salvage');
        is(ref $e && $e->class, 'truncated', 'class truncated') or diag("$e");
        is(ref $e && $e->format, $format, "format $format");

        # with salvage: the prefix, then one warning
        my (@tags, @warn, $at_warn);
        local $SIG{__WARN__} = sub { push @warn, $_[0]; $at_warn = scalar @tags };
        $ok = eval {
            Devel::ProfileBridge::ReadStream::for_chunks(sub { push @tags, $_[0] }, filename => $cut, salvage => 1);
            1;
        };
        ok($ok, 'salvage: no exception') or diag($@);
        is($tags[0], 'VERSION', 'salvage: the stream starts with VERSION');
        cmp_ok(scalar @tags, '>=', $n, 'salvage: at least the chunks delivered before the error');
        is(scalar @warn, 1, 'salvage: exactly one warning') or diag(@warn);
        like($warn[0] // '', qr/^\Q$format\E: truncated: .+ at byte \d+ of \Q$cut\E; salvaged \d+ .*before it/,
            'salvage: the warning is the error line plus what was salvaged');
        is($at_warn, scalar @tags, 'salvage: the warning comes after the last chunk');
        my %count;
        $count{$_}++ for @tags;
        ok($count{PID_START} && $count{PID_END} && $count{PID_START} == $count{PID_END},
            'salvage: every PID_START has its PID_END');
        if ($format =~ /^(?:tachyon|statprofiler|easyprofiler)$/) {
            ok($count{SUB_INFO} && $count{SUB_CALLERS}, 'salvage: SUB_INFO and SUB_CALLERS from the fold');
        }

        # convert: a valid nytprof.out
        @warn = ();
        my $out = "$tmp/$format.nytprof.out";
        $ok = eval { Devel::ProfileBridge::convert(in => $cut, out => $out, salvage => 1); 1 };
        ok($ok && -s $out, 'convert(salvage => 1) writes the target') or diag($@);
        ok(!eval { Devel::ProfileBridge::convert(in => $cut, out => "$out.no", format => $format); 1 }
                && !-e "$out.no", 'convert without salvage dies and writes nothing');
        my @real_warn;
        {
            local $SIG{__WARN__} = sub { push @real_warn, $_[0] };
            my $m = 0;
            my $real_ok = eval { Devel::NYTProf::ReadStream::for_chunks(sub { $m++ }, filename => $out); 1 };
            ok($real_ok && $m > 0, "the real ReadStream loads it ($m chunks)") or diag($@);
        }
        is(scalar @real_warn, 0, 'without warnings') or diag(@real_warn);
      SKIP: {
            skip 'nytprofhtml not installed', 2 unless $nytprofhtml;
            my $html = "$tmp/html-$format";
            my $log = `'$nytprofhtml/nytprofhtml' -f '$out' -o '$html' 2>&1`;
            ok($? == 0 && -s "$html/index.html", 'nytprofhtml renders it') or diag($log);
            # sources are not on this machine ("Unable to open"); anything else is a defect
            # and flamegraph.pl says "No stack counts found" when no sub was called
            my @bad = grep { /incomplete|panic|uninitiali[sz]ed|died|error/i && !/Unable to open|No stack counts found/ }
                split /\n/, $log;
            is(scalar @bad, 0, 'nytprofhtml reports no problem with the data') or diag(join "\n", @bad);
        }
    };
}

subtest 'salvage is for the nytprof target only' => sub {
    # the collapsed and StatProfiler writers have no way to finish a cut
    # stream: asking them to salvage is refused up front, never ignored
    my $cut = "$tmp/cut-tachyon";
    for my $to (qw(collapsed statprofiler)) {
        my $out = "$tmp/refused.$to";
        my $ok = eval { Devel::ProfileBridge::convert(in => $cut, out => $out, to => $to, salvage => 1); 1 };
        like($ok ? '' : "$@", qr/^Devel::ProfileBridge: usage: convert: salvage => 1 is for to => 'nytprof'/, "to => '$to': refused");
        ok(!-e $out, "to => '$to': nothing written");
    }
    my $out = `$^X -Mblib bin/profbridge convert '$cut' --to collapsed -o '$tmp/refused.cli' --salvage 2>&1`;
    is($? >> 8, 1, 'profbridge convert --to collapsed --salvage: usage error, exit 1');
    like($out, qr/--salvage is for --to nytprof only/, '... saying why');
};

done_testing;
