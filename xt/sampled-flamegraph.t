#!perl
# Every sampled file of t/data through the real nytprofhtml: t/98-sampled-flamegraph.t
# over the whole corpus instead of its representative subset.
use strict;
use warnings;
use File::Basename ();
use File::Spec ();
BEGIN { $ENV{RELEASE_TESTING} = 1 }
my $t = File::Spec->catfile(File::Basename::dirname(File::Spec->rel2abs(__FILE__)), '..', 't', '98-sampled-flamegraph.t');
do $t;
die $@ if $@;
