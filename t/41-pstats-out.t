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
use CallGraph qw(graph_corpus our_graph py_func run_of);
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

# what Python's pstats loads: per file a header line, then one line per
# function and one per caller (repr floats, tab-separated)
my $truth = <<'PY';
import pstats, sys
for path in sys.argv[1:]:
    s = pstats.Stats(path)
    print("FILE\t%s\t%d\t%d\t%r" % (path, s.total_calls, s.prim_calls, s.total_tt))
    for (f, l, fn), (cc, nc, tt, ct, callers) in s.stats.items():
        print("F\t%s\t%d\t%s\t%d\t%d\t%r\t%r" % (f, l, fn, cc, nc, tt, ct))
        for (cf, cl, cfn), v in callers.items():
            if isinstance(v, tuple):
                print("C\t%s\t%d\t%s\t%d\t%d\t%r\t%r" % ((cf, cl, cfn) + v))
            else:
                print("C\t%s\t%d\t%s\t%d" % (cf, cl, cfn, v))
PY

my (%graph, @outs);
for my $in (@inputs) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    (my $out = "$tmp/$label.prof") =~ s{/(?=[^/]*/)}{_}g;
    $out = "$tmp/" . ($label =~ s{/}{_}gr) . '.prof';
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

my %loaded;
{
    local $ENV{PYTHONIOENCODING} = 'utf-8';
    open my $ph, '-|:encoding(UTF-8)', $py, '-c', $truth, @outs or die "python3: $!";
    my $cur;
    my $last;
    while (my $l = <$ph>) {
        chomp $l;
        my @f = split /\t/, $l, -1;
        if ($f[0] eq 'FILE') { $cur = $loaded{ $f[1] } = { totals => [ @f[ 2 .. 4 ] ], f => {} } }
        elsif ($f[0] eq 'F') { $last = $cur->{f}{"$f[1]\0$f[2]\0$f[3]"} = { n => [ @f[ 4 .. 7 ] ], c => {} } }
        else { $last->{c}{"$f[1]\0$f[2]\0$f[3]"} = [ @f[ 4 .. $#f ] ] }
    }
    close $ph;
    is($?, 0, 'python3 loaded every file');
}

sub near { my ($a, $b) = @_; return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-12 }

for my $out (@outs) {
    my ($label, $g) = @{ $graph{$out} };
    my $l = $loaded{$out};
    ok($l, "$label: pstats.Stats loaded it") or next;
    my $subs = $g->{subs};
    my %key = map {
        my $s = $subs->{$_};
        ($_ => join("\0", $s->{file}, $s->{line}, $g->{python} ? py_func($_, $s->{file}) : $_))
    } keys %$subs;
    is(scalar(keys %{ $l->{f} }), scalar(keys %$subs), "$label: one function per sub");
    my (@bad, $calls, $prim, $tt) = ();
    ($calls, $prim, $tt) = (0, 0, 0);
    for my $name (sort keys %$subs) {
        my $s = $subs->{$name};
        my $got = $l->{f}{ $key{$name} };
        unless ($got) { push @bad, "$name: missing"; next }
        my @want;
        if ($g->{sampled}) {
            my ($cc, $nc) = map { int($_ / $g->{unit} + 0.5) } $s->{tt}, $s->{ct};
            @want = ($cc, $nc, $cc * $g->{interval}, $nc * $g->{interval});
        } else {
            @want = ($s->{nc} - $s->{self_calls}, $s->{nc}, $s->{tt}, $s->{ct});
        }
        $calls += $want[1];
        $prim += $want[0];
        $tt += $want[2];
        push @bad, "$name: (@{ $got->{n} }) want (@want)"
            unless $got->{n}[0] == $want[0] && $got->{n}[1] == $want[1] && near($got->{n}[2], $want[2])
            && near($got->{n}[3], $want[3]);
        # its callers
        my %want_c;
        for my $k (grep { /\A\Q$name\E\0/ } keys %{ $g->{edges} }) {
            my $caller = (split /\0/, $k)[1];
            my $e = $g->{edges}{$k};
            $want_c{ $key{$caller} } = $g->{sampled} ? [ int(($e->{incl} + $e->{reci}) / $g->{unit} + 0.5) ]
                : [ $e->{count}, $caller eq $name ? 0 : $e->{count}, $e->{excl}, $e->{incl} ];
        }
        my @ck = sort keys %want_c;
        push @bad, "$name: callers " . join(',', sort keys %{ $got->{c} }) . ' want ' . join(',', @ck)
            unless join(',', @ck) eq join(',', sort keys %{ $got->{c} });
        for my $ck (@ck) {
            my ($w, $v) = ($want_c{$ck}, $got->{c}{$ck} // []);
            my $same = @$w == @$v;
            for my $i (0 .. $#$w) { $same &&= $i >= 2 ? near($v->[$i], $w->[$i]) : $v->[$i] == $w->[$i] }
            push @bad, "$name <- " . ($ck =~ s/\0/:/gr) . ": (@$v) want (@$w)" unless $same;
        }
    }
    is(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]), '', "$label: every function and caller as ours");
    ok($l->{totals}[0] == $calls && $l->{totals}[1] == $prim && near($l->{totals}[2], $tt),
        "$label: totals $calls calls ($prim primitive), $tt s") or diag("pstats: @{ $l->{totals} }");
}

done_testing;
