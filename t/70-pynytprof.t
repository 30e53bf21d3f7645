#!perl
# Pynytprof output, all four dialects (issue 6).
#
# Ground truth: t/data/pynytprof/**/*.truth.json, written by Pynytprof's own
# reader (src/pynytprof/reader.py) at the commit that wrote each file.  For
# dialect D (no truth file; Pynytprof has no reader for it) the fixed-width
# P record and the NEW_FID are unpacked here, independently of the C decoder.
#
# Checked:
#   - detect_format names the dialect; ATTRIBUTE source_format/source_dialect;
#   - every S line: NYTProf statement count (TIME_LINEs minus DISCOUNTed ones)
#     == calls, summed TIME_LINE ticks == exc_ticks, ATTRIBUTE
#     pynytprof_inc_ticks:<fid>:<line> == inc_ticks;
#   - every D sub as SUB_INFO main::<name> (dialect C: main::pynytprof_sid_<sid>);
#   - every C edge as SUB_CALLERS with the same count, ticks and sub_ticks;
#   - PID_START pid/ppid/time as the file has them (C, D);
#   - the converted nytprof.out loads in the real Devel::NYTProf::Data with no
#     warning, its per-line counts/times and per-sub call counts equal the
#     truth, and the real nytprofhtml renders it (exit 0).
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use RawFile qw(slurp_raw);
use File::Find;
use File::Temp qw(tempdir);
use JSON::PP;
use Devel::ProfileBridge;
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $dir = 't/data/pynytprof';
my @files;
find(sub { push @files, $File::Find::name if /\.nytprof\.out\z/ }, $dir);
@files = sort @files;
cmp_ok(scalar @files, '>=', 8, 'pynytprof fixtures present');

my %want_dialect = (A_binmagic => 'A', B_ascii => 'B', C_rawP => 'C');
sub dialect_of {
    my ($f) = @_;
    for my $k (keys %want_dialect) { return $want_dialect{$k} if $f =~ /\Q$k\E/ }
    return 'D';
}


# everything the stream says, aggregated
sub read_stream {
    my ($file) = @_;
    my %s = (lines => {}, attr => {}, subs => {}, edges => []);
    my $discount = 0;
    for_chunks {
        my ($tag, @a) = @_;
        if ($tag eq 'ATTRIBUTE') { $s{attr}{ $a[0] } = $a[1] }
        elsif ($tag eq 'PID_START') { $s{pid_start} = [@a] }
        elsif ($tag eq 'PID_END') { $s{pid_end} = [@a] }
        elsif ($tag eq 'NEW_FID') { push @{ $s{fids} }, [@a] }
        elsif ($tag eq 'DISCOUNT') { $discount = 1 }
        elsif ($tag eq 'TIME_LINE') {
            my ($ticks, $fid, $line) = @a;
            $ticks -= 2**64 if $ticks >= 2**63;
            my $l = $s{lines}{"$fid:$line"} ||= [0, 0];
            $l->[0] += $discount ? 0 : 1;
            $l->[1] += $ticks;
            $discount = 0;
        }
        elsif ($tag eq 'SUB_INFO') { $s{subs}{ $a[3] } = [@a] }
        elsif ($tag eq 'SUB_CALLERS') { push @{ $s{edges} }, [@a] }
    } filename => $file;
    return \%s;
}

my $nytprofhtml = (grep { -x "$_/nytprofhtml" } split /:/, $ENV{PATH})[0];
my $tmp = tempdir(CLEANUP => 1);
my $converter =
    Devel::ProfileBridge->can('convert')
  ? sub { Devel::ProfileBridge::convert(in => $_[0], out => $_[1], format => 'pynytprof') }
  : $ENV{PB_PBCONVERT}    # the C tool t/c/pbconvert.c, while the Perl convert() is not there
  ? sub { system($ENV{PB_PBCONVERT}, '-z', '0', $_[0], $_[1]) == 0 or die "pbconvert failed\n" }
  : undef;

