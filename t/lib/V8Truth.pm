package V8Truth;
# Test helper: the ground truth of a V8 .cpuprofile, read from the JSON itself
# by a few lines independent of the C reader (JSON::PP):
#   use V8Truth qw(truth pkg_of);
#   my $t = truth($file);
#   $t->{total}                    µs of all samples
#   $t->{stacks}{"a;b;c"}          ns per stack of own names (root first)
#   $t->{self}[0]{name}, {cum}[0]  µs per own name: innermost / anywhere (once per sample)
#   $t->{self}[1]{sub}, {cum}[1]   the same per nytprof.out sub name (package::name)
# A sample lasts until the next (timeDeltas[i + 1] µs), the last to endTime;
# a stack is the sample's node and its ancestors, "(root)" left out; an empty
# functionName is "(anonymous)"; (program), (idle), (garbage collector) and
# functions without a url are in package main, others in pkg_of(url)
# (Formats.pod, "V8 .cpuprofile").
use strict;
use warnings;
use utf8;
use Exporter 'import';
use JSON::PP ();

our @EXPORT_OK = qw(truth pkg_of);

sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$fh> }

sub pkg_of {    # nytprof.out's package of a url (Formats.pod, V8)
    my ($url) = @_;
    return 'main' if $url eq '';
    if ($url =~ s/\Anode://) { $url =~ s/[^A-Za-z0-9\/]/_/g; $url =~ s{/}{::}g; return "node::$url" }
    $url =~ s{.*[/\\]}{};
    $url =~ s/\.[^.]*\z//;
    $url =~ s/[^A-Za-z0-9]/_/g;
    return length $url ? $url : 'main';
}
my %SYNTH = map { $_ => 1 } '(program)', '(idle)', '(garbage collector)';
sub truth {
    my ($file) = @_;
    my $p = JSON::PP->new->decode(slurp($file));
    my (%node, %parent);
    for my $n (@{ $p->{nodes} }) {
        $node{ $n->{id} } = $n;
        $parent{$_} = $n->{id} for @{ $n->{children} || [] };
    }
    my %stack;    # node id => [ [own name, nytprof name] ... ] root first
    for my $id (keys %node) {
        my @s;
        for (my $i = $id; defined $i; $i = $parent{$i}) {
            my $cf = $node{$i}{callFrame};
            next if $cf->{functionName} eq '(root)';
            my $name = length $cf->{functionName} ? $cf->{functionName} : '(anonymous)';
            my $synth = $SYNTH{$name} || $cf->{url} eq '';
            unshift @s, [ $name, ($synth ? 'main' : pkg_of($cf->{url})) . "::$name" ];
        }
        $stack{$id} = \@s;
    }
    my ($s, $dt) = ($p->{samples}, $p->{timeDeltas});
    my (%t, $ts);
    $ts = $p->{startTime};
    my @ts = map { $ts += $_ } @$dt;
    for my $i (0 .. $#$s) {
        my $w = $i < $#$s ? $dt->[ $i + 1 ] : $p->{endTime} - $ts[$i];
        next unless $w > 0;
        my $st = $stack{ $s->[$i] };
        $t{total} += $w;
        $t{stacks}{ join ';', map { $_->[0] } @$st } += $w * 1000;
        for my $k (0, 1) {
            $t{self}[$k]{ $st->[-1][$k] } += $w;
            my %seen;
            $t{cum}[$k]{$_} += $w for grep { !$seen{$_}++ } map { $_->[$k] } @$st;
        }
    }
    return \%t;
}

1;
