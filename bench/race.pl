#!/usr/bin/perl
# bench/race.pl - every large corpus file, each of our targets raced against
# the real reader of the file's format, in one run.
#
#   perl bench/race.pl [--runs N] [--corpus DIR] [--tools DIR] [--only WORD]...
#                      [--target NAME]... [--shared-real]
#
# Run from the distribution root after "perl Makefile.PL && make" (it is what
# "make bench" runs first, through bench/run-all.sh).
#
# The real readers, found or built here (into --tools DIR, default
# $PB_BENCH_TOOLS or $TMPDIR/pb-bench-tools; a second run reuses them):
#   NYTProf       Devel::NYTProf::ReadStream's for_chunks with an empty
#                 callback (Debian libdevel-nytprof-perl)
#   Pynytprof     the same reader (the files are NYTProf's format)
#   EasyProfiler  fillTreesFromFile (EasyProfiler 2.1, Release build), as
#                 "ep-read --quiet FILE": CORPUS/../tools/build-real-easyprofiler
#   StatProfiler  Devel::StatProfiler::Reader, read_trace to the end:
#                 CORPUS/../tools/build-real-statprofiler
#   Tachyon       CPython 3.15's own "python3.15 -m profiling.sampling replay
#                 --collapsed", run directly in the Debian sid chroot that
#                 CORPUS/../tools/make-real-python315 makes in
#                 TOOLS/py315-sid (root, and Debian's archive reachable, the
#                 first time; $PY315_ROOT names another chroot), with a clean
#                 environment, on a copy of the file in the chroot's
#                 /srv/bench-PID (several races may share one chroot)
#   V8            node -e 'JSON.parse(fs.readFileSync(f))': the floor of any
#                 JavaScript reader of a .cpuprofile (Debian nodejs).  The
#                 file, v8/large/synthetic-100mb.cpuprofile (--v8-mb N), is
#                 made at bench time by bench/make-cpuprofile.js into --tools
#                 DIR (kept for the next run); it needs no corpus.
#   pprof         go tool pprof -raw (Debian golang-go; its pprof binary
#                 run directly, output to /dev/null) on a Go CPU profile of
#                 about 50 MB made here, not taken from the corpus:
#                 t/data/pprof/gen_labels.go (the standard library only:
#                 8,750,000 samples over a pool of 20,000 stacks, no labels),
#                 kept in --tools DIR for the next run
# A reader that cannot be had is printed as "missing" with the reason, one
# that rejects a file as "refused" with its message: never a remembered
# figure.
#
# Targets (ours, each a whole process: perl -Mblib ...):
#   for_chunks    Devel::ProfileBridge::ReadStream's for_chunks { } (empty)
#   calls_floor   the floor of for_chunks: the same number of callback calls
#                 with the file's tag mix and argument shapes, made by an XS
#                 loop (Devel::ProfileBridge::_call_floor) without reading
#   nytprof       profbridge convert FILE -o OUT           (nytprof.out)
#   collapsed     profbridge convert FILE --to collapsed
#   pprof         profbridge convert FILE --to pprof
#   speedscope    profbridge convert FILE --to speedscope
#   statprofiler  profbridge convert FILE --to statprofiler (StatProfiler
#                 records; Tachyon and StatProfiler input only, else "n/a")
# and the file's floor (bench/floor.c, built here with cc): its bytes read
# and decompressed as its format stores them (gzip for pprof, NYTProf's zlib
# part, Tachyon's zstd region, StatProfiler's snappy packets; EasyProfiler:
# the bytes alone) or, for JSON, parsed by yajl with no callbacks; nothing
# done with them.  It runs once a round, and "x floor" is ours / floor.
#
# Method: each command is run once untimed (a probe: it must succeed, and it
# warms the page cache), then N rounds (default 5).  A round runs, for each
# target, the real reader and then the target (A B A C A D ...), so every
# target has N runs of its own paired with N runs of the real reader, and
# load on the machine falls on both sides alike; --only WORD keeps the files
# whose "format/name" contains WORD, --target NAME (repeated) races only
# those of our targets (by the names above); --shared-real runs the real reader once
# per round instead (A B C D ...: quicker, the pairing looser).  Times are
# wall seconds of the whole process (Time::HiRes around it), peak RSS is
# /usr/bin/time's %M (the process's maximum resident set).  Printed per file
# and target: the medians of ours and theirs, ours/theirs (the ratio of the
# medians; below 1.00x ours is faster), and both peak RSS (medians, MB); then
# each of our targets against our collapsed output of the same file.
use strict;
use warnings;
use Getopt::Long;
use Config;
use Cwd qw(abs_path getcwd);
use File::Basename qw(basename dirname);
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use Time::HiRes qw(time);
use lib 'bench';
use BenchCommon qw(large_go_profile median %LARGE_PICK);

