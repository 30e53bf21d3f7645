#!perl
# Where a script can tell our reader from Devel::NYTProf::ReadStream:
#  * $! and $@ are left as the caller had them, inside callbacks and after,
#    so a script that dies in a callback exits 255 as under NYTProf (not 2,
#    ENOENT left behind by loading a module);
#  * every first line NYTProf 6.12's reader accepts (it parses it with
#    sscanf "NYTProf %d %d\n": any white space or none, signs, leading zeros,
#    trailing text, any length, a negative or overflowing minor), ours
#    accepts with the same VERSION chunk; what it refuses, ours refuses;
#  * $. is localised as NYTProf's reader localises it (its value after the
#    call, with and without a filehandle read before, in and after callbacks
#    that read or die) and the return value is undef, (undef) in list context.
# The expectations are literal (what NYTProf 6.12 does, measured); where
# Devel::NYTProf is installed they are also checked against it live.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use RawFile qw(slurp_raw spew_raw);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $nytprof = eval { require Devel::NYTProf::ReadStream; 1 };
my $tmp = tempdir('pb16-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $src = "$FindBin::Bin/data/nytprof/evals.nocompress.nytprof.out";

# ---- $! and $@ ----------------------------------------------------------------
{
    my $script = "$tmp/dies.pl";
    spew_raw($script, <<'PL');
use Devel::ProfileBridge::ReadStream qw(for_chunks);
for_chunks { die "stop\n" if $_[0] eq 'ATTRIBUTE' } filename => $ARGV[0];
PL
    system("'$^X' -Mblib '$script' '$src' 2>/dev/null");
    is($? >> 8, 255, 'a script dying in a for_chunks callback exits 255, as under NYTProf');

    $@ = 'before';
    $! = 5;
    my ($in_errno, $in_err);
    Devel::ProfileBridge::for_chunks(sub { ($in_errno, $in_err) = ($! + 0, $@) if $_[0] eq 'VERSION' },
        filename => $src);
    is($in_errno, 5, '$! inside a callback is the caller\'s');
    is($in_err, 'before', '$@ inside a callback is the caller\'s');
    is($! + 0, 5, '$! after for_chunks is the caller\'s');
    is($@, 'before', '$@ after for_chunks is the caller\'s');

    # a tag table (parsed with B) keeps them too
    $@ = 'table';
    $! = 7;
    my $seen;
    Devel::ProfileBridge::ReadStream::for_chunks(sub { VERSION => sub { $seen = ($! + 0) . " $@" } },
        filename => $src);
    is($seen, '7 table', 'tag table: $! and $@ inside the callback are the caller\'s');
    is(($! + 0) . " $@", '7 table', 'tag table: and after');
}

# ---- $. and the return value -----------------------------------------------------
{
    my $script = "$tmp/dot.pl";
    spew_raw($script, <<'PL');
use strict; use warnings;
my ($mod, $file, $self) = @ARGV;
eval "require $mod; 1" or die $@;
my $fc = \&{"${mod}::for_chunks"};
open STDERR, '>', '/dev/null' or die;    # NYTProf's "Reading ..." chatter
sub show { my $v = shift; defined $v ? "'$v'" : 'undef' }
my @out;
my $run = sub { $fc->(@_, filename => $file, quiet => 1) };
my @r = $run->(sub { });
push @out, 'list: (' . join(',', map { show($_) } @r) . ')';
push @out, 'after, no handle read: ' . show($.);
my $s = $run->(sub { });
push @out, 'scalar: ' . show($s);
my $seen;
$run->(sub { $seen = $. if $_[0] eq 'PID_START' });
push @out, 'inside: ' . show($seen);
$. = 41;
$run->(sub { });
push @out, 'after $. = 41, no handle: ' . show($.);
open my $fh, '<', $self or die; <$fh> for 1 .. 3;
$run->(sub { });
push @out, 'after reading 3 lines: ' . show($.) . ' handle ' . $fh->input_line_number;
open my $fh2, '<', $self or die;
$run->(sub { <$fh2> if $_[0] eq 'VERSION' });
push @out, 'callback read a line of another handle: ' . show($.) . ' other ' . $fh2->input_line_number;
$. = 3;
eval { $run->(sub { die "stop\n" if $_[0] eq 'PID_START' }); 1 };
push @out, 'callback died: ' . show($.) . ' handle ' . $fh->input_line_number . ' ' . $@;
{ local $.; $run->(sub { }); push @out, 'in local $.: ' . show($.); }
push @out, 'after local: ' . show($.);
close $fh;
push @out, 'after close: ' . show($.);
print "$_\n" for @out;
PL
    # what Devel::NYTProf 6.12's for_chunks does, measured on this file
    my $want = <<'OUT';
list: (undef)
after, no handle read: undef
scalar: undef
inside: '28'
after $. = 41, no handle: '41'
after reading 3 lines: '2645' handle 2645
callback read a line of another handle: '0' other 2645
callback died: '28' handle 28 stop

in local $.: '2645'
after local: '2645'
after close: '0'
OUT
    my $run = sub {
        my ($module) = @_;
        my $out = `'$^X' -Mblib '$script' $module '$src' '$script'`;
        return ($? == 0, $out);
    };
    my ($ok, $got) = $run->('Devel::ProfileBridge::ReadStream');
    ok($ok, '$. script runs with our reader');
    is($got, $want, '$. before, inside and after for_chunks, and its return value, as NYTProf 6.12\'s');
  SKIP: {
        skip 'Devel::NYTProf is not installed', 2 unless $nytprof;
        my ($tok, $theirs) = $run->('Devel::NYTProf::ReadStream');
        ok($tok, '$. script runs with NYTProf\'s reader');
        is($got, $theirs, '$. and the return value: the same as NYTProf\'s reader, side by side');
    }
}

# ---- header lines -------------------------------------------------------------
my $body = slurp_raw($src);
$body =~ s/\A[^\n]*\n//;
# first line => VERSION minor NYTProf delivers (undef: refused), chunk count delta
my @headers = (
    [ "NYTProf 5 0\n",           0 ],
    [ "NYTProf  5  0\n",         0 ],
    [ "NYTProf\t5\t0\n",         0 ],
    [ "NYTProf5 0\n",            0 ],
    [ "NYTProf 05 00\n",         0 ],
    [ "NYTProf +5 +0\n",         0 ],
    [ "NYTProf 5 0 trailing text\n", 0 ],
    [ "NYTProf 5 0\r\n",         0 ],
    [ "NYTProf 5 0x\n",          0 ],
    [ "NYTProf " . (' ' x 300) . "5 0\n", 0 ],
    [ "NYTProf 5 -1\n",          4294967295 ],
    [ "NYTProf 5 2147483648\n",  2147483648 ],
    [ "NYTProf 5 1\n",           1, 'warns' ],
    [ "NYTProf 5 0",             0, 'no newline: the comment line is part of the header' ],
    [ "NYTProf 5\n0\n",          undef ],
    [ "NYTProf 4 0\n",           undef ],
    [ "NYTProf 6 0\n",           undef ],
    [ "NYTProf x 0\n",           undef ],
);
sub read_with {
    my ($reader, $file) = @_;
    my @c;
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    my $ok = eval { $reader->(sub { push @c, [@_] }, filename => $file); 1 };
    return ($ok, \@c, \@w);
}
my $ours = sub { my $cb = shift; Devel::ProfileBridge::for_chunks($cb, @_, quiet => 1) };
my $theirs = sub {
    my $cb = shift;
    open my $old, '>&', \*STDERR or die;
    open STDERR, '>', '/dev/null' or die;    # "Reading ..." chatter
    my $ok = eval { Devel::NYTProf::ReadStream::for_chunks($cb, @_); 1 };
    my $e = $@;
    open STDERR, '>&', $old or die;
    die $e unless $ok;
};
my $n = 0;
my ($ok0, $base) = read_with($ours, $src);
for my $h (@headers) {
    my ($line, $minor, $note) = @$h;
    my $f = "$tmp/h" . $n++ . '.out';
    spew_raw($f, $line . $body);
    (my $show = $line) =~ s/([\t\r\n])/sprintf '\\x%02x', ord $1/ge;
    $show = substr($show, 0, 40);
    my ($ok, $c, $w) = read_with($ours, $f);
    if (!defined $minor) {
        ok(!$ok, "'$show': refused");
    } else {
        my ($v) = grep { $_->[0] eq 'VERSION' } @$c;
        ok($ok && $v && $v->[1] == 5 && $v->[2] == $minor, "'$show': read, VERSION 5 $minor")
            or diag $@;
        is(scalar(@$c), scalar(@$base) - ($line =~ /\n/ ? 0 : 1), "'$show': every chunk");
        is(scalar(@$w), ($note // '') eq 'warns' ? 1 : 0, "'$show': " . (($note // '') eq 'warns' ? 'one warning' : 'no warning'));
    }
    SKIP: {
        skip 'Devel::NYTProf is not installed', 1 unless $nytprof;
        my ($tok, $tc) = read_with($theirs, $f);
        if ($ok && $tok) {
            is_deeply($c, $tc, "'$show': the same stream as NYTProf's reader");
        } else {
            is($ok ? 1 : 0, $tok ? 1 : 0, "'$show': NYTProf's reader " . ($tok ? 'reads' : 'refuses') . ' it too');
        }
    }
}

done_testing();
