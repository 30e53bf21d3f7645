# Non-ASCII and mixed-encoding package and sub names (use utf8), for
# Devel-ProfileBridge's tests: a Latin-1 package with a Greek sub, a Greek
# package with a Latin-1 sub, and a main sub with Latin-1 letters.
use strict;
use warnings;
use utf8;

package Café;
sub λάμδα { my $x = 0; $x += $_ * 2 for 1 .. 30_000; return $x }

package Ωμέγα;
sub naïve { my $s = ''; $s .= chr(65 + $_ % 26) for 1 .. 30_000; return length $s }

package main;
sub ünïcödé {
    my $t = 0;
    for (1 .. 12) { $t += Café::λάμδα(); $t += Ωμέγα::naïve() }
    return $t;
}
sub plain_ascii { my $n = 0; $n += sqrt($_) for 1 .. 200_000; return $n }

my $r = 0;
for (1 .. 12) { $r += ünïcödé(); $r += plain_ascii() }
print "done $r\n";
