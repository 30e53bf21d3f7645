#!perl
# pstats input (issue 37), against the REAL reader: every file of
# t/data/pstats (cProfile and the profile module of Debian's python3 3.11 and
# of CPython 3.15, and 3.15's sampling `replay --pstats -o`) is read by
# for_chunks, and per function (SUB_CALLERS into it summed: calls, exclusive
# time, inclusive time; primitive calls from ATTRIBUTE primitive_calls) and
# per caller edge (count, excl, incl + reci) the numbers equal what Python's
# own pstats.Stats loaded from the same file with the interpreter that wrote
# it (FILE.truth.json, made by truth.py beside it).  Where python3 is
# installed, its pstats reads the 3.11 files here and now too.  Also: info
# says it is a call graph; a stack target refuses it (exit 2, nothing
# written); the sampled file's keys of one function are one sub.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();
use lib "$FindBin::Bin/lib";
use CallGraph qw(package_of);
use Stacks qw(nytprofhtml_ok);

my $d = "$FindBin::Bin/data/pstats";
my @files = grep { -f "$_.truth.json" } sort glob("$d/*.prof $d/*.pstats");
plan skip_all => "no pstats files in $d" unless @files;
my $tmp = tempdir('pb43-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub namer {
    my ($sampled) = @_;
    my (%first, %name);
    return sub {
        my ($f, $l, $fn) = @_;
        my $k = join "\0", $f, $l, $fn;
        return $name{$k} if defined $name{$k};
        return $name{$k} = "main::$fn" if $f eq '~';
        $first{"$f\0$fn"} //= $l;
        (my $n = $fn) =~ s/\./::/g;
        $n .= "\@$l" if !$sampled && $first{"$f\0$fn"} != $l;
        return $name{$k} = package_of($f) . "::$n";
    };
}

sub near {
    my ($got, $want, $n) = @_;
    return abs($got - $want) <= 1e-9 * ($n + 1) + 1e-12 * abs($want);
}

