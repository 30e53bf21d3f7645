#!perl
# StatProfiler's op names (one per sample) reach the pprof writer as the
# label opcode, as Tachyon's --opcodes do: read back by the real `go tool
# pprof -raw`, the weight per op name equals the real StatProfiler reader's
# (the samples.jsonl beside each trace, [weight, op, frames] per sample).
# The loss report agrees: --to pprof loses none, --to collapsed all.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;
use Needs qw(snappy);
use Stacks qw(go_for_pprof);
use JSON::PP ();
use Devel::ProfileBridge;

my $dir = "$FindBin::Bin/data/statprofiler";
my $tmp = tempdir(CLEANUP => 1);
my $go = go_for_pprof($tmp);
# the traces that are a whole run alone (no rotation, no forked child)
my @traces = grep {
    my ($tmpl) = m{([^/]+)\.[0-9a-f]{48}\.[0-9a-f]{8}\z};
    my @run = glob "$dir/$tmpl.*.????????";
    @run == 1;
} sort glob "$dir/*.out.*.00000001";
ok(@traces >= 5, scalar(@traces) . ' single-file traces');

for my $t (@traces) {
    my ($name) = $t =~ m{([^/]+?)\.out\.};
    my (%want, $total);
    open my $fh, '<', "$t.samples.jsonl" or die "$t.samples.jsonl: $!";
    while (my $l = <$fh>) {
        my ($w, $op) = @{ JSON::PP::decode_json($l) };
        $want{$op} += $w;
        $total += $w;
    }
    close $fh;
    delete $want{''}; # a sample without an op name carries no label

    my ($coll) = grep { $_->{what} =~ /^op names/ } @{ Devel::ProfileBridge::losses($t, to => 'collapsed') };
    is($coll && $coll->{count}, $total, "$name: --to collapsed loses the op names of all $total samples");
    ok(!grep({ $_->{what} =~ /^op names/ } @{ Devel::ProfileBridge::losses($t, to => 'pprof') }),
       "$name: --to pprof loses no op name");
  SKIP: {
        skip 'no go command for go tool pprof', 1 unless $go;
        my $pb = "$tmp/$name.pb.gz";
        Devel::ProfileBridge::convert(in => $t, out => $pb, to => 'pprof');
        my $raw = `"$go" tool pprof -raw "$pb" 2>/dev/null`;
        my (%got, $count);
        for (split /\n/, $raw) {
            $count = $1 if /\A\s*(\d+)\s+\d+: [\d ]+?\s*\z/;
            $got{$1} += $count if defined $count && /\A\s+.*\bopcode:\[([^\]]*)\]/;
        }
        is_deeply(\%got, \%want, "$name: weight per label opcode equals the real reader's per op name ("
                  . scalar(keys %want) . " op names)") or diag explain [\%got, \%want];
    }
}
done_testing;
