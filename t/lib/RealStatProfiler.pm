package RealStatProfiler;
# Test helper for the author tests that read our StatProfiler output with the
# REAL Devel::StatProfiler 0.56 reader, built offline from the developers'
# anchors (../shared/tools/build-real-statprofiler).  Skips the whole test
# file unless RELEASE_TESTING is set, the tools are there (not in a CPAN
# tarball), this build writes StatProfiler and reads compressed Tachyon, and
# the real reader builds:
#   my ($tools, @sp) = RealStatProfiler::setup();
#   system($^X, @sp, "$tools/statprofiler-dump-samples", $file);
use strict;
use warnings;
use FindBin;
use Test::More ();
use Devel::ProfileBridge ();

sub setup {
    Test::More::plan(skip_all => 'author test: set RELEASE_TESTING=1') unless $ENV{RELEASE_TESTING};
    my $tools = "$FindBin::Bin/../../shared/tools";
    Test::More::plan(skip_all => 'the real Devel::StatProfiler is built from ../shared (not in a tarball)')
        unless -x "$tools/build-real-statprofiler" && -e "$tools/statprofiler-dump-samples";
    my $features = Devel::ProfileBridge::features();
    Test::More::plan(skip_all => 'this build has no snappy or zstd')
        unless $features->{write}{statprofiler} && $features->{read}{'tachyon-zstd'};
    my $dest = ($ENV{TMPDIR} || '/tmp') . '/pb-real-statprofiler';
    chomp(my $sp = `"$tools/build-real-statprofiler" "$dest" 2>/dev/null`);
    Test::More::plan(skip_all => 'could not build the real Devel::StatProfiler') if $? || $sp !~ /^-I/;
    return ($tools, split ' ', $sp);
}

1;
