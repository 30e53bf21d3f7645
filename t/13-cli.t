#!perl
# profbridge: info, dump, convert, exit statuses 0/1/2.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use Config;
use lib "$FindBin::Bin/lib";
use ChunkDump qw(read_lines first_difference);

my $root = "$FindBin::Bin/..";
my $bin = "$root/bin/profbridge";
my $perl = $Config{perlpath};
my @inc = map { "-I$_" } grep { defined && !ref } (-d "$root/blib" ? ("$root/blib/lib", "$root/blib/arch") : ());
my $tmp = tempdir('pb13-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $file = "$FindBin::Bin/data/nytprof/evals.nytprof.out";

sub run {
    my (@args) = @_;
    my $cmd = join ' ', map { "'$_'" } $perl, @inc, $bin, @args;
    my $out = `$cmd 2>$tmp/err`;
    my $rc = $? >> 8;
    open my $fh, '<', "$tmp/err" or die;
    local $/;
    my $err = <$fh>;
    return ($rc, $out, $err);
}

my ($rc, $out, $err) = run('info', $file);
is($rc, 0, 'info: exit 0');
like($out, qr/^format:\s+nytprof$/m, 'info: format');
like($out, qr/^version:\s+5\.0$/m, 'info: version');
like($out, qr/^compression:\s+zlib$/m, 'info: compression');
like($out, qr/^\s+TIME_LINE\s+1092$/m, 'info: counts per tag');

($rc, $out) = run('info', '--json', $file);
is($rc, 0, 'info --json: exit 0');
require JSON::PP;
my $j = JSON::PP->new->decode($out);
is($j->{format}, 'nytprof', 'info --json: format');
is($j->{compressed}, 1, 'info --json: compressed');
is($j->{tags}{SUB_CALLERS}, 22, 'info --json: tag counts');

($rc, $out) = run('dump', '-o', "$tmp/d.jsonl", $file);
is($rc, 0, 'dump: exit 0');
my $diff = first_difference(read_lines("$tmp/d.jsonl"), read_lines("$file.chunks.jsonl"));
ok(!defined $diff, 'dump: byte-identical to the nytprof-dump-chunks ground truth') or diag $diff;

($rc, $out, $err) = run('convert', $file, '-o', "$tmp/c.nytprof");
is($rc, 0, 'convert: exit 0') or diag $err;
ok(-s "$tmp/c.nytprof", 'convert: output written');

($rc, $out, $err) = run('frobnicate');
is($rc, 1, 'unknown command: exit 1');
like($err, qr/unknown command 'frobnicate'/, 'unknown command: message');
($rc) = run('info');
is($rc, 1, 'info without FILE: exit 1');
($rc, $out, $err) = run('info', "$tmp/missing");
is($rc, 2, 'missing file: exit 2');
like($err, qr/\Aprofbridge: io: \S+missing: cannot open: .*\n\z/, 'missing file: one line on stderr');

open my $fh, '>', "$tmp/junk" or die;
print {$fh} "this is not a profile\n";
close $fh;
($rc, $out, $err) = run('info', "$tmp/junk");
is($rc, 2, 'not a profile: exit 2');
like($err, qr/\Aprofbridge: corrupt: not a profile this distribution recognises .* at byte 0 of \S+junk\n\z/,
    'not a profile: one line');

($rc, $out) = run('--help');
is($rc, 0, '--help: exit 0');
like($out, qr/profbridge info FILE/, '--help: usage');
($rc, $out) = run('--version');
like($out, qr/^profbridge \d/, '--version');

# ---- convert's source options and info's threads (Devel::ProfileBridge/"NYTPROFHTML REPORTS") ----
SKIP: {
    my %f = eval { require Devel::ProfileBridge; %{ Devel::ProfileBridge::features()->{read} } };
    skip 'this build reads no zstd Tachyon', 9 unless $f{'tachyon-zstd'};
    my $data = "$FindBin::Bin/data";
    my $py = "$data/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out";
    my $src_of = sub {
        my %src;
        for (@{ read_lines($_[0]) }) { $src{$1} = 1 if /^\["SRC_LINE",(\d+),/ }
        return scalar keys %src;
    };
    # beside the input (by base name, the recorded path being another machine's)
    ($rc, $out, $err) = run('convert', $py, '-o', "$tmp/py.nytprof");
    is($rc, 0, 'convert: a Pynytprof file whose program lies beside it');
    is($err, '', '... no warning: the source was found');
    run('dump', "$tmp/py.nytprof", '-o', "$tmp/py.jsonl");
    is($src_of->("$tmp/py.jsonl"), 1, '... and embedded');
    # --no-source: none embedded, none missed
    ($rc, $out, $err) = run('convert', $py, '-o', "$tmp/py0.nytprof", '--no-source');
    run('dump', "$tmp/py0.nytprof", '-o', "$tmp/py0.jsonl");
    ok($rc == 0 && $err eq '' && $src_of->("$tmp/py0.jsonl") == 0, '--no-source embeds nothing, warns nothing');
    # a copy elsewhere: not found, then found with --strip-prefix + --source-root
    mkdir "$tmp/away";
    link $py, "$tmp/away/r.out" or system('cp', $py, "$tmp/away/r.out");
    ($rc, $out, $err) = run('convert', "$tmp/away/r.out", '-o', "$tmp/py1.nytprof");
    like($err, qr{\Aconvert: warning: the source of 1 of 1 files was not found \(not embedded\): '/tmp/anchors/pyprogs/recursion\.py'; look in more places with --source-root DIR or --strip-prefix PREFIX\n\z},
        'one warning names the file not found');
    ($rc, $out, $err) = run('convert', "$tmp/away/r.out", '-o', "$tmp/py2.nytprof", '--strip-prefix', '/tmp/anchors/pyprogs',
        '--source-root', "$tmp/none", '--source-root', "$data/pynytprof/tlv/B_ascii_FSDCE_670fbc8");
    run('dump', "$tmp/py2.nytprof", '-o', "$tmp/py2.jsonl");
    ok($rc == 0 && $err eq '' && $src_of->("$tmp/py2.jsonl") == 1, '--strip-prefix and the second --source-root find it');
    ($rc, $out, $err) = run('convert', $py, '--to', 'collapsed', '-o', "$tmp/x.folded", '--no-source');
    is($rc, 1, '--no-source with --to collapsed is a usage error');
    # info: the threads --thread picks from
    ($rc, $out) = run('info', "$data/tachyon/multithread.bin");
    like($out, qr/^threads: +5 \(convert --thread ID keeps one\)\n(?:  thread \d+, \d+ samples\n){5}/m, 'info lists 5 threads with samples');
    ($rc, $out) = run('info', "$data/easyprofiler/ep_threads.prof");
    like($out, qr/^  thread \d+, 'Worker 1', 59 spans$/m, 'info names EasyProfiler threads, with spans');
}

done_testing;
