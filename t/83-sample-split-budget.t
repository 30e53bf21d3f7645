#!perl
# The statement budget of a sampled profile (max_statements): the TIME_LINE
# chunks beyond one that a sample of weight x interval ticks splits into
# (at most 2^31 - 1 ticks a chunk) come out of it, charged by the model in
# front of the fold and of a stack target alike, so a conversion stops at
# the same sample, with the same message and byte, whatever it writes:
#   pprof    a profile built here (protobuf in a few lines, independent of
#            the reader): the failing sample, the chunks left and its byte
#            worked out here from the weights as written
#   tachyon  a real file whose interval is raised to 2^30 us (one chunk a
#            unit of weight): the message's numbers agree with each other
#            and nytprof.out and collapsed stop at the same byte
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use ProtoBytes qw(varint fv fl);
use RawFile qw(slurp_raw spew_raw);
use File::Temp qw(tempdir);
use Devel::ProfileBridge;

my $tmp = tempdir('pb83b-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $I32 = 2**31 - 1;


# samples of one value (cpu/nanoseconds) on locations 1..3 (main.f1..f3);
# returns the bytes and each sample's payload offset
sub profile {
    my (@s) = @_;
    my $p = fl(1, fv(1, 1) . fv(2, 2));
    my @at;
    for my $s (@s) {
        my $b = fl(1, join '', map { varint($_) } @{ $s->{ids} }) . fl(2, varint($s->{v}));
        $p .= varint(2 * 8 + 2) . varint(length $b);
        push @at, length $p;
        $p .= $b;
    }
    $p .= fl(4, fv(1, $_) . fl(4, fv(1, $_) . fv(2, 10 + $_))) for 1 .. 3;
    $p .= fl(5, fv(1, $_) . fv(2, 4 + $_) . fv(4, 3) . fv(5, 1)) for 1 .. 3;
    $p .= fl(6, $_) for '', 'cpu', 'nanoseconds', 'main.go', 'tid', map {"main.f$_"} 1 .. 3;
    return ($p . fl(11, fv(1, 1) . fv(2, 2)) . fv(12, 10000000), \@at);
}

my $n = 0;
sub convert {
    my ($in, @args) = @_;
    my $out = "$tmp/out" . ++$n;
    local $SIG{__WARN__} = sub { note("warning: @_") };    # (the source files are not on disk)
    my $ok = eval { Devel::ProfileBridge::convert(in => $in, out => $out, @args); 1 };
    return $ok ? '' : "$@";
}

subtest 'pprof: the sample that splits past what is left' => sub {
    # 5e9 ns: 3 chunks (2 more); 10 ns: 1; 9e9 ns: 5 chunks (4 more)
    my @s = ({ ids => [ 1, 2 ], v => 5_000_000_000 }, { ids => [3], v => 10 }, { ids => [ 2, 3 ], v => 9_000_000_000 });
    my ($p, $at) = profile(@s);
    my $in = "$tmp/split.pb";
    spew_raw($in, $p);
    my @extra = map { my $c = int($_->{v} / $I32) + ($_->{v} % $I32 ? 1 : 0); $c - 1 } @s;
    is_deeply(\@extra, [ 2, 0, 4 ], 'the chunks beyond one, as worked out here');
    for my $to (qw(nytprof collapsed pprof)) {
        my $err = convert($in, to => $to, max_statements => 5);
        like($err, qr/\Approf: limit: a sample of weight 9000000000 needs more TIME_LINE chunks than the 3 left of max_statements at byte $at->[2] of \Q$in\E/,
            "$to, max_statements 5: the third sample, 3 left, at its byte ($at->[2])");
        is(convert($in, to => $to, max_statements => 6), '', "$to, max_statements 6: enough");
    }
    my %n = %{ Devel::ProfileBridge::chunk_counts($in) };
    is($n{TIME_LINE}, 3 + 1 + 5, 'nytprof.out: 9 TIME_LINE chunks under the default budget');
};

subtest 'tachyon: an interval of 2^30 us' => sub {
    my $b = slurp_raw("$FindBin::Bin/data/tachyon/cpu_recursion.bin");
    is(unpack('Q<', substr($b, 20, 8)), 1000, 'the header\'s interval (1000 us) where expected');
    substr($b, 20, 8) = pack('Q<', 2**30);
    my $in = "$tmp/interval.bin";
    spew_raw($in, $b);
    is(convert($in, to => 'collapsed'), '', 'the default budget: converts');
    my %n = %{ Devel::ProfileBridge::chunk_counts($in) };
    my $extra = $n{TIME_LINE} - 1;    # what a budget of one chunk less must refuse, somewhere
    cmp_ok($extra, '>', 1, "$n{TIME_LINE} TIME_LINE chunks");
    my %said;
    for my $to (qw(nytprof collapsed)) {
        my $err = convert($in, to => $to, max_statements => 3);
        my ($w, $iv, $more, $left, $byte) = $err =~
            /\Atachyon: limit: sample of weight (\d+) x (\d+) us needs (\d+) more TIME_LINE chunks than the (\d+) left of max_statements at byte (\d+) of \Q$in\E$/
            or do { fail("$to: the budget's message") or diag($err); next };
        is($iv, 2**30, "$to: the interval");
        is($more, $w - 1, "$to: one chunk a unit of weight, $w units: $more more");
        cmp_ok($left, '<', $more, "$to: more than the $left left");
        cmp_ok($left, '<=', 3, "$to: at most the budget left");
        $said{$to} = $err;
    }
    is($said{collapsed}, $said{nytprof}, 'collapsed stops where nytprof.out does');
};

done_testing;
