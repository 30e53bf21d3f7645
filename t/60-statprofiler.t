#!/usr/bin/perl
# Devel::StatProfiler traces: our C reader against the real
# Devel::StatProfiler::Reader's view (t/data/statprofiler/*.samples.jsonl and
# *.truth.json, written by ../shared/tools/statprofiler-dump-samples), the
# writer (round trip, declared lengths, misuse), hostile inputs, and the
# chunk stream through for_chunks once the XS is built.
#
# The C test programs t/c/statprof_samples.c and t/c/test_statprofiler.c are
# compiled here against c/ (needs a C compiler, zlib, libzstd, libsnappy).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use File::Temp qw(tempdir);
use File::Spec;
use Config;
use JSON::PP ();

my $data = 't/data/statprofiler';
my @traces = sort glob("$data/*.out.*[0-9a-f]") or plan skip_all => "no traces in $data";
@traces = grep { /\.[0-9a-f]{48}\.[0-9a-f]{8}$/ } @traces;
my $tmp = tempdir(CLEANUP => 1);

# ---- build the C tools -------------------------------------------------------
# the whole C core: the objects "make" built for the XS module when they are
# all there (compiling c/*.c twice more costs half a minute), else the sources
my @core = sort glob 'c/*.c';
my @obj = map { s/\.c\z/.o/r } @core;
@core = @obj unless grep { !-e $_ || -M $_ > -M $_ =~ s/\.o\z/.c/r } @obj;
my $cc = $ENV{CC} || $Config{cc} || 'cc';
my %bin;
for my $tool (qw(statprof_samples test_statprofiler)) {
    my $out = "$tmp/$tool";
    my $cmd = "$cc -O2 -std=c99 -Ic t/c/$tool.c @core -lz -lzstd -lsnappy -lyajl -lpthread -o $out 2>$tmp/$tool.cc.log";
    if (system($cmd) == 0) { $bin{$tool} = $out }
    else { diag "cannot build $tool: " . do { local (@ARGV, $/) = "$tmp/$tool.cc.log"; <> } }
}
plan skip_all => 'cannot compile the C test tools' unless $bin{statprof_samples} && $bin{test_statprofiler};

sub run {
    my ($cmd) = @_;
    my $out = `$cmd 2>$tmp/stderr`;
    return ($? >> 8, $out, slurp_raw("$tmp/stderr"));
}
my $json = JSON::PP->new->utf8->canonical;

# ---- 1. every trace: samples identical to the real reader's ----------------------
# -q reproduces the reader's perl >= 5.36 quirk (a main/eval frame right after
# a BEGIN sub frame is dropped); the dump already shows raw "(eval N)" file
# names (no "qeval:<id>/" prefix), which is what we report too.
for my $t (@traces) {
    my $name = ($t =~ s{.*/}{}r);
    my ($rc, $out, $err) = run("$bin{statprof_samples} -q -t $t");
    is($rc, 0, "$name: decodes") or diag $err;
    my @lines = split /^/m, $out;
    my $truth_line = pop @lines;
    my $want = slurp_raw("$t.samples.jsonl");
    my $got = join '', @lines;
    ok($got eq $want, "$name: every sample's weight, op name and frames match the real reader")
        or diag "first difference at line " . first_diff($got, $want);
    my $mine = $json->decode($truth_line)->{truth};
    my $truth = $json->decode(slurp_raw("$t.truth.json"));
    is($mine->{attributes}{perl_version}, $truth->{perl_version}, "$name: perl version");
    is($mine->{attributes}{sample_interval_us}, $truth->{tick_duration}, "$name: interval (µs)");
    is($mine->{attributes}{stack_depth}, $truth->{stack_depth}, "$name: stack depth");
    is($mine->{attributes}{genealogy_id}, $truth->{genealogy}{id}, "$name: genealogy id");
    is($mine->{attributes}{parent_id}, $truth->{genealogy}{parent_id}, "$name: parent id");
    is($mine->{attributes}{genealogy_ordinal}, $truth->{genealogy}{ordinal}, "$name: ordinal");
    is_deeply($mine->{header_metadata}, $truth->{header_metadata}, "$name: header metadata");
    is_deeply($mine->{final_metadata}, $truth->{final_metadata}, "$name: final metadata");
    is($mine->{num_samples}, $truth->{num_samples}, "$name: num_samples");
    is($mine->{total_weight}, $truth->{total_weight}, "$name: total weight");
    # eval source: the real reader rewrites (0x...) addresses; compare texts it keeps
    my %ev = %{ $truth->{eval_source} };
    is_deeply([sort keys %{ $mine->{eval_source} }], [sort keys %ev], "$name: eval source names");
    my $bad = grep { defined $ev{$_}{text} && $ev{$_}{text} ne $mine->{eval_source}{$_} } keys %ev;
    is($bad, 0, "$name: eval source texts");
}

