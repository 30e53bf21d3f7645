#!perl
# The source policy of convert and merge to nytprof.out (Devel::ProfileBridge
# "Untrusted profiles", c/present.c): a profile names files, and by default
# only regular files that resolve (symlinks followed) under the input's
# directory, the working directory or a --source-root, outside /proc, /sys
# and /dev, with a source name of the input's language, are embedded.
# --source-any (source_any => 1) lifts the directory and name checks only:
# it embeds any regular file named on a disk file system, never one under
# /proc, /sys or /dev (the converting process's environment, devices),
# whatever the name or symlink that leads there.  Every
# check reads the embedded SRC_LINEs back from the nytprof.out.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd qw(abs_path getcwd);
use File::Temp qw(tempdir);
use RawFile qw(slurp_raw spew_raw);
use TachyonFile qw(naming_files);
use Devel::ProfileBridge ();
use Devel::ProfileBridge::ReadStream qw(for_chunks);

my $data = "$FindBin::Bin/data";
my $bin = "$FindBin::Bin/../bin/profbridge";
my @inc = map { "-I$_" } grep { !ref } @INC;
my $tmp = abs_path(tempdir('pb29-XXXXXX', TMPDIR => 1, CLEANUP => 1));
my $cwd0 = getcwd();
my $passwd = slurp_raw('/etc/passwd');
my ($passwd1) = $passwd =~ /\A([^\n]*\n?)/;
$ENV{PB29_SECRET} = 'environ-secret-' . $$;

# the working directory $tmp (two levels below / when TMPDIR is /tmp), the
# input beside its program in $tmp/in, a source root $tmp/root, a secret of
# the right language outside all of them in $outside (../$obase from $tmp), and
# one in $tmp/o that only a ../ under the source root reaches
my $outside = abs_path(tempdir('pb29o-XXXXXX', TMPDIR => 1, CLEANUP => 1));
(my $obase = $outside) =~ s{.*/}{};
mkdir $_ or die "mkdir $_: $!" for "$tmp/in", "$tmp/o", "$tmp/root";
spew_raw("$outside/secret.$_", "SECRET_OUTSIDE = 1\n") for qw(py cpp pl);
spew_raw("$tmp/o/secret.py", "SECRET_OUTSIDE = 1\n");
spew_raw("$tmp/in/good.py", "def f():\n    return 1\n");
spew_raw("$tmp/root/lib.py", "ROOT_LIB = 1\n");
spew_raw("$tmp/in/notes.txt", "NOTES_TXT\n");
spew_raw("$tmp/in/script", "#!/usr/bin/env python3\nSCRIPT = 1\n");
spew_raw("$tmp/in/plain", "PLAIN_NO_SHEBANG\n");
symlink '/etc/passwd', "$tmp/in/$_" or die "symlink: $!" for qw(app.py lnk.pl lnk_bm.cpp);
chdir $tmp or die;
END { chdir $cwd0 if defined $cwd0 }

# "../" enough times to reach / from the working directory
my $up = '../' x scalar(grep { length } split m{/}, $tmp);

sub run {
    my @args = @_;
    my $pid = open my $fh, '-|';
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDERR, '>&', \*STDOUT or die;
        exec $^X, @inc, $bin, @args or die "exec: $!";
    }
    local $/;
    my $out = <$fh> // '';
    close $fh;
    return ($? >> 8, $out);
}

# { name => embedded text } from a nytprof.out (our reader; and the same from
# Devel::NYTProf's own when it is installed)
sub embedded {
    my ($file) = @_;
    my (%name, %src);
    for_chunks(sub {
        my ($tag, @a) = @_;
        $name{ $a[0] } = $a[6] if $tag eq 'NEW_FID';
        $src{ $a[0] } .= $a[2] if $tag eq 'SRC_LINE';
    }, filename => $file);
    my %by = map { $name{$_} => $src{$_} } keys %src;
    if (eval { require Devel::NYTProf::ReadStream; 1 }) {
        my (%n2, %s2);
        Devel::NYTProf::ReadStream::for_chunks(sub {
            my ($tag, @a) = @_;
            $n2{ $a[0] } = $a[6] if $tag eq 'NEW_FID';
            $s2{ $a[0] } .= $a[2] if $tag eq 'SRC_LINE';
        }, filename => $file);
        my %by2 = map { $n2{$_} => $s2{$_} } keys %s2;
        is_deeply(\%by2, \%by, "... Devel::NYTProf's reader sees the same embedded source in $file")
            or diag explain \%by2;
    }
    return \%by;
}

