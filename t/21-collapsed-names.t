#!perl
# Collapsed stacks are one "frame;frame;... COUNT" line per stack: a name
# holding ";", a newline, a carriage return or NUL must not split a frame or
# a line (a crafted function name would inject stacks into the flame graph).
# Those characters, and a backslash itself, are written as \xNN inside names (documented in
# profbridge and Devel::ProfileBridge); everything else is kept.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::StatProfilerWriter ();

my $tmp = tempdir('pb21-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $f = "$tmp/evil.out";
my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => $f, perl_version => '5.36.0', interval_us => 1000);
my $evil = "x;tid:1;injected 999999\nmain::y\r\0z";
$w->start_sample(3, 'entersub');
$w->sub_frame('Evil', $evil, '/x/e.pl', 3, 2);
$w->main_frame('/x/e.pl', 9);
$w->end_sample;
$w->start_sample(2, 'entersub');
$w->sub_frame('Fine', 'name with spaces and \\ backslash', '/x/e.pl', 5, 4);
$w->main_frame('/x/e.pl', 9);
$w->end_sample;
$w->close;

Devel::ProfileBridge::convert(in => $f, out => "$tmp/evil.folded", to => 'collapsed');
my $text = slurp_raw("$tmp/evil.folded");
my @lines = split /\n/, $text, -1;
pop @lines if @lines && $lines[-1] eq '';
is(scalar @lines, 2, 'two stacks, two lines');
ok(!grep({ !/\A[^\n\r\0]+ \d+\z/ } @lines), 'every line is "stack count", with no CR or NUL');
my %w = map { /\A(.*) (\d+)\z/ } @lines;
my ($evil_stack) = grep { /Evil/ } keys %w;
is($w{$evil_stack}, 3, 'the crafted name keeps its weight 3');
is(scalar(split /;/, $evil_stack), 3, 'its stack has 3 frames (tid, main::RUNTIME, the sub)');
like($evil_stack, qr/Evil::x\\x3Btid:1\\x3Binjected 999999\\x0Amain::y\\x0D\\x00z\z/, '";", LF, CR and NUL escaped as \\xNN');
my ($fine) = grep { /Fine/ } keys %w;
like($fine, qr/Fine::name with spaces and \\x5C backslash\z/, 'spaces kept, a backslash escaped as \\x5C');
ok(!exists $w{999999} && !grep({ / 999999\z/ } @lines), 'no injected stack');

done_testing();
