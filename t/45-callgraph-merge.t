#!perl
# merge of call graphs (issue 37): pstats and callgrind inputs summed per
# function and per edge into a call-graph target; a stack input merged with
# a call graph into nytprof.out; a stack target refuses a graph input.
# Truth: Python's own pstats.Stats(a).add(b) (run here by python3) for
# pstats; callgrind_annotate's per-function self costs (its reports beside
# the files, t/data/callgrind/*.annotate-excl.txt) summed for callgrind.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();
use lib "$FindBin::Bin/lib";
use CallGraph qw(package_of parse_annotate sub_of);

my $tmp = tempdir('pb45-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @warned;
$SIG{__WARN__} = sub { push @warned, @_ };    # the merge's notes (a source not found): stderr stays clean
my $pd = "$FindBin::Bin/data/pstats";
my $cd = "$FindBin::Bin/data/callgrind";

# the names of one file's keys, in its order (a function at a second def line gets "@LINE")
sub names_of {
    my ($keys) = @_;
    my (%first, %name);
    for my $k (@$keys) {
        my ($f, $l, $fn) = @$k;
        my $key = join "\0", @$k;
        next if defined $name{$key};
        if ($f eq '~') { $name{$key} = nyt("main::$fn"); next }
        $first{"$f\0$fn"} //= $l;
        (my $n = $fn) =~ s/\./::/g;
        $n .= "\@$l" if $first{"$f\0$fn"} != $l;
        $name{$key} = nyt(package_of($f) . "::$n");
    }
    return \%name;
}

# the name nytprof.out shows (present.c, pb_nytprof_name: <...> as [...], as
# Perl names cannot hold them; not after "operator" or "-")
sub nyt { my ($n) = @_; $n =~ s/(?<!operator)(?<!-)</[/g; $n =~ s/(?<!operator)(?<!-)>/]/g; return $n }

sub near { my ($a, $b) = @_; return abs($a - $b) <= 1e-9 * (abs($a) + abs($b)) + 1e-12 }

# what for_chunks reads of a merged nytprof.out: per sub nc, tt, ct (s)
# summed over its SUB_CALLERS; primitive calls per pid; the attributes
sub ours {
    my ($file) = @_;
    my (%in, %prim, %attr);
    Devel::ProfileBridge::ReadStream::for_chunks(sub {
        my ($tag, @a) = @_;
        if ($tag eq 'ATTRIBUTE') {
            $attr{ $a[0] } //= $a[1];
            $prim{ nyt($2) }{$1} = $a[1] if $a[0] =~ /\Aprimitive_calls (\d+) ((?:(?! <- ).)*)\z/s;
        } elsif ($tag eq 'SUB_CALLERS') {
            my ($count, $incl, $excl, $callee) = @a[2, 3, 4, 7];
            my $i = $in{$callee} //= { nc => 0, tt => 0, ct => 0 };
            $i->{nc} += $count;
            $i->{tt} += $excl;
            $i->{ct} += $incl;
        }
    }, filename => $file, quiet => 1);
    return (\%in, \%prim, \%attr);
}

my $py = `python3 -c 'import pstats; print(1)' 2>/dev/null` // '';
# Python's own sum of pstats files: per key (cc, nc, tt, ct), each input's
# keys in order, and each input's own (cc, nc) per key
my $truth = sub {
        my (@f) = @_;
        my $out = `python3 - @f <<'EOF'
import pstats, sys
for p in sys.argv[1:]:
    for k in pstats.Stats(p).stats:
        print("K\\t%s\\t%s\\t%d\\t%s" % (p, k[0], k[1], k[2]))
for p in sys.argv[1:]:
    for (f, l, fn), (cc, nc, tt, ct, callers) in pstats.Stats(p).stats.items():
        print("P\t%s\t%s\t%d\t%s\t%d\t%d\t%r\t%r" % (p, f, l, fn, cc, nc, tt, ct))
s = pstats.Stats(sys.argv[1])
for p in sys.argv[2:]:
    s.add(p)
print("T\t%d\t%d\t%r" % (s.total_calls, s.prim_calls, s.total_tt))
for (f, l, fn), (cc, nc, tt, ct, callers) in s.stats.items():
    print("F\\t%s\\t%d\\t%s\\t%d\\t%d\\t%r\\t%r" % (f, l, fn, cc, nc, tt, ct))
EOF`;
        my (%keys, %fn, %per);
        for (split /\n/, $out) {
            my @c = split /\t/, $_, -1;
            if ($c[0] eq 'K') { push @{ $keys{ $c[1] } }, [ @c[2 .. 4] ] }
            elsif ($c[0] eq 'P') { $per{ $c[1] }{ join "\0", @c[2 .. 4] } = [ @c[5 .. 8] ] }
            elsif ($c[0] eq 'T') { $per{''} = [ @c[1 .. 3] ] }
            elsif ($c[0] eq 'F') { $fn{ join "\0", @c[1 .. 3] } = [ @c[4 .. 7] ] }
        }
        return (\%keys, \%fn, \%per);
};
# the sub of every key of $f, as the reader names it
sub names_in {
    my ($f) = @_;
    my %name;
    {
        # the reader names a file's keys in its order (FILE.truth.json lists them so)
        my $j = JSON::PP->new->decode(do { local (@ARGV, $/) = "$f.truth.json"; <> });
        # (each function, then its callers: the order t/43-pstats-read.t names them in)
        my @k;
        for my $fn (@{ $j->{functions} }) {
            push @k, [ @$fn[0 .. 2] ];
            my $id = join "\0", @$fn[0 .. 2];
            push @k, map { [ @$_[3 .. 5] ] } grep { join("\0", @$_[0 .. 2]) eq $id } @{ $j->{edges} };
        }
        my $n = names_of(\@k);
        $name{$_} //= $n->{$_} for keys %$n;
    }
    return \%name;
}
SKIP: {
    skip 'no python3 with pstats', 1 unless $py =~ /1/;
    for my $pair ([ 'cprofile-3.11.prof', 'cprofile-3.15.prof' ], [ 'cprofile-3.11.prof', 'cprofile-3.11.prof' ]) {
        my @in = map { "$pd/$_" } @$pair;
        my $label = "merge @$pair";
        my ($keys, $fn, $per) = $truth->(@in);
        ok scalar(keys %$fn) > 20, "$label: python3's pstats.Stats.add summed " . scalar(keys %$fn) . " functions";
        # Python's numbers of each input per sub, as that input's reader names its keys
        # (one key may be two subs: <frozen importlib._bootstrap>'s lines in 3.11 and 3.15), summed
        my (%want, %want_prim);
        for my $i (0 .. $#in) {
            my $name = names_in($in[$i]);
            my %cn;
            for my $k (keys %{ $per->{ $in[$i] } }) {
                my ($w, $c) = ($want{ $name->{$k} } //= [ 0, 0, 0, 0 ], $cn{ $name->{$k} } //= [ 0, 0 ]);
                $w->[$_] += $per->{ $in[$i] }{$k}[$_] for 0 .. 3;
                $c->[$_] += $per->{ $in[$i] }{$k}[$_] for 0, 1;
            }
            # each input is its own thread (pid 1, 2: no thread label joins them): its
            # primitive calls per sub where they are not its calls
            $cn{$_}[0] != $cn{$_}[1] and $want_prim{$_}{ $i + 1 } = $cn{$_}[0] for keys %cn;
        }
        my $out = "$tmp/m.nytprof";
        unlink $out;
        ok eval { Devel::ProfileBridge::merge(in => \@in, out => $out); 1 }, "$label: merged"
            or diag $@;
        my ($got, $prim, $attr) = ours($out);
        is $attr->{call_graph}, 'exact', "$label: ATTRIBUTE call_graph exact";
        my $po = "$tmp/m.prof";
        ok eval { Devel::ProfileBridge::merge(in => \@in, out => $po, to => 'pstats'); 1 }, "$label: merged to pstats"
            or diag $@;
        my $loaded = `python3 -c 'import pstats, sys; print(len(pstats.Stats(sys.argv[1]).stats))' '$po' 2>&1`;
        like $loaded, qr/\A[1-9][0-9]*\s*\z/, "$label: python3's pstats.Stats loads the merged pstats file";
        my ($bad, $n, $npid) = (0, 0, 0);
        for my $s (sort keys %want) {
            my ($w, $g) = ($want{$s}, $got->{$s} // { nc => 0, tt => 0, ct => 0 });
            $n++;
            my @why;
            push @why, "nc $g->{nc} != $w->[1]" if $g->{nc} != $w->[1];
            push @why, "tt $g->{tt} != $w->[2]" unless near($g->{tt}, $w->[2]);
            push @why, "ct $g->{ct} != $w->[3]" unless near($g->{ct}, $w->[3]);
            # primitive calls: ATTRIBUTE primitive_calls PID SUB where they are not the calls
            my ($gp, $wp) = map { my $h = $_ || {}; join ',', map { "$_=$h->{$_}" } sort keys %$h } $prim->{$s}, $want_prim{$s};
            push @why, "primitive calls ($gp) != ($wp)" if $gp ne $wp;
            $npid++ if %{ $prim->{$s} || {} };
            next unless @why;
            diag "$label: $s: @why" if $bad++ < 5;
        }
        is $bad, 0, "$label: per function nc, tt, ct of $n subs equal the sum of each input's pstats.Stats', and the "
            . "primitive calls ($npid subs) each input's";
        # and the totals Python's own pstats.Stats(a).add(b) gives
        my ($calls, $tt) = (0, 0);
        $calls += $_->{nc}, $tt += $_->{tt} for values %$got;
        my ($tc, undef, $ttt) = @{ $per->{''} };
        ok $calls == $tc && abs($tt - $ttt) < 1e-9 * keys(%$got),
            "$label: $calls calls, $tt s in all: pstats.Stats(a).add(b)'s total_calls $tc, total_tt $ttt";
    }
}

# ---- callgrind: two files of one event, summed per function ---------------
# callgrind_annotate's report (events, { function => [ self cost per event, ... rows ] })
{
    my @in = map { "$cd/$_" } qw(rec-O0.callgrind tmpl-threads.callgrind-02);
    my %want;
    for my $f (@in) {
        my ($ev, undef, $rows) = parse_annotate(do { local (@ARGV, $/) = "$f.annotate-excl.txt"; <> });
        is $ev->[0], 'Ir', "$f: callgrind_annotate's first event is Ir";
        for my $fn (keys %$rows) { $want{ nyt(sub_of($fn)) } += $_->[0] for @{ $rows->{$fn} } }
    }
    for my $to (qw(nytprof callgrind)) {
        my $out = "$tmp/m.$to";
        ok eval { Devel::ProfileBridge::merge(in => \@in, out => $out, to => $to); 1 },
            "callgrind + callgrind merged to $to" or diag $@;
        next unless $to eq 'nytprof';
        my ($got, undef, $attr) = ours($out);
        is $attr->{graph_cost_unit}, 'Ir', 'the merged graph says its unit (Ir)';
        ok !defined $attr->{graph_total}, 'no one input\'s graph_total for the sum';
        my ($bad, $n, $sum_w, $sum_g) = (0, 0, 0, 0);
        $sum_g += sprintf '%.0f', $_->{tt} * 1e9 for values %$got;
        for my $s (sort keys %want) {
            $sum_w += $want{$s};
            # (C++ template names: nytprof.out rewrites more than <> in them; the total counts them)
            next if $s =~ /[\[\]]/;
            my $g = sprintf '%.0f', ($got->{$s}{tt} // 0) * 1e9;
            $n++;
            next if $g == $want{$s};
            diag "callgrind merge: $s: self $g, callgrind_annotate's sum $want{$s}" if $bad++ < 5;
        }
        ok $n > 20, "callgrind merge: $n functions compared by name";
        is $bad, 0, "callgrind merge: the self cost of $n functions equals callgrind_annotate's sum over both files";
        is $sum_g, $sum_w, "callgrind merge: the total equals callgrind_annotate's ($sum_w Ir)";
    }
    # another unit never adds: Ir with pstats' ns
    ok !eval { Devel::ProfileBridge::merge(in => [ $in[0], "$pd/cprofile-3.11.prof" ], out => "$tmp/x.nytprof",
            ); 1 }, 'callgrind (Ir) + pstats (ns): refused';
    like "$@", qr/usage: .*its weights are ns.*Ir/s, '... a usage error naming both units';
}

# ---- a stack input with a call graph, into nytprof.out ---------------------
SKIP: {
    skip 'no python3 with pstats', 4 unless $py =~ /1/;
    my $stacks = "$FindBin::Bin/data/folded/nytprofcalls_recursion.folded";
    my $graph = "$pd/cprofile-3.11.prof";
    my $out = "$tmp/mixed.nytprof";
    my (undef, $fn) = $truth->($graph);
    my $name = names_in($graph);
    my %want;
    for my $k (keys %$fn) {
        my $w = $want{ $name->{$k} } //= [ 0, 0, 0, 0 ];
        $w->[$_] += $fn->{$k}[$_] for 0 .. 3;
    }
    ok eval { Devel::ProfileBridge::merge(in => [ $stacks, $graph ], out => $out); 1 },
        'folded stacks + pstats merged to nytprof' or diag $@;
    my ($got, undef, $attr) = ours($out);
    ok !defined $attr->{call_graph}, 'a merge with stacks is not all call graph (no ATTRIBUTE call_graph)';
    # the folded file's weights, read here: 1 ns each (no interval), on top of the graph's own time
    my $total = 0;
    open my $fh, '<', $stacks or die "$stacks: $!";
    while (<$fh>) { $total += $1 if /\s(\d+)\s*\z/ }
    my ($sum, $gsum) = (0, 0);
    $sum += $_->{tt} for values %$got;
    $gsum += $_->[2] for values %want;
    ok $total > 0 && abs($sum - ($gsum + $total * 1e-9)) < 1e-9 * (keys(%$got) + 1),
        "the merged own time is the pstats file's ($gsum s) + the folded samples' ($total, 1 ns each)";
    my ($bad, $n) = (0, 0);
    for my $s (sort keys %want) {
        $n++;
        my $g = $got->{$s} // { nc => -1, ct => -1 };
        next if $g->{nc} == $want{$s}[1] && near($g->{ct}, $want{$s}[3]);
        diag "mixed: $s: nc $g->{nc} != $want{$s}[1] or ct $g->{ct} != $want{$s}[3]" if $bad++ < 5;
    }
    is $bad, 0, "the pstats file's $n functions keep pstats.Stats' calls and inclusive time";
}

# ---- a stack target keeps refusing a graph input ---------------------------
for my $to (qw(collapsed pprof)) {
    my $out = "$tmp/x.$to";
    ok !eval { Devel::ProfileBridge::merge(in => [ "$pd/cprofile-3.11.prof" ], out => $out, to => $to); 1 },
        "merge of a call graph to $to: refused";
    like "$@", qr/unsupported: .*call graph.*--to nytprof, --to pstats, --to callgrind/s, '... naming the graph targets';
    ok !-e $out, '... nothing written';
}

# ---- the CLI, with --jobs (the workers' spools carry the graph) -----------
{
    my $pb = "$FindBin::Bin/../blib/script/profbridge";
    $pb = "$FindBin::Bin/../bin/profbridge" unless -f $pb;
    my @in = map { "$cd/$_" } qw(rec-O0.callgrind tmpl-threads.callgrind-02);
    for my $jobs (0, 2) {
        my $out = "$tmp/cli$jobs.nytprof";
        my $err = `$^X -Mblib $pb merge @in --jobs $jobs -o $out 2>&1`;
        is $? >> 8, 0, "profbridge merge --jobs $jobs of two callgrind files: exit 0" or diag $err;
    }
    my ($a) = ours("$tmp/cli0.nytprof");
    my ($b) = ours("$tmp/cli2.nytprof");
    is_deeply $b, $a, '--jobs 2 gives what one process gives';
    my $err = `$^X -Mblib $pb merge $pd/cprofile-3.11.prof --jobs 2 $pd/cprofile-3.11.prof --to collapsed -o $tmp/j.folded 2>&1`;
    is $? >> 8, 2, 'profbridge merge --jobs 2 of a call graph to collapsed: exit 2';
    like $err, qr/call graph.*--to pstats/s, '... naming the graph targets';
}

done_testing;
