package Needs;
# Test helper: skip a whole test file when this build lacks an optional
# library (see Devel::ProfileBridge::features):
#   use Needs qw(zstd snappy);
# zstd: compressed Tachyon files; snappy: Devel::StatProfiler traces.
use strict;
use warnings;
use Test::More ();
use Devel::ProfileBridge ();

sub import {
    my ($class, @need) = @_;
    my $lib = Devel::ProfileBridge::features()->{libraries};
    my @missing = grep { !defined $lib->{$_} } @need;
    Test::More::plan(skip_all => "this build has no " . join(' or ', @missing)
        . ' (perl Makefile.PL found none; install ' . join(', ', map { "lib$_-dev" } @missing) . ' and rebuild)')
        if @missing;
}

1;