# no secret in any embedded text
sub no_secret {
    my ($by, $what) = @_;
    my @bad = grep { my $t = $by->{$_}; $t =~ /^root:|SECRET_OUTSIDE|PB29_SECRET|NOTES_TXT|PLAIN_NO_SHEBANG/m }
        sort keys %$by;
    ok(!@bad, "$what: no file outside the policy embedded") or diag "embedded: @bad";
}

# ---- Tachyon: the issue's reproducer ---------------------------------------
my @names = ('/etc/shadow', '/etc//././../etc/shadow', '/proc/self/environ', '/proc/self/pagemap',
    '../../etc/passwd', "${up}etc/passwd", 'app.py', "../$obase/secret.py", "$outside/secret.py",
    '/srv/app/../o/secret.py', '/srv/app/lib.py', 'good.py', 'notes.txt', 'script', 'plain');
spew_raw("$tmp/in/p.bin", naming_files(@names));
my @roots = ('--strip-prefix', '/srv/app', '--source-root', "$tmp/root");

my ($rc, $out) = run('convert', 'in/p.bin', '-o', "$tmp/p.nytprof", @roots);
is($rc, 0, 'convert of a Tachyon file naming system files: exit 0') or diag $out;
my $by = embedded("$tmp/p.nytprof");
is_deeply([sort keys %$by], [sort 'good.py', '/srv/app/lib.py', 'script'],
    'by default only the sources beside the input, under the source root, and a #! python script are embedded')
    or diag explain $by;
is($by->{'good.py'}, "def f():\n    return 1\n", '... with their bytes');
no_secret($by, 'default');
# ../../etc/passwd is /etc/passwd from two levels down (then it and ${up}etc/passwd
# are one file of the profile); from further down it is not found
my $files = $up eq '../../' ? 14 : 15;
# the three secret.py files are Python sources outside the allowed
# directories: left out without a word (a library of the language, which
# nytprofhtml reads from disk), so the warning names 8
my $kept_out = 8;
like($out, qr/^convert: warning: the source of $kept_out of $files files was not embedded by the source policy: '\/etc\/shadow' \(outside the allowed directories\), '\/etc\/\/\.\/\.\/\.\.\/etc\/shadow' \(outside the allowed directories\), '\/proc\/self\/environ' \(in \/proc, \/sys or \/dev\), '\/proc\/self\/pagemap' \(in \/proc, \/sys or \/dev\), '\Q$up\Eetc\/passwd' \(outside the allowed directories\) and ${\ ($kept_out - 5)} more/m,
    'one warning names the files the policy kept out, and why') or diag $out;
like($out, qr/only Python source files under the input's directory, the working directory or a --source-root are embedded \(--source-any: any file a trusted profile names\)$/m,
    '... and says what is embedded and how to lift it');

# merge embeds by the same policy
($rc, $out) = run('merge', 'in/p.bin', '-o', "$tmp/m.nytprof", @roots);
is($rc, 0, 'merge of the same file: exit 0') or diag $out;
$by = embedded("$tmp/m.nytprof");
is_deeply([sort keys %$by], [sort 'good.py', '/srv/app/lib.py', 'script'], '... embeds the same files')
    or diag explain [keys %$by];
no_secret($by, 'merge');

# --source-root confines: a "../" name under it does not escape it
spew_raw("$tmp/in/q.bin", naming_files('../o/secret.py', '../../o/secret.py'));
($rc, $out) = run('convert', 'in/q.bin', '-o', "$tmp/q.nytprof", '--source-root', "$tmp/root");
$by = embedded("$tmp/q.nytprof");
ok($rc == 0 && !keys %$by, '--source-root DIR with ../ names: nothing outside DIR is embedded') or diag $out;

