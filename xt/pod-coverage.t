#!perl
# Every public name has POD (Test::Pod::Coverage; Debian libtest-pod-coverage-perl).
# Names starting with "_" are the XS glue and are private.
use strict;
use warnings;
use Test::More;
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
eval { require Test::Pod::Coverage; Test::Pod::Coverage->VERSION(1.08); 1 }
    or plan skip_all => 'Test::Pod::Coverage 1.08 required';
Test::Pod::Coverage::all_pod_coverage_ok({ also_private => [qr/^[A-Z_]+$/, qr/^CLONE/] });
