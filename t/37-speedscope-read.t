#!perl
# speedscope JSON input (issue 38): hand-written files for every feature of
# speedscope 1.25's file-format-schema.json (t/data/speedscope/, each checked
# against the schema when PB_SPEEDSCOPE_SCHEMA names it and python3 has
# jsonschema), speedscope's own export of some of them and of V8, folded
# and our files (t/data/speedscope/exported/, made by speedscope 1.25.0's
# importer and exporter: speedscope-export.js there), and our own
# --to speedscope output of every t/data profile.
# Truth: a few lines of independent code over the JSON (JSON::PP): per
# profile and frame the self weight (innermost) and inclusive weight
# (anywhere in the stack, once per sample); for evented profiles the time
# between two events belongs to the stack open then, and the number of O
# events of a frame is its number of calls.  Checked: the collapsed output,
# for_chunks' SUB_CALLERS (exact counts and times of evented profiles), our
# --to speedscope read back against our collapsed output, info, dump,
# convert to every target, merge, diff, --thread, --report, a file larger
# than the decoder's 64 KB blocks with a key across two of them, and bad
# input.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(yajl);
use Stacks qw(slurp stack_corpus convert_quietly weight_unit_ns folded_weights speedscope_schema_check refused_texts);
use File::Temp qw(tempdir);
use JSON::PP ();
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb36-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @files = (glob("$d/speedscope/*.json"), glob("$d/speedscope/exported/*.json"));
plan skip_all => 'no speedscope files' unless @files;

sub spew { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die }

my %NS = (nanoseconds => 1, microseconds => 1e3, milliseconds => 1e6, seconds => 1e9, bytes => 1, none => 1);

# the truth of a speedscope file: { profile name => { self => {frame => w},
# incl => {frame => w}, opens => {frame => n} } }, weights in ns for time units
sub truth {
    my ($file) = @_;
    my $j = JSON::PP->new->decode(slurp($file));
    my $fr = $j->{shared}{frames};
    my %t;
    for my $p (@{ $j->{profiles} }) {
        my $u = $NS{ $p->{unit} };
        my $t = $t{ $p->{name} } //= { self => {}, incl => {}, opens => {} };
        my $add = sub {
            my ($stack, $w) = @_;
            return unless $w > 0;
            my @n = map { $fr->[$_]{name} } @$stack;
            @n = ('(no frame)') unless @n;
            $t->{self}{ $n[-1] } += $w;
            my %seen;
            $t->{incl}{$_} += $w for grep { !$seen{$_}++ } @n;
        };
        if ($p->{type} eq 'sampled') {
            $add->($p->{samples}[$_], sprintf('%.0f', $p->{weights}[$_] * $u)) for 0 .. $#{ $p->{samples} };
            next;
        }
        my (@open, $prev);
        for my $e (@{ $p->{events} }) {
            my $at = sprintf('%.0f', $e->{at} * $u);
            $add->([@open], $at - $prev) if @open;
            $prev = $at;
            if ($e->{type} eq 'O') { push @open, $e->{frame}; $t->{opens}{ $fr->[ $e->{frame} ]{name} }++ }
            else { pop @open }
        }
    }
    return \%t;
}

# the same tables from a collapsed file ("tid:<profile name>;stack w")
sub tables_of_collapsed {
    my ($file) = @_;
    my %t;
    my $text = Encode::decode('UTF-8', slurp($file));
    for (split /\n/, $text) {
        my ($th, $s, $w) = /\Atid:([^;]*);(.*) (\d+)\z/ or next;
        my @n = split /;/, $s;
        my $t = $t{$th} //= { self => {}, incl => {} };
        $t->{self}{ $n[-1] } += $w;
        my %seen;
        $t->{incl}{$_} += $w for grep { !$seen{$_}++ } @n;
    }
    return \%t;
}

