package NoteWarnings;
# A passing test prints nothing on standard error: the warnings this
# distribution gives on purpose ("convert: warning: ...", "pprof: warning:
# ...", EasyProfiler's "the file has 0 blocks") go to the TAP stream as
# notes; any other warning (Perl's own) still reaches standard error.
#   use lib "$FindBin::Bin/lib"; use NoteWarnings;
use strict;
use warnings;
use Test::More ();

my $ours = qr/\A[a-z][a-z-]*: (?:warning: |the file has )/;

$SIG{__WARN__} = sub {
    my ($m) = @_;
    return Test::More::note($m =~ s/\n\z//r) if $m =~ $ours;
    warn $m;
};

1;
