#!perl
# pprof and speedscope speak the source tool's language (issue 26): for every
# Tachyon, EasyProfiler and StatProfiler profile in t/data, the REAL `go tool
# pprof -top` and our speedscope file show the source tool's own function
# names - CPython's qualname, EasyProfiler's block name, Perl's Package::sub -
# each with the flat total the ground truth beside the file gives it
# (*.collapsed.txt or *.truth.json: CPython's reader; *.truth.json:
# EasyProfiler's; *.samples.jsonl: Devel::StatProfiler's), and pprof's
# locations carry CPython's file and line.  NYTProf's Package::sub
# presentation of foreign names ("main::leaf", "main::work_unit",
# "threading::Thread::run") belongs to nytprof.out only.  pprof checks skip
# without Go.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);
use Stacks qw(slurp first_differences go_for_pprof statprofiler_run);
use File::Temp qw(tempdir);
use JSON::PP ();
use Encode ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb99-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $go = go_for_pprof($tmp);
$ENV{PPROF_TMPDIR} = $tmp;
my $json = JSON::PP->new;

my @corpus = (glob("$d/tachyon/*.bin"), glob("$d/tachyon/v315/*.bin"), glob("$d/tachyon/real315/*.bin"),
    glob("$d/easyprofiler/*.prof"), grep({ !/\.(?:json|jsonl)\z/ } glob("$d/statprofiler/*.out.*[0-9a-f]")));

# the ground truth: ({ function name => flat weight }, [ [func, file base name, line], ... ] frames seen, unit)
# unit: samples for Tachyon and StatProfiler, ns for EasyProfiler
sub truth {
    my ($in) = @_;
    my (%flat, @frames);
    if ($in =~ m{/real315/}) {
        my $t = $json->decode(slurp("$in.truth.json"));    # BinaryReader's replay: every stack, root first
        # without the profiler's own frames, as CPython's collectors drop them
        # (filter_internal_frames: files ending in _sync_coordinator.py; t/36)
        my $own = sub { $t->{frames}[ $_[0] ][0] =~ /_sync_coordinator\.py\z/ };
        for my $s (@{ $t->{stacks} }) {
            my ($tid, $status, $w, $idx) = @$s;
            $idx = [ grep { !$own->($_) } @$idx ];
            $flat{ @$idx ? $t->{frames}[ $idx->[-1] ][1] : 'main::(no frame)' } += $w;
        }
        for my $i (0 .. $#{ $t->{frames} }) {
            my $f = $t->{frames}[$i];
            push @frames, [ $f->[1], $f->[0] =~ s{\A.*/}{}r, $f->[2][0] ] if $f->[2] && $f->[0] ne '~' && !$own->($i);
        }
    } elsif ($in =~ m{/tachyon/}) {
        for (split /\n/, slurp("$in.collapsed.txt")) {    # CPython's reader: basename:qualname:line frames
            my ($stack, $n) = /\A(.*) (\d+)\z/ or next;
            my @f = map { [ /\A(.*):(.*?):(-?\d+)\z/ ] } grep { !/\Atid:/ } split /;/, $stack;
            push @frames, map { [ $_->[1], $_->[0], $_->[2] ] } grep { $_->[0] ne '~' } @f;
            $flat{ @f ? $f[-1][1] : 'main::(no frame)' } += $n;
        }
    } elsif ($in =~ m{/easyprofiler/}) {
        my $t = $json->decode(slurp("$in.truth.json"));
        for my $th (@{ $t->{threads} }) {
            $flat{$_} += $th->{by_name}{$_}{self_ns} for keys %{ $th->{by_name} };
        }
    } else {
        my $t = $json->decode(slurp("$in.truth.json"));
        for my $f (statprofiler_run($in, $t)) {    # a root's first file: its whole run
            for (split /\n/, slurp("$f.samples.jsonl")) {
                my ($weight, undef, $fr) = @{ $json->decode($_) };
                # (file-level code is our main::RUNTIME; a sample with no frame main::(no frame))
                my $leaf = !@$fr ? 'main::(no frame)' : length $fr->[0][0] ? $fr->[0][0] : 'main::RUNTIME';
                $flat{$leaf} += $weight;
            }
        }
    }
    delete $flat{$_} for grep { !$flat{$_} } keys %flat;
    return (\%flat, \@frames);
}

