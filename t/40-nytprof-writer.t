#!perl
# The NYTProf writer (c/write_nytprof.c) through a conversion:
#  * every t/data/nytprof/*.nytprof.out -> our reader -> our writer (at the
#    input's own compression) -> the REAL Devel::NYTProf::ReadStream gives the
#    ground-truth chunk stream (*.chunks.jsonl); uncompressed ones come back
#    byte for byte;
#  * the real nytprofhtml renders a converted file;
#  * a failing conversion leaves no target, no temp file, and an existing
#    target as it was.
# The conversion is Devel::ProfileBridge::convert when the XS has it, else
# the C tool t/c/pbconvert ($ENV{PB_PBCONVERT}, or built here with $Config{cc}).
# Set PB_TEST_CONVERTER=pbconvert to test the C tool even when the XS is there.
use strict;
use warnings;
use Test::More;
use Config;
use File::Spec;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use RawFile qw(spew_raw);
use ChunkDump qw(have_nytprof dump_chunks read_lines first_difference);

my $root = File::Spec->rel2abs("$FindBin::Bin/..");
my $data = "$root/t/data/nytprof";
my @files = sort glob("$data/*.nytprof.out");
plan skip_all => "no NYTProf files in $data" unless @files;

my $tmp = tempdir('pb40-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my ($convert, $how) = find_converter();
plan skip_all => "no converter: $how" unless $convert;
note "converting with $how";

my $have_nytprof = have_nytprof();

sub slurp_raw {
    my ($f) = @_;
    open my $fh, '<:raw', $f or return undef;
    local $/;
    return scalar <$fh>;
}

# the level the input was written at, from its ground truth (0: uncompressed)
sub input_level {
    my ($lines) = @_;
    for my $i (0 .. $#$lines) {
        next unless $lines->[$i] =~ /\A\["START_DEFLATE"\]/;
        return $1 if $i > 0 && $lines->[$i - 1] =~ /\A\["COMMENT","Compressed at level (\d+) /;
        return 6;
    }
    return 0;
}

# entries of a directory, dot files (our temp files) included
sub dir_entries {
    my ($dir) = @_;
    opendir my $dh, $dir or die "opendir $dir: $!";
    return sort grep { $_ ne '.' && $_ ne '..' } readdir $dh;
}

# ---- round trip of the corpus ------------------------------------------
my $outdir = "$tmp/out";
mkdir $outdir or die "mkdir $outdir: $!";
my %converted;
for my $in (@files) {
    (my $name = $in) =~ s{.*/}{};
    my $truth = read_lines("$in.chunks.jsonl");
    my $level = input_level($truth);
    my $out = "$outdir/$name";
    my ($ok, $msg) = $convert->($in, $out, $level);
    ok($ok, "$name: converted at level $level") or diag $msg;
    next unless $ok;
    $converted{$name} = $out;
    if ($level == 0) {
        ok(slurp_raw($out) eq slurp_raw($in), "$name: uncompressed output is byte-identical to the input");
    }
  SKIP: {
        skip 'Devel::NYTProf is not installed', 1 unless $have_nytprof;
        my $got = eval { dump_chunks($out) };
        my $diff = $got ? first_difference($got, $truth) : "the real reader died: $@";
        ok(!defined $diff, "$name: the real Devel::NYTProf reader gives the ground-truth stream ("
            . scalar(@$truth) . " chunks)") or diag $diff;
    }
}
is_deeply([ grep { /^\./ } dir_entries($outdir) ], [], 'no temp files left after the conversions');

# ---- the real nytprofhtml renders a converted file -----------------------
SKIP: {
    my $html_tool = find_in_path('nytprofhtml');
    skip 'nytprofhtml is not installed', 2 unless $have_nytprof && $html_tool;
    my $f = $converted{'recursion.nytprof.out'} || (values %converted)[0];
    skip 'nothing converted', 2 unless $f;
    my $html = "$tmp/html";
    my $log = "$tmp/nytprofhtml.log";
    my $rc = run_logged($log, $^X, $html_tool, '-f', $f, '-o', $html);
    is($rc, 0, "nytprofhtml renders $f") or diag slurp_raw($log);
    ok(-s "$html/index.html", 'index.html exists');
}

# ---- failures leave nothing behind ----------------------------------------
{
    my ($src) = grep { m{/recursion\.nytprof\.out\z} } @files;
    $src ||= $files[0];
    my $bytes = slurp_raw($src);
    my $trunc = "$tmp/truncated.nytprof.out";
    spew_raw($trunc, substr($bytes, 0, int(length($bytes) / 2)));

    my $faildir = "$tmp/fail";
    mkdir $faildir or die "mkdir $faildir: $!";
    my $target = "$faildir/out.nytprof";
    my ($ok, $msg) = $convert->($trunc, $target, 6);
    ok(!$ok, 'converting a truncated file fails');
    like($msg, qr/truncated/, 'and says it is truncated') or diag $msg;
    ok(!-e $target, 'no target is created');
    is_deeply([ dir_entries($faildir) ], [], 'no temp file is left');

    spew_raw($target, "the previous content\n");
    ($ok, $msg) = $convert->($trunc, $target, 0);
    ok(!$ok, 'converting a truncated file over an existing target fails');
    is(slurp_raw($target), "the previous content\n", 'the existing target is left as it was');
    is_deeply([ dir_entries($faildir) ], ['out.nytprof'], 'and no temp file is left');

    ($ok, $msg) = $convert->($src, $target, 6);
    ok($ok, 'a good conversion replaces the existing target') or diag $msg;
    isnt(slurp_raw($target), "the previous content\n", 'the target has new content');
    is_deeply([ dir_entries($faildir) ], ['out.nytprof'], 'no temp file is left');

    ($ok, $msg) = $convert->($src, "$tmp/no-such-dir/out.nytprof", 6);
    ok(!$ok, 'an output directory that does not exist fails');
    like($msg, qr/io:|director/i, 'with an I/O error') or diag $msg;
}

done_testing;

# ---- helpers --------------------------------------------------------------

sub find_in_path {
    my ($prog) = @_;
    for my $d (File::Spec->path, $Config{installscript}, $Config{installsitescript}, '/usr/bin') {
        next unless defined $d && length $d;
        my $p = "$d/$prog";
        return $p if -f $p && -r _;
    }
    return undef;
}

# run a command with stdout+stderr to $log; returns the exit status
sub run_logged {
    my ($log, @cmd) = @_;
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDOUT, '>', $log or die "open $log: $!";
        open STDERR, '>&', \*STDOUT or die "dup: $!";
        exec @cmd or die "exec $cmd[0]: $!";
    }
    waitpid $pid, 0;
    return $? >> 8;
}

# ($code, $description): $code->($in, $out, $level) returns ($ok, $message)
sub find_converter {
    my $want = $ENV{PB_TEST_CONVERTER} || '';
    if ($want ne 'pbconvert'
        && eval { require Devel::ProfileBridge; defined &Devel::ProfileBridge::convert })
    {
        return (sub {
            my ($in, $out, $level) = @_;
            my $ok = eval {
                Devel::ProfileBridge::convert(in => $in, out => $out, format => 'nytprof', compress => $level);
                1;
            };
            return ($ok, $ok ? '' : "$@");
        }, 'Devel::ProfileBridge::convert');
    }
    my $exe = $ENV{PB_PBCONVERT};
    $exe = "$root/t/c/pbconvert" if !$exe && -x "$root/t/c/pbconvert" && !-d _;
    if (!$exe) {
        my @src = (glob("$root/c/*.c"), "$root/t/c/pbconvert.c");
        return (undef, 'no C sources to build t/c/pbconvert') unless -f "$root/t/c/pbconvert.c";
        $exe = "$tmp/pbconvert$Config{exe_ext}";
        my $log = "$tmp/build.log";
        my $rc = run_logged($log, $Config{cc}, '-std=c99', '-O2', "-I$root/c", '-o', $exe, @src,
            '-lzstd', '-lsnappy', '-lyajl', '-lz', '-lpthread');
        return (undef, "could not build t/c/pbconvert with $Config{cc}: " . (slurp_raw($log) // ''))
            if $rc != 0 || !-x $exe;
    }
    return (sub {
        my ($in, $out, $level) = @_;
        my $log = "$tmp/pbconvert.log";
        my $rc = run_logged($log, $exe, '-f', 'nytprof', '-z', $level, $in, $out);
        return ($rc == 0, slurp_raw($log) // '');
    }, "the C tool $exe");
}
