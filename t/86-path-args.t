#!perl
# Path arguments (issue 27): a NUL byte in any file name the API takes is a
# usage error (the C side would cut the name there and read or write another
# file); an output that is an input (same device and inode) is refused before
# anything is written; usage errors name the caller's file, never "(memory)";
# a forged writer handle is a usage error, not a crash.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use RawFile qw(slurp_raw);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge::NYTProfWriter;
use Devel::ProfileBridge::StatProfilerWriter;

my $data = "$FindBin::Bin/data";
my $bin = "$FindBin::Bin/../bin/profbridge";
my @inc = map { "-I$_" } grep { !ref } @INC;
my $tmp = tempdir('pb86-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $tach = "$data/tachyon/cpu_recursion.bin";    # plain: no zstd needed
my $nul = "$tmp/cut\0tail";

sub dies_like {
    my ($code, $re, $what) = @_;
    my $ok = eval { $code->(); 1 };
    my $e = $@;
    ok(!$ok && "$e" =~ $re, $what) or diag($ok ? 'no error' : "$e");
}

# ---- NUL in every path argument --------------------------------------------
my $nulre = qr/NUL/;
dies_like(sub { Devel::ProfileBridge::chunk_counts("$tach\0x") }, qr/\ADevel::ProfileBridge: usage: chunk_counts: .*NUL byte/, 'chunk_counts');
dies_like(sub { Devel::ProfileBridge::detect_format("$tach\0x") }, qr/\ADevel::ProfileBridge: usage: detect_format: .*NUL byte/, 'detect_format');
dies_like(sub { Devel::ProfileBridge::info("$tach\0x") }, qr/\ADevel::ProfileBridge: usage: info: .*NUL byte/, 'info');
dies_like(sub { Devel::ProfileBridge::losses("$tach\0x") }, qr/\ADevel::ProfileBridge: usage: losses: .*NUL byte/, 'losses');
dies_like(sub { Devel::ProfileBridge::dump_json("$tach\0x", output => "$tmp/d.jsonl") }, $nulre, 'dump_json FILE');
dies_like(sub { Devel::ProfileBridge::dump_json($tach, output => $nul) }, $nulre, 'dump_json output');
dies_like(sub { for_chunks(sub { }, filename => "$tach\0x") }, $nulre, 'for_chunks filename');
dies_like(sub { Devel::ProfileBridge::for_chunks(sub { }, files => ["$tach\0x"]) }, $nulre, 'for_chunks files');
dies_like(sub { Devel::ProfileBridge::convert(in => "$tach\0x", out => "$tmp/c.nytprof") }, $nulre, 'convert in');
dies_like(sub { Devel::ProfileBridge::convert(in => $tach, out => $nul) }, $nulre, 'convert out');
dies_like(sub { Devel::ProfileBridge::convert(in => $tach, out => "$tmp/c.nytprof", source_root => "$tmp\0x") },
    $nulre, 'convert source_root');
dies_like(sub { Devel::ProfileBridge::merge(in => [ $tach, "$tach\0x" ], out => "$tmp/m.nytprof") }, $nulre, 'merge in');
dies_like(sub { Devel::ProfileBridge::merge(in => [$tach], out => $nul) }, $nulre, 'merge out');
dies_like(sub { Devel::ProfileBridge::merge(in => [$tach], out => "$tmp/m.nytprof", source_root => ["$tmp\0x"]) },
    $nulre, 'merge source_root');
dies_like(sub { Devel::ProfileBridge::diff(before => $tach, after => "$tach\0x", out => "$tmp/d.folded") },
    qr/\ADevel::ProfileBridge: usage: diff: after contains a NUL byte/, "diff's after (once a diff of the file with itself)");
dies_like(sub { Devel::ProfileBridge::diff(before => "$tach\0x", after => $tach, out => "$tmp/d.folded") }, $nulre,
    "diff's before");
dies_like(sub { Devel::ProfileBridge::diff(before => $tach, after => $tach, out => $nul) }, $nulre, "diff's out");
for my $w (qw(NYTProfWriter StatProfilerWriter)) {
    my $e = eval { "Devel::ProfileBridge::$w"->new(file => $nul); 1 } ? undef : $@;
    ok(ref $e && $e->class eq 'usage' && $e->message =~ /NUL byte/, "$w->new(file => NAME WITH NUL): a usage error")
        or diag "$e";
}
ok(!-e "$tmp/cut", '... and nothing was written under the cut name');
opendir my $dh, $tmp or die;
is_deeply([grep { !/\A\.\.?\z/ } readdir $dh], [], 'no file at all was written by the refused calls');

# ---- an output that is the input -------------------------------------------
my $in = "$tmp/x.bin";
{
    open my $o, '>:raw', $in or die;
    print {$o} slurp_raw($tach);
}
link $in, "$tmp/hard.bin" or die "link: $!";
symlink 'x.bin', "$tmp/sym.bin" or die "symlink: $!";
my $before = slurp_raw($in);
for my $case (['--to', 'pprof', '-o', $in], ['-o', "$tmp/hard.bin"], ['--to', 'collapsed', '-o', "$tmp/sym.bin"],
              ['--to', 'speedscope', '-o', "$tmp/./x.bin"]) {
    my $out = qx{"$^X" @inc "$bin" convert "$in" @$case 2>&1};
    ok($? != 0 && $out =~ /the output '[^']*' is the input '\Q$in\E' \(the same file\); refusing to overwrite it/,
        "convert x.bin @$case[0 .. $#$case - 1] (the input): refused") or diag $out;
}
my $out = qx{"$^X" @inc "$bin" merge "$tach" "$in" -o "$tmp/hard.bin" 2>&1};
ok($? != 0 && $out =~ /\Aprofbridge: usage: merge: the output .* is the input '\Q$in\E'/, 'merge onto one of its inputs: refused')
    or diag $out;
