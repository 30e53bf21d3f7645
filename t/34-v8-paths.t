#!perl
# V8 .cpuprofile: the reader's two paths give the JSON's truth
# (t/lib/V8Truth.pm, independent of the C reader).  c/read_v8.c reads the
# samples and timeDeltas arrays with a strict integer reader (c/json_ints.c)
# and sums the weights per node for a consumer that only sums stacks
# (collapsed); a file that reader does not take goes through yajl from its
# first byte.  Each real profile of t/data/v8 is written here in forms that
# take each path: compact and indented JSON, the arrays before the nodes,
# odd white space (the fast path); an escaped "samples" key, node ids past
# 2^22, a delta past 2^40 µs (the general path).  Checked for each: the
# collapsed stacks and their ns, and the fold's TIME_LINE chunks, which must
# be one per sample that lasts (every sample reaches the fold, in order)
# adding up to the total.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Needs qw(yajl);
use Stacks qw(folded_weights);
use V8Truth qw(truth);
use File::Temp qw(tempdir);
use JSON::PP ();
use Devel::ProfileBridge ();

my $tmp = tempdir('pb34p-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @files = glob("$FindBin::Bin/data/v8/*.cpuprofile");
plan skip_all => 'no .cpuprofile files' unless @files;

sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$fh> }
sub spew { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print $fh $_[1]; close $fh or die }

my $json = JSON::PP->new->canonical;
# the top object with its keys in the order given
sub ordered {
    my ($p, @keys) = @_;
    return '{' . join(',', map { $json->encode($_) . ':' . $json->encode($p->{$_}) } @keys) . '}';
}

# samples that last (the weight of sample i is timeDeltas[i + 1], the last's to endTime)
sub lasting {
    my ($p) = @_;
    my ($s, $dt, $ts, $n) = ($p->{samples}, $p->{timeDeltas}, $p->{startTime}, 0);
    $ts += $_ for @$dt;
    for my $i (0 .. $#$s) {
        my $w = $i < $#$s ? $dt->[ $i + 1 ] : $p->{endTime} - $ts;
        $n++ if $w > 0;
    }
    return $n;
}

for my $f (@files) {
    (my $label = $f) =~ s{.*/}{};
    my $p = JSON::PP->new->decode(slurp($f));
    my @top = grep { exists $p->{$_} } qw(nodes startTime endTime samples timeDeltas);
    my %forms;
    $forms{compact} = ordered($p, @top);
    $forms{indented} = JSON::PP->new->canonical->pretty->encode($p);
    $forms{'arrays first'} = ordered($p, qw(timeDeltas samples), grep { !/\A(?:samples|timeDeltas)\z/ } @top);
    ($forms{'odd white space'} = $forms{compact}) =~ s/,/ ,\r\n\t/g;
    ($forms{'escaped key (yajl)'} = $forms{compact}) =~ s/"samples":/"sam\\u0070les":/;
    {
        my $q = $json->decode($forms{compact});
        my $o = 5_000_000;
        for my $n (@{ $q->{nodes} }) {
            $n->{id} += $o;
            $_ += $o for @{ $n->{children} || [] };
        }
        $_ += $o for @{ $q->{samples} };
        $forms{'ids past 2^22 (yajl)'} = ordered($q, @top);
        $q = $json->decode($forms{compact});
        $q->{timeDeltas}[1] = 2**41;    # collapsed only: the fold would split it past its limit
        $q->{endTime} += 2**41;
        $forms{'a delta past 2^40 (yajl)'} = ordered($q, @top);
    }
    for my $form (sort keys %forms) {
        my $in = "$tmp/in.cpuprofile";
        spew($in, $forms{$form});
        my $q = JSON::PP->new->decode($forms{$form}); # (which reads the escaped key as samples)
        my $t = truth($in);
        my $out = "$tmp/c.folded";
        unlink $out;
        Devel::ProfileBridge::convert(in => $in, out => $out, to => 'collapsed');
        is_deeply(folded_weights($out), $t->{stacks}, "$label, $form: collapsed stacks and their ns");
        next if $form =~ /past 2\^40/;
        my ($n, $ticks) = (0, 0);
        Devel::ProfileBridge::for_chunks(sub { $n++, $ticks += $_[1] if $_[0] eq 'TIME_LINE' },
            filename => $in, quiet => 1);
        is($n, lasting($q), "$label, $form: one TIME_LINE per sample that lasts");
        is($ticks, $t->{total} * 1000, "$label, $form: TIME_LINE ticks add up to the total");
    }
}

done_testing;
