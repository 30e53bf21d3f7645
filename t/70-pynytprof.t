#!perl
# Pynytprof output, all four dialects (issue 6).
#
# Ground truth: t/data/pynytprof/**/*.truth.json, written by Pynytprof's own
# reader (src/pynytprof/reader.py) at the commit that wrote each file.  For
# dialect D (no truth file; Pynytprof has no reader for it) the fixed-width
# P record and the NEW_FID are unpacked here, independently of the C decoder.
#
# Checked:
#   - detect_format names the dialect; ATTRIBUTE source_format/source_dialect;
#   - every S line: NYTProf statement count (TIME_LINEs minus DISCOUNTed ones)
#     == calls, summed TIME_LINE ticks == exc_ticks, ATTRIBUTE
#     pynytprof_inc_ticks:<fid>:<line> == inc_ticks;
#   - every D sub as SUB_INFO main::<name> (dialect C: main::pynytprof_sid_<sid>);
#   - every C edge as SUB_CALLERS with the same count and ticks, as NYTProf
#     counts them: a self edge (recursion) has its ticks as reci_time and
#     inclusive 0, the others as inclusive; each sub's exclusive ticks (summed
#     over its SUB_CALLERS) are its in-edge ticks minus its out-edge ticks
#     (0 if less), and no sub's exclusive time exceeds the run (PID_END -
#     PID_START), nor do all together;
#   - dialect B's ":application=-e" becomes the program's path (the title);
#   - PID_START pid/ppid/time as the file has them (C, D);
#   - the converted nytprof.out loads in the real Devel::NYTProf::Data with no
#     warning, its per-line counts/times and per-sub call counts equal the
#     truth, every sub's exclusive time is within profiler_active, subs
#     defined once in the program beside the profile (dialect B) have its
#     def/class lines (not xsubs), <module> the whole file, and the real
#     nytprofhtml renders it (exit 0) with the program as its title;
#   - dialect D's own SUB_INFO lines and SUB_CALLERS call lines (no real file
#     has them: a copy of fib.nytprof.out with them added) reach nytprofhtml.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use RawFile qw(slurp_raw);
use File::Find;
use File::Temp qw(tempdir);
use JSON::PP;
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $dir = 't/data/pynytprof';
my @files;
find(sub { push @files, $File::Find::name if /\.nytprof\.out\z/ }, $dir);
@files = sort @files;
cmp_ok(scalar @files, '>=', 8, 'pynytprof fixtures present');

my %want_dialect = (A_binmagic => 'A', B_ascii => 'B', C_rawP => 'C');
sub dialect_of {
    my ($f) = @_;
    for my $k (keys %want_dialect) { return $want_dialect{$k} if $f =~ /\Q$k\E/ }
    return 'D';
}


# everything the stream says, aggregated
sub read_stream {
    my ($file) = @_;
    my %s = (lines => {}, attr => {}, subs => {}, edges => []);
    my $discount = 0;
    for_chunks {
        my ($tag, @a) = @_;
        if ($tag eq 'ATTRIBUTE') { $s{attr}{ $a[0] } = $a[1] }
        elsif ($tag eq 'PID_START') { $s{pid_start} = [@a] }
        elsif ($tag eq 'PID_END') { $s{pid_end} = [@a] }
        elsif ($tag eq 'NEW_FID') { push @{ $s{fids} }, [@a] }
        elsif ($tag eq 'DISCOUNT') { $discount = 1 }
        elsif ($tag eq 'TIME_LINE') {
            my ($ticks, $fid, $line) = @a;
            $ticks -= 2**64 if $ticks >= 2**63;
            my $l = $s{lines}{"$fid:$line"} ||= [0, 0];
            $l->[0] += $discount ? 0 : 1;
            $l->[1] += $ticks;
            $discount = 0;
        }
        elsif ($tag eq 'SUB_INFO') { $s{subs}{ $a[3] } = [@a] }
        elsif ($tag eq 'SUB_CALLERS') { push @{ $s{edges} }, [@a] }
    } filename => $file;
    return \%s;
}

