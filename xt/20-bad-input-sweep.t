#!perl
# The exhaustive bad-input sweep (author/release test): every file under
# t/data cut at every offset and with one byte flipped at every offset
# (files over 64 KB: their first and last 4 KB and 4,000 offsets between;
# a file whose one decode sends millions of chunks: as many offsets as a
# budget of 2^29 chunks per file allows, at least 256), through t/c/sweep.c.  Every decode succeeds or fails with a classified
# error; nothing crashes, hangs or over-allocates.  make test runs a sample
# of it (t/20-bad-input.t); CI also runs it under AddressSanitizer.
use strict;
use warnings;
use Test::More;
use FindBin;

plan skip_all => 'author test: set RELEASE_TESTING=1 (or run make xtest)' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
# CI runs this very sweep under AddressSanitizer (make ctest-asan), which
# finds all this finds and more: PB_SKIP_SWEEP=1 spares the plain run there
plan skip_all => 'PB_SKIP_SWEEP is set: the exhaustive sweep runs under ASan in make ctest-asan'
    if $ENV{PB_SKIP_SWEEP};
local $ENV{PB_FULL_SWEEP} = 1;
my $t20 = "$FindBin::Bin/../t/20-bad-input.t";
my $out = `"$^X" -Mblib "$t20" 2>&1`;
my $rc = $? >> 8;
like($out, qr/^ok \d+ - sweep: every cut and flip of every file in t\/data/m, 'the exhaustive sweep passed')
    or diag $out;
is($rc, 0, 't/20-bad-input.t with the exhaustive sweep: all passed') or diag $out;
done_testing();
