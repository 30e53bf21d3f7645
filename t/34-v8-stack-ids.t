#!perl
# V8 input into the fold names each sample's stack by its node
# (sample_stack_id, c/samples.h): the fold keys its kept stacks on the node
# and takes a repeated node as the same stack without comparing its frames.
# Here a profile whose samples repeat nodes in runs and out of them, and two
# sibling nodes with the same callFrame (two node ids, one stack of frames),
# checked against the few lines of independent code below: per sub, its
# calls (a sample's frames from the first it does not share with the
# previous sample's, outermost first, each a call) and its exclusive and
# inclusive µs (each sample lasts to the next one's time; the last to
# endTime), from for_chunks' SUB_CALLERS.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(yajl);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();

my $tmp = tempdir('pb34s-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $url = 'file:///t/app.js';
sub fr { my ($name, $line) = @_; { functionName => $name, url => $line < 0 ? '' : $url, lineNumber => $line,
    columnNumber => 0, scriptId => '1' } }
# 1 (root) > 2 main > {3 a > 6 c, 4 b, 5 a (3's callFrame again), 8 d > 9 a}; 1 > 7 (program)
my @nodes = (
    { id => 1, callFrame => fr('(root)', -1), children => [2, 7] },
    { id => 2, callFrame => fr('main', 0), children => [3, 4, 5, 8] },
    { id => 3, callFrame => fr('a', 10), children => [6] },
    { id => 4, callFrame => fr('b', 20), children => [] },
    { id => 5, callFrame => fr('a', 10), children => [] },
    { id => 6, callFrame => fr('c', 30), children => [] },
    { id => 7, callFrame => fr('(program)', -1), children => [] },
    { id => 8, callFrame => fr('d', 40), children => [9] },
    { id => 9, callFrame => fr('a', 10), children => [] },
);
my @samples = (3, 3, 4, 3, 5, 5, 3, 6, 6, 4, 5, 7, 3, 9, 5, 9, 9, 6, 5, 3);
my @deltas = map { 100 + 10 * $_ } 0 .. $#samples;
my ($start, $end) = (1_000_000, 1_000_000 + 5000);
$_ += 0 for @deltas;
my $f = "$tmp/ids.cpuprofile";
{
    open my $fh, '>:raw', $f or die "$f: $!";
    print $fh JSON::PP->new->canonical->encode({ nodes => \@nodes, startTime => $start, endTime => $end,
        samples => \@samples, timeDeltas => \@deltas });
    close $fh or die;
}

# the truth: each sample's stack (outermost first, without (root)), its µs
my %by_id = map { $_->{id} => $_ } @nodes;
my %parent;
for my $n (@nodes) { $parent{$_} = $n->{id} for @{ $n->{children} } }
sub stack_of {
    my ($id, @s) = @_;
    for (; defined $id; $id = $parent{$id}) {
        my $name = $by_id{$id}{callFrame}{functionName};
        unshift @s, $name unless $name eq '(root)';
    }
    return @s;
}
my (@t, $ts);
$ts = $start;
push @t, $ts += $_ for @deltas;
my (%calls, %excl, %incl);
my @prev;
for my $i (0 .. $#samples) {
    my $w = ($i < $#samples ? $t[$i + 1] : $end) - $t[$i];
    next if $w <= 0;
    my @s = stack_of($samples[$i]);
    my $m = 0;
    $m++ while $m < @s && $m < @prev && $s[$m] eq $prev[$m];
    $calls{$_}++ for @s[$m .. $#s];
    $excl{ $s[-1] } += $w;
    my %seen;
    $incl{$_} += $w for grep { !$seen{$_}++ } @s;
    @prev = @s;
}

my (%got_calls, %got_excl, %got_incl);
Devel::ProfileBridge::for_chunks(sub {
    my $tag = shift;
    # SUB_CALLERS fid line count incl excl ucpu scpu called caller
    return unless $tag eq 'SUB_CALLERS';
    (my $sub = $_[7]) =~ s/^app:://;
    return if $sub =~ /\(/; # (program): a synthetic frame
    $got_calls{$sub} += $_[2];
    $got_excl{$sub} += $_[4] * 1e6;
    $got_incl{$sub} += $_[3] * 1e6;
}, filename => $f, quiet => 1);
delete @calls{ grep /^\(/, keys %calls };
delete @excl{ grep /^\(/, keys %excl };
delete @incl{ grep /^\(/, keys %incl };
is_deeply(\%got_calls, \%calls, 'calls per sub: a stack repeated by node, by another node and after others')
    or diag explain \%got_calls, \%calls;
is_deeply({ map { $_ => sprintf '%.3f', $got_excl{$_} } grep { $got_excl{$_} } keys %got_excl },
    { map { $_ => sprintf '%.3f', $excl{$_} } keys %excl }, 'exclusive µs per sub');
is_deeply({ map { $_ => sprintf '%.3f', $got_incl{$_} } keys %got_incl },
    { map { $_ => sprintf '%.3f', $incl{$_} } keys %incl }, 'inclusive µs per sub');
done_testing;
