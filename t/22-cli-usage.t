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

done_testing();
