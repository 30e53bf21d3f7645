#!perl
# --to speedscope of an input that records sample times (Tachyon, V8, perf
# script): each thread is an evented profile on which every sample starts at
# its recorded time (ns from the profile's earliest sample), lasts its
# weight, and shows its stack; a sample recorded before the one before it
# has ended starts at that end (its whole weight kept).  The truth is the
# source's own record, read here: CPython's own gecko file of each real
# Tachyon file (its sample times), V8's startTime + timeDeltas, perf
# script's time field.  (t/95-speedscope.t checks the weights against our
# collapsed output and the schema.)
use strict;
use warnings;
use Test::More;
use File::Basename ();
use File::Spec ();
my $here;
BEGIN { $here = File::Basename::dirname(File::Spec->rel2abs(__FILE__)) }
use lib "$here/lib";
use NoteWarnings;
use Needs qw(zstd);
use Stacks qw(slurp convert_quietly weight_unit_ns);
use File::Temp qw(tempdir);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$here/data";
my $tmp = tempdir('pb95t-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->utf8;

# our profile as a list of [at, [open frames]] after each instant that has events
sub timeline {
    my ($p) = @_;
    my (@tl, @open);
    for my $e (@{ $p->{events} }) {
        if ($e->{type} eq 'O') { push @open, $e->{frame} }
        else { pop @open }
        if (@tl && $tl[-1][0] == $e->{at}) { $tl[-1][1] = [@open] }
        else { push @tl, [ $e->{at}, [@open] ] }
    }
    return \@tl;
}

# the frames open just after time t
sub open_at {
    my ($tl, $t) = @_;
    my ($lo, $hi) = (0, $#$tl);
    return [] if !@$tl || $tl->[0][0] > $t;
    while ($lo < $hi) {
        my $mid = ($lo + $hi + 1) >> 1;
        if ($tl->[$mid][0] <= $t) { $lo = $mid } else { $hi = $mid - 1 }
    }
    return $tl->[$lo][1];
}

# samples [time ns, weight ns, leaf name or undef] of each thread, in the
# order recorded -> every sample probed in our profile of that thread
sub check_times {
    my ($label, $out, $threads) = @_;
    my $j = $json->decode(slurp($out));
    my $frames = $j->{shared}{frames};
    my %prof = map { $_->{name} => $_ } @{ $j->{profiles} };
    my ($origin) = sort { $a <=> $b } map { $_->[0] } map { @$_ } values %$threads;
    my ($n, $exact, $busy_bad, $leaf_bad, $start_bad, $maxlate) = (0, 0, 0, 0, 0, 0);
    for my $tid (sort keys %$threads) {
        my $p = $prof{"thread $tid"};
        ok($p && $p->{type} eq 'evented', "$label: thread $tid is an evented profile") or next;
        my $tl = timeline($p);
        my %starts = map { $_->[0] => 1 } @$tl;    # every instant the stack changes
        my $end = 0;
        for my $s (@{ $threads->{$tid} }) {
            my ($t, $w, $leaf) = @$s;
            next unless $w;
            $t -= $origin;
            my $start = $t < $end ? $end : $t;    # overlaps the one before: at its end
            $n++;
            $exact++ if $start == $t;
            $maxlate = $start - $t if $start - $t > $maxlate;
            my $o = open_at($tl, $start);
            $busy_bad++ unless @$o;
            $leaf_bad++ if defined $leaf && @$o && $frames->[ $o->[-1] ]{name} ne $leaf;
            # a stack change that is not a sample's start or the end of one before a gap
            $start_bad++ if $start > $end && !$starts{$start};
            $end = $start + $w;
        }
        is($p->{endValue}, $end, "$label: thread $tid ends where its last sample does ($end ns)");
    }
    ok($n, "$label: $n samples probed");
    is($busy_bad, 0, "$label: at every sample's start a stack is open");
    is($leaf_bad, 0, "$label: ... and its innermost frame is the sample's");
    is($start_bad, 0, "$label: every sample after a gap starts at its recorded time");
    note(sprintf '%s: %d of %d samples at exactly their recorded time, the latest %.3f ms after it',
        $label, $exact, $n, $maxlate / 1e6);
    return ($n, $exact);
}

# ---- Tachyon: CPython's own gecko file has each sample's time (ms from its first sample);
# three of the real 3.15 files here, every one with RELEASE_TESTING (xt/speedscope-times.t)
for my $bin (grep { $ENV{RELEASE_TESTING} || m{/(?:multithread_gil_zstd|multithread_wall_none|lambdas_classes_opcodes_zstd)\.bin\z} }
    glob "$d/tachyon/real315/*.bin") {
    (my $label = $bin) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/t.json";
    ok(convert_quietly($bin, { out => $out, to => 'speedscope' }), "$label: converted") or next;
    gunzip("$bin.gecko.json.gz" => \my $g) or die $GunzipError;
    my $gk = $json->decode($g);
    my $unit = weight_unit_ns($bin);
    my %threads;
    for my $t (@{ $gk->{threads} }) {
        my $strs = $t->{stringTable} // $t->{stringArray} // $gk->{shared}{stringArray};
        my $s = $t->{samples};
        for my $i (0 .. $#{ $s->{time} }) {
            my $fn = $t->{frameTable}{func}[ $t->{stackTable}{frame}[ $s->{stack}[$i] ] ];
            push @{ $threads{ $t->{tid} } },
                [ int($s->{time}[$i] * 1000 + ($s->{time}[$i] < 0 ? -0.5 : 0.5)) * 1000,
                ($s->{weight} ? $s->{weight}[$i] : 1) * $unit, $strs->[ $t->{funcTable}{name}[$fn] ] ];
        }
    }
    next unless %threads;
    check_times($label, $out, \%threads);
}

# ---- V8: startTime + the running sum of timeDeltas; a sample lasts to the next (to endTime, the last)
for my $cp (glob "$d/v8/*.cpuprofile") {
    (my $label = $cp) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/v.json";
    ok(convert_quietly($cp, { out => $out, to => 'speedscope' }), "$label: converted") or next;
    my $v = $json->decode(slurp($cp));
    my %name = map { $_->{id} => (length $_->{callFrame}{functionName} ? $_->{callFrame}{functionName} : '(anonymous)') }
        @{ $v->{nodes} };
    my @t = ($v->{startTime});
    push @t, $t[-1] + $_ for @{ $v->{timeDeltas} };
    shift @t;
    my @s;
    for my $i (0 .. $#t) {
        my $w = ($i < $#t ? $t[ $i + 1 ] : $v->{endTime}) - $t[$i];
        push @s, [ $t[$i] * 1000, ($w > 0 ? $w : 0) * 1000, $name{ $v->{samples}[$i] } ];
    }
    my ($n, $exact) = check_times($label, $out, { main => \@s });
    is($exact, $n, "$label: every sample at exactly its recorded time (V8's samples tile the time)");
}

# ---- perf script: "comm [pid/]tid [cpu] seconds.micros: period event:"
for my $pf (map { "$d/perf/$_.perf" } qw(thr_cpp_F rec_fork rust_pidtid)) {
    (my $label = $pf) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/p.json";
    ok(convert_quietly($pf, { out => $out, to => 'speedscope' }), "$label: converted") or next;
    my %threads;
    open my $fh, '<', $pf or die;
    while (<$fh>) {
        my ($comm, $pid, $tid, $sec, $us, $period) = m{\A(\S+)\s+(?:(\d+)/)?(\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d{6}):\s+(\d+)\s+\S+:}
            or next;
        push @{ $threads{ ($pid ? "$comm-$pid" : "$comm-?") . "/$tid" } }, [ ($sec * 1000000 + $us) * 1000, $period, undef ];
    }
    check_times($label, $out, \%threads);
}

# ---- time_order => 0 (--no-time-order): every thread as summed stacks,
# sampled profiles whose per-thread weights are the sample counts CPython's
# own `replay --collapsed` gives (X.bin.collapsed.txt beside each file)
for my $bin (sort glob "$d/tachyon/real315/*.bin") {
    my $truth = "$bin.collapsed.txt";
    next unless -s $truth;
    (my $label = $bin) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/n.json";
    ok(convert_quietly($bin, { out => $out, to => 'speedscope', time_order => 0 }), "$label: time_order => 0 converted")
        or next;
    my $p = $json->decode(slurp($out));
    my @types = grep { $_->{type} ne 'sampled' } @{ $p->{profiles} };
    is(scalar @types, 0, "$label: time_order => 0: every thread a sampled profile");
    my %want;
    open my $fh, '<', $truth or die "$truth: $!";
    while (<$fh>) {
        $want{$1} += $2 if /\Atid:(\d+);.* (\d+)\s*\z/;
    }
    # weights are ns: samples x the file's interval, the same for every thread
    my @got = sort { $a <=> $b } map { my $w = 0; $w += $_ for @{ $_->{weights} }; $w } @{ $p->{profiles} };
    my @want = sort { $a <=> $b } values %want;
    my $iv = @want && $want[0] ? $got[0] / $want[0] : 0;
    is_deeply([ map { $iv ? $_ / $iv : $_ } @got ], \@want,
        "$label: time_order => 0: the threads' samples are CPython's (@want at " . $iv / 1e6 . ' ms)');
}

# the CLI's --no-time-order is time_order => 0
{
    my $bin = "$d/tachyon/real315/multithread_cpu_none.bin";
    my $out = "$tmp/cli.json";
    my $rc = system($^X, '-Mblib', "$here/../bin/profbridge", 'convert', '-q', '--no-time-order', '--to',
        'speedscope', '-o', $out, $bin);
    is($rc, 0, 'profbridge convert --no-time-order --to speedscope');
    my $p = -s $out ? $json->decode(slurp($out)) : { profiles => [] };
    is(join(',', sort map { $_->{type} } @{ $p->{profiles} }), join(',', ('sampled') x 5),
        '--no-time-order: its 5 threads as sampled profiles');
}

done_testing;
