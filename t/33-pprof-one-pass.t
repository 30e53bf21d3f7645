#!perl
# pprof read in one pass for a target that sums stacks (collapsed, speedscope
# --no-time-order): each distinct sample kept once, its values summed, and
# sent in the order first seen.  Every case is a profile built here by hand
# (protobuf in a few lines, independent of the reader) and its expected
# stacks, weights, frame order or error worked out here from the samples as
# written:
#   sums       repeated stacks summed, unpacked ids, values before locations,
#              thread labels
#   order      a stack whose first sample weighs 0: its frames come where
#              its first sample of weight > 0 is (speedscope's frame list)
#   split      a value past INT32_MAX ns: summed all the same; sums past it
#              take no more of max_statements than the samples do
#   errors     an undefined location, a sample of too many values: the same
#              error at the same byte as the target that reads every sample
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use ProtoBytes qw(varint fv fl);
use RawFile qw(slurp_raw spew_raw);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge;

my $tmp = tempdir('pb33o-XXXXXX', TMPDIR => 1, CLEANUP => 1);


# strings: 1 cpu, 2 nanoseconds, 3 main.go, 4 tid, 5.. main.f1 .. main.f5
my @STR = ('', 'cpu', 'nanoseconds', 'main.go', 'tid', map {"main.f$_"} 1 .. 5);
sub fname { return "main.f$_[0]" }