for my $file (@files) {
    (my $base = $file) =~ s{.*/}{};
    my $truth = JSON::PP->new->decode(do { local (@ARGV, $/) = "$file.truth.json"; <> });
    my $name = namer($truth->{sampled});
    # the truth per sub (a sampled file's keys of one function joined) and per edge
    my (%fn, %edge, @order);
    my %fnames;
    my @edges = @{ $truth->{edges} };
    for my $f (@{ $truth->{functions} }) {
        my $s = $name->(@$f[0 .. 2]);
        push @order, $s unless $fn{$s};
        my $t = $fn{$s} //= { cc => 0, nc => 0, tt => 0, ct => 0, keys => 0 };
        $t->{cc} += $f->[3];
        $t->{nc} += $f->[4];
        $t->{tt} += $f->[5];
        $t->{ct} += $f->[6];
        $t->{keys}++;
        # its callers, in the file's order (the reader names keys in that order)
        for my $e (grep { join("\0", @$_[0 .. 2]) eq join("\0", @$f[0 .. 2]) } @edges) {
            my $c = $name->(@$e[3 .. 5]);
            my $t2 = $edge{"$s\0$c"} //= { nc => 0, cc => 0, tt => 0, ct => 0, plain => @$e == 7, n => 0 };
            if (@$e == 7) {
                $t2->{nc} += $e->[6];
                $t2->{cc} += $e->[6];
            } else {
                $t2->{$_->[0]} += $e->[ $_->[1] ] for [ nc => 6 ], [ cc => 7 ], [ tt => 8 ], [ ct => 9 ];
            }
            $t2->{n}++;
        }
    }
    # what for_chunks gives
    my (%sub, %in, %got_edge, %attr, %prim);
    Devel::ProfileBridge::ReadStream::for_chunks(sub {
        my ($tag, @a) = @_;
        if ($tag eq 'SUB_INFO') { $sub{ $a[3] } = 1 }
        elsif ($tag eq 'ATTRIBUTE') {
            $attr{ $a[0] } = $a[1];
            $prim{$1} = $a[1] if $a[0] =~ /\Aprimitive_calls 1 (.*)\z/s;
        } elsif ($tag eq 'SUB_CALLERS') {
            my ($count, $incl, $excl, $reci, $callee, $caller) = @a[2, 3, 4, 5, 7, 8];
            my $i = $in{$callee} //= { nc => 0, tt => 0, ct => 0, n => 0 };
            $i->{nc} += $count;
            $i->{tt} += $excl;
            $i->{ct} += $incl;
            $i->{n}++;
            my $e = $got_edge{"$callee\0$caller"} //= { nc => 0, tt => 0, ct => 0 };
            $e->{nc} += $count;
            $e->{tt} += $excl;
            $e->{ct} += $incl + $reci;
        }
    }, filename => $file, quiet => 1);
    is $attr{call_graph}, $truth->{sampled} ? 'sampled' : 'exact', "$base: ATTRIBUTE call_graph";
    my ($bad_fn, $bad_edge, $nfn, $nedge) = (0, 0, 0, 0);
    for my $s (@order) {
        my ($t, $g) = ($fn{$s}, $in{$s});
        $nfn++;
        my @why;
        if ($sub{$s} && !$g && !grep { $t->{$_} } qw(cc nc tt ct)) {
            # never called (the profile module's own 'profiler' entry): a sub without callers
        } elsif (!$sub{$s} || !$g) {
            push @why, "no SUB_INFO or no SUB_CALLERS";
        } else {
            # a sampled file's edges count samples: a function on a stack twice counts twice
            push @why, "calls $g->{nc} != nc $t->{nc}"
                if $truth->{sampled} ? $g->{nc} < $t->{nc} : $g->{nc} != $t->{nc};
            push @why, "primitive calls " . ($prim{$s} // $g->{nc}) . " != cc $t->{cc}"
                if !$truth->{sampled} && ($prim{$s} // $g->{nc}) != $t->{cc};
            push @why, "excl $g->{tt} != tt $t->{tt}" unless near($g->{tt}, $t->{tt}, $g->{n});
            push @why, "incl $g->{ct} != ct $t->{ct}" unless near($g->{ct}, $t->{ct}, $g->{n});
        }
        next unless @why;
        diag "$base: $s: @why" if $bad_fn++ < 5;
    }
    for my $k (sort keys %edge) {
        my ($t, $g) = ($edge{$k}, $got_edge{$k});
        my ($callee, $caller) = split /\0/, $k;
        $nedge++;
        my @why;
        if (!$g) {
            push @why, "no SUB_CALLERS";
        } else {
            push @why, "count $g->{nc} != nc $t->{nc}" if $g->{nc} != $t->{nc};
            push @why, "primitive " . ($prim{"$callee <- $caller"} // $g->{nc}) . " != cc $t->{cc}"
                if !$t->{plain} && ($prim{"$callee <- $caller"} // $g->{nc}) != $t->{cc};
            if (!$t->{plain}) {
                push @why, "excl $g->{tt} != tt $t->{tt}" unless near($g->{tt}, $t->{tt}, $t->{n});
                push @why, "incl+reci $g->{ct} != ct $t->{ct}" unless near($g->{ct}, $t->{ct}, $t->{n});
            }
        }
        next unless @why;
        diag "$base: $callee <- $caller: @why" if $bad_edge++ < 5;
    }
    ok $nfn > 5, "$base: $nfn functions";
    is $bad_fn, 0, "$base: every function's calls, primitive calls, tt and ct equal pstats.Stats'";
    is $bad_edge, 0, "$base: every caller edge ($nedge) equals pstats.Stats'";
    if ($truth->{sampled}) {
        my $joined = grep { $_->{keys} > 1 } values %fn;
        ok $joined, "$base: $joined functions of several keys (executing lines) are one sub each";
    }
}

# Python's own pstats, here and now (3.11: the files it wrote)
SKIP: {
    my $py = `python3 -c 'import pstats; print(1)' 2>/dev/null`;
    skip 'no python3 with pstats', 1 unless ($py // '') =~ /1/;
    my $out = `python3 - '$d/cprofile-3.11.prof' 2>&1 <<'EOF'
import pstats, sys
s = pstats.Stats(sys.argv[1]).stats
print(sum(v[1] for v in s.values()), round(sum(v[2] for v in s.values()), 9))
EOF`;
    my ($nc, $tt) = split ' ', $out // '';
    my $truth = JSON::PP->new->decode(do { local (@ARGV, $/) = "$d/cprofile-3.11.prof.truth.json"; <> });
    my ($snc, $stt) = (0, 0);
    $snc += $_->[4], $stt += $_->[5] for @{ $truth->{functions} };
    ok defined $tt && $nc == $snc && abs($tt - $stt) < 1e-8, "python3's pstats reads cprofile-3.11.prof as its truth file says ($nc calls)";
}

# info, and a stack target
{
    my $f = "$d/cprofile-3.11.prof";
    my ($info) = Devel::ProfileBridge::info($f);
    is $info->{format}, 'pstats', 'detected by content';
    is $info->{call_graph}, 'exact', 'info: call_graph exact';
    is $info->{graph_producer}, 'cProfile', 'info: written by cProfile';
    like $info->{graph_targets}, qr/--to nytprof/, 'info: the targets that carry a call graph';
    my ($p) = Devel::ProfileBridge::info("$d/profile-3.11.prof");
    is $p->{graph_producer}, 'the profile module', 'the profile module (callers are counts)';
    for my $to (qw(collapsed pprof speedscope statprofiler)) {
        my $out = "$tmp/out.$to";
        my $err = `$^X -I$FindBin::Bin/../blib/lib -I$FindBin::Bin/../blib/arch $FindBin::Bin/../bin/profbridge convert --to $to -o $out $f 2>&1`;
        is $? >> 8, 2, "--to $to: exit 2";
        like $err, qr/pstats: unsupported: pstats files are a call graph, not stacks: .*--to nytprof/, "--to $to: names the targets that carry a call graph";
        ok !-e $out, "--to $to: nothing written";
    }
}

# nytprofhtml renders the conversion: subs, callers, call counts, no flame graph, no warnings
SKIP: {
    my $html = `which nytprofhtml 2>/dev/null`;
    chomp $html;
    skip 'nytprofhtml not found', 4 unless $html;
    for my $f ("$d/cprofile-3.15.prof", "$d/replay-recursive_cpu_nogc_none.pstats") {
        (my $base = $f) =~ s{.*/}{};
        my $out = "$tmp/$base.nytprof";
        my @w;
        {
            local $SIG{__WARN__} = sub { push @w, @_ };    # the program's source is not here
            Devel::ProfileBridge::convert(in => $f, out => $out);
        }
        note "convert: @w" if @w;
        nytprofhtml_ok($html, $out, "$tmp/$base-html", $base);
        ok !-e "$tmp/$base-html/all_stacks_by_time.svg", "$base: no flame graph (a call graph has no stacks)";
        my $page = do { local (@ARGV, $/) = "$tmp/$base-html/index.html"; <> } // '';
        like $page, $base =~ /recursive/ ? qr/hanoi/ : qr/fib/, "$base: index.html lists the program's subs";
    }
}

done_testing;
