package GeckoThreads;
# A few lines of independent reading of a gecko (Firefox Profiler) JSON
# profile, ours or CPython's: per thread its name, tid, sample count, sample
# times (µs, integers) and markers ("name start end", ns, sorted).  Times
# are as the file writes them, relative to its own origin.  Kept apart from
# the tests so a change of the file's layout is one change here: both the
# processed layout (columns: samples.time, markers.name/startTime/endTime,
# strings in shared.stringArray or the thread's stringArray/stringTable)
# and the raw one (schema + data rows, samples.timeDeltas; inside the old
# DevTools wrapper {"profile": ...}) are read.  A sample of no stack (the
# one ours ends each thread with, where its last sample ends) is no sample.
use strict;
use warnings;
use Exporter 'import';
our @EXPORT_OK = qw(gecko_threads);

# the column `key` of a table: its array, or from schema + data rows
sub col {
    my ($tab, $key) = @_;
    return $tab->{$key} if ref $tab->{$key} eq 'ARRAY';
    if (ref $tab->{schema} eq 'HASH' && ref $tab->{data} eq 'ARRAY' && defined $tab->{schema}{$key}) {
        my $i = $tab->{schema}{$key};
        return [ map { $_->[$i] } @{ $tab->{data} } ];
    }
    return [];
}

# [ { name, tid, samples, times => [µs], markers => ["name start_ns end_ns"] } ], in the file's order
sub gecko_threads {
    my ($p) = @_;
    $p = $p->{profile} if ref $p->{profile} eq 'HASH' && !$p->{threads};
    my @out;
    for my $th (@{ $p->{threads} }) {
        my $str = $th->{stringArray} || $th->{stringTable} || ($p->{shared} || {})->{stringArray} || [];
        my $s = $th->{samples};
        my $t = col($s, 'time');
        if (!@$t && ref $s->{timeDeltas} eq 'ARRAY') {
            my $at = 0;
            $t = [ map { $at += $_ } @{ $s->{timeDeltas} } ];
        }
        my $stk = col($s, 'stack');
        my @keep = grep { defined $stk->[$_] } 0 .. $#$stk;
        $t = [ @{$t}[@keep] ];
        my $m = $th->{markers} || {};
        my ($mn, $ms, $me) = (col($m, 'name'), col($m, 'startTime'), col($m, 'endTime'));
        push @out, {
            name    => $th->{name},
            tid     => "$th->{tid}",
            samples => scalar @keep,
            times   => [ map { sprintf '%.0f', $_ * 1000 } @$t ],
            markers => [ sort map {
                sprintf '%s %.0f %.0f', $str->[ $mn->[$_] ] // "#$mn->[$_]", ($ms->[$_] // 0) * 1e6, ($me->[$_] // 0) * 1e6
            } 0 .. $#$mn ],
        };
    }
    return \@out;
}

1;
