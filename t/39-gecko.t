#!perl
# --to gecko (a raw Gecko profile in the old Firefox DevTools wrapper: the
# Firefox Profiler and the speedscope app open it; xt/gecko-speedscope-app.t
# loads it in the real speedscope app).
#  1. Every real CPython 3.15 Tachyon file: ours against CPython's own
#     `profiling.sampling replay --gecko -o` of the same .bin (committed
#     beside it as X.bin.gecko.json.gz): the same threads, samples per
#     thread, per-function self samples, sample times to the microsecond
#     and status markers (name, start, end), read by the few lines below.
#  2. Every corpus profile: valid JSON with the fields the Firefox
#     Profiler's processGeckoProfile reads, and every thread's stacks and
#     weights are our collapsed output's.
#  3. EasyProfiler and speedscope evented inputs: every block is an interval
#     marker at its begin and end (ns), against the source's own JSON.
#  4. A merge: the inputs' threads side by side.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;
use Needs qw(zstd);
use Stacks qw(slurp stack_corpus convert_quietly);
use File::Temp qw(tempdir);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d   = "$FindBin::Bin/data";
my $tmp = tempdir('pb39-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;

# our file: the old Firefox DevTools wrapper { systemHost, duration, profile };
# its raw Gecko profile (the wrapper itself in $wrapper)
my $wrapper;
sub gecko {
    my ($in, $out) = @_;
    convert_quietly($in, { out => $out, to => 'gecko' }) or return;
    $wrapper = $json->decode(slurp($out));
    return $wrapper->{profile};
}

# a raw Gecko table's rows as { column => value } hashes
sub rows {
    my ($t) = @_;
    my %s = %{ $t->{schema} };
    return map { my $r = $_; +{ map { ($_ => $r->[ $s{$_} ]) } keys %s } } @{ $t->{data} };
}

# a function's name in our location strings ("name (file:line)", "name (in
# file)", "name ()"), as speedscope's importer reads one
sub loc_name { $_[0] =~ /\A(.*)\s+\((.*?)(?::\d+)?\)\z/s ? $1 : die "location: $_[0]" }

# a thread's samples, self counts by function name, times (µs) and markers:
# CPython's processed profile (shared.stringArray, column tables) ...
sub summary_processed {
    my ($p) = @_;
    my $str = $p->{shared}{stringArray};
    my %t;
    for my $th (@{ $p->{threads} }) {
        my ($s, $st, $fr, $fn, $m) = @{$th}{qw(samples stackTable frameTable funcTable markers)};
        my %self;
        $self{ $str->[ $fn->{name}[ $fr->{func}[ $st->{frame}[$_] ] ] ] }++ for @{ $s->{stack} };
        $t{ $th->{tid} } = {
            samples => $s->{length},
            self    => \%self,
            times   => [ map { sprintf '%.0f', $_ * 1000 } @{ $s->{time} } ],
            markers => [ sort map {
                sprintf '%s %.0f %.0f', $str->[ $m->{name}[$_] ], $m->{startTime}[$_] * 1000, $m->{endTime}[$_] * 1000
            } 0 .. $m->{length} - 1 ],
        };
    }
    return \%t;
}
# ... and ours: the raw Gecko profile in the DevTools wrapper (per thread a
# stringTable and { schema, data } row tables); the last sample, of no stack,
# only ends the one before it (speedscope's importer needs it): not a sample
sub summary_raw {
    my ($p) = @_;
    my %t;
    for my $th (@{ $p->{threads} }) {
        my ($sc, $rows) = @{ $th->{samples} }{qw(schema data)};
        my @rows = grep { defined $_->[ $sc->{stack} ] } @$rows;
        my ($ss, $fs, $str) = ($th->{stackTable}, $th->{frameTable}, $th->{stringTable});
        my %self;
        $self{ loc_name($str->[ $fs->{data}[ $ss->{data}[ $_->[ $sc->{stack} ] ][ $ss->{schema}{frame} ] ][ $fs->{schema}{location} ] ]) }++
            for @rows;
        my $ms = $th->{markers}{schema};
        $t{ $th->{tid} } = {
            samples => scalar @rows,
            self    => \%self,
            times   => [ map { sprintf '%.0f', $_->[ $sc->{time} ] * 1000 } @rows ],
            markers => [ sort map {
                sprintf '%s %.0f %.0f', $str->[ $_->[ $ms->{name} ] ], $_->[ $ms->{startTime} ] * 1000, $_->[ $ms->{endTime} ] * 1000
            } @{ $th->{markers}{data} } ],
        };
    }
    return \%t;
}

# 1. CPython's own Gecko output
for my $bin (glob "$d/tachyon/real315/*.bin") {
    (my $label = $bin) =~ s{.*/}{};
    gunzip("$bin.gecko.json.gz" => \my $ref) or die $GunzipError;
    my $want = summary_processed($json->decode($ref));
    my $got  = gecko($bin, "$tmp/r.json");
    ok($got, "$label: converted") or next;
    $got = summary_raw($got);
    is_deeply([ sort keys %$got ], [ sort keys %$want ], "$label: the threads CPython writes");
    for my $tid (sort keys %$want) {
        my ($g, $w) = ($got->{$tid} || {}, $want->{$tid});
        is($g->{samples}, $w->{samples}, "$label thread $tid: $w->{samples} samples");
        is_deeply($g->{self}, $w->{self}, "$label thread $tid: self samples per function");
        is_deeply($g->{times}, $w->{times}, "$label thread $tid: sample times to the µs");
        is_deeply($g->{markers}, $w->{markers}, "$label thread $tid: " . @{ $w->{markers} } . ' markers');
    }
}

# 2. every corpus profile: the fields, and the stacks our collapsed output has
my @corpus = (stack_corpus($d), glob("$d/pprof/*.prof"), glob("$d/pprof/*.pb"), glob("$d/folded/*.folded"),
    glob("$d/folded/*.collapsed"), glob("$d/perf/*.perf"), glob("$d/speedscope/*.speedscope.json"));
for my $in (@corpus) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    convert_quietly($in, { out => "$tmp/c.folded", to => 'collapsed' }) or next;    # not a stack profile
    my $p = gecko($in, "$tmp/g.json");
    ok($p, "$label: valid JSON") or next;
    ok(defined $p->{meta}{$_}, "$label: meta.$_") for qw(interval startTime version product categories markerSchema);
    is($wrapper->{systemHost}{name}, 'Firefox', "$label: in the DevTools wrapper (systemHost.name Firefox)");
    ok(ref $p->{$_} eq 'ARRAY', "$label: $_") for qw(libs threads processes pausedRanges);
    my (%got, %want);
    my $end = 0;
    for my $th (@{ $p->{threads} }) {
        ok(defined $th->{$_}, "$label: thread $th->{tid}: $_") for qw(name tid pid processType registerTime samples stackTable frameTable markers stringTable);
        ok(exists $th->{samples}{schema}{eventDelay}, "$label: thread $th->{tid}: samples.schema.eventDelay (the Firefox Profiler needs it)");
        my $ns = ($th->{samples}{weightType} // '') eq 'tracing-ms' ? 1e6 : 1;
        my @st = rows($th->{stackTable});
        my @fr = rows($th->{frameTable});
        my @s  = rows($th->{samples});
        is($s[-1]{stack}, undef, "$label: thread $th->{tid}: ends with a sample of no stack");
        $end = $s[-1]{time} if @s && $s[-1]{time} > $end;
        for my $x (grep { defined $_->{stack} } @s) {
            my @names;
            for (my $k = $x->{stack}; defined $k; $k = $st[$k]{prefix}) {
                unshift @names, loc_name($th->{stringTable}[ $fr[ $st[$k]{frame} ]{location} ]);
            }
            $got{ join ';', $th->{tid}, @names } += sprintf '%.0f', ($x->{weight} // 1) * $ns;
        }
    }
    is($wrapper->{duration}, $end, "$label: the wrapper's duration is where the last thread's samples end");
    # a line without a thread's tid: frame (one thread) is keyed by its stack alone
    open my $fh, '<:raw', "$tmp/c.folded" or die;
    my $one;
    while (<$fh>) {
        my ($t, $s, $n) = /\A(?:tid:([^;]*);)?(.*) (\d+)\n?\z/ or next;
        utf8::decode($s);
        # folded input comes back verbatim in collapsed output: CPython's
        # "file:function:line" frames are the function in a gecko file
        $s = join ';', map { /\A[^:;]*:([^;]+):\d+\z/ ? $1 : $_ } split /;/, $s if $label =~ m{\Afolded/};
        $want{ defined $t ? "$t;$s" : $s } += $n;
        $one = 1 if !defined $t;
    }
    %got = map { (s/\A[^;]*;//r => $got{$_}) } keys %got if $one && @{ $p->{threads} } == 1;
    is_deeply(\%got, \%want, "$label: every thread's stacks and weights are our collapsed output's ("
        . scalar(keys %want) . ')');
    like($p->{meta}{profbridge}{sampleTimes}, qr/\A(?:recorded|spread )/, "$label: meta says how samples are timed");
}

# recorded times: V8's startTime + timeDeltas, perf script's sample times (µs)
sub times_us {
    my ($p) = @_;
    my $o = $p->{meta}{profbridge}{timeOriginNs} / 1000;
    return map { sprintf '%.0f', $o + $_->{time} * 1000 } grep { defined $_->{stack} } map { rows($_->{samples}) } @{ $p->{threads} };
}
for my $in (glob("$d/v8/*.cpuprofile"), glob("$d/perf/*.perf")) {
    (my $label = $in) =~ s{.*/}{};
    my %want;
    if ($in =~ /cpuprofile\z/) {
        my $src = $json->decode(slurp($in));
        my $t = $src->{startTime};
        $want{ $t += $_ } = 1 for @{ $src->{timeDeltas} };
    } else {
        my $text = slurp($in);
        $want{ sprintf '%.0f', $1 * 1e6 } = 1 while $text =~ /^\s*\S[^\n]*?\s(\d+\.\d+):\s/mg;
    }
    my $p = gecko($in, "$tmp/t.json") or next;
    my @got = times_us($p);
    if (!%want) {    # perf script run without the time field
        like($p->{meta}{profbridge}{sampleTimes}, qr/\Aspread /, "$label: no times in the file: spread, and meta says so");
        next;
    }
    is($p->{meta}{profbridge}{sampleTimes}, 'recorded', "$label: sample times recorded");
    is_deeply([ grep { !$want{$_} } @got ], [], "$label: all " . @got . ' samples at times the file records');
}

# 3. blocks as interval markers at their real begin and end
sub markers_ns {
    my ($p) = @_;
    my $o = $p->{meta}{profbridge}{timeOriginNs};
    my @m;
    for my $th (@{ $p->{threads} }) {
        push @m, map { sprintf '%s %.0f %.0f', $th->{stringTable}[ $_->{name} ], $o + $_->{startTime} * 1e6, $o + $_->{endTime} * 1e6 }
            grep { $_->{data}{type} eq 'Span' } rows($th->{markers});
    }
    return [ sort @m ];
}
for my $in (glob "$d/easyprofiler/*.prof") {
    next unless -e "$in.json";
    (my $label = $in) =~ s{.*/}{};
    my $src = $json->decode(slurp("$in.json"));
    my @want;
    my $walk;
    no warnings 'recursion';
    $walk = sub {
        for my $b (@_) {
            push @want, sprintf '%s %s %s', $b->{name}, $b->{start}, $b->{stop};    # events too: spans of no length
            $walk->(@{ $b->{children} || [] });
        }
    };
    $walk->(@{ $_->{children} || [] }) for @{ $src->{threads} };
    my $p = gecko($in, "$tmp/e.json");
    is_deeply(markers_ns($p), [ sort @want ], "$label: its " . @want . ' blocks are interval markers at their begin and end (ns)');
}
for my $in (grep { slurp($_) =~ /"evented"/ } glob "$d/speedscope/*.speedscope.json") {
    (my $label = $in) =~ s{.*/}{};
    my $src = $json->decode(slurp($in));
    my %ns = (none => 1, nanoseconds => 1, microseconds => 1e3, milliseconds => 1e6, seconds => 1e9);
    my @want;
    # our reader's clock: ns after the earliest startValue
    my ($base) = sort { $a <=> $b } map { $_->{startValue} * $ns{ $_->{unit} } } @{ $src->{profiles} };
    for my $pr (grep { $_->{type} eq 'evented' } @{ $src->{profiles} }) {
        my @open;
        for my $e (@{ $pr->{events} }) {
            my $at = $e->{at} * $ns{ $pr->{unit} } - $base;
            if ($e->{type} eq 'O') { push @open, [ $e->{frame}, $at ] }
            else { my $o = pop @open; push @want, sprintf '%s %.0f %.0f', $src->{shared}{frames}[ $o->[0] ]{name}, $o->[1], $at }
        }
    }
    my $p = gecko($in, "$tmp/s.json");
    is_deeply(markers_ns($p), [ sort @want ], "$label: its " . @want . ' events are interval markers at their open and close (ns)');
}

# a spool that cannot be made: an io error naming where, and no output
{
    local $ENV{TMPDIR} = "$tmp/no-such-dir";
    ok(!eval { Devel::ProfileBridge::convert(in => "$d/tachyon/real315/recursive_cpu_nogc_none.bin", out => "$tmp/x.json",
        to => 'gecko'); 1 }, 'no spool directory: the conversion fails');
    like("$@", qr/\Agecko: io: .*cannot create the writer's spool file in \Q$tmp\E\/no-such-dir: /, '... with an io error naming it');
    ok(!-e "$tmp/x.json", '... and writes no output');
}

# 4. merge: the inputs' threads side by side
Devel::ProfileBridge::merge(in => [ "$d/tachyon/real315/multithread_gil_zstd.bin", "$d/easyprofiler/ep_basic.prof" ],
    out => "$tmp/m.json", to => 'gecko');
my $m = $json->decode(slurp("$tmp/m.json"))->{profile};
my $one = gecko("$d/tachyon/real315/multithread_gil_zstd.bin", "$tmp/one.json");
my $two = gecko("$d/easyprofiler/ep_basic.prof", "$tmp/two.json");
is(scalar @{ $m->{threads} }, @{ $one->{threads} } + @{ $two->{threads} }, 'a merge of two inputs: their threads side by side');

done_testing;
