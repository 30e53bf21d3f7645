#!perl
# callgrind input (issue 37), against the REAL reader, callgrind_annotate:
# every file of t/data/callgrind (valgrind --tool=callgrind of C and C++
# programs: recursion, -O2 inlining with --dump-instr=yes, --cache-sim=yes's
# nine events, --separate-threads=yes; go tool pprof -callgrind; nytprofcg)
# is read by for_chunks once per event (sample_type => EVENT), and per
# function its self cost (SUB_CALLERS exclusive, summed) and inclusive cost
# (SUB_CALLERS inclusive, summed), the sum of all self costs and the
# program total (ATTRIBUTE graph_total) equal callgrind_annotate
# --inclusive=no / --inclusive=yes, saved beside the file (and, where
# callgrind_annotate is installed, run here and now for one file).
# Functions are compared by name (callgrind_annotate splits one function
# into rows per fi= file; those are summed): self cost for every name,
# inclusive cost for the names of one row.  Also: info lists the events and
# says the unit; an unknown event is a usage error; a stack target refuses
# the file; nytprofhtml renders it without warnings.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Temp qw(tempdir);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();
use lib "$FindBin::Bin/lib";
use CallGraph qw(parse_annotate sub_of);
use Stacks qw(nytprofhtml_ok);

my $d = "$FindBin::Bin/data/callgrind";
my @files = grep { -f "$_.annotate-excl.txt" } sort glob("$d/*.callgrind*");
plan skip_all => "no callgrind files in $d" unless @files;
my $tmp = tempdir('pb44-XXXXXX', TMPDIR => 1, CLEANUP => 1);