# per thread (PID_START pid - 1 = the profile's index): calls and exclusive ns per callee sub
sub calls_of {
    my ($file, %o) = @_;
    my (%calls, %excl, $pid);
    &Devel::ProfileBridge::ReadStream::for_chunks({
        PID_START => sub { $pid = $_[1] },
        SUB_CALLERS => sub {
            my ($fid, $line, $count, $incl, $excl, $reci, $rdepth, $callee, $caller) = @_[1 .. $#_];
            (my $n = $callee) =~ s/\Amain:://;
            $calls{$pid}{$n} += $count;
            $excl{$pid}{$n} += $excl;
        } }, filename => $file, %o);
    for my $p (values %excl) {
        $_ = sprintf('%.0f', $_ * 1e9) for values %$p;
        delete @$p{ grep { !$p->{$_} } keys %$p }; # (a caller only: no self time)
    }
    return (\%calls, \%excl);
}

# ---- the schema -----------------------------------------------------------
my $schema = $ENV{PB_SPEEDSCOPE_SCHEMA};
my ($py) = grep { defined && -x && !system("$_ -c 'import jsonschema' 2>/dev/null") } '/usr/bin/python3';
SKIP: {
    skip 'no speedscope schema (PB_SPEEDSCOPE_SCHEMA) or python3 jsonschema', 1 unless $schema && -r $schema && $py;
    my ($rc, $out) = speedscope_schema_check($py, $schema, $tmp, @files);
    is($rc, 0, scalar(@files) . ' hand-written speedscope files valid against the package\'s schema') or diag $out;
}

# ---- every test file: self and inclusive weight, counts ---------------------
my %feature;
for my $f (@files) {
    (my $label = $f) =~ s{\A\Q$d/\E}{};
    is(Devel::ProfileBridge::detect_format($f)->{format}, 'speedscope', "$label: detected");
    my $want = truth($f);
    my $j = JSON::PP->new->decode(slurp($f));
    $feature{ $_->{type} }++, $feature{ $_->{unit} }++ for @{ $j->{profiles} };
    ok(convert_quietly($f, { out => "$tmp/x.folded", to => 'collapsed' }), "$label: converted") or diag $@;
    my $got = tables_of_collapsed("$tmp/x.folded");
    for my $name (sort keys %$want) {
        is_deeply($got->{$name}{self}, $want->{$name}{self}, "$label, profile '$name': self weight per frame");
        is_deeply($got->{$name}{incl}, $want->{$name}{incl}, "$label, profile '$name': inclusive weight per frame");
    }
    # every evented profile: exact calls (O events) and times through the span fold
    my @ev = grep { $_->{type} eq 'evented' } @{ $j->{profiles} };
    next unless @ev == @{ $j->{profiles} };
    my ($calls, $excl) = calls_of($f);
    for my $i (0 .. $#ev) {
        my $name = $ev[$i]{name};
        is_deeply($calls->{ $i + 1 }, $want->{$name}{opens}, "$label, profile '$name': calls = O events per frame");
        is_deeply($excl->{ $i + 1 }, $want->{$name}{self}, "$label, profile '$name': exclusive ns per sub");
    }
}
ok($feature{$_}, "the test files have $_ profiles") for qw(sampled evented nanoseconds microseconds milliseconds seconds bytes none);

# ---- speedscope's own reading: its export of a file reads as the file ------
# (speedscope exports every profile as evented; names and units are kept)
for my $n (qw(sampled_ms evented_two_threads profiles_first bytes)) {
    my ($orig, $exp) = ("$d/speedscope/$n.speedscope.json", "$d/speedscope/exported/$n.speedscope.json");
    next unless -f $exp;
    ok(convert_quietly($orig, { out => "$tmp/o.folded", to => 'collapsed' })
        && convert_quietly($exp, { out => "$tmp/e.folded", to => 'collapsed' }), "$n: both read") or diag $@;
    is_deeply(tables_of_collapsed("$tmp/e.folded"), tables_of_collapsed("$tmp/o.folded"),
        "$n: speedscope's export reads as the file it imported (self and inclusive weights per frame and profile)");
}
SKIP: {
    my $exp = "$d/speedscope/exported/ours_tachyon_multithread.speedscope.json";
    my $in = "$d/tachyon/multithread.bin";
    skip 'no Tachyon file', 1 unless -f $in && -f $exp;
    my $unit = do { local $SIG{__WARN__} = sub { }; weight_unit_ns($in) };
    convert_quietly($in, { out => "$tmp/o.folded", to => 'collapsed' });
    convert_quietly($exp, { out => "$tmp/e.folded", to => 'collapsed' });
    my $per_thread = sub {
        my %t;
        while (my ($k, $v) = each %{ $_[0] }) { my ($th, $s) = split /;/, $k, 2; $t{$th}{$s} += $v }
        return [ sort map { JSON::PP->new->canonical->encode($_) } values %t ];
    };
    is_deeply($per_thread->(folded_weights("$tmp/e.folded", thread => 1, utf8 => 1)),
        $per_thread->(folded_weights("$tmp/o.folded", thread => 1, unit => $unit, utf8 => 1)),
        "speedscope's export of our --to speedscope of a Tachyon file: our collapsed output, thread by thread");
}

# ---- our --to speedscope read back equals our collapsed output ------------
# every t/data profile with stacks (threads compared as tables: labels aside)
{
    my @corpus = (stack_corpus($d), grep { -f && !/\.(?:json|jsonl|txt|py|md|go|c|pl)\z/ }
        glob("$d/folded/*"), glob("$d/pprof/*"), glob("$d/nytprof/*.out"), glob("$d/pynytprof/*"));
    my $n = 0;
    for my $in (@corpus) {
        (my $label = $in) =~ s{\A\Q$d/\E}{};
        my $unit = do { local $SIG{__WARN__} = sub { }; weight_unit_ns($in) };
        unlink "$tmp/o.folded", "$tmp/o.json", "$tmp/b.folded";
        next unless convert_quietly($in, { out => "$tmp/o.folded", to => 'collapsed' });
        ok(convert_quietly($in, { out => "$tmp/o.json", to => 'speedscope' })
            && convert_quietly("$tmp/o.json", { out => "$tmp/b.folded", to => 'collapsed' }),
            "$label: --to speedscope, read back") or do { diag $@; next };
        my $per_thread = sub {
            my ($w) = @_;
            my %t;
            while (my ($k, $v) = each %$w) { my ($th, $s) = split /;/, $k, 2; $t{$th}{$s} += $v }
            return [ sort map { JSON::PP->new->canonical->encode($_) } values %t ];
        };
        if ($label =~ m{\Afolded/}) {
            # folded in, collapsed out keeps the input's own lines (its frames
            # as written, no tid: root where it had none); speedscope carries
            # names: compare by function name, threads summed
            my %want;
            for (split /\n/, Encode::decode('UTF-8', slurp("$tmp/o.folded"))) {
                my ($s, $n) = /\A(.*) (\d+)\z/ or next;
                my @f = grep { !/\A(?:tid|pid):/ } split /;/, $s;
                s/\A.*?:(.+):\d+\z/$1/ for @f;
                $want{ join ';', @f } += $n * $unit;
            }
            is_deeply(folded_weights("$tmp/b.folded", utf8 => 1), \%want,
                "$label: read back = our collapsed output, by function name");
            $n++;
            next;
        }
        my $unit_back = $unit;
        $unit_back = 1 if $unit != 1; # the speedscope file has ns
        is_deeply($per_thread->(folded_weights("$tmp/b.folded", thread => 1, utf8 => 1)),
            $per_thread->(folded_weights("$tmp/o.folded", thread => 1, unit => $unit, utf8 => 1)),
            "$label: read back = our collapsed output, thread by thread");
        $n++;
    }
    ok($n >= 10, "$n t/data profiles read back");
}

# ---- info, dump, convert to every target, merge, diff, --thread, --report ----
my $ev = "$d/speedscope/evented_two_threads.speedscope.json";
my $sm = "$d/speedscope/sampled_ms.speedscope.json";
{
    my ($i) = Devel::ProfileBridge::info($ev);
    is($i->{format}, 'speedscope', 'info: the format');
    is(scalar @{ $i->{threads} }, 2, 'info: two profiles, two threads');
    is_deeply([ sort map { $_->{name} } @{ $i->{threads} } ], [ 'worker 1', 'worker 2' ], 'info: thread names');
    ok(Devel::ProfileBridge::features()->{read}{speedscope}, 'features(): speedscope read');

    my $out = "$tmp/d.jsonl";
    ok(eval { Devel::ProfileBridge::dump_json($sm, output => $out); 1 }, 'dump') or diag $@;
    like(slurp($out), qr/"SUB_CALLERS"/, 'dump: SUB_CALLERS lines');

    for my $f ($ev, $sm) {
        for my $to (grep { $_ ne 'dump' } sort keys %{ Devel::ProfileBridge::features()->{write} }) {
            my $o = "$tmp/t-$to-" . ($f eq $ev ? 'e' : 's') . '.out';
            ok(eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $f, out => $o, to => $to); 1 }
                && grep({ -s } glob("$o*")), "convert to $to: " . ($f eq $ev ? 'evented' : 'sampled')) or diag $@;
        }
    }

    # --thread: by index and by name
    ok(convert_quietly($ev, { out => "$tmp/th.folded", to => 'collapsed', thread => 1 }), '--thread 1') or diag $@;
    is_deeply([ sort keys %{ tables_of_collapsed("$tmp/th.folded") } ], ['worker 2'], '... profile 1 only');
    ok(convert_quietly($ev, { out => "$tmp/th.folded", to => 'collapsed', thread => 'worker 1' }), '--thread NAME') or diag $@;
    is_deeply([ sort keys %{ tables_of_collapsed("$tmp/th.folded") } ], ['worker 1'], '... that profile only');
    ok(!eval { Devel::ProfileBridge::convert(in => $ev, out => "$tmp/th.folded", to => 'collapsed', thread => 7); 1 },
        '--thread 7: no such profile');
    like($@, qr/^speedscope: unsupported: \S+: no profile 7 in this file \(profiles: 0 "worker 1", 1 "worker 2"\)/, '... the message');

    # merge with a Tachyon file: the sum
    my $tach = "$d/tachyon/cpu_recursion.bin";
    SKIP: {
        skip 'no Tachyon test file', 2 unless -f $tach;
        my $sum = sub { my $n = 0; $n += $_ for values %{ $_[0] }; $n };
        convert_quietly($tach, { out => "$tmp/ta.folded", to => 'collapsed' });
        my $two = $sum->(folded_weights("$tmp/ta.folded")) * weight_unit_ns($tach);
        my $one = 0;
        $one += $_ for values %{ truth($sm)->{MainThread}{self} };
        ok(eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::merge(in => [ $sm, $tach ], out => "$tmp/m.folded", to => 'collapsed'); 1 },
            'merge: a speedscope file and a Tachyon file') or diag $@;
        is($sum->(folded_weights("$tmp/m.folded")), $one + $two, "merged: $one + $two ns");
    }

    # diff: before and after
    my $cli = "$FindBin::Bin/../bin/profbridge";
    my @perl = ($^X, (map { "-I$_" } @INC));
    my $rc = system(join(' ', map { "'$_'" } @perl, $cli, 'diff', $sm, "$d/speedscope/profiles_first.speedscope.json",
        '-o', "$tmp/diff.folded") . " 2>'$tmp/err'");
    is($rc, 0, 'diff of two speedscope files') or diag slurp("$tmp/err");
    like(slurp("$tmp/diff.folded"), qr/^\S.* \d+ \d+$/m, '... two columns');

    # --report: the column numbers no target keeps
    $rc = system(join(' ', map { "'$_'" } @perl, $cli, 'convert', $sm, '--to', 'collapsed', '-o', "$tmp/r.folded",
        '--report') . " 2>'$tmp/err'");
    is($rc, 0, 'convert --report');
    my $cols = grep { exists $_->{col} } @{ JSON::PP->new->decode(slurp($sm))->{shared}{frames} };
    like(slurp("$tmp/err"), qr/column numbers of frames \(col\).*\b$cols\b/, "--report: the $cols frames with a column");
}

