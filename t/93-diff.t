#!perl
# diff BEFORE AFTER --to collapsed: two weight columns per stack (the format
# difffolded.pl writes), each column its profile's stacks as the real tools
# see them: CPython's own reader (Tachyon: *.collapsed.txt), the real
# nytprofcalls (NYTProf), and, per leaf, EasyProfiler's fillTreesFromFile
# (*.truth.json: each block's self time) and Devel::StatProfiler::Reader
# (*.samples.jsonl: each sample's leaf sub); for folded inputs their own text
# (read back: two sample types); a file against itself differs nowhere; the
# real flamegraph.pl (the copy Devel::NYTProf ships) draws it as a
# differential flame graph.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp go_for_pprof);
use File::Temp qw(tempdir);
use Config;
use Encode ();
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb93-XXXXXX', TMPDIR => 1, CLEANUP => 1);

my $nytprofcalls = `which nytprofcalls 2>/dev/null`;
chomp $nytprofcalls;
# nytprofcalls numbers sibling string evals 0 (its own normalisation): ours too, to compare
sub eval0 { return $_[0] =~ s/\( (\w*eval)\s\d+ \) (?= \[ .+? :\d+ \] )/($1 0)/gxr }

# what the real tools say of a profile's stacks, threads merged:
# (stacks => { stack => weight }) or (leaves => { leaf sub => weight }), or
# () when the tool is not there
sub truth {
    my ($f) = @_;
    my %h;
    if ($f =~ m{/tachyon/}) {
        # CPython's collapsed stacks: tid;basename:func:lineno;... -> its function names
        for (split /\n/, slurp("$f.collapsed.txt")) {
            my ($stack, $n) = /\A(.*) (\d+)\z/ or next;
            my (undef, @frames) = split /;/, $stack;
            $h{ join ';', map { s/\A.*:(.*?):-?\d+\z/$1/r } @frames } += $n;
        }
        return (stacks => \%h);
    }
    if ($f =~ m{/nytprof/}) {
        return () unless $nytprofcalls;
        my %a;
        &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } = $_[2] } }, filename => $f);
        for (`"$nytprofcalls" "$f" 2>/dev/null`) {
            my ($stack, $n) = /\A(.*) (\d+)\n?\z/ or next;
            $h{ Encode::decode('UTF-8', $stack) } += $n * 1e9 / $a{ticks_per_sec} if $n;
        }
        return (stacks => \%h);
    }
    if ($f =~ m{/easyprofiler/}) {
        my $t = JSON::PP->new->decode(slurp("$f.truth.json"));
        for my $th (@{ $t->{threads} }) {
            my $b = $th->{by_name};
            $h{$_} += $b->{$_}{self_ns} for grep { ($b->{$_}{type} // 'block') eq 'block' && $b->{$_}{self_ns} } keys %$b;
        }
        return (leaves => \%h);
    }
    for (split /\n/, slurp("$f.samples.jsonl")) {    # StatProfiler: [weight, op, [[sub, file, line, kind, first], ...]]
        my ($w, undef, $frames) = @{ JSON::PP->new->decode($_) };
        $h{ $frames->[0][0] } += $w if @$frames && length $frames->[0][0];
    }
    return (leaves => \%h);
}

# one column of a diff as the truth has it: the stacks of weight > 0, or
# the weight of the stacks each leaf of the truth ends (a leaf named
# "Pkg::leaf" is the truth's "leaf")
sub column {
    my ($d, $side, $kind, $want) = @_;
    my %c;
    for my $s (keys %$d) {
        my $w = $d->{$s}[$side] or next;
        my $k = Encode::decode('UTF-8', $s);
        if ($kind eq 'stacks') { $c{ eval0($k) } += $w; next }
        my $leaf = (split /;/, $k)[-1];
        my ($t) = grep { $leaf eq $_ || $leaf =~ /::\Q$_\E\z/ } sort { length $b <=> length $a } keys %$want;
        $c{$t} += $w if defined $t;
    }
    return \%c;
}

sub diff_lines {
    my ($file) = @_;
    my %d;
    for (split /\n/, slurp($file)) {
        my ($s, $a, $b) = /\A(.*) (\d+) (\d+)\z/ or return undef;
        return undef if exists $d{$s};    # one line per stack
        $d{$s} = [ $a, $b ];
    }
    return \%d;
}

my @pairs = (
    [ "$d/tachyon/cpu_recursion.bin", "$d/tachyon/cpu_recursion.bin" ],
    [ "$d/tachyon/cpu_recursion.bin", "$d/tachyon/v315/cpu_recursion.bin" ],
    [ "$d/tachyon/deep_stack.bin", "$d/tachyon/cpu_recursion.bin" ],
    [ "$d/tachyon/multithread.bin", "$d/tachyon/v315/multithread.bin" ],
    [ "$d/easyprofiler/ep_basic.prof", "$d/easyprofiler/ep_recursion.prof" ],
    [ (glob "$d/statprofiler/recursion.out.*[0-9a-f]")[0], (glob "$d/statprofiler/evals.out.*[0-9a-f]")[0] ],
    [ "$d/nytprof/recursion.nytprof.out", "$d/nytprof/evals.nytprof.out" ],
);
for my $p (@pairs) {
    my ($before, $after) = @$p;
    (my $label = "$before vs $after") =~ s{\Q$d/\E}{}g;
    my $out = "$tmp/diff.folded";
    ok(eval { Devel::ProfileBridge::diff(before => $before, after => $after, out => $out); 1 }, "$label: diff")
        or diag $@;
    my $got = diff_lines($out);
    ok($got, "$label: one 'stack BEFORE AFTER' line per stack");
    for my $side ([ 0, $before ], [ 1, $after ]) {
        (my $f = $side->[1]) =~ s{\Q$d/\E}{};
        my ($kind, $want) = truth($side->[1]);
      SKIP: {
            skip "$f: no real tool to say its stacks", 1 unless $kind;
            %$want = map { ($kind eq 'stacks' ? eval0($_) : $_) => $want->{$_} } keys %$want;
            is_deeply(column($got, $side->[0], $kind, $want), $want,
                "$label: column " . ($side->[0] + 1) . " is $f" . ($kind eq 'stacks' ? "'s stacks" : "'s weight per leaf")
                . ' as the real tool reads it (' . scalar(keys %$want) . " $kind)");
        }
    }
    if ($before eq $after) {
        ok(!grep({ $_->[0] != $_->[1] } values %$got), "$label: a profile against itself differs nowhere");
    }
}

# folded inputs: the truth is their text (a few lines of Perl: each stack
# line's weight, root frames dropped as a diff merges threads), the frames as
# written; the diff read back is the two sample types before/samples and
# after/samples, each its input's stacks again
{
    my ($before, $after) = map { "$d/$_" } qw(folded/cpython315_replay.collapsed tachyon/real315/multithread_cpu_none.bin.collapsed.txt);
    my %side;
    for my $p ([ $before, 0 ], [ $after, 1 ]) {
        for (split /\r?\n/, slurp($p->[0])) {
            my ($s, $w) = /\A(.*?)[ \t]+(\d+)\z/ or next;
            $s =~ s/\A(?:(?:pid:[^;]+|process \d+:[^;]*);)?(?:(?:tid:[^;]+|thread \([^;]*\));)?//;
            $side{$p->[1]}{$s} += $w if $w;
        }
    }
    my %want = map { ($_ => [ $side{0}{$_} // 0, $side{1}{$_} // 0 ]) } keys %{ { %{ $side{0} }, %{ $side{1} } } };
    my $out = "$tmp/diff.folded";
    ok(eval { Devel::ProfileBridge::diff(before => $before, after => $after, out => $out); 1 }, 'diff of two folded files')
        or diag $@;
    is_deeply(diff_lines($out), \%want, '... each line is the two files\' weights for that stack, frames as written ('
        . scalar(keys %want) . ' stacks)');
    my ($info) = Devel::ProfileBridge::info($out);
    is_deeply($info->{sample_types}, [ 'before/samples', 'after/samples' ], 'the diff read back: two sample types');
    for my $t ([ before => 0 ], [ after => 1 ]) {
        Devel::ProfileBridge::convert(in => $out, out => "$tmp/side.folded", to => 'collapsed', sample_type => $t->[0]);
        my %got;
        for (split /\n/, slurp("$tmp/side.folded")) { my ($s, $w) = /\A(.*) (\d+)\z/ or next; $got{$s} += $w }
        is_deeply(\%got, $side{ $t->[1] }, "... $t->[0]: the $t->[0] file's stacks and weights ("
            . scalar(keys %{ $side{ $t->[1] } }) . ')');
    }
}

# the real flamegraph.pl reads it as a differential graph
my $fg = '/usr/share/perl5/Devel/NYTProf/flamegraph.pl';
SKIP: {
    skip "Devel::NYTProf's flamegraph.pl not found", 2 unless -r $fg;
    Devel::ProfileBridge::diff(before => "$d/tachyon/deep_stack.bin", after => "$d/tachyon/cpu_recursion.bin",
        out => "$tmp/d.folded");
    my $svg = `"$Config{perlpath}" "$fg" "$tmp/d.folded" 2>"$tmp/fg.err"`;
    is($?, 0, 'flamegraph.pl draws the diff');
    like($svg, qr/<title>merge_sort \([^)]*samples[^)]*; \+/, '... with differential (+) frames');
}

# --to pprof: one profile of the change, read by go tool pprof
SKIP: {
    my $go = go_for_pprof($tmp);
    skip 'go (go tool pprof) not found', 3 unless $go;
    my ($before, $after) = ("$d/tachyon/deep_stack.bin", "$d/tachyon/cpu_recursion.bin");
    Devel::ProfileBridge::diff(before => $before, after => $after, out => "$tmp/d.pb.gz", to => 'pprof');
    my %want;
    my ($b, $a) = map { +{ truth($_) }->{stacks} } $before, $after;    # CPython's own reader
    $want{ (split /;/)[-1] } -= $b->{$_} * 1_000_000 for keys %$b;    # 1 ms samples, in ns
    $want{ (split /;/)[-1] } += $a->{$_} * 1_000_000 for keys %$a;
    delete @want{ grep { !$want{$_} } keys %want };
    my %flat;
    for (`"$go" tool pprof -top -unit=ns -nodefraction=0 -edgefraction=0 "$tmp/d.pb.gz" 2>&1`) {
        $flat{$2} += $1 if /^\s*(-?\d+)ns\s+[\d.]+%\s+-?[\d.]+%\s+-?\d+(?:ns)?\s+[\d.]+%\s+(.*?)\s*$/ && $1;
    }
    is_deeply(\%flat, \%want, 'pprof diff: go tool pprof -top flat = AFTER - BEFORE per function (ns)');
    Devel::ProfileBridge::diff(before => $after, after => $after, out => "$tmp/d0.pb.gz", to => 'pprof');
    my $top = `"$go" tool pprof -top -unit=ns "$tmp/d0.pb.gz" 2>&1`;
    like($top, qr/Showing nodes accounting for 0, 0% of \d+ns total/, 'a profile against itself: nothing changed');
    like(`"$go" tool pprof -raw "$tmp/d0.pb.gz" 2>&1`, qr/pprof::base:\[true\]/, "the base side is labelled pprof::base");
}

# errors
ok(!eval { Devel::ProfileBridge::diff(before => "$d/tachyon/cpu_recursion.py", after => "$d/tachyon/cpu_recursion.bin",
    out => "$tmp/x"); 1 }, 'a Python program is no profile to diff');
like($@, qr/^Devel::ProfileBridge: corrupt: not a profile/, '... a corrupt error');
ok(!-e "$tmp/x", '... and no output');
ok(!eval { Devel::ProfileBridge::diff(before => '-', after => '-', out => "$tmp/x"); 1 }, 'both inputs standard input');

done_testing;
