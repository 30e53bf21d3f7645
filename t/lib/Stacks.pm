package Stacks;
# Test helper for the stack outputs (collapsed, pprof, speedscope, diff,
# merge): the corpus files that have stacks, conversions that must not warn
# the test's output, collapsed files read back as { stack => weight }, and
# the first keys on which two such tables differ.
#   use Stacks qw(slurp stack_corpus convert_quietly convert_ok weight_unit_ns folded_weights
#                 first_differences go_for_pprof nytprof_tools statprofiler_run
#                 page_text refused_texts speedscope_schema_check);
use strict;
use warnings;
use Exporter 'import';
use Encode ();
use Test::More ();
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream ();

our @EXPORT_OK =
    qw(slurp stack_corpus convert_quietly convert_ok weight_unit_ns folded_weights first_differences go_for_pprof
    nytprof_tools statprofiler_run page_text refused_texts speedscope_schema_check nytprofhtml_ok);

sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$fh> }

# speedscope files against the speedscope package's JSON schema, read by
# python3's jsonschema ($py): (exit status, what it printed per bad file)
sub speedscope_schema_check {
    my ($py, $schema, $tmp, @files) = @_;
    open my $fh, '>', "$tmp/validate.py" or die "$tmp/validate.py: $!";
    print {$fh} <<'PY';
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
bad = 0
for f in sys.argv[2:]:
    try:
        jsonschema.validate(json.load(open(f)), schema)
    except Exception as e:
        bad += 1
        print(f, str(e).splitlines()[0])
sys.exit(1 if bad else 0)
PY
    close $fh or die "$tmp/validate.py: $!";
    my $out = `$py "$tmp/validate.py" "$schema" @files 2>&1`;
    return ($?, $out);
}

