#!perl
# t/98-report-names.t over every profile in t/data (every format): nytprofhtml
# quiet, the ground truth's names in the report, no raw <...> markup,
# nytprofcalls = our collapsed stacks, merge's flags = convert's.
use strict;
use warnings;
use FindBin;
use Test::More;
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING};
our $ALL = 1;
do "$FindBin::Bin/../t/98-report-names.t" or die $@ || $!;