# ---- larger than the 64 KB blocks: shared last, a key across two blocks ----
{
    my $n = 30000;
    my @s = map { [ 0, 1 + $_ % 3 ] } 0 .. $n - 1;
    my @w = map { 1 + $_ % 7 } 0 .. $n - 1;
    my $samples = JSON::PP->new->encode(\@s);
    my $head = qq({"profiles":[{"type":"sampled","name":"big","unit":"microseconds","startValue":0,"endValue":1,"samples":$samples,);
    # "weights" straddles byte 65536 when it starts there
    my $pad = 65536 - 3 - length($head);
    $pad += 65536 while $pad < 0;
    my $text = $head . (' ' x $pad) . '"weights":' . JSON::PP->new->encode(\@w)
        . qq(}],"shared":{"frames":[{"name":"root"},{"name":"a"},{"name":"b"},{"name":"c"}]},)
        . qq("\$schema":"https://www.speedscope.app/file-format-schema.json"});
    ok(length($text) > 3 * 65536, 'a file of ' . length($text) . ' bytes');
    spew("$tmp/big.json", $text);
    my $want = truth("$tmp/big.json");
    ok(convert_quietly("$tmp/big.json", { out => "$tmp/big.folded", to => 'collapsed' }), 'converted') or diag $@;
    is_deeply(tables_of_collapsed("$tmp/big.folded")->{big}, { self => $want->{big}{self}, incl => $want->{big}{incl} },
        'self and inclusive weights over several blocks');
}

