#!perl
# Every StatProfiler trace in t/data: the chunk stream's totals equal what the
# real Devel::StatProfiler::Reader counts (its samples, dumped to
# *.samples.jsonl beside each trace), samples that caught no Perl frame
# included: total weight (TIME_LINE ticks / interval), and per sub the weight
# of the samples it is the innermost frame of (SUB_CALLERS exclusive time);
# a frameless sample's weight goes to the pseudo-sub main::(no frame).  The
# conversions carry the same totals: nytprof.out and StatProfiler records
# re-read, collapsed stacks.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data/statprofiler";
my @traces = grep { !/\.(?:jsonl|json)\z/ && -f } glob("$d/*.out.*");
plan skip_all => 'no StatProfiler traces' unless @traces;
my $tmp = tempdir('pb62-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->utf8;

sub stream_totals {
    my ($file) = @_;
    my @in = ref $file ? (files => $file) : (filename => $file);
    my ($ticks, %excl, $interval) = (0);
    Devel::ProfileBridge::for_chunks(sub {
        my $tag = shift;
        $ticks += $_[0] if $tag eq 'TIME_LINE';
        $interval = $_[1] if $tag eq 'ATTRIBUTE' && $_[0] eq 'sample_interval_us';
        $excl{ $_[7] } += $_[4] if $tag eq 'SUB_CALLERS';
    }, @in, quiet => 1);
    return ($ticks, \%excl, $interval);
}

my $frameless_seen = 0;
for my $t (@traces) {
    (my $name = $t) =~ s{.*/}{};
    $name =~ s/\..*//;
    my $truth = $json->decode(slurp_raw("$t.truth.json"));
    my ($total, %leaf, $frameless) = (0);
    for my $line (split /\n/, slurp_raw("$t.samples.jsonl")) {
        my ($w, undef, $frames) = @{ $json->decode($line) };
        $total += $w;
        if (!@$frames) {
            $leaf{'main::(no frame)'} += $w;
            $frameless++;
            next;
        }
        my ($sub) = @{ $frames->[0] };    # [full sub name ("" for main/eval code), file, line, kind, first line]
        $leaf{$sub} += $w if length $sub;
    }
    $frameless_seen += $frameless // 0;
    is($total, $truth->{total_weight}, "$name: the real reader's samples add up to its total weight $total");
    my ($ticks, $excl, $iv) = stream_totals($t);
    is($ticks, $total * $iv, "$name: TIME_LINE ticks = total weight x interval"
        . ($frameless ? " ($frameless frameless sample" . ($frameless > 1 ? 's' : '') . ' counted)' : ''));
    my %ours = map { ($_ => sprintf('%.0f', $excl->{$_} * 1e6 / $iv)) } grep { $excl->{$_} > 0 } keys %$excl;
    my %want = map { ($_ => $leaf{$_}) } grep { $leaf{$_} > 0 } keys %leaf;
    is_deeply(\%ours, \%want, "$name: per-sub exclusive weight = the real reader's (" . scalar(keys %want) . ' subs)');

    # conversions keep the total.  The first file of a root process with more
    # files beside it stands for its whole run (fork genealogy): t/64
    my ($tmpl) = $t =~ /\A(.*)\.[0-9a-f]{48}\.00000001\z/;
    my @run = $tmpl && $truth->{genealogy}{parent_id} =~ /\A0+\z/ ? grep { !/\.json[l]?\z/ } glob("$tmpl.*") : ();
    if (@run > 1) {
        $ticks = 0;
        $ticks += $json->decode(slurp_raw("$_.truth.json"))->{total_weight} * $iv for @run;
        $total = $ticks / $iv;
    }
    my $out = "$tmp/$name.nytprof";
    Devel::ProfileBridge::convert(in => $t, out => $out);
    my ($t2) = stream_totals($out);
    is($t2 * 1, $ticks, "$name: nytprof.out re-read: the same ticks");
    Devel::ProfileBridge::convert(in => $t, out => "$tmp/$name.folded", to => 'collapsed');
    my $c = 0;
    $c += $_ for slurp_raw("$tmp/$name.folded") =~ /(\d+)$/mg;
    is($c, $total, "$name: collapsed stacks add up to the total weight");
    my @sp = Devel::ProfileBridge::convert(in => $t, out => "$tmp/$name.sp", to => 'statprofiler');
    my ($t3) = stream_totals(\@sp);
    is($t3, $ticks, "$name: StatProfiler records re-read: the same ticks");
}
ok($frameless_seen >= 1, "the traces hold $frameless_seen frameless sample(s)");

done_testing();
