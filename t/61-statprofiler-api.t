#!perl
# Devel::StatProfiler through the Perl API: the OO record writer, whole
# genealogies (files =>), conversion of Tachyon and StatProfiler input to
# StatProfiler records, eval source as SRC_LINEs, and the converted trace in
# the real nytprofhtml.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(zstd snappy);    # skips the file when this build lacks one (Devel::ProfileBridge::features)
use File::Temp qw(tempdir);
use Config;
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge::StatProfilerWriter;

my $data = "$FindBin::Bin/data";
my $tmp = tempdir('pb61-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub chunks_of {
    my (%opt) = @_;
    my @c;
    &for_chunks(sub { push @c, [@_] }, %opt);
    return \@c;
}

# ---- the OO writer ---------------------------------------------------------
{
    my $f = "$tmp/w.out";
    my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => $f, perl_version => '5.36.0',
        interval_us => 1000, depth => 20, metadata => { app => 'demo' });
    ok(!-e "${f}_" && !-e $f, 'while writing, neither <name> nor a predictable <name>_ exists');
    $w->start_sample(3, 'entersub');
    $w->sub_frame('My::Mod', 'work', '/x/My/Mod.pm', 12, 10);
    $w->xsub_frame('List::Util', 'sum');
    $w->main_frame('/x/app.pl', 5);
    $w->end_sample;
    $w->eval_source("my \$x = 1;\n1;\n", 7);
    $w->start_sample(2, '');
    $w->eval_frame('(eval 7)', 2);
    $w->main_frame('/x/app.pl', 6);
    $w->end_sample;
    $w->section_start('phase');
    $w->section_end('phase');
    $w->metadata(key => "v\x{e9}");
    eval { $w->sub_frame('a', 'b', 'c', 1, 1) };
    like($@, qr/outside a sample/, 'a frame outside a sample croaks');
    $w->close;
    ok(-e $f && !-e "${f}_", 'close puts <name> in place');
    eval { $w->close };
    like($@, qr/close called twice/, 'close twice croaks');
    eval { $w->start_sample(1, 'x') };
    like($@, qr/after close/, 'a write after close croaks');

    my $c = chunks_of(filename => $f);
    my %attr = map { $_->[1] => $_->[2] } grep { $_->[0] eq 'ATTRIBUTE' } @$c;
    is($attr{source_format}, 'statprofiler', 'our reader reads it');
    my $ticks = 0;
    $ticks += $_->[1] for grep { $_->[0] eq 'TIME_LINE' } @$c;
    is($ticks, 5 * 1000, 'TIME_LINE ticks: (3 + 2) samples x 1000 us');
    my %subs = map { $_->[4] => [ @$_[1 .. 3] ] } grep { $_->[0] eq 'SUB_INFO' } @$c;
    ok($subs{'My::Mod::work'}, 'sub frame -> sub My::Mod::work');
    is_deeply([ @{ $subs{'List::Util::sum'} || [] }[1, 2] ], [ 0, 0 ], 'xsub frame -> sub with lines 0,0');
    my @src = grep { $_->[0] eq 'SRC_LINE' } @$c;
    is(join('', map { $_->[3] } @src), "my \$x = 1;\n1;\n", 'eval source -> SRC_LINEs of the (eval 7) fid');
    my ($evalfid) = map { $_->[1] } grep { $_->[0] eq 'NEW_FID' && $_->[7] eq '(eval 7)' } @$c;
    ok($evalfid && (grep { $_->[1] == $evalfid } @src) == 2, 'the SRC_LINEs belong to (eval 7)');
    is(scalar(grep { $_->[0] eq 'COMMENT' && $_->[1] =~ /section/ } @$c), 2, 'sections -> COMMENTs');

    my $lister = "$data/statprofiler/statprofiler-raw-records";
    SKIP: {
        skip 'Compress::Snappy not installed', 1 unless eval { require Compress::Snappy; 1 };
        my $out = `'$Config{perlpath}' '$lister' '$f' 2>&1`;
        like($out, qr/length-field mismatches: none/, 'the independent lister accepts every declared length');
    }
}

