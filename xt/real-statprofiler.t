#!/usr/bin/perl
# Conformance of what we write against the REAL Devel::StatProfiler 0.56
# reader (Devel::StatProfiler::Reader, XS), built offline from the
# developers' anchors (../shared/tools/build-real-statprofiler).  Skips
# cleanly where that tree is absent (a CPAN tarball).  For each output, the
# real reader (through ../shared/tools/statprofiler-dump-samples --stdout)
# must read every file to its end and count the samples and weight the source
# holds:
#   - Tachyon -> StatProfiler (one thread; five threads, one trace each),
#     weights equal to CPython's own reader's sample totals (truth.json);
#   - StatProfiler -> StatProfiler round trips: the real reader's numbers for
#     our copy equal its numbers for the original;
#   - the StatProfilerWriter API: sub, xsub, main and eval frames, sections;
#   - 1,000 short-lived threads -> 1,000 traces;
#   - pprof and V8 (ns weights): weight x tick duration = the input's seconds.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use RealStatProfiler ();
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();

my ($tools, @sp) = RealStatProfiler::setup();    # skips unless the real reader is there

my $data = "$FindBin::Bin/../t/data";
my $tmp = tempdir('pb-realsp-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->utf8;
sub real {    # the real reader's summary of one trace
    my ($f) = @_;
    my $out = `"$^X" @sp "$tools/statprofiler-dump-samples" --stdout "$f" 2>&1`;
    return $? ? { error => $out } : $json->decode($out);
}
sub total { my $w = 0; $w += $_->{total_weight} // 0 for @_; $w }

# Tachyon -> StatProfiler
for my $case ([ 'cpu_recursion.bin', 1 ], [ 'multithread.bin', 5 ]) {
    my ($name, $nthreads) = @$case;
    my $truth = $json->decode(do { local (@ARGV, $/) = "$data/tachyon/$name.truth.json"; <> });
    my @files = Devel::ProfileBridge::convert(in => "$data/tachyon/$name", out => "$tmp/$name.sp", to => 'statprofiler');
    is(scalar @files, $nthreads, "$name: $nthreads trace(s)");
    my @r = map { real($_) } @files;
    ok(!grep({ $_->{error} || !$_->{file_ended} } @r), "$name: the real reader reads every trace to its end marker")
        or diag explain [ map { $_->{error} // () } @r ];
    is(total(@r), $truth->{total_samples}, "$name: real total weight = CPython's $truth->{total_samples} samples");
}

# StatProfiler -> StatProfiler (a root's first file is its whole run: compare the run's sums)
my %seen_run;
for my $t (sort grep { !/\.(?:json|jsonl)\z/ } glob("$data/statprofiler/*.out.*[0-9a-f]")) {
    (my $name = $t) =~ s{.*/}{};
    my $orig = real($t);
    next if $orig->{error};    # (a trace the real reader itself refuses is not a conformance case)
    my @copies = Devel::ProfileBridge::convert(in => $t, out => "$tmp/rt.out", to => 'statprofiler');
    my @r = map { real($_) } @copies;
    my @o = ($orig);
    if (@copies > 1 || Devel::ProfileBridge::detect_format($t)->{run_files}) {
        (my $prefix = $t) =~ s/\.[0-9a-f]{48}\.[0-9a-f]{8}\z//;
        @o = map { real($_) } grep { !/\.(?:json|jsonl)\z/ } glob("$prefix.*[0-9a-f]");
        $name .= ' (its run: ' . scalar(@o) . ' files)';
    }
    my $sum = sub { my $k = shift; my $n = 0; $n += $_->{$k} // 0 for @_; $n };
    is_deeply([ map { $sum->($_, @r) } qw(num_samples total_weight num_frames) ],
        [ map { $sum->($_, @o) } qw(num_samples total_weight num_frames) ],
        "$name: the real reader sees the same samples, weight and frames in our copy");
    ok(!grep({ !$_->{file_ended} } @r), "$name: every copy read to its end marker");
    unlink @copies;
}

# the writer API
{
    require Devel::ProfileBridge::StatProfilerWriter;
    my $f = "$tmp/api.out";
    my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => $f, interval_us => 1000, metadata => { host => 'x' });
    $w->start_sample(3, 'entersub')->sub_frame('My::Mod', 'work', '/x/My/Mod.pm', 12, 10)
      ->xsub_frame('List::Util', 'sum')->main_frame('/x/app.pl', 5)->end_sample;
    $w->eval_source("1;\n", 7);
    $w->start_sample(2, 'const')->eval_frame('(eval 7)', 1)->main_frame('/x/app.pl', 6)->end_sample;
    $w->section_start('phase')->section_end('phase');
    $w->close;
    my $r = real($f);
    ok(!$r->{error} && $r->{file_ended}, 'API trace: read to its end') or diag $r->{error};
    is($r->{num_samples}, 2, 'API trace: 2 samples');
    is($r->{total_weight}, 5, 'API trace: weight 3 + 2');
    is_deeply($r->{frame_kinds}, { sub => 1, xsub => 1, main => 2, eval => 1 }, 'API trace: every frame kind');
    is($r->{num_section_events}, 2, 'API trace: the section start and end');
}

# ns weights (pprof, V8) are 1 µs ticks: the real reader's weight x tick
# duration is the input's seconds (go tool pprof's total; a V8 file's
# endTime - startTime - timeDeltas[0] µs)
{
    my $sec = sub { my $s = 0; $s += $_->{total_weight} * $_->{tick_duration} / 1e6 for @_; $s };
    my ($top) = grep { /Total samples = / } do { open my $fh, '<', "$data/pprof/cpu_inline.prof.top-flat.txt" or die; <$fh> };
    my ($ns) = $top =~ /Total samples = ([0-9]+)ns/;
    mkdir "$tmp/ns";
    my @files = Devel::ProfileBridge::convert(in => "$data/pprof/cpu_inline.prof", out => "$tmp/ns/pprof", to => 'statprofiler');
    my @r = map { real($_) } @files;
    ok(!grep({ $_->{error} || !$_->{file_ended} } @r), 'cpu_inline.prof: the real reader reads every trace');
    is(sprintf('%.9f', $sec->(@r)), sprintf('%.9f', $ns / 1e9), "cpu_inline.prof: the real reader's seconds = go tool pprof's $ns ns");
    for my $f (glob("$data/v8/*.cpuprofile"), "$data/crashers/statprofiler-writer/v8-long-sample-to-statprofiler.cpuprofile") {
        (my $name = $f) =~ s{.*/}{};
        my $p = $json->decode(do { local (@ARGV, $/) = $f; <> });
        my $want = ($p->{endTime} - $p->{startTime} - $p->{timeDeltas}[0]) / 1e6;
        my ($out) = Devel::ProfileBridge::convert(in => $f, out => "$tmp/ns/$name.sp", to => 'statprofiler');
        my $r = real($out);
        ok(!$r->{error} && $r->{file_ended}, "$name: read to its end") or diag $r->{error};
        is(sprintf('%.6f', $sec->($r)), sprintf('%.6f', $want), "$name: the real reader's seconds = the profile's $want s");
    }
}

# 1,000 threads
{
    require TachyonFile;
    open my $fh, '>:raw', "$tmp/t1000.bin" or die;
    print $fh TachyonFile::many_threads(1000);
    close $fh;
    mkdir "$tmp/many";
    my @files = Devel::ProfileBridge::convert(in => "$tmp/t1000.bin", out => "$tmp/many/out", to => 'statprofiler');
    is(scalar @files, 1000, '1,000 threads: 1,000 traces');
    my @r = map { real($_) } @files[0, 499, 999];
    ok(!grep({ $_->{error} || !$_->{file_ended} || $_->{total_weight} != 1 } @r),
        'the real reader reads the first, a middle and the last trace: one sample each');
}

done_testing;
