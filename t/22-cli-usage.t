#!perl
# Usage, as a user types it: every limit option in both spellings, help per
# command, file names with a NUL byte refused (a C string would silently cut
# them), a non-numeric pid refused; each a usage error, exit 1 in the CLI.
use strict;
use warnings;
use Test::More;
use FindBin;
use Devel::ProfileBridge ();

my @pb = ($^X, '-Mblib', "$FindBin::Bin/../bin/profbridge");
my $in = "$FindBin::Bin/data/tachyon/cpu_recursion.bin";
sub run { my $cmd = join ' ', map { "'$_'" } @_; my $out = `$cmd 2>&1`; return ($? >> 8, $out) }

for my $opt (qw(max-stack-depth max_stack_depth)) {
    my ($rc, $out) = run(@pb, 'info', $in, "--$opt", 2);
    is($rc, 2, "--$opt 2 is understood (the limit trips: exit 2)");
    like($out, qr/tachyon: limit: .*max_stack_depth/, "--$opt: the limit's message");
}
for my $opt (qw(max-decompressed-bytes max_decompressed_bytes max-record-size max-strings max-frames max-statements)) {
    my ($rc) = run(@pb, 'info', $in, "--$opt", 1 << 30);
    is($rc, 0, "--$opt N is understood");
}
for my $cmd (qw(info dump convert)) {
    my ($rc, $out) = run(@pb, 'help', $cmd);
    is($rc, 0, "profbridge help $cmd: exit 0");
    like($out, qr/profbridge $cmd FILE/, "profbridge help $cmd: that command's usage");
    my ($rc2, $out2) = run(@pb, $cmd, '--help');
    is($out2, $out, "profbridge $cmd --help: the same");
}
my ($rc, $out) = run(@pb, 'help', 'frobnicate');
is($rc, 1, 'profbridge help UNKNOWN: usage error');

for my $k (qw(in out)) {
    my %o = (in => $in, out => "/nonexistent-dir/x.nytprof");
    $o{$k} .= "\0tail";
    ok(!eval { Devel::ProfileBridge::convert(%o); 1 } && $@ =~ /$k contains a NUL byte/, "convert: $k with a NUL byte refused");
}
ok(!eval { Devel::ProfileBridge::for_chunks(sub { }, filename => "$in\0x"); 1 } && $@ =~ /NUL byte/,
    'for_chunks: a file name with a NUL byte refused');
ok(!eval { Devel::ProfileBridge::chunk_counts($in, pid => 'abc'); 1 } && $@ =~ /pid must be a process id/,
    "pid => 'abc': refused");

