#!perl
# What the report's header and tables say of a foreign profile (issue 35),
# read by the REAL Devel::NYTProf reader and nytprofhtml:
#  * "Profile of P for X (of Y)": X (profiler_active) is the sampled time and
#    Y (profiler_duration) the run's length where the source records it:
#    CPython's duration_sec (get_info(), truth.json), pprof's duration_nanos
#    and V8's endTime - startTime, read from the files themselves; Y is X
#    where parallel threads hold more than the run (NYTProf's reader would
#    warn);
#  * P (ATTRIBUTE application) is the program: EasyProfiler's first block
#    descriptor's file, the base name of pprof's main binary (go tool pprof's
#    "File:" line) and of V8's first file: script;
#  * synthetic frames (V8's (garbage collector), CPython's <GC>) sit in a fake
#    file whose name says so, not "~"; main::RUNTIME's SUB_INFO is in the
#    program's file, not in fid 1 (threading.py);
#  * EasyProfiler: the top-level blocks' calls are not booked on their own
#    line a second time, and the flame graph has no main::RUNTIME row;
#  * nytprofhtml's stderr holds nothing but its progress lines.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Stacks qw(slurp nytprof_tools page_text go_for_pprof);
use SampledTime qw(pprof_values);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my ($html, $calls) = nytprof_tools();    # skips without Devel::NYTProf, nytprofhtml, nytprofcalls
require Devel::NYTProf::Data;
require Devel::NYTProf::Util;
require Devel::NYTProf::ReadStream;
my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb98h-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new;
my $go = go_for_pprof($tmp);
my $zstd = defined Devel::ProfileBridge::features()->{libraries}{zstd};
my $v8 = Devel::ProfileBridge::features()->{read}{v8};
my $FAKE = '(frames the profiler adds, no source)';

my $n = 0;
# $in converted to nytprof.out: (path, the real reader's profile)
sub convert {
    my ($in) = @_;
    my $out = "$tmp/" . ++$n . '.nytprof';
    local $SIG{__WARN__} = sub { };    # (sources not found: said on our stderr)
    Devel::ProfileBridge::convert(in => $in, out => $out);
    return ($out, Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }));
}

# nytprofhtml of $out: (index.html's text, stderr lines but the progress ones)
sub report {
    my ($out) = @_;
    my $dir = "$out-html";
    system("cd \"$tmp\" && \"$html\" -f \"$out\" -o \"$dir\" > \"$dir.out\" 2> \"$dir.err\"");
    my @err = grep { !/\A(?:Extracting subroutine (?:call data|links)|Generating subroutine stack flame graph)\b/ }
        split /\n/, slurp("$dir.err");
    return (page_text("$dir/index.html", 1), \@err, $dir);
}

# ---- "for X (of Y)" ---------------------------------------------------------
my @headers;
for my $f (glob("$d/tachyon/real315/*.bin")) {
    next if $f =~ /_zstd\.bin\z/ && !$zstd;
    my $t = $json->decode(slurp("$f.truth.json"));
    my $x = $t->{samples_seen_by_collector} * $t->{info}{sample_interval_us} / 1e6;
    next unless $x;
    my $y = $t->{info}{duration_sec};
    # threads sampled in parallel: more than NYTProf's 10% leeway over the run
    push @headers, [ $f, $x, $x > $y * 1.09 ? $x : $y, $x > $y * 1.09 ? 'sampled time (parallel threads)' : 'duration_sec' ];
}
{
    my $f = "$d/pprof/cpu_inline.prof";
    my @v = pprof_values($f);
    my ($dur) = map { $_->[1] } grep { $_->[0] eq 'duration_nanos' } @v;
    my $x = 0;
    $x += $_->[1] for grep { $_->[0] eq 'sample value (nanoseconds)' } @v;
    push @headers, [ $f, $x / 1e9, $dur / 1e9, 'duration_nanos' ];
}
if ($v8) {
    my $f = "$d/v8/v8_mixed.cpuprofile";
    my $p = $json->decode(slurp($f));
    push @headers, [ $f, undef, ($p->{endTime} - $p->{startTime}) / 1e6, 'endTime - startTime' ];
}
for my $h (@headers) {
    my ($in, $x, $y, $what) = @$h;
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my ($out, $p) = convert($in);
    my $a = $p->{attribute};
    ok(abs($a->{profiler_duration} - $y) < 2e-6, "$label: Y = $what, $y s (got $a->{profiler_duration})");
    ok(!defined $x || abs($a->{profiler_active} - $x) < 2e-6,
        "$label: X = the sampled time" . (defined $x ? ", $x s (got $a->{profiler_active})" : ''));
    my ($index, $err) = report($out);
    my $want = sprintf 'for %s (of %s)', Devel::NYTProf::Util::fmt_time($a->{profiler_active}),
        Devel::NYTProf::Util::fmt_time($y);
    like($index, qr/Profile of \S+ \Q$want\E/, "$label: the header reads \"$want\"");
    is_deeply($err, [], "$label: nothing on nytprofhtml's stderr but its progress lines");
}

