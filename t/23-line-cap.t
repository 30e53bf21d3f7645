#!perl
# A line number that would make nytprofhtml / nytprofcalls explode (they size
# per-line tables by a file's highest line: 2**31-1 made nytprofhtml allocate
# ~24 GB) is refused when writing a nytprof.out, with a limit error, and the
# target is left as it was; max_line raises the bound.  Reading the profile
# (for_chunks) still works: only the writer guards its consumers.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use RawFile qw(slurp_raw spew_raw);
use TachyonFile qw(varint);
use Devel::ProfileBridge ();

my $tmp = tempdir('pb23-XXXXXX', TMPDIR => 1, CLEANUP => 1);
# a Tachyon file (pre-3.15 header) with one FULL sample in f.py:work at $line
sub tachyon_at_line {
    my ($line) = @_;
    my $region = pack('Q< V C', 7, 0, 1) . varint(10) . "\x01" . varint(1) . varint(0);
    my $strings = join '', map { varint(length $_) . $_ } 'f.py', 'work';
    my $frames = varint(0) . varint(1) . varint($line * 2) . varint(0) x 3 . "\xFF";
    my $str_off = 64 + length $region;
    my $frame_off = $str_off + length $strings;
    my $size = $frame_off + length($frames) + 32;
    my $hdr = pack('V V C4 Q< Q< V V Q< Q< V', 0x54414348, 1, 3, 15, 0, 0, 1_000_000, 1000, 1, 1, $str_off, $frame_off, 0);
    $hdr .= "\0" x (64 - length $hdr);
    return $hdr . $region . $strings . $frames . pack('V V Q< Q< Q<', 2, 1, $size, 0, 0);
}

my $huge = "$tmp/huge.bin";
spew_raw($huge, tachyon_at_line(2**31 - 1));
my @lines;
Devel::ProfileBridge::for_chunks(sub { push @lines, $_[3] if $_[0] eq 'TIME_LINE' }, filename => $huge);
is("@lines", 2**31 - 1, 'for_chunks reads the line as it is');

my $out = "$tmp/out.nytprof";
spew_raw($out, "keep me\n");
ok(!eval { Devel::ProfileBridge::convert(in => $huge, out => $out); 1 }, 'convert refuses line 2**31-1');
like($@, qr/\Anytprof-writer: limit: .*line 2147483647 is past max_line \(4194304\)/, '... with a limit error naming max_line');
is(slurp_raw($out), "keep me\n", '... and the target is untouched');
ok(!glob("$tmp/out.nytprof*[!t]"), '... with no temp file left behind');

my $ok = "$tmp/ok.bin";
spew_raw($ok, tachyon_at_line(4_194_304));
ok(eval { Devel::ProfileBridge::convert(in => $ok, out => "$tmp/ok.nytprof"); 1 }, 'line 4,194,304 (the bound) converts')
    or diag $@;
ok(eval { Devel::ProfileBridge::convert(in => $huge, out => "$tmp/raised.nytprof", max_line => 2**31); 1 },
    'max_line => 2**31 lets line 2**31-1 through') or diag $@;

my $err = `'$^X' -Mblib '$FindBin::Bin/../bin/profbridge' convert '$huge' -o '$tmp/cli.nytprof' --max-line 100 2>&1`;
is($? >> 8, 2, 'profbridge convert --max-line 100: exit 2 on line 2**31-1');
like($err, qr/\Anytprof-writer: limit: .*line 2147483647 is past max_line \(100\)/, '... saying so');

done_testing();