# The real nytprofhtml renders $nyt into $dir (run from $dir's parent): it
# exits 0 and writes nothing on stderr but its progress lines (two tests,
# named after $label)
sub nytprofhtml_ok {
    my ($html, $nyt, $dir, $label) = @_;
    (my $cwd = $dir) =~ s{/[^/]*\z}{};
    system("rm -rf '$dir'; cd '$cwd' && '$html' -f '$nyt' -o '$dir' > '$dir.out' 2> '$dir.err'");
    Test::More::is($? >> 8, 0, "$label: nytprofhtml exits 0");
    my @err = grep { !/\A(?:Extracting subroutine (?:call data|links)|Generating subroutine stack flame graph)\b/
            && !/\ADeep recursion on subroutine "/ } split /\n/, slurp("$dir.err");
    Test::More::is_deeply(\@err, [], "$label: nothing on nytprofhtml's stderr but its progress lines");
}

# Bad inputs refused, each with its message ("<format>: <class>: <what> at
# byte N of F").  Each case: [text, qr/message/, %opt]; in %opt, name => a
# word for the file's name and the tests' (default: the text's start),
# chunks => 1: refused by a conversion to nytprof.out too; the rest are
# convert()'s options.  $format: convert()'s format (undef: detected, as a
# user's file is).
sub refused_texts {
    my ($format, $tmp, @bad) = @_;
    for my $b (@bad) {
        my ($text, $re, %opt) = @$b;
        my ($name, $chunks) = (delete $opt{name}, delete $opt{chunks});
        my $f = "$tmp/" . ($name // 'bad') . '.' . ($format // 'profile');
        my $what = $name // substr($text =~ s/\n/\\n/gr =~ s/\x01/\\x01/gr, 0, 40);
        open my $fh, '>:raw', $f or die "$f: $!";
        print $fh $text;
        close $fh or die "$f: $!";
        my $try = sub {
            local $SIG{__WARN__} = sub { };
            eval { Devel::ProfileBridge::convert(in => $f, @_, defined $format ? (format => $format) : (), %opt); 1 };
        };
        Test::More::ok(!$try->(out => "$tmp/bad.out", to => 'collapsed'), "bad input refused: $what");
        Test::More::like($@, $re, "... $what: its message");
        Test::More::ok(!$try->(out => "$tmp/bad.nytprof"), "... $what: refused by the chunk path too") if $chunks;
    }
}

# every corpus file under $d with stacks: Tachyon, EasyProfiler, StatProfiler,
# V8 (when this build reads it)
sub stack_corpus {
    my ($d) = @_;
    return (glob("$d/tachyon/*.bin"), glob("$d/tachyon/v315/*.bin"), glob("$d/easyprofiler/*.prof"),
        grep({ !/\.(?:json|jsonl)\z/ } glob("$d/statprofiler/*.out.*[0-9a-f]")),
        (Devel::ProfileBridge::features()->{read}{v8} ? glob("$d/v8/*.cpuprofile") : ()));
}

# convert $in once per { out => ..., to => ... } given, warnings silenced:
# 1, or undef with the error in $@
sub convert_quietly {
    my ($in, @targets) = @_;
    return eval {
        local $SIG{__WARN__} = sub { };
        Devel::ProfileBridge::convert(in => $in, %$_) for @targets;
        1;
    };
}

# one test: corpus file $in (under $d) converted, with the outputs removed
# first, to each target and to collapsed at $folded (the test is named
# "<label>: $what", $@ shown when it fails); returns the label, $in's path
# under $d
sub convert_ok {
    my ($d, $in, $what, $folded, @targets) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    unlink((map { $_->{out} } @targets), $folded);
    Test::More::ok(convert_quietly($in, @targets, { out => $folded, to => 'collapsed' }), "$label: $what")
        or Test::More::diag($@);
    return $label;
}

# ns per unit of a sample's weight in $in (its sample interval; 1 when the weights are ns)
sub weight_unit_ns {
    my ($in) = @_;
    my %a;
    &Devel::ProfileBridge::ReadStream::for_chunks({ ATTRIBUTE => sub { $a{ $_[1] } //= $_[2] } }, filename => $in);
    return defined $a{sample_interval_us} ? $a{sample_interval_us} * 1000 : 1;
}

# a collapsed file as { stack => weight }: threads merged ("tid:<t>;" dropped),
# or with thread => 1 kept as "<t>;stack"; unit => N multiplies the weights;
# utf8 => 1 decodes the file first
sub folded_weights {
    my ($file, %o) = @_;
    my $text = slurp($file);
    $text = Encode::decode('UTF-8', $text) if $o{utf8};
    my %w;
    for (split /\n/, $text) {
        my ($t, $s, $n) = /\Atid:([^;]*);(.*) (\d+)\z/ or next;
        $w{ $o{thread} ? "$t;$s" : $s } += $n * ($o{unit} // 1);
    }
    return \%w;
}

# the go command (for go tool pprof), '' when there is none; HOME and
# GOCACHE, when unset, point into $tmp (go needs both)
sub go_for_pprof {
    my ($tmp) = @_;
    my $go = `which go 2>/dev/null`;
    chomp $go;
    $ENV{HOME} //= $tmp;
    $ENV{GOCACHE} //= "$tmp/gocache";
    return $go;
}

# the REAL nytprofhtml and nytprofcalls: (html, calls) paths; skips the
# test file when Devel::NYTProf or either command is missing
sub nytprof_tools {
    eval { require Devel::NYTProf::Data; 1 } or Test::More::plan(skip_all => 'Devel::NYTProf is not installed');
    my ($html, $calls) = map { my $p = `which $_ 2>/dev/null`; chomp $p; $p } qw(nytprofhtml nytprofcalls);
    Test::More::plan(skip_all => 'nytprofhtml / nytprofcalls not found') unless $html && $calls;
    return ($html, $calls);
}

# the StatProfiler traces whose samples stand for the corpus file $in
# (truth: its decoded truth.json): a root's first file stands for its whole
# run, any other file for itself
sub statprofiler_run {
    my ($in, $truth) = @_;
    (my $name = $in) =~ s/\.[0-9a-f]{48}\.[0-9a-f]{8}\z//;
    return ($in) unless $truth->{genealogy}{parent_id} =~ /\A0+\z/ && $truth->{genealogy}{ordinal} == 1;
    return grep { !/\.(?:json|jsonl)\z/ } glob("$name.*[0-9a-f]");
}

# the text a browser shows of the HTML page $file: scripts and tags dropped,
# entities decoded; $cells: text hidden by display:none dropped too, and
# table cells and blocks kept apart by a space
sub page_text {
    my ($file, $cells) = @_;
    my $t = slurp($file);
    $t =~ s/<script\b.*?<\/script>//gis;
    if ($cells) {
        $t =~ s/<span style="display: none;">[^<]*<\/span>//g;
        $t =~ s/<\/?(?:td|th|tr|table|div|p|br|li|h\d)\b[^>]*>/ /gi;
    }
    $t =~ s/<[^>]*>//g;
    my %ent = (lt => '<', gt => '>', amp => '&', quot => '"', nbsp => ' ');
    $t =~ s/&(\w+);/$ent{$1} \/\/ "&$1;"/ge;
    $t =~ s/&#(\d+);/chr $1/ge;
    return $t;
}

# the first $n keys (sorted) whose values differ between two tables
sub first_differences {
    my ($x, $y, $n) = @_;
    my @diff = grep { ($x->{$_} // -1) != ($y->{$_} // -1) } sort(keys %{ { %$x, %$y } });
    return @diff[0 .. ($#diff < $n - 1 ? $#diff : $n - 1)];
}

1;
