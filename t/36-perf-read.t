#!perl
# Reading `perf script` text (issue 38, item 1): every file of t/data/perf/ is
# the real `perf script` output of a real `perf record` (t/data/perf/README.md:
# a fork and recursion, C++ threads, --call-graph dwarf with --inline, Rust,
# three events with --header, -F field lists, no call chains), checked
# against the real tools' output kept next to it:
#  * --to collapsed equals stackcollapse-perf.pl --tid (FlameGraph's reader
#    of perf script text; its output is the .stackcollapse.txt file) line for
#    line, once our "tid:" is dropped (Formats.pod, "perf script");
#  * every symbol's self share equals `perf report --stdio --no-children
#    --sort sym`'s (the .report.txt file: its Overhead column, or its Samples
#    column where perf script printed no period);
#  * nytprofhtml (the real one) renders the conversion, a flame graph and
#    nothing on its stderr but progress lines;
#  * merge with a Tachyon file gives every stack the sum of its parts;
#  * events (--sample-type, info), --thread, detection, bad input.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Stacks qw(slurp folded_weights weight_unit_ns first_differences refused_texts nytprofhtml_ok);
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data/perf";
my $tmp = tempdir('pb36-XXXXXX', TMPDIR => 1, CLEANUP => 1);
sub spew { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die }
sub quietly { my $code = shift; local $SIG{__WARN__} = sub { }; return eval { $code->(); 1 } }
sub collapsed {
    my ($in, %o) = @_;
    my $out = "$tmp/c.folded";
    unlink $out;
    quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $out, to => 'collapsed', %o) }) or return undef;
    return slurp($out);
}
# stackcollapse-perf.pl's lines, and ours with "tid:" dropped and the frames
# it loses ("(anonymous namespace)::f") left out, as { stack => weight }
sub lines_of {
    my ($text, $ours) = @_;
    my %w;
    for (split /\n/, $text) {
        my ($s, $n) = /\A(.*) (\d+)\z/ or next;
        if ($ours) {
            $s =~ s/\Atid://;
            $s = join ';', grep { !/\A\(anonymous namespace\)/ } split /;/, $s;
        }
        $w{$s} += $n;
    }
    return \%w;
}
# perf report's self shares per symbol: { event => { sym => [ pct, samples ] } }
sub report {
    my ($file) = @_;
    my (%r, $ev);
    for (split /\n/, slurp($file)) {
        $ev = $1 if /^# Samples: .* of event '([^']+)'/;
        my ($pct, $n, $sym) = /^\s+([\d.]+)%\s+(\d+)\s+\[.\]\s+(.+?)\s*\z/ or next;
        next if $sym =~ /\A0x[0-9a-f]+\z/; # an unresolved address: ours is "[dso]"
        $sym =~ s/\((?!anonymous namespace\)).*//s unless $sym =~ /\.\(.*\)\./; # stackcollapse's cut
        $r{$ev}[0]{$sym} += $pct;
        $r{$ev}[1]{$sym} += $n;
    }
    return \%r;
}

