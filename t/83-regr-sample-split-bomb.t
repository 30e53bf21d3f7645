#!perl
# Regression (found by fuzz_statprofiler, long run 2026-11-22): a 73-byte
# StatProfiler trace whose sample weight (209234946) x interval (1879048114
# us) had to be spread over 209 million TIME_LINE chunks (each holds at most
# 2^31-1 ticks): a decompression-free "bomb" that took minutes.  The fold now
# refuses a sample that needs more than 65536 chunks with a limit error.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use Time::HiRes qw(time);
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge ();

my $f = "$FindBin::Bin/data/crashers/statprofiler/sample-split-bomb.out";
my $t0 = time;
my $n = 0;
eval { for_chunks { $n++ } filename => $f };
my $e = $@;
ok(time - $t0 < 5, 'stops quickly');
ok(ref $e && $e->isa('Devel::ProfileBridge::Error'), 'an error object');
is(ref $e && $e->class, 'limit', 'class limit');
like("$e", qr/^statprofiler: limit: .*209234946.*TIME_LINE chunks/,
    'the message says what was refused');
ok($n < 1000, "few chunks delivered before the error ($n)");
eval { Devel::ProfileBridge::chunk_counts($f) };
is(ref $@ && $@->class, 'limit', 'chunk_counts: the same limit, with TIME_LINE not even wanted');
done_testing;
