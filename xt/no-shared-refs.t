#!perl
# What ships (modules, scripts, README) points nowhere outside the tarball:
# no reference to the developers' ../shared tree (specs, corpus, tools).
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Find ();
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
my $top = "$FindBin::Bin/..";
my @files = grep { -f } glob("$top/README*"), glob("$top/bin/*");
File::Find::find(sub { push @files, $File::Find::name if -f && /\.(?:pm|pod)\z/ }, "$top/lib");
for my $f (sort @files) {
    open my $fh, '<', $f or die "$f: $!";
    my @hits = grep { m{\.\./shared\b} } <$fh>;
    (my $name = $f) =~ s{\A\Q$top\E/}{};
    is(scalar @hits, 0, "$name: no ../shared reference") or diag @hits;
}
done_testing();
