#!perl
# EasyProfiler .prof files (c/read_easyprofiler.c + c/fold_spans.c) against
# the real tools' ground truth in t/data/easyprofiler:
#  * <f>.truth.json (EasyProfiler's own reader, fillTreesFromFile): per thread
#    the record count, top-level count, max depth and per name the call
#    count, summed inclusive ns and summed self ns -- our chunk stream must
#    reproduce every number (ns exactly, +-1 ns for the seconds round trip);
#    header version/pid/begin/end, bookmarks, and every decoded value;
#  * <f>.json (EasyProfiler's profiler_converter: the full block tree): the
#    exact NYTProf caller edges (count, inclusive, exclusive, recursive time,
#    recursion depth) recomputed from the tree must equal our SUB_CALLERS;
#  * the other header layouts, built here from the real files: 2.0.1
#    (reordered header without thread count, no tail) from every 2.1.0 file,
#    1.3.0 (u64 pid and tids) and 1.0.0 (no pid) from the 1.2.0 file;
#  * thread selection, the 0-block file, a truncated file;
#  * conversion to nytprof.out: the REAL Devel::NYTProf reader's per-sub
#    calls, inclusive and exclusive times equal the truth's per-name sums
#    over every thread (one sub per block name), and the real nytprofhtml
#    renders it.
use strict;
use warnings;
use Test::More;
use Config;
use File::Spec;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use RawFile qw(slurp_raw spew_raw);
use JSON::PP ();
no warnings 'recursion';

my $root = File::Spec->rel2abs("$FindBin::Bin/..");
my $data = "$root/t/data/easyprofiler";
my @truth_files = sort glob("$data/*.prof.truth.json");
plan skip_all => "no EasyProfiler files in $data" unless @truth_files;
eval { require Devel::ProfileBridge::ReadStream; Devel::ProfileBridge::ReadStream->import('for_chunks'); 1 }
    or plan skip_all => "Devel::ProfileBridge::ReadStream not built: $@";

