#!/usr/bin/perl
# bench/memory-scale.pl - does memory grow with the input?  The peak RSS of
# profbridge (info, convert --to collapsed, --to nytprof, --to pprof) on an
# input and on one about 8 times as large with the same functions and
# stacks, and the ratio (8x / 1x: 1.0 is flat).  Run from the distribution
# root after "perl Makefile.PL && make":
#   perl bench/memory-scale.pl [--tools DIR] [--corpus DIR] [--only WORD]...
# The inputs, made once into --tools (default $TMPDIR/pb-bench-tools):
#   pprof   t/data/pprof/gen_labels.go: 1,093,750 and 8,750,000 samples
#           (the large Go profile of bench/race.pl is the 8x one);
#   v8      bench/make-cpuprofile.js: 12 and 99 MB;
#   folded  the Tachyon large file's real collapsed text (CPython's replay,
#           in --corpus), written once and 8 times over (each line's stack
#           repeated: more lines and samples, the same stacks; the few
#           lines with torn strings left out);
#   tachyon a 10.6 s run of large_315.py by the real CPython 3.15 (made with
#           make-real-python315, root only) against the corpus's 85 s run
#           (large_315.bin).
# An input that cannot be had is printed as "missing", with why.
use strict;
use warnings;
use File::Basename qw(basename);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use Getopt::Long;
use lib 'bench';
use BenchCommon qw(large_go_profile);

my $tools  = ($ENV{TMPDIR} // '/tmp') . '/pb-bench-tools';
my $corpus = '../shared/corpus';
my @only;
GetOptions('tools=s' => \$tools, 'corpus=s' => \$corpus, 'only=s' => \@only)
    or die "usage: perl bench/memory-scale.pl [--tools DIR] [--corpus DIR] [--only WORD]...\n";
-d 'blib/arch' or die "memory-scale.pl: run 'perl Makefile.PL && make' first\n";
my $timebin = -x '/usr/bin/time' ? '/usr/bin/time' : die "memory-scale.pl: needs /usr/bin/time (GNU time)\n";
my $tmp = tempdir('pb-memscale-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $perl = $^X;

# each format: [1x path, 8x path] or a reason it is missing
sub go_profile {
    my $one = "$tools/pprof/memscale-cpu-1093750.pb.gz";
    my $big = large_go_profile($tools, 'memory-scale.pl', 1) or return 'the large Go profile could not be made';
    if (!-s $one) {
        system('go', 'run', 't/data/pprof/gen_labels.go', "$one.tmp", 1093750, 1, 20000, 0) == 0
            && rename("$one.tmp", $one) or return 'go run t/data/pprof/gen_labels.go failed';
    }
    return [$one, $big];
}

sub v8_profiles {
    my @f;
    for my $mb (12, 99) {
        my $f = "$tools/v8/large/synthetic-${mb}mb.cpuprofile";
        if (!-s $f) {
            make_path("$tools/v8/large");
            system('node', 'bench/make-cpuprofile.js', "$f.part", $mb) == 0 && rename("$f.part", $f)
                or return 'node bench/make-cpuprofile.js failed';
        }
        push @f, $f;
    }
    return \@f;
}

sub folded_texts {
    my ($text) = glob("$corpus/tachyon/large/large_315.bin.collapsed.txt") or return "no $corpus/tachyon/large";
    my @f = ("$tools/folded/memscale-1x.folded", "$tools/folded/memscale-8x.folded");
    return \@f if -s $f[0] && -s $f[1];
    make_path("$tools/folded");
    open my $in, '<:raw', $text or return "$text: $!";
    # (but for its lines of torn strings, with control characters: the real
    # profiler's garbage, which a folded reader refuses)
    my $body = join '', grep { !/[\x00-\x08\x0b-\x1f\x7f]/ } <$in>;
    for my $k (0, 1) {
        open my $out, '>:raw', $f[$k] or return "$f[$k]: $!";
        print $out $body for 1 .. ($k ? 8 : 1);
        close $out or return "$f[$k]: $!";
    }
    return \@f;
}

sub tachyon_runs {
    my $big = "$corpus/tachyon/large/large_315.bin";
    return "no $big" unless -s $big;
    my $one = "$tools/tachyon/memscale-10s.bin";
    if (!-s $one) {
        return 'the real CPython 3.15 runs in a chroot: needs root' if $> != 0;
        my $s = '../shared/tools/make-real-python315';
        return "no $s" unless -x $s;
        make_path("$tools/tachyon");
        my $root = $ENV{PY315_ROOT} // "$tools/py315-sid";
        system("'$s' --root '$root' -- run --binary -a --mode wall -r 20khz --compression none -o '$one.part' "
            . "'$corpus/tachyon/large/large_315.py' 10.6 >'$tools/tachyon/memscale.log' 2>&1") == 0
            && rename("$one.part", $one) or return "make-real-python315 failed (log: $tools/tachyon/memscale.log)";
    }
    return [$one, $big];
}

# peak RSS in KB of one run (undef and its error when it fails)
sub peak {
    my (@argv) = @_;
    my $rss = "$tmp/rss";
    # (what the commands print is not wanted: info's report, convert's warnings)
    system('sh', '-c', 'exec "$@" >/dev/null 2>&1', 'sh', $timebin, '-f', '%M', '-o', $rss, @argv) == 0
        or return (undef, "exit status $?");
    open my $r, '<', $rss or return (undef, "no $rss");
    my @l = <$r>;
    return ($l[-1] =~ /(\d+)/)[0];
}

my %inputs = (pprof => \&go_profile, v8 => \&v8_profiles, folded => \&folded_texts, tachyon => \&tachyon_runs);
my @cmds = (
    [info      => sub { ('bin/profbridge', 'info', $_[0]) }],
    [collapsed => sub { ('bin/profbridge', 'convert', $_[0], '--to', 'collapsed', '-o', "$tmp/out") }],
    [nytprof   => sub { ('bin/profbridge', 'convert', $_[0], '--to', 'nytprof', '-o', "$tmp/out") }],
    [pprof     => sub { ('bin/profbridge', 'convert', $_[0], '--to', 'pprof', '-o', "$tmp/out") }],
);
printf "%-8s %-10s %10s %10s %10s %10s %7s\n", 'format', 'command', '1x MB', '8x MB', '1x RSS MB', '8x RSS MB', '8x/1x';
for my $fmt (sort keys %inputs) {
    next if @only && !grep { $fmt =~ /\Q$_\E/ } @only;
    my $in = $inputs{$fmt}->();
    if (!ref $in) {
        printf "%-8s missing: %s\n", $fmt, $in;
        next;
    }
    for my $c (@cmds) {
        my @kb;
        for my $f (@$in) {
            unlink "$tmp/out";
            my ($kb, $why) = peak($perl, '-Mblib', $c->[1]->($f));
            push @kb, $kb // "failed: $why";
        }
        if (grep { !/^\d+$/ } @kb) {
            printf "%-8s %-10s %s\n", $fmt, $c->[0], join ', ', @kb;
            next;
        }
        printf "%-8s %-10s %10.1f %10.1f %10.1f %10.1f %7.2f\n", $fmt, $c->[0], (-s $in->[0]) / 1e6, (-s $in->[1]) / 1e6,
            $kb[0] / 1024, $kb[1] / 1024, $kb[1] / $kb[0];
    }
}