# --source-any: the user's explicit choice embeds them all
($rc, $out) = run('convert', 'in/p.bin', '-o', "$tmp/any.nytprof", @roots, '--source-any');
is($rc, 0, '--source-any: exit 0') or diag $out;
$by = embedded("$tmp/any.nytprof");
SKIP: {
    skip 'this user cannot read /etc/shadow', 1 unless -r '/etc/shadow';
    is($by->{'/etc/shadow'}, slurp_raw('/etc/shadow'), '--source-any embeds /etc/shadow (readable here)');
}
ok(!exists $by->{'/proc/self/environ'}, '... but never /proc/self/environ (the converting process\'s secrets)');
ok(!grep({ /PB29_SECRET/ } values %$by), '... nor its text under any name');
is($by->{"${up}etc/passwd"}, $passwd, "... ${up}etc/passwd");
SKIP: {
    skip 'the working directory is not two levels below /', 1 unless $up eq '../../';
    is($by->{'../../etc/passwd'}, $passwd, '... ../../etc/passwd');
}
is($by->{'app.py'}, $passwd, '... the symlink app.py -> /etc/passwd');
is($by->{"../$obase/secret.py"}, "SECRET_OUTSIDE = 1\n", '... a file outside the allowed directories');
is($by->{'/srv/app/../o/secret.py'}, "SECRET_OUTSIDE = 1\n", '... a ../ name under --source-root');
is($by->{'notes.txt'}, "NOTES_TXT\n", '... a file that is not Python');
ok(!exists $by->{'/proc/self/pagemap'}, '... nor /proc/self/pagemap');
like($out, qr/^convert: warning: the source of 2 of $files files was not embedded: '\/proc\/self\/environ' \(in \/proc, \/sys or \/dev\), '\/proc\/self\/pagemap' \(in \/proc, \/sys or \/dev\); even --source-any embeds only regular files on a disk file system, never under \/proc, \/sys or \/dev$/m,
    '... which the warning names, and why') or diag $out;

# --source-any and system files by every road: a symlink of a source name
# to /proc/self/environ, /dev/stdin (a regular file here: the test's own
# input), /sys files, devices
symlink '/proc/self/environ', "$tmp/in/env.py" or die "symlink: $!";
symlink '/dev/zero', "$tmp/in/zero.py" or die "symlink: $!";
my @sys = ('env.py', 'zero.py', '/proc/self/status', '/proc/version', '/sys/kernel/uevent_seqnum', '/dev/null',
    '/dev/zero', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0', '/proc/self/cwd/in/good.py');
spew_raw("$tmp/in/sys.bin", naming_files(@sys));
{
    my $pid = open my $fh, '-|';
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDERR, '>&', \*STDOUT or die;
        open STDIN, '<', "$tmp/in/good.py" or die; # a regular file as standard input
        exec $^X, @inc, $bin, 'convert', 'in/sys.bin', '-o', "$tmp/sys.nytprof", '--source-any' or die "exec: $!";
    }
    local $/;
    $out = <$fh> // '';
    close $fh;
    $rc = $? >> 8;
}
is($rc, 0, '--source-any naming /proc, /sys and /dev files: exit 0') or diag $out;
$by = embedded("$tmp/sys.nytprof");
my @leak = grep { $_ ne '/proc/self/cwd/in/good.py' } keys %$by;
ok(!@leak, '... none of them embedded') or diag explain [ sort keys %$by ];
ok(!grep({ /PB29_SECRET/ } values %$by), '... no environment text under any name');
ok(!exists $by->{$_}, "... not $_") for '/proc/self/fd/0', '/dev/stdin', '/dev/fd/0';
is($by->{'/proc/self/cwd/in/good.py'}, "def f():\n    return 1\n",
    '... /proc/self/cwd/in/good.py: good.py found by its base name beside the input (as any absolute name is)');