# ---- many top-level spans (the span fold seals them as the stack empties) ----
{
    my (@ev, $at);
    $at = 0;
    for my $i (0 .. 4999) {
        my @f = map { ($i + $_) % 4 } 0 .. $i % 3;
        push @ev, { type => 'O', frame => $_, at => $at += 3 } for @f;
        push @ev, { type => 'C', frame => $_, at => $at += 2 } for reverse @f;
    }
    my $j = { '$schema' => 'https://www.speedscope.app/file-format-schema.json',
        shared => { frames => [ map { { name => "s$_" } } 0 .. 3 ] },
        profiles => [ { type => 'evented', name => 'tops', unit => 'nanoseconds', startValue => 0, endValue => $at,
            events => \@ev } ] };
    spew("$tmp/tops.json", JSON::PP->new->canonical->encode($j));
    my $want = truth("$tmp/tops.json");
    my ($calls, $excl) = calls_of("$tmp/tops.json");
    is_deeply($calls->{1}, $want->{tops}{opens}, '5000 top-level span trees: calls = O events per frame');
    is_deeply($excl->{1}, $want->{tops}{self}, '... exclusive ns per sub');
    my %a;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } = $_[2] } }, filename => "$tmp/tops.json");
    is($a{thread_1_top_level}, 5000, '... 5000 top-level spans');
}

