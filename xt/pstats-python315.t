#!perl
# --to pstats in CPython 3.15: every profile of t/data converted and loaded
# by a real CPython 3.15's pstats.Stats (the developers' Debian sid chroot,
# ../shared/tools/make-real-python315), every function, caller and total
# equal to ours (as t/41 checks with Debian's python3); and, for the real
# 3.15 Tachyon files, per function equal to CPython's own `replay --pstats
# -o` of the same .bin, with the differences Devel::ProfileBridge's POD
# names ("CALL-GRAPH TARGETS"): CPython keys a function once per executing
# line, so its direct samples (cc, tt) are summed over those keys and its
# cumulative samples (nc, ct) lie between the largest key's and their sum;
# our outermost frames' caller main::RUNTIME is ours only.  Needs root (the
# chroot) and a made chroot (PB_PY315_ROOT, default $TMPDIR/py315-sid);
# skips otherwise.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use CallGraph qw(graph_corpus our_graph run_of pstats_load check_pstats py_func);
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use List::Util qw(max sum0);
use Devel::ProfileBridge ();

plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
my $tool = "$FindBin::Bin/../../shared/tools/make-real-python315";
plan skip_all => 'the real CPython 3.15 is made by ../shared/tools (not in a tarball)' unless -x $tool;
plan skip_all => 'the 3.15 chroot needs root' if $>;
my $root = $ENV{PB_PY315_ROOT} // ($ENV{TMPDIR} // '/tmp') . '/py315-sid';
plan skip_all => "no CPython 3.15 chroot at $root (make it: make-real-python315 --root $root)"
    unless -x "$root/usr/bin/python3.15";
plan skip_all => 'this build lacks zstd or snappy'
    unless Devel::ProfileBridge::features()->{read}{'tachyon-zstd'} && Devel::ProfileBridge::features()->{read}{statprofiler};

my $d = "$FindBin::Bin/../t/data";
my $tmp = tempdir('pbx315-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $inside = "/srv/pb-xt-$$";    # where the chroot sees our files
mkdir "$root$inside" or die "$root$inside: $!";
END { system('rm', '-rf', "$root$inside") if defined $root && defined $inside && -d "$root$inside" }
my @py = ('chroot', $root, 'python3.15');

# ---- every t/data profile, loaded by 3.15's pstats ---------------------------
my (%graph, @outs, %seen);
for my $in (graph_corpus($d)) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $g = our_graph($in, run_of($in));
    next unless %{ $g->{subs} };    # t/41: refused
    my $name = ($label =~ s{/}{_}gr) . '.prof';
    my $ok = eval {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $in, to => 'pstats', out => "$root$inside/$name");
        1;
    };
    ok($ok, "$label: converted") or diag($@);
    next unless $ok;
    $graph{"$root$inside/$name"} = [ $label, $g ];
    push @outs, "$root$inside/$name";
    $seen{"$root$inside/$name"} = "$inside/$name";
}
my ($rc, $loaded) = pstats_load(\@py, @outs, \%seen);
is($rc, 0, 'python3.15 loaded every file');
check_pstats("3.15 $graph{$_}[0]", $graph{$_}[1], $loaded->{$_}) for @outs;

# ---- the real 3.15 Tachyon files against CPython's own replay --pstats -o ----------
for my $bin (sort glob("$d/tachyon/real315/*.bin")) {
    (my $label = $bin) =~ s{.*/}{};
    my $g = our_graph($bin);
    next unless %{ $g->{subs} };
    my $theirs = "$tmp/$label.cpython.prof";
    system("'$tool' --root '$root' -- replay --pstats -o '$theirs' '$bin' >/dev/null 2>&1");
    ok(-s $theirs, "$label: CPython's replay --pstats -o wrote its file") or next;
    copy($theirs, "$root$inside/theirs.prof") or die $!;
    my $ours = "$root$inside/ours.prof";
    Devel::ProfileBridge::convert(in => $bin, to => 'pstats', out => $ours);
    my ($rc2, $l) = pstats_load(\@py, "$root$inside/theirs.prof", $ours,
        { "$root$inside/theirs.prof" => "$inside/theirs.prof", $ours => "$inside/ours.prof" });
    is($rc2, 0, "$label: both loaded");
    # CPython's keys per function (file, funcname): direct samples add up,
    # cumulative ones lie between the largest key's and the sum
    my %cp;
    for my $k (keys %{ $l->{"$root$inside/theirs.prof"}{f} }) {
        my ($file, $line, $fn) = split /\0/, $k;
        push @{ $cp{"$file\0$fn"} }, $l->{"$root$inside/theirs.prof"}{f}{$k}{n};
    }
    my (@bad, $n);
    for my $k (sort keys %{ $l->{$ours}{f} }) {
        my ($file, $line, $fn) = split /\0/, $k;
        my $o = $l->{$ours}{f}{$k}{n};
        my $c = $cp{"$file\0$fn"};
        if (!$c) {
            push @bad, "$fn: ours only" unless $fn eq 'main::RUNTIME' && $o->[0] == 0 && $o->[1] == 0;
            next;
        }
        $n++;
        my $cc = sum0(map { $_->[0] } @$c);
        my ($ncmax, $ncsum) = (max(map { $_->[1] } @$c), sum0(map { $_->[1] } @$c));
        push @bad, "$fn: direct $o->[0] want $cc" unless $o->[0] == $cc;
        push @bad, "$fn: cumulative $o->[1] not in [$ncmax, $ncsum]" unless $o->[1] >= $ncmax && $o->[1] <= $ncsum;
        push @bad, "$fn: tottime $o->[2] want " . sum0(map { $_->[2] } @$c)
            unless abs($o->[2] - sum0(map { $_->[2] } @$c)) < 1e-9;
        delete $cp{"$file\0$fn"};
    }
    push @bad, map { s/\0/:/r . ': theirs only' } sort keys %cp;
    is(join("\n", @bad), '', "$label: $n functions as CPython's replay --pstats");
}

done_testing;
