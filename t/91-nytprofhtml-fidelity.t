#!perl
# A converted profile reads like a Perl one in the REAL nytprofhtml: for one
# corpus file per format, with its program beside it, convert and render,
# then check what a user sees: exit 0, nothing on stderr but nytprofhtml's own
# progress lines, a flame graph holding the ground truth's top stacks, every
# top-10 sub's name as text in index.html, source lines on the line pages,
# and a real date.  Then the REAL nytprofcalls (what the flame graph is drawn
# from) prints exactly our collapsed stacks for every corpus file.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp stack_corpus convert_ok first_differences nytprof_tools page_text);
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my ($html, $calls) = nytprof_tools();    # skips without Devel::NYTProf, nytprofhtml, nytprofcalls

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb91-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;
sub name { Devel::ProfileBridge::nytprof_name($_[0]) }

# ground truth: the top stacks, outermost frame first, as [ [names...], weight in ticks ]
sub truth_tachyon {
    my ($file) = @_;
    my %w;
    for (split /\n/, slurp("$file.collapsed.txt")) {
        my ($stack, $n) = /\A(.*) (\d+)\z/ or next;
        my @f = split /;/, $stack;
        shift @f;    # tid:...
        $w{ join ';', map { my $fn = (split /:/)[1]; $fn =~ s/\./::/g; name($fn) } @f } += $n * 1000;
    }
    return \%w;
}
sub truth_statprofiler {
    my ($file) = @_;
    my %w;
    my $depth = $json->decode(slurp("$file.truth.json"))->{stack_depth};
    for (split /\n/, slurp("$file.samples.jsonl")) {
        my ($weight, undef, $frames) = @{ $json->decode($_) };
        my @f = reverse map { length $_->[0] ? $_->[0] : 'main::RUNTIME' } @$frames;
        # a stack cut at the depth limit hangs under main::(truncated) (POD, StatProfiler)
        unshift @f, 'main::(truncated)' if @$frames == $depth && $frames->[-1][3] ne 'main';
        $w{ join ';', map { s/\A.*:://r } @f } += $weight * 1000 if @f;
    }
    return \%w;
}
sub truth_pynytprof {
    my ($file) = @_;
    # no stacks in the file: the truth is which subs are called
    my $t = $json->decode(slurp("$file.truth.json"));
    my %called = map { $_->{callee_sid} => 1 } @{ $t->{call_edges} };
    return { map { (name($_->{name}) => 0) } grep { $called{ $_->{sid} } } @{ $t->{subs} } };
}
sub truth_easyprofiler {
    my ($file) = @_;
    my $t = $json->decode(slurp("$file.truth.json"));
    my %w;
    for my $th (@{ $t->{threads} }) {
        $w{ $_ } += $th->{by_name}{$_}{self_ns} for keys %{ $th->{by_name} };
    }
    return \%w;    # leaf names with their exclusive ns (no stacks in the truth file)
}

my @cases = (
    [ 'Tachyon, 3.14 header', "$d/tachyon/cpu_recursion.bin", \&truth_tachyon, 'def merge_sort(xs):' ],
    [ 'Tachyon, 3.15 header', "$d/tachyon/v315/cpu_recursion.bin", \&truth_tachyon, 'def merge_sort(xs):',
        source_root => "$d/tachyon" ],
    [ 'EasyProfiler', "$d/easyprofiler/ep_basic.prof", \&truth_easyprofiler, 'EASY_FUNCTION' ],
    [ 'StatProfiler', (glob "$d/statprofiler/recursion.out.*[0-9a-f]")[0], \&truth_statprofiler,
        'sub fib { my $n = shift;' ],
    [ 'Pynytprof', "$d/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out", \&truth_pynytprof,
        'def fib(n):' ],
);

for my $c (@cases) {
    my ($label, $in, $truth_of, $code_line, %opt) = @$c;
    (my $base = $label) =~ s/\W+/_/g;
    my $out = "$tmp/$base.nytprof";
    my $dir = "$tmp/$base-html";
    my @warn;
    {
        local $SIG{__WARN__} = sub { push @warn, @_ };
        ok(eval { Devel::ProfileBridge::convert(in => $in, out => $out, %opt); 1 }, "$label: converts") or diag $@;
    }
    # the Python standard library the profile names (another machine's, or
    # this one's outside the allowed directories) is not the program's source
    @warn = grep { my @n = /'([^']*)'/g; !@n || grep { !m{/lib/python3\.\d+/} } @n } @warn;
    is_deeply(\@warn, [], "$label: no conversion warnings (the program's source was found)");

    my $rc = system("\"$html\" -f \"$out\" -o \"$dir\" > \"$tmp/$base.stdout\" 2> \"$tmp/$base.stderr\"");
    is($rc, 0, "$label: nytprofhtml exits 0");
    my @err = grep { !/\A(?:Extracting subroutine (?:call data|links)|Generating subroutine stack flame graph)\b/ }
        split /\n/, slurp("$tmp/$base.stderr");
    is_deeply(\@err, [], "$label: nothing on nytprofhtml's stderr but its progress lines");

    my $index = page_text("$dir/index.html");
    my ($date) = $index =~ /Run on (\w{3} \w{3} +\d+ [\d:]+ (\d{4}))/;
    ok($date && $date !~ /1970/, "$label: a real date (" . ($date // 'none') . ')');

    # every top-10 sub (by exclusive time, as NYTProf's own reader ranks them) is visible
    my $p = do {
        local $SIG{__WARN__} = sub { };
        Devel::NYTProf::Data->new({ filename => $out, quiet => 1 });
    };
    # (subs never called, such as the outermost frame, are not listed: as for Perl's main::RUNTIME)
    my @subs = grep { $_->calls && $_->subname !~ /::(?:BEGIN|RUNTIME)\z/ } values %{ $p->subname_subinfo_map };
    @subs = (sort { $b->excl_time <=> $a->excl_time || $a->subname cmp $b->subname } @subs)[0 .. 9];
    my @hidden = grep { index($index, $_) < 0 } map { $_->subname } grep { defined } @subs;
    is_deeply(\@hidden, [], "$label: the top-10 subs' names appear as text in index.html");

    # ... and so are the ground truth's subs
    my $truth = $truth_of->($in);
    my @top = (sort { $truth->{$b} <=> $truth->{$a} || $a cmp $b } keys %$truth)[0 .. 4];
    my @leaf_missing = grep { defined && index($index, (split /;/)[-1]) < 0 } @top;
    is_deeply(\@leaf_missing, [], "$label: the ground truth's top subs are named in index.html");

    # a line page shows the program's code
    my ($prog_page) = grep { page_text($_) =~ /\Q$code_line\E/ } glob("$dir/*-line.html");
    ok($prog_page, "$label: a line page shows source lines ('$code_line')");

    # the flame graph exists and holds the top stacks
    my $svg = "$dir/all_stacks_by_time.svg";
    ok(-s $svg, "$label: flame graph drawn");
    my $svgt = -s $svg ? slurp($svg) : '';
    # (flamegraph.pl leaves out frames narrower than 0.1 pixel: the top stacks of 1% or more)
    my $sum = 0;
    $sum += $_ for values %$truth;
    my @not_drawn = grep { defined && $truth->{$_} >= $sum / 100 && $svgt !~ /<title>[^<]*\Q${\ xml((split ';')[-1]) }\E/ } @top;
    is_deeply(\@not_drawn, [], "$label: the top stacks' subs are in the flame graph");

    # stacks with weights: the ground truth's top stacks, exactly, in nytprofcalls
    if ($label =~ /Tachyon|StatProfiler/) {
        my %got;
        for (split /\n/, `"$calls" "$out"`) {
            my ($s, $v) = /\A(.*) (\d+)\z/ or next;
            $got{ join ';', map { s/\A.*?::(?=[^:]+\z)//r } split /;/, $s } += $v;
        }
        my @wrong;
        for my $k (grep { defined } @top) {
            my ($match) = grep { suffix_stack($_, $k) } keys %got;
            push @wrong, "$k: " . ($match ? $got{$match} : 'missing') . " vs $truth->{$k}"
                unless $match && $got{$match} == $truth->{$k};
        }
        is_deeply(\@wrong, [], "$label: nytprofcalls has the ground truth's top-5 stacks with their weights");
    }
}

# frame by frame, ours ends with the truth's name (ours carry the package)
sub suffix_stack {
    my ($ours, $truth) = @_;
    my @o = split /;/, $ours;
    my @t = split /;/, $truth;
    return 0 unless @o == @t;
    for my $i (0 .. $#o) {
        return 0 unless $o[$i] eq $t[$i] || $o[$i] =~ /(?:\A|::)\Q$t[$i]\E\z/;
    }
    return 1;
}
sub xml { my $s = shift; $s =~ s/&/&amp;/g; $s =~ s/</&lt;/g; $s =~ s/>/&gt;/g; $s }

# nytprofcalls == our collapsed output of the nytprof.out (per-thread first
# frame dropped, weights in ticks), for every corpus file with stacks; and
# they hold the source's own weight (the source's collapsed output names
# frames in the source's language, per thread; the nytprof.out's in NYTProf's,
# threads merged, so the stacks themselves are compared in xt/)
my @corpus = stack_corpus($d);
for my $in (@corpus) {
    my $out = "$tmp/corpus.nytprof";
    my $folded = "$tmp/corpus.folded";
    my $label = convert_ok($d, $in, 'converted both ways', $folded, { out => $out, source => 0 });
    my $info = {};
    &Devel::ProfileBridge::ReadStream::for_chunks(
        { ATTRIBUTE => sub { $info->{ $_[1] } = $_[2] } }, filename => $out, quiet => 1);
    my $unit = $label =~ /easyprofiler|^v8\// ? 1 : $info->{sample_interval_us} * $info->{ticks_per_sec} / 1e6;
    my (%source, %want, %got);
    for (split /\n/, slurp($folded)) {
        my ($s, $n) = /\A[^;]*;(.*) (\d+)\z/ or next;    # (tid:<thread> dropped)
        $source{$s} += $n * $unit;
    }
    unlink "$tmp/corpus.nytprof.folded";
    {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $out, out => "$tmp/corpus.nytprof.folded", to => 'collapsed');
    }
    for (split /\n/, slurp("$tmp/corpus.nytprof.folded")) {
        my ($s, $n) = /\A[^;]*;(.*) (\d+)\z/ or next;
        $want{$s} += $n * $info->{ticks_per_sec} / 1e9;    # (ns)
    }
    for (split /\n/, `"$calls" "$out" 2>/dev/null`) {    # (perl's "Deep recursion" on deep stacks)
        my ($s, $v) = /\A(.*) (\d+)\z/ or next;
        $got{$s} += $v if $v;
    }
    is_deeply([ first_differences(\%want, \%got, 5) ], [], "$label: nytprofcalls prints our collapsed stacks ("
        . scalar(keys %want) . ' stacks)');
    my ($ws, $ss) = (0, 0);
    $ws += $_ for values %want;
    $ss += $_ for values %source;
    is(sprintf('%.0f', $ws), sprintf('%.0f', $ss), "$label: ... as many ticks as the source's collapsed output ($ss)");
}

done_testing;