my $runs = 5;
my $corpus = $ENV{CORPUS} // '../shared/corpus';
my $tools = $ENV{PB_BENCH_TOOLS} // ($ENV{TMPDIR} // '/tmp') . '/pb-bench-tools';
my @only;
my @only_targets;
my $shared_real = 0;
my $v8_mb = 100;
GetOptions('runs=i' => \$runs, 'corpus=s' => \$corpus, 'tools=s' => \$tools, 'only=s' => \@only,
    'target=s' => \@only_targets, 'shared-real' => \$shared_real, 'v8-mb=i' => \$v8_mb)
    or die "usage: $0 [--runs N] [--corpus DIR] [--tools DIR] [--only WORD]... [--target NAME]... [--shared-real] "
    . "[--v8-mb N]\n";
$runs = 1 if $runs < 1;
die "race.pl: run it from the distribution root after 'perl Makefile.PL && make' (no blib/)\n"
    unless -d 'blib/arch' && -f 'bin/profbridge';
my $node = `which node 2>/dev/null`;
chomp $node;
unless (-d $corpus) {
    print "race.pl: the corpus directory $corpus is absent: ", ($node ? 'only the generated V8 file' : 'nothing'),
        " to race.\n",
        "  The large profiles and the real tools' build scripts come with the development\n",
        "  material beside the distribution (../shared: corpus/ and tools/); set CORPUS=DIR\n",
        "  to point at a corpus directory.\n";
    exit 0 unless $node;
}
$corpus = abs_path($corpus) // $corpus;
my $shared_tools = abs_path("$corpus/../tools") // "$corpus/../tools";
make_path($tools);
$tools = abs_path($tools);
my $tmp = tempdir('pb-race-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $perl = $Config{perlpath};
my $timebin = '/usr/bin/time';
die "race.pl: $timebin (GNU time) is needed for the peak RSS: apt-get install time\n" unless -x $timebin;

# the floor of each file (bench/floor.c): its bytes read and decompressed
# (JSON: parsed by yajl, no callbacks), nothing done with them; one run of
# it in each round beside ours, and ours / floor printed per target
my %floor_kind = (pprof => 'gzip', nytprof => 'nytprof', pynytprof => 'nytprof', statprofiler => 'snappy',
    tachyon => 'zstd', v8 => 'json', easyprofiler => 'read');
my $floor_bin = "$tmp/floor";
undef $floor_bin if system($ENV{CC} || 'cc', '-O2', '-std=c99', '-o', $floor_bin, 'bench/floor.c', '-lz', '-lzstd',
    '-lsnappy', '-lyajl') != 0;
print STDERR "race.pl: bench/floor.c did not build: no floor column\n" unless $floor_bin;

# ---- the large corpus files ----------------------------------------------------------------
my %pick = %LARGE_PICK;
# --only WORD: the files whose "format/name" contains one of the words
my $only_re = @only ? join('|', map { quotemeta } @only) : undef;
sub wanted { !defined $only_re || ("$_[0]/" . basename($_[1])) =~ /$only_re/ }
my @files;
for my $fmt (-d $corpus ? sort keys %pick : ()) {
    push @files, map { [$fmt, $_] } grep { basename($_) =~ $pick{$fmt} && -f } sort glob("$corpus/$fmt/large/*");
}
# the V8 file, made here (bench/make-cpuprofile.js) once and kept in --tools,
# only when it is raced
my $v8_file = "$tools/v8/large/synthetic-${v8_mb}mb.cpuprofile";
if ($node && wanted(v8 => $v8_file)) {
    my $f = $v8_file;
    if (!-s $f) {
        make_path(dirname($f));
        print STDERR "race.pl: making $f (node bench/make-cpuprofile.js, $v8_mb MB)\n";
        system($node, 'bench/make-cpuprofile.js', "$f.part", $v8_mb) == 0 && rename("$f.part", $f)
            or die "race.pl: bench/make-cpuprofile.js failed\n";
    }
    push @files, [v8 => $f];
}
# the large Go CPU profile: made once into the tools directory, only when
# it is raced
if (wanted(pprof => large_go_profile($tools, 'race.pl', 0))) {
    my $big = large_go_profile($tools, 'race.pl', 1);
    push @files, [pprof => $big] if $big;
}
@files = grep { wanted(@$_) } @files;
die "race.pl: no large corpus files under $corpus/*/large\n" unless @files;
# the real readers are found or built only for the formats raced (--only)
my %raced = map { $_->[0] => 1 } @files;

# ---- the real readers -------------------------------------------------------------------
# Each: { name, cmd => sub (FILE) -> [argv], missing => reason }.
my %real;

sub log_file { "$tools/$_[0].log" }
sub tool_script {
    my ($name) = @_;
    my $s = "$shared_tools/$name";
    return -x $s ? $s : undef;
}

# NYTProf (Pynytprof files are NYTProf's format: the same reader)
{
    my $v = `'$perl' -MDevel::NYTProf::ReadStream -e 'print \$Devel::NYTProf::Core::VERSION // \$Devel::NYTProf::VERSION // q(?)' 2>&1`;
    my $r = $? == 0
        ? {
        name => "Devel::NYTProf::ReadStream for_chunks { } (Devel::NYTProf $v)",
        cmd  => sub {
            [$perl, '-MDevel::NYTProf::ReadStream=for_chunks', '-e', 'for_chunks { } filename => shift, quiet => 1', $_[0]];
        },
        }
        : { missing => 'Devel::NYTProf::ReadStream does not load (Debian: apt-get install libdevel-nytprof-perl)' };
    $real{nytprof} = $real{pynytprof} = $r;
}

# A real reader built by a script of ../shared/tools into $tools/$fmt: its
# lines of output (the script's own: the reader's path, or its include
# flags), or () when the script is missing or failed (then $real{$fmt}
# says why)
sub build_real {
    my ($fmt, $script, $what) = @_;
    my $s = tool_script($script);
    if (!$s) {
        $real{$fmt} = { missing => "no $script in $shared_tools" };
        return;
    }
    print STDERR "race.pl: finding or building $what in $tools/$fmt\n";
    my @out = split /\n/, `'$s' '$tools/$fmt' 2>'${\ log_file($fmt)}'`;
    return @out if $? == 0 && @out;
    $real{$fmt} = { missing => "$script failed (log: " . log_file($fmt) . ')' };
    return;
}

# EasyProfiler: ep-read, built by build-real-easyprofiler
if ($raced{easyprofiler} and my @p = build_real('easyprofiler', 'build-real-easyprofiler', 'the real EasyProfiler reader')) {
    $real{easyprofiler} = -x $p[0]
        ? { name => 'EasyProfiler 2.1 fillTreesFromFile (ep-read --quiet, Release build)',
            cmd => sub { [$p[0], '--quiet', $_[0]] } }
        : { missing => 'build-real-easyprofiler gave no reader (log: ' . log_file('easyprofiler') . ')' };
}

# StatProfiler: the real Devel::StatProfiler, built by build-real-statprofiler
if ($raced{statprofiler} and my ($flags) = build_real('statprofiler', 'build-real-statprofiler', 'the real Devel::StatProfiler')) {
    my @inc = split ' ', $flags;
    my $v = `'$perl' @inc -MDevel::StatProfiler::Reader -e 'print \$Devel::StatProfiler::VERSION' 2>/dev/null`;
    $real{statprofiler} = $v
        ? { name => "Devel::StatProfiler::Reader $v, read_trace to the end",
            cmd => sub {
                [$perl, @inc, '-MDevel::StatProfiler::Reader', '-e',
                    'my $r = Devel::StatProfiler::Reader->new(shift); 1 while $r->read_trace', $_[0]];
            } }
        : { missing => 'build-real-statprofiler failed (log: ' . log_file('statprofiler') . ')' };
}

# Tachyon: CPython 3.15's replay in the sid chroot of make-real-python315
if ($raced{tachyon}) {
    my $s = tool_script('make-real-python315');
    my $root = $ENV{PY315_ROOT} // "$tools/py315-sid";
    my $py = '/usr/bin/python3.15';
    my $scratch = "/srv/bench-$$";   # this race's own, inside the chroot
    # the chroot's commands get a clean environment, as make-real-python315 gives them
    my @env = ('/usr/bin/env', '-i', 'PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/root', 'LANG=C.UTF-8');
    if ($> != 0) {
        $real{tachyon} = { missing => 'CPython 3.15 runs in a chroot here: needs root' };
    } elsif (!-x "$root$py" && !$s) {
        $real{tachyon} = { missing => "no chroot at $root and no make-real-python315 in $shared_tools" };
    } else {
        if (!-x "$root$py") {
            print STDERR "race.pl: making the CPython 3.15 chroot in $root (debootstrap; a few minutes)\n";
            system("'$s' --root '$root' >'${\ log_file('python315')}' 2>&1");
        }
        my $v = -x "$root$py" ? `chroot '$root' @env $py -V 2>&1` : '';
        chomp $v;
        if ($v =~ /^Python 3\.15/) {
            $real{tachyon} = {
                name => "$v (Debian sid) profiling.sampling replay --collapsed",
                # the input is copied into the chroot once per file (see prepare)
                prepare => sub {
                    my ($file) = @_;
                    make_path("$root$scratch");
                    system('cp', $file, "$root$scratch/in.bin") == 0 or die "race.pl: cp $file into $root\n";
                },
                cmd => sub {
                    ['chroot', $root, @env, $py, '-m', 'profiling.sampling', 'replay', '--collapsed', '-o',
                        "$scratch/out.txt", "$scratch/in.bin"];
                },
                cleanup => sub { remove_tree("$root$scratch") },
            };
        } else {
            $real{tachyon} = { missing => "CPython 3.15 could not be had in $root (log: " . log_file('python315') . ')' };
        }
    }
}

# V8: node's own JSON.parse, the floor of any JavaScript reader
if ($node) {
    my $v = `'$node' --version 2>&1`;
    chomp $v;
    $real{v8} = { name => "node $v JSON.parse(readFileSync(f))",
        cmd => sub { [$node, '-e', 'JSON.parse(require("fs").readFileSync(process.argv[1]))', $_[0]] } };
} else {
    $real{v8} = { missing => 'no node (Debian: apt-get install nodejs)' };
}
# pprof: go tool pprof's own binary; the large profile is made here (see the top)
{
    my $go = `which go 2>/dev/null`;
    chomp $go;
    if (!$go) {
        $real{pprof} = { missing => 'no go (Debian: apt-get install golang-go)' };
    } else {
        $ENV{HOME} //= $tools;
        $ENV{GOCACHE} //= "$tools/gocache";
        $ENV{GOPATH} //= "$tools/gopath";
        $ENV{PPROF_TMPDIR} = $tmp;
        my $bin = `'$go' tool -n pprof 2>/dev/null`;
        chomp $bin;
        my $v = `'$go' version 2>/dev/null` =~ /(go[\d.]+)/ ? $1 : '?';
        $real{pprof} = -x $bin
            ? { name => "go tool pprof -raw ($v), once a round", shared => 1,
                cmd => sub { [$bin, '-raw', '-output', '/dev/null', $_[0]] } }
            : { missing => "go tool -n pprof names no program ($bin)" };
    }
}


# ---- ours ---------------------------------------------------------------------------------
my @blib = ('-Mblib');
my @targets = (
    [for_chunks => sub {
        [$perl, @blib, '-MDevel::ProfileBridge::ReadStream=for_chunks', '-e', 'for_chunks { } filename => shift', $_[0]];
    }],
    # the floor of for_chunks: its calls (the file's tag mix), made by an XS loop without the read
    [calls_floor => sub {
        my @mix = tag_mix($_[0]) or return [$perl, '-e', 'die "no chunk counts for this file\n"'];
        [$perl, @blib, '-MDevel::ProfileBridge', '-e',
            'my %c = map { split /=/ } @ARGV; Devel::ProfileBridge::_call_floor(sub { }, \%c)', @mix];
    }],
    map {
        my ($to, $out) = @$_;
        [$to => sub { [$perl, @blib, 'bin/profbridge', 'convert', $_[0], '--to', $to, '-o', "$_[1]/$out"] }]
    } [nytprof => 'out.nytprof'], [collapsed => 'out.folded'], [pprof => 'out.pb.gz'],
      [speedscope => 'out.json'], [statprofiler => 'out.statprof'],
);
if (@only_targets) {
    my %want = map { $_ => 1 } @only_targets;
    my %known = map { $_->[0] => 1 } @targets;
    $known{$_} or die "race.pl: --target $_: no such target (" . join(', ', map { $_->[0] } @targets) . ")\n"
        for @only_targets;
    @targets = grep { $want{ $_->[0] } } @targets;
}

# a file's chunk counts as TAG=N words (counted once, untimed), for calls_floor
my %mix;
sub tag_mix {
    my ($file) = @_;
    $mix{$file} //= do {
        open my $fh, '-|', $perl, @blib, '-MDevel::ProfileBridge', '-e',
            'my $c = Devel::ProfileBridge::chunk_counts(shift); print join " ", map { "$_=$c->{$_}" } keys %$c', $file
            or die "race.pl: $perl: $!\n";
        [ split ' ', join '', <$fh> ];
    };
    return @{ $mix{$file} };
}

