#!perl
# EasyProfiler captures to collapsed stacks (flamegraph.pl input): per thread,
# one line per distinct block stack (outermost first), weighted by the
# exclusive (self) time in nanoseconds of the blocks on exactly that stack.
# Checked against the real reader's numbers (t/data/easyprofiler/*.truth.json,
# from EasyProfiler's fillTreesFromFile): per thread and per block name, the
# collapsed weight of the stacks a block ends equals its self_ns, and the
# thread's total equals the sum of its blocks' self_ns.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use RawFile qw(slurp_raw);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data/easyprofiler";
my @files = grep { -f "$_.truth.json" } glob("$d/*.prof");
plan skip_all => 'no EasyProfiler captures' unless @files;
my $tmp = tempdir('pb51-XXXXXX', TMPDIR => 1, CLEANUP => 1);

for my $f (@files) {
    (my $name = $f) =~ s{.*/}{};
    my $truth = JSON::PP->new->decode(slurp_raw("$f.truth.json"));
    my $out = "$tmp/$name.folded";
    ok(eval { Devel::ProfileBridge::convert(in => $f, out => $out, to => 'collapsed'); 1 }, "$name: converts")
        or do { diag $@; next };
    my (%leaf, %total);    # tid => { leaf sub => ns }
    for my $line (split /\n/, slurp_raw($out)) {
        my ($stack, $ns) = $line =~ /\A(.*) (\d+)\z/ or next;
        my ($tid, @subs) = split /;/, $stack;
        $tid =~ s/\Atid://;
        $leaf{$tid}{ $subs[-1] } += $ns;
        $total{$tid} += $ns;
    }
    for my $th (@{ $truth->{threads} }) {
        my $tid = $th->{thread_id};
        my %want = map { ($_ => $th->{by_name}{$_}{self_ns}) }
            grep { ($th->{by_name}{$_}{type} // 'block') eq 'block' && $th->{by_name}{$_}{self_ns} } keys %{ $th->{by_name} };
        my $sum = 0;
        $sum += $_ for values %want;
        is($total{$tid} // 0, $sum, "$name thread $tid ($th->{name}): total $sum ns = the sum of its blocks' self time");
        my %got;
        for my $sub (keys %{ $leaf{$tid} || {} }) {
            my ($block) = grep { $sub eq $_ || $sub =~ /::\Q$_\E\z/ } sort { length $b <=> length $a } keys %want;
            $got{ $block // "?$sub" } += $leaf{$tid}{$sub};
        }
        is_deeply(\%got, \%want, "$name thread $tid: per block, the stacks it ends weigh its self time ("
            . scalar(keys %want) . ' blocks)');
    }
}

done_testing();
