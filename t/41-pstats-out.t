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

# pstats -> pstats keeps every number: each exact pstats file of t/data
# (cProfile's, the profile module's; a sampled replay's is CPython's
# estimate, above) and its conversion, both loaded by pstats.Stats: per
# function cc, nc, tt, ct and every caller's numbers equal.  The one thing
# not kept: the profile module's code-object name of its top entry, which
# the reader names from its co_name (compared so).
my $ROUND_TRIP = <<'PY';
import pstats, sys, math
def load(path):
    st = pstats.Stats(path).stats
    key = lambda k: k if isinstance(k[2], str) else (k[0], k[1], k[2].co_name)
    return {key(k): (v[:4], {key(c): cv for c, cv in v[4].items()}) for k, v in st.items()}
def same(a, b):
    if isinstance(a, tuple) != isinstance(b, tuple):
        return False
    if not isinstance(a, tuple):
        return a == b
    return len(a) == len(b) and a[:2] == b[:2] and all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12) for x, y in zip(a[2:], b[2:]))
a, b = load(sys.argv[1]), load(sys.argv[2])
bad = ["missing %r" % (k,) for k in a if k not in b] + ["extra %r" % (k,) for k in b if k not in a]
for k in a:
    if k not in b:
        continue
    (na, ca), (nb, cb) = a[k], b[k]
    if not same(na, nb):
        bad.append("%r: %r want %r" % (k, nb, na))
    if set(ca) != set(cb):
        bad.append("%r: callers %r want %r" % (k, sorted(cb), sorted(ca)))
    bad += ["%r <- %r: %r want %r" % (k, c, cb[c], ca[c]) for c in ca if c in cb and not same(ca[c], cb[c])]
print("%d functions" % len(a))
print("\n".join(bad[:10]))
PY
for my $in (grep { m{/pstats/} } @inputs) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    open my $fh, '<:raw', $in or die "$in: $!";
    my $raw = do { local $/; <$fh> };
    next if index($raw, '__sampled__') >= 0;    # CPython's sampled replay: an estimate, not a round trip
    my $out = "$tmp/rt-" . ($label =~ s{/}{_}gr);
    ok(eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $in, to => 'pstats', out => $out); 1 },
        "$label: pstats -> pstats") or diag($@);
    open my $ph, '-|', $py, '-c', $ROUND_TRIP, $in, $out or die "python: $!";
    my ($n, @bad) = <$ph>;
    close $ph;
    is($?, 0, "$label: both loaded");
    chomp(@bad);
    like($n // '', qr/\A[1-9][0-9]* functions/, "$label: " . ($n // "nothing\n") =~ s/\n//r);
    is(join("\n", grep { length } @bad), '', "$label: pstats -> pstats keeps every function's cc, nc, tt, ct and callers");
}

done_testing;
