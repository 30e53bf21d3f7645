#!perl
# Every public function's arguments: a reference where a value or a path
# belongs is a `usage` error in the documented form, naming what it is ("an
# ARRAY reference"), never its "ARRAY(0x...)" text, and nothing is written;
# out => \$buffer writes into the scalar (the same bytes as a file);
# compress is 0..9 (-1 and -5 are usage errors, not a Perl die with a file
# and line).  Objects with their own string form (a path object) are paths.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use Cwd qw(getcwd);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);
use Devel::ProfileBridge::NYTProfWriter ();

my $f = "$FindBin::Bin/data/pprof/cpu_inline.prof";
my $tmp = tempdir('pb87-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $cwd0 = getcwd();
chdir $tmp or die;
END { chdir $cwd0 if defined $cwd0 }

sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$fh> }
sub usage_ok {
    my ($label, $code, $want) = @_;
    local $SIG{__WARN__} = sub { };
    my $ok = eval { $code->(); 1 };
    my $e = $@;
    ok(!$ok && ref $e && eval { $e->isa('Devel::ProfileBridge::Error') } && $e->class eq 'usage',
        "$label: a usage error") or diag "$e";
    like("$e", $want, "$label: says what is wrong") if $want;
    unlike("$e", qr/\((?:0x)?[0-9a-f]{6,}\)/, "$label: no reference's address in the message");
    unlike("$e", qr/ line \d+\.?$/, "$label: no Perl file and line");
}
sub nothing_written {
    opendir my $dh, '.' or die;
    my @f = grep { !/\A\.\.?\z/ } readdir $dh;
    ok(!@f, 'nothing written in the working directory') or diag "@f";
    unlink @f;
}

