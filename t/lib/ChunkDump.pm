package ChunkDump;
# Test helper: the chunk stream of a nytprof.out file as JSON Lines, with
# exactly the conventions of ../shared/tools/nytprof-dump-chunks (which made
# the t/data/<format>/*.chunks.jsonl ground truth), so a dump compares line
# for line with those files.
#
#   use ChunkDump qw(have_nytprof dump_chunks format_chunk first_difference);
#   my $lines = dump_chunks($file);                    # the REAL Devel::NYTProf reader
#   my $lines = dump_chunks($file, reader => 'Devel::ProfileBridge::ReadStream',
#                           format => 'tachyon');       # any for_chunks (extra args passed on)
#   my $line  = format_chunk($tag, @args);             # one line, "\n" included
#
# Conventions (see nytprof-dump-chunks): integers ('u', 'i') as JSON integers;
# NVs in the shortest %.15g/%.16g/%.17g form that round-trips, "Inf"/"-Inf"/"NaN"
# as strings; strings as the Perl characters, ASCII-only JSON with \uXXXX.
use strict;
use warnings;
use Exporter 'import';
use JSON::PP ();

our @EXPORT_OK = qw(have_nytprof dump_chunks format_chunk read_lines first_difference %SIG_OF);

# callback argument signatures, NYTProf 6.12 callback_info[]
our %SIG_OF = (
    VERSION       => 'uu',
    ATTRIBUTE     => 'ss',
    OPTION        => 'ss',
    COMMENT       => 's',
    TIME_BLOCK    => 'iuuuu',
    TIME_LINE     => 'iuu',
    DISCOUNT      => '',
    NEW_FID       => 'uuuuuus',
    SRC_LINE      => 'uus',
    SUB_INFO      => 'uuus',
    SUB_CALLERS   => 'uuunnnuss',
    PID_START     => 'uun',
    PID_END       => 'un',
    START_DEFLATE => '',
    SUB_ENTRY     => 'uu',
    SUB_RETURN    => 'unns',
);

my $json_str = JSON::PP->new->allow_nonref->ascii;

sub have_nytprof {
    return eval { require Devel::NYTProf::ReadStream; 1 } ? 1 : 0;
}

sub _fmt_float {
    my $v = shift;
    return '"NaN"' if $v != $v;
    return $v > 0 ? '"Inf"' : '"-Inf"' if $v * 0 != $v * 0;
    for my $p (15, 16, 17) {
        my $s = sprintf "%.${p}g", $v;
        return $s if $s + 0 == $v;
    }
    return sprintf "%.17g", $v;
}

sub _fmt_int {
    my $v = shift;
    return 'null' unless defined $v;
    return "$v" if $v =~ /\A-?[0-9]+\z/;
    return _fmt_float($v);
}

sub _fmt_guess {    # tags not in %SIG_OF (future versions)
    my $v = shift;
    return 'null' unless defined $v;
    require B;
    my $f = B::svref_2object(\$v)->FLAGS;
    if (!($f & B::SVp_POK()) && ($f & (B::SVp_IOK() | B::SVp_NOK()))) {
        return ($f & B::SVp_NOK()) && !($f & B::SVp_IOK()) ? _fmt_float($v) : _fmt_int($v);
    }
    return $json_str->encode("$v");
}

sub format_chunk {
    my $tag = shift;
    my $sig = $SIG_OF{$tag};
    my @parts = ($json_str->encode("$tag"));
    my $i = 0;
    for my $arg (@_) {
        my $t = defined $sig ? substr($sig, $i, 1) : '';
        $i++;
        if    (!defined $arg)            { push @parts, 'null' }
        elsif ($t eq 'u' || $t eq 'i')   { push @parts, _fmt_int($arg) }
        elsif ($t eq 'n')                { push @parts, _fmt_float($arg) }
        elsif ($t eq 's')                { push @parts, $json_str->encode("$arg") }
        else                             { push @parts, _fmt_guess($arg) }
    }
    return '[' . join(',', @parts) . "]\n";
}

# Array ref of lines ("\n" included).  Dies if the reader dies.
sub dump_chunks {
    my ($file, %opt) = @_;
    my $reader = delete $opt{reader} || 'Devel::NYTProf::ReadStream';
    die "bad module name: $reader\n" unless $reader =~ /\A\w+(?:::\w+)*\z/;
    eval "require $reader; 1" or die "can't load $reader: $@";
    my $for_chunks = $reader->can('for_chunks') or die "$reader has no for_chunks\n";
    my @lines;
    # &name(...) bypasses the (&%) prototype
    &$for_chunks(sub { push @lines, format_chunk(@_) }, filename => $file, quiet => 1, %opt);
    return \@lines;
}

sub read_lines {
    my ($file) = @_;
    open my $fh, '<:raw', $file or die "can't read $file: $!";
    my @l = <$fh>;
    return \@l;
}

# undef when equal, else "line N: got ... expected ..." (1-based line numbers)
sub first_difference {
    my ($got, $want) = @_;
    my $n = @$got < @$want ? @$got : @$want;
    for my $i (0 .. $n - 1) {
        next if $got->[$i] eq $want->[$i];
        chomp(my $g = $got->[$i]);
        chomp(my $w = $want->[$i]);
        return sprintf "line %d: got %s, expected %s", $i + 1, substr($g, 0, 200), substr($w, 0, 200);
    }
    return undef if @$got == @$want;
    return sprintf "%d lines, expected %d", scalar @$got, scalar @$want;
}

1;
