#!perl
# Tachyon files written by a real CPython 3.15.2 (t/data/tachyon/real315/, see
# its README), against CPython's own reader (X.bin.truth.json: BinaryReader's
# get_info() and its raw replay):
#  * info (Perl API and `profbridge info --json`): mode, capture, duration_sec,
#    sample_rate, error_rate, missed_samples exactly as get_info() says (the
#    header's bit field at 60, the stats trailer's flags);
#  * samples in all and per thread, and the line weights (TIME_LINE per file
#    and line = the innermost frames' lines of CPython's samples);
#  * with `go tool pprof -raw` (when go is installed): every distinct
#    (thread, stack with files and lines, thread-state flags, opcode) and its
#    weight, as CPython's replay hands them to a collector;
#  * with --opcodes, the StatProfiler records' op names (read back by the C
#    reader that t/60 checks against the real Devel::StatProfiler reader);
#  * the loss report names the error rate and the missed samples.
# The raw replay's stacks are taken as CPython's collectors see them: without
# the profiler's own frames (_sync_coordinator.py).
use strict;
use warnings;
use Test::More;
use Config;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(zstd);
use Stacks qw(slurp go_for_pprof first_differences);
use JSON::PP ();
use Devel::ProfileBridge;

my $root = "$FindBin::Bin/..";
my $data = "$FindBin::Bin/data/tachyon/real315";
my @files = sort glob "$data/*.bin";
plan skip_all => "no files in $data" unless @files;
my $tmp = tempdir('pb32-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @inc = map { "-I$_" } grep { -d } "$root/blib/lib", "$root/blib/arch";
my $go = go_for_pprof($tmp);
my $opnames = JSON::PP->new->decode(slurp("$data/opnames.json"))->{names};

# CPython's THREAD_STATUS_* bits (_remote_debugging), as our labels name them
my @FLAGS = qw(has_gil on_cpu unknown gil_requested has_exception main_thread);
sub flags { my ($s) = @_; join ' ', map { $FLAGS[$_] } grep { $s & (1 << $_) } 0 .. $#FLAGS }
my @MODES = qw(wall cpu gil all exception);    # get_info()'s mode numbers
my @CAPTURE = qw(all_threads native gc opcodes blocking);
my @FLOATS = qw(duration_sec sample_rate error_rate missed_samples);

for my $file (@files) {
    (my $name = $file) =~ s{.*/}{};
    my $truth = JSON::PP->new->decode(slurp("$file.truth.json"));
    my $gi = $truth->{info};
    my $iv = $gi->{sample_interval_us};
    my %want = (mode => $MODES[ $gi->{mode} ], capture => [ grep { $gi->{capture_config}{$_} } @CAPTURE ],
        map { $_ => $gi->{$_} } qw(duration_sec sample_rate error_rate missed_samples));

    # ---- info: the API and the CLI's JSON --------------------------------
    my ($info) = Devel::ProfileBridge::info($file);
    my $json = JSON::PP->new->decode(scalar `"$Config{perlpath}" @inc "$root/bin/profbridge" info --json "$file"`);
    # doubles compared to the last bit (is_deeply compares 15 digits)
    my $exact = sub { my %h = %{ $_[0] }; $h{$_} = sprintf '%.17g', $h{$_} for grep { defined $h{$_} } @FLOATS; \%h };
    for my $got ([ 'info()', $info ], [ 'info --json', $json ]) {
        my ($how, $i) = @$got;
        is_deeply($exact->({ map { $_ => $i->{$_} } keys %want }), $exact->(\%want),
            "$name: $how: mode $want{mode}, capture [@{ $want{capture} }], "
            . join(', ', map { sprintf '%s %.17g', $_, $want{$_} } @FLOATS));
    }
    is($json->{layout}, '3.15', "$name: layout 3.15");

    # ---- samples in all, per thread, and the line weights ------------------
    my %per_thread = map { ($_->{id} => $_->{samples}) } @{ $info->{threads} };
    is_deeply(\%per_thread, $truth->{per_thread_samples}, "$name: samples per thread as CPython counts them ("
        . join(', ', map { "$_: $truth->{per_thread_samples}{$_}" } sort keys %{ $truth->{per_thread_samples} }) . ')');
    my (%fname, %lines, $ticks);
    Devel::ProfileBridge::for_chunks(sub {
        my ($tag, @a) = @_;
        $fname{ $a[0] } = $a[6] if $tag eq 'NEW_FID';
        if ($tag eq 'TIME_LINE') { $lines{"$fname{$a[1]}:$a[2]"} += $a[0]; $ticks += $a[0] }
    }, filename => $file, quiet => 1);
    my $frames = $truth->{frames};
    my (%want_lines, %want_stacks, %want_ops, $total);
    for my $s (@{ $truth->{stacks} }) {
        my ($tid, $status, $w, $idx) = @$s;
        $total += $w;
        # the raw replay is unfiltered: CPython's collectors drop the
        # profiler's own frames (filter_internal_frames: files ending in
        # _sync_coordinator.py), and so do we (t/36 checks it against replay)
        $idx = [ grep { $frames->[$_][0] !~ /_sync_coordinator\.py\z/ } @$idx ];
        my $leaf = $frames->[ $idx->[-1] ];
        # the innermost frame's line; synthetic frames (file "~") have none
        $want_lines{"$leaf->[0]:" . ($leaf->[2] ? $leaf->[2][0] : 0)} += $w * $iv if $leaf->[0] ne '~';
        my $stack = join ';', map { my $f = $frames->[$_]; "$f->[0]:" . ($f->[2] ? $f->[2][0] : 0) . ":$f->[1]" } @$idx;
        my $op = defined $leaf->[3] ? $opnames->{ $leaf->[3] } // "<$leaf->[3]>" : '';
        $want_stacks{"$tid|" . flags($status) . "|$op|$stack"} += $w;
        $want_ops{$op} += $w if length $op;
    }
    # (CPython's "~" frames are in the report's fake file of the frames the
    # profiler adds, which has no lines)
    delete @lines{ grep { /\A\(frames the profiler adds, no source\):/ } keys %lines };
    is(($ticks // 0) / $iv, $total // 0, "$name: " . ($total // 0) . ' samples in all');
    is_deeply(\%lines, \%want_lines, "$name: line weights of " . keys(%want_lines) . ' lines as CPython\'s samples give them')
        or diag explain [ first_differences(\%lines, \%want_lines, 5) ];

    # ---- pprof: stacks, thread-state flags, opcodes ------------------------
  SKIP: {
        skip 'no go command for go tool pprof', 1 unless $go;
        my $pb = "$tmp/$name.pb.gz";
        Devel::ProfileBridge::convert(in => $file, out => $pb, to => 'pprof');
        my $raw = `"$go" tool pprof -raw "$pb" 2>/dev/null`;
        my (%loc, @samples);
        for (split /\n/, $raw) {
            # "   N: 0x0 M=1 NAME FILE:LINE s=0()"
            $loc{$1} = [ $2, $3, $4 ] if /\A\s*(\d+): 0x\S+ M=\d+ (\S+) (.*):(\d+) s=\d+/;
            push @samples, [ $1, [ split ' ', $2 ], {} ] if /\A\s*(\d+)\s+\d+: ([\d ]+?)\s*\z/;
            if (@samples && /\A\s+([a-z_]+:\[.*)\z/) {
                my $l = $1;
                $samples[-1][2]{$1} = $2 while $l =~ /([a-z_]+):\[([^\]]*)\]/g;
            }
        }
        my %got;
        for my $s (@samples) {
            my ($w, $ids, $lab) = @$s;
            my $stack = join ';', map {
                my ($fn, $f, $l) = @{ $loc{$_} };
                # the function's own name: CPython's qualname, whichever way
                # a sub's package is spelled in front of it
                (my $q = $fn) =~ s/::/./g;
                "$f:$l:$q";
            } reverse @$ids;
            $got{ join '|', $lab->{thread}, $lab->{thread_status} // '', $lab->{opcode} // '', $stack } += $w;
        }
        # a frame's name may carry its module in front (Perl's package::sub):
        # each of our stacks stands for the truth's stack with the same
        # thread, flags, opcode, files and lines whose names it ends in
        my %by_place;
        push @{ $by_place{ _places($_) } }, $_ for keys %want_stacks;
        my %norm;
        for my $k (keys %got) {
            my ($head, $stack) = $k =~ /\A((?:[^|]*\|){3})(.*)\z/s;
            my @f = split /;/, $stack;
            my ($wk) = grep { _same_frames($_, $head, \@f) } @{ $by_place{ _places($k) } || [] };
            $norm{ $wk // $k } += $got{$k};
        }
        is_deeply(\%norm, \%want_stacks, "$name: pprof: " . keys(%want_stacks)
            . ' distinct (thread, flags, opcode, stack with files and lines) and their weights as CPython replays them')
            or diag explain [ first_differences(\%norm, \%want_stacks, 5) ];
    }

    # ---- StatProfiler: the op names --------------------------------------
    if (%want_ops) {
        my %got = statprofiler_ops($file);
      SKIP: {
            skip 'cannot build the C StatProfiler reader', 1 unless %got || !$Config{cc};
            is_deeply(\%got, \%want_ops, "$name: StatProfiler op names of every sample: "
                . join(', ', map { "$_ $want_ops{$_}" } (sort { $want_ops{$b} <=> $want_ops{$a} || $a cmp $b } keys %want_ops)[0 .. 2]) . ' ...');
        }
        my $l = Devel::ProfileBridge::losses($file, to => 'collapsed');
        my ($e) = grep { $_->{what} =~ /opcode/ } @$l;
        is($e && $e->{count}, $total, "$name: the loss report to collapsed counts $total samples with an opcode");
        ok(!grep({ $_->{what} =~ /opcode|thread-state/ } @{ Devel::ProfileBridge::losses($file, to => 'pprof') }),
            "$name: nothing of opcodes or thread-state flags lost to pprof");
    }

    # ---- the loss report names what the profiler could not sample -----------
    for my $k ([ error_rate => qr/failed to take/ ], [ missed_samples => qr/missed/ ]) {
        my ($e) = grep { $_->{what} =~ $k->[1] } @{ Devel::ProfileBridge::losses($file) };
        if ($gi->{ $k->[0] } > 0) {
            my ($pct) = ($e ? $e->{count} : '') =~ /\A([0-9.eE+-]+)%\z/;
            ok(defined $pct && $pct == $gi->{ $k->[0] }, "$name: the loss report names $k->[0] $gi->{$k->[0]}%");
        } else {
            ok(!$e, "$name: no $k->[0] in the loss report (0)");
        }
    }
}

# a stack key without the frames' names: "thread|flags|opcode|file:line;..."
sub _places {
    my ($k) = @_;
    my ($head, $stack) = $k =~ /\A((?:[^|]*\|){3})(.*)\z/s;
    return $head . join ';', map { /\A(.*:\d+):/s ? $1 : $_ } split /;/, $stack;
}

# frames of a pprof stack ($f: "file:line:name" with "." for "::") against a
# truth key: same files and lines, and each name the truth's qualname or
# ending in ".qualname"
sub _same_frames {
    my ($key, $head, $f) = @_;
    my @t = split /;/, substr($key, length $head);
    return 0 unless @t == @$f;
    for my $i (0 .. $#t) {
        my ($tf, $tl, $tn) = $t[$i] =~ /\A(.*):(\d+):(.*)\z/s or return 0;
        my ($gf, $gl, $gn) = $f->[$i] =~ /\A(.*):(\d+):(.*)\z/s or return 0;
        return 0 unless $tf eq $gf && $tl == $gl && ($gn eq $tn || substr($gn, -length($tn) - 1) eq ".$tn");
    }
    return 1;
}

# { op name => samples } of FILE converted to StatProfiler, read back with
# t/c/statprof_samples; () when the tool cannot be built
my $sp_tool;
sub statprofiler_ops {
    my ($file) = @_;
    return () unless Devel::ProfileBridge::features()->{write}{statprofiler};
    if (!defined $sp_tool) {
        $sp_tool = "$tmp/statprof_samples";
        # the build's objects when they are up to date (as t/60 does)
        my @core = sort glob "$root/c/*.c";
        my @obj = map { s/\.c\z/.o/r } @core;
        @core = @obj unless grep { !-e $_ || -M $_ > -M $_ =~ s/\.o\z/.c/r } @obj;
        my $cmd = join ' ', $ENV{CC} || $Config{cc}, '-O1 -std=c99', "-I$root/c", "$root/t/c/statprof_samples.c", @core,
            '-lz -lzstd -lsnappy -lyajl -lpthread', '-o', $sp_tool, '2>&1';
        my $out = `$cmd`;
        $sp_tool = '' if $?;
    }
    return () unless $sp_tool;
    my $out = "$tmp/sp.out";
    unlink glob "$out*";
    my @names = Devel::ProfileBridge::convert(in => $file, out => $out, to => 'statprofiler');
    my %ops;
    for my $t (grep { -f } $out, glob "$out.*") {
        for (split /\n/, scalar `"$sp_tool" "$t"`) {
            my $s = eval { JSON::PP->new->decode($_) } or next;
            $ops{ $s->[1] } += $s->[0] if ref $s eq 'ARRAY' && length $s->[1];
        }
    }
    return %ops;
}

done_testing;
