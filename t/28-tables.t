#!/usr/bin/perl
# The two tables (c/formats.c, c/outputs.c) are what the API, the CLI and
# the help speak of: every row reaches them, and their lists follow the rows.
use strict;
use warnings;
use Test::More;
use File::Spec;
use Devel::ProfileBridge ();

my @formats = @{ Devel::ProfileBridge::_format_rows() };
my @targets = @{ Devel::ProfileBridge::_targets() };
ok(@formats >= 5, scalar(@formats) . ' formats');
ok(@targets >= 5, scalar(@targets) . ' targets');

# every row has what the driver and the Perl side need
for my $f (@formats) {
    like($f->{name}, qr/\A[a-z0-9]+\z/, "format $f->{name}: a name");
    ok(length $f->{title}, "format $f->{name}: a title");
    like($f->{library_use}, qr/\A(?:built-in|some|every)\z/, "format $f->{name}: how it needs its library");
}
for my $t (@targets) {
    like($t->{name}, qr/\A[a-z0-9]+\z/, "target $t->{name}: a name");
    ok(@{ $t->{consumes} }, "target $t->{name}: consumes something");
    ok(!$t->{merge} || $t->{convert}, "target $t->{name}: one that merges also converts");
}
is(scalar(grep { $_->{default} } @targets), 1, 'one default target');
is(scalar(grep { $_->{diff_default} } @targets), 1, 'one default diff target');
ok((grep { $_->{diff_default} && $_->{diff} } @targets), 'the default diff target diffs');

# features() and formats() are the rows
my $f = Devel::ProfileBridge::features();
is_deeply([ sort keys %{ Devel::ProfileBridge::formats() } ], [ sort map { $_->{name} } @formats ],
    'formats(): one key per format row');
is_deeply([ sort grep { !/-/ } keys %{ $f->{read} } ], [ sort map { $_->{name} } @formats ],
    'features() read: one key per format row (and format-library keys)');
is_deeply([ sort keys %{ $f->{write} } ], [ sort map { $_->{name} } @targets ], 'features() write: one key per target');

# the help (POD) names every target and format
my $script = File::Spec->catfile('bin', 'profbridge');
open my $fh, '<', $script or die "$script: $!";
my $pod = do { local $/; <$fh> };
my ($synopsis) = $pod =~ /^=head1 SYNOPSIS\n(.*?)^=head1/ms;
# (--to a|b|c names each)
my %to = map { $_ => 1 } map { split /\|/ } $synopsis =~ /--to ([a-z|]+)/g;
for my $t (grep { $_->{convert} && !$_->{default} } @targets) {
    ok($to{ $t->{name} }, "SYNOPSIS: convert --to $t->{name}");
}
my ($merge_to) = $synopsis =~ /merge FILE\.\.\. .*?\[--to ([a-z|]+)\]/;
is($merge_to, join('|', map { $_->{name} } grep { $_->{merge} } @targets), 'SYNOPSIS: merge --to lists the merge targets');
for my $r (@formats) {
    like($pod, qr/\Q$r->{title}\E/, "the help names $r->{title}");
}

# the CLI's and the API's messages list the rows, in order
my $err = eval { Devel::ProfileBridge::convert(in => $script, out => 'x', to => 'no-such'); 1 } ? '' : "$@";
my $known = join ', ', map { $_->{name} } grep { $_->{convert} } @targets;
like($err, qr/\Q(known: $known)\E/, 'convert: the unknown-target error lists the convert targets');
$err = eval { Devel::ProfileBridge::chunk_counts($script, format => 'no-such'); 1 } ? '' : "$@";
$known = join ', ', map { $_->{name} } @formats;
like($err, qr/\Q(known: $known)\E/, 'the unknown-format error lists the formats');

done_testing();
