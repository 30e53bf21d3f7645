use strict;
use warnings;
use Test::More;

use_ok('Devel::ProfileBridge');
use_ok('Devel::ProfileBridge::ReadStream', 'for_chunks');
use_ok('Devel::ProfileBridge::Error');
use_ok('Devel::ProfileBridge::NYTProfWriter');
my $f = Devel::ProfileBridge::formats();
is($f->{nytprof}, 1, 'the NYTProf decoder is built in');
ok(exists $f->{$_}, "format $_ is known") for qw(pynytprof easyprofiler tachyon statprofiler);
note("decoders in this build: " . join(', ', grep { $f->{$_} } sort keys %$f));
done_testing;