# ---- running and measuring -----------------------------------------------------------------
# one run: (wall seconds, peak RSS KB) or (undef, first line of its error)
sub run_one {
    my ($argv, $file) = @_;
    my $rss = "$tmp/rss";
    unlink $rss;
    my $t0 = time;
    my $pid = fork // die "race.pl: fork: $!\n";
    if (!$pid) {
        open STDOUT, '>', "$tmp/stdout" or die;
        open STDERR, '>', "$tmp/stderr" or die;
        exec $timebin, '-f', '%M', '-o', $rss, @$argv or die "exec: $!";
    }
    waitpid $pid, 0;
    my $dt = time - $t0;
    my $st = $?;
    if ($st) {
        open my $e, '<', "$tmp/stderr";
        my @l = grep { /\S/ && !/^Command exited with non-zero status/ } <$e>;
        my ($msg) = grep({ /error|invalid|refus|unsupported|cannot|can't/i } @l);
        $msg //= $l[0] // "exit status $st\n";
        chomp $msg;
        $msg =~ s/\Q$file\E/basename($file)/ge if defined $file;
        $msg =~ s/[^\x20-\x7e]+/?/g;
        $msg = substr($msg, 0, 90) . '...' if length $msg > 93;
        return (undef, $msg);
    }
    open my $r, '<', $rss or die "race.pl: no $rss\n";
    my @l = <$r>;
    my ($kb) = $l[-1] =~ /(\d+)/;
    return ($dt, $kb);
}

my $line = '-' x 100;
printf "Race of the real readers, medians of %d rounds; %s\n", $runs, $shared_real
    ? 'a round: the real reader once, then each of our targets'
    : 'a round: the real reader before each of our targets (ratio: against those paired runs)';
printf "%-13s %8s %8s %8s %9s %9s %8s\n", 'target', 'ours s', 'real s', 'ratio', 'ours MB', 'real MB', 'x floor';

for my $f (@files) {
    my ($fmt, $file) = @$f;
    my $real = $real{$fmt};
    print "$line\n";
    printf "%s/%s%s (%.1f MB%s); real reader: %s\n", $fmt, $fmt =~ /\A(?:pprof|v8)\z/ ? 'made here/' : 'large/',
        basename($file), (-s $file) / 1e6, $fmt eq 'v8' ? ', made by bench/make-cpuprofile.js' : '',
        $real->{missing} ? "missing: $real->{missing}" : $real->{name};

    # probes: every command once, untimed; what fails is not raced
    my $work = "$tmp/out";
    my %ok;
    my %why;
    my @cmds;
    if (!$real->{missing}) {
        $real->{prepare}->($file) if $real->{prepare};
        push @cmds, [real => sub { $real->{cmd}->($file) }];
    }
    for my $t (@targets) {
        my ($name, $mk) = @$t;
        push @cmds, [$name => sub { $mk->($file, $work) }];
    }
    push @cmds, [floor => sub { [$floor_bin, '-n', 1, $floor_kind{$fmt} // 'read', $file] }] if $floor_bin;
    for my $c (@cmds) {
        remove_tree($work); make_path($work);
        my ($dt, $x) = run_one($c->[1]->(), $file);
        if (defined $dt) { $ok{ $c->[0] } = 1 } else { $why{ $c->[0] } = $x }
    }
    # a round: the real reader before each target (A B A C ...: --pairs, the
    # default), or once before all of them (A B C ...: --shared-real)
    my (%t, %m);
    my $rec = sub {
        my ($key, $c, $round) = @_;
        remove_tree($work); make_path($work);
        my ($dt, $kb) = run_one($c->[1]->());
        die "race.pl: $c->[0] on $file failed in round $round after its probe passed: $kb\n" unless defined $dt;
        push @{ $t{$key} }, $dt;
        push @{ $m{$key} }, $kb;
        push @{ $t{'real:*'} }, $dt if $c->[0] eq 'real';
        push @{ $m{'real:*'} }, $kb if $c->[0] eq 'real';
    };
    my ($real_cmd) = grep { $_->[0] eq 'real' && $ok{real} } @cmds;
    # a real reader that takes minutes a run (go tool pprof on the large
    # Go profile) runs once a round, as with --shared-real
    my $shared = $shared_real || $real->{shared};
    for my $round (1 .. $runs) {
        $rec->('real:shared', $real_cmd, $round) if $real_cmd && $shared;
        for my $c (grep { $ok{ $_->[0] } && $_->[0] ne 'real' } @cmds) {
            if ($c->[0] eq 'floor') { $rec->(floor => $c, $round); next }
            $rec->("real:$c->[0]", $real_cmd, $round) if $real_cmd && !$shared;
            $rec->($c->[0], $c, $round);
        }
    }
    $real->{cleanup}->() if $real->{cleanup} && !$real->{missing};
    my $theirs = $real->{missing} ? 'missing' : $ok{real} ? undef : 'refused';
    my $fl = $ok{floor} ? median(@{ $t{floor} }) : undef;
    my $xf = sub { defined $fl && $fl > 0 ? sprintf('%7.1fx', $_[0] / $fl) : '-' };
    # the real reader's medians: over its runs paired with this target, or
    # over all its runs on this file (shared, and for the n/a rows)
    my $rmed = sub {
        my ($key) = @_;
        $key = 'real:*' if $shared || !$t{$key};
        return $t{$key} ? (median(@{ $t{$key} }), median(@{ $m{$key} }) / 1024) : ();
    };
    for my $t (@targets) {
        my $name = $t->[0];
        my ($rt, $rm) = $theirs ? () : $rmed->("real:$name");
        if (!$ok{$name}) {
            printf "%-13s %8s %8s %8s %9s %9s   n/a: %s\n", $name, '-',
                $theirs // (defined $rt ? sprintf('%.3f', $rt) : '-'), '-', '-',
                defined $rm ? sprintf('%.1f', $rm) : '-', $why{$name};
            next;
        }
        my ($ot, $om) = (median(@{ $t{$name} }), median(@{ $m{$name} }) / 1024);
        if ($theirs) {
            printf "%-13s %8.3f %8s %8s %9.1f %9s %8s\n", $name, $ot, $theirs, '-', $om, '-', $xf->($ot);
        } else {
            printf "%-13s %8.3f %8.3f %7.2fx %9.1f %9.1f %8s\n", $name, $ot, $rt, $ot / $rt, $om, $rm, $xf->($ot);
        }
    }
    printf "  floor (bench/floor.c %s: the bytes read%s): %.3f s, peak %.1f MB\n", $floor_kind{$fmt} // 'read',
        ($floor_kind{$fmt} // 'read') eq 'json' ? ' and parsed' : ($floor_kind{$fmt} // 'read') eq 'read' ? ''
            : ' and decompressed', $fl, median(@{ $m{floor} }) / 1024 if defined $fl;
    print "  real reader refused the file: $why{real}\n" if !$real->{missing} && !$ok{real};
    # each target against our own collapsed output of the same file (issue 30: within 1.3x)
    if ($ok{collapsed}) {
        my $c = median(@{ $t{collapsed} });
        my @vs = map { sprintf '%s %.2fx', $_->[0], median(@{ $t{ $_->[0] } }) / $c }
            grep { $ok{ $_->[0] } && $_->[0] ne 'collapsed' } @targets;
        print "  ours against our collapsed: @{[ join ', ', @vs ]}\n" if @vs;
    }
}
print "$line\n";
