package SampledTime;
# Test helper for "sampled time is sampled time": the sampled corpus files
# with what their own tools count (ground truth beside each file: samples and
# the sampling interval), and the real nytprofhtml's flame graph of a
# conversion read back (its root and its first level, in microseconds).
# pprof and speedscope files read back by the formats' own definitions
# (profile.proto's wire format, speedscope's JSON), not by our code.
#   use SampledTime qw(sampled_corpus flame_graph pprof_values speedscope_values);
use strict;
use warnings;
use Exporter 'import';
use JSON::PP ();
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Devel::ProfileBridge ();

our @EXPORT_OK = qw(sampled_corpus flame_graph pprof_values speedscope_values);

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

sub varint {
    my ($buf, $pos) = @_;
    my ($v, $shift) = (0, 0);
    while (1) {
        die "varint past the end\n" if $$pos >= length $$buf;
        my $b = ord substr $$buf, $$pos++, 1;
        $v |= ($b & 0x7f) << $shift;
        last unless $b & 0x80;
        $shift += 7;
        die "varint too long\n" if $shift > 63;
    }
    return $v;
}

# protobuf fields of a message: [ field, wire type, value (varint) or bytes ]
sub fields {
    my ($buf) = @_;
    my ($pos, @f) = (0);
    while ($pos < length $buf) {
        my $key = varint(\$buf, \$pos);
        my ($n, $t) = ($key >> 3, $key & 7);
        if    ($t == 0) { push @f, [ $n, 0, varint(\$buf, \$pos) ] }
        elsif ($t == 2) { my $l = varint(\$buf, \$pos); push @f, [ $n, 2, substr $buf, $pos, $l ]; $pos += $l }
        elsif ($t == 1) { push @f, [ $n, 1, unpack 'q<', substr $buf, $pos, 8 ]; $pos += 8 }
        elsif ($t == 5) { push @f, [ $n, 5, unpack 'l<', substr $buf, $pos, 4 ]; $pos += 4 }
        else            { die "wire type $t\n" }
    }
    return @f;
}

# an int64 sent as a varint: negative numbers are 10-byte varints >= 2^63
sub int64 { my $v = shift; return $v > 9223372036854775807 ? -1 : $v }

# pprof: every Sample.value and Profile.duration_nanos, as [ what, value ]
# (what: 'duration_nanos', or 'sample value' with its sample type's unit)
sub pprof_values {
    my ($file) = @_;
    my $raw;
    gunzip($file => \$raw) or die "gunzip $file: $GunzipError\n";
    my (@v, @strings, @types, @samples);
    for my $f (fields($raw)) {
        if    ($f->[0] == 10 && $f->[1] == 0) { push @v, [ 'duration_nanos', int64($f->[2]) ] }
        elsif ($f->[0] == 6)                  { push @strings, $f->[2] }              # string_table
        elsif ($f->[0] == 1)                  { push @types, { map { ($_->[0] => $_->[2]) } fields($f->[2]) } }
        elsif ($f->[0] == 2 && $f->[1] == 2) {                                        # Profile.sample
            my @values;
            for my $s (fields($f->[2])) {
                next unless $s->[0] == 2;                                              # Sample.value
                if ($s->[1] == 0) { push @values, int64($s->[2]) }
                else {                                                                 # packed
                    my ($p, $b) = (0, $s->[2]);
                    push @values, int64(varint(\$b, \$p)) while $p < length $b;
                }
            }
            push @samples, \@values;
        }
    }
    for my $values (@samples) {
        for my $k (0 .. $#$values) {
            my $unit = defined $types[$k]{2} ? $strings[ $types[$k]{2} ] // '?' : '?';
            push @v, [ "sample value ($unit)", $values->[$k] ];
        }
    }
    return @v;
}

# speedscope: sampled weights; evented spans (close - open) per frame
sub speedscope_values {
    my ($file) = @_;
    open my $fh, '<:raw', $file or die "$file: $!";
    my $j = JSON::PP->new->decode(do { local $/; <$fh> });
    my @v;
    for my $p (@{ $j->{profiles} }) {
        push @v, [ 'profile length', $p->{endValue} - $p->{startValue} ];
        if ($p->{type} eq 'sampled') {
            push @v, map { [ 'weight', $_ ] } @{ $p->{weights} };
        } else {
            # the time a stack is open is the weight (an evented profile at
            # the samples' recorded times: the gaps between them are idle)
            my (%open, $depth, $last);
            for my $e (@{ $p->{events} }) {
                push @v, [ 'weight', $e->{at} - $last ] if $depth;
                $depth += $e->{type} eq 'O' ? 1 : -1;
                $last = $e->{at};
                push @v, [ 'event time - start', $e->{at} - $p->{startValue} ];
                if ($e->{type} eq 'O') { push @{ $open{ $e->{frame} } }, $e->{at} }
                else { push @v, [ 'event span', $e->{at} - (pop(@{ $open{ $e->{frame} } }) // $e->{at}) ] }
            }
        }
    }
    return @v;
}

1;
