#!perl
# merge: many profiles into one nytprof.out, collapsed or pprof file.  The
# totals are the sum of the parts (in ns: a sample stands for its file's
# interval), stack by stack; the real Devel::NYTProf reads the merged
# nytprof.out and nytprofhtml renders it; go tool pprof reads the merged pprof.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp weight_unit_ns folded_weights go_for_pprof);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb94-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# collapsed stacks (threads merged) of one input, weights in ns
sub parts {
    my ($in) = @_;
    Devel::ProfileBridge::convert(in => $in, out => "$tmp/part.folded", to => 'collapsed');
    return folded_weights("$tmp/part.folded", unit => weight_unit_ns($in));
}
sub merged_stacks { folded_weights($_[0]) }
sub sum { my $t = 0; $t += $_ for values %{ $_[0] }; $t }

my $fork_root = (grep { /fork\.out\.000028f9/ } glob "$d/statprofiler/fork.out.*[0-9a-f]")[0];
my @sets = (
    [ 'three Tachyon files (both header layouts, plain and zstd)',
        "$d/tachyon/cpu_recursion.bin", "$d/tachyon/v315/cpu_recursion.bin", "$d/tachyon/multithread.bin" ],
    [ 'a StatProfiler fork genealogy (the run) and a Tachyon file', $fork_root, "$d/tachyon/deep_stack.bin" ],
    [ 'three formats: Tachyon, EasyProfiler, StatProfiler', "$d/tachyon/async_tasks.bin",
        "$d/easyprofiler/ep_threads.prof", (glob "$d/statprofiler/recursion.out.*[0-9a-f]")[0] ],
    [ 'a Perl profile (NYTProf) and a Python one', "$d/nytprof/recursion.nytprof.out", "$d/tachyon/cpu_recursion.bin" ],
);
for my $set (@sets) {
    my ($label, @in) = @$set;
    my %want;
    for my $p (map { parts($_) } @in) { $want{$_} += $p->{$_} for keys %$p }
    my $folded = "$tmp/merged.folded";
    ok(eval { Devel::ProfileBridge::merge(in => \@in, out => $folded, to => 'collapsed'); 1 }, "$label: merged (collapsed)")
        or diag $@;
    my $got = merged_stacks($folded);
    is_deeply($got, \%want, "$label: every stack weighs the sum of its parts (" . scalar(keys %want) . ' stacks)');
    ok(sum($got) > 0 && sum($got) == sum(\%want), "$label: total " . sum($got) . ' ns = the sum of the parts');

    # nytprof.out: the real reader, the TIME_LINE ticks (ns) add up
    my $nyt = "$tmp/merged.nytprof";
    my @warn;
    {
        local $SIG{__WARN__} = sub { push @warn, @_ };
        ok(eval { Devel::ProfileBridge::merge(in => \@in, out => $nyt, source => 0); 1 }, "$label: merged (nytprof)")
            or diag $@;
    }
    SKIP: {
        skip 'Devel::NYTProf is not installed', 2 unless eval { require Devel::NYTProf::Data; 1 };
        my $p = do { local $SIG{__WARN__} = sub { push @warn, @_ }; Devel::NYTProf::Data->new({ filename => $nyt, quiet => 1 }) };
        is_deeply(\@warn, [], "$label: the real Devel::NYTProf reads it without a warning");
        my $ticks = 0;
        &Devel::ProfileBridge::ReadStream::for_chunks({ TIME_LINE => sub { $ticks += $_[1] } }, filename => $nyt);
        is($ticks, sum(\%want), "$label: its TIME_LINE ticks (ns) total the parts");
    }
}

# pprof: go tool pprof reads the merged profile; its total is the parts'
SKIP: {
    my $go = go_for_pprof($tmp);
    skip 'go (go tool pprof) not found', 2 unless $go;
    my @in = ("$d/tachyon/cpu_recursion.bin", "$d/easyprofiler/ep_basic.prof");
    my %want;
    for my $p (map { parts($_) } @in) { $want{$_} += $p->{$_} for keys %$p }
    Devel::ProfileBridge::merge(in => \@in, out => "$tmp/m.pb.gz", to => 'pprof');
    my $top = `"$go" tool pprof -top -unit=ns -nodefraction=0 "$tmp/m.pb.gz" 2>&1`;
    is($?, 0, 'go tool pprof reads a merged profile');
    my ($total) = $top =~ /of (\d+)ns total/;
    is($total, sum(\%want), 'pprof total = the sum of the parts (ns)');
}

# many runs of one program: the same thread id is one thread, weights add
{
    my @in = ("$d/tachyon/cpu_recursion.bin") x 50;
    Devel::ProfileBridge::merge(in => \@in, out => "$tmp/50.folded", to => 'collapsed');
    my $one = parts($in[0]);
    is(sum(merged_stacks("$tmp/50.folded")), 50 * sum($one), '50 copies: 50 times the weight');
    Devel::ProfileBridge::merge(in => \@in, out => "$tmp/50.nytprof", source => 0);
    my ($info) = Devel::ProfileBridge::info("$tmp/50.nytprof");
    is(scalar @{ $info->{threads} }, 1, '... in its one thread (the same thread id in every run)');
}

# --jobs: worker processes decode, the result is the same
{
    my @in = ("$d/tachyon/cpu_recursion.bin", "$d/easyprofiler/ep_threads.prof", "$d/tachyon/multithread.bin",
        (glob "$d/statprofiler/recursion.out.*[0-9a-f]")[0], "$d/nytprof/recursion.nytprof.out", "$d/tachyon/deep_stack.bin");
    for my $to (qw(collapsed nytprof pprof speedscope)) {
        Devel::ProfileBridge::merge(in => \@in, out => "$tmp/j1.$to", to => $to, source => 0);
        Devel::ProfileBridge::merge(in => \@in, out => "$tmp/j3.$to", to => $to, source => 0, jobs => 3);
        ok(slurp("$tmp/j1.$to") eq slurp("$tmp/j3.$to"), "jobs => 3: the same $to file, byte for byte");
    }
    my @many = ("$d/tachyon/cpu_recursion.bin") x 400;
    Devel::ProfileBridge::merge(in => \@many, out => "$tmp/400.folded", to => 'collapsed', jobs => 2);
    is(sum(merged_stacks("$tmp/400.folded")), 400 * sum(parts($many[0])), '400 files, 2 workers: 400 times the weight');
    ok(!eval { Devel::ProfileBridge::merge(in => [ @in, "$d/tachyon/cpu_recursion.py" ], out => "$tmp/jx.folded",
        to => 'collapsed', jobs => 2); 1 }, 'a bad input in a worker');
    like($@, qr{^Devel::ProfileBridge: corrupt: not a profile this distribution recognises.* at byte 0 of \Q$d/tachyon/cpu_recursion.py\E},
        "... gives the input's own error");
    ok(!-e "$tmp/jx.folded", '... and no output');
}

# errors
ok(!eval { Devel::ProfileBridge::merge(in => ["$d/tachyon/cpu_recursion.bin", "$d/tachyon/cpu_recursion.py"],
    out => "$tmp/bad.nytprof"); 1 }, 'an input that is no profile');
like($@, qr/^Devel::ProfileBridge: corrupt: not a profile/, '... a corrupt error');
ok(!-e "$tmp/bad.nytprof", '... and no output');
ok(!eval { Devel::ProfileBridge::merge(in => [], out => "$tmp/x"); 1 }, 'no inputs: croaks');

done_testing;