# out => \$buffer: into the scalar, the bytes a file gets
{
    local $SIG{__WARN__} = sub { };
    for my $to (qw(collapsed nytprof pprof speedscope)) {
        my $buf = 'old';
        Devel::ProfileBridge::convert(in => $f, out => \$buf, to => $to, source => 0);
        Devel::ProfileBridge::convert(in => $f, out => "$tmp/file.$to", to => $to, source => 0);
        my $file = slurp("$tmp/file.$to");
        unlink "$tmp/file.$to";
        ok(length $buf > 100 && $buf ne 'old', "convert(to => '$to', out => \\\$buf): the output in the scalar");
        if ($to eq 'collapsed' || $to eq 'speedscope') {
            is($buf, $file, '... the same bytes as the file');
        } else {
            is(length $buf, length $file, '... as long as the file');
        }
    }
    my $buf;
    Devel::ProfileBridge::merge(in => [ $f, $f ], out => \$buf, to => 'collapsed');
    my $sum = 0;
    $sum += $_ for $buf =~ /\s([0-9]+)$/mg;
    is($sum, 2 * 540000000, 'merge(out => \$buf): two profiles\' ns in the scalar');
    undef $buf;
    Devel::ProfileBridge::diff(before => $f, after => $f, out => \$buf);
    like($buf, qr/\A\S.* [0-9]+ [0-9]+\n/, 'diff(out => \$buf): the two-column lines in the scalar');
    undef $buf;
    Devel::ProfileBridge::dump_json($f, output => \$buf);
    like($buf, qr/\A\["VERSION",5,0\]\n/, 'dump_json(output => \$buf): JSON lines in the scalar');
    nothing_written();
    $buf = 'kept';
    eval { Devel::ProfileBridge::convert(in => "$tmp/missing", out => \$buf, to => 'collapsed') };
    is($buf, 'kept', 'a failed convert leaves the scalar as it was');
}
usage_ok("convert(to => 'statprofiler', out => \\\$buf)",
    sub { my $b; Devel::ProfileBridge::convert(in => $f, out => \$b, to => 'statprofiler') },
    qr/^Devel::ProfileBridge: usage: convert: out => \\\$scalar takes one file's bytes: to => 'statprofiler' writes a file per thread/);
nothing_written();

# references where paths and values belong
my @cases = (
    [ 'convert(in => [$f])', sub { Devel::ProfileBridge::convert(in => [$f], out => 'x.out') },
        qr/^Devel::ProfileBridge: usage: convert: in must be a path \(a string\), not an ARRAY reference$/ ],
    [ 'for_chunks(filename => $fh)', sub { open my $fh, '<', $f or die; for_chunks(sub { }, filename => $fh) },
        qr/^Devel::ProfileBridge: usage: for_chunks: filename must be a file name, not a GLOB reference$/ ],
    [ 'convert(out => [])', sub { Devel::ProfileBridge::convert(in => $f, out => []) },
        qr/out must be a file name or a scalar reference, not an ARRAY reference/ ],
    [ 'convert(compress => -1)', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', compress => -1) },
        qr/^Devel::ProfileBridge: usage: convert: compress must be 0\.\.9, not '-1'$/ ],
    [ 'convert(compress => -5)', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', compress => -5) },
        qr/^Devel::ProfileBridge: usage: convert: compress must be 0\.\.9, not '-5'$/ ],
    [ 'merge(compress => -1)', sub { Devel::ProfileBridge::merge(in => [$f], out => 'x.out', compress => -1) },
        qr/^Devel::ProfileBridge: usage: merge: compress must be 0\.\.9, not '-1'$/ ],
    [ 'convert(thread => [1])', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', thread => [1]) },
        qr/thread must be a plain value \(a string or a number\), not an ARRAY reference/ ],
    [ 'convert(to => {})', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', to => {}) },
        qr/to must be a plain value/ ],
    [ 'convert(sample_type => object)', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', sample_type => bless {}, 'Some::Class') },
        qr/sample_type must be a plain value \(a string or a number\), not a Some::Class object/ ],
    [ 'convert(source_root => [[]])', sub { Devel::ProfileBridge::convert(in => $f, out => 'x.out', source_root => [ [] ]) },
        qr/source_root must hold file names, not an ARRAY reference/ ],
    [ 'merge(in => [[$f]])', sub { Devel::ProfileBridge::merge(in => [ [$f] ], out => 'x.out') },
        qr/merge: in must hold file names, not an ARRAY reference/ ],
    [ 'merge(jobs => [])', sub { Devel::ProfileBridge::merge(in => [$f], out => 'x.out', jobs => []) }, qr/jobs must be a plain value/ ],
    [ 'diff(before => [$f])', sub { Devel::ProfileBridge::diff(before => [$f], after => $f, out => 'd') },
        qr/diff: before must be a file name, not an ARRAY reference/ ],
    [ 'info({})', sub { Devel::ProfileBridge::info({}) }, qr/^Devel::ProfileBridge: usage: info: the file name must be a path \(a string\), not a HASH reference$/ ],
    [ 'detect_format([])', sub { Devel::ProfileBridge::detect_format([]) }, qr/detect_format: the file name must be a path/ ],
    [ 'chunk_counts(\"x")', sub { Devel::ProfileBridge::chunk_counts(\"x") }, qr/not a SCALAR reference/ ],
    [ 'losses(to => [])', sub { Devel::ProfileBridge::losses($f, to => []) }, qr/losses: to must be a target name, not an ARRAY reference/ ],
    [ 'dump_json(format => [])', sub { Devel::ProfileBridge::dump_json($f, format => []) }, qr/format must be a plain value/ ],
    [ 'for_chunks(files => {})', sub { for_chunks(sub { }, files => {}) }, qr/files must be a list of files/ ],
    [ 'for_chunks(max_line => [])', sub { for_chunks(sub { }, filename => $f, max_line => []) }, qr/max_line must be a plain value/ ],
    [ 'NYTProfWriter->new(file => \"x")', sub { Devel::ProfileBridge::NYTProfWriter->new(file => \"x") },
        qr/^nytprof-writer: usage: file must be a path \(a string\), not a SCALAR reference$/ ],
    [ 'NYTProfWriter write_chunk with a reference', sub { Devel::ProfileBridge::NYTProfWriter->new(file => "$tmp/w.nytprof")->write_chunk(COMMENT => []) },
        qr/write_chunk: argument 2 is an ARRAY reference, not a value/ ],
);
my $have_sp = Devel::ProfileBridge::features()->{write}{statprofiler};
if ($have_sp) {
    require Devel::ProfileBridge::StatProfilerWriter;
    my $sp = sub { Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/" . shift, @_) };
    push @cases,
        [ 'StatProfilerWriter->new(file => [])', sub { $sp->([]) }, qr/^statprofiler-writer: usage: file must be a path \(a string\), not an ARRAY reference$/ ],
        [ 'start_sample(weight => [])', sub { $sp->('a.sp')->start_sample([]) }, qr/weight must be an integer, not an ARRAY reference/ ],
        [ 'start_sample(op_name => [])', sub { $sp->('b.sp')->start_sample(1, []) }, qr/op_name must be a string, not an ARRAY reference/ ],
        [ 'sub_frame(name => {})', sub { $sp->('c.sp')->start_sample(1)->sub_frame('P', {}, 'f', 1, 1) }, qr/name must be a string, not a HASH reference/ ],
        [ 'new(metadata => { a => [] })', sub { $sp->('d.sp', metadata => { a => [] }) }, qr/metadata value of 'a' must be a string/ ];
    # (new's file is a plain string in these: usage_ok below)
    $cases[-5][1] = sub { Devel::ProfileBridge::StatProfilerWriter->new(file => []) };
}
usage_ok(@$_) for @cases;
unlink glob("$tmp/*.sp*"), "$tmp/w.nytprof";
nothing_written();

# a path object with its own string form is a path
{
    package My::Path;
    use overload '""' => sub { ${ $_[0] } }, fallback => 1;
}
my $p = bless \(my $s = $f), 'My::Path';
is(Devel::ProfileBridge::detect_format($p)->{format}, 'pprof', 'a path object: detect_format reads its file');
Devel::ProfileBridge::convert(in => $p, out => bless(\(my $o = "$tmp/p.folded"), 'My::Path'), to => 'collapsed');
ok(-s "$tmp/p.folded", '... and convert writes to one');
unlink "$tmp/p.folded";

done_testing;