# ---- 2. multi-file: the fork genealogy ------------------------------------------------
{
    my @fork = grep { m{/fork\.out\.} } @traces;
    my ($rc, $out, $err) = run("$bin{statprof_samples} -q -m @fork");
    is($rc, 0, 'fork trace as one genealogy') or diag $err;
    my (@threads, %lines, $cur);
    for (split /^/m, $out) {
        if (/^\["thread",(\d+),(\d+),(\d+)\]/) { push @threads, [$1, $2, $3]; $cur = $1; next }
        $lines{$cur} .= $_;
    }
    is(scalar @threads, 3, 'three processes: parent and two forked children');
    my $parent_pid = $threads[0][1];
    is($threads[0][2], 0, 'parent is a root');
    is_deeply([map { $_->[2] } @threads[1, 2]], [$parent_pid, $parent_pid], 'children name the parent pid');
    my $pid_hex = sprintf '%08x', $parent_pid;
    my $want = join '', map { slurp_raw("$_.samples.jsonl") } sort grep { /\.\Q$pid_hex\E[0-9a-f]{40}\./ } @fork;
    ok($lines{ $threads[0][0] } eq $want, 'parent: ordinals 1, 2, 3 in order, samples match');
}

# ---- 3. writer: our reader -> our writer -> our reader ----------------------------------
for my $t (@traces) {
    my $name = ($t =~ s{.*/}{}r);
    my $o = "$tmp/rt.out";
    my ($rc, undef, $err) = run("$bin{test_statprofiler} convert $t -o $o");
    is($rc, 0, "$name: rewritten by our writer") or diag $err;
    ok(!-e "${o}_", "$name: no temporary <name>_ left");
    my (undef, $a) = run("$bin{statprof_samples} $t");
    my (undef, $b) = run("$bin{statprof_samples} $o");
    ok($a eq $b, "$name: same samples, frames, op names, sections and metadata after the round trip");
    SKIP: {
        skip 'Compress::Snappy missing for statprofiler-raw-records', 1
            unless eval { require Compress::Snappy; 1 };
        # a copy of ../shared/tools/statprofiler-raw-records (independent of our C code)
        my $lister = File::Spec->catfile($data, 'statprofiler-raw-records');
        skip 'statprofiler-raw-records not found', 1 unless -e $lister;
        my ($lrc, $lo) = run("$^X $lister --summary $o");
        like($lo, qr/length-field mismatches: none/, "$name: independent lister reads our records, declared lengths right");
    }
}

# ---- 4. hostile inputs and writer misuse (TAP from the C program) -------------------
for my $mode ('bad', "misuse $tmp") {
    my ($rc, $out, $err) = run("$bin{test_statprofiler} $mode");
    my @not = $out =~ /^not ok .*$/mg;
    ok($rc == 0 && !@not && $out =~ /^1\.\.\d+$/m, "C checks: $mode") or diag "$out$err";
}

