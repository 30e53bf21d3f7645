package SampledTime;
# Test helper for "sampled time is sampled time": the sampled corpus files
# with what their own tools count (ground truth beside each file: samples and
# the sampling interval), and the real nytprofhtml's flame graph of a
# conversion read back (its root and its first level, in microseconds).
#   use SampledTime qw(sampled_corpus flame_graph);
use strict;
use warnings;
use Exporter 'import';
use JSON::PP ();
use Devel::ProfileBridge ();

our @EXPORT_OK = qw(sampled_corpus flame_graph);

sub _json { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; JSON::PP->new->decode(<$fh>) }

# Every sampled file under $d (Tachyon: the 3.14-layout files, v315, real315;
# StatProfiler traces), as { file, samples, interval_us, what }: samples and
# interval as the source tool's reader counts them (truth.json).  A
# StatProfiler root's first file stands for its whole run (every file of its
# template), as convert reads it.
sub sampled_corpus {
    my ($d) = @_;
    my @c;
    for my $f (glob("$d/tachyon/*.bin"), glob("$d/tachyon/v315/*.bin")) {
        my $t = _json("$f.truth.json");
        push @c, { file => $f, samples => $t->{total_samples}, interval_us => $t->{sample_interval_us},
            what => 'tachyon' };
    }
    for my $f (glob("$d/tachyon/real315/*.bin")) {
        my $t = _json("$f.truth.json");
        my $n = $t->{samples_seen_by_collector};
        $n += $_ for values %{ $t->{empty_stack_samples_per_thread} || {} };
        push @c, { file => $f, samples => $n, interval_us => $t->{info}{sample_interval_us},
            what => 'tachyon 3.15.2' };
    }
    my @sp = grep { !/\.(?:json|jsonl)\z/ } glob("$d/statprofiler/*.out.*[0-9a-f]");
    for my $f (@sp) {
        my $t = _json("$f.truth.json");
        my ($tpl) = $f =~ /\A(.*)\.[0-9a-f]{48}\.[0-9a-f]{8}\z/ or die "$f: not a trace name";
        my $weight = $t->{total_weight};
        my $root = $f =~ /\.00000001\z/ && $t->{genealogy}{parent_id} =~ /\A0+\z/;
        my @run = grep { /\A\Q$tpl\E\.[0-9a-f]{48}\.[0-9a-f]{8}\z/ } @sp;
        if ($root && @run > 1) {
            $weight = 0;
            $weight += _json("$_.truth.json")->{total_weight} for @run;
        }
        push @c, { file => $f, samples => $weight, interval_us => $t->{tick_duration},
            what => $root && @run > 1 ? 'statprofiler run of ' . @run . ' files' : 'statprofiler' };
    }
    return @c;
}

# $nytprof rendered by the real nytprofhtml into $dir: { root_us, first_us,
# first (names => us), active_s (profiler_active), stderr } or undef with $@.
sub flame_graph {
    my ($nytprof, $dir) = @_;
    my $rc = system("nytprofhtml -f '$nytprof' -o '$dir' >'$dir.log' 2>&1");
    my $log = do { open my $fh, '<', "$dir.log"; local $/; <$fh> // '' };
    if ($rc != 0) { $@ = "nytprofhtml failed: $log"; return undef }
    my $svg_file = "$dir/all_stacks_by_time.svg";
    open my $fh, '<:raw', $svg_file or do { $@ = "no flame graph ($svg_file): $log"; return undef };
    my $svg = do { local $/; <$fh> };
    my (@frames, $root);
    while ($svg =~ m{<title>(.*?) \(([\d,]+) microseconds?, [\d.]+%\)</title>.*?<rect x="([\d.]+)" y="([\d.]+)"}sg) {
        my %f = (name => $1, us => $2 =~ tr/,//dr, x => $3, y => $4);
        if ($f{name} eq 'all') { $root = \%f }
        else                  { push @frames, \%f }
    }
    if (!$root) { $@ = "no root frame in $svg_file"; return undef }
    # the first level: the frames right above the root (flame graphs grow up)
    my ($y1) = sort { $b <=> $a } grep { $_ < $root->{y} } map { $_->{y} } @frames;
    my %first;
    $first{ $_->{name} } += $_->{us} for grep { defined $y1 && $_->{y} == $y1 } @frames;
    my $first_us = 0;
    $first_us += $_ for values %first;
    return { root_us => $root->{us}, first_us => $first_us, first => \%first, log => $log };
}

1;
