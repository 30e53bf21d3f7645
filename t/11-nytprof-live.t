#!perl
# Our for_chunks against the real Devel::NYTProf::ReadStream, live, on the same
# files: values, argument count, the UTF-8 flag of every string, and $. for
# every chunk.  Skipped when Devel::NYTProf is not installed (CI installs
# Debian's libdevel-nytprof-perl).
use strict;
use warnings;
use Test::More;
use FindBin;

BEGIN {
    eval { require Devel::NYTProf::ReadStream; 1 }
        or plan skip_all => 'Devel::NYTProf is not installed';
}
use Devel::ProfileBridge::ReadStream ();

sub collect {
    my ($for_chunks, $file) = @_;
    my @chunks;
    $for_chunks->(sub {
        my @rec = ($., map { defined $_ ? $_ : '<undef>' } @_);
        my @flags = map { utf8::is_utf8($_) ? 1 : 0 } @_;
        push @chunks, [ \@rec, \@flags ];
    }, filename => $file, quiet => 1);
    return \@chunks;
}

my @files = sort grep { !/\.jsonl\z/ } glob("$FindBin::Bin/data/nytprof/*.nytprof.out");
plan skip_all => 'no NYTProf files' unless @files;

for my $file (@files) {
    my $theirs = collect(\&Devel::NYTProf::ReadStream::for_chunks, $file);
    my $ours = collect(\&Devel::ProfileBridge::ReadStream::for_chunks, $file);
    my $bad;
    for my $i (0 .. ($#$theirs > $#$ours ? $#$theirs : $#$ours)) {
        my ($t, $o) = ($theirs->[$i], $ours->[$i]);
        if (!$t || !$o) { $bad = "chunk $i: missing on one side"; last }
        my $ts = join "\x{1}", @{ $t->[0] };
        my $os = join "\x{1}", @{ $o->[0] };
        if ($ts ne $os) { $bad = "chunk $i: got [@{$o->[0]}], expected [@{$t->[0]}]"; last }
        if ("@{$t->[1]}" ne "@{$o->[1]}") {
            $bad = "chunk $i ($t->[0][1]): UTF-8 flags [@{$o->[1]}], expected [@{$t->[1]}]";
            last;
        }
    }
    ok(!$bad, "$file: " . scalar(@$theirs) . " chunks, \$., values and UTF-8 flags as Devel::NYTProf")
        or diag($bad);
}

# NYTProf's reused string scalars keep a UTF-8 flag once a STRING_UTF8 set it
# (sv_setpvn preserves it); text chunks are never flagged.  Files built here
# with our writer, compared with the real reader.
{
    require Devel::ProfileBridge::NYTProfWriter;
    require File::Temp;
    my $dir = File::Temp::tempdir('pb11-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $f = "$dir/sticky.nytprof";
    my $w = Devel::ProfileBridge::NYTProfWriter->new(file => $f, compress => 0);
    $w->write_chunk(VERSION => 5, 0);
    $w->write_chunk(ATTRIBUTE => 'ticks_per_sec', '1000');
    $w->write_chunk(NEW_FID => 1, 0, 0, 0, 0, 0, "x\x{e9}.pl");
    $w->write_chunk(PID_START => 1, 0, 1.5);
    $w->write_chunk(SUB_CALLERS => 1, 2, 1, 0.1, 0.1, 0, 0, "main::\x{6771}", "main::\x{6772}");
    $w->write_chunk(ATTRIBUTE => 'a', 'b');
    $w->write_chunk(COMMENT => "hello\n");
    $w->write_chunk(SUB_INFO => 1, 1, 2, 'main::plain');
    $w->write_chunk(SUB_RETURN => 0, 1, 1, 'main::plain2');
    $w->write_chunk(SUB_CALLERS => 1, 2, 1, 0.1, 0.1, 0, 0, 'main::p3', 'main::p4');
    $w->write_chunk(SRC_LINE => 1, 1, "text\n");
    $w->write_chunk(PID_END => 1, 2.5);
    $w->close;
    my $theirs = collect(\&Devel::NYTProf::ReadStream::for_chunks, $f);
    my $ours = collect(\&Devel::ProfileBridge::ReadStream::for_chunks, $f);
    is_deeply($ours, $theirs, 'sticky UTF-8 flags of reused string arguments, as Devel::NYTProf');
}

done_testing;
