#!perl
# --to callgrind: every profile of t/data (tracing and sampled inputs)
# converted to a callgrind file and read by Valgrind's own
# callgrind_annotate (Debian valgrind), --inclusive=no and --inclusive=yes.
# The program total and every function's self and inclusive cost must equal
# ours, computed here from for_chunks (t/lib/CallGraph.pm), not from the
# file: self = the sub's exclusive time in the file's unit (ns, or samples),
# inclusive = what callgrind_annotate makes of the calls: the sum of the
# incoming calls' costs (each call site's inclusive time) for a sub that is
# called, self + its calls' costs for one that is not.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use CallGraph qw(graph_corpus our_graph run_of);
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();

my $ca = (grep { -x "$_/callgrind_annotate" } split /:/, $ENV{PATH} // '')[0];
plan skip_all => 'callgrind_annotate (valgrind) not found' unless $ca;
$ca .= '/callgrind_annotate';

my $tmp = tempdir('pb42-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $d = "$FindBin::Bin/data";
my @inputs = graph_corpus($d);

# callgrind_annotate's totals and per-function costs: (total, { "file:fn" => cost })
sub annotate {
    my ($file, $inclusive) = @_;
    open my $ph, '-|:encoding(UTF-8)', $ca, "--inclusive=$inclusive", '--threshold=100', '--auto=no', $file
        or die "callgrind_annotate: $!";
    my ($total, %fn, $in_fn);
    while (my $l = <$ph>) {
        chomp $l;
        if ($l =~ /^\s*([\d,]+)(?:\s+\([^)]*\))?\s+PROGRAM TOTALS/) { ($total = $1) =~ tr/,//d; next }
        if ($l =~ /file:function/) { $in_fn = 1; next }
        next unless $in_fn;
        last if $l =~ /^-{10}/ && %fn;
        if ($l =~ /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)\z/) {
            (my $c = $1) =~ tr/,//d;
            $fn{$2} += $c;
        }
    }
    close $ph;
    return ($?, $total, \%fn);
}

sub units { my ($t, $u) = @_; return $t > 0 ? int($t / $u + 0.5) : 0 }

for my $in (@inputs) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/" . ($label =~ s{/}{_}gr) . '.callgrind';
    my $ok = eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $in, to => 'callgrind', out => $out); 1 };
    ok($ok, "$label: converted") or diag($@);
    next unless $ok;
    my $g = our_graph($in, run_of($in));
    my $u = $g->{unit};
    my (%self, %incl, $total);
    my $subs = $g->{subs};
    my %key = map {
        (my $n = $_) =~ s/[\x00-\x1f\x7f]/ /g;
        ($_ => (length $subs->{$_}{file} ? $subs->{$_}{file} =~ s/[\x00-\x1f\x7f]/ /gr : '???') . ":$n")
    } keys %$subs;
    $total = 0;
    for my $name (keys %$subs) {
        my $s = units($subs->{$name}{tt}, $u);
        $total += $s;
        $self{ $key{$name} } += $s;
        $incl{ $key{$name} } += $s;
    }
    # callgrind_annotate's inclusive cost: a function called anywhere has the
    # sum of its incoming calls' costs (our inclusive time, NYTProf's); one
    # never called its self cost plus its calls' costs
    # (a site of count 0 is no call: the fold's rest of a function's totals,
    # its incl the function's inclusive time where its calls carry none, as
    # the profile module's bare counts: then that time is its calls' costs,
    # shared by count, and a caller never called is within one unit per
    # such call)
    my (%in, %called, %zincl, %cincl, %slack);
    for my $k (keys %{ $g->{sites} }) {
        my ($caller, $called) = split /\0/, $k;
        my $site = $g->{sites}{$k};
        if ($site->{count}) { $cincl{$called} += $site->{incl} } else { $zincl{$called} += $site->{incl} }
    }
    for my $k (keys %{ $g->{sites} }) {
        my ($caller, $called) = split /\0/, $k;
        my $site = $g->{sites}{$k};
        next unless $site->{count};
        my $c;
        if (($cincl{$called} // 0) <= 0 && ($zincl{$called} // 0) > 0) {    # shared by count
            my $calls = 0;
            $calls += $_->{count} for map { $g->{sites}{$_} } grep { /\A[^\0]*\0\Q$called\E\0/ } keys %{ $g->{sites} };
            $c = units($zincl{$called}, $u) * $site->{count} / $calls;
            $slack{ $key{$caller} }++;
            $in{ $key{$called} } = units($zincl{$called}, $u);
        } else {
            $c = units($site->{incl}, $u);
            $in{ $key{$called} } += $c;
        }
        $incl{ $key{$caller} } += $c;
        $called{ $key{$called} } = 1;
    }
    $incl{$_} = $in{$_} for keys %called;
    $incl{$_} = int($incl{$_} + 0.5) for keys %incl;
    for my $mode ([ no => \%self ], [ yes => \%incl ]) {
        my ($rc, $got_total, $got) = annotate($out, $mode->[0]);
        is($rc, 0, "$label: callgrind_annotate --inclusive=$mode->[0] read it");
        is($got_total // 0, $total, "$label: program total $total $g->{unit_name}");
        my %want = map { ($_ => $mode->[1]{$_}) } grep { $mode->[1]{$_} } keys %{ $mode->[1] };
        my @bad = map { "$_: " . ($got->{$_} // 'none') . ' want ' . ($want{$_} // 'none') }
            grep { my $d = ($got->{$_} // -1) - ($want{$_} // -1); $d && !($mode->[0] eq 'yes' && !$called{$_} && abs($d) <= ($slack{$_} // 0)) }
            sort(keys %{ { %want, %$got } });
        is(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]), '',
            "$label: every function's " . ($mode->[0] eq 'no' ? 'self' : 'inclusive') . ' cost as ours');
    }
}

done_testing;
