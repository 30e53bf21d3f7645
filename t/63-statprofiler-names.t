#!perl
# Non-ASCII and mixed-encoding names from a real Devel::StatProfiler 0.56
# trace (t/data/statprofiler/utf8names.out.*, made from
# t/data/statprofiler/programs/utf8names.pl under `use utf8`: a Latin-1
# package with a Greek sub, a Greek package with a Latin-1 sub, a main sub
# with Latin-1 letters).  StatProfiler keeps a UTF-8 flag per string; the
# real reader joins package and sub as Perl does (upgrading the Latin-1
# part).  Checked: every sub name for_chunks hands out compares eq with the
# real reader's (its samples dumped to *.samples.jsonl), and the conversions
# are valid UTF-8 with the names intact: nytprof.out (rendered by the real
# nytprofhtml where installed), collapsed stacks, JSON Lines.
use strict;
use warnings;
use utf8;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use JSON::PP ();
use Encode ();
use Devel::ProfileBridge ();

my ($trace) = grep { !/\.(?:jsonl|json)\z/ } glob("$FindBin::Bin/data/statprofiler/utf8names.out.*");
plan skip_all => 'no utf8names trace' unless $trace;
my $tmp = tempdir('pb63-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# the real reader's sub names (JSON strings decode to Perl characters)
my %real;
for my $line (split /\n/, slurp_raw("$trace.samples.jsonl")) {
    my $s = JSON::PP->new->utf8->decode($line);
    $real{ $_->[0] } = 1 for grep { length $_->[0] } @{ $s->[2] };
}
my @want = ('Café::λάμδα', 'Ωμέγα::naïve', 'main::ünïcödé', 'main::plain_ascii');
is_deeply([sort keys %real], [sort @want], 'the real reader names the four subs');

my %ours;
Devel::ProfileBridge::for_chunks(sub { $ours{ $_[4] } = 1 if $_[0] eq 'SUB_INFO' }, filename => $trace);
for my $name (sort keys %real) {
    my ($hit) = grep { $_ eq $name } keys %ours;
    ok(defined $hit, "for_chunks: a SUB_INFO name eq the real reader's '" . Encode::encode_utf8($name) . "'");
}
ok(!grep({ /\x{FFFD}|\\x[0-9A-F]{2}/ } keys %ours), 'no replacement characters or escapes in the names');

sub is_valid_utf8 { my $b = shift; my $copy = $b; return eval { Encode::decode('UTF-8', $copy, Encode::FB_CROAK); 1 } }

# collapsed stacks: valid UTF-8, names intact
Devel::ProfileBridge::convert(in => $trace, out => "$tmp/u.folded", to => 'collapsed');
my $folded = slurp_raw("$tmp/u.folded");
ok(is_valid_utf8($folded), 'collapsed output is valid UTF-8');
my $text = Encode::decode('UTF-8', $folded);
ok(index($text, $_) >= 0, 'collapsed output names ' . Encode::encode_utf8($_)) for @want[0 .. 2];

# JSON Lines
Devel::ProfileBridge::dump_json($trace, output => "$tmp/u.jsonl");
my $jl = slurp_raw("$tmp/u.jsonl");
ok(is_valid_utf8($jl), 'JSON Lines dump is valid UTF-8');
my %dumped = map { ($_->[4] => 1) } grep { $_->[0] eq 'SUB_INFO' } map { JSON::PP->new->utf8->decode($_) } split /\n/, $jl;
ok($dumped{$_}, 'JSON Lines names ' . Encode::encode_utf8($_)) for @want;

# nytprof.out through the real reader and nytprofhtml
Devel::ProfileBridge::convert(in => $trace, out => "$tmp/u.nytprof");
SKIP: {
    skip 'Devel::NYTProf is not installed', 5 unless eval { require Devel::NYTProf::ReadStream; 1 };
    my %theirs;
    open my $old, '>&', \*STDERR or die;
    open STDERR, '>', '/dev/null' or die;
    Devel::NYTProf::ReadStream::for_chunks(sub { $theirs{ $_[4] } = 1 if $_[0] eq 'SUB_INFO' },
        filename => "$tmp/u.nytprof");
    open STDERR, '>&', $old or die;
    # names are written as NYTProf writes them: UTF-8 bytes without the flag
    # (so nytprofhtml prints them into its UTF-8 pages without a warning)
    is_deeply([sort map { Encode::decode('UTF-8', $_) } grep { $_ ne 'main::RUNTIME' } keys %theirs], [sort @want],
        "NYTProf's own reader reads the four names back from our nytprof.out (as UTF-8 bytes)");
    my $html = `which nytprofhtml 2>/dev/null`;
    chomp $html;
    skip 'nytprofhtml not found', 4 unless $html;
    my $log = `cd '$tmp' && '$html' -f u.nytprof -o u-html 2>&1`;
    is($? >> 8, 0, 'nytprofhtml renders it (exit 0)') or diag $log;
    unlike($log, qr/malformed|illegal|cannot convert|Wide character/i,
        '... with no malformed-character error or "Wide character" warning');
    my $raw = slurp_raw("$tmp/u-html/index.html");
    ok(is_valid_utf8($raw), 'index.html is valid UTF-8');
    my $index = Encode::decode('UTF-8', $raw);
    is(scalar(grep { my ($sub) = /::([^:]+)\z/; index($index, $sub) >= 0 } @want), 4,
        'index.html shows every sub name');
}

done_testing();
