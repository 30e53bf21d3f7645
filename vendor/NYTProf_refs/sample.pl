# The program profiled for the golden references in this directory.
use strict;
use warnings;
sub fib { my $n = shift; return $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
sub greet { return join ' ', 'hello', @_ }
my $total = 0;
$total += fib($_) for 1 .. 8;
print greet('world', $total), "\n";
