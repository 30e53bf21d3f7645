#!perl
# V8 .cpuprofile input (issue 29): real profiles made here with
# node --cpu-prof (t/data/v8/*.js), against the truth read from the JSON
# itself by the few lines of independent code below: each sample's stack
# from the node tree, its weight the time to the next sample (timeDeltas[i+1]
# µs, negative counted 0; the last sample to endTime), per function the flat
# (innermost) and cumulative (anywhere in the stack, once per sample) sums.
# Checked: the collapsed output's stacks, for_chunks' SUB_CALLERS (exclusive
# and inclusive time per sub) and TIME_LINE total, go tool pprof -raw of our
# pprof output against our collapsed output, nytprofhtml with every name
# visible, merge with a Tachyon file, keys in any order and a key across the
# decoder's 64 KB blocks, and bad input.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(yajl);
use Stacks qw(slurp folded_weights go_for_pprof first_differences refused_texts);
use V8Truth qw(truth);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb34-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @files = glob("$d/v8/*.cpuprofile");
plan skip_all => 'no .cpuprofile files' unless @files;

sub spew { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die }

# per-function flat and cumulative µs of a { "a;b;c" => ns } table
sub flat_cum {
    my ($w) = @_;
    my (%self, %cum);
    while (my ($st, $ns) = each %$w) {
        my @f = split /;/, $st;
        $self{ $f[-1] } += $ns / 1000;
        my %seen;
        $cum{$_} += $ns / 1000 for grep { !$seen{$_}++ } @f;
    }
    return (\%self, \%cum);
}

