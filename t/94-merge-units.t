#!perl
# Weights of different units never add: merge and diff of a heap profile
# (bytes) with a CPU profile (ns) are a usage error naming both units (the
# CLI exits 2), whichever comes first, with --jobs too; profiles of one unit
# still merge, with totals from independent truth (`go tool pprof -top`'s
# "N total" lines): two heap profiles' bytes, and a CPU profile's sample
# counts x its period.  info shows bytes as bytes and counts as counts,
# never as "s sampled".
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();

my $root = "$FindBin::Bin/..";
my $p = "$FindBin::Bin/data/pprof";
my ($heap, $cpu) = ("$p/heap.prof", "$p/cpu_inline.prof");
my $tmp = tempdir('pb94u-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @inc = -d "$root/blib" ? ("-I$root/blib/lib", "-I$root/blib/arch") : ();

sub total_of {    # go tool pprof -top's total
    my ($f) = @_;
    open my $fh, '<', $f or die "$f: $!";
    while (<$fh>) { return $1 if /accounting for .*% of ([0-9]+)(?:B|ns) total/ }
    die "no total in $f";
}
sub folded_sum {
    my ($f) = @_;
    open my $fh, '<', $f or die "$f: $!";
    my $s = 0;
    while (<$fh>) { $s += $1 if /\s([0-9]+)\n?\z/ }
    return $s;
}
sub cli {
    my (@args) = @_;
    my $cmd = join ' ', map { "'$_'" } $^X, @inc, "$root/bin/profbridge", @args;
    my $out = `$cmd 2>$tmp/err`;
    my $rc = $? >> 8;
    open my $fh, '<', "$tmp/err" or die;
    local $/;
    return ($rc, $out, scalar <$fh>);
}
my $both = qr/its weights are (?:ns \(cpu\/nanoseconds\), those of \S+heap\.prof are bytes \(inuse_space\/bytes\)|bytes \(inuse_space\/bytes\), those of \S+cpu_inline\.prof are ns \(cpu\/nanoseconds\)): weights of different units never add/;

my $n = 0;
for my $case ([ 'merge', [ $heap, $cpu ] ], [ 'merge', [ $cpu, $heap ] ], [ 'merge', [ $heap, $cpu ], jobs => 2 ],
    [ 'diff', [ $cpu, $heap ] ], [ 'diff', [ $heap, $cpu ], to => 'pprof' ]) {
    my ($what, $in, %o) = @$case;
    my $out = "$tmp/out" . ++$n . ($o{to} && $o{to} eq 'pprof' ? '.pb.gz' : '');
    my $label = "$what " . join(' ', map { s{.*/}{}r } @$in) . (%o ? ' (' . join(' ', %o) . ')' : '');
    my $ok = eval {
        $what eq 'merge'
            ? Devel::ProfileBridge::merge(in => $in, out => $out, %o)
            : Devel::ProfileBridge::diff(before => $in->[0], after => $in->[1], out => $out, %o);
        1;
    };
    my $e = $@;
    ok(!$ok && ref $e && $e->class eq 'usage', "$label: a usage error") or diag "$e";
    like("$e", $both, "$label: naming both units");
    ok(!-e $out, "$label: no output");
}

# the CLI: exit 2, one line naming both
{
    my ($rc, undef, $err) = cli('merge', '-o', "$tmp/cli.out", $heap, $cpu);
    is($rc, 2, 'profbridge merge heap.prof cpu_inline.prof: exit 2');
    like($err, qr/\Approf: usage: \S+cpu_inline\.prof: $both[^\n]*\n\z/, '... one line naming both units');
    ($rc, undef, $err) = cli('diff', '-o', "$tmp/cli.folded", $cpu, $heap);
    is($rc, 2, 'profbridge diff cpu_inline.prof heap.prof: exit 2');
}

# one unit: the sums hold
{
    my $bytes = total_of("$p/heap.prof.top-flat.txt");
    Devel::ProfileBridge::merge(in => [ $heap, $heap ], out => "$tmp/hh.folded", to => 'collapsed');
    is(folded_sum("$tmp/hh.folded"), 2 * $bytes, "two heap profiles: 2 x $bytes bytes");
    my $ns = total_of("$p/cpu_inline.prof.top-flat.txt");
    Devel::ProfileBridge::merge(in => [ $cpu, $cpu ], out => "$tmp/cc.folded", to => 'collapsed', sample_type => 'samples');
    is(folded_sum("$tmp/cc.folded"), 2 * $ns, "two CPU profiles' sample counts x the period: 2 x $ns ns");
}

# info: bytes as bytes, counts as counts
{
    my ($info) = Devel::ProfileBridge::info($heap);
    is($info->{weight_unit}, 'bytes', 'info heap.prof: weight_unit bytes');
    is($info->{sampled_weight}, total_of("$p/heap.prof.top-flat.txt"), '... sampled_weight = go tool pprof\'s total');
    ok(!exists $info->{sampled_time_sec}, '... and no sampled time');
    my ($rc, $out) = cli('info', $heap);
    is($rc, 0, 'profbridge info heap.prof: exit 0');
    unlike($out, qr/[0-9] s sampled/, '... no "N s sampled"');
    like($out, qr/^weight:\s+860419 bytes sampled/m, '... bytes as bytes');
    like($out, qr/^  thread main, 860419 bytes$/m, '... per thread too');
    ($rc, $out) = cli('info', '--sample-type', 'alloc_objects', $heap);
    like($out, qr/^weight:\s+[0-9]+ count sampled \(alloc_objects\/count/m, '--sample-type alloc_objects: counts as counts');
    ($info) = Devel::ProfileBridge::info($cpu);
    ok(defined $info->{sampled_time_sec} && !defined $info->{weight_unit}, 'a CPU profile: sampled time, as before');
}

done_testing;