# ---- the program's name; synthetic frames' file; main::RUNTIME's file --------
my %fid;
sub files_of {
    my ($out) = @_;
    my (%name, %runtime);
    &Devel::ProfileBridge::ReadStream::for_chunks({
            NEW_FID  => sub { $name{ $_[1] } = $_[7] },
            SUB_INFO => sub { $runtime{fid} = $_[1] if $_[4] eq 'main::RUNTIME' },
        }, filename => $out, quiet => 1);
    return (\%name, $runtime{fid});
}
{
    my $in = "$d/easyprofiler/ep_basic.prof";
    my $t = $json->decode(slurp("$in.truth.json"));
    my ($out, $p) = convert($in);
    is($p->{attribute}{application}, $t->{descriptors}[0]{file},
        "easyprofiler/ep_basic.prof: titled by the program's source, $t->{descriptors}[0]{file}, not the input's path");
}
{
    my $in = "$d/pprof/cpu_inline.prof";
    my ($out, $p) = convert($in);
  SKIP: {
        skip 'no go command for go tool pprof', 1 unless $go;
        my ($file) = `"$go" tool pprof -top "$in" 2>/dev/null` =~ /^File: (.*)$/m;
        is($p->{attribute}{application}, $file, "pprof/cpu_inline.prof: titled as go tool pprof's File: line, $file");
    }
}
if ($v8) {
    my $in = "$d/v8/v8_mixed.cpuprofile";
    my $j = $json->decode(slurp($in));
    my ($url) = grep { m{\Afile://} } map { $_->{callFrame}{url} } @{ $j->{nodes} };
    (my $base = $url) =~ s{.*/}{};
    my ($out, $p) = convert($in);
    is($p->{attribute}{application}, $base, "v8/v8_mixed.cpuprofile: titled by the script's name, $base");
    my ($names) = files_of($out);
    my %by_name = reverse %$names;
    ok(!exists $by_name{'~'}, 'v8/v8_mixed.cpuprofile: no file named ~');
    my $gc = $p->subinfo_of('main::(garbage collector)');
    is($gc && $names->{ $gc->fid }, $FAKE, "v8/v8_mixed.cpuprofile: (garbage collector) is in the file $FAKE");
    my ($index, $err, $dir) = report($out);
    my @pages = map { page_text($_) } glob("$dir/*.html");
    ok(!grep({ /(?:^|\s)~(?:\s|:|$)/m } @pages) && grep({ index($_, $FAKE) >= 0 } @pages),
        "v8/v8_mixed.cpuprofile: the report lists $FAKE, never ~");
}
{
    my $in = "$d/tachyon/cpu_recursion.bin";
    my ($out, $p) = convert($in);
    my ($names, $rt) = files_of($out);
    is($rt && $names->{$rt}, $p->{attribute}{application},
        "tachyon/cpu_recursion.bin: main::RUNTIME is in the program's file ($p->{attribute}{application}), "
        . "not fid 1 ($names->{1})");
}
{
    my $in = "$d/tachyon/real315/multithread_cpu_none.bin";
    my $t = $json->decode(slurp("$in.truth.json"));
    my ($gc) = grep { $_->[1] eq '<GC>' } @{ $t->{frames} };
    my ($out, $p) = convert($in);
    my ($names) = files_of($out);
    my %by_name = reverse %$names;
    ok($gc && $gc->[0] eq '~' && !exists $by_name{'~'} && exists $by_name{$FAKE},
        "real315/multithread_cpu_none.bin: CPython's ~ frames (<GC>) are in the file $FAKE");
}

# ---- EasyProfiler: no root counted twice -------------------------------------
{
    my $in = "$d/easyprofiler/ep_basic.prof";
    my $t = $json->decode(slurp("$in.truth.json"));
    my $frame = $t->{threads}[0]{by_name}{Frame};
    my ($desc) = grep { $_->{name} eq 'Frame' } @{ $t->{descriptors} };
    my ($out, $p) = convert($in);
    # the calls booked on each line (the real reader's SUB_CALLERS)
    my (%on_line, @root_lines);
    &Devel::NYTProf::ReadStream::for_chunks(sub {
        my ($tag, @a) = @_;
        return unless $tag eq 'SUB_CALLERS';
        my ($fid, $line, $count, $incl, $excl, undef, undef, $callee, $caller) = @a;
        $on_line{$line} += $incl;
        push @root_lines, $line if $caller eq 'main::RUNTIME';
    }, filename => $out, quiet => 1);
    my $want = ($frame->{total_ns} - $frame->{self_ns}) / 1e9;
    ok(abs(($on_line{ $desc->{line} } // 0) - $want) < 1e-8,
        "easyprofiler/ep_basic.prof: line $desc->{line} (EASY_BLOCK(\"Frame\")) holds only the calls Frame makes, "
        . "$want s, not Frame's own time again");
    ok(($on_line{ $desc->{line} } // 0) <= $p->{attribute}{profiler_duration},
        'easyprofiler/ep_basic.prof: ... which fits in the profile');
    is_deeply([ grep { $_ } @root_lines ], [], 'easyprofiler/ep_basic.prof: calls from main::RUNTIME on line 0 '
        . '(the file does not say where the program entered the block)');
    my @stacks = grep { length } split /\n/, `"$calls" "$out" 2>/dev/null`;
    ok(@stacks && !grep({ /(?:^|;)main::RUNTIME(?:;| )/ } @stacks) && !grep({ !/\Amain::Frame[; ]/ } @stacks),
        'easyprofiler/ep_basic.prof: nytprofcalls\' stacks start at the top-level block main::Frame, no main::RUNTIME');
    my (undef, $err, $dir) = report($out);
    is_deeply($err, [], "easyprofiler/ep_basic.prof: nothing on nytprofhtml's stderr but its progress lines");
    ok(slurp("$dir/all_stacks_by_time.calls") !~ /main::RUNTIME/, 'easyprofiler/ep_basic.prof: no main::RUNTIME row '
        . 'in the flame graph');
}

done_testing;
