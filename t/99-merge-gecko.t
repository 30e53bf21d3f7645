#!perl
# Issue 39 item 3: `merge --to gecko` gives one profile with its inputs'
# threads side by side, each thread as its input's own conversion has it:
# every recorded sample at its own time (a Tachyon REPEAT run is one sample
# per tick, samples.h each_tick), the status markers (Tachyon: "Has GIL",
# "On CPU", ...) and the span markers (EasyProfiler blocks, speedscope
# events), each input's times counted from its own origin.  With --jobs the
# worker spools carry all of that: the result is byte for byte the one of a
# single process, for gecko as for collapsed, nytprof and pprof.
#
# Truth: CPython's own `replay --gecko` of each Tachyon input (committed
# beside it as X.bin.gecko.json.gz), and for the other inputs their own
# conversion; both read by the few lines of t/lib/GeckoThreads.pm.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;
use Needs qw(zstd);
use Stacks qw(slurp convert_quietly);
use GeckoThreads qw(gecko_threads);
use File::Temp qw(tempdir);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d    = "$FindBin::Bin/data";
my $tmp  = tempdir('pb99g-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;
my $cli  = "$FindBin::Bin/../bin/profbridge";

# the CLI, its stderr captured: 1 on exit 0
sub run_cli {
    my (@args) = @_;
    my $err = "$tmp/stderr";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDERR, '>', $err or die;
        open STDOUT, '>', '/dev/null' or die;
        exec $^X, (map { "-I$_" } @INC), $cli, @args;
        die "exec: $!";
    }
    waitpid $pid, 0;
    note(slurp($err)) if -s $err;
    return $? == 0;
}
sub label { my ($f) = @_; $f =~ s{.*/}{}r }

my $tach = "$d/tachyon/real315";
my @pairs = (
    [ "$tach/multithread_cpu_none.bin", "$tach/lambdas_classes_opcodes_zstd.bin" ],
    [ "$d/easyprofiler/ep_threads.prof", "$d/speedscope/evented_two_threads.speedscope.json" ],
    # three inputs over two workers (one share of two), a spread input beside recorded ones
    [ "$tach/multithread_gil_zstd.bin", "$d/easyprofiler/ep_recursion.prof", "$tach/multithread_exception_none.bin" ],
);

for my $in (@pairs) {
    my $what = join ' + ', map { label($_) } @$in;
    ok(run_cli('merge', '--to', 'gecko', '-o', "$tmp/m1.json", @$in), "$what: merge --to gecko") or next;
    ok(run_cli('merge', '--jobs', 2, '--to', 'gecko', '-o', "$tmp/m2.json", @$in), "$what: merge --jobs 2 --to gecko")
        or next;
    ok(slurp("$tmp/m1.json") eq slurp("$tmp/m2.json"), "$what: --jobs 2 writes the same bytes as one process ("
        . (-s "$tmp/m1.json") . ' bytes)');

    # each input alone: CPython's own file for a Tachyon input, else our conversion
    my (@want, %cpython);
    for my $f (@$in) {
        my $p;
        if ($f =~ /\.bin\z/) {
            gunzip("$f.gecko.json.gz" => \my $ref) or die $GunzipError;
            $p = $json->decode($ref);
            $cpython{$_->{tid}} = 1 for @{ $p->{threads} };
        } else {
            convert_quietly($f, { out => "$tmp/one.json", to => 'gecko' }) or die "$f: not converted";
            $p = $json->decode(slurp("$tmp/one.json"));
        }
        push @want, @{ gecko_threads($p) };
    }
    my $got = gecko_threads($json->decode(slurp("$tmp/m1.json")));
    my ($ns, $nm) = (0, 0);
    $ns += $_->{samples}, $nm += @{ $_->{markers} } for @want;
    is(scalar @$got, scalar @want, "$what: " . @want . ' threads, side by side');
    for my $i (0 .. $#want) {
        my ($g, $w) = ($got->[$i] || {}, $want[$i]);
        my $t = "$what: thread $w->{tid}" . ($cpython{$w->{tid}} ? ' (against CPython)' : '');
        is($g->{tid}, $w->{tid}, "$t: in its input's place");
        # CPython names its threads "Thread-<tid>" as we do
        is($g->{name}, $w->{name}, "$t: its name");
        is($g->{samples}, $w->{samples}, "$t: $w->{samples} samples, one per recorded sample");
        is_deeply($g->{times}, $w->{times}, "$t: the sample times (µs) of its input alone");
        is_deeply($g->{markers}, $w->{markers}, "$t: its " . @{ $w->{markers} } . ' markers (name, begin, end)');
    }
    cmp_ok($nm, '>', 0, "$what: $ns samples and $nm markers to compare");
}

# the other targets: --jobs 2 and one process write the same bytes
for my $in (@pairs[0, 1], [ map { "$d/pprof/$_" } qw(cpu_inline.pb cpu_inline.prof labels.prof) ]) {
    my $what = join ' + ', map { label($_) } @$in;
    for my $to (qw(collapsed nytprof pprof speedscope)) {
        next if $to eq 'nytprof' && $in->[0] =~ /pprof/;
        ok(run_cli('merge', '--to', $to, '-o', "$tmp/o1", @$in)
            && run_cli('merge', '--jobs', 2, '--to', $to, '-o', "$tmp/o2", @$in), "$what: merge --to $to, with and without --jobs 2")
            or next;
        ok(slurp("$tmp/o1") eq slurp("$tmp/o2"), "$what --to $to: the same bytes (" . (-s "$tmp/o1") . ')');
    }
}

done_testing;
