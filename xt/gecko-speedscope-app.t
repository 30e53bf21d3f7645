#!perl
# --to gecko in the real speedscope 1.25 app (which imports Firefox/Gecko
# files): every stack profile of t/data converted --to gecko, served with
# the app's own dist/release directory over a local HTTP server, opened in
# headless chromium (index.html#profileURL=...&view=sandwich, one browser
# driven over the DevTools protocol on a pipe), and the sandwich table's rows
# (function, total, self) read from the page, compared with our collapsed
# output of the same input.
#
# speedscope shows one thread (the only one), so a multi-thread input is
# checked thread by thread through convert's thread filter (the CLI's
# --thread).  Its totals are times: a sample lasts until the next sample's
# time (the last one until the sample of no stack that ends each thread).
#  - samples at recorded times (Tachyon, V8, perf, speedscope): the expected
#    totals are computed the same way, by the few lines below, from the
#    gecko file's own sample times and stacks; and every function's sample
#    count there is its weight in our collapsed output;
#  - spread samples (pprof, folded, StatProfiler, EasyProfiler): the
#    expected totals are the collapsed output's weights x the file's time per
#    unit of weight (its samples' end / the thread's total weight).
# speedscope prints times rounded ("12.34ms", "1.23s", "m:ss"): compared at
# that precision.
#
# Needs chromium (PB_CHROMIUM, else chromium or chromium-browser on PATH) and
# the speedscope npm package's dist/release directory in PB_SPEEDSCOPE_DIR
# (.ci/run sets it: npm pack speedscope@1.25.0); skipped without them.
use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use Stacks qw(slurp stack_corpus convert_quietly);
use File::Temp qw(tempdir);
use IO::Socket::INET ();
use IO::Handle ();
use POSIX ();
use JSON::PP ();
use Time::HiRes qw(time sleep);
use Devel::ProfileBridge ();

my $ss = $ENV{PB_SPEEDSCOPE_DIR};
plan skip_all => 'PB_SPEEDSCOPE_DIR (the speedscope 1.25 npm package\'s dist/release directory) is not set'
    unless $ss;
plan skip_all => "PB_SPEEDSCOPE_DIR=$ss holds no speedscope index.html" unless -f "$ss/index.html";
my ($chromium) = grep { defined && -x } $ENV{PB_CHROMIUM},
    map { my $d = $_; map { "$d/$_" } qw(chromium chromium-browser) } split /:/, $ENV{PATH} // '';
plan skip_all => 'no chromium (set PB_CHROMIUM or put chromium on PATH)' unless $chromium;

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);
my $d    = "$FindBin::Bin/../t/data";
my $tmp  = tempdir('pbss-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $json = JSON::PP->new->canonical;
symlink($ss, "$tmp/ss") or die "symlink: $!";

# ---- a static HTTP server for $tmp (the app and the profiles) ----
my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 16, ReuseAddr => 1)
    or die "listen: $!";
my $port = $listen->sockport;
my %type = (html => 'text/html', js => 'text/javascript', css => 'text/css', json => 'application/json',
    wasm => 'application/wasm', png => 'image/png', ico => 'image/x-icon', woff2 => 'font/woff2');