for my $file (@files) {
    (my $base = $file) =~ s{.*/}{};
    my $ex = do { local (@ARGV, $/) = "$file.annotate-excl.txt"; <> };
    my $in = do { local (@ARGV, $/) = "$file.annotate-incl.txt"; <> };
    my ($ev, $total, $self_rows) = parse_annotate($ex);
    my (undef, undef, $incl_rows) = parse_annotate($in);
    ok $ev && @$ev, "$base: callgrind_annotate's events: @{ $ev || [] }";
    for my $i (0 .. $#$ev) {
        my $e = $ev->[$i];
        my (%self, %incl, %attr, $sum);
        Devel::ProfileBridge::ReadStream::for_chunks(sub {
            my ($tag, @a) = @_;
            if ($tag eq 'ATTRIBUTE') { $attr{ $a[0] } = $a[1] }
            elsif ($tag eq 'SUB_CALLERS') {
                $self{ $a[7] } += $a[4];
                $incl{ $a[7] } += $a[3] + $a[5];
            }
        }, filename => $file, quiet => 1, sample_type => $e);
        is $attr{graph_event}, $e, "$base $e: ATTRIBUTE graph_event";
        # (a file without summary: or totals:, nytprofcg's: callgrind_annotate adds up the self costs)
        is $attr{graph_total}, $total->{$e}, "$base $e: the program total equals callgrind_annotate's ($total->{$e})"
            if defined $attr{graph_total};
        my ($want_sum, $got_sum, $bad, $n, $nin) = (0, 0, 0, 0, 0);
        my %want;
        for my $fn (keys %$self_rows) {
            $want{ sub_of($fn) } += $_->[$i] for @{ $self_rows->{$fn} };
        }
        $want_sum += $_ for values %want;
        $got_sum += sprintf('%.0f', $_ * 1e9) for values %self;
        for my $s (sort keys %want) {
            $n++;
            my $got = sprintf '%.0f', ($self{$s} // 0) * 1e9;
            next if $got == $want{$s};
            diag "$base $e: $s: self $got, callgrind_annotate $want{$s}" if $bad++ < 5;
        }
        for my $fn (sort keys %$incl_rows) {
            next if @{ $incl_rows->{$fn} } != 1 || @{ $self_rows->{$fn} || [] } > 1;
            my $s = sub_of($fn);
            my $w = $incl_rows->{$fn}[0][$i];
            my $got = sprintf '%.0f', ($incl{$s} // 0) * 1e9;
            $nin++;
            next if $got == $w;
            diag "$base $e: $s: inclusive $got, callgrind_annotate $w" if $bad++ < 5;
        }
        is $got_sum, $want_sum, "$base $e: the self costs add up to callgrind_annotate's ($want_sum)";
        is $bad, 0, "$base $e: self cost of $n functions and inclusive cost of $nin equal callgrind_annotate's";
    }
}

# the round trip through nytprofcg: what we read of its output is what
# Devel::NYTProf holds of the profile it came from (per sub: the calls, and
# its exclusive time as nytprofcg writes it, int(s x 1e6) Ticks)
SKIP: {
    eval { require Devel::NYTProf::Data; 1 } or skip 'Devel::NYTProf is not installed', 2;
    my $orig = "$FindBin::Bin/data/nytprof/recursion.nytprof.out";
    my $p = do { local $SIG{__WARN__} = sub { }; Devel::NYTProf::Data->new({ filename => $orig, quiet => 1 }) };
    my (%self, %calls);
    Devel::ProfileBridge::ReadStream::for_chunks(sub {
        my ($tag, @a) = @_;
        return unless $tag eq 'SUB_CALLERS';
        $self{ $a[7] } += $a[4];
        $calls{ $a[7] } += $a[2];
    }, filename => "$d/nytprofcg-recursion.callgrind", quiet => 1);
    my ($bad, $n) = (0, 0);
    for my $si (values %{ $p->subname_subinfo_map }) {
        my $name = $si->subname;
        next unless $si->calls;
        $n++;
        my $want = int($si->excl_time * 1_000_000);
        my $got = sprintf '%.0f', ($self{$name} // 0) * 1e9;
        my $c = $calls{$name} // 0;
        next if $got == $want && $c == $si->calls;
        diag "nytprofcg round trip: $name: self $got calls $c; NYTProf: $want, " . $si->calls . ' calls' if $bad++ < 5;
    }
    ok $n > 5, "nytprofcg round trip: $n subs";
    is $bad, 0, 'nytprofcg round trip: every sub\'s calls and exclusive time equal NYTProf\'s own';
}

# callgrind_annotate here and now
SKIP: {
    my $ca = `which callgrind_annotate 2>/dev/null`;
    chomp $ca;
    skip 'callgrind_annotate not found', 1 unless $ca;
    my $f = "$d/rec-O0.callgrind";
    my $now = `cd / && '$ca' --inclusive=no --threshold=100 --auto=no '$f' 2>&1`;
    my $saved = do { local (@ARGV, $/) = "$f.annotate-excl.txt"; <> };
    s/^Profile data file .*\n//m for $now, $saved;
    is $now, $saved, 'callgrind_annotate prints today what is saved for rec-O0.callgrind';
}

{
    my $f = "$d/rec-cache.callgrind";
    my ($info) = Devel::ProfileBridge::info($f);
    is $info->{format}, 'callgrind', 'detected by content';
    is $info->{call_graph}, 'exact', 'info: a call graph';
    is $info->{graph_events}, 'Ir,Dr,Dw,I1mr,D1mr,D1mw,ILmr,DLmr,DLmw', 'info: the events';
    is $info->{graph_cost_unit}, 'Ir', 'info: the unit is the event read (the first): not time';
    my ($i2) = Devel::ProfileBridge::info($f, sample_type => 'D1mr');
    is $i2->{graph_cost_unit}, 'D1mr', 'sample_type picks another event';
    ok !eval { Devel::ProfileBridge::info($f, sample_type => 'nope'); 1 }, 'an unknown event fails';
    like "$@", qr/callgrind: usage: no event nope in this file \(its events: Ir, Dr/, '... naming the events';
    my $out = "$tmp/out.collapsed";
    my $err = `$^X -I$FindBin::Bin/../blib/lib -I$FindBin::Bin/../blib/arch $FindBin::Bin/../bin/profbridge convert --to collapsed -o $out $f 2>&1`;
    is $? >> 8, 2, '--to collapsed: exit 2';
    like $err, qr/callgrind files are a call graph, not stacks/, '... a call graph is not stacks';
    ok !-e $out, '... nothing written';
    my $cli = `$^X -I$FindBin::Bin/../blib/lib -I$FindBin::Bin/../blib/arch $FindBin::Bin/../bin/profbridge info $f 2>&1`;
    like $cli, qr/^cost: +\d+ Ir \(the event read: not time/m, 'profbridge info says the unit';
}

SKIP: {
    my $html = `which nytprofhtml 2>/dev/null`;
    chomp $html;
    skip 'nytprofhtml not found', 3 unless $html;
    my $f = "$d/tmpl-threads.callgrind-02";
    my $out = "$tmp/t.nytprof";
    my @w;
    {
        local $SIG{__WARN__} = sub { push @w, @_ };
        Devel::ProfileBridge::convert(in => $f, out => $out);
    }
    note "convert: @w" if @w;
    nytprofhtml_ok($html, $out, "$tmp/html", 'tmpl-threads.callgrind-02');
    my $page = do { local (@ARGV, $/) = "$tmp/html/index.html"; <> } // '';
    like $page, qr/busy/, 'index.html lists the program\'s functions';
}

done_testing;