# ---- deeper than the span fold's 254 levels: folded as samples ----------------
{
    my @ev = ((map { { type => 'O', frame => 0, at => $_ } } 0 .. 299), (map { { type => 'C', frame => 0, at => 300 + $_ } } 0 .. 299));
    my $j = { '$schema' => 'https://www.speedscope.app/file-format-schema.json', shared => { frames => [ { name => 'rec' } ] },
        profiles => [ { type => 'evented', name => 'deep', unit => 'nanoseconds', startValue => 0, endValue => 600, events => \@ev } ] };
    spew("$tmp/deep.json", JSON::PP->new->canonical->encode($j));
    my $want = truth("$tmp/deep.json");
    ok(convert_quietly("$tmp/deep.json", { out => "$tmp/deep.folded", to => 'collapsed' }, { out => "$tmp/deep.nytprof" }),
        '300 nested O events: converted to collapsed and nytprof') or diag $@;
    is_deeply(tables_of_collapsed("$tmp/deep.folded")->{deep}, { self => $want->{deep}{self}, incl => $want->{deep}{incl} },
        '... self and inclusive weight');
    my (undef, $excl) = calls_of("$tmp/deep.json");
    is_deeply($excl->{1}, $want->{deep}{self}, '... exclusive ns through the sample fold');
}

# ---- detection: profiles first, a profile's keys in any order ----------------
for my $t ('{"profiles":[{"events":[{"at":0,"frame":0,"type":"O"},{"at":1,"frame":0,"type":"C"}]',
    '{"profiles":[{"samples":[[0]],"weights":[1]', '{"profiles":[{"type":"sampled"') {
    spew("$tmp/det.json", $t . (' ' x 5000) . '}]}');
    is(Devel::ProfileBridge::detect_format("$tmp/det.json")->{format}, 'speedscope', "detected: " . substr($t, 0, 30));
}
spew("$tmp/det.json", '{"profiles":[], "other": 1}');
ok(!Devel::ProfileBridge::detect_format("$tmp/det.json")->{format}, 'an object with "profiles" alone is not speedscope');

