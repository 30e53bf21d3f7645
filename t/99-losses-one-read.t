#!perl
# info and convert --report read their input once: the losses are counted in
# the decode that counts the chunks (info) or feeds the writer (--report to
# nytprof.out), in C (c/losses.c).  The counts are checked against each
# profiler's own reader (the files' ground truth), also when the input comes
# through a pipe that can be read only once.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp);
use File::Temp qw(tempdir);
use Config;
use JSON::PP ();

my $d = "$FindBin::Bin/data";
my $root = "$FindBin::Bin/..";
my $tmp = tempdir('pb99l-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @inc = map { "-I$_" } grep { -d } "$root/blib/lib", "$root/blib/arch";
my $pb = join ' ', map { "'$_'" } $Config{perlpath}, @inc, "$root/bin/profbridge";
sub truth { JSON::PP->new->decode(slurp("$_[0].truth.json")) }

# run a shell command line; (stdout, stderr, exit status)
sub run {
    my ($cmd) = @_;
    system("$cmd >'$tmp/out' 2>'$tmp/err'");
    my $rc = $? >> 8;
    return (scalar slurp("$tmp/out"), scalar slurp("$tmp/err"), $rc);
}

# the "not carried to TARGET:" list of info's stdout or --report's stderr: { what => count }
sub losses_of {
    my ($text, $to) = @_;
    my %l;
    my ($block) = $text =~ /^not carried to \Q$to\E:\n((?:  .*\n)*)/m or return undef;
    for (split /\n/, $block) {
        /\A  (.*): (\S+) \(/ or next;
        $l{$1} = $2;
    }
    return \%l;
}

sub count_of {
    my ($l, $re) = @_;
    my @k = grep { $_ =~ $re } keys %{ $l || {} };
    return @k == 1 ? $l->{ $k[0] } : undef;
}

# the tags of a NYTProf reader's dump (one JSON array per chunk, tag first)
sub dump_tags {
    my ($f) = @_;
    my %n;
    open my $fh, '<', $f or die "$f: $!";
    while (<$fh>) { $n{$1}++ if /\A\["([A-Z_]+)"/ }
    return \%n;
}

# EasyProfiler: value records, as EasyProfiler's own reader counts them
my $ep = "$d/easyprofiler/ep_values.prof";
my $values = 0;
$values += @{ $_->{values} } for @{ truth($ep)->{threads} };
{
    my ($out, $err, $rc) = run("$pb info '$ep'");
    is($rc, 0, 'info ep_values.prof');
    is(count_of(losses_of($out, 'nytprof'), qr/^value records/), $values,
        "info: the $values value records of EasyProfiler's reader, from the one decode");
    my ($chunks) = $out =~ /^chunks:\s+(\d+)/m;
    ok($chunks, "info counts the chunks ($chunks)");

    # through a pipe, which can be read only once: the same counts
    my ($pout, $perr, $prc) = run("cat '$ep' | $pb info -");
    is($prc, 0, 'info - (a pipe)') or diag $perr;
    is(count_of(losses_of($pout, 'nytprof'), qr/^value records/), $values, '... the same value records');
    is(($pout =~ /^chunks:\s+(\d+)/m)[0], $chunks, '... and the same chunk count');
    (my $a = $out) =~ s/^file:.*\n//m;
    (my $b = $pout) =~ s/^file:.*\n//m;
    is($b, $a, '... and the same report');

    # gzip-compressed, through the pipe
    system("gzip -c '$ep' > '$tmp/ep.prof.gz'") == 0 or die "gzip: $?";
    my ($gout, $gerr, $grc) = run("cat '$tmp/ep.prof.gz' | $pb info -");
    is($grc, 0, 'info - (gzip through a pipe)') or diag $gerr;
    is(count_of(losses_of($gout, 'nytprof'), qr/^value records/), $values, '... the same value records');

    ($out, $err, $rc) = run("cat '$ep' | $pb convert - --to collapsed -o '$tmp/ep.folded' --report");
    is($rc, 0, 'convert - --report (a pipe)');
    is(count_of(losses_of($err, 'collapsed'), qr/^value records/), $values, '... reports the value records');
    ($out, $err, $rc) = run("cat '$ep' | $pb convert - -o '$tmp/ep.nytprof' --report");
    is($rc, 0, 'convert - --report to nytprof.out (a pipe; counted as the writer reads)');
    is(count_of(losses_of($err, 'nytprof'), qr/^value records/), $values, '... reports the value records');
}

# StatProfiler: op names (one per sample: the weight) and section events, as
# Devel::StatProfiler's reader counts them
{
    my ($f) = glob "$d/statprofiler/sections_meta.out.*[0-9a-f]";
    my $t = truth($f);
    for my $to (qw(nytprof collapsed)) {
        my ($out, $err, $rc) = run("$pb convert '$f' --to $to -o '$tmp/sm.$to' --report");
        is($rc, 0, "sections_meta --report --to $to");
        my $l = losses_of($err, $to);
        is(count_of($l, qr/^op names/), $t->{total_weight}, "... op names of every sample ($t->{total_weight})");
        is(count_of($l, qr/^section/), $t->{num_section_events}, "... every section event ($t->{num_section_events})");
    }
    my ($out) = run("$pb info '$f'");
    is(count_of(losses_of($out, 'nytprof'), qr/^op names/), $t->{total_weight}, 'info: the same op names');
}

# Tachyon: samples with thread-state flags, as CPython's reader counts them
{
    my $f = "$d/tachyon/async_tasks.bin";
    my $h = truth($f)->{status_byte_histogram};
    my $flagged = 0;
    $flagged += $h->{$_} for grep { $_ } keys %$h;
    my ($out) = run("$pb info '$f'");
    is(count_of(losses_of($out, 'nytprof'), qr/thread-state flags/), $flagged,
        "info async_tasks.bin: $flagged samples with thread-state flags");
}

# to a stack output from a sampling decoder: the losses are counted in the
# decode that feeds the writer (c/sample_tee.c: the samples go on to a fold
# whose chunks the counter reads), so --report reads the input once
{
    my $f = "$d/tachyon/async_tasks.bin";
    my $h = truth($f)->{status_byte_histogram};
    my $flagged = 0;
    $flagged += $h->{$_} for grep { $_ } keys %$h;
    for my $to (qw(collapsed pprof)) {
        my ($out, $err, $rc) = run("$pb convert '$f' --to $to -o '$tmp/at.$to' --report");
        is($rc, 0, "async_tasks.bin --report --to $to");
        is(count_of(losses_of($err, $to), qr/thread-state flags/), $flagged,
            "... $flagged samples with thread-state flags, as CPython's reader counts them")
            if $to eq 'collapsed';    # (pprof keeps them as labels)
        my ($plain) = run("$pb convert '$f' --to $to -o '$tmp/at0.$to'");
        ok(slurp("$tmp/at.$to") eq slurp("$tmp/at0.$to"), '... and the same output as without --report');
    }
    # the counts came from the writer's own decode (the driver says so: counts)
    # (V8 and perf give the fold ns ticks, the writer µs: sample_ticks; V8 needs yajl)
    require Devel::ProfileBridge;
    my $yajl = defined Devel::ProfileBridge::features()->{libraries}{yajl};
    for my $in ($f, "$d/folded/nytprofcalls_modapp.folded", "$d/pprof/cpu_inline.prof", "$d/perf/rec_fork.perf",
        "$d/perf/rec_noperiod.perf",
        $yajl ? ("$d/v8/v8_mixed.cpuprofile", "$d/v8/v8_recursion.cpuprofile") : ()) {
        my $lc = { format => undef };
        Devel::ProfileBridge::_write('collapsed', 'convert', [$in], undef, {}, "$tmp/one.txt", -1, $lc);
        ok($lc->{counts}, "--report --to collapsed of $in: counted in the one decode");
    }
    # ... and what they count is what a decode of their own counts (the
    # chunks of the chunk path, whose timestamps are the fold's ns)
    for my $in ("$d/perf/rec_fork.perf", $yajl ? ("$d/v8/v8_mixed.cpuprofile") : ()) {
        my ($out, $err, $rc) = run("$pb convert '$in' --to collapsed -o '$tmp/tk.txt' --report");
        is($rc, 0, "--report --to collapsed of $in");
        my ($plain) = run("$pb convert '$in' --to collapsed -o '$tmp/tk0.txt'");
        ok(slurp("$tmp/tk.txt") eq slurp("$tmp/tk0.txt"), '... the same output as without --report (runs of a stack summed)');
        my $one = losses_of($err, 'collapsed');
        ok($one && %$one, '... lists its losses');
        my %own = map { ($_->{what} => $_->{count}) } @{ Devel::ProfileBridge::losses($in, to => 'collapsed') };
        is_deeply($one, \%own, '... the same counts as losses() (a decode of its own)');
    }
}

# NYTProf to a stack output: its line timings and call counts, as NYTProf's
# own reader lists the chunks (the .chunks.jsonl dump)
{
    my $f = "$d/nytprof/recursion.nytprof.out";
    my $tags = dump_tags("$f.chunks.jsonl");
    my ($out, $err, $rc) = run("$pb convert '$f' --to collapsed -o '$tmp/r.folded' --report");
    is($rc, 0, 'recursion.nytprof.out --report --to collapsed');
    my $l = losses_of($err, 'collapsed');
    is(count_of($l, qr/^statement/), $tags->{TIME_LINE}, "... every TIME_LINE of NYTProf's reader ($tags->{TIME_LINE})");
    is(count_of($l, qr/call counts/), $tags->{SUB_CALLERS}, "... every SUB_CALLERS ($tags->{SUB_CALLERS})");
    # counted from the chunks whose call events make the stacks, in that one decode
    for my $in ($f, "$d/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out") {
        my $lc = { format => undef };
        Devel::ProfileBridge::_write('collapsed', 'convert', [$in], undef, {}, "$tmp/one.txt", -1, $lc);
        ok($lc->{counts}, "--report --to collapsed of $in: counted in the one decode");
    }
}

# one decode: a decoder's warning is said once by info and by convert --report
{
    my $f = "$d/easyprofiler/ep_open_block.prof";
    my ($out, $err, $rc) = run("$pb info '$f'");
    is($rc, 0, 'info ep_open_block.prof');
    my @w = $err =~ /the file has 0 blocks/g;
    is(scalar @w, 1, '... warns once');
    ($out, $err, $rc) = run("$pb convert '$f' -o '$tmp/ob.nytprof' --report");
    is($rc, 0, 'convert --report ep_open_block.prof');
    @w = $err =~ /the file has 0 blocks/g;
    is(scalar @w, 1, '... warns once (one decode)');
    like($err, qr/^not carried to nytprof: nothing$/m, '... and reports');
}

# to a stack output from a span decoder (EasyProfiler's blocks, speedscope's
# evented profiles): the counter reads the span fold's chunks in the decode
# that feeds the writer, so --report reads the input once here too
{
    my $sf = "$d/speedscope/evented_two_threads.speedscope.json";
    my $cols = grep { exists $_->{col} } @{ JSON::PP->new->decode(slurp($sf))->{shared}{frames} };
    for my $case ([$ep, qr/^value records/, $values, 'value records, as its reader counts them'],
                  [$sf, qr/^column numbers/, $cols, 'frames with a col, as the file lists them']) {
        my ($in, $re, $want, $what) = @$case;
        my ($name) = $in =~ m{([^/]+)\z};
        for my $to (qw(collapsed pprof speedscope)) {
            my ($out, $err, $rc) = run("$pb convert '$in' --to $to -o '$tmp/sp.$to' --report");
            is($rc, 0, "$name --report --to $to");
            is(count_of(losses_of($err, $to), $re), $want, "... $want $what");
            run("$pb convert '$in' --to $to -o '$tmp/sp0.$to'");
            ok(slurp("$tmp/sp.$to") eq slurp("$tmp/sp0.$to"), '... and the same output as without --report');
        }
        my $lc = { format => undef };
        require Devel::ProfileBridge;
        Devel::ProfileBridge::_write('collapsed', 'convert', [$in], undef, {}, "$tmp/one.txt", -1, $lc);
        ok($lc->{counts}, "--report --to collapsed of $name: counted in the one decode");
    }
}

# to a timeline target (speedscope, gecko: each_tick, every recorded sample
# on its own) and to StatProfiler's files the losses are counted in the
# writer's decode too: the tee's
# fold takes a run the decoder says the chunk path sums (Tachyon's REPEAT
# runs) as one sample, so the counts are those of a decode of their own
{
    require Devel::ProfileBridge;
    # (StatProfiler: its sections, metadata and eval source become chunks
    # on the way to the tee's fold, as on its chunk path: fold_front)
    my @sp = grep { !/\.(?:md|json|jsonl)\z/ } glob "$d/statprofiler/{evals,sections_meta}.out.*";
    for my $in ("$d/tachyon/async_tasks.bin", "$d/tachyon/cpu_recursion.bin", "$d/pprof/cpu_inline.prof",
                "$d/perf/rec_fork.perf", @sp) {
        my ($name) = $in =~ m{([^/]+)\z};
        for my $to ($in =~ /statprofiler/ ? qw(speedscope gecko collapsed pprof statprofiler)
                                          : qw(speedscope gecko statprofiler)) {
            my $lc = { format => undef };
            Devel::ProfileBridge::_write($to, 'convert', [$in], undef, {}, "$tmp/tl.$to", -1, $lc);
            ok($lc->{counts}, "--report --to $to of $name: counted in the one decode");
            my ($out, $err, $rc) = run("$pb convert '$in' --to $to -o '$tmp/tl.$to' --report");
            is($rc, 0, "... convert --report --to $to");
            my %own = map { ($_->{what} => $_->{count}) } @{ Devel::ProfileBridge::losses($in, to => $to) };
            is_deeply(losses_of($err, $to) || {}, \%own, '... the same counts as losses() (a decode of its own)');
        }
    }
}

# opened once: info of a StatProfiler trace (whose run of files is found
# from the head of the one open), of a gzip file and of standard input, and
# convert --report to a timeline target (seen with strace where it runs)
SKIP: {
    my $st = `strace -V 2>/dev/null`;
    skip 'strace is not available', 1 unless $st && system("strace -o /dev/null true 2>/dev/null") == 0;
    my ($sp) = glob "$d/statprofiler/evals.out.*[0-9a-f]";
    system("gzip -c '$d/tachyon/cpu_recursion.bin' > '$tmp/cr.bin.gz'") == 0 or die "gzip: $?";
    my $opens = sub {
        my ($f, $cmd) = @_;
        system("strace -f -e trace=openat -o '$tmp/strace' $cmd >/dev/null 2>'$tmp/err'");
        open my $fh, '<', "$tmp/strace" or die "$tmp/strace: $!";
        return scalar grep { /"\Q$f\E"/ && !/ENOENT|O_DIRECTORY/ } <$fh>;
    };
    is($opens->($sp, "$pb info '$sp'"), 1, 'info of a StatProfiler trace opens it once');
    is($opens->("$tmp/cr.bin.gz", "$pb info '$tmp/cr.bin.gz'"), 1, 'info of a gzip file opens it once');
    for my $to (qw(speedscope gecko collapsed statprofiler)) {
        is($opens->("$tmp/cr.bin.gz", "$pb convert '$tmp/cr.bin.gz' --report --to $to -o '$tmp/cr.$to'"), 1,
            "convert --report --to $to of a gzip file opens it once");
    }
    is($opens->($sp, "$pb convert '$sp' --to speedscope -o '$tmp/sp.json'"), 1,
        'convert of a StatProfiler trace opens it once');
    is($opens->($sp, "$pb convert '$sp' --report -o '$tmp/sp.nytprof'"), 1,
        'convert --report of a StatProfiler trace to nytprof.out opens it once');
    for my $to (qw(collapsed speedscope)) {
        is($opens->($sp, "$pb convert '$sp' --report --to $to -o '$tmp/sp.$to'"), 1,
            "convert --report --to $to of a StatProfiler trace opens it once");
    }
}

done_testing;