my @files = sort glob("$d/*.perf");
ok(@files >= 8, scalar(@files) . ' perf script files');
for my $in (@files) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    (my $base = $in) =~ s/\.perf\z//;
    is(Devel::ProfileBridge::detect_format($in)->{format}, 'perf', "$label: detected as perf script text");
    my $rep = report("$base.report.txt");
    my @events = $label =~ /three_events/ ? qw(cpu-clock task-clock page-faults) : (undef);
    for my $ev (@events) {
        my $what = $label . ($ev ? " ($ev)" : '');
        my $text = collapsed($in, $ev ? (sample_type => $ev) : ());
        ok(defined $text, "$what: --to collapsed") or diag $@;
        my $got = lines_of($text // '', 1);
        # stackcollapse-perf.pl reads no sample without a call chain
        if (-e "$base.stackcollapse.txt" || $ev) {
            my $want = lines_of(slurp($ev ? "$base.$ev.stackcollapse.txt" : "$base.stackcollapse.txt"), 0);
            ok(keys(%$want) > 0, "$what: stackcollapse-perf.pl's " . keys(%$want) . ' stacks');
            is_deeply([ first_differences($got, $want, 4) ], [], "$what: our collapsed stacks equal stackcollapse-perf.pl --tid's");
        }
        # self shares: the leaf of each stack; perf report gives the time of
        # a function inlined into another (perf script --inline's frames
        # "(inlined)", frames of their own in ours) to that other
        my ($total, %self, %inl, %real) = (0);
        for (split /\n/, slurp($in)) {
            my ($sym, $dso) = /\A\s+[0-9a-f]+ (.+?)(?:\+0x[0-9a-f]+)? \((.*)\)\z/ or next;
            $dso eq 'inlined' ? $inl{$sym} = 1 : ($real{$sym} = 1);
        }
        delete @inl{ keys %real };
        for (split /\n/, $text // '') {
            my ($s, $n) = /\A(.*) (\d+)\z/ or next;
            my @f = split /;/, $s;
            pop @f while @f > 1 && $inl{ $f[-1] };
            my $leaf = $f[-1];
            $total += $n;
            $self{$leaf} += $n;
        }
        my ($event) = grep { !$ev || $_ eq $ev } sort keys %$rep;
        $event = $ev // ((keys %$rep)[0]) if keys(%$rep) == 1 || $ev;
        my $noperiod = $label =~ /noperiod/;
        my $want = $rep->{$event}[$noperiod ? 1 : 0];
        my $sum = 0;
        $sum += $_ for values %{ $rep->{$event}[1] };
        my @off;
        for my $sym (sort keys %$want) {
            my $pct = $noperiod ? 100 * $want->{$sym} / $sum : $want->{$sym};
            my $ours = $total ? 100 * ($self{$sym} // 0) / $total : 0;
            push @off, sprintf('%s: ours %.3f%%, perf report %.2f%%', $sym, $ours, $pct)
                if abs($ours - $pct) > 0.0051 * (1 + scalar(grep { $_ eq $sym } keys %$want));
        }
        ok(keys(%$want) > 0, "$what: perf report names " . keys(%$want) . ' symbols');
        is_deeply(\@off, [], "$what: every symbol's self share equals perf report --no-children's");
    }
}

# ---- nytprofhtml renders a conversion -----------------------------------------------
my ($html) = grep { -x } map { "$_/nytprofhtml" } split /:/, $ENV{PATH};
SKIP: {
    skip 'nytprofhtml not found', 5 * @files unless $html;
    for my $in (@files) {
        (my $label = $in) =~ s{.*/}{};
        my $nyt = "$tmp/r.nytprof";
        unlink $nyt;
        ok(quietly(sub { Devel::ProfileBridge::convert(in => $in, out => $nyt) }), "$label: converted to nytprof.out")
            or diag $@;
        my $dir = "$tmp/html";
        nytprofhtml_ok($html, $nyt, $dir, $label);
        # the flame graph: its root is the whole sampled time (the periods'
        # ns as us), and the level above it covers all of it
        my $svg = -e "$dir/all_stacks_by_time.svg" ? slurp("$dir/all_stacks_by_time.svg") : '';
        my (@frames, $root);
        while ($svg =~ m{<title>(.*?) \(([\d,]+) microseconds?, [\d.]+%\)</title>.*?<rect x="([\d.]+)" y="([\d.]+)"}sg) {
            my %f = (name => $1, us => $2 =~ tr/,//dr, y => $4);
            $f{name} eq 'all' ? ($root = \%f) : push @frames, \%f;
        }
        my $total = 0;
        $total += $_ for values %{ lines_of(collapsed($in), 0) };
        # (one sample is shown as 1 us where perf script printed no period)
        my $us = $label =~ /noperiod/ ? $total : $total / 1000;
        ok($root && abs($root->{us} - $us) < 1, "$label: ... a flame graph whose root is the sampled time, $us us"
            . ' (nytprofhtml shows whole us)') or diag $root ? "root: $root->{us} us" : 'no root in the flame graph';
        my ($y1) = sort { $b <=> $a } grep { $root && $_ < $root->{y} } map { $_->{y} } @frames;
        my $first = 0;
        $first += $_->{us} for grep { defined $y1 && $_->{y} == $y1 } @frames;
        ok($root && $first >= 0.99 * $root->{us} && $first <= 1.01 * $root->{us},
            "$label: ... and its first level covers it ($first us)");
    }
}

# ---- merge with a Tachyon file --------------------------------------------------------
SKIP: {
    skip 'this build has no zstd (the Tachyon file is compressed)', 2
        unless defined Devel::ProfileBridge::features()->{libraries}{zstd};
    my ($p, $t) = ("$d/rec_fork.perf", "$FindBin::Bin/data/tachyon/multithread.bin");
    my %want;
    for my $x ([ $p, 1 ], [ $t, weight_unit_ns($t) ]) {
        quietly(sub { Devel::ProfileBridge::convert(in => $x->[0], out => "$tmp/part.folded", to => 'collapsed') });
        my $w = folded_weights("$tmp/part.folded", unit => $x->[1]);
        $want{$_} += $w->{$_} for keys %$w;
    }
    ok(quietly(sub { Devel::ProfileBridge::merge(in => [ $p, $t ], out => "$tmp/m.folded", to => 'collapsed') }),
        'merge of perf script text (ns of cpu-clock) and a Tachyon file') or diag $@;
    my $got = folded_weights("$tmp/m.folded");
    is_deeply([ first_differences($got, \%want, 4) ], [], 'every merged stack weighs the sum of its parts ('
        . scalar(keys %want) . ')');
}

# ---- events, info, --thread ----------------------------------------------------------------
{
    my $in = "$d/three_events_header.perf";
    my ($info) = Devel::ProfileBridge::info($in);
    is_deeply($info->{sample_types}, [qw(cpu-clock task-clock page-faults)], 'info lists the file\'s events');
    is($info->{sample_type}, 'cpu-clock', '... and reads the first one the header declares');
    ok(!quietly(sub { collapsed($in, sample_type => 'cycles') // die $@ }), '--sample-type cycles: none');
    like($@, qr/^perf: unsupported: no samples of event "cycles" in this file \(its events: cpu-clock,task-clock,page-faults\)/,
        '... says which events there are');
    my $two = collapsed("$d/rec_fork.perf");
    my @tids = sort keys %{ { map { /\Atid:rec-\?\/(\d+);/ ? ($1 => 1) : () } split /\n/, $two } };
    is(scalar(@tids), 2, 'the fork: two threads (' . join(', ', @tids) . ')');
    my $one = collapsed("$d/rec_fork.perf", thread => $tids[1]);
    ok($one && $one !~ /\/\Q$tids[0]\E;/ && $one =~ /\/\Q$tids[1]\E;/, "--thread $tids[1] keeps that tid only");
    ok(!defined collapsed("$d/rec_fork.perf", thread => 1), '--thread 1: none');
    like($@, qr/^perf: unsupported: \S+: no thread 1 in this file \(its threads: rec-\?\/\d+, rec-\?\/\d+\)/, '... says which');
    my $pidtid = collapsed("$d/rust_pidtid.perf");
    ok($pidtid =~ /\Atid:rs-(\d+)\/\d+;/m, 'pid/tid printed: threads labelled comm-pid/tid');
}

# ---- shapes perf prints: spaces in comm, no period, inline chains, no dso ---------------
{
    my $f = "$tmp/x.perf";
    spew($f, "V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:\n"
        . "\t7f1 foo(int, char)+0x1f (/lib/libx.so)\n\t7f2 [unknown] (/lib/liby.so.1)\n\t7f3 a->b (/bin/z)\n"
        . "\t7f4 Lorg/X;.run(I)V (/tmp/perf-1.map)\n\t7f5 main\n\n"
        . "V8 WorkerThread 24636/25607 [000] 94564.109316: 50 cycles:\r\n\t7f1 foo+0x2 (/lib/libx.so)\r\n\r\n");
    is(collapsed($f), "tid:V8_WorkerThread-24636/25607;main;Lorg/X:.run;a;b_[i];[liby.so.1];foo 100\n"
        . "tid:V8_WorkerThread-24636/25607;foo 50\n", 'spaces in comm, pid/tid, argument lists, [unknown] in a dso, '
        . 'a->b, a frame with no dso, CRLF: as stackcollapse-perf.pl names them');
    spew($f, "perf 12 1.5: cpu-clock:\n\tffff f1 ([kernel.kallsyms])\n\nperf 12 1.6: cpu-clock:\n\tffff f1 ([kernel.kallsyms])\n\n");
    is(collapsed($f), "tid:perf-?/12;f1 2\n", 'no period printed: one per sample');
    spew($f, "            perf 12 [000]     1.500000:     250000 cpu-clock:  ffff f1\n"
        . "              dd 13 [001]     1.600000:     250000 cpu-clock:  ffff f2+0x3 ([kernel.kallsyms])\n"
        . "perf 12 [000] 1.7: 1 sched:sched_switch: prev_comm=perf prev_pid=12 ==> next_comm=dd\n\tffff __schedule ([k])\n\n");
    is(collapsed($f, sample_type => 'cpu-clock'), "tid:dd-?/13;f2 250000\ntid:perf-?/12;f1 250000\n",
        'no call chains: the frame on the header line, with or without a dso; a comm that looks like an address');
    is(collapsed($f, sample_type => 'sched:sched_switch'), "tid:perf-?/12;__schedule 1\n",
        'a tracepoint\'s fields on its header line, its call chain under it');
    my %det = ("perf 12 1.5: 1 cpu-clock:\n\tffff f1 ([k])\n\n" => 'perf', "# ========\n# captured on : x\n" => 'perf',
        "a;b 12\n" => 'folded', "hello world\n" => undef, "perf 12 1.5: 1 cpu-clock:\nnot a frame\n" => undef,
        "            perf 12 [000]     1.500000:     250000 cpu-clock:  ffff f1 ([k])\n" => 'perf');
    for my $in (sort keys %det) {
        spew("$tmp/det", $in);
        my $i = Devel::ProfileBridge::detect_format("$tmp/det");
        is($i && $i->{format}, $det{$in}, 'detected ' . ($det{$in} // 'as nothing') . ': ' . substr($in =~ s/\n/\\n/gr, 0, 40));
    }
}

# ---- bad input -----------------------------------------------------------------------------
my $h = "perf 12 1.5: 1 cpu-clock:\n";
my @bad = (
    [ "${h}\tffff f1 (k)\nnot a header\n", qr/^perf: corrupt: line 3 is not a sample's header .* at byte 39 of / ],
    [ "${h}\tffff f\x01 (k)\n\n", qr/^perf: corrupt: line 2 holds a control character .* at byte 33 of / ],
    [ "${h}\n\tffff f1 (k)\n", qr/^perf: corrupt: line 3 is neither a frame .* at byte 27 of / ],
    [ "${h}\nperf 12 1.6: cpu-clock:\n\n", qr/^perf: corrupt: line 3 prints no period, where the samples before it print one at byte 27 of / ],
    [ $h . join('', map { "\tffff f$_ (k)\n" } 1 .. 30) . "\n", qr/^perf: limit: a sample has more than 20 frames \(max_stack_depth\) at byte \d+ of /,
        max_stack_depth => 20 ],
    [ $h . "\tffff " . ('y' x 5000) . " (k)\n\n", qr/^perf: limit: line 2 is longer than 1024 bytes \(max_record_size\) at byte 26 of /,
        max_record_size => 1024 ],
    [ $h . join('', map { "\tffff f$_ (k)\n" } 1 .. 5) . "\n", qr/^perf: limit: more than 3 unique frames \(max_frames\) at byte \d+ of /,
        max_frames => 3 ],
);
refused_texts(perf => $tmp, @bad);

done_testing();