my $tmp  = tempdir('pb50-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->utf8;

# The package rule (documented in POD) of a thread's root sub <pkg>::RUNTIME:
# thread "Main" (or "main") -> main, unnamed -> thread_<tid>, else the name
# with ASCII non-word characters as "_".  Block names go into package main,
# whatever the thread.
sub package_of {
    my ($tid, $name) = @_;
    return 'main' if $name eq 'Main' || $name eq 'main';
    return "thread_$tid" if $name eq '';
    (my $p = $name) =~ s/[\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]/_/g;
    $p = "_$p" if $p =~ /^[0-9]/;
    return $p;
}

# a name with a package keeps it: a "::" outside (), <> and {} (not the
# std:: of "operator<<(std::ostream&, const T&)" or "max<std::string>")
sub sub_name {
    my ($name) = @_;
    (my $s = $name) =~ s/\s+//g;
    1 while $s =~ s/\([^()]*\)|<[^<>]*>|\{[^{}]*\}//;
    return $s =~ /::/ ? $name : "main::$name";
}

# Collect the chunk stream of one file into per-thread summaries.
sub collect {
    my ($file, %opt) = @_;
    my (%attr, @threads, $cur, @warnings);
    local $SIG{__WARN__} = sub { push @warnings, $_[0] };
    for_chunks(sub {
        my ($tag, @a) = @_;
        if ($tag eq 'ATTRIBUTE') {
            $attr{ $a[0] } = $a[1];
        }
        elsif ($tag eq 'PID_START') {
            $cur = { pid => $a[0], ppid => $a[1], start => $a[2], subs => {}, edges => {}, values => [],
                     time_line => 0, time_lines => 0 };
            push @threads, $cur;
        }
        elsif ($tag eq 'PID_END') {
            $cur->{end} = $a[1];
            $cur = undef;
        }
        elsif ($tag eq 'TIME_LINE') {
            my $t = $a[0];
            $t -= 2**64 if $t >= 2**63;
            $cur->{time_line} += $t;
            $cur->{time_lines}++;
        }
        elsif ($tag eq 'SUB_CALLERS') {
            my ($fid, $line, $count, $incl, $excl, $reci, $depth, $called, $caller) = @a;
            my $s = $cur->{subs}{$called} ||= { count => 0, incl => 0, excl => 0 };
            $s->{count} += $count;
            $s->{incl}  += $incl + $reci;
            $s->{excl}  += $excl;
            my $e = $cur->{edges}{"$caller>$called"} ||= [0, 0, 0, 0, 0];
            $e->[0] += $count;
            $e->[1] += $incl;
            $e->[2] += $excl;
            $e->[3] += $reci;
            $e->[4] = $depth if $depth > $e->[4];
        }
        elsif ($tag eq 'COMMENT' && $a[0] =~ /\Avalue (\{.*\})\n\z/s) {
            push @{ $cur->{values} }, JSON::PP->new->decode($1);
        }
    }, filename => $file, format => 'easyprofiler', %opt);
    return { attr => \%attr, threads => \@threads, warnings => \@warnings };
}

sub ns { my ($s) = @_; return int($s * 1e9 + ($s >= 0 ? 0.5 : -0.5)) }

my %type_of = (0 => 'bool', 1 => 'char', 2 => 'int8', 3 => 'uint8', 4 => 'int16', 5 => 'uint16', 6 => 'int32',
               7 => 'uint32', 8 => 'int64', 9 => 'uint64', 10 => 'float', 11 => 'double', 12 => 'string');

sub same_value {
    my ($got, $want, $type) = @_;
    if (ref $want eq 'ARRAY') {
        return 0 unless ref $got eq 'ARRAY' && @$got == @$want;
        same_value($got->[$_], $want->[$_], $type) || return 0 for 0 .. $#$want;
        return 1;
    }
    if (JSON::PP::is_bool($want) || JSON::PP::is_bool($got)) {
        return (!!$got) == (!!$want) ? 1 : 0;
    }
    return $got eq $want if $type eq 'string';
    return abs($got - $want) <= 1e-6 * (abs($want) + 1) if $type eq 'float' || $type eq 'double';
    return $got == $want;
}

# Every number of the truth file, for a decoded stream $got of the same data.
sub check_truth {
    my ($label, $got, $truth, %how) = @_;
    my $attr = $got->{attr};
    is($attr->{source_format}, 'easyprofiler', "$label: source_format");
    is($attr->{ticks_per_sec}, 1000000000, "$label: ticks_per_sec is ns");
    is($attr->{source_format_version}, $how{version} // $truth->{version}, "$label: version");
    is($attr->{pid}, $truth->{pid}, "$label: pid") unless $how{no_pid};
    is($attr->{source_begin_ns}, $truth->{begin_ns}, "$label: begin ns (converted as the reader does)");
    is($attr->{source_end_ns},   $truth->{end_ns},   "$label: end ns");
    my @bm = @{ $truth->{bookmarks} || [] };
    for my $i (0 .. $#bm) {
        is($attr->{"bookmark_${i}_pos_ns"}, $bm[$i]{pos_ns}, "$label: bookmark $i position");
        # ATTRIBUTE values are byte strings, as in NYTProf: the text is UTF-8 bytes
        my $text = $attr->{"bookmark_${i}_text"};
        utf8::decode($text) if defined $text;
        is($text, $bm[$i]{text}, "$label: bookmark $i text (UTF-8 bytes)");
        is($attr->{"bookmark_${i}_color"},  $bm[$i]{color},  "$label: bookmark $i color");
    }
    my %by_pid = map { $_->{pid} => $_ } @{ $got->{threads} };
    is(scalar @{ $got->{threads} }, scalar @{ $truth->{threads} }, "$label: one PID_START/PID_END pair per thread");
    for my $t (@{ $truth->{threads} }) {
        my $tid = $t->{thread_id};
        my $g   = $by_pid{ $tid % 2**32 };
        ok($g && defined $g->{end} && $g->{end} > $g->{start}, "$label: thread $tid has PID_START < PID_END")
            or next;
        is($attr->{"thread_${tid}_name"}, $t->{name}, "$label: thread $tid name");
        is($attr->{"thread_${tid}_blocks"}, $t->{blocks_number}, "$label: thread $tid record count");
        next unless $t->{by_name};
        is($attr->{"thread_${tid}_top_level"}, $t->{top_level_count}, "$label: thread $tid top-level count");
        is($attr->{"thread_${tid}_max_depth"}, $t->{max_depth},       "$label: thread $tid max depth");
        my $pkg = package_of($tid, $t->{name});
        my %subs = %{ $g->{subs} };
        my $runtime = delete $subs{"${pkg}::RUNTIME"};
        my $calls = 0;
        $calls += $_->{count} for values %subs;
        is($calls, $t->{blocks_number}, "$label: thread $tid: calls = records");
        my $top = 0;
        for my $k (keys %{ $g->{edges} }) {
            $top += $g->{edges}{$k}[0] if $k =~ /\A\Q${pkg}::RUNTIME>\E/;
        }
        is($top, $t->{top_level_count}, "$label: thread $tid: calls from ${pkg}::RUNTIME = top-level blocks");
        my ($bad, $self_sum) = (0, 0);
        for my $name (sort keys %{ $t->{by_name} }) {
            my $w = $t->{by_name}{$name};
            $self_sum += $w->{self_ns};
            my $s = delete $subs{ sub_name($name) };
            if (!$s) { diag "$label: thread $tid: no sub " . sub_name($name); $bad++; next }
            if ($s->{count} != $w->{count} || abs(ns($s->{incl}) - $w->{total_ns}) > 1
                || abs(ns($s->{excl}) - $w->{self_ns}) > 1)
            {
                diag sprintf "%s: thread %s: %s: got count %d incl %d excl %d, truth %d %d %d", $label, $tid, $name,
                    $s->{count}, ns($s->{incl}), ns($s->{excl}), $w->{count}, $w->{total_ns}, $w->{self_ns};
                $bad++;
            }
        }
        ok(!$bad, "$label: thread $tid: count, inclusive and self ns of all " . scalar(keys %{ $t->{by_name} })
            . " names equal the reader's");
        ok(!%subs, "$label: thread $tid: no sub the reader does not have") or diag join ', ', keys %subs;
        is($g->{time_line}, $self_sum, "$label: thread $tid: TIME_LINE ticks add up to the summed self ns");
        my @wv = @{ $t->{values} || [] };
        my @gv = @{ $g->{values} };
        is(scalar @gv, scalar @wv, "$label: thread $tid: one value COMMENT per value record");
        my $vbad = 0;
        my @ws = sort { $a->{t_ns} <=> $b->{t_ns} || $a->{name} cmp $b->{name} } @wv;
        my @gs = sort { $a->{t_ns} <=> $b->{t_ns} || $a->{name} cmp $b->{name} } @gv;
        for my $i (0 .. $#ws) {
            my ($w, $v) = ($ws[$i], $gs[$i]);
            my $type = $type_of{ $w->{data_type} };
            unless ($v && $v->{name} eq $w->{name} && $v->{t_ns} == $w->{t_ns} && $v->{type} eq $type
                && $v->{thread} == $tid && exists $v->{value} && same_value($v->{value}, $w->{value}, $type))
            {
                diag "$label: value $i: got " . JSON::PP->new->canonical->encode($v // {})
                    . ' want ' . JSON::PP->new->canonical->encode($w);
                $vbad++;
            }
        }
        ok(!$vbad, "$label: thread $tid: every value's name, time, type and data") if @wv;
    }
}

# NYTProf edges recomputed from profiler_converter's full tree.
sub check_edges {
    my ($label, $got, $conv) = @_;
    my %by_pid = map { $_->{pid} => $_ } @{ $got->{threads} };
    for my $t (@{ $conv->{threads} }) {
        my $tid = $t->{threadId};
        my $pkg = package_of($tid, $t->{threadName} // '');
        my %want;
        my $walk;
        $walk = sub {
            my ($node, $caller, $stack) = @_;
            my $name = sub_name($node->{name});
            my $dur  = $node->{stop} - $node->{start};
            my $kids = $node->{children} || [];
            my $j    = grep { $_ eq $name } @$stack;
            my $e    = $want{"$caller>$name"} ||= [0, 0, 0, 0, 0];
            my $child = 0;
            $child += $_->{stop} - $_->{start} for @$kids;
            $e->[0]++;
            $e->[2] += $dur - $child;
            if ($j) { $e->[3] += $dur; $e->[4] = $j if $j > $e->[4] }
            else    { $e->[1] += $dur }
            $walk->($_, $name, [@$stack, $name]) for @$kids;
        };
        $walk->($_, "${pkg}::RUNTIME", []) for @{ $t->{children} || [] };
        my $g = $by_pid{ $tid % 2**32 } or do { fail("$label: thread $tid missing"); next };
        my %have = %{ $g->{edges} };
        my $bad = 0;
        for my $k (sort keys %want) {
            my ($w, $h) = ($want{$k}, delete $have{$k});
            if (!$h || $h->[0] != $w->[0] || abs(ns($h->[1]) - $w->[1]) > 1 || abs(ns($h->[2]) - $w->[2]) > 1
                || abs(ns($h->[3]) - $w->[3]) > 1 || $h->[4] != $w->[4])
            {
                diag "$label: edge $k: want @$w, got " . ($h ? join(' ', $h->[0], map(ns($_), @$h[1 .. 3]), $h->[4]) : 'none');
                $bad++;
            }
        }
        ok(!$bad && !%have, "$label: thread $tid: all " . scalar(keys %want)
            . " caller edges (count, incl, excl, reci, recursion depth) equal the converter's tree")
            or diag "extra edges: " . join(', ', keys %have);
    }
}

my %truth;
for my $tf (@truth_files) {
    (my $prof = $tf) =~ s/\.truth\.json\z//;
    (my $label = $prof) =~ s{.*/}{};
    my $truth = $json->decode(slurp_raw($tf));
    $truth{$label} = [$prof, $truth];
    if (($truth->{reader_result} // '') eq 'error') {
        # ep_open_block: the real reader refuses a 0-block file; we read it with a warning
        my $got = collect($prof);
        ok(scalar(grep { /0 blocks/ && /#135/ } @{ $got->{warnings} }), "$label: 0-block file read, with a warning");
        is(scalar @{ $got->{threads} }, scalar @{ $truth->{threads} }, "$label: its thread is there");
        is($got->{attr}{source_format_version}, $truth->{version}, "$label: version");
        next;
    }
    my $got = collect($prof);
    check_truth($label, $got, $truth);
    check_edges($label, $got, $json->decode(slurp_raw("$prof.json"))) if -f "$prof.json";
}

# ---- other header layouts, built from the real files ----------------------
for my $label (sort keys %truth) {
    my ($prof, $truth) = @{ $truth{$label} };
    next unless $truth->{version} eq '2.1.0' && !@{ $truth->{bookmarks} || [] } && $truth->{threads}[0]{by_name};
    my $b = slurp_raw($prof);
    # 2.1: sig ver | pid freq begin end mem descmem (6 x u64) blocks descs (2 x u32) | threads u32, bookmarks u16, pad u16
    # 2.0: the same without the last 8 bytes, and no end signature after the threads
    is(substr($b, -4), pack('V', 0x45617379), "$label: ends with the end signature");
    my $v201 = pack('VV', 0x45617379, 0x02000001) . substr($b, 8, 56) . substr($b, 72, length($b) - 72 - 4);
    my $f = "$tmp/$label.v201.prof";
    spew_raw($f, $v201);
    check_truth("$label as 2.0.1", collect($f), $truth, version => '2.0.1');
}

{
    my ($prof, $truth) = @{ $truth{'ep_v120_threads.prof'} || [] };
    if ($prof) {
        my $b = slurp_raw($prof);
        # 1.2.0: sig ver pid(u32) | freq begin end (3 x u64) blocks(u32) mem(u64) descs(u32) descmem(u64) = 60 bytes
        my $ndesc = unpack('V', substr($b, 48, 4));
        my $pos = 60;
        for (1 .. $ndesc) { $pos += 2 + unpack('v', substr($b, $pos, 2)) }
        my $descs = substr($b, 60, $pos - 60);
        my $threads13 = '';
        while ($pos < length $b) {
            my ($tid, $nsz) = unpack('Vv', substr($b, $pos, 6));
            my $chunk = pack('Q<v', $tid, $nsz) . substr($b, $pos + 6, $nsz);
            $pos += 6 + $nsz;
            my $ncs = unpack('V', substr($b, $pos, 4));
            is($ncs, 0, "ep_v120_threads: thread $tid has no context switches (the rewrite assumes so)");
            my $nblk = unpack('V', substr($b, $pos + 4, 4));
            my $start = $pos;
            $pos += 8;
            for (1 .. $nblk) { $pos += 2 + unpack('v', substr($b, $pos, 2)) }
            $threads13 .= $chunk . substr($b, $start, $pos - $start);
        }
        is($pos, length $b, 'ep_v120_threads: walked to the end of the file');
        my $v130 = pack('VV', 0x45617379, 0x01030000) . pack('Q<', unpack('V', substr($b, 8, 4)))
            . substr($b, 12, 48) . $descs . $threads13;
        spew_raw("$tmp/v130.prof", $v130);
        check_truth('ep_v120_threads as 1.3.0 (u64 pid and tids)', collect("$tmp/v130.prof"), $truth,
            version => '1.3.0');
        my $v100 = pack('VV', 0x45617379, 0x01000000) . substr($b, 12);
        spew_raw("$tmp/v100.prof", $v100);
        check_truth('ep_v120_threads as 1.0.0 (no pid)', collect("$tmp/v100.prof"), $truth,
            version => '1.0.0', no_pid => 1);
    }
}

# ---- thread selection, truncation -------------------------------------------
if (my $e = $truth{'ep_threads.prof'}) {
    my ($prof, $truth) = @$e;
    my ($w1) = grep { $_->{name} eq 'Worker 1' } @{ $truth->{threads} };
    my $got = collect($prof, thread => 'Worker 1');
    is(scalar @{ $got->{threads} }, 1, 'thread => "Worker 1": one thread');
    is($got->{threads}[0]{pid}, $w1->{thread_id}, '... the one named so');
    my $sub = $got->{threads}[0]{subs}{'main::work_unit'};
    ok($sub && $sub->{count} == $w1->{by_name}{work_unit}{count}
        && ns($sub->{incl}) == $w1->{by_name}{work_unit}{total_ns}, '... with its numbers');
    $got = collect($prof, thread => $w1->{thread_id});
    is(scalar @{ $got->{threads} }, 1, "thread => $w1->{thread_id}: one thread");
    is($got->{threads}[0]{pid}, $w1->{thread_id}, '... that thread');
    ok(!eval { collect($prof, thread => 'No Such Thread'); 1 }, 'an unknown thread is an error');
    like($@, qr/no thread named or numbered "No Such Thread".*Worker 1/, '... naming the threads there');

    my $b = slurp_raw($prof);
    spew_raw("$tmp/cut.prof", substr($b, 0, int(length($b) / 2)));
    ok(!eval { collect("$tmp/cut.prof"); 1 }, 'a file cut in half is an error');
    like($@, qr/^easyprofiler: truncated: .* at byte \d+ of \Q$tmp\E\/cut\.prof/, "... $@");
}

# ---- conversion: the real reader and nytprofhtml ------------------------------
SKIP: {
    skip 'Devel::NYTProf::Data not installed', 1 unless eval { require Devel::NYTProf::Data; 1 };
    my ($convert, $how) = find_converter();
    skip "no converter: $how", 1 unless $convert;
    note "converting with $how";
    for my $label (sort keys %truth) {
        my ($prof, $truth) = @{ $truth{$label} };
        next unless $truth->{threads}[0]{by_name};
        my $out = "$tmp/$label.nytprof";
        my ($ok, $msg) = $convert->($prof, $out);
        ok($ok && -s $out, "$label: converted to nytprof.out") or do { diag $msg; next };
        my $p = eval { Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }) };
        ok($p, "$label: the real Devel::NYTProf reader loads it") or do { diag $@; next };
        my $si = $p->subname_subinfo_map;
        # one sub per block name: EasyProfiler's per-name numbers summed over the threads
        my (%want, %roots);
        for my $t (@{ $truth->{threads} }) {
            $roots{ package_of($t->{thread_id}, $t->{name}) . '::RUNTIME' } = 1 if $t->{by_name};
            for my $name (keys %{ $t->{by_name} || {} }) {
                # (the report shows names as nytprof_name maps them: operator[[)
                my $w = $want{ Devel::ProfileBridge::nytprof_name(sub_name($name)) } ||= [0, 0, 0];
                $w->[0] += $t->{by_name}{$name}{count};
                $w->[1] += $t->{by_name}{$name}{total_ns};
                $w->[2] += $t->{by_name}{$name}{self_ns};
            }
        }
        my $bad = 0;
        my $n = keys %want;
        for my $sub (sort keys %want) {
            my ($w, $s) = ($want{$sub}, $si->{$sub});
            my $incl = $s ? ns($s->incl_time + $s->recur_incl_time) : -1;
            if (!$s || $s->calls != $w->[0] || abs($incl - $w->[1]) > 1 || abs(ns($s->excl_time) - $w->[2]) > 1) {
                diag "$label: $sub: real reader has " . ($s ? join(' ', $s->calls, $incl, ns($s->excl_time)) : 'nothing')
                    . ", truth summed over threads @$w";
                $bad++;
            }
        }
        is_deeply([ sort grep { !$want{$_} } keys %$si ], [ sort keys %roots ],
            "$label: the real reader's other subs are the " . scalar(keys %roots) . " threads' roots");
        ok(!$bad, "$label: the real reader's calls, inclusive and exclusive time of $n subs equal the truth's sums over threads (+-1 ns)");
    }
    my $nytprofhtml = (grep { -x "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];
    skip 'nytprofhtml not found', 1 unless $nytprofhtml;
    for my $label ('ep_recursion.prof', 'ep_threads.prof') {
        next unless -s "$tmp/$label.nytprof";
        my $dir = "$tmp/html-$label";
        mkdir $dir;
        my $rc = system("$nytprofhtml/nytprofhtml -f $tmp/$label.nytprof -o $dir >$tmp/html.log 2>&1");
        ok($rc == 0 && -s "$dir/index.html", "$label: the real nytprofhtml renders the converted file")
            or diag slurp_raw("$tmp/html.log");
    }
}

done_testing;

# Devel::ProfileBridge::convert when the XS has it, else the C tool t/c/pbconvert.
sub find_converter {
    if (eval { require Devel::ProfileBridge; defined &Devel::ProfileBridge::convert }) {
        return (sub {
            my ($in, $out) = @_;
            my $ok = eval { Devel::ProfileBridge::convert(in => $in, out => $out, format => 'easyprofiler'); 1 };
            return ($ok, $ok ? '' : "$@");
        }, 'Devel::ProfileBridge::convert');
    }
    my $exe = $ENV{PB_PBCONVERT};
    if (!$exe) {
        return (undef, 'no t/c/pbconvert.c') unless -f "$root/t/c/pbconvert.c";
        $exe = "$tmp/pbconvert$Config{exe_ext}";
        my @src = (glob("$root/c/*.c"), "$root/t/c/pbconvert.c");
        system($Config{cc}, '-std=c99', '-O2', "-I$root/c", '-o', $exe, @src, '-lzstd', '-lsnappy', '-lyajl', '-lz', '-lpthread') == 0
            && -x $exe or return (undef, "could not build t/c/pbconvert with $Config{cc}");
    }
    return (sub {
        my ($in, $out) = @_;
        my $rc = system("$exe -f easyprofiler '$in' '$out' >$tmp/pbconvert.log 2>&1");
        return ($rc == 0, slurp_raw("$tmp/pbconvert.log"));
    }, "the C tool $exe");
}
