#!/usr/bin/perl
# Issue 26 point 7: the date of a converted report (ATTRIBUTE basetime,
# nytprofhtml's "Run on") comes from where the POD ("Dates"), the README and
# `profbridge help convert` say:
#   - NYTProf, StatProfiler, Pynytprof: the file's own (a copy with another
#     modification time gives the same date);
#   - Tachyon, EasyProfiler: the file's modification time minus the run's
#     length (Tachyon: samples x interval here; EasyProfiler: the header's
#     capture begin..end), whole seconds; a gzip copy: the gzip header's time.
# The expected dates are computed here from the files' own bytes and names.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use RawFile qw(slurp_raw spew_raw);
use JSON::PP;
use Devel::ProfileBridge ();

my $data = "$FindBin::Bin/data";
my $tmp = tempdir('pb27-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $T = 1_790_000_000;    # a modification time no test file has

sub attrs {
    my ($file) = @_;
    my %a;
    Devel::ProfileBridge::for_chunks(sub { $a{ $_[1] } = $_[2] if $_[0] eq 'ATTRIBUTE' }, filename => $file);
    return \%a;
}

# a copy of $from with modification time $t
sub dated_copy {
    my ($from, $name, $t) = @_;
    my $f = "$tmp/$name";
    spew_raw($f, slurp_raw($from));
    utime $t, $t, $f or die "utime $f: $!";
    return $f;
}

# ---- Tachyon: modification time minus samples x interval ----------------------------
{
    my $f = dated_copy("$data/tachyon/cpu_recursion.bin", 'cpu_recursion.bin', $T);
    my $a = attrs($f);
    # 511 samples of 1000 us: 0.511 s, whole seconds: 1
    is($a->{basetime}, $T - 1, 'Tachyon: basetime = modification time - run length (0.511 s -> 1 s)');
    utime $T + 3600, $T + 3600, $f or die;
    is(attrs($f)->{basetime}, $T + 3600 - 1, 'Tachyon: another modification time, another date');

    # a gzip copy: the time its gzip header records (not the .gz file's)
    require IO::Compress::Gzip;
    my $gz = "$tmp/cpu_recursion.bin.gz";
    IO::Compress::Gzip::gzip($f => $gz, Time => $T - 86400) or die "gzip failed";
    utime $T, $T, $gz or die;
    is(attrs($gz)->{basetime}, $T - 86400 - 1, 'Tachyon, gzipped: the gzip header\'s time - run length');
}

# ---- EasyProfiler: modification time minus the capture's length --------------------
{
    my $f = dated_copy("$data/easyprofiler/ep_basic.prof", 'ep_basic.prof', $T);
    my $a = attrs($f);
    my $len = int(($a->{source_end_ns} - $a->{source_begin_ns}) / 1e9 + 0.5);
    is($a->{basetime}, $T - $len, "EasyProfiler: basetime = modification time - capture length ($len s)");
}

# ---- Pynytprof: the header's --------------------------------------------------------
for my $case (
    [ 'tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out', sub { $_[0]{header}{attrs}{basetime} } ],
    [ 'tlv/A_binmagic_996afac/shapes.nytprof.out',       sub { int($_[0]{header}{attrs}{start_time} / 1e9) } ],
    [ 'tlv/C_rawP_5b7df35/recursion.nytprof.out',        sub { $_[0]{header}{attrs}{basetime} } ],
) {
    my ($rel, $want) = @$case;
    my $src = "$data/pynytprof/$rel";
    my $truth = decode_json(slurp_raw("$src.truth.json"));
    (my $name = $rel) =~ s{/}{_}g;
    my $f = dated_copy($src, $name, $T);
    is(attrs($f)->{basetime}, $want->($truth), "Pynytprof $rel: the date the file records, whatever its modification time");
}

# ---- StatProfiler: the genealogy id's time word ----------------------------------
SKIP: {
    skip 'this build reads no StatProfiler traces (no snappy)', 1
      unless Devel::ProfileBridge::features()->{read}{statprofiler};
    my ($src) = glob("$data/statprofiler/evals.out.*.00000001");
    my ($id) = $src =~ /\.([0-9a-f]{48})\.[0-9a-f]{8}\z/;
    # [pid, thread id, time(), rand, rand, rand], each as 8 hex digits
    my $f = dated_copy($src, "evals.out.$id.00000001", $T);
    is(attrs($f)->{basetime}, hex(substr($id, 16, 8)), 'StatProfiler: the time word of the genealogy id');
}

# ---- NYTProf: its own ---------------------------------------------------------------
{
    my $src = "$data/nytprof/evals.nocompress.nytprof.out";
    my ($want) = slurp_raw($src) =~ /^:basetime=(\d+)$/m;
    my $f = dated_copy($src, 'evals.nytprof.out', $T);
    is(attrs($f)->{basetime}, $want, 'NYTProf: the file\'s own basetime');
}

# ---- the docs say so -----------------------------------------------------------------
{
    my $help = `'$^X' -Mblib '$FindBin::Bin/../bin/profbridge' --man 2>&1`;
    $help =~ s/\s+/ /g;
    like($help, qr/modification time minus the run's length/, 'profbridge --man: the date of a file without one');
    unlike($help, qr/real date/, 'profbridge --man: no "real date"');
    my $readme = slurp_raw("$FindBin::Bin/../README.md");
    $readme =~ s/\s+/ /g;
    like($readme, qr/modification time minus the run's length/, 'README: where the demo\'s date comes from');
    unlike($readme, qr/the date the profile was made/, 'README: no "the date the profile was made"');
}

done_testing;