for my $file (@files) {
    (my $name = $file) =~ s{^\Q$dir\E/}{};
    my $dialect = dialect_of($file);
    my $info = Devel::ProfileBridge::detect_format($file);
    is($info->{format}, 'pynytprof', "$name: detected as pynytprof");
    is($info->{dialect}, $dialect, "$name: dialect $dialect");

    my $s = read_stream($file);
    is($s->{attr}{source_format}, 'pynytprof', "$name: ATTRIBUTE source_format");
    is($s->{attr}{source_dialect}, $dialect, "$name: ATTRIBUTE source_dialect");
    ok($s->{pid_start} && $s->{pid_end}, "$name: PID_START and PID_END");

    my $truth;
    if (-f "$file.truth.json") {
        $truth = decode_json(slurp_raw("$file.truth.json"));
        my $fidmap = sub { $_[0] == 0 ? 1 : $_[0] };    # file fid 0 becomes 1; C already uses 1
        my @bad;
        for my $l (@{ $truth->{lines} }) {
            my $key = $fidmap->($l->{fid}) . ":$l->{line}";
            my $got = $s->{lines}{$key} || [0, 0];
            my $inc = $s->{attr}{"pynytprof_inc_ticks:$key"};
            push @bad, "$key: count $got->[0]/$l->{calls} exc $got->[1]/$l->{exc_ticks} inc "
              . ($inc // 'none') . "/$l->{inc_ticks}"
              unless $got->[0] == $l->{calls} && $got->[1] == $l->{exc_ticks}
              && defined $inc && $inc == $l->{inc_ticks};
        }
        is_deeply(\@bad, [], "$name: all " . scalar(@{ $truth->{lines} }) . " lines: counts, exclusive and inclusive ticks");
        is(scalar keys %{ $s->{lines} }, scalar @{ $truth->{lines} }, "$name: no lines beyond the file's");

        my %sid_name = map { $_->{sid} => "main::$_->{name}" } @{ $truth->{subs} || [] };
        my $sub_of = sub { $sid_name{ $_[0] } // "main::pynytprof_sid_$_[0]" };
        for my $sid (sort keys %sid_name) {
            ok($s->{subs}{ $sid_name{$sid} }, "$name: SUB_INFO $sid_name{$sid}");
        }
        my @want = sort map {
            join ' ', $sub_of->($_->{caller_sid}), $sub_of->($_->{callee_sid}), $_->{calls}, $_->{ticks}, $_->{sub_ticks}
        } @{ $truth->{call_edges} };
        my $tps = $s->{attr}{ticks_per_sec};
        my @got = sort map {
            my ($fid, $line, $count, $incl, $excl, $reci, $depth, $called, $caller) = @$_;
            join ' ', $caller, $called, $count, sprintf('%.0f', $incl * $tps), sprintf('%.0f', $excl * $tps)
        } @{ $s->{edges} };
        is_deeply(\@got, \@want, "$name: " . scalar(@want) . " call edges with counts and times");
        ok($s->{subs}{$_}, "$name: SUB_INFO for $_ (used in SUB_CALLERS)")
          for sort { $a cmp $b } keys %{ { map { ($_->[7] => 1, $_->[8] => 1) } @{ $s->{edges} } } };

        if ($dialect eq 'C') {
            my $h = $truth->{header}{attrs};
            is_deeply([ @{ $s->{pid_start} }[0, 1] ], [ $h->{pid}, $h->{ppid} ], "$name: pid/ppid from the raw P record");
            cmp_ok(abs($s->{pid_start}[2] - $h->{timestamp}), '<', 1e-5, "$name: start time from the raw P record");
            like($s->{fids}[0][6], qr/^pynytprof-fid1-path-not-recorded\z/, "$name: placeholder name for the lost path");
            ok($s->{attr}{source_path_lost_fid1}, "$name: ATTRIBUTE says the path is lost");
        } else {
            is($s->{fids}[0][6], $truth->{files}[0]{path}, "$name: file path");
            is_deeply([ @{ $s->{fids}[0] }[3, 4, 5] ], [ @{ $truth->{files}[0] }{qw(flags size mtime)} ],
                "$name: file flags, size, mtime");
        }
        if (@{ $truth->{call_edges} }) {
            cmp_ok($s->{pid_end}[1], '>', $s->{pid_start}[2], "$name: PID_END after PID_START (there are sub calls)");
        }
    } else {
        # dialect D: P with pid/ppid as 4-byte LE, then a varint NEW_FID with a "-string
        my $raw = slurp_raw($file);
        my $at = index($raw, "\nP") + 1;
        my ($pid, $ppid, $t) = unpack 'x V V d<', substr($raw, $at, 17);
        is_deeply([ @{ $s->{pid_start} }[0, 1] ], [ $pid, $ppid ], "$name: pid $pid, ppid $ppid from the fixed-width fields");
        is($s->{pid_start}[2], $t, "$name: start time");
        my ($path) = $raw =~ m{"[\x00-\x7f](/[^\x00]*?\.py)p}s;
        is($s->{fids}[0][6], $path, "$name: NEW_FID path (UTF-8 string)");
        is($s->{pid_end}[0], $pid, "$name: PID_END pid");
    }

  SKIP: {
        skip 'neither Devel::ProfileBridge::convert nor PB_PBCONVERT is available', 4 unless $converter;
        (my $base = $name) =~ s{/}{_}g;
        my $out = "$tmp/$base";
        ok(eval { $converter->($file, $out); 1 }, "$name: converts") or diag $@;
        my @warn;
        local $SIG{__WARN__} = sub { push @warn, @_ };
        open my $saved, '>&', \*STDERR or die;
        open STDERR, '>', "$out.stderr" or die;
        my $p = eval { require Devel::NYTProf::Data; Devel::NYTProf::Data->new({ filename => $out, quiet => 1 }) };
        my $err = $@;
        open STDERR, '>&', $saved or die;
        push @warn, grep { length } slurp_raw("$out.stderr");
        ok($p && !@warn, "$name: the real Devel::NYTProf::Data loads it without warnings") or diag $err, @warn;
        if ($p && $truth) {
            my $tps = $p->attributes->{ticks_per_sec};
            my $ltd = $p->fileinfo_of(1)->line_time_data;
            my @bad;
            for my $l (@{ $truth->{lines} }) {
                my $d = $ltd->[ $l->{line} ] || [0, 0];
                push @bad, "line $l->{line}: $d->[1]/$l->{calls} " . sprintf('%.0f', $d->[0] * $tps) . "/$l->{exc_ticks}"
                  unless $d->[1] == $l->{calls} && sprintf('%.0f', $d->[0] * $tps) == $l->{exc_ticks};
            }
            my %calls;
            # names as the converter presents them (Devel::ProfileBridge/"Names in nytprofhtml")
            my %sid_name = map { $_->{sid} => Devel::ProfileBridge::nytprof_name("main::$_->{name}") }
                @{ $truth->{subs} || [] };
            $calls{ $sid_name{ $_->{callee_sid} } // "main::pynytprof_sid_$_->{callee_sid}" } += $_->{calls}
              for @{ $truth->{call_edges} };
            my $map = $p->subname_subinfo_map;
            for my $sub (sort keys %calls) {
                my $si = $map->{$sub};
                push @bad, "$sub: calls " . ($si ? $si->calls : 'no sub') . "/$calls{$sub}"
                  unless $si && $si->calls == $calls{$sub};
            }
            is_deeply(\@bad, [], "$name: NYTProf's per-line counts/times and per-sub calls equal the truth");
        } else {
            pass("$name: (no truth file for dialect D)");
        }
      SKIP: {
            skip 'nytprofhtml not in PATH', 1 unless $nytprofhtml;
            my $html = "$out.html";
            mkdir $html;
            my $log = `"$nytprofhtml/nytprofhtml" -f "$out" -o "$html" 2>&1`;
            ok($? == 0 && -f "$html/index.html", "$name: the real nytprofhtml renders it") or diag $log;
        }
    }
}

done_testing;
