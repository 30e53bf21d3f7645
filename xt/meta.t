#!/usr/bin/perl
# Issue 19 point 4: the metadata a CPAN tarball carries.  MYMETA.json (what
# perl Makefile.PL wrote from the same META_MERGE that make dist uses) is
# valid CPAN::Meta 2, names a bugtracker and the license, lists every module
# it provides with its file and version, and every runtime prerequisite the
# code loads; Changes starts with this version.
use strict;
use warnings;
use Test::More;
use CPAN::Meta;

plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING};
plan skip_all => 'run perl Makefile.PL first' unless -e 'MYMETA.json';

my $meta = CPAN::Meta->load_file('MYMETA.json');    # validates (strict) or dies
ok($meta, 'MYMETA.json is valid CPAN::Meta');
my $r = $meta->resources;
ok($r->{bugtracker} && $r->{bugtracker}{web}, 'a bugtracker');
ok($r->{license} && @{ $r->{license} }, 'a license URL');
my $p = $meta->provides;
for my $f (glob('lib/Devel/ProfileBridge.pm'), glob('lib/Devel/ProfileBridge/*.pm')) {
    (my $pkg = $f) =~ s{^lib/}{};
    $pkg =~ s{\.pm\z}{};
    $pkg =~ s{/}{::}g;
    ok($p->{$pkg} && $p->{$pkg}{file} eq $f, "provides $pkg ($f)");
}
my $req = $meta->effective_prereqs->requirements_for('runtime', 'requires');
my %used;
for my $f (glob('lib/Devel/ProfileBridge.pm'), glob('lib/Devel/ProfileBridge/*.pm'), 'bin/profbridge') {
    open my $fh, '<', $f or die;
    while (<$fh>) {
        last if /^__END__/;
        $used{$1} = 1 while /\b(?:use|require)\s+([A-Z][\w:]+)/g;
    }
}
delete @used{ grep { /^Devel::ProfileBridge/ || /^(?:B|Term::ProgressBar|Time::HiRes|Storable)\z/ } keys %used };
ok(defined $req->requirements_for_module($_), "runtime prerequisite $_") for sort keys %used;
SKIP: {
    skip 'CPAN::Changes not installed (Debian: libcpan-changes-perl)', 2 unless eval { require CPAN::Changes; 1 };
    my $changes = CPAN::Changes->load('Changes');
    my @rel = $changes->releases;
    ok(@rel, 'Changes parses as CPAN::Changes');
    ok(!grep({ !defined $_->date && ($_->note // '') !~ /^Not Released/ } @rel),
        'every release has a date, or says Not Released');
}
open my $c, '<', 'Changes' or die;
my @lines = <$c>;
my ($first) = grep { /^\S/ && !/^Revision history/ } @lines;
like($first, qr/^\Q$meta->{version}\E\s/, 'Changes starts with this version');

done_testing;