my $nytprofhtml = (grep { -x "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];
my $tmp = tempdir(CLEANUP => 1);
my $converter =
    Devel::ProfileBridge->can('convert')
  ? sub { Devel::ProfileBridge::convert(in => $_[0], out => $_[1], format => 'pynytprof') }
  : $ENV{PB_PBCONVERT}    # the C tool t/c/pbconvert.c, while the Perl convert() is not there
  ? sub { system($ENV{PB_PBCONVERT}, '-z', '0', $_[0], $_[1]) == 0 or die "pbconvert failed\n" }
  : undef;

for my $file (@files) {
    (my $name = $file) =~ s{^\Q$dir\E/}{};
    my $dialect = dialect_of($file);
    my $info = Devel::ProfileBridge::detect_format($file);
    is($info->{format}, 'pynytprof', "$name: detected as pynytprof");
    is($info->{dialect}, $dialect, "$name: dialect $dialect");

    my $s = read_stream($file);
    is($s->{attr}{source_format}, 'pynytprof', "$name: ATTRIBUTE source_format");
    is($s->{attr}{source_dialect}, $dialect, "$name: ATTRIBUTE source_dialect");
    ok($s->{pid_start} && $s->{pid_end}, "$name: PID_START and PID_END");

    my $truth;
    if (-f "$file.truth.json") {
        $truth = decode_json(slurp_raw("$file.truth.json"));
        my $fidmap = sub { $_[0] == 0 ? 1 : $_[0] };    # file fid 0 becomes 1; C already uses 1
        my @bad;
        for my $l (@{ $truth->{lines} }) {
            my $key = $fidmap->($l->{fid}) . ":$l->{line}";
            my $got = $s->{lines}{$key} || [0, 0];
            my $inc = $s->{attr}{"pynytprof_inc_ticks:$key"};
            push @bad, "$key: count $got->[0]/$l->{calls} exc $got->[1]/$l->{exc_ticks} inc "
              . ($inc // 'none') . "/$l->{inc_ticks}"
              unless $got->[0] == $l->{calls} && $got->[1] == $l->{exc_ticks}
              && defined $inc && $inc == $l->{inc_ticks};
        }
        is_deeply(\@bad, [], "$name: all " . scalar(@{ $truth->{lines} }) . " lines: counts, exclusive and inclusive ticks");
        is(scalar keys %{ $s->{lines} }, scalar @{ $truth->{lines} }, "$name: no lines beyond the file's");

        my %sid_name = map { $_->{sid} => "main::$_->{name}" } @{ $truth->{subs} || [] };
        my $sub_of = sub { $sid_name{ $_[0] } // "main::pynytprof_sid_$_[0]" };
        for my $sid (sort keys %sid_name) {
            ok($s->{subs}{ $sid_name{$sid} }, "$name: SUB_INFO $sid_name{$sid}");
        }
        my @want = sort map {
            join ' ', $sub_of->($_->{caller_sid}), $sub_of->($_->{callee_sid}), $_->{calls}, $_->{ticks},
                $_->{caller_sid} == $_->{callee_sid} ? 'recursive' : 'inclusive'
        } @{ $truth->{call_edges} };
        my $tps = $s->{attr}{ticks_per_sec};
        my @got = sort map {
            my ($fid, $line, $count, $incl, $excl, $reci, $depth, $called, $caller) = @$_;
            join ' ', $caller, $called, $count, sprintf('%.0f', ($incl + $reci) * $tps),
                $reci == 0 ? 'inclusive' : $incl == 0 ? 'recursive' : 'both'
        } @{ $s->{edges} };
        is_deeply(\@got, \@want, "$name: " . scalar(@want) . " call edges with counts and times (recursion as NYTProf's reci_time)");
        # exclusive ticks per sub: what its calls took minus what the calls they made took
        my (%in, %out, %want_excl, %got_excl);
        for my $e (@{ $truth->{call_edges} }) {
            $in{ $sub_of->($e->{callee_sid}) } += $e->{ticks};
            $out{ $sub_of->($e->{caller_sid}) } += $e->{ticks};
        }
        for my $sub (keys %in) {
            my $x = $in{$sub} - ($out{$sub} // 0);
            $want_excl{$sub} = $x > 0 ? $x : 0;
        }
        my @bad_excl;
        for my $e (@{ $s->{edges} }) {
            my ($fid, $line, $count, $incl, $excl, $reci, $depth, $called, $caller) = @$e;
            $got_excl{$called} += $excl * $tps;
            push @bad_excl, "$caller -> $called: exclusive $excl > its time"
              if $excl < 0 || $excl > $incl + $reci + 1e-12;
        }
        for my $sub (sort keys %want_excl) {
            push @bad_excl, "$sub: exclusive ticks $got_excl{$sub}, want $want_excl{$sub}"
              if abs($got_excl{$sub} - $want_excl{$sub}) > 0.01;
        }
        is_deeply(\@bad_excl, [], "$name: each sub's exclusive ticks are its in-edges' minus its out-edges' ticks");
        my $run = ($s->{pid_end}[1] - $s->{pid_start}[2]) * $tps;
        my $all = 0;
        $all += $_ for values %got_excl;
        my @over = grep { $got_excl{$_} > $run * (1 + 1e-9) } sort keys %got_excl;
        ok(!@over && $all <= $run * (1 + 1e-9) + 1,
            "$name: no sub's exclusive time, nor all of them, exceeds the run ("
              . sprintf('%.0f of %.0f ticks', $all, $run) . ')')
          or diag "over: @over";
        if ($dialect eq 'B') {
            is($s->{attr}{application}, $truth->{files}[0]{path},
                "$name: application (the report's title) is the program, not the header's '$truth->{header}{attrs}{application}'");
        }
        ok($s->{subs}{$_}, "$name: SUB_INFO for $_ (used in SUB_CALLERS)")
          for sort { $a cmp $b } keys %{ { map { ($_->[7] => 1, $_->[8] => 1) } @{ $s->{edges} } } };

        if ($dialect eq 'C') {
            my $h = $truth->{header}{attrs};
            is_deeply([ @{ $s->{pid_start} }[0, 1] ], [ $h->{pid}, $h->{ppid} ], "$name: pid/ppid from the raw P record");
            cmp_ok(abs($s->{pid_start}[2] - $h->{timestamp}), '<', 1e-5, "$name: start time from the raw P record");
            like($s->{fids}[0][6], qr/^pynytprof-fid1-path-not-recorded\z/, "$name: placeholder name for the lost path");
            ok($s->{attr}{source_path_lost_fid1}, "$name: ATTRIBUTE says the path is lost");
        } else {
            is($s->{fids}[0][6], $truth->{files}[0]{path}, "$name: file path");
            is_deeply([ @{ $s->{fids}[0] }[3, 4, 5] ], [ @{ $truth->{files}[0] }{qw(flags size mtime)} ],
                "$name: file flags, size, mtime");
        }
        if (@{ $truth->{call_edges} }) {
            cmp_ok($s->{pid_end}[1], '>', $s->{pid_start}[2], "$name: PID_END after PID_START (there are sub calls)");
        }
    } else {
        # dialect D: P with pid/ppid as 4-byte LE, then a varint NEW_FID with a "-string
        my $raw = slurp_raw($file);
        my $at = index($raw, "\nP") + 1;
        my ($pid, $ppid, $t) = unpack 'x V V d<', substr($raw, $at, 17);
        is_deeply([ @{ $s->{pid_start} }[0, 1] ], [ $pid, $ppid ], "$name: pid $pid, ppid $ppid from the fixed-width fields");
        is($s->{pid_start}[2], $t, "$name: start time");
        my ($path) = $raw =~ m{"[\x00-\x7f](/[^\x00]*?\.py)p}s;
        is($s->{fids}[0][6], $path, "$name: NEW_FID path (UTF-8 string)");
        is($s->{pid_end}[0], $pid, "$name: PID_END pid");
    }

  SKIP: {
        skip 'neither Devel::ProfileBridge::convert nor PB_PBCONVERT is available', 4 unless $converter;
        (my $base = $name) =~ s{/}{_}g;
        my $out = "$tmp/$base";
        ok(eval { $converter->($file, $out); 1 }, "$name: converts") or diag $@;
        my @warn;
        local $SIG{__WARN__} = sub { push @warn, @_ };
        open my $saved, '>&', \*STDERR or die;
        open STDERR, '>', "$out.stderr" or die;
        my $p = eval { require Devel::NYTProf::Data; Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }) };
        my $err = $@;
        open STDERR, '>&', $saved or die;
        push @warn, grep { length } slurp_raw("$out.stderr");
        ok($p && !@warn, "$name: the real Devel::NYTProf::Data loads it without warnings") or diag $err, @warn;
        if ($p && $truth) {
            my $tps = $p->attributes->{ticks_per_sec};
            my $ltd = $p->fileinfo_of(1)->line_time_data;
            my @bad;
            for my $l (@{ $truth->{lines} }) {
                my $d = $ltd->[ $l->{line} ] || [0, 0];
                push @bad, "line $l->{line}: $d->[1]/$l->{calls} " . sprintf('%.0f', $d->[0] * $tps) . "/$l->{exc_ticks}"
                  unless $d->[1] == $l->{calls} && sprintf('%.0f', $d->[0] * $tps) == $l->{exc_ticks};
            }
            my %calls;
            # names as the converter presents them (Devel::ProfileBridge/"Names in nytprofhtml")
            my %sid_name = map { $_->{sid} => Devel::ProfileBridge::nytprof_name("main::$_->{name}") }
                @{ $truth->{subs} || [] };
            $calls{ $sid_name{ $_->{callee_sid} } // "main::pynytprof_sid_$_->{callee_sid}" } += $_->{calls}
              for @{ $truth->{call_edges} };
            my $map = $p->subname_subinfo_map;
            for my $sub (sort keys %calls) {
                my $si = $map->{$sub};
                push @bad, "$sub: calls " . ($si ? $si->calls : 'no sub') . "/$calls{$sub}"
                  unless $si && $si->calls == $calls{$sub};
            }
            is_deeply(\@bad, [], "$name: NYTProf's per-line counts/times and per-sub calls equal the truth");
            my $active = $p->attributes->{profiler_active};
            my @over = map { $_->subname . ' ' . $_->excl_time } grep { $_->excl_time > $active * (1 + 1e-9) }
                values %$map;
            is_deeply(\@over, [], "$name: NYTProf's exclusive time of every sub is within profiler_active ("
                . sprintf('%.1f ms', $active * 1000) . ')');
            (my $py = $file) =~ s/\.nytprof\.out\z/.py/;
            if ($dialect eq 'B' && -f $py) {
                # where each name is defined, read from the program here (by indentation)
                my @src = split /\n/, slurp_raw($py), -1;
                pop @src if @src && $src[-1] eq '';
                my (%def, %count, @open);
                my $last_code = 0;
                for my $i (0 .. $#src) {
                    my $l = $src[$i];
                    next if $l =~ /^\s*(?:#|\z)/;
                    my ($ws) = $l =~ /^(\s*)/;
                    while (@open && $open[-1][1] >= length $ws) { my $o = pop @open; $def{ $o->[0] }[1] //= $last_code }
                    if ($l =~ /^\s*(?:async\s+)?(?:def|class)\s+(\w+)/) {
                        $count{$1}++;
                        if ($count{$1} == 1) { $def{$1} = [ $i + 1, undef ]; push @open, [ $1, length $ws ] }
                    }
                    $last_code = $i + 1;
                }
                $def{ $_->[0] }[1] //= $last_code for @open;
                my (@placed, @bad_lines);
                for my $si (sort { $a->subname cmp $b->subname } values %$map) {
                    (my $short = $si->subname) =~ s/^main:://;
                    my $want = $short eq '[module]' ? [ 1, scalar @src ]
                      : ($count{$short} // 0) == 1 ? $def{$short} : [ 0, 0 ];
                    push @placed, $si->subname if $want->[0];
                    my $got = [ $si->first_line // 0, $si->last_line // 0 ];
                    push @bad_lines, $si->subname . ": lines @$got, want @$want" unless "@$got" eq "@$want";
                }
                is_deeply(\@bad_lines, [], "$name: subs defined once in the program have its lines (@placed), the others 0-0");
            }
        } elsif ($p && -f "$file.chunks.partial.jsonl") {
            # no truth file (dialect D), but the REAL Devel::NYTProf read the
            # original's header before it croaked (*.chunks.partial.jsonl): the
            # converted file, loaded by it, says the same; its fid 1 is the
            # NEW_FID path read from the raw bytes
            my %hdr;
            for (split /\n/, slurp_raw("$file.chunks.partial.jsonl")) {
                my $c = decode_json($_);
                $hdr{ $c->[1] } = $c->[2] if $c->[0] eq 'ATTRIBUTE';
            }
            my @keys = qw(ticks_per_sec basetime application);
            my $attr = $p->attributes;
            is_deeply({ map { ($_ => $attr->{$_}) } @keys }, { map { ($_ => $hdr{$_}) } @keys },
                "$name: its @keys are what the real reader read from the original's header");
            my ($path) = slurp_raw($file) =~ m{"[\x00-\x7f](/[^\x00]*?\.py)p}s;
            is($p->fileinfo_of(1)->filename, $path, "$name: the real reader's fid 1 is the raw NEW_FID path");
        }
      SKIP: {
            skip 'nytprofhtml not in PATH', 1 unless $nytprofhtml;
            my $html = "$out.html";
            mkdir $html;
            my $log = `"$nytprofhtml/nytprofhtml" -f "$out" -o "$html" 2>&1`;
            ok($? == 0 && -f "$html/index.html", "$name: the real nytprofhtml renders it") or diag $log;
            if ($truth && $dialect eq 'B') {
                my $index = slurp_raw("$html/index.html");
                my ($title) = $index =~ m{<div class="header_title">\s*For\s*(.*?)\s*</div>}s;
                unlike($index, qr{For -e\b}, "$name: nytprofhtml's title is not '-e'");
                like($index, qr{\Q$truth->{files}[0]{path}\E}, "$name: nytprofhtml's index names the program");
            }
        }
    }
}

# ---- dialect D's own sub data: SUB_INFO lines and call lines reach nytprofhtml ----
# No real dialect D file has any (Pynytprof's writer never wrote them); a copy of
# fib.nytprof.out gets NYTProf's own 's' and 'c' tokens before its 'p'.
{
    my $raw = slurp_raw("$dir/fib.nytprof.out");
    my $at = index($raw, ".pyp");
    cmp_ok($at, '>', 0, 'fib.nytprof.out: the PID_END after the file name');
    my $str = sub { "'" . chr(length $_[0]) . $_[0] };    # NYTProf string: tag, varint length, bytes
    my $tokens = join '',
        's' . chr(1) . $str->('main::fib') . chr(2) . chr(5),
        's' . chr(1) . $str->('main::main') . chr(8) . chr(12),
        's' . chr(1) . $str->('main::<module>') . chr(0) . chr(0),
        'c' . chr(1) . chr(11) . $str->('main::main') . chr(15) . pack('d<3', 0.002, 0.002, 0) . chr(0) . $str->('main::fib'),
        'c' . chr(1) . chr(15) . $str->('main::<module>') . chr(1) . pack('d<3', 0.003, 0.001, 0) . chr(0) . $str->('main::main');
    my $d = tempdir(CLEANUP => 1);
    my $f = "$d/fib.nytprof.out";
    open my $fh, '>:raw', $f or die;
    print $fh substr($raw, 0, $at + 3), $tokens, substr($raw, $at + 3);
    close $fh or die;
    open my $src, '>:raw', "$d/fib.py" or die;
    print $src slurp_raw("$dir/fib.py");
    close $src or die;
    my $s = read_stream($f);
    is_deeply([ map { [ @$_[0 .. 3] ] } sort { $a->[3] cmp $b->[3] } values %{ $s->{subs} } ],
        [ [ 1, 0, 0, 'main::<module>' ], [ 1, 2, 5, 'main::fib' ], [ 1, 8, 12, 'main::main' ] ],
        'dialect D: SUB_INFO lines as the file has them');
    is_deeply([ sort map { "$_->[8] -> $_->[7] at $_->[0]:$_->[1]" } @{ $s->{edges} } ],
        [ 'main::<module> -> main::main at 1:15', 'main::main -> main::fib at 1:11' ],
        'dialect D: SUB_CALLERS keep their call lines');
  SKIP: {
        skip 'Devel::ProfileBridge::convert is not available', 4 unless Devel::ProfileBridge->can('convert');
        my $out = "$d/converted.out";
        Devel::ProfileBridge::convert(in => $f, out => $out);
        require Devel::NYTProf::Data;
        my $p = Devel::NYTProf::Data->new({ filename => $out, quiet => 1 });
        my $map = $p->subname_subinfo_map;
        is_deeply([ map { [ $map->{$_}->first_line, $map->{$_}->last_line ] } qw(main::fib main::[module]) ],
            [ [ 2, 5 ], [ 1, 15 ] ], 'dialect D: NYTProf sees fib at lines 2-5 and <module> as the whole program');
        is_deeply($map->{'main::fib'}->caller_fid_line_places, { 1 => { 11 => $map->{'main::fib'}->caller_fid_line_places->{1}{11} } },
            'dialect D: NYTProf sees fib called at line 11 only');
        skip 'nytprofhtml not in PATH', 2 unless $nytprofhtml;
        my $html = "$d/html";
        my $log = `"$nytprofhtml/nytprofhtml" -f "$out" -o "$html" 2>&1`;
        my ($page) = glob("$html/*fib-py-1-line.html");
        my $text = $page ? slurp_raw($page) : '';
        $text =~ s/<[^>]*>//g;
        like($text, qr/15 times \([^)]*\) by main::main at line 11\b/, 'dialect D: nytprofhtml shows the call at line 11')
            or diag $log;
        unlike($text, qr/sub main::fib; # xsub/, 'dialect D: fib is not an xsub');
    }
}

# ---- dialect B: where subs start, from the program beside the profile ------------
# A dialect B file written here (the layout of Pynytprof 670fbc8's writer) for a
# program with decorators, a nested def, async def, classes, a method name
# defined twice, and comments that do not end a block.
{
    my @py = (
        'import functools',                # 1
        '',
        '',
        'def deco(f):',                    # 4
        '    @functools.wraps(f)',         # 5
        '    def wrapper(*a):',            # 6
        '        return f(*a)',            # 7
        '    return wrapper',              # 8
        '',
        '',
        '@deco',                           # 11
        '# a comment between',             # 12
        'def work(n):',                    # 13
        '    total = 0',                   # 14
        '# a comment at column 0',         # 15
        '    for i in range(n):',          # 16
        '        total += i',              # 17
        '',
        '    return total',                # 19
        '',
        '',
        'async def fetch():',              # 22
        '    return 1',                    # 23
        '',
        '',
        'class A:',                        # 26
        '    def run(self):',              # 27
        '        return work(3)',          # 28
        '',
        '',
        'class B:',                        # 31
        '    def run(self):',              # 32
        '        return 2',                # 33
        '',
        '',
        'print(A().run(), B().run())',     # 36
    );
    my @names = sort qw(<module> _run_code A B deco fetch run work wrapper);
    my %sid = map { $names[$_] => $_ } 0 .. $#names;
    my $chunk = sub { $_[0] . pack('V', length $_[1]) . $_[1] };
    my $banner = join '', map { "$_\n" } 'NYTProf 5 0', '#Perl profile database. Generated by Pynytprof on Sun, 22 Nov 2026 10:08:21 +0000',
        ':basetime=1795342101', ':application=-e', ':nv_size=8', ':ticks_per_sec=10000000';
    my @edges = ([ '_run_code', '<module>', 1, 0 ], [ '<module>', 'A', 1, 100 ], [ '<module>', 'B', 1, 90 ],
        [ '<module>', 'run', 2, 5000 ], [ 'run', 'wrapper', 1, 3000 ], [ 'wrapper', 'work', 1, 2000 ]);
    my $file = $banner . "\n"
      . $chunk->('F', pack('V4', 0, 0x10, 0, 0) . "/nonexistent/deco.py\0")
      . $chunk->('S', join '', map { pack('V3 Q<2', 0, $_, 1, 100, 100) } 1, 14, 17, 36)
      . $chunk->('D', join '', map { pack('V2', $sid{$_}, 0) . "$_\0" } @names)
      . $chunk->('C', join '', map { pack('V3 Q<2', $sid{ $_->[0] }, $sid{ $_->[1] }, $_->[2], $_->[3], $_->[3]) } @edges)
      . $chunk->('E', '');
    my $d = tempdir(CLEANUP => 1);
    open my $fh, '>:raw', "$d/deco.nytprof.out" or die;
    print $fh $file;
    close $fh or die;
    open $fh, '>:raw', "$d/deco.py" or die;
    print $fh map { "$_\n" } @py;
    close $fh or die;
    my $s = read_stream("$d/deco.nytprof.out");
    is($s->{attr}{source_dialect}, 'B', 'written dialect B file: read as B');
    my %excl;
    $excl{ $_->[7] } += $_->[4] * 1e7 for @{ $s->{edges} };
    is_deeply({ map { ($_ => sprintf '%.0f', $excl{"main::$_"}) } qw(run wrapper work A) },
        { run => 2000, wrapper => 1000, work => 2000, A => 100 },
        'written dialect B file: exclusive ticks = in-edges - out-edges');
  SKIP: {
        skip 'Devel::ProfileBridge::convert is not available', 1 unless Devel::ProfileBridge->can('convert');
        Devel::ProfileBridge::convert(in => "$d/deco.nytprof.out", out => "$d/deco.out");
        require Devel::NYTProf::Data;
        my $p = Devel::NYTProf::Data->new({ filename => "$d/deco.out", quiet => 1 });
        my $map = $p->subname_subinfo_map;
        my %got = map {
            (my $n = $_) =~ s/^main:://;
            ($n => join '-', $map->{$_}->first_line // 0, $map->{$_}->last_line // 0)
        } keys %$map;
        is_deeply(\%got, {
            '[module]' => '1-36', deco => '4-8', wrapper => '5-7', work => '11-19', fetch => '22-23',
            A => '26-28', B => '31-33', run => '0-0', _run_code => '0-0',
        }, 'written dialect B file: decorators, nested, async and class definitions placed; a name defined twice and code outside the file are not');
    }
}

done_testing;
