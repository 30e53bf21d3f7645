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
sub annotate { return annotate_event(@_[ 0, 1 ]) }

# the same, of one event (--show) where it is given
sub annotate_event {
    my ($file, $inclusive, $event) = @_;
    open my $ph, '-|:encoding(UTF-8)', $ca, "--inclusive=$inclusive", '--threshold=100', '--auto=no',
        (defined $event ? "--show=$event" : ()), $file
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

# callgrind -> callgrind keeps every number: each callgrind file of t/data
# and its conversion, both read by callgrind_annotate (the input's first
# event, the one read): the event's name, and per function self and
# inclusive cost equal.  callgrind_annotate keys a function by file, and a
# function's inlined lines (fi=, fe=) or one name in several fl= files are
# keys of their own, where we keep one sub per name: functions are compared
# by name over their files, the inclusive costs of the names the input has in
# one file only (an inclusive cost does not add up over files).  The output's
# program total is the sum of the input's functions' self costs.
sub by_name {
    my ($fn, $seen, $files) = @_;
    my %n;
    for (keys %$fn) {
        # file:function at the first lone ':' outside brackets (a file "(eval 3)[Carp.pm:170]", a sub "main::CORE:print")
        my ($f, $name);
        while (/(?<!:):(?!:)/g) {
            my $p = pos() - 1;
            my $file = substr $_, 0, $p;
            next if ($file =~ tr/[//) != ($file =~ tr/]//);
            ($f, $name) = ($file, substr $_, $p + 1);
            last;
        }
        next unless defined $f;
        $name =~ s/ \[[^\]]*\]\z// if $seen;    # the input's " [object]"
        $name = "main::$name" if $seen && $name !~ /::/;    # the reader's package of a plain C name
        $n{$name} += $fn->{$_};
        $files->{$name}{$f} = 1 if $files;
    }
    return \%n;
}
for my $in (grep { m{/callgrind/} } @inputs) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $out = "$tmp/rt-" . ($label =~ s{/}{_}gr);
    open my $fh, '<', $in or die "$in: $!";
    my ($event) = map { /\Aevents:\s*(\S+)/ ? $1 : () } <$fh>;
    close $fh;
    ok(eval { local $SIG{__WARN__} = sub { }; Devel::ProfileBridge::convert(in => $in, to => 'callgrind', out => $out); 1 },
        "$label: callgrind -> callgrind") or diag($@);
    open $fh, '<', $out or die "$out: $!";
    my ($got_event) = map { /\Aevents:\s*(.*)/ ? $1 : () } <$fh>;
    close $fh;
    is($got_event, $event, "$label: the event's name, $event");
    my (%files, %want, %got);
    for my $mode (qw(no yes)) {
        my ($rc, $t, $fn) = annotate_event($in, $mode, $event);
        $want{$mode} = by_name($fn, 1, \%files);
        ($rc, $got{"t$mode"}, $fn) = annotate_event($out, $mode, $event);
        $got{$mode} = by_name($fn);
    }
    my $sum = 0;
    $sum += $_ for values %{ $want{no} };
    is($got{tno}, $sum, "$label: program total $sum, the input's functions' self costs");
    for my $mode (qw(no yes)) {
        my $w = $want{$mode};
        my @names = grep { $mode eq 'no' || keys %{ $files{$_} } == 1 } sort keys %$w;
        my @bad = map { "$_: " . ($got{$mode}{$_} // 'none') . " want $w->{$_}" }
            grep { ($got{$mode}{$_} // 0) != $w->{$_} } @names;
        is(join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]), '',
            "$label: callgrind -> callgrind keeps " . scalar(@names) . ' functions\' ' . ($mode eq 'no' ? 'self' : 'inclusive') . ' costs');
    }
}

done_testing;