sub same_table {
    my ($got, $want, $what, $tol) = @_;
    my @bad = grep { abs(($got->{$_} // 0) - ($want->{$_} // 0)) > ($tol // 0) } sort keys %{ { %$got, %$want } };
    ok(!@bad, $what) or diag join "\n", map { "$_: got " . ($got->{$_} // 'none') . ', want ' . ($want->{$_} // 'none') }
        @bad[0 .. ($#bad < 5 ? $#bad : 5)];
}

sub collapsed_of {
    my ($in) = @_;
    my $out = "$tmp/c.folded";
    unlink $out;
    Devel::ProfileBridge::convert(in => $in, out => $out, to => 'collapsed');
    return folded_weights($out);
}

my $go = go_for_pprof($tmp);
for my $f (@files) {
    (my $label = $f) =~ s{.*/}{};
    my $t = truth($f);
    # --to collapsed: the stacks themselves, then the per-function sums
    my $c = collapsed_of($f);
    same_table($c, $t->{stacks}, "$label: collapsed stacks and their ns are the JSON's samples x time deltas");
    my ($self, $cum) = flat_cum($c);
    same_table($self, $t->{self}[0], "$label: flat µs per function (collapsed)");
    same_table($cum, $t->{cum}[0], "$label: cumulative µs per function (collapsed)");
    my $n = 0;
    $n += $_ for values %$c;
    is($n, $t->{total} * 1000, "$label: total $t->{total} µs");

    # for_chunks: SUB_CALLERS exclusive (flat) and inclusive (cumulative) s per sub, TIME_LINE ticks (ns)
    my (%excl, %incl, $ticks, %a);
    Devel::ProfileBridge::for_chunks(sub {
        my $tag = shift;
        # SUB_CALLERS fid line count incl excl ucpu scpu called caller (NYTProf's reader)
        if ($tag eq 'SUB_CALLERS') { $excl{ $_[7] } += $_[4] * 1e6; $incl{ $_[7] } += $_[3] * 1e6 }
        elsif ($tag eq 'TIME_LINE') { $ticks += $_[0] }
        elsif ($tag eq 'ATTRIBUTE') { $a{ $_[0] } = $_[1] }
    }, filename => $f, quiet => 1);
    is($a{ticks_per_sec}, 1e9, "$label: ticks are ns");
    is($ticks, $t->{total} * 1000, "$label: TIME_LINE ticks add up to the total");
    same_table(\%excl, $t->{self}[1], "$label: flat µs per sub (for_chunks SUB_CALLERS exclusive)", 1e-3);
    same_table(\%incl, $t->{cum}[1], "$label: cumulative µs per sub (for_chunks SUB_CALLERS inclusive)", 1e-3);

    # --to pprof read back by go tool pprof -raw equals our collapsed output
    SKIP: {
        skip 'no go tool pprof', 1 unless $go;
        my $pb = "$tmp/p.pb.gz";
        Devel::ProfileBridge::convert(in => $f, out => $pb, to => 'pprof');
        my $raw = `"$go" tool pprof -raw "$pb" 2>&1`;
        my ($samples, $locs) = $raw =~ /^Samples:\n[^\n]*\n(.*?)^Locations\n(.*?)(?:^Mappings|\z)/ms;
        my (%fn, %w);
        $fn{$1} = $2 while ($locs // '') =~ /^\s+(\d+): 0x0 M=\d+ (.*?) \S*:-?\d+ s=/mg;
        while (($samples // '') =~ /^\s+(\d+): ([\d ]+?)\s*\n/mg) {
            my ($v, @ids) = ($1, split ' ', $2);
            $w{ join ';', reverse map { $fn{$_} // "?$_" } @ids } += $v;
        }
        same_table(\%w, $c, "$label: go tool pprof -raw of our pprof output equals our collapsed output")
            or diag substr($raw, 0, 600);
    }
}

# keys in any order, white space, and the samples/timeDeltas keys across the
# decoder's 64 KB blocks (the cursors then parse from the document's start)
{
    my $f = "$d/v8/v8_recursion.cpuprofile";
    my $want = collapsed_of($f);
    my $j = JSON::PP->new->canonical;
    my $p = $j->decode(slurp($f));
    my $body = join ',', map { qq("$_":) . $j->encode($p->{$_}) } qw(samples endTime timeDeltas startTime nodes);
    spew("$tmp/order.cpuprofile", "{$body}");
    same_table(collapsed_of("$tmp/order.cpuprofile"), $want, 'samples and timeDeltas before the nodes: the same stacks');
    for my $key (qw(samples timeDeltas)) {
        my $head = qq({"startTime":$p->{startTime},"pad":");
        my $at = index($body, qq("$key"));
        for my $cut (2, length($key) + 2) {    # the block boundary inside the key, or just after it
            my $pad = 65536 - length($head) - 2 - $at - $cut;
            my $text = $head . ('x' x $pad) . '",' . $body . '}';
            spew("$tmp/pad.cpuprofile", $text);
            same_table(collapsed_of("$tmp/pad.cpuprofile"), $want, "\"$key\" split by a block boundary (+$cut)");
        }
    }
    my $v = $j->decode(slurp($f));
    $_->{parent} = undef for @{ $v->{nodes} };
    for my $n (@{ $v->{nodes} }) {    # DevTools' other form: each node names its parent
        $_->{parent} = $n->{id} for grep { $_ } map { my $c = $_; (grep { $_->{id} == $c } @{ $v->{nodes} })[0] }
            @{ delete $n->{children} || [] };
    }
    delete $_->{parent} for grep { !defined $_->{parent} } @{ $v->{nodes} };
    spew("$tmp/parent.cpuprofile", $j->encode($v));
    same_table(collapsed_of("$tmp/parent.cpuprofile"), $want, 'nodes that name their parent: the same stacks');
}

# detection is by content, not by name
{
    my $f = "$d/v8/v8_mixed.cpuprofile";
    spew("$tmp/profile.json", slurp($f));
    is(Devel::ProfileBridge::detect_format("$tmp/profile.json")->{format}, 'v8', 'a .cpuprofile named .json is V8');
    spew("$tmp/not.cpuprofile", '{"a": 1, "b": [1, 2]}');
    ok(!eval { Devel::ProfileBridge::detect_format("$tmp/not.cpuprofile")->{format} }, 'a JSON object that is no profile named .cpuprofile is not V8');
}

# merge with a Tachyon file: the sum of the parts
{
    my $v8 = "$d/v8/v8_mixed.cpuprofile";
    my $tach = "$d/tachyon/cpu_recursion.bin";
    SKIP: {
        skip 'no Tachyon test file', 2 unless -f $tach;
        my $sum = sub { my $n = 0; $n += $_ for values %{ $_[0] }; $n };
        my $one = $sum->(collapsed_of($v8));
        my %ta;
        &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $ta{ $_[1] } //= $_[2] } }, filename => $tach);
        my $two = $sum->(collapsed_of($tach)) * $ta{sample_interval_us} * 1000;
        ok(eval { Devel::ProfileBridge::merge(in => [ $v8, $tach ], out => "$tmp/m.folded", to => 'collapsed'); 1 },
            'merge: a .cpuprofile and a Tachyon file') or diag $@;
        is($sum->(folded_weights("$tmp/m.folded")), $one + $two, "merged: $one + $two ns");
    }
}

# losses: what no target carries
{
    my $l = Devel::ProfileBridge::losses("$d/v8/v8_mixed.cpuprofile", to => 'collapsed');
    my ($col) = grep { $_->{what} =~ /column/ } @$l;
    my $p = JSON::PP->new->decode(slurp("$d/v8/v8_mixed.cpuprofile"));
    is($col && $col->{count}, scalar(grep { $_->{callFrame}{columnNumber} >= 0 } @{ $p->{nodes} }),
        'losses: the frames whose column number is dropped');
}

# bad input: "v8: <class>: <what> at byte N of F"
{
    my $good = slurp("$d/v8/v8_mixed.cpuprofile");
    my @cases = (
        [ 'truncated', substr($good, 0, length($good) - 100), qr/^v8: truncated: .* at byte \d+ of \S+truncated/ ],
        [ 'count', do { (my $x = $good) =~ s/"timeDeltas":\[/"timeDeltas":[1,/; $x },
          qr/^v8: corrupt: samples has \d+ entries but timeDeltas \d+/ ],
        [ 'unknown', do { (my $x = $good) =~ s/"samples":\[/"samples":[999999,/; $x =~ s/"timeDeltas":\[/"timeDeltas":[1,/; $x },
          qr/^v8: corrupt: a sample names node 999999, which no node has at byte \d+ of / ],
        [ 'syntax', do { (my $x = $good) =~ s/"hitCount":/"hitCount"::/; $x }, qr/^v8: corrupt: bad JSON: .* at byte \d+ of / ],
        [ 'cycle', do { (my $x = $good) =~ s/"children":\[2,/"children":[1,2,/; $x }, qr/^v8: corrupt: node 1 has two parents|cycle/ ],
        [ 'type', do { (my $x = $good) =~ s/"samples":\[/"samples":["x",/; $x }, qr/^v8: corrupt: an element of samples is not a number at byte \d+/ ],
        [ 'dupid', do { (my $x = $good) =~ s/"id":3,/"id":2,/; $x }, qr/^v8: corrupt: two nodes have the id 2/ ],
    );
    refused_texts(undef, $tmp, map { [ $_->[1], $_->[2], name => $_->[0] ] } @cases);
}

# salvage: a file cut inside its timeDeltas gives the samples before the cut
{
    my $good = slurp("$d/v8/v8_mixed.cpuprofile");
    my $t = truth("$d/v8/v8_mixed.cpuprofile");
    spew("$tmp/cut.cpuprofile", substr($good, 0, length($good) - 400));
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    ok(eval { Devel::ProfileBridge::convert(in => "$tmp/cut.cpuprofile", out => "$tmp/cut.nytprof", salvage => 1); 1 },
        'salvage: a .cpuprofile cut inside timeDeltas converts') or diag $@;
    like("@w", qr/^v8: truncated: .* at byte \d+ of \S+; salvaged (\d+) samples before it/, '... with the warning');
    my $ticks = 0;
    Devel::ProfileBridge::for_chunks(sub { $ticks += $_[1] if $_[0] eq 'TIME_LINE' }, filename => "$tmp/cut.nytprof");
    ok($ticks > 0 && $ticks < $t->{total} * 1000, "... part of the time: $ticks of " . $t->{total} * 1000 . ' ns');
}

# limits: the nodes (max_frames), a stack's depth, a name's length
for my $l ([ max_frames => 5, qr/^v8: limit: more nodes than max_frames allows at byte \d+ of / ],
    [ max_stack_depth => 3, qr/^v8: limit: a sample's stack is deeper than max_stack_depth \(3\) at byte \d+ of / ],
    [ max_record_size => 4, qr/^v8: limit: a name longer than max_record_size at byte \d+ of / ]) {
    my ($k, $v, $re) = @$l;
    ok(!eval { Devel::ProfileBridge::convert(in => "$d/v8/v8_mixed.cpuprofile", out => "$tmp/lim.folded",
        to => 'collapsed', $k => $v); 1 }, "$k => $v: refused");
    like($@, $re, "... a limit error");
}

done_testing;
