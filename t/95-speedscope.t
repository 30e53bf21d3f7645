#!perl
# --to speedscope: every corpus conversion is valid against the JSON schema
# that the speedscope npm package publishes (dist/release/
# file-format-schema.json; set PB_SPEEDSCOPE_SCHEMA to it, as CI does, and
# have python3 with jsonschema), and holds our collapsed stacks, thread by
# thread, in ns.  The stack check runs everywhere; the schema check skips
# without the schema.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(zstd snappy);
use Stacks qw(slurp stack_corpus convert_quietly weight_unit_ns folded_weights speedscope_schema_check);
use File::Temp qw(tempdir);
use JSON::PP ();
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb95-XXXXXX', TMPDIR => 1, CLEANUP => 1);

my $schema = $ENV{PB_SPEEDSCOPE_SCHEMA};
my ($py) = grep { defined && -x && !system("$_ -c 'import jsonschema' 2>/dev/null") } '/usr/bin/python3',
    map { my $p = `which $_ 2>/dev/null`; chomp $p; $p || undef } 'python3';
my $validate = $schema && -r $schema && $py;
note('no schema check: set PB_SPEEDSCOPE_SCHEMA to the speedscope package\'s file-format-schema.json'
    . ' and install python3-jsonschema') unless $validate;

my @corpus = stack_corpus($d);
# inputs with sample times: their threads are evented profiles at those times
# (t/95-speedscope-times.t checks the times of every real 3.15 file, and
# t/98-sampled-flamegraph.t their totals); the weights stay the collapsed ones
push @corpus, map({ "$d/tachyon/real315/$_.bin" } qw(multithread_cpu_none lambdas_classes_opcodes_zstd)), map { "$d/perf/$_.perf" } qw(thr_cpp_F rec_fork rust_pidtid);
my @files;
for my $in (@corpus) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    (my $base = $label) =~ s/\W+/_/g;
    my $out = "$tmp/$base.speedscope.json";
    my $folded = "$tmp/s.folded";
    ok(convert_quietly($in, { out => $out, to => 'speedscope' }, { out => $folded, to => 'collapsed' }),
        "$label: converted") or diag $@;
    push @files, $out;
    my $j = eval { JSON::PP->new->decode(slurp($out)) };
    ok($j, "$label: JSON") or next;
    my %want = %{ folded_weights($folded, thread => 1, unit => weight_unit_ns($in), utf8 => 1) };  # (JSON gives characters)
    my %got;
    my $frames = $j->{shared}{frames};
    # a thread's profile is named as its profiler names it (EasyProfiler's
    # "Main", as its own reader gives it; "Main (10342)" when two threads
    # share it), else "thread <id>"
    my %tid_of;
    if ($label =~ /^easyprofiler/ && -e "$in.truth.json") {
        my $t = JSON::PP->new->decode(slurp("$in.truth.json"));
        my %named;
        $named{ $_->{name} }++ for grep { length $_->{name} } @{ $t->{threads} };
        $tid_of{ $named{ $_->{name} } > 1 ? "$_->{name} ($_->{thread_id})" : $_->{name} } = $_->{thread_id}
            for grep { length $_->{name} } @{ $t->{threads} };
        ok(!grep({ !exists $tid_of{ $_->{name} } && $_->{name} !~ /\Athread \d+\z/ } @{ $j->{profiles} }),
            "$label: threads are named as EasyProfiler's reader names them ("
            . join(', ', map { $_->{name} } @{ $j->{profiles} }) . ')');
    }
    for my $p (@{ $j->{profiles} }) {
        my $t = $tid_of{ $p->{name} } // $p->{name};
        $t =~ s/\Athread //;
        if ($p->{type} eq 'evented') {
            # the time between events belongs to the open stack
            my (@open, $at);
            for my $e (@{ $p->{events} }) {
                $got{ join ';', $t, map { $frames->[$_]{name} } @open } += $e->{at} - $at if @open && $e->{at} > $at;
                $at = $e->{at};
                if ($e->{type} eq 'O') { push @open, $e->{frame} }
                else { $open[-1] == $e->{frame} or die "unbalanced close"; pop @open }
            }
            next;
        }
        for my $i (0 .. $#{ $p->{samples} }) {
            $got{ join ';', $t, map { $frames->[$_]{name} } @{ $p->{samples}[$i] } } += $p->{weights}[$i];
        }
    }
    if ($label =~ /^easyprofiler/ && @{ $j->{profiles} }) {
        ok(!grep({ $_->{type} ne 'evented' && @{ $_->{samples} } } @{ $j->{profiles} }),
            "$label: EasyProfiler threads with blocks are evented profiles (real begin/end times)");
    }
    is_deeply(\%got, \%want, "$label: every thread's stacks and ns weights are our collapsed output's ("
        . scalar(keys %want) . ')');
}

SKIP: {
    skip 'no speedscope schema or python3 jsonschema', 1 unless $validate;
    my ($rc, $out) = speedscope_schema_check($py, $schema, $tmp, @files);
    is($rc, 0, scalar(@files) . ' speedscope files valid against the speedscope package\'s schema') or diag $out;
}

# a merged profile of three formats is one speedscope file too
Devel::ProfileBridge::merge(in => [ "$d/tachyon/cpu_recursion.bin", "$d/easyprofiler/ep_basic.prof" ],
    out => "$tmp/merged.json", to => 'speedscope');
my $m = JSON::PP->new->decode(slurp("$tmp/merged.json"));
is(scalar @{ $m->{profiles} }, 2, 'a merge of two one-thread profiles: two speedscope profiles');
ok(!grep({ $_->{unit} ne 'nanoseconds' } @{ $m->{profiles} }), '... in nanoseconds');

done_testing;