# a sample: location ids (leaf first), values, thread (tid label) or undef,
# and how: packed (default), or 'unpacked' (ids one by one, values first)
sub sample {
    my (%s) = @_;
    my $locs = ($s{how} // '') eq 'unpacked' ? join('', map { fv(1, $_) } @{ $s{ids} })
        : fl(1, join '', map { varint($_) } @{ $s{ids} });
    my $vals = fl(2, join '', map { varint($_) } @{ $s{v} });
    my $lab = defined $s{tid} ? fl(3, fv(1, 4) . fv(3, $s{tid})) : '';
    return ($s{how} // '') eq 'unpacked' ? $vals . $locs . $lab : $locs . $vals . $lab;
}

# the profile: the samples first (as Go writes them), then locations 1..5
# (one line each: main.fN), functions, strings; returns its bytes and the
# byte offset of each sample's payload
sub profile {
    my (@samples) = @_;
    my $p = fl(1, fv(1, 1) . fv(2, 2));
    my @at;
    for my $s (@samples) {
        $p .= varint(2 * 8 + 2) . varint(length $s);
        push @at, length $p;
        $p .= $s;
    }
    $p .= fl(4, fv(1, $_) . fl(4, fv(1, $_) . fv(2, 10 + $_))) for 1 .. 5;
    $p .= fl(5, fv(1, $_) . fv(2, 4 + $_) . fv(4, 3) . fv(5, 1)) for 1 .. 5;
    $p .= fl(6, $_) for @STR;
    return ($p . fl(11, fv(1, 1) . fv(2, 2)) . fv(12, 10000000), \@at);
}

my $n = 0;
sub convert {
    my ($bytes, @args) = @_;
    my $in = "$tmp/in" . ++$n . '.pb';
    spew_raw($in, $bytes);
    my $out = "$tmp/out$n";
    my $ok = eval { Devel::ProfileBridge::convert(in => $in, out => $out, @args); 1 };
    return $ok ? (slurp_raw($out), '', $in) : (undef, "$@", $in);
}

# collapsed lines as a hash: "tid:T;root;...;leaf" => weight
sub folded {
    my ($text) = @_;
    my %h;
    for (split /\n/, $text) {
        my ($k, $w) = /\A(.*) (\d+)\z/ or return { bad => $_ };
        $h{$k} += $w;
    }
    return \%h;
}

# the expected lines, from the samples as written: weight > 0 only
sub expect {
    my (@s) = @_;
    my %h;
    for my $s (@s) {
        next unless $s->{v}[-1];
        my $k = join ';', 'tid:' . ($s->{tid} // 'main'), map { fname($_) } reverse @{ $s->{ids} };
        $h{$k} += $s->{v}[-1];
    }
    return \%h;
}

subtest 'sums: repeated stacks, unpacked ids, threads' => sub {
    my @s = ({ ids => [ 1, 2 ], v => [10] }, { ids => [ 3, 2 ], v => [7], tid => 5 }, { ids => [ 1, 2 ], v => [5] },
        { ids => [ 1, 2 ], v => [5], how => 'unpacked' }, { ids => [4], v => [3] }, { ids => [ 3, 2 ], v => [1], tid => 5 },
        { ids => [ 5, 4, 3, 2, 1 ], v => [2] }, map { { ids => [ $_ % 5 + 1, 2 ], v => [$_] } } 1 .. 40);
    my ($p) = profile(map { sample(%$_) } @s);
    my ($out, $err) = convert($p, to => 'collapsed');
    is($err, '', 'collapsed: read');
    is_deeply(folded($out // ''), expect(@s), 'collapsed: each stack once, its weights summed, per thread');
};

subtest 'order: a stack whose first sample weighs 0' => sub {
    # pass order: main.f3 is first seen with weight 0; main.f1, main.f2 come first
    my @s = ({ ids => [ 3, 4 ], v => [0] }, { ids => [ 1, 2 ], v => [10] }, { ids => [ 3, 4 ], v => [7] });
    my ($p) = profile(map { sample(%$_) } @s);
    my ($out, $err) = convert($p, to => 'speedscope', time_order => 0);
    is($err, '', 'speedscope (summed): read');
    my $doc = eval { JSON::PP->new->decode($out // '') } || {};
    my @names = map { $_->{name} } @{ $doc->{shared}{frames} || [] };
    # the frames in order of their first sample of weight > 0, leaf first
    my (@want, %seen);
    for my $s (@s) {
        next unless $s->{v}[-1];
        push @want, grep { !$seen{$_}++ } map { fname($_) } @{ $s->{ids} };
    }
    is_deeply(\@names, \@want, 'the frames in the order of the first samples that weigh') or diag explain \@names;
    ($out, $err) = convert($p, to => 'collapsed');
    is_deeply(folded($out // ''), expect(@s), 'collapsed: the stacks summed');
};

subtest 'split: a value past INT32_MAX ns' => sub {
    my @s = ({ ids => [ 1, 2 ], v => [3_000_000_000] }, { ids => [ 1, 2 ], v => [5] }, { ids => [2], v => [1] });
    my ($p) = profile(map { sample(%$_) } @s);
    my ($out, $err) = convert($p, to => 'collapsed');
    is($err, '', 'collapsed: read');
    is_deeply(folded($out // ''), expect(@s), 'collapsed: the weights summed');
    # ten samples of 2 s each (none splits) sum to 20 s, which would split
    # into 10: no more of max_statements is taken than when each is read
    @s = map { { ids => [ 1, 2 ], v => [2_000_000_000] } } 1 .. 10;
    ($p) = profile(map { sample(%$_) } @s);
    ($out, $err) = convert($p, to => 'collapsed', max_statements => 5);
    is($err, '', 'collapsed, max_statements => 5: read');
    is_deeply(folded($out // ''), expect(@s), '... 20 s on one stack');
};

subtest 'errors: at the byte of the first sample that has one, as when every sample is read' => sub {
    my @s = ({ ids => [ 1, 2 ], v => [10] }, { ids => [ 3, 9 ], v => [4] }, { ids => [ 1, 2 ], v => [10] },
        { ids => [ 3, 9 ], v => [4] });
    my ($p, $at) = profile(map { sample(%$_) } @s);
    for my $to (qw(collapsed nytprof)) {
        my (undef, $err, $in) = convert($p, to => $to);
        like($err, qr/\Approf: corrupt: a sample names location 9, which the profile does not define at byte $at->[1] of \Q$in\E/,
            "$to: the undefined location, at the byte of its first sample ($at->[1])");
    }
    @s = ({ ids => [ 1, 2 ], v => [10] }, { ids => [ 1, 2 ], v => [10] }, { ids => [4], v => [ 1, 2 ] });
    ($p, $at) = profile(map { sample(%$_) } @s);
    for my $to (qw(collapsed nytprof)) {
        my (undef, $err, $in) = convert($p, to => $to);
        like($err, qr/\Approf: corrupt: a sample has 2 values for the profile's 1 sample types at byte $at->[2] of \Q$in\E/,
            "$to: a sample of two values, at its byte ($at->[2])");
    }
};

done_testing;
