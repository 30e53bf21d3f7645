#!perl
# issue 36: no function in c/ over 80 lines (its opening brace to its closing
# brace) without a comment just above it that says why it is kept whole:
# "/* Over 80 lines, kept whole: <why>. */".  `perl xt/long-functions.t`
# notes every long function and its length.
use strict;
use warnings;
use Test::More;
use FindBin;
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
my $LIMIT = 80;
my (@bare, @long);
my $n = 0;
for my $f (sort glob("$FindBin::Bin/../c/*.c")) {
    (my $rel = $f) =~ s{.*/(c/[^/]+)\z}{$1};
    open my $fh, '<', $f or die "$f: $!";
    my @l = <$fh>;
    chomp @l;
    for my $i (0 .. $#l) {
        next unless $l[$i] =~ /^\{\s*$/;    # a function body opens in column 0
        my $s = $i - 1;
        $s-- while $s > 0 && $l[$s] !~ /^[A-Za-z_]/;    # the signature's first line
        my ($name) = $l[$s] =~ /(\w+)\s*\(/;
        my $j = $i + 1;
        $j++ while $j <= $#l && $l[$j] !~ /^\}/;
        my $len = $j - $i + 1;
        $n++;
        next unless $len > $LIMIT;
        my $c = $s - 1;    # the line above, past an #if ... #endif (attributes)
        if ($l[$c] =~ /^#endif/) { $c-- while $c > 0 && $l[$c] !~ /^#if/; $c-- }
        my $k = $c;
        $k-- while $k > 0 && $l[$k] !~ m{/\*} && $l[$k] =~ m{^\s*\*};
        my $above = $l[$c] =~ m{\*/\s*$} ? join(' ', @l[$k .. $c]) : '';
        push @long, "$rel:" . ($s + 1) . ": " . ($name // '?') . " ($len lines)";
        push @bare, $long[-1] unless $above =~ /Over $LIMIT lines, kept whole: \S/;
    }
}
note scalar(@long), " of $n functions over $LIMIT lines:\n", join "\n", @long;
is(scalar @bare, 0, "every function over $LIMIT lines says why it is kept whole") or diag join "\n", @bare;
done_testing();