# ---- the CLI as a newcomer meets it (issue 35) --------------------------------
use File::Temp qw(tempdir);
my $tmp = tempdir('pb22-XXXXXX', TMPDIR => 1, CLEANUP => 1);
# stdout and stderr apart
sub run2 {
    my $cmd = join ' ', map { "'$_'" } @_;
    my $out = `$cmd 2>'$tmp/err'`;
    my $rc = $? >> 8;
    open my $fh, '<', "$tmp/err" or die;
    my $err = do { local $/; <$fh> };
    return ($rc, $out, $err);
}
{
    my ($rc, $out) = run2(@pb, '--help');
    is($rc, 0, '--help: exit 0');
    like($out, qr/^\s+-o OUT\b/m, '--help names -o');
    like($out, qr/--to TARGET/, '... --to');
    like($out, qr/--compress N.*--jobs N.*--json/, '... --compress, --jobs, --json');
    cmp_ok(scalar(() = $out =~ /\n/g), '<=', 25, '... in at most 25 lines');
    my ($rc2, $out2) = run2(@pb, 'help');
    is($out2, $out, 'profbridge help: the same');
}
for my $cmd (qw(info dump convert merge diff)) {
    my ($rc, $out) = run2(@pb, 'help', $cmd);
    my $lines = () = $out =~ /\n/g;
    ok($rc == 0 && $lines < 40, "help $cmd: $lines lines (under 40)");
    like($out, qr/^ +profbridge $cmd \S.*\n(?:.*\n)*^ +profbridge $cmd \S/m, "help $cmd: its usage and an example");
}
{
    # --man never runs perldoc (Debian ships it in perl-doc): the page, formatted
    local $ENV{PATH} = '/nonexistent';
    my ($rc, $out, $err) = run2(@pb, '--man');
    is($rc, 0, '--man: exit 0');
    like($out, qr/\ANAME\n +profbridge - inspect/, '--man: the formatted page');
    unlike($out, qr/use strict|GetOptionsFromArray/, '--man: not the script\'s Perl source');
    like($out, qr/^EXIT STATUS/m, '--man: the whole page');
    is($err, '', '--man: nothing on stderr');
}
{
    my ($rc, $out, $err) = run2(@pb, 'bogus');
    is($rc, 1, 'unknown command: exit 1');
    like($err, qr/\Aprofbridge: unknown command 'bogus' \(commands: info, dump, convert, merge, diff, help\); see 'profbridge help'\n\z/,
        'unknown command: one line naming all five commands');
    ($rc, $out, $err) = run2(@pb, 'conver', $in);
    like($err, qr/\Aprofbridge: unknown command 'conver': did you mean 'convert'\?.*\n\z/, "'conver': did you mean 'convert'?");
    ($rc, $out, $err) = run2(@pb, 'covnert', $in);
    like($err, qr/did you mean 'convert'\?/, "'covnert' (two letters swapped): did you mean 'convert'?");
    ($rc, $out, $err) = run2(@pb, 'convert', $in, '-o', "$tmp/x.out", '--to', 'pprf');
    like($err, qr/not 'pprf': did you mean 'pprof'\?/, "--to pprf: did you mean 'pprof'?");
    ($rc, $out, $err) = run2(@pb, 'convert', $in, "$in.again", '-o', "$tmp/x.out");
    ok($rc == 1 && $err =~ /\Aprofbridge: convert takes one input FILE [^\n]*; see 'profbridge help convert'\n\z/,
        'a usage error: one line and the help page to read, no synopsis') or diag $err;
    ($rc, $out, $err) = run2(@pb, 'convert', $in, '-o', "$tmp/x.out", '--frobnicate');
    ok($rc == 1 && $err =~ /\Aprofbridge: convert: unknown option: frobnicate; see 'profbridge help convert'\n\z/,
        'an unknown option: one line') or diag $err;
}
{
    # -f FILE is the input, as nytprofhtml -f FILE; --format stays long
    my ($rc, $out, $err) = run2(@pb, 'convert', '-f', $in, '-o', "$tmp/f.nytprof");
    ok($rc == 0 && -s "$tmp/f.nytprof", 'convert -f FILE -o OUT: FILE is the input') or diag $err;
    ($rc, $out, $err) = run2(@pb, 'info', '-f', $in, '--format', 'tachyon');
    like($out, qr/^format:\s+tachyon/m, 'info -f FILE --format NAME');
}
{
    # info of a gzipped profile says so
    require IO::Compress::Gzip;
    IO::Compress::Gzip::gzip($in => "$tmp/p.bin.gz") or die;
    my ($rc, $out) = run2(@pb, 'info', "$tmp/p.bin.gz");
    like($out, qr/^compression: gzip$/m, 'info of a .gz: compression: gzip');
    ($rc, $out) = run2(@pb, 'info', '--json', "$tmp/p.bin.gz");
    like($out, qr/"compression" : "gzip"/, '... and in --json');
}
{
    # a thread that is not there: no byte offset (it is not a place in the file)
    my ($rc, $out, $err) = run2(@pb, 'convert', $in, '-o', "$tmp/t.nytprof", '--thread', 42);
    ok($rc == 2 && $err =~ /\Atachyon: unsupported: \S+cpu_recursion\.bin: no thread 42 in this profile/ && $err !~ /at byte/,
        '--thread 42: names the threads, no byte offset') or diag $err;
}
SKIP: {
    # -o - of a binary target to a terminal is refused (as gzip does); to a pipe it is written
    my $script = (grep { -x "$_/script" } split /:/, $ENV{PATH})[0];
    skip 'no script(1) for a terminal', 2 unless $script;
    my $cmd = join ' ', map { "'$_'" } @pb, 'convert', $in, '-o', '-';
    my $got = `'$script/script' -qec "$cmd" /dev/null 2>&1`;
    my $rc = $? >> 8;
    ok($rc == 1 && $got =~ /--to nytprof writes binary data: not to a terminal/, '-o - to a terminal: refused')
        or diag "rc $rc: $got";
    my ($rc2, $out) = run2(@pb, 'convert', $in, '-o', '-');
    ok($rc2 == 0 && length($out) > 1000, '-o - to a pipe: written');
}

done_testing();
