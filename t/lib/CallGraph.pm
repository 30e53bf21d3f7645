package CallGraph;
# Test helper for the call-graph targets (pstats, callgrind): every profile
# under t/data, and our own numbers for a file, computed here from
# for_chunks (SUB_INFO, SUB_CALLERS, ATTRIBUTEs), not from our outputs:
#   use CallGraph qw(graph_corpus our_graph py_func run_of);
use strict;
use warnings;
use Exporter 'import';
use Encode ();
use File::Find ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

our @EXPORT_OK = qw(graph_corpus our_graph py_func run_of);

# every profile under $d (the crashers and limit bombs are bad input, not
# profiles), sorted
sub graph_corpus {
    my ($d) = @_;
    my @inputs;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return if -d $_ || m{/(?:crashers|limits)/} || /\.(?:json|jsonl|txt|py|pl|cpp|md|go|js|rs|c)\z/
            || m{/(?:README|COMMAND)\z};
        my $f = eval { Devel::ProfileBridge::detect_format($_) } or return;
        push @inputs, $_ if defined $f->{format} && $f->{supported};
    } }, $d);
    return sort @inputs;
}

# funcname of a Python sub as CPython names it: the sub's name after its
# module ("threading::Thread::run" in .../threading.py -> "Thread.run")
sub py_func {
    my ($name, $file) = @_;
    my $m;
    if ($file =~ /\A<frozen (?:.*\.)?([^.]*)>\z/) { $m = $1 }
    else {
        ($m = $file) =~ s/\.py\z//;
        $m =~ s{/__init__\z}{};
        $m =~ s{.*/}{};
    }
    return $name unless length $m && $name =~ /(?:\A|::)\Q$m\E::(.*)\z/s;
    (my $f = $1) =~ s/::/./g;
    return $f;
}

# run_of($in): for_chunks' options that read what convert reads of $in: a
# StatProfiler run's root process's first file is the whole run, forked
# children's files included (any other file is itself)
sub run_of {
    my ($in) = @_;
    return () unless $in =~ /\A(.*\.out)\.[0-9a-f]{8}00000002[0-9a-f]{32}\.00000001\z/;
    return (files => $1);    # the template: every process's files
}

# Our graph of $in (%opt: for_chunks' options, e.g. run_of($in)): { subs => { name => { file, line, nc, self_calls, tt, ct } },
# edges => { "callee\0caller" => { count, excl, incl, reci } },
# sites => { "caller\0callee\0fid\0line" => { count, incl } }, sampled,
# unit (seconds per count), unit_name, interval (CPython's tt per sample),
# python }
sub our_graph {
    my ($in, %opt) = @_;
    my (%attr, %fid, %subs, %edges, %sites);
    # names as Python reads them: bytes that are not UTF-8 as U+FFFD
    my $u = sub { utf8::is_utf8($_[0]) ? $_[0] : Encode::decode('UTF-8', $_[0]) };
    &Devel::ProfileBridge::ReadStream::for_chunks({
        ATTRIBUTE => sub { $attr{ $_[1] } //= $_[2] },
        NEW_FID => sub { $fid{ $_[1] } = $u->($_[7]) },
        SUB_INFO => sub {
            my (undef, $fid, $first, undef, $name) = @_;
            $name = $u->($name);
            $subs{$name}{info} //= [ $fid, $first ];
        },
        SUB_CALLERS => sub {
            my (undef, $fid, $line, $count, $incl, $excl, $reci, undef, $called, $caller) = @_;
            return if $caller eq '';
            ($called, $caller) = map { $u->($_) } $called, $caller;
            $subs{$_} //= {} for $called, $caller;
            my $e = $edges{"$called\0$caller"} //= { count => 0, excl => 0, incl => 0, reci => 0 };
            $e->{count} += $count;
            $e->{excl} += $excl;
            $e->{incl} += $incl;
            $e->{reci} += $reci;
            my $s = $sites{"$caller\0$called\0$fid\0$line"} //= { count => 0, incl => 0, line => $line };
            $s->{count} += $count;
            $s->{incl} += $incl;
        },
    }, ($opt{files} ? () : (filename => $in)), quiet => 1, %opt);
    my %g = (edges => \%edges, sites => \%sites);
    $g{sampled} = exists $attr{sampled_time_sec} ? 1 : 0;
    my $ns = ($attr{sample_weight_unit} // '') eq 'ns';
    $g{unit} = !$g{sampled} || $ns ? 1e-9 : $attr{sample_interval_us} ? $attr{sample_interval_us} * 1e-6
        : 1 / ($attr{ticks_per_sec} || 1e6);
    $g{unit_name} = $g{sampled} && !$ns ? 'samples' : 'ns';
    $g{interval} = $g{sampled} && !$ns && $attr{sample_interval_us} ? $attr{sample_interval_us} / 1e6 : $g{unit};
    my $fmt = $attr{source_format} // '';
    $g{python} = $fmt =~ /\A(?:tachyon|pynytprof)\z/ ? 1 : 0;    # the formats of Python programs
    $g{application} = $attr{application};
    for my $name (keys %subs) {
        my $s = $subs{$name};
        my ($fid, $line) = $s->{info} ? @{ $s->{info} } : (undef, 0);
        $s->{file} = defined $fid ? $fid{$fid} // '' : '';
        $s->{line} = $line;
        $s->{$_} = 0 for qw(nc self_calls tt ct);
    }
    for my $k (keys %edges) {
        my ($called, $caller) = split /\0/, $k;
        my ($e, $s) = ($edges{$k}, $subs{$called});
        $s->{nc} += $e->{count};
        $s->{self_calls} += $e->{count} if $called eq $caller;
        $s->{tt} += $e->{excl};
        $s->{ct} += $e->{incl};
    }
    $g{subs} = \%subs;
    return \%g;
}

1;