for my $in (@corpus) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my ($want, $frames) = truth($in);
    my $spans = $label =~ /\Aeasyprofiler/;
    if (!%$want) {
        note "$label: no samples (nothing to name)";
        next;
    }
    my ($pb, $ss) = ("$tmp/n.pb.gz", "$tmp/n.speedscope.json");
    unlink $pb, $ss;
    my $ok = eval {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $in, out => $pb, to => 'pprof');
        Devel::ProfileBridge::convert(in => $in, out => $ss, to => 'speedscope', time_order => 0); # names: the summed form (t/95 reads the timed one)
        1;
    };
    ok($ok, "$label: converted to pprof and speedscope") or diag($@), next;

    # speedscope: flat time per frame name (the innermost frame of each sample;
    # for evented profiles the time each frame is the open top of the stack)
    my $j = $json->decode(slurp($ss));
    my %flat;
    my $fr = $j->{shared}{frames};
    for my $p (@{ $j->{profiles} }) {
        if ($p->{type} eq 'evented') {
            my (@open, $at);
            for my $e (@{ $p->{events} }) {
                $flat{ Encode::encode_utf8($fr->[ $open[-1] ]{name}) } += $e->{at} - $at if @open && $e->{at} > $at;
                $at = $e->{at};
                if ($e->{type} eq 'O') { push @open, $e->{frame} } else { pop @open }
            }
            next;
        }
        for my $i (0 .. $#{ $p->{samples} }) {
            my $s = $p->{samples}[$i];
            $flat{ Encode::encode_utf8($fr->[ $s->[-1] ]{name}) } += $p->{weights}[$i] if @$s;
        }
    }
    if (!$spans) {    # ns -> samples
        my %a;
        &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } //= $_[2] } },
            filename => $in, quiet => 1);
        my $iv = $a{sample_interval_us} * 1000;
        $_ = sprintf '%.0f', $_ / $iv for values %flat;
    }
    delete $flat{$_} for grep { !$flat{$_} } keys %flat;
    is_deeply([ first_differences($want, \%flat, 4) ], [],
        "$label: speedscope's frames are the source's functions with its flat totals (" . scalar(keys %$want) . ')');

    SKIP: {
        skip 'go (golang-go, for go tool pprof) not found', 2 unless $go;
        my $unit = $spans ? '-unit=ns' : '-sample_index=samples';
        my $top = `"$go" tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 $unit "$pb" 2>&1`;
        my %top;
        for (split /\n/, $top) {
            next unless /^\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+\d+(?:ns)?\s+[\d.]+%\s+(.*)\z/;
            $top{$2} += $1 if $1;
        }
        is_deeply([ first_differences($want, \%top, 4) ], [],
            "$label: go tool pprof -top shows the source's functions with its flat totals ("
            . scalar(keys %$want) . ')') or diag join "\n", (split /\n/, $top)[0 .. 12];
        # locations: CPython's function at its file and line
        my $raw = `"$go" tool pprof -raw "$pb" 2>&1`;
        my ($locs) = $raw =~ /^Locations\n(.*?)(?:^\S|\z)/ms;
        $locs //= '';
        my %need = map { (join("\t", @$_) => 1) } @$frames;
        my @gone = grep {
            my ($func, $base, $line) = split /\t/;
            $locs !~ /^\s+\d+: 0x\S+ M=\d+ \Q$func\E (?:.*\/)?\Q$base\E:$line s=/m;
        } sort keys %need;
        skip "$label: its truth gives no frame's line", 1 unless %need;
        is_deeply(\@gone, [], "$label: pprof's locations hold CPython's " . scalar(keys %need)
            . ' (function, file, line) frames');
    }
}

done_testing;