# ---- files => a genealogy -------------------------------------------------
{
    my @pid;
    for_chunks { push @pid, [ @_[1, 2] ] if $_[0] eq 'PID_START' } files => "$data/statprofiler/fork.out";
    is(scalar @pid, 3, 'fork trace (template): 3 processes');
    my ($root) = grep { $_->[1] == 0 } @pid;
    ok($root, 'one root process');
    is(scalar(grep { $_->[1] == $root->[0] } @pid), 2, 'two children with the parent pid from the genealogy');
    my @list = sort glob("$data/statprofiler/fork.out.*[0-9a-f]");
    my $n1 = @{ chunks_of(files => \@list) };
    my $n2 = @{ chunks_of(files => [ reverse @list ]) };
    is($n1, $n2, 'files in any order give the same stream (ordinals sorted)');
}

# ---- Tachyon -> StatProfiler -> our reader: CPython's stacks per thread -----
{
    my $in = "$data/tachyon/multithread.bin";
    my @files = Devel::ProfileBridge::convert(in => $in, out => "$tmp/mt", to => 'statprofiler');
    is(scalar @files, 5, 'multithread.bin: one trace per thread');
    # function-level stacks from CPython's collapsed output, per thread
    my %want;
    open my $fh, '<', "$in.collapsed.txt" or die;
    while (<$fh>) {
        my ($stack, $n) = /^(.*) (\d+)$/ or next;
        my ($tid, @frames) = split /;/, $stack;
        my @funcs = map { my $f = (split /:/)[1]; $f =~ s/.*\.//; $f } @frames;
        $want{$tid}{ join ';', @funcs } += $n;
    }
    my @want = sort map { my $t = $_; join '|', map { "$_=$want{$t}{$_}" } sort keys %{ $want{$t} } } keys %want;
    my @got;
    for my $f (@files) {
        my $c = "$f.collapsed";
        Devel::ProfileBridge::convert(in => $f, out => $c, to => 'collapsed');
        my %s;
        open my $cf, '<', $c or die;
        while (<$cf>) {
            my ($stack, $n) = /^(.*) (\d+)$/ or next;
            my (undef, @subs) = split /;/, $stack;
            s/.*:://, s/^main::RUNTIME$// for @subs;
            $s{ join ';', grep { length } @subs } += $n;
        }
        push @got, join '|', map { "$_=$s{$_}" } sort keys %s;
    }
    is_deeply([ sort @got ], \@want, 'per-thread stacks and counts equal CPython\'s collapsed output');
}

# ---- StatProfiler -> StatProfiler keeps every sample -----------------------
{
    my ($in) = glob("$data/statprofiler/xs_calls.out.*[0-9a-f]");
    my ($out) = Devel::ProfileBridge::convert(in => $in, out => "$tmp/xs.out", to => 'statprofiler');
    my $strip = sub { [ grep { $_->[0] ne 'ATTRIBUTE' || $_->[1] !~ /genealogy|id/ } @{ $_[0] } ] };
    my $a = chunks_of(filename => $in);
    my $b = chunks_of(filename => $out);
    is(scalar(grep { $_->[0] eq 'TIME_LINE' } @$b), scalar(grep { $_->[0] eq 'TIME_LINE' } @$a),
        'xs_calls: same number of samples after a StatProfiler round trip');
    is_deeply([ grep { $_->[0] eq 'SUB_CALLERS' } @$b ], [ grep { $_->[0] eq 'SUB_CALLERS' } @$a ],
        'xs_calls: same caller edges after a round trip');
}

# ---- converted StatProfiler trace in the real nytprofhtml -------------------
SKIP: {
    my $html = `which nytprofhtml 2>/dev/null`;
    chomp $html;
    skip 'nytprofhtml not installed', 2 unless $html;
    my ($in) = glob("$data/statprofiler/evals.out.*[0-9a-f]");
    Devel::ProfileBridge::convert(in => $in, out => "$tmp/evals.nytprof");
    my $out = `'$html' -f '$tmp/evals.nytprof' -o '$tmp/evals-html' 2>&1`;
    is($? >> 8, 0, 'nytprofhtml renders a converted StatProfiler trace') or diag $out;
    ok(-s "$tmp/evals-html/index.html", 'index.html written');
}

done_testing;
