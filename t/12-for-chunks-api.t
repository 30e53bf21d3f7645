#!perl
# The for_chunks contract beyond the stream itself: tag tables, the '' default,
# $., options, errors, and a callback that dies.
use strict;
use warnings;
use Test::More;
use FindBin;
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge ();

my $file = "$FindBin::Bin/data/nytprof/oneliner.nytprof.out";
my $zfile = "$FindBin::Bin/data/nytprof/evals.nytprof.out";

# full stream, for reference
my @all;
for_chunks { push @all, [ $., @_ ] } filename => $file;
is($all[0][0], 0, 'VERSION is chunk 0 in $.');
is($all[0][1], 'VERSION', 'first chunk is VERSION');
is_deeply([ map { $_->[0] } @all ], [ 0 .. $#all ], '$. counts every chunk');

# a block that is only "TAG => sub" pairs is a tag table
my (@si, @sc, $calls);
for_chunks {
    SUB_INFO    => sub { push @si, [ $., @_ ] },
    SUB_CALLERS => sub { push @sc, [ $., @_ ] },
} filename => $file;
my @want_si = grep { $_->[1] eq 'SUB_INFO' } @all;
my @want_sc = grep { $_->[1] eq 'SUB_CALLERS' } @all;
is_deeply(\@si, \@want_si, 'tag table: SUB_INFO calls with the same $. and arguments');
is_deeply(\@sc, \@want_sc, 'tag table: SUB_CALLERS calls');

# with a '' default
my %seen;
for_chunks { PID_START => sub { $seen{pid}++ }, '' => sub { $seen{other}++ } } filename => $file;
is($seen{pid}, 1, "tag table: the named tag");
is($seen{other}, @all - 1, "tag table: '' gets every other tag");

# a real hash reference (prototype bypassed), as Devel::NYTProf::Data's callback option
my $n = 0;
&for_chunks({ TIME_LINE => sub { $n++ } }, filename => $file);
is($n, scalar(grep { $_->[1] eq 'TIME_LINE' } @all), 'hash reference callback');

# an ordinary block that happens to return a list is still an ordinary callback
my $ordinary = 0;
for_chunks { $ordinary++; my $tag = shift; ($tag, 1) } filename => $file;
is($ordinary, scalar @all, 'a block with statements is called for every chunk');

# options
my $quiet_out = '';
{
    open my $save, '>&', \*STDOUT or die;
    close STDOUT;
    open STDOUT, '>', \$quiet_out or die;
    for_chunks { } filename => $file;
    for_chunks { } filename => $file, quiet => 1;
    close STDOUT;
    open STDOUT, '>&', $save or die;
}
is($quiet_out, '', 'nothing printed, with or without quiet');
my $c = 0;
for_chunks { $c++ } filename => $file, format => 'nytprof';
is($c, scalar @all, 'format => nytprof');
eval { for_chunks { } filename => $file, format => 'bogus' };
like($@, qr/unknown format 'bogus'/, 'unknown format name croaks');
eval { for_chunks { } filename => $file, filenmae => 1 };
like($@, qr/unknown option 'filenmae'/, 'unknown option croaks');
eval { &for_chunks({ NOT_A_TAG => sub {} }, filename => $file) };
like($@, qr/unknown tag 'NOT_A_TAG'/, 'unknown tag in a callback hash croaks');
eval { for_chunks { } filename => $file, max_record_size => -3 };
like($@, qr/max_record_size must be a positive integer/, 'bad limit croaks');

# errors are objects that stringify to one line
eval { for_chunks { } filename => "$FindBin::Bin/data/no-such-file" };
my $e = $@;
isa_ok($e, 'Devel::ProfileBridge::Error');
is($e->class, 'io', 'missing file: class io');
like("$e", qr/\ADevel::ProfileBridge: io: .*no-such-file: cannot open: /, 'missing file: message');

my $trunc = "$FindBin::Bin/../t/tmp-trunc-$$.out";
{
    open my $in, '<:raw', $zfile or die;
    local $/;
    my $bytes = <$in>;
    open my $out, '>:raw', $trunc or die;
    print {$out} substr($bytes, 0, length($bytes) - 100);
}
eval { for_chunks { } filename => $trunc };
$e = $@;
unlink $trunc;
isa_ok($e, 'Devel::ProfileBridge::Error');
is($e->format, 'nytprof', 'truncated: format');
is($e->class, 'truncated', 'truncated: class');
like($e->offset, qr/\A\d+\z/, 'truncated: numeric offset');
like("$e", qr/\Anytprof: truncated: .+ at byte \d+ of \Q$trunc\E\n\z/, 'truncated: one line');

# a callback that dies: the exception propagates unchanged, and the file is closed
my $fds_before = () = glob("/proc/$$/fd/*");
for (1 .. 20) {
    eval { for_chunks { die "stop here\n" if $_[0] eq 'NEW_FID' } filename => $zfile };
    die "unexpected: $@" unless $@ eq "stop here\n";
}
is($@, "stop here\n", 'a dying callback propagates its exception');
my $fds_after = () = glob("/proc/$$/fd/*");
SKIP: {
    skip 'no /proc', 1 unless -d "/proc/$$/fd";
    is($fds_after, $fds_before, 'no file descriptor leaked by 20 dying callbacks');
}

# arguments are reused scalars (as NYTProf): a copy keeps its value
my @copies;
for_chunks { push @copies, "@_" if $_[0] eq 'ATTRIBUTE' } filename => $file;
is(scalar(grep { /^ATTRIBUTE \w+ / } @copies), scalar(grep { $_->[1] eq 'ATTRIBUTE' } @all), 'copied arguments survive');

done_testing;