like($out, qr/^convert: warning: the source of [0-9]+ of [0-9]+ files was not embedded: '[^']+' \(in \/proc, \/sys or \/dev\)/m,
    '... the warning says why') or diag $out;

# the API option
{
    my @w;
    local $SIG{__WARN__} = sub { push @w, @_ };
    Devel::ProfileBridge::convert(in => 'in/p.bin', out => "$tmp/api.nytprof", source_any => 1);
    $by = embedded("$tmp/api.nytprof");
    is($by->{'app.py'}, $passwd, 'convert(source_any => 1) embeds the symlinked app.py');
    @w = ();
    Devel::ProfileBridge::convert(in => 'in/p.bin', out => "$tmp/api0.nytprof");
    $by = embedded("$tmp/api0.nytprof");
    no_secret($by, 'convert() without source_any');
    ok(exists $by->{'good.py'} && grep(/by the source policy/, @w), '... and warns about what it kept out');
}

spew_raw("$tmp/in/mem.bin", naming_files('/proc/self/mem'));
($rc, $out) = run('convert', 'in/mem.bin', '-o', "$tmp/mem.nytprof", '--source-any');
$by = embedded("$tmp/mem.nytprof");
ok($rc == 0 && !keys %$by, '--source-any naming /proc/self/mem: not embedded') or diag $out;
like($out, qr/'\/proc\/self\/mem' \(in \/proc, \/sys or \/dev\)/m, '... kept out as a /proc file, never opened') or diag $out;

# a name with control bytes is escaped in the warning
spew_raw("$tmp/in/esc.bin", naming_files("/etc/\e]2;x\a.py"));
($rc, $out) = run('convert', 'in/esc.bin', '-o', "$tmp/esc.nytprof");
like($out, qr/'\/etc\/\\x1b\]2;x\\x07\.py'/, 'control bytes of a name are escaped in the warning') or diag $out;

# ---- the other formats: same policy, their language's names ---------------
# same-length names patched into real files (every name as often as it occurs)
sub pad {
    my ($name, $len) = @_;
    my $k = $len - length $name;
    die "name '$name' longer than $len" if $k < 0;
    return $name if !$k;
    return $name =~ s{/}{'/' x ($k + 1)}er if $name =~ m{/};
    return './' . ('/' x ($k - 2)) . $name if $k >= 2;
    die "cannot pad '$name' by $k";
}

sub patched {
    my ($from, $to, %map) = @_;
    my $b = slurp_raw($from);
    for my $old (keys %map) {
        my $new = pad($map{$old}, length $old);
        my $n = () = $b =~ /\Q$old\E/g;
        die "$old not in $from" unless $n;
        $b =~ s/\Q$old\E/$new/g;
    }
    spew_raw($to, $b);
}

# EasyProfiler (C/C++ names): a source beside the input is embedded, a .cpp
# outside and a symlinked .cpp are not
mkdir "$tmp/ep";
patched("$data/easyprofiler/ep_bookmarks.prof", "$tmp/ep/bad.prof",
    'ep_bookmarks.cpp' => '../in/lnk_bm.cpp',
    '/tmp/anchors/easy_profiler/easy_profiler_core/profile_manager.cpp' => "../$obase/secret.cpp");
($rc, $out) = run('convert', 'ep/bad.prof', '-o', "$tmp/ep.nytprof");
$by = embedded("$tmp/ep.nytprof");
ok($rc == 0 && !keys %$by, 'EasyProfiler: a .cpp outside and a symlinked .cpp are not embedded') or diag $out, explain $by;
like($out, qr/only C\/C\+\+ source files/, '... and the warning says C/C++') or diag $out;
($rc, $out) = run('convert', 'ep/bad.prof', '-o', "$tmp/ep1.nytprof", '--source-any');
$by = embedded("$tmp/ep1.nytprof");
is(scalar(grep { $_ eq $passwd || $_ eq "SECRET_OUTSIDE = 1\n" } values %$by), 2, '... both with --source-any');
link "$data/easyprofiler/ep_bookmarks.prof", "$tmp/ep/ep_bookmarks.prof"
    or spew_raw("$tmp/ep/ep_bookmarks.prof", slurp_raw("$data/easyprofiler/ep_bookmarks.prof"));
