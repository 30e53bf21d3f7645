#!perl
# Real CPython 3.15.2 Tachyon files (t/data/tachyon/real315/) against what
# CPython's own `replay --collapsed` wrote of each (X.bin.collapsed.txt,
# "tid:T;file:func:line;... weight", the profiler's own frames dropped):
#  * the report is titled by the user's program (ATTRIBUTE application, the
#    "Profile of ..." line of the real nytprofhtml), not by the profiler's
#    runner /usr/lib/python3.15/profiling/sampling/_sync_coordinator.py;
#  * our --to collapsed equals replay's, stack for stack, with replay's frames
#    taken by function (our collapsed names functions, not lines);
#  * with `go tool pprof -raw` (when go is installed): our pprof's stacks equal
#    replay's by function and line, so no frame of the runner is left and
#    none of the user's is lost.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd);
use Stacks qw(slurp go_for_pprof first_differences);
use JSON::PP ();
use Devel::ProfileBridge;

my $data = "$FindBin::Bin/data/tachyon/real315";
my @files = sort glob "$data/*.bin";
plan skip_all => "no files in $data" unless @files;
my $tmp = tempdir('pb36-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $go = go_for_pprof($tmp);

# replay's collapsed lines as { "tid;frame;frame" => weight }, each frame
# made by $how from (func, line); "<GC>" and other synthetic frames have no
# file and no line (line 0)
sub replay_stacks {
    my ($file, $how) = @_;
    my %w;
    for (split /\n/, slurp($file)) {
        my ($stack, $n) = /\A(.*) (\d+)\z/ or die "$file: not a collapsed line: $_";
        my ($tid, @frames) = split /;/, $stack;
        my @f = map { /\A.*:(.*):(\d+)\z/s ? $how->($1, $2) : $how->($_, 0) } @frames;
        $w{ join ';', $tid, @f } += $n;
    }
    return \%w;
}

for my $file (@files) {
    local $SIG{__WARN__} = sub { note "warning: @_" };    # an empty profile's
    (my $name = $file) =~ s{.*/}{};
    my $truth = JSON::PP->new->decode(slurp("$file.truth.json"));

    # ---- the title: the user's program ------------------------------------
    # the program: the one file under /srv/app (where the programs ran) in
    # CPython's frame table; a file of no samples names none
    my %app = map { $_->[0] => 1 } grep { $_->[0] =~ m{\A/srv/app/} } @{ $truth->{frames} };
    my @app = keys %app;
    my %attr;
    Devel::ProfileBridge::for_chunks(sub { $attr{ $_[1] } //= $_[2] if $_[0] eq 'ATTRIBUTE' }, filename => $file,
        quiet => 1);
    if (@app == 1) {
        is($attr{application}, $app[0], "$name: titled by the program $app[0]");
    } else {
        is($attr{application}, $name, "$name: no frames, titled by the file's name");
    }

    # ---- collapsed: stack for stack, frames by function ---------------------
    my $want = replay_stacks("$file.collapsed.txt", sub { $_[0] });
    my $out = "$tmp/$name.folded";
    Devel::ProfileBridge::convert(in => $file, out => $out, to => 'collapsed');
    my %got;
    for (split /\n/, slurp($out)) {
        my ($stack, $n) = /\A(.*) (\d+)\z/ or next;
        $got{$stack} += $n;
    }
    is_deeply(\%got, $want, "$name: --to collapsed = replay --collapsed, " . keys(%$want) . ' stacks by function')
        or diag explain [ first_differences(\%got, $want, 5) ];
    ok(!grep({ /_execute_script|_signal_readiness/ } keys %got), "$name: none of the runner's frames left");

    # ---- pprof: stack for stack, frames by function and line -----------------
  SKIP: {
        skip 'no go command for go tool pprof', 1 unless $go;
        skip "$name holds no samples", 1 unless %$want;
        my $pb = "$tmp/$name.pb.gz";
        Devel::ProfileBridge::convert(in => $file, out => $pb, to => 'pprof');
        my $raw = `"$go" tool pprof -raw "$pb" 2>/dev/null`;
        my (%loc, @samples);
        for (split /\n/, $raw) {
            # "   N: 0x0 M=1 NAME FILE:LINE s=0()"
            $loc{$1} = [ $2, $3 ] if /\A\s*(\d+): 0x\S+ M=\d+ (\S+) .*:(\d+) s=\d+/;
            push @samples, [ $1, [ split ' ', $2 ], '' ] if /\A\s*(\d+)\s+\d+: ([\d ]+?)\s*\z/;
            $samples[-1][2] = $1 if @samples && /\bthread:\[([^\]]*)\]/;
        }
        my $lines = replay_stacks("$file.collapsed.txt", sub { "$_[0]:$_[1]" });
        my %g;
        for my $s (@samples) {
            my ($w, $ids, $tid) = @$s;
            $g{ join ';', "tid:$tid", map { "$loc{$_}[0]:$loc{$_}[1]" } reverse @$ids } += $w;
        }
        is_deeply(\%g, $lines, "$name: pprof = replay --collapsed, " . keys(%$lines) . ' stacks by function and line')
            or diag explain [ first_differences(\%g, $lines, 5) ];
    }
}

done_testing;
