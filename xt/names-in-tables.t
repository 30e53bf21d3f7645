#!perl
# issue 28: no format name outside c/formats.[ch] and c/read_<format>.*, no
# target name outside c/outputs.[ch] and c/write_<target>.* (tests and POD
# aside).  Reads the code lines (C and Perl comments and POD stripped) of
# c/*.[ch], xs/*.xs, lib/**/*.pm and bin/profbridge; a name that is both a
# format and a target (pprof, statprofiler, speedscope) is allowed where either is.
# "folded", "collapsed" and "dump" are English words too: they count only as
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
my @fmts = qw(tachyon easyprofiler statprofiler pynytprof v8 pprof folded speedscope pstats callgrind);
my @tgts = qw(collapsed pprof speedscope gecko statprofiler pstats callgrind dump);
my %weak = map { $_ => 1 } qw(folded collapsed dump);
# file => [ line regex, reason ]
my %EXCEPT = (
    # the public names of the dump target: the CLI's command and the API's call
    'bin/profbridge' => [ [ qr/\bcmd_dump\b|\A(?:unless \$about|sub cmd_dump|Devel::ProfileBridge::dump_json|my \@COMMANDS = )|\A(?:return )?(?:get_options|help_page|input_args|usage_error)\('dump[' ]/,
        'the CLI command "profbridge dump" (dump_json)' ] ],
    'lib/Devel/ProfileBridge.pm' => [ [ qr/dump_json|\A_write\('dump'/, 'the public dump_json(): the dump target by name' ] ],
    # Devel::ProfileBridge::StatProfilerWriter is that writer's own public
    # API (Internals.pod, "THE TABLE OF TARGETS"), its XS and its errors
    'lib/Devel/ProfileBridge/StatProfilerWriter.pm' => [ [ qr/statprofiler-writer/, 'StatProfilerWriter API' ] ],
    'xs/ProfileBridge.xs' => [ [ qr/write_statprofiler\.h|statprofiler-writer/, 'StatProfilerWriter API' ] ],
);
sub strip_c {
    my ($s) = @_;
    $s =~ s{ ("(?:[^"\\\n]|\\.)*") | ('(?:[^'\\\n]|\\.)*') | (/\*.*?\*/) | (//[^\n]*) }
           { defined $1 ? $1 : defined $2 ? $2 : defined $3 ? ($3 =~ tr/\n//c ? "\n" x ($3 =~ tr/\n//) : '') : '' }gsex;
    return $s;
}
sub strip_pl {
    my ($s) = @_;
    my @out; my $pod = 0; my $end = 0;
    for my $l (split /\n/, $s, -1) {
        if ($end) { push @out, ''; next }
        if ($l =~ /^__(?:END|DATA)__/) { $end = 1; push @out, ''; next }
        if ($l =~ /^=(\w+)/) { $pod = $1 ne 'cut'; push @out, ''; next }
        if ($pod) { push @out, ''; next }
        if ($l =~ /^\s*#/) { push @out, ''; next }
        # trailing comment: a # after whitespace, outside quotes (heuristic)
        my $q = ''; my $i = 0; my $cut;
        while ($l =~ /\G(?:([^"'#\\]+)|(\\.)|(["'])|(#))/gc) {
            if (defined $3) { $q = $q eq '' ? $3 : $q eq $3 ? '' : $q }
            elsif (defined $4 && $q eq '' && pos($l) >= 2 && substr($l, pos($l)-2, 1) =~ /\s/) { $cut = pos($l)-1; last }
        }
        $l = substr($l, 0, $cut) if defined $cut;
        push @out, $l;
    }
    return join "\n", @out;
}
my @files = (glob("$top/c/*.[ch]"), glob("$top/xs/*.xs"), "$top/bin/profbridge");
File::Find::find(sub { push @files, $File::Find::name if -f && /\.pm\z/ }, "$top/lib");
my (@left, @excepted);
for my $f (sort @files) {
    (my $rel = $f) =~ s{^\Q$top\E/}{};
    open my $fh, '<', $f or die "$f: $!";
    my $src = do { local $/; <$fh> };
    my $code = $rel =~ /\.(?:[ch]|xs)\z/ ? strip_c($src) : strip_pl($src);
    my @lines = split /\n/, $code, -1;
    my $base = $rel =~ m{^c/([^/.]+)\.} ? $1 : '';
    my %ok;
    $ok{$_} = 1 for grep { $base eq 'formats' || $base eq "read_$_" } @fmts;
    $ok{$_} = 1 for grep { $base eq 'outputs' || $base eq "write_$_" } @tgts;
    for my $i (0 .. $#lines) {
        my $l = $lines[$i];
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