spew_raw("$tmp/ep/ep_bookmarks.cpp", slurp_raw("$data/easyprofiler/ep_bookmarks.cpp"));
($rc, $out) = run('convert', 'ep/ep_bookmarks.prof', '-o', "$tmp/ep2.nytprof");
$by = embedded("$tmp/ep2.nytprof");
is($by->{'ep_bookmarks.cpp'}, slurp_raw("$data/easyprofiler/ep_bookmarks.cpp"), '... its .cpp beside the input is');

# Pynytprof (Python names): one file per name
mkdir "$tmp/py";
my $pyf = "$data/pynytprof/tlv/B_ascii_FSDCE_670fbc8/twofiles.nytprof.out";
my %py = (outside => "../$obase/secret.py", link => 'app.py', notpy => 'notes.txt', good => 'good.py');
for my $k (sort keys %py) {
    patched($pyf, "$tmp/in/$k.pyn", '/tmp/anchors/pyprogs/twofiles.py' => $py{$k});
    ($rc, $out) = run('convert', "in/$k.pyn", '-o', "$tmp/py-$k.nytprof");
    my $d = embedded("$tmp/py-$k.nytprof");
    ($rc, $out) = run('convert', "in/$k.pyn", '-o', "$tmp/py-$k-any.nytprof", '--source-any');
    my $a = embedded("$tmp/py-$k-any.nytprof");
    if ($k eq 'good') {
        is(join('', values %$d), "def f():\n    return 1\n", 'Pynytprof: a .py beside the input is embedded');
        next;
    }
    ok(!keys %$d, "Pynytprof: $py{$k} is not embedded") or diag explain $d;
    is(scalar(keys %$a), 1, "... but is with --source-any");
}

# StatProfiler (Perl names), written with our record writer
SKIP: {
    skip 'this build has no snappy (StatProfiler traces)', 4 unless defined Devel::ProfileBridge::features()->{libraries}{snappy};
    require Devel::ProfileBridge::StatProfilerWriter;
    spew_raw("$tmp/in/good.pl", "sub good { 1 }\n");
    spew_raw("$tmp/in/bin-script", "#!/usr/bin/perl\nprint 1;\n");
    my $w = Devel::ProfileBridge::StatProfilerWriter->new(file => "$tmp/in/sp.out", interval_us => 1000);
    for my $f ("../$obase/secret.pl", 'lnk.pl', '/etc/passwd', 'good.pl', 'bin-script', 'plain') {
        $w->start_sample(1, '');
        $w->sub_frame('main', 'x', $f, 1, 1);
        $w->main_frame('good.pl', 1);
        $w->end_sample;
    }
    $w->close;
    ($rc, $out) = run('convert', 'in/sp.out', '-o', "$tmp/sp.nytprof");
    $by = embedded("$tmp/sp.nytprof");
    is_deeply([sort keys %$by], ['bin-script', 'good.pl'],
        'StatProfiler: only good.pl and a #! perl script beside the input are embedded') or diag $out, explain $by;
    no_secret($by, 'StatProfiler');
    like($out, qr/only Perl source files/, '... and the warning says Perl');
    ($rc, $out) = run('convert', 'in/sp.out', '-o', "$tmp/sp1.nytprof", '--source-any');
    $by = embedded("$tmp/sp1.nytprof");
    ok($by->{'lnk.pl'} eq $passwd && $by->{'/etc/passwd'} eq $passwd && $by->{"../$obase/secret.pl"} eq "SECRET_OUTSIDE = 1\n",
        '... all of them with --source-any') or diag explain [keys %$by];
}