# ---- bad input: "speedscope: <class>: <what> at byte N of F" ----------------
{
    my $S = '"$schema":"https://www.speedscope.app/file-format-schema.json"';
    my $fr = '"shared":{"frames":[{"name":"a"},{"name":"b"}]}';
    my $evp = sub { qq({$S,$fr,"profiles":[{"type":"evented","name":"x","unit":"nanoseconds","startValue":0,"endValue":9,"events":[$_[0]]}]}) };
    my $o = sub { qq({"type":"$_[0]","frame":$_[1],"at":$_[2]}) };
    my @cases = (
        [ 'unbalanced', $evp->(join ',', $o->('O', 0, 0), $o->('O', 1, 1), $o->('C', 0, 2), $o->('C', 1, 3)),
          qr/^speedscope: corrupt: a C event closes frame 0, but frame 1 was opened last at byte \d+ of / ],
        [ 'close-first', $evp->($o->('C', 0, 0)), qr/^speedscope: corrupt: a C event closes frame 0, but no frame is open at byte \d+/ ],
        [ 'left-open', $evp->($o->('O', 0, 0)), qr/^speedscope: corrupt: evented profile 0 ends with 1 frame still open/ ],
        [ 'backwards', $evp->(join ',', $o->('O', 0, 5), $o->('C', 0, 2)), qr/^speedscope: corrupt: an event's at \(2\) is before/ ],
        [ 'frame-index', $evp->(join ',', $o->('O', 5, 0), $o->('C', 5, 2)),
          qr/^speedscope: corrupt: an event names frame 5, but shared.frames has 2 frames at byte \d+/ ],
        [ 'units', qq({$S,$fr,"profiles":[{"type":"sampled","name":"x","unit":"bytes","startValue":0,"endValue":1,"samples":[[0]],"weights":[1]},)
            . qq({"type":"sampled","name":"y","unit":"seconds","startValue":0,"endValue":1,"samples":[[1]],"weights":[1]}]}),
          qr/^speedscope: unsupported: the profiles are in units that do not add up \(0 bytes, 1 seconds\): pick profiles of one kind with --thread/ ],
        [ 'counts', qq({$S,$fr,"profiles":[{"type":"sampled","name":"x","unit":"bytes","startValue":0,"endValue":1,"samples":[[0],[1]],"weights":[1]}]}),
          qr/^speedscope: corrupt: sampled profile 0 has 2 samples but 1 weights at byte \d+/ ],
        [ 'truncated', substr($evp->($o->('O', 0, 0) . ',' . $o->('C', 0, 1)), 0, 150),
          qr/^speedscope: truncated: the JSON object ends before it is closed .* at byte 150 of / ],
        [ 'type', qq({$S,$fr,"profiles":[{"type":"flame","name":"x","unit":"none","startValue":0,"endValue":1}]}),
          qr/^speedscope: unsupported: a profile of type "flame"/ ],
    );
    refused_texts(undef, $tmp, map { [ $_->[1], $_->[2], name => $_->[0], chunks => 1 ] } @cases);
}

# a consumer that stops inside an event (its error is the one reported), and
# the fuzz finding where a stopped consumer gave "corrupt:" with no message
{
    for my $f ($ev, $sm) {
        my $n = 0;
        ok(!eval { Devel::ProfileBridge::ReadStream::for_chunks(sub { die "stop here\n" if $_[0] eq 'TIME_LINE' && ++$n == 3 },
            filename => $f); 1 }, 'a callback that dies stops the read');
        is($@, "stop here\n", '... with its own error');
    }
    my $c = "$d/crashers/speedscope/sink-stop-empty-message";
    ok(!eval { Devel::ProfileBridge::convert(in => $c, out => "$tmp/c.nytprof"); 1 }, 'the fuzz finding: refused');
    like($@, qr/^nytprof-writer: limit: .* past max_line/, '... by the writer\'s max_line, with its message');
}

# limits
for my $l ([ max_frames => 2, qr/^speedscope: limit: more frames than max_frames \(2\) allows at byte \d+ of / ],
    [ max_stack_depth => 1, qr/^speedscope: limit: frames nest deeper than max_stack_depth \(1\) at byte \d+ of / ],
    [ max_record_size => 2, qr/^speedscope: limit: a string longer than max_record_size at byte \d+ of / ]) {
    my ($k, $v, $re) = @$l;
    ok(!eval { Devel::ProfileBridge::convert(in => $ev, out => "$tmp/lim.folded", to => 'collapsed', $k => $v); 1 },
        "$k => $v: refused");
    like($@, $re, "... a limit error");
}

done_testing;
