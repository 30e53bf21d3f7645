#!perl
# event => NAME in the Perl API (issue 37): callgrind's name for the column
# sample_type picks, taken by for_chunks, info, convert and merge.  Truth:
# callgrind_annotate's PROGRAM TOTALS per event for the same file
# (t/data/callgrind/rec-cache.callgrind.annotate-excl.txt, its report).
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $file = "$FindBin::Bin/data/callgrind/rec-cache.callgrind";
my $tmp = tempdir('pb46-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @warned;
local $SIG{__WARN__} = sub { push @warned, @_ };    # convert's notes (sources not found)

my $report = do { local (@ARGV, $/) = "$file.annotate-excl.txt"; <> };
my ($shown) = $report =~ /^Events shown:\s+(.*?)\s*$/m;
my @ev = split ' ', $shown;
my ($tot) = $report =~ /^(.*)PROGRAM TOTALS/m;
my @tot = map { tr/,//dr } $tot =~ /([\d,]+) \(/g;
is scalar(@tot), scalar(@ev), "callgrind_annotate's totals of @ev";
my %total;
@total{@ev} = @tot;

# the self costs for_chunks reads, summed (units: ns in the stream)
sub self_sum {
    my (%opt) = @_;
    my ($sum, %attr) = (0);
    Devel::ProfileBridge::ReadStream::for_chunks(sub {
        my ($tag, @a) = @_;
        if ($tag eq 'ATTRIBUTE') { $attr{ $a[0] } //= $a[1] }
        elsif ($tag eq 'SUB_CALLERS') { $sum += $a[4] }
    }, quiet => 1, %opt);
    return (sprintf('%.0f', $sum * 1e9), \%attr);
}

for my $e (@ev[1, 4, 8]) {
    my ($sum, $attr) = self_sum(filename => $file, event => $e);
    is $attr->{graph_event}, $e, "for_chunks(event => '$e'): ATTRIBUTE graph_event";
    is $sum, $total{$e}, "for_chunks(event => '$e'): the self costs add up to callgrind_annotate's total ($total{$e})";
    my ($info) = Devel::ProfileBridge::info($file, event => $e);
    is $info->{graph_event}, $e, "info(event => '$e') reads it";
    is $info->{graph_total}, $total{$e}, "info(event => '$e'): graph_total";
    my $out = "$tmp/$e.nytprof";
    ok eval { Devel::ProfileBridge::convert(in => $file, out => $out, event => $e); 1 }, "convert(event => '$e')"
        or diag $@;
    my ($csum) = self_sum(filename => $out);
    is $csum, $total{$e}, "convert(event => '$e'): its nytprof.out's self costs add up to $total{$e}";
    my $m = "$tmp/$e.merged.nytprof";
    ok eval { Devel::ProfileBridge::merge(in => [ $file, $file ], out => $m, event => $e); 1 }, "merge(event => '$e')"
        or diag $@;
    my ($msum) = self_sum(filename => $m);
    is $msum, 2 * $total{$e}, "merge(event => '$e') of the file twice: 2 x $total{$e}";
}

# the same as sample_type; both naming one column is fine
my ($a1) = self_sum(filename => $file, event => 'Dw', sample_type => 'Dw');
is $a1, $total{Dw}, 'event and sample_type naming one column: read';

# errors: usage, naming what fits
ok !eval { Devel::ProfileBridge::info($file, event => 'Dr', sample_type => 'Ir'); 1 }, 'event and sample_type differ: refused';
like "$@", qr/usage: info: event => 'Dr' and sample_type => 'Ir' name two columns/, '... a usage error naming both';
for my $call ([ info => sub { Devel::ProfileBridge::info($file, event => 'Nope') } ],
    [ convert => sub { Devel::ProfileBridge::convert(in => $file, out => "$tmp/x.nytprof", event => 'Nope') } ],
    [ for_chunks => sub { Devel::ProfileBridge::ReadStream::for_chunks(sub { }, filename => $file, event => 'Nope') } ]) {
    ok !eval { $call->[1]->(); 1 }, "$call->[0](event => 'Nope'): refused";
    my $e = $@;
    like "$e", qr/callgrind: usage: no event Nope in this file \(its events: \Q@{[ join ', ', @ev ]}\E\)/,
        '... a usage error naming the file\'s events';
    is ref $e && $e->{class}, 'usage', '... class usage' if ref $e && exists $e->{class};
}
ok !-e "$tmp/x.nytprof", 'nothing written';

done_testing;