my $server = fork // die "fork: $!";
if (!$server) {
    while (my $c = $listen->accept) {
        my $req = <$c> // next;
        while (defined(my $h = <$c>)) { last unless $h =~ /\S/ }
        my ($path) = $req =~ m{\AGET (/[^ ?#]*)};
        $path = '/' unless defined $path;
        $path =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
        my $file = "$tmp$path";
        if ($path !~ /\.\./ && -f $file && open my $fh, '<:raw', $file) {
            local $/;
            my $body = <$fh>;
            my ($ext) = $file =~ /\.(\w+)\z/;
            print $c "HTTP/1.0 200 OK\r\nContent-Type: " . ($type{ lc($ext // '') } // 'application/octet-stream')
                . "\r\nContent-Length: " . length($body) . "\r\nConnection: close\r\n\r\n", $body;
        } else {
            print $c "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        }
        close $c;
    }
    POSIX::_exit(0);
}
close $listen;

# ---- chromium, driven over --remote-debugging-pipe (fd 3 in, fd 4 out) ----
pipe(my $cmd_r, my $cmd_w) or die "pipe: $!";
pipe(my $evt_r, my $evt_w) or die "pipe: $!";
my $browser = fork // die "fork: $!";
if (!$browser) {
    my ($i, $o) = (POSIX::dup(fileno $cmd_r), POSIX::dup(fileno $evt_w));
    POSIX::dup2($i, 3);
    POSIX::dup2($o, 4);
    open STDOUT, '>', '/dev/null';
    open STDERR, '>', '/dev/null';
    no warnings 'exec';
    exec { $chromium } $chromium, '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', '--no-first-run',
        "--user-data-dir=$tmp/profile", 'about:blank';
    POSIX::_exit(127);
}
close $cmd_r;
close $evt_w;
$cmd_w->autoflush(1);
my ($next_id, $inbuf, $session) = (0, '');
sub cdp {
    my ($method, $params, $sid) = @_;
    my $id = ++$next_id;
    print $cmd_w $json->encode({ id => $id, method => $method, params => $params || {}, $sid ? (sessionId => $sid) : () }),
        "\0";
    my $until = time + 60;
    while (time < $until) {
        while ($inbuf =~ s/\A([^\0]*)\0//) {
            my $m = $json->decode($1);
            next unless ($m->{id} // 0) == $id;
            die "$method: $m->{error}{message}\n" if $m->{error};
            return $m->{result};
        }
        my $rin = '';
        vec($rin, fileno $evt_r, 1) = 1;
        select(my $rout = $rin, undef, undef, 1) or next;
        sysread($evt_r, $inbuf, 1 << 20, length $inbuf) or die "chromium closed its pipe\n";
    }
    die "$method: no answer in 60 s\n";
}
END {
    local $?;    # the test's exit status, not the children's
    kill 'TERM', $browser if $browser;
    kill 'TERM', $server  if $server;
    waitpid $_, 0 for grep { $_ } $browser, $server;
}
my $target = cdp('Target.createTarget', { url => 'about:blank' })->{targetId};
$session = cdp('Target.attachToTarget', { targetId => $target, flatten => JSON::PP::true })->{sessionId};

# the sandwich table of profile $name (under $tmp): { "name\tfile" => [total ms, self ms, shown total, shown self] }
my $page = 0;
sub sandwich {
    my ($name, $rows) = @_;
    cdp('Emulation.setDeviceMetricsOverride',
        { width => 1400, height => 400 + 24 * $rows, deviceScaleFactor => 1, mobile => JSON::PP::false }, $session);
    $page++;
    cdp('Page.navigate', { url => "http://127.0.0.1:$port/ss/index.html?$page#profileURL=/$name&view=sandwich" },
        $session);
    my $js = q{JSON.stringify({ body: document.body ? document.body.innerText.slice(0, 300) : '',
        rows: Array.from(document.querySelectorAll('tbody tr, table tr')).filter(r => r.cells.length === 3 && !r.querySelector('th'))
            .map(r => [r.cells[0].innerText, r.cells[1].innerText, r.cells[2].textContent, r.cells[2].title || ''])})};
    my ($last, $same, $got) = (-1, 0);
    my $until = time + 30;
    while (time < $until) {
        sleep 0.15;
        $got = $json->decode(cdp('Runtime.evaluate', { expression => $js, returnByValue => JSON::PP::true }, $session)
                ->{result}{value});
        my $n = @{ $got->{rows} };
        $same = $n && $n == $last ? $same + 1 : 0;
        $last = $n;
        last if $same >= 2 || $got->{body} =~ /went wrong/i;
    }
    my %t;
    for my $r (@{ $got->{rows} }) {
        my ($tot, $self, $fn, $file) = @$r;
        $t{"$fn\t$file"} = [ ms($tot), ms($self), $tot, $self ];
    }
    return (\%t, $got->{body});
}

# speedscope's printed time -> [ms, half its last digit in ms]
sub ms {
    my ($s) = @_;
    return [ ($1 * 60 + $2) * 1000, 1000 ] if $s =~ /\A(\d+):(\d\d)/;    # m:ss, floored: within 1 s
    my ($v, $u) = $s =~ /\A([\d.]+)\s*(s|ms|\x{b5}s|ns)/ or return [ 'NaN', 0 ];
    my $k = { s => 1000, ms => 1, "\x{b5}s" => 1e-3, ns => 1e-6 }->{$u};
    return [ $v * $k, 0.005 * $k ];
}

# ---- the expected totals, by a few lines of our own from the gecko file ----
# per "name\tfile" of speedscope's frame (its location string read as
# speedscope reads one): total and self ms; and per name the samples and
# weights (for the collapsed output)
sub expected {
    my ($g) = @_;
    my $p = $g->{profile};
    my $th = $p->{threads}[0];
    my ($ss, $fs, $str) = ($th->{stackTable}{data}, $th->{frameTable}{data}, $th->{stringTable});
    my $rows = $th->{samples}{data};
    my $ns = ($th->{samples}{weightType} // '') eq 'tracing-ms' ? 1e6 : 1;    # weights in ms: ns
    my (%exp, %count, %byname);
    for my $i (0 .. $#$rows - 1) {
        my ($stack, $t) = @{ $rows->[$i] };
        next unless defined $stack;
        my $dur = $rows->[ $i + 1 ][1] - $t;
        my (@keys, %seen);
        for (my $s = $stack; defined $s; $s = $ss->[$s][0]) {
            my $loc = $str->[ $fs->[ $ss->[$s][1] ][0] ];
            my ($n, $f) = $loc =~ /\A(.*)\s+\((.*?)(?::\d+)?\)\z/s or die "location $loc";
            push @keys, "$n\t$f";
        }
        $exp{ $keys[0] }[1] += $dur;    # the leaf
        for my $k (grep { !$seen{$_}++ } @keys) {
            $exp{$k}[0] += $dur;
            $exp{$k}[1] //= 0;
        }
        my %names = map { (split /\t/)[0] => 1 } @keys;
        $count{$_} += ($rows->[$i][3] // 1) * $ns for keys %names;
        $byname{$_} += $dur for keys %names;
    }
    $_ = sprintf '%.0f', $_ for values %count;
    return (\%exp, \%count, \%byname, @$rows ? $rows->[-1][1] : 0, scalar @$rows, scalar @{ $p->{threads} });
}

my @corpus = (stack_corpus($d), glob("$d/tachyon/real315/*.bin"), glob("$d/pprof/*.prof"), glob("$d/pprof/*.pb"),
    glob("$d/folded/*.folded"), glob("$d/folded/*.collapsed"), glob("$d/perf/*.perf"),
    glob("$d/speedscope/*.speedscope.json"));
my ($files, $functions, $n) = (0, 0, 0);
for my $in (@corpus) {
    (my $label = $in) =~ s{\A\Q$d/\E}{};
    convert_quietly($in, { out => "$tmp/all.folded", to => 'collapsed' }, { out => "$tmp/all.json", to => 'gecko' })
        or next;    # not a stack profile
    $files++;
    my @tids = map { $_->{tid} } grep { @{ $_->{samples}{data} } } @{ $json->decode(slurp("$tmp/all.json"))->{profile}{threads} };
    if (!@tids) {    # speedscope shows an error for a profile of no samples
        pass("$label: no stack samples (the collapsed output is empty too): nothing for speedscope to show");
        next;
    }
    @tids = (undef) if @tids == 1;
    for my $tid (@tids) {
        my $what = defined $tid ? "$label thread $tid" : $label;
        my $name = 'p' . ++$n . '.json';
        my ($g, $ok);
        # one thread: by thread id, else (StatProfiler, perf) by pid
        for my $opt (defined $tid ? ({ thread => $tid }, { pid => $tid }) : ({})) {
            $ok = convert_quietly($in, { out => "$tmp/$name", to => 'gecko', %$opt },
                { out => "$tmp/c.folded", to => 'collapsed', %$opt }) or next;
            $g = $json->decode(slurp("$tmp/$name"));
            last if @{ $g->{profile}{threads} } == 1;
        }
        ok($ok && @{ $g->{profile}{threads} } == 1, "$what: converted, one thread") or do { diag $@; next };
        my ($exp, $count, $byname, $end, $nsamples, $nthreads) = expected($g);
        # the collapsed output's weight per function
        my (%w, $total);
        for (split /\n/, slurp("$tmp/c.folded")) {
            my ($s, $v) = /\A(?:tid:[^;]*;)?(.*) (\d+)\z/ or next;
            utf8::decode($s);
            # CPython's "file:function:line" frames of folded input are the function in a gecko file
            $s = join ';', map { /\A[^:;]*:([^;]+):\d+\z/ ? $1 : $_ } split /;/, $s if $label =~ m{\Afolded/};
            my %names = map { $_ => 1 } split /;/, $s;
            $w{$_} += $v for keys %names;
            $total += $v;
        }
        my $recorded = $g->{profile}{meta}{profbridge}{sampleTimes} eq 'recorded';
        if ($recorded) {
            is_deeply($count, \%w, "$what: samples per function in the gecko file are the collapsed weights ("
                . keys(%w) . ')');
        } else {
            # spread: a function's total is its collapsed weight x the time per unit of weight
            my $unit = $total ? $end / $total : 0;
            # (each time is written to the ns: 1e-6 ms a sample)
            my @bad = grep { abs(($byname->{$_} // 0) - $w{$_} * $unit) > 1e-6 * ($w{$_} * $unit + $nsamples) } sort keys %w;
            is_deeply(\@bad, [], "$what: totals are collapsed weight x " . sprintf('%.6g', $unit) . ' ms ('
                . keys(%w) . ' functions)');
        }
        my ($shown, $body) = sandwich($name, scalar keys %$exp);
        my @diff;
        for my $k (sort(keys %$exp), grep { !$exp->{$_} } sort keys %$shown) {
            my ($e, $s) = ($exp->{$k}, $shown->{$k});
            if (!$e || !$s) {
                push @diff, ($e ? 'missing in the app: ' : 'not expected: ') . ($k =~ s/\t/ in /r);
                next;
            }
            for my $c (0, 1) {
                my ($v, $tol) = @{ $s->[$c] };
                push @diff, sprintf('%s: %s %s, expected %.6f ms', $k =~ s/\t/ in /r, $c ? 'self' : 'total',
                    $s->[ $c + 2 ], $e->[$c]) if $v eq 'NaN' || abs($v - $e->[$c]) > $tol + 1e-6 * abs($e->[$c]) + 1e-9;
            }
        }
        $functions += keys %$exp;
        ok(!@diff && keys %$shown, "$what: speedscope's sandwich: " . keys(%$exp) . ' functions, total and self'
            . ($recorded ? ' (recorded times)' : ' (spread)'))
            or diag(join "\n", (@diff > 12 ? (@diff[0 .. 11], '...') : @diff), "page: $body");
    }
}
note("$files files, $n gecko files, $functions functions compared");
ok($files > 30, "$files files checked");
done_testing;
