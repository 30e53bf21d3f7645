#!perl
# Every real CPython 3.15 file of t/data through t/95-speedscope-times.t
# (speedscope's Time Order: each sample at its recorded time) instead of its
# three representatives.
use strict;
use warnings;
use File::Basename ();
use File::Spec ();
BEGIN { $ENV{RELEASE_TESTING} = 1 }
my $t = File::Spec->catfile(File::Basename::dirname(File::Spec->rel2abs(__FILE__)), '..', 't', '95-speedscope-times.t');
do $t;
die $@ if $@;
