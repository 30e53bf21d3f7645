#!perl
# issues 28 and 36: no format name outside c/formats.[ch] and
# c/read_<format>.*, no target name outside c/outputs.[ch] and
# c/write_<target>.* (tests and POD aside).  Reads every line, code, comment
# and message (POD and what follows __END__ stripped), of c/*.[ch], xs/*.xs,
# lib/**/*.pm, bin/profbridge and Makefile.PL; a name that is both a
# format and a target (pprof, statprofiler, speedscope) is allowed where either is.
# "folded", "collapsed", "dump" and "perf" are words of their own too: they count only as
# names (a quoted string, an identifier part, a file name, an alternation).
# `perl xt/names-in-tables.t` lists every line it finds; %EXCEPT says why a
# line may stay.
use strict;
use warnings;
use Test::More;
use FindBin;
use File::Find ();
plan skip_all => 'author test: set RELEASE_TESTING=1' unless $ENV{RELEASE_TESTING} || $ENV{AUTHOR_TESTING};
my $top = "$FindBin::Bin/..";
my @fmts = qw(tachyon easyprofiler statprofiler pynytprof v8 pprof folded speedscope pstats callgrind perf);
my @tgts = qw(collapsed pprof speedscope gecko statprofiler pstats callgrind dump);
my %weak = map { $_ => 1 } qw(folded collapsed dump perf);
# in every file: other programs that share a name with a format or a target
# (the phrase is taken out of the line before the names are looked for)
my @EXCEPT_ALL = (
    [ qr/speedscope app/, 'the speedscope app, a viewer of the timeline targets' ],
    [ qr/go tool pprof/, "Go's own tool" ],
    [ qr/callgrind_annotate/, "Valgrind's tool" ],
    [ qr/replay --collapsed/, "CPython's profiling.sampling replay option" ],
);
# file => [ line regex, reason ]
my %EXCEPT = (
    # the public names of the dump target: the CLI's command and the API's call
    'bin/profbridge' => [ [ qr/\bcmd_dump\b|\A(?:unless \$about|sub cmd_dump|Devel::ProfileBridge::dump_json|my \@COMMANDS = )|\A(?:return )?(?:get_options|help_page|input_args|usage_error)\('dump[' ]/,
        'the CLI command "profbridge dump" (dump_json)' ] ],
    'lib/Devel/ProfileBridge.pm' => [ [ qr/dump_json|\A_write\('dump'/, 'the public dump_json(): the dump target by name' ] ],
    # Devel::ProfileBridge::StatProfilerWriter is that writer's own public
    # API (Internals.pod, "THE TABLE OF TARGETS"), its XS and its errors
    'lib/Devel/ProfileBridge/StatProfilerWriter.pm' => [ [ qr/statprofiler-writer|c\/write_statprofiler\.c/, 'StatProfilerWriter API' ] ],
    'xs/ProfileBridge.xs' => [ [ qr/write_statprofiler\.h|statprofiler-writer|StatProfiler writer handles|as (?:Devel::)?StatProfiler(?: writes it)?\b/, 'StatProfilerWriter API' ] ],

);
# POD and what follows __END__ or __DATA__ become empty lines (the line numbers stay)
sub strip_pod {
    my ($s) = @_;
    my @out;
    my $pod = 0;
    my $end = 0;
    for my $l (split /\n/, $s, -1) {
        $end = 1 if $l =~ /^__(?:END|DATA)__/;
        $pod = $1 ne "cut" if $l =~ /^=(\w+)/;
        push @out, $end || $pod || $l =~ /^=cut/ ? "" : $l;
    }
    return join "\n", @out;
}
my @files = (glob("$top/c/*.[ch]"), glob("$top/xs/*.xs"), "$top/bin/profbridge", "$top/Makefile.PL");
File::Find::find(sub { push @files, $File::Find::name if -f && /\.pm\z/ }, "$top/lib");
my (@left, @excepted);
for my $f (sort @files) {
    (my $rel = $f) =~ s{^\Q$top\E/}{};
    open my $fh, '<', $f or die "$f: $!";
    my $src = do { local $/; <$fh> };
    my $code = $rel =~ /\.(?:[ch]|xs)\z/ ? $src : strip_pod($src);
    my @lines = split /\n/, $code, -1;
    my $base = $rel =~ m{^c/([^/.]+)\.} ? $1 : '';
    my %ok;
    $ok{$_} = 1 for grep { $base eq 'formats' || $base eq "read_$_" } @fmts;
    $ok{$_} = 1 for grep { $base eq 'outputs' || $base eq "write_$_" } @tgts;
    for my $i (0 .. $#lines) {
        my $l = $lines[$i];
        $l =~ s/$_->[0]/ /g for @EXCEPT_ALL;    # those names do not count
        my %hit;
        for my $nm (grep { !$ok{$_} } @fmts, @tgts) {
            my $re = $weak{$nm}
                ? qr/(?:["']$nm["']|\bqw\b[^)]*\b$nm\b|(?i:pb_fmt_$nm)|\b\w*_$nm\b|\b${nm}_\w+|\b$nm\.[ch]\b|--$nm\b|(?<=[(|:])$nm(?=[|)]))/
                : qr/(?<![A-Za-z0-9])$nm(?![A-Za-z0-9])/i;
            $hit{$nm} = 1 if $l =~ $re;
        }
        next unless %hit;
        (my $show = $l) =~ s/^\s+//;
        my $where = sprintf '%s:%d: [%s] %s', $rel, $i + 1, join(',', sort keys %hit), $show;
        my ($why) = map { $_->[1] } grep { $show =~ $_->[0] } @{ $EXCEPT{$rel} || [] };
        if (defined $why) { push @excepted, "$where\n    ($why)" } else { push @left, $where }
    }
}
is(scalar @left, 0, 'no format or target name outside its table and its files') or diag join "\n", @left;
note "allowed:\n", join "\n", @excepted if @excepted;
done_testing();
