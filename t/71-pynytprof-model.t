# Pynytprof through the profile model (issue 36): a dialect B file written
# here record by record (the layout of the Pynytprof format spec), and what the
# chunk stream must say of it, worked out by hand below (no output of ours is
# the truth):
#   - two sids of one name stay two subs (two SUB_INFO, their own edges);
#   - a non-ASCII sub name is sent as the file has it, not flagged UTF-8;
#   - call edges get NYTProf's exclusive and recursive times;
#   - a line's count and ticks become counted TIME_LINEs (the remainder of
#     ticks / calls one tick each on the first ones) and ticks over INT32_MAX
#     a DISCOUNT pair;
#   - max_statements counts those chunks and says how many were wanted.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;
use RawFile qw(spew_raw);
use File::Temp qw(tempdir);
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $dir = tempdir(CLEANUP => 1);
my $tps = 10_000_000;

sub framed { my ($tag, $payload) = @_; return $tag . pack('V', length $payload) . $payload }
sub rec28 { return pack 'VVVQ<Q<', @_ }

my $F = framed('F', pack('VVVV', 1, 0, 0, 0) . "/x/prog.py\0");
my $S = framed('S', rec28(1, 3, 3, 99, 10) . rec28(1, 4, 1, 0, 2**31 + 5));
my $D = framed('D', join '', map { pack('VV', $_->[0], 0) . "$_->[1]\0" }
        [1, '<module>'], [2, 'f'], [3, 'f'], [4, "g\xc3\xa9"]);
# caller, callee, calls, ticks, sub_ticks
my $C = framed('C', rec28(1, 2, 2, 100, 100) . rec28(2, 2, 1, 30, 30) . rec28(1, 3, 1, 50, 50)
        . rec28(3, 4, 1, 20, 20));
my $file = "$dir/model.nytprof.out";
spew_raw($file, "NYTProf 5 0\n:ticks_per_sec=$tps\n:basetime=1700000000\n\n" . $F . $S . $D . $C . framed('E', ''));

my (@infos, @callers, @tl);
for_chunks {
    my ($tag, @a) = @_;
    if    ($tag eq 'SUB_INFO')    { push @infos,   [@a] }
    elsif ($tag eq 'SUB_CALLERS') { push @callers, [@a] }
    elsif ($tag eq 'TIME_LINE')   { push @tl,      [ 'T', @a ] }
    elsif ($tag eq 'DISCOUNT')    { push @tl,      ['D'] }
} filename => $file, format => "pynytprof";

is_deeply([ map { $_->[3] } @infos ], [ 'main::<module>', 'main::f', 'main::f', "main::g\xc3\xa9" ],
    'four subs, two of them main::f; the name bytes as written, not decoded');
is_deeply([ map { [ @$_[0, 1, 2] ] } @infos ], [ ([ 1, 0, 0 ]) x 4 ], 'SUB_INFO on fid 1, lines 0-0');

# E(s) = in-edge ticks - out-edge ticks: f#2 130 - 30 = 100, f#3 50 - 20 = 30, g 20.
# f#2 has a self edge: its other in-edge takes E by calls (2 of 3), the self edge the rest.
my @want = (    # count, incl, excl, reci (ticks), callee, caller
    [ 2, 100, 100 * 2 / 3, 0,  'main::f',       'main::<module>' ],
    [ 1, 0,   100 / 3,     30, 'main::f',       'main::f' ],
    [ 1, 50,  30,          0,  'main::f',       'main::<module>' ],
    [ 1, 20,  20,          0,  "main::g\xc3\xa9", 'main::f' ],
);
is(scalar @callers, 4, 'one SUB_CALLERS per caller -> callee pair of sids');
for my $i (0 .. $#want) {
    my ($w, $g) = ($want[$i], $callers[$i] || []);
    is_deeply([ @$g[0, 1, 2] ], [ 1, 0, $w->[0] ], "edge $i: fid 1, line 0, count $w->[0]");
    for my $k (0 .. 2) {
        my $got = $g->[ 3 + $k ] // -1;
        ok(abs($got - $w->[ 1 + $k ] / $tps) < 1e-15, "edge $i: time $k is $w->[1 + $k] ticks") or note("got $got");
    }
    is_deeply([ @$g[7, 8] ], [ @$w[ 4, 5 ] ], "edge $i: $w->[5] -> $w->[4]");
}

# line 3: 3 calls, 10 ticks -> 4 3 3; line 4: 1 call, 2**31 + 5 ticks -> INT32_MAX, then a DISCOUNT pair of 6
is_deeply(\@tl,
    [ [ 'T', 4, 1, 3 ], [ 'T', 3, 1, 3 ], [ 'T', 3, 1, 3 ], [ 'T', 2**31 - 1, 1, 4 ], ['D'], [ 'T', 6, 1, 4 ] ],
    'TIME_LINEs: counted ones summing to the line ticks, the excess over INT32_MAX in a DISCOUNT pair');

ok(!eval { for_chunks { } filename => $file, format => "pynytprof", max_statements => 5; 1 }, 'max_statements 5: 6 chunks refused');
like("$@", qr/^pynytprof: limit: line 4 of fid 1 needs 3 more TIME_LINE chunks, more than the 2 left of max_statements \(5 for this file\) at byte \d+ of \Q$file\E$/,
    'the message says the line, what it needs, what is left and the budget');
ok(eval { for_chunks { } filename => $file, format => "pynytprof", max_statements => 6; 1 }, 'max_statements 6: enough') or note("$@");

done_testing;
