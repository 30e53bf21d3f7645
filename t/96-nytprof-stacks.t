#!perl
# Perl profiles as stacks (c/chunk_stacks.c): for every NYTProf file of the
# corpus, our collapsed output is what the REAL nytprofcalls prints (its
# stacks from the SUB_RETURN call events, in ticks; ours in ns).  Pynytprof
# files, which have no call events, give one-frame stacks of each sub's
# exclusive time.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Stacks qw(slurp first_differences);
use File::Temp qw(tempdir);
use Encode ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

my $d = "$FindBin::Bin/data";
my $tmp = tempdir('pb96-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $calls = `which nytprofcalls 2>/dev/null`;
chomp $calls;

for my $in (grep { !/\.jsonl\z/ } glob "$d/nytprof/*.nytprof.out") {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    my $f = "$tmp/n.folded";
    ok(eval { Devel::ProfileBridge::convert(in => $in, out => $f, to => 'collapsed'); 1 }, "$label: collapsed")
        or diag $@;
    my %a;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } = $_[2] },
        OPTION => sub { $a{"option_$_[1]"} = $_[2] } }, filename => $in);
    my $ns_per_tick = 1e9 / $a{ticks_per_sec};
    my %ours;
    for (split /\n/, Encode::decode('UTF-8', slurp($f))) {
        my ($s, $n) = /\Atid:[^;]*;(.*) (\d+)\z/ or next;
        # nytprofcalls numbers sibling string evals 0 (its own normalisation)
        $s =~ s/\( (\w*eval)\s\d+ \) (?= \[ .+? :\d+ \] )/($1 0)/gx;
        $ours{$s} += $n;
    }
    SKIP: {
        skip 'nytprofcalls not found', 1 unless $calls;
        my %theirs;
        for (`"$calls" "$in" 2>/dev/null`) {
            chomp;
            my ($s, $n) = /\A(.*) (\d+)\z/ or next;
            next unless $n;
            # NYTProf stores names as bytes: UTF-8, or Latin-1 when every character fits
            my $t = eval { Encode::decode('UTF-8', $s, Encode::FB_CROAK) } // Encode::decode('latin1', $s);
            $theirs{$t} += $n * $ns_per_tick;
        }
        if (!%theirs) {
            ok(!$a{option_calls}, "$label: no call events (calls=0): nytprofcalls prints nothing, ours is flat");
            next;
        }
        is_deeply([ first_differences(\%ours, \%theirs, 4) ], [],
            "$label: our collapsed stacks are nytprofcalls' (" . scalar(keys %theirs) . ' stacks, ns)');
    }
}

# Pynytprof: no call events, one-frame stacks of exclusive time
{
    my $in = "$d/pynytprof/tlv/B_ascii_FSDCE_670fbc8/recursion.nytprof.out";
    my $f = "$tmp/p.folded";
    Devel::ProfileBridge::convert(in => $in, out => $f, to => 'collapsed');
    my %excl;
    &Devel::ProfileBridge::ReadStream::for_chunks({ SUB_CALLERS => sub { $excl{ $_[8] } += $_[5] } }, filename => $in);
    my %ours = map { /\Atid:[^;]*;(.*) (\d+)\z/ ? ($1 => $2) : () } split /\n/, slurp($f);
    my %want = map { ($_ => sprintf('%.0f', $excl{$_} * 1e9)) } grep { $excl{$_} > 0 } keys %excl;
    is_deeply(\%ours, \%want, 'Pynytprof: one stack per sub, its exclusive time in ns');
}

done_testing;