$out = qx{"$^X" @inc "$bin" diff "$tach" "$in" -o "$in" 2>&1};
ok($? != 0 && $out =~ /\Aprofbridge: usage: diff: the output .* is the input/, 'diff onto its after: refused') or diag $out;
$out = qx{"$^X" @inc "$bin" dump "$in" -o "$tmp/sym.bin" 2>&1};
ok($? != 0 && $out =~ /\Aprofbridge: usage: dump_json: the output .* is the input/, 'dump onto its input: refused') or diag $out;
is(slurp_raw($in), $before, '... and the input is unchanged, byte for byte');
ok(-l "$tmp/sym.bin" && (stat "$tmp/hard.bin")[1] == (stat $in)[1], '... the links too');
opendir $dh, $tmp or die;
is_deeply([sort grep { !/\A\.\.?\z/ } readdir $dh], [qw(hard.bin sym.bin x.bin)], '... and no temp file is left');
# a different file is still fine
ok(Devel::ProfileBridge::convert(in => $in, out => "$tmp/y.pb.gz", to => 'pprof'), 'another output converts');

# ---- usage errors name the caller's file, a forged handle is refused ---------
{
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/w.nytprof");
    my $e = eval { $w->write_chunk('BOGUS'); 1 } ? undef : $@;
    ok(ref $e && $e->class eq 'usage' && $e->file eq "$tmp/w.nytprof"
        && "$e" eq "nytprof-writer: usage: $tmp/w.nytprof: unknown tag 'BOGUS'\n",
        "a usage error of a writer names the writer's file, not (memory)") or diag "$e";
    my $f = bless { h => \my $x, file => 'forged.nytprof' }, 'Devel::ProfileBridge::NYTProfWriter';
    $e = eval { $f->write_chunk('VERSION', 5, 0); 1 } ? undef : $@;
    ok(ref $e && $e->class eq 'usage' && "$e" =~ /\Anytprof-writer: usage: (?:forged\.nytprof: )?not a writer/,
        'a handle that is a reference to a plain scalar: a usage error (it crashed)') or diag "$e";
    $e = eval { Devel::ProfileBridge::NYTProfWriter->new(); 1 } ? undef : $@;
    is("$e", "nytprof-writer: usage: new needs file => PATH\n", 'no file given: none named (no ": :")');
  SKIP: {
    skip 'StatProfiler records need snappy, which this build lacks', 2
        unless defined Devel::ProfileBridge::features()->{libraries}{snappy};
    my $s = Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/s.out");
    $s->close;
    $e = eval { $s->start_sample(1, ''); 1 } ? undef : $@;
    ok(ref $e && "$e" eq "statprofiler-writer: usage: $tmp/s.out: start_sample after close\n",
        "StatProfilerWriter after close names its file") or diag "$e";
    my $g = bless { h => \my $y, file => 'forged.out' }, 'Devel::ProfileBridge::StatProfilerWriter';
    $e = eval { $g->end_sample; 1 } ? undef : $@;
    ok(ref $e && "$e" =~ /\Astatprofiler-writer: usage: forged\.out: not a writer handle/,
        'a forged StatProfilerWriter handle: a usage error naming the caller\'s file') or diag "$e";
  }
    undef $w;    # never written: destruction removes its temp file
}

done_testing;
