#!perl
# --to pstats: every profile of t/data (tracing and sampled inputs) converted
# to a pstats file, loaded by Python's own pstats.Stats (Debian's python3) in
# a few lines of Python that print what it loaded: per function cc, nc, tt,
# ct and its callers, and the Stats object's totals.  Each number must equal
# ours, computed here from for_chunks (t/lib/CallGraph.pm), not from the
# file: a tracing input's calls, primitive calls (less the calls from
# itself), exclusive and inclusive times and per-caller (nc, cc, tt, ct); a
# sampled input's CPython estimates (replay --pstats: direct and cumulative
# samples, x the interval; per caller the sample count).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use CallGraph qw(graph_corpus our_graph run_of pstats_load check_pstats);
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();

# Debian's python3 first (the system's), else the first on PATH
my $py = (grep { -x $_ } '/usr/bin/python3', map { "$_/python3" } split /:/, $ENV{PATH} // '')[0];
plan skip_all => 'python3 not found' unless $py;
chomp(my $have = `$py -c "import pstats, marshal; print('ok')" 2>/dev/null` // '');
plan skip_all => "python3 has no pstats" unless $have eq 'ok';

my $tmp = tempdir('pb41-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = "$FindBin::Bin/data";
my @inputs = graph_corpus($d);
my %formats = map { (Devel::ProfileBridge::detect_format($_)->{format} => 1) } @inputs;
ok(keys %formats >= 8, 'inputs of every format: ' . join(',', sort keys %formats));

my (%graph, @outs);
for my $in (@inputs) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/" . ($label =~ s{/}{_}gr) . '.prof';
    my $g = our_graph($in, run_of($in));
    my $ok = eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $in, to => 'pstats', out => $out); 1 };
    if (!%{ $g->{subs} }) {    # nothing to load: pstats.Stats refuses an empty dict
        like($@, qr/pstats: unsupported: .*the profile has no subs/, "$label: no subs, refused");
        ok(!-e $out, "$label: nothing written");
        next;
    }
    ok($ok, "$label: converted") or diag($@);
    next unless $ok;
    $graph{$out} = [ $label, $g ];
    push @outs, $out;
}

my ($rc, $loaded) = pstats_load([ $py ], @outs);
is($rc, 0, 'python3 loaded every file');
check_pstats($graph{$_}[0], $graph{$_}[1], $loaded->{$_}) for @outs;

done_testing;
