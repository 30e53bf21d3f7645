#!perl
# Issue 26 point 4: merge and for_chunks(files => ...) read every
# StatProfiler trace file once, however it is given: a run's first file plus
# its members (what `profbridge merge trace.out.*` hands over), a directory
# plus its files, one file by two paths.  An input that shares only some of
# its trace files with another is refused.  Other formats are not trace
# files: the same profile given twice counts twice (t/94).  The fork corpus:
# a parent with three rotated files and two children; the real reader's
# per-file total weights (the .truth.json beside each) sum to 1,153.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use Needs qw(snappy);
use RawFile qw(slurp_raw);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data/statprofiler";
my @files = sort grep { !/\.json[l]?\z/ } glob("$d/fork.out.*");
plan skip_all => 'no fork run in t/data' unless @files == 5;
my $tmp = tempdir('pb98-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $run = "$tmp/run";
mkdir $run or die;
copy($_, $run) or die "copy $_: $!" for @files;
my @copies = sort glob("$run/fork.out.*");
my ($first) = grep { /000028f9[0-9a-f]{40}\.00000001\z/ } @copies;    # the root's first file
my ($child) = grep { /000028fb[0-9a-f]{40}\.00000001\z/ } @copies;
my ($child2) = grep { /000028fd[0-9a-f]{40}\.00000001\z/ } @copies;

my $json = JSON::PP->new;
my (%w, $sum);
for my $f (@files) {
    my $t = $json->decode(slurp_raw("$f.truth.json"));
    (my $base = $f) =~ s{.*/}{};
    $w{$base} = $t->{total_weight};
    $sum += $t->{total_weight};
}
is($sum, 1153, 'the real reader counts 1,153 samples in the fork run');
my $iv_ns = 1000 * 1000;    # 1000 us, every file of the run
(my $child_base = $child) =~ s{.*/}{};

sub merged {    # total collapsed weight (ns) of a merge of @in
    my (@in) = @_;
    my $out = "$tmp/m.folded";
    unlink $out;
    Devel::ProfileBridge::merge(in => \@in, out => $out, to => 'collapsed');
    my $s = 0;
    open my $fh, '<', $out or die "$out: $!";
    while (<$fh>) { $s += (split)[-1] }
    return $s;
}

is(merged(@copies), $sum * $iv_ns, 'all five trace files (the shell glob): 1,153 samples, each once');
is(merged(reverse @copies), $sum * $iv_ns, '... in any order (members before the first file)');
is(merged($run, @copies), $sum * $iv_ns, 'the directory plus its files: each once');
is(merged($first, $run), $sum * $iv_ns, "the run's first file plus its directory: once");
is(merged($first, "$run/./" . ($first =~ s{.*/}{}r)), $sum * $iv_ns, 'the first file by two paths: once');
link $child, "$tmp/hardlink" or die "link: $!";
is(merged($child, "$tmp/hardlink"), $w{$child_base} * $iv_ns, "a child's trace and a hard link to it: once");
is(merged($child, $child), $w{$child_base} * $iv_ns, 'the same trace twice: once');
{
    my $out = "$tmp/j.folded";
    Devel::ProfileBridge::merge(in => [ @copies ], out => $out, to => 'collapsed', jobs => 2);
    my $s = 0;
    open my $fh, '<', $out or die;
    while (<$fh>) { $s += (split)[-1] }
    is($s, $sum * $iv_ns, 'with jobs => 2: the same');
}

# a partial overlap: two directories each holding the parent's three files
# and one of the children; neither covers the other
for my $k ([ a => $child ], [ b => $child2 ]) {
    mkdir "$tmp/$k->[0]" or die;
    link $_, "$tmp/$k->[0]/" . (s{.*/}{}r) or die "link: $!" for (grep { /000028f9/ } @copies), $k->[1];
}
my $out = "$tmp/p.folded";
ok(!eval { Devel::ProfileBridge::merge(in => [ "$tmp/a", "$tmp/b" ], out => $out, to => 'collapsed'); 1 },
    'two runs sharing some trace files but not all: refused');
like($@, qr{^merge: usage: \Q$tmp\E/[ab]: shares 3 of its 4 StatProfiler trace files with another input},
    '... a usage error naming the input and the shared count');
ok(!-e $out, '... and nothing written');

# for_chunks(files => ...): a file given twice (by two paths) is read once;
# two different files of the same trace and ordinal are still refused
sub ticks {
    my $t = 0;
    Devel::ProfileBridge::for_chunks(sub { $t += $_[1] if $_[0] eq 'TIME_LINE' }, files => [@_]);
    return $t;
}
is(ticks(@copies, $first, "$tmp/hardlink"), $sum * 1000, 'files => [ ..., the same files again ]: each once');
{
    my $other = "$tmp/copy-of-child";
    copy($child, $other) or die;
    ok(!eval { ticks($child, $other); 1 }, 'files => two different files of one trace and ordinal: refused');
    like($@, qr/ordinal 1 is given twice/, '... as before');
}

done_testing;
