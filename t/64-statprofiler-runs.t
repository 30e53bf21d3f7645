#!perl
# A Devel::StatProfiler run is one profile: its directory, or the first file
# of its root process, reads as the whole fork genealogy in convert (every
# target), chunk_counts / profbridge info, dump_json / profbridge dump,
# detect_format and for_chunks, exactly as for_chunks(files => [...]) does;
# pid => / --pid keeps one process.  Checked on the fork corpus (a parent
# with three rotated files and two forked children) against the real
# reader's per-file total weights: the run's totals are the sum of the parts.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use lib "$FindBin::Bin/lib";
use NoteWarnings;    # the warnings these tests cause on purpose, as notes
use Needs qw(snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use RawFile qw(slurp_raw);
use JSON::PP ();
use Devel::ProfileBridge ();

my $d = "$FindBin::Bin/data/statprofiler";
my @files = grep { !/\.json[l]?\z/ } glob("$d/fork.out.*");
plan skip_all => 'no fork run in t/data' unless @files == 5;
my $tmp = tempdir('pb64-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $dir = "$tmp/run";
mkdir $dir or die;
copy($_, $dir) or die "copy $_: $!" for @files;
my ($first) = grep { /000028f9[0-9a-f]{40}\.00000001\z/ } @files;    # the root's first file
my ($child) = grep { /000028fb[0-9a-f]{40}\.00000001\z/ } @files;

my $json = JSON::PP->new;
my (%weight, $sum);
for my $f (@files) {
    my $t = $json->decode(slurp_raw("$f.truth.json"));
    my ($pid) = $f =~ /\.([0-9a-f]{8})[0-9a-f]{40}\.[0-9a-f]{8}\z/;
    $weight{ hex $pid } += $t->{total_weight};
    $sum += $t->{total_weight};
}
my $iv = 1000;    # µs, every file of the run
is(scalar(keys %weight), 3, "the run has 3 processes, $sum samples' weight in all");

sub ticks {
    my (%o) = @_;
    my ($t, $p) = (0, 0);
    Devel::ProfileBridge::for_chunks(sub { $t += $_[1] if $_[0] eq 'TIME_LINE'; $p++ if $_[0] eq 'PID_START' }, %o);
    return ($t, $p);
}
my ($want_ticks, $want_pids) = ticks(files => [@files]);
is($want_ticks, $sum * $iv, 'for_chunks(files => [...]): the sum of the parts');
is($want_pids, 3, '... one span per process');

for my $in ([ directory => $dir ], [ 'first file' => $first ]) {
    my ($what, $path) = @$in;
    is_deeply([ ticks(filename => $path) ], [ $want_ticks, 3 ], "for_chunks on the run's $what") if $what eq 'directory';
    my $out = "$tmp/run.nytprof";
    unlink $out;
    Devel::ProfileBridge::convert(in => $path, out => $out);
    is_deeply([ ticks(filename => $out) ], [ $want_ticks, 3 ], "convert of the run's $what: every process");
    Devel::ProfileBridge::convert(in => $path, out => "$tmp/run.folded", to => 'collapsed');
    my $c = 0;
    $c += $_ for slurp_raw("$tmp/run.folded") =~ / (\d+)$/mg;
    is($c, $sum, "collapsed stacks of the run's $what add up to $sum");
    my @sp = Devel::ProfileBridge::convert(in => $path, out => "$tmp/sp-" . ($what =~ s/ /_/r) . '.out', to => 'statprofiler');
    my ($spt) = ticks(files => [@sp]);
    is($spt, $want_ticks, "StatProfiler records of the run's $what re-read: the same ticks (" . scalar(@sp) . ' files)');
    my $counts = Devel::ProfileBridge::chunk_counts($path);
    is($counts->{PID_START}, 3, "chunk_counts of the run's $what: 3 processes");
    Devel::ProfileBridge::dump_json($path, output => "$tmp/run.jsonl");
    my $pids = () = slurp_raw("$tmp/run.jsonl") =~ /^\["PID_START"/mg;
    is($pids, 3, "dump_json of the run's $what: 3 processes");
}
my $info = Devel::ProfileBridge::detect_format($dir);
is("$info->{format} $info->{run_files}", 'statprofiler 5', 'detect_format on the directory: statprofiler, 5 trace files');

# one process
for my $pid (sort keys %weight) {
    my $out = "$tmp/pid$pid.nytprof";
    Devel::ProfileBridge::convert(in => $dir, out => $out, pid => $pid);
    is_deeply([ ticks(filename => $out) ], [ $weight{$pid} * $iv, 1 ], "pid => $pid: that process alone ($weight{$pid})");
}
is_deeply([ ticks(files => [@files], pid => 10491) ], [ $weight{10491} * $iv, 1 ], 'for_chunks(files => ..., pid => ...)');
ok(!eval { Devel::ProfileBridge::convert(in => $dir, out => "$tmp/x", pid => 99); 1 }, 'pid => 99: refused');
like($@, qr/unsupported: .*no process 99 in this run \(its processes: 10489, 10491, 10493\)/, '... naming the run\'s processes');
ok(!eval { Devel::ProfileBridge::convert(in => $dir, out => "$tmp/x", pid => 'abc'); 1 } && $@ =~ /pid must be a process id/,
    "pid => 'abc': a clear usage error");

# a child's file alone is just that file
is_deeply([ ticks(filename => $child) ], [ $weight{10491} * $iv, 1 ], "a child's trace file reads alone");

# the command line
my @pb = ($^X, '-Mblib', "$FindBin::Bin/../bin/profbridge");
my $text = `@pb info '$dir'`;
like($text, qr/^trace files: 5 /m, 'profbridge info DIR: the trace files');
my $warned = `@pb convert '$dir' -o '$tmp/cli.nytprof' 2>&1`;
is($? >> 8, 0, 'profbridge convert RUN_DIR -o out: exit 0');
like($warned, qr/\Aconvert: warning: the source of 1 of 1 files was not found \(not embedded\): 'fork\.pl'/,
    '... one warning: the program is not beside the run');
is_deeply([ ticks(filename => "$tmp/cli.nytprof") ], [ $want_ticks, 3 ], '... every process');
my $err = `@pb convert '$dir' --pid 99 -o '$tmp/x.nytprof' 2>&1`;
is($? >> 8, 2, 'profbridge convert --pid 99: exit 2');
like($err, qr/no process 99/, '... saying so');
my $one = `@pb convert '$dir' --pid 10493 --to collapsed -o -`;
my $c = 0;
$c += $_ for $one =~ / (\d+)$/mg;
is($c, $weight{10493}, 'profbridge convert --pid 10493 --to collapsed: that process');

done_testing();
