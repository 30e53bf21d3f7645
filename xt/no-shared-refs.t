#!perl
# What ships (modules, scripts, README, the C and XS sources' comments)
# points nowhere outside the tarball: no reference to the developers'
# ../shared tree (specs, corpus, tools); a spec is cited by its name.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Find ();
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
my $top = "$FindBin::Bin/..";
my @files = grep { -f } glob("$top/README*"), glob("$top/bin/*"), glob("$top/c/*.[ch]"), glob("$top/xs/*.xs");
File::Find::find(sub { push @files, $File::Find::name if -f && /\.(?:pm|pod)\z/ }, "$top/lib");
for my $f (sort @files) {
    open my $fh, '<', $f or die "$f: $!";
    my @hits = grep { m{\.\./shared\b} } <$fh>;
    (my $name = $f) =~ s{\A\Q$top\E/}{};
    is(scalar @hits, 0, "$name: no ../shared reference") or diag @hits;
}
done_testing();