# ---- 5. truncation: prefixes of one trace are clean errors ---------------------------
{
    my ($small) = grep { m{/xs_calls\.} } @traces;
    my $bytes = slurp_raw($small);
    my $bad = 0;
    # every prefix through the header and first packets, then every 13th
    # (xt/20-bad-input-sweep.t cuts every file at every byte)
    for my $len (grep { $_ < 160 || $_ % 11 == 0 } 0 .. length($bytes) - 1) {
        open my $fh, '>:raw', "$tmp/cut" or die; print $fh substr($bytes, 0, $len); close $fh;
        my ($rc, undef, $err) = run("$bin{statprof_samples} $tmp/cut");
        # rc 0 is fine only at a record boundary past the header; crashes give rc > 2
        $bad++ if $rc > 2 || ($rc == 2 && $err !~ /^statprofiler: (truncated|corrupt): .* at byte \d+ of /m);
    }
    is($bad, 0, 'prefixes of xs_calls decode or fail with a clean truncated/corrupt error');
}

# ---- 6. the chunk stream through for_chunks (XS) ------------------------------------------
SKIP: {
    skip 'Devel::ProfileBridge::ReadStream not built yet', 3
        unless eval { require Devel::ProfileBridge::ReadStream; Devel::ProfileBridge::ReadStream->import('for_chunks'); 1 };
    my ($t) = grep { m{/sections_meta\.} } @traces;
    my $truth = $json->decode(slurp_raw("$t.truth.json"));
    my (%attr, $ticks, @comments);
    for_chunks(sub {
        my $tag = shift;
        $attr{ $_[0] } = $_[1] if $tag eq 'ATTRIBUTE';
        $ticks += $_[0] if $tag eq 'TIME_LINE';
        push @comments, $_[0] if $tag eq 'COMMENT';
    }, filename => $t);
    is($attr{source_format}, 'statprofiler', 'for_chunks: source_format');
    is($ticks, $truth->{total_weight} * $truth->{tick_duration} - 0 * 1,
        'for_chunks: TIME_LINE ticks = total weight x interval (weight-0 samples add nothing)');
    is(scalar(grep { /statprofiler section/ } @comments), 22, 'for_chunks: one COMMENT per section start/end');
}

# ---- a long fork chain stored child-before-parent (issue 27: genealogy) ----
# 600 processes, each the child of the one before, their pids falling along
# the chain so the files list children first; process k weighs k + 1.  The
# run (from the root's first file) is every process, parents before children.
# (Its speed is in bench/genealogy.sh: no timed test here.)
{
    my $n = 600;
    my $cdir = "$tmp/chain";
    mkdir $cdir or die "$cdir: $!";
    chomp(my $root = `$bin{test_statprofiler} chain $cdir $n`);
    ok(-f $root, "chain: $n traces written") or diag $root;
    my (@pids, %started, $order_ok, $ticks) = ();
    $order_ok = 1;
    Devel::ProfileBridge::for_chunks(sub {
        my $tag = shift;
        if ($tag eq 'PID_START') {
            my ($pid, $ppid) = @_;
            $order_ok = 0 if $ppid && !$started{$ppid};
            $started{$pid} = 1;
            push @pids, $pid;
        }
        $ticks += $_[0] if $tag eq 'TIME_LINE';
    }, filename => $cdir);
    is(scalar @pids, $n, "chain: the run's directory reads as all $n processes");
    ok($order_ok, 'chain: every process after its parent');
    is($ticks, $n * ($n + 1) / 2 * 1000, 'chain: every trace counted once (weights x 1000 us)');
    my $folded = "$tmp/chain.folded";
    Devel::ProfileBridge::convert(in => $root, out => $folded, to => 'collapsed');
    my ($sum, $lines) = (0, 0);
    open my $fh, '<', $folded or die;
    while (<$fh>) { $sum += (split)[-1]; $lines++ }
    is_deeply([ $sum, $lines ], [ $n * ($n + 1) / 2, $n ],
        "chain: collapsed from the root's first file: one line per process, the weights summed");
}

done_testing;

sub first_diff {
    my ($x, $y) = @_;
    my @x = split /\n/, $x; my @y = split /\n/, $y;
    for my $i (0 .. ($#x > $#y ? $#x : $#y)) {
        return $i + 1 . ": got " . ($x[$i] // 'EOF') . "\n want " . ($y[$i] // 'EOF')
            if ($x[$i] // '') ne ($y[$i] // '');
    }
    return 'none';
}