# ---- no warning on the happy path (the README's example on any machine) -------
# the program found and embedded; the interpreter's library named by an
# absolute path that is not on this machine, and one that is but lies
# outside the allowed directories: nothing to warn about
{
    spew_raw("$tmp/in/happy.bin", naming_files('good.py', '/nonexistent-pb29/lib/python3.11/threading.py', "$outside/secret.py"));
    my ($rc, $out) = run('convert', 'in/happy.bin', '-o', "$tmp/happy.nytprof");
    ok($rc == 0 && $out eq '', 'program found, library missing or outside: no warning') or diag $out;
    is_deeply([ sort keys %{ embedded("$tmp/happy.nytprof") } ], ['good.py'], '... the program embedded');
    # the program itself missing: the warning names what was not found
    spew_raw("$tmp/in/sad.bin", naming_files('gone.py', '/nonexistent-pb29/lib/python3.11/threading.py'));
    ($rc, $out) = run('convert', 'in/sad.bin', '-o', "$tmp/sad.nytprof");
    like($out, qr/\Aconvert: warning: the source of 2 of 2 files was not found \(not embedded\): 'gone\.py', '\/nonexistent-pb29\/lib\/python3\.11\/threading\.py'; look in more places/,
        'nothing found: one warning names the files and where to look');
    spew_raw("$tmp/in/half.bin", naming_files('good.py', 'gone.py'));
    ($rc, $out) = run('convert', 'in/half.bin', '-o', "$tmp/half.nytprof");
    like($out, qr/\Aconvert: warning: the source of 1 of 2 files was not found \(not embedded\): 'gone\.py'/,
        "a file the profile names relatively (the program's own) not found: a warning");
}
{
    # the README's example itself, from the distribution's top directory
    chdir "$FindBin::Bin/.." or die;
    my ($rc, $out) = run('convert', 't/data/tachyon/cpu_recursion.bin', '-o', "$tmp/readme.nytprof");
    chdir $tmp or die;
    ok($rc == 0 && $out eq '', "the README's example prints nothing") or diag $out;
}


# pprof (Go names): the .go a Go profile names is embedded from a
# --source-root with --strip-prefix (the prefix the profile recorded) and
# from beside the input; a .py it names is not (not a Go source name)
{
    my $go_src = slurp_raw("$data/pprof/cpu_inline.go");
    mkdir $_ for "$tmp/go", "$tmp/go/src", "$tmp/go2";
    spew_raw("$tmp/go/cpu_inline.prof", slurp_raw("$data/pprof/cpu_inline.prof"));
    spew_raw("$tmp/go/src/cpu_inline.go", $go_src);
    ($rc, $out) = run('convert', 'go/cpu_inline.prof', '-o', "$tmp/go.nytprof", '--source-root', "$tmp/go/src",
        '--strip-prefix', '/tmp/pprofgo');
    $by = embedded("$tmp/go.nytprof");
    is($by->{'/tmp/pprofgo/cpu_inline.go'}, $go_src, 'pprof: the .go is embedded from --source-root with --strip-prefix')
        or diag $out, explain [keys %$by];
    unlike($out, qr/cpu_inline\.go/, '... and no warning names it') or diag $out;
    like($out, qr/only Go source files/, '... the warning about the Go runtime says Go') if $out =~ /not embedded/;
    spew_raw("$tmp/go2/cpu_inline.prof", slurp_raw("$data/pprof/cpu_inline.prof"));
    spew_raw("$tmp/go2/cpu_inline.go", $go_src);
    ($rc, $out) = run('convert', 'go2/cpu_inline.prof', '-o', "$tmp/go2.nytprof");
    $by = embedded("$tmp/go2.nytprof");
    is($by->{'/tmp/pprofgo/cpu_inline.go'}, $go_src, '... and from beside the input') or diag $out, explain [keys %$by];
    patched("$data/pprof/cpu_inline.pb", "$tmp/in/gopy.pb", '/tmp/pprofgo/cpu_inline.go' => 'good.py');
    ($rc, $out) = run('convert', 'in/gopy.pb', '-o', "$tmp/gopy.nytprof");
    $by = embedded("$tmp/gopy.nytprof");
    ok(!grep({ /good\.py/ } keys %$by), '... a .py a pprof profile names is not') or diag $out, explain [keys %$by];
    like($out, qr/good\.py' \(not a source file name\)/, '... as the warning says') or diag $out;
}

done_testing;
