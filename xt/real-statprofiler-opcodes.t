#!/usr/bin/perl
# Tachyon --opcodes -> StatProfiler, read by the REAL Devel::StatProfiler 0.56
# reader (../shared/tools/build-real-statprofiler, statprofiler-dump-samples):
# every sample's op name is CPython 3.15's name of the opcode of its innermost
# frame, with the weights CPython's own reader gives (truth.json beside the
# file; opnames.json from the same real CPython 3.15.2).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use RealStatProfiler ();
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();

my ($tools, @sp) = RealStatProfiler::setup();    # skips unless the real reader is there

my $data = "$FindBin::Bin/../t/data/tachyon/real315";
my $tmp = tempdir('pb-realsp-op-XXXXXX', TMPDIR => 1, CLEANUP => 1);
sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$fh> }
my $names = JSON::PP->new->decode(slurp("$data/opnames.json"))->{names};

for my $file (glob "$data/*opcodes*.bin") {
    (my $name = $file) =~ s{.*/}{};
    my $truth = JSON::PP->new->decode(slurp("$file.truth.json"));
    my %want;
    for my $s (@{ $truth->{stacks} }) {
        my $op = $truth->{frames}[ $s->[3][-1] ][3];
        $want{ defined $op ? $names->{$op} // "<$op>" : '' } += $s->[2];
    }
    my $out = "$tmp/$name.sp";
    Devel::ProfileBridge::convert(in => $file, out => $out, to => 'statprofiler');
    system($^X, @sp, "$tools/statprofiler-dump-samples", $out) == 0 or die "statprofiler-dump-samples failed";
    my %got;
    for (split /\n/, slurp("$out.samples.jsonl")) {
        my $s = JSON::PP->new->decode($_);
        $got{ $s->[1] } += $s->[0] if @{ $s->[2] };
    }
    is_deeply(\%got, \%want, "$name: the real reader's op names and weights = the innermost opcodes of CPython's samples ("
        . keys(%want) . ' opcodes, ' . eval { my $t = 0; $t += $_ for values %want; $t } . ' samples)');
}

done_testing;
