#!perl
# Sampled time is sampled time: for every sampled file of the corpus
# (Tachyon: the 3.14-layout files, v315, the real CPython 3.15.2 files;
# StatProfiler traces and runs), the REAL nytprofhtml (Debian
# libdevel-nytprof-perl) renders a flame graph whose root is samples x
# interval microseconds, as the source tool counts them (ground truth beside
# each file), and whose first level covers 99-101% of the root: the profile is
# active for the sampled total, not for the run's wall-clock length.  Also the
# wall-clock length is kept (ATTRIBUTE run_wall_clock_sec, Tachyon).
# Here a representative subset (nytprofhtml takes a while per file); every
# file with RELEASE_TESTING (xt/sampled-flamegraph.t, make xtest).  Skipped
# where nytprofhtml is absent.
use strict;
use warnings;
use Test::More;
use File::Basename ();
use File::Spec ();
my $here;
BEGIN { $here = File::Basename::dirname(File::Spec->rel2abs(__FILE__)) }
use lib "$here/lib";
use Needs qw(zstd snappy);
use SampledTime qw(sampled_corpus flame_graph pprof_values speedscope_values);
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

plan skip_all => 'nytprofhtml (libdevel-nytprof-perl) not found'
    unless grep({ -x "$_/nytprofhtml" } split /:/, $ENV{PATH} // '') && eval { require Devel::NYTProf::Data; 1 };

my $tmp = tempdir('pb98-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = "$here/data";
my @corpus = sampled_corpus($d);
cmp_ok(scalar @corpus, '>=', 27, 'the sampled corpus: Tachyon (incl. real 3.15.2) and StatProfiler files');
# the subset: the README's demo, threads, both 3.15 header layouts, real
# 3.15.2 files (opcodes + zstd, threads, 5 kHz, no samples at all), a
# StatProfiler trace cut at its depth limit, a StatProfiler run of 5 files
my $subset = qr{(?:\A|/)(?:tachyon/(?:cpu_recursion|multithread|v315/multithread)\.bin
    |real315/(?:lambdas_classes_opcodes_zstd|multithread_cpu_none|recursive_cpu_nogc_none|multithread_exception_none)\.bin
    |statprofiler/(?:recursion|xs_calls)\.out\.[0-9a-f]+\.00000001
    |statprofiler/fork\.out\.000028f9[0-9a-f]+\.00000001)\z}x;
@corpus = grep { $_->{file} =~ $subset } @corpus unless $ENV{RELEASE_TESTING};

my $i = 0;
for my $c (@corpus) {
    (my $label = $c->{file}) =~ s{\A\Q$d/\E}{};
    $i++;
    my $out = "$tmp/$i.nytprof";
    my $ok = eval {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $c->{file}, out => $out);
        1;
    };
    ok($ok, "$label: converts") or do { diag $@; next };
    my $want_us = $c->{samples} * $c->{interval_us};
    # the same totals in pprof (sample values) and speedscope (weights): the source tool's
    my %sum;
    my $stacks = eval {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $c->{file}, out => "$out.pb.gz", to => 'pprof');
        # the timed (evented) form for two real 3.15 files, the summed form
        # for the other eight (t/95-speedscope-times.t reads every one timed)
        Devel::ProfileBridge::convert(in => $c->{file}, out => "$out.speedscope.json", to => 'speedscope',
            ($c->{file} =~ m{/real315/(?!multithread_gil_zstd|lambdas_classes)} ? (time_order => 0) : ()));
        $sum{ $_->[0] } += $_->[1] for pprof_values("$out.pb.gz"), speedscope_values("$out.speedscope.json");
        1;
    };
    ok($stacks, "$label: pprof and speedscope written and read back") or diag $@;
    is($sum{'sample value (nanoseconds)'} // 0, $want_us * 1000, "$label: pprof's sample values add up to $want_us us");
    is($sum{'sample value (count)'} // 0, $c->{samples}, "$label: pprof's sample counts add up to $c->{samples}");
    is($sum{weight} // 0, $want_us * 1000, "$label: speedscope's weights add up to $want_us us");
    my %a;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } = $_[2] } }, filename => $out);
    if ($c->{samples} == 0) {
        # CPython's exception mode when nothing raised: no samples, no flame graph
        is($a{sampled_time_sec}, 0, "$label: no samples, sampled time 0");
        next;
    }
    # what nytprofhtml divides by and sizes the flame graph with (flamegraph.pl
    # widens its root to the stacks' sum when that is more, so ask NYTProf too)
    my $p = eval { local $SIG{__WARN__} = sub { }; Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }) };
    my $active_us = $p ? $p->attributes->{profiler_active} * 1e6 : -1;
    ok(abs($active_us - $want_us) < 0.5, sprintf '%s: NYTProf\'s profiler_active = %.1f us, the sampled total',
        $label, $active_us);
    my $fg = flame_graph($out, "$tmp/html$i");
    ok($fg, "$label: nytprofhtml draws a flame graph") or do { diag $@; next };
    my $cover = 100 * $fg->{first_us} / $fg->{root_us};
    is($fg->{root_us}, $want_us,
        "$label: root = $c->{samples} samples x $c->{interval_us} us = $want_us us ($c->{what})");
    ok($cover >= 99 && $cover <= 101, sprintf "%s: first level covers %.2f%% of the root", $label, $cover)
        or diag explain $fg->{first};
    if ($c->{what} =~ /tachyon/) {
        # the run's wall-clock length stays: at least the sampled time of its busiest thread
        ok(defined $a{run_wall_clock_sec} && $a{run_wall_clock_sec} > 0,
            "$label: run_wall_clock_sec kept (" . ($a{run_wall_clock_sec} // 'none') . ' s)');
    }
}

# merged sampled inputs: the merged profile is active for the sum of their sampled totals
{
    my %c = map { ($_->{file} =~ s{\A\Q$d/\E}{}r => $_) } @corpus;
    my @in = grep { $c{$_} } 'tachyon/cpu_recursion.bin', 'tachyon/multithread.bin';
    my $want_us = 0;
    $want_us += $c{$_}{samples} * $c{$_}{interval_us} for @in;
    my $out = "$tmp/merged.nytprof";
    ok(eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::merge(in => [ map { "$d/$_" } @in ], out => $out); 1 },
        "merge of @in") or diag $@;
    my $p = eval { local $SIG{__WARN__} = sub { }; Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }) };
    my $active_us = $p ? $p->attributes->{profiler_active} * 1e6 : -1;
    ok(abs($active_us - $want_us) < 0.5, sprintf 'merged: profiler_active = %.1f us, the sampled total %d us',
        $active_us, $want_us);
    my $fg = flame_graph($out, "$tmp/html-merged");
    ok($fg && $fg->{root_us} == $want_us && abs(100 * $fg->{first_us} / $fg->{root_us} - 100) <= 1,
        sprintf 'merged: flame graph root %s us, first level %s us', $fg ? ($fg->{root_us}, $fg->{first_us}) : ('none', ''))
        or diag $@;
}

done_testing;
