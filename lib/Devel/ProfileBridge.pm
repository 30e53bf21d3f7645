package Devel::ProfileBridge;
use 5.010;
use strict;
use warnings;

our $VERSION = '0.01';

require XSLoader;
XSLoader::load('Devel::ProfileBridge', $VERSION);

use Devel::ProfileBridge::Error ();

my %FOR_CHUNKS_OPTS = map { $_ => 1 } qw(
    filename format thread pid sample_type quiet callback salvage files progress
    max_decompressed_bytes max_record_size max_stack_depth max_strings max_frames max_statements max_line
    max_threads max_string_bytes
);
my @LIMITS = qw(max_decompressed_bytes max_record_size max_stack_depth max_strings max_frames max_statements max_line
    max_threads max_string_bytes);

# THE two tables, as the C core has them (c/formats.c, c/outputs.c): every
# list of formats or targets below, and every rule about one, comes from
# their rows
my @FORMATS = @{ _format_rows() };
my @TARGETS = @{ _targets() };
my %TARGET = map { $_->{name} => $_ } @TARGETS;
# the formats whose decoders read a gzip-compressed file themselves

# the names of the targets that can $what (convert, merge, diff), in order
sub _targets_for {
    my ($what) = @_;
    return map { $_->{name} } grep { $_->{$what} } @TARGETS;
}

# the target $what uses when none is named
sub _default_target {
    my ($what) = @_;
    my $k = $what eq 'diff' ? 'diff_default' : 'default';
    return (grep { $_->{$k} } @TARGETS)[0]{name};
}

# the row of target $name (undef: none)
sub _target { return $TARGET{ $_[0] } }

# the row of format $name (undef: none)
sub _format_row { my ($name) = @_; return (grep { $_->{name} eq $name } @FORMATS)[0] }

# "a, b or c"
sub _or_list {
    my @l = @_;
    return @l > 1 ? join(', ', @l[0 .. $#l - 1]) . " or $l[-1]" : $l[0];
}

# A usage error (a bad option or argument), thrown as the Error every other
# failure is: class usage, one line "profbridge: usage: <what>" (profbridge
# exits 1 on it, as on its own usage errors)
sub _usage {
    my ($msg) = @_;
    Devel::ProfileBridge::Error->throw(format => 'profbridge', class => 'usage', message => $msg, file => '');
}

# the limits are 64-bit values in C, four of them 32-bit: a bigger one is
# refused, never cut to its low bits
my %LIMIT_MAX = ((map { $_ => '18446744073709551615' } qw(max_decompressed_bytes max_record_size max_statements
    max_string_bytes)), (map { $_ => '4294967295' } qw(max_stack_depth max_strings max_frames max_line max_threads)));

# a decimal string no greater than $max (also a string: no float rounding)
sub _fits {
    my ($v, $max) = @_;
    return 0 unless defined $v && !ref $v && $v =~ /\A[0-9]+\z/;
    $v =~ s/\A0+(?=.)//;
    return length $v < length $max || length $v == length $max && $v le $max;
}

# "an ARRAY reference": what a reference is, never its address
sub _ref_what {
    my ($v) = @_;
    require Scalar::Util;
    my $r = ref $v;
    return (Scalar::Util::blessed($v) ? "a $r object" : $r =~ /\A[AEIOU]/ ? "an $r reference" : "a $r reference");
}

# an object with its own string form (Path::Tiny, URI::file): taken as that string
sub _stringy {
    my ($v) = @_;
    require Scalar::Util;
    require overload;
    return Scalar::Util::blessed($v) && overload::Method($v, '""');
}

# the references an option may be (every other option is a plain value: a
# reference there is a usage error, never its "ARRAY(0x...)" text)
my %OPT_REFS = (progress => { CODE => 1 }, callback => { CODE => 1 }, files => { ARRAY => 1 },
    source_root => { ARRAY => 1 }, strip_prefix => { ARRAY => 1 }, in => { ARRAY => 1 },
    out => { SCALAR => 1 }, output => { SCALAR => 1 });
my %OPT_SHAPE = (progress => 'a code reference', callback => 'a code reference',
    files => 'a list of files (an array reference), a directory or a template', source_root => 'a path or a list of paths',
    strip_prefix => 'a prefix or a list of prefixes', in => 'a file name', out => 'a file name or a scalar reference',
    output => 'a file name or a scalar reference', filename => 'a file name', before => 'a file name',
    after => 'a file name');

sub _check_opts {
    my ($what, $known, $opts) = @_;
    require Scalar::Util;
    # event => NAME: a format's own word for what sample_type picks (an event column)
    if (exists $opts->{event} && $known->{sample_type}) {
        my $e = delete $opts->{event};
        if (defined $opts->{sample_type} && defined $e && (ref $e || "$e" ne "$opts->{sample_type}")) {
            _usage("$what: event => '$e' and sample_type => '$opts->{sample_type}' name two columns: give one");
        }
        $opts->{sample_type} = $e if defined $e;
    }
    for my $k (keys %$opts) {
        next if $known->{$k};
        _usage("$what: unknown option '$k' (known: " . join(', ', sort keys %$known) . ")");
    }
    for my $k (sort keys %$opts) {
        my $v = $opts->{$k};
        next unless ref $v;
        next if _stringy($v);
        next if $OPT_REFS{$k} && $OPT_REFS{$k}{ ref $v } && !Scalar::Util::blessed($v);
        _usage("$what: $k must be " . ($OPT_SHAPE{$k} // 'a plain value (a string or a number)') . ', not '
            . _ref_what($v));
    }
    for my $k (qw(filename in out output before after files source_root strip_prefix)) {
        next unless defined $opts->{$k};
        for my $e (ref $opts->{$k} eq 'ARRAY' ? @{ $opts->{$k} } : ()) {
            _usage("$what: $k must hold file names, not " . _ref_what($e)) if ref $e && !_stringy($e);
        }
        _check_path($what, $k, $_) for ref $opts->{$k} eq 'ARRAY' ? @{ $opts->{$k} } : $opts->{$k};
    }
    if (defined $opts->{pid} && !_fits($opts->{pid}, '4294967295')) {
        _usage("$what: pid must be a process id (a number up to 4294967295), not '$opts->{pid}'");
    }
    if (defined $opts->{format} && !grep { $_->{name} eq $opts->{format} } @FORMATS) {
        _usage("$what: unknown format '$opts->{format}' (known: " . join(', ', map { $_->{name} } @FORMATS) . ")");
    }
    if (defined $opts->{progress} && ref $opts->{progress} ne 'CODE') {
        _usage("$what: progress must be a code reference");
    }
    if (defined $opts->{thread} && !length $opts->{thread}) {
        _usage("$what: thread must be a thread id (or, where the format names its threads, a thread name), not ''");
    }
    for my $k (@LIMITS) {
        next unless defined $opts->{$k};
        next if _fits($opts->{$k}, $LIMIT_MAX{$k}) && $opts->{$k} =~ /[1-9]/;
        _usage("$what: $k must be a positive integer up to $LIMIT_MAX{$k}, not '$opts->{$k}'");
    }
}

{
    # a temporary directory and its files, registered with the C signal
    # path (c/output.c) while they live (out => \$scalar's output)
    package Devel::ProfileBridge::_TempGuard;
    sub new {
        my ($class, $dir_obj, $dir, @files) = @_;
        my @slots = map { Devel::ProfileBridge::_guard_temp($_, 0) } @files;
        push @slots, Devel::ProfileBridge::_guard_temp($dir, 1);
        return bless { dir => $dir_obj, slots => \@slots, pid => $$ }, $class;
    }
    sub DESTROY {
        my ($self) = @_;
        return unless $self->{pid} == $$;
        Devel::ProfileBridge::_unguard_temp($_) for grep { $_ >= 0 } @{ $self->{slots} };
        delete $self->{dir};    # File::Temp removes the directory and the copy
    }
}

# a path argument with a NUL byte: the C side would cut the name there and
# read or write another file (a usage error instead)
sub _check_path {
    my ($what, $k, $v) = @_;
    if (ref $v && !($k =~ /\A(?:out|output)\z/ && ref $v eq 'SCALAR') && !_stringy($v)) {
        require Scalar::Util;
        _usage("$what: $k must be a path (a string), not " . _ref_what($v));
    }
    return unless defined $v && !ref $v && index($v, "\0") >= 0;
    _usage("$what: $k contains a NUL byte, which no file name can hold");
}

# an output that is one of the inputs (the same device and inode, whatever
# the names: a hard link, a symlink, "./x"): the writer's rename would
# replace the profile being read, so it is refused before anything is written
sub _check_not_input {
    my ($what, $out, @in) = @_;
    return if !defined $out || $out eq '-';
    my @o = stat $out or return;
    for my $in (grep { defined && !ref && $_ ne '-' } @in) {
        my @i = stat $in or next;
        next unless $i[0] == $o[0] && $i[1] == $o[1];
        _usage("$what: the output '$out' is the input '$in' (the same file); refusing to overwrite it");
    }
}

# ---- inputs ----------------------------------------------------------------
# The C side opens every input (c/source.c, the driver in c/formats.c):
# standard input ("-"), a FIFO or device read once as a stream, gzip
# members inflated as they are read unless the format reads gzip itself,
# a temporary copy only for a format that seeks (bounded by
# max_decompressed_bytes), errors naming the input as the user gave it.
# Perl hands the name over unchanged.
sub _with_input {
    my ($file, $opts, $code) = @_;
    return $code->($file);
}

sub _xs_opts {
    my ($opts) = @_;
    my %x;
    for my $k (@LIMITS, qw(thread salvage pid progress sample_type)) {
        $x{$k} = $opts->{$k} if defined $opts->{$k};
    }
    return \%x;
}

my %TAG = map { $_ => 1 } qw(
    VERSION COMMENT ATTRIBUTE OPTION START_DEFLATE PID_START PID_END NEW_FID TIME_LINE
    TIME_BLOCK DISCOUNT SRC_LINE SUB_INFO SUB_CALLERS SUB_ENTRY SUB_RETURN
);

# With for_chunks' (&%) prototype, `for_chunks { SUB_INFO => sub {...} } ...`
# is parsed as a code block, not a hash.  A block whose only statement is a
# list of (constant, code reference) pairs is a tag table: evaluate it once
# (it only builds closures) and use the table, so unnamed tags are skipped
# in C.
sub _tag_table {
    my ($cb) = @_;
    { local $@; require B; }    # a successful require empties $@: the caller's stays
    my $root = B::svref_2object($cb)->ROOT;
    return undef unless $$root && $root->name eq 'leavesub';
    my $seq = $root->first;
    return undef unless $$seq && $seq->name eq 'lineseq';
    my @stmts;
    for (my $k = $seq->first; $$k; $k = $k->sibling) { push @stmts, $k }
    @stmts = grep { $_->name ne 'nextstate' && $_->name ne 'dbstate' } @stmts;
    return undef unless @stmts == 1 && $stmts[0]->name eq 'list';
    my @items;
    for (my $k = $stmts[0]->first; $$k; $k = $k->sibling) { push @items, $k->name }
    shift @items if @items && $items[0] eq 'pushmark';
    return undef unless @items && @items % 2 == 0;
    while (my ($key, $val) = splice @items, 0, 2) {
        return undef unless $key eq 'const' && $val =~ /\A(?:srefgen|refgen|anoncode|padsv)\z/;
    }
    my @list = $cb->();
    return undef if @list % 2;
    my %table = @list;
    for my $k (keys %table) {
        return undef unless ($k eq '' || $TAG{$k}) && ref $table{$k} eq 'CODE';
    }
    return \%table;
}

sub for_chunks {
    my ($cb, %opts) = @_;
    my $errno = $! + 0;    # callbacks see the caller's $! (loading B may leave ENOENT)
    _check_opts('for_chunks', \%FOR_CHUNKS_OPTS, \%opts);
    $cb = delete $opts{callback} if !defined $cb && $opts{callback};
    if (ref $cb eq 'CODE') {
        my $table = _tag_table($cb);
        $cb = $table if $table;
    }
    # a directory can only be a profile of several files (a format with runs, c/formats.c)
    $opts{files} = delete $opts{filename} if !defined $opts{files} && defined $opts{filename} && -d $opts{filename};
    if (defined $opts{files}) {
        # a whole run: a list of files, a directory or a template
        my ($run) = grep { $_->{runs} } @FORMATS;
        my $files = $opts{files};
        ($files) = _run_expand($files, undef) unless ref $files;
        if (ref $files ne 'ARRAY' || !@$files) {
            _usage("for_chunks: files => must be an array of $run->{title} trace files, a directory or a template");
        }
        if (defined $opts{format} && !grep { $_->{runs} && $_->{name} eq $opts{format} } @FORMATS) {
            _usage("for_chunks: files => reads $run->{run_what} only");
        }
        if (defined $opts{pid}) {
            # one process: the files whose genealogy id starts with its pid
            my @mine = grep { /\.([0-9a-f]{8})[0-9a-f]{40}\.[0-9a-f]{8}\z/ && hex($1) == $opts{pid} } @$files;
            if (!@mine) {
                _usage("for_chunks: no process $opts{pid} in these $run->{title} traces");
            }
            $files = \@mine;
        }
        $! = $errno;
        _for_chunks_files($cb, [@$files], $opts{format}, _xs_opts(\%opts));
        return undef;    # (undef) in list context, as NYTProf's reader returns
    }
    my $file = defined $opts{filename} ? $opts{filename} : 'nytprof.out';
    _with_input($file, \%opts, sub {
        $! = $errno;
        _for_chunks($cb, $_[0], $opts{format}, _xs_opts(\%opts));
    });
    return undef;    # (undef) in list context, as NYTProf's reader returns
}

# what this build can read and write: the libraries it was linked with
sub features {
    my $lib = _libraries();
    my (%read, %write);
    for my $f (@FORMATS) {
        my $use = $f->{library_use};
        my $have = !defined $f->{library} || defined $lib->{ $f->{library} };
        $read{ $f->{name} } = $f->{supported} && ($use ne 'every' || $have) ? 1 : 0;
        $read{"$f->{name}-$f->{library}"} = $f->{supported} && $have ? 1 : 0 if $use eq 'some';
    }
    $write{ $_->{name} } = !defined $_->{library} || defined $lib->{ $_->{library} } ? 1 : 0 for @TARGETS;
    return { libraries => $lib, read => \%read, write => \%write };
}

# what a build without an optional library cannot read: { library => "compressed X files" }
sub _library_notes {
    my %notes; # every format a library serves, in the table's order: "X files and Y files"
    for (grep { defined $_->{library_note} } @FORMATS) {
        push @{ $notes{ $_->{library} } }, $_->{library_note};
    }
    return { map { $_ => join ' and ', @{ $notes{$_} } } keys %notes };
}

sub detect_format {
    my ($file) = @_;
    _check_path('detect_format', 'the file name', $file);
    return _with_input($file, {}, sub { _detect($_[0]) });
}

sub chunk_counts {
    my ($file, %opts) = @_;
    _check_path('chunk_counts', 'the file name', $file);
    _check_opts('chunk_counts', { map { $_ => 1 } qw(format thread pid sample_type salvage progress), @LIMITS }, \%opts);
    return _with_input($file, \%opts, sub { _count($_[0], $opts{format}, _xs_opts(\%opts)) });
}

# detect_format and chunk_counts over one read of the input (a FIFO or
# standard input can be read only once): (\%format_info, \%tag_counts)
sub info {
    my ($file, %opts) = @_;
    _check_path('info', 'the file name', $file);
    _check_opts('info', { map { $_ => 1 } qw(format thread pid sample_type salvage progress), @LIMITS }, \%opts);
    return _with_input($file, \%opts, sub { (_info_of($_[0], %opts))[0, 1] });
}

# info() of a resolved input path: one open and one decode (_info_read);
# _losses_to => TARGET also counts, in that decode, what a conversion to
# TARGET loses (c/losses.c)
sub _info_of {
    my ($path, %opts) = @_;
    my $to_losses = delete $opts{_losses_to};
    my ($info, $counts, $attr, $pids, $lc) = @{ _info_read($path, $opts{format}, _xs_opts(\%opts), $to_losses) };
    my $facts = delete $info->{_facts};
    # a file the decoder read but detection did not name is never shown with an empty format
    Devel::ProfileBridge::Error->throw(format => 'profbridge', class => 'corrupt', file => $path, offset => 0,
        message => 'not a profile this distribution recognises (detection named no format; --format NAME reads it '
            . 'as one)') unless defined $info->{format} || defined $opts{format};
    $info->{threads} = _threads($attr, $pids);
    _run_facts($info, $attr);
    # sampled input: the time reports show (samples x interval) and the run's wall clock
    defined $attr->{$_} and $info->{$_} = 0 + $attr->{$_} for qw(sampled_time_sec run_wall_clock_sec);
    # weights that are neither time nor samples (a heap profile's bytes): shown as what they are
    if (defined(my $unit = $attr->{sample_weight_other_unit})) {
        delete @$info{qw(sampled_time_sec run_wall_clock_sec)};
        my $sum = 0;
        for my $t (@{ $info->{threads} }) {
            next unless defined $t->{samples};
            $sum += $t->{weight} = delete $t->{samples};
        }
        $info->{weight_unit} = $unit;
        $info->{sampled_weight} = $sum;
    }
    # a call graph (a format whose row yields PB_YIELDS_GRAPH): exact or sampled, what wrote it, and its cost's unit; no stacks
    if (defined(my $g = $attr->{call_graph})) {
        $info->{call_graph} = $g;
        $info->{graph_producer} = $attr->{graph_producer} if defined $attr->{graph_producer};
        $info->{graph_total_sec} = delete $info->{sampled_time_sec} if defined $info->{sampled_time_sec};
        delete $info->{run_wall_clock_sec};
        $info->{graph_targets} = Devel::ProfileBridge::_graph_targets();
        for (qw(graph_cost_unit graph_events graph_event graph_total)) { $info->{$_} = $attr->{$_} if defined $attr->{$_} }
    }
    # a format with several sample types: every one ("type/unit"), and the one read
    $info->{sample_types} = [ split /,/, $attr->{sample_types} ] if defined $attr->{sample_types};
    $info->{sample_type} = $attr->{sample_type} if defined $attr->{sample_type};
    return ($info, $counts, $facts, $lc ? _losses_worded($to_losses, $lc) : []);
}

# the run's facts the profiler recorded (a stats trailer), under
# CPython's get_info() names and in its units, as numbers
my %RUN_FACTS = (profile_duration_sec => 'duration_sec', profile_sample_rate => 'sample_rate',
    profile_error_rate => 'error_rate', profile_missed_samples => 'missed_samples');
sub _run_facts {
    my ($info, $attr) = @_;
    for my $k (sort keys %RUN_FACTS) {
        my $v = $attr->{$k};
        $info->{ $RUN_FACTS{$k} } = 0 + $v if defined $v && $v =~ /\A[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\z/;
    }
    return;
}

# the threads (and processes) of a profile, from its PID_START records and
# the attributes the decoders send about them
sub _threads {
    my ($attr, $pids) = @_;
    my @t;
    for my $p (@$pids) {
        my ($pid, $ppid) = @$p;
        my %t = (pid => $pid, ppid => $ppid);
        my $id = $attr->{"thread_id_$pid"};
        $t{id} = $id if defined $id;
        for my $k (grep { defined } $pid, $id) {
            $t{name} //= $attr->{"thread_${k}_name"};
            $t{samples} //= $attr->{"thread_${k}_samples"};
            $t{ns} //= $attr->{"thread_${k}_ns"};
            $t{spans} //= $attr->{"thread_${k}_blocks"};
            $t{process} //= $attr->{"thread_${k}_pid"};
        }
        delete @t{ grep { !defined $t{$_} } keys %t };
        push @t, \%t;
    }
    return \@t;
}

sub dump_json {
    my ($file, %opts) = @_;
    _check_path('dump_json', 'the file name', $file);
    _check_opts('dump_json', { map { $_ => 1 } qw(format thread pid sample_type salvage output progress), @LIMITS }, \%opts);
    return _out_scalar('output', \%opts, sub { dump_json($file, %{ $_[0] }) }) if ref $opts{output} eq 'SCALAR';
    _check_not_input('dump_json', $opts{output}, $file);
    _with_input($file, \%opts, sub {
        _write('dump', 'convert', [ $_[0] ], $opts{format}, _xs_opts(\%opts),
            defined $opts{output} ? $opts{output} : '-', -1);
    });
    return;
}

my %CONVERT_OPTS = map { $_ => 1 } qw(in out format thread pid sample_type compress salvage to progress
    source source_any source_root strip_prefix time_order), @LIMITS;

# convert's and merge's options for finding the profile's source files (and
# time_order) into the XS options $x; relative file names in the profile are
# looked up beside the (first) input $in too (standard input: $stdin_base,
# when given)
sub _source_opts {
    my ($what, $opts, $x, $in, $stdin_base) = @_;
    for my $k (qw(source_root strip_prefix)) {
        next unless defined $opts->{$k};
        my @v = ref $opts->{$k} eq 'ARRAY' ? @{ $opts->{$k} } : ($opts->{$k});
        for (@v) {
            next if defined && !ref && length && !/\0/;
            _usage("$what: $k takes a path or a list of paths (non-empty, no NUL)");
        }
        $x->{$k} = \@v;
    }
    $x->{source} = $opts->{source} ? 1 : 0 if exists $opts->{source};
    $x->{source_any} = $opts->{source_any} ? 1 : 0;
    $x->{time_order} = $opts->{time_order} ? 1 : 0 if exists $opts->{time_order};
    if ($in ne '-') {
        require File::Basename;
        $x->{source_base} = -d $in ? $in : File::Basename::dirname($in);
    } elsif (defined $stdin_base) {
        $x->{source_base} = $stdin_base;
    }
}

sub convert { return _convert_impl(undef, @_) }

# out => \$buffer (output => for dump_json): the writer writes a temporary
# file, whose bytes then become the scalar's value (its old value stays when
# the call fails); $code gets the options with that file as out
sub _out_scalar {
    my ($key, $opts, $code) = @_;
    my $ref = $opts->{$key};
    return $code->($opts) unless ref $ref eq 'SCALAR';
    require File::Temp;
    my $dir = File::Temp->newdir('profbridge-out-XXXXXX', TMPDIR => 1);
    my $guard = Devel::ProfileBridge::_TempGuard->new($dir, "$dir", "$dir/out");
    my @r = $code->({ %$opts, $key => "$dir/out" });
    open my $fh, '<:raw', "$dir/out" or Devel::ProfileBridge::Error->throw(format => 'profbridge', class => 'io',
        file => "$dir/out", message => "cannot read the output back into the scalar: $!");
    local $/;
    my $bytes = <$fh>;
    close $fh;
    $$ref = $bytes // '';
    return wantarray ? @r : $r[0];
}

# convert, and what the conversion could not carry (losses), from one read of
# the input (a FIFO or standard input can be read only once): (\@losses, @convert's)
sub _convert_report {
    my @l;
    my @r = _convert_impl(\@l, @_);
    return (\@l, @r);
}

sub _convert_impl {
    my ($report, %opts) = @_;
    _check_opts('convert', \%CONVERT_OPTS, \%opts);
    _usage('convert: in must be a path (a string), not ' . _ref_what($opts{in})) if ref $opts{in} && !_stringy($opts{in});
    for my $k (qw(in out)) {
        next if defined $opts{$k} && (ref $opts{$k} || length $opts{$k});
        _usage("convert: $k => PATH is required");
    }
    my $to = defined $opts{to} ? $opts{to} : _default_target('convert');
    my $t = $TARGET{$to};
    if (ref $opts{out} eq 'SCALAR') {
        _usage("convert: out => \\\$scalar takes one file's bytes: to => '$to' writes a file per thread (give a path)")
            if $t && $t->{files};
        return _out_scalar('out', \%opts, sub { _convert_impl($report, %{ $_[0] }) });
    }
    if ($opts{salvage} && !($t && $t->{salvage})) {
        # the writers without 'salvage' in their row do not finish a cut stream
        _usage("convert: salvage => 1 is for " . join(', ', map { "to => '$_'" } _targets_for('salvage'))
            . " (and for_chunks), not to => '$to'");
    }
    my $x = _xs_opts(\%opts);
    _source_opts('convert', \%opts, $x, $opts{in}, '.');
    my $level = defined $opts{compress} ? $opts{compress} : -1;
    if ($t && $t->{compress} && defined $opts{compress} && $level !~ /\A[0-9]\z/) {
        _usage("convert: compress must be 0..9, not '$level'");
    }
    if (!$t || !$t->{convert}) {
        _usage("convert: to => '$to' is not supported (known: " . join(', ', _targets_for('convert')) . ")");
    }
    $level = -1 unless $t->{compress};
    my %lopts = map { defined $opts{$_} ? ($_ => $opts{$_}) : () } qw(format thread pid sample_type salvage), @LIMITS;
    _check_not_input('convert', $opts{out}, $opts{in});
    return _with_input($opts{in}, \%opts, sub {
        my ($in) = @_;
        # --report: the losses counted in this decode where the target's
        # driver can (a chunk writer), else in one more decode that only
        # counts; the rules are those of the row the decode is handed
        # (format undef: c/losses.c takes them from it, no sniff first)
        my $lc = $report ? { format => undef } : undef;
        # standard input or a FIFO that one more decode may read: C keeps a copy for it
        $x->{_reread} = 1 if $report && ($in eq '-' || !-f $in);
        my ($samples, @names) = _write($to, 'convert', [$in], $opts{format}, $x, $opts{out}, $level, $lc);
        # an empty profile is said so for every sample target
        warn "$to: warning: " . Devel::ProfileBridge::Error::_esc($opts{in})
            . " holds no stack samples: $t->{empty}\n" if defined $t->{empty} && !$samples;
        my @r = $t->{files} ? @names : (1);
        if ($report) {
            @$report = @{ $lc->{counts} ? _losses_worded($to, $lc->{counts})
                : _losses_worded($to, _loss_counts($in, $lopts{format}, _xs_opts(\%lopts), $lc->{format})) };
        }
        return @r;
    });
}

# run $code with the inputs (each opened by the C side, as _with_input says)
sub _with_inputs {
    my ($files, $opts, $code) = @_;
    return $code->(@$files);
}

sub merge {
    my (%opts) = @_;
    _check_opts('merge', { map { $_ => 1 } qw(in out to compress thread pid sample_type progress source source_any source_root
        strip_prefix jobs time_order), @LIMITS }, \%opts);
    if (defined $opts{jobs} && $opts{jobs} !~ /\A[0-9]{1,3}\z/) {
        _usage("merge: jobs must be a number of processes (0..999), not '$opts{jobs}'");
    }
    my @in = ref $opts{in} eq 'ARRAY' ? @{ $opts{in} } : ();
    if (!@in || grep { !defined || !length || ref } @in) {
        _usage('merge: in => [ FILE, ... ] (one or more paths) is required');
    }
    if (!defined $opts{out} || !ref $opts{out} && !length $opts{out}) {
        _usage('merge: out => PATH is required');
    }
    if (grep({ $_ eq '-' } @in) > 1) {
        _usage("merge: standard input ('-') can be read only once");
    }
    my $to = defined $opts{to} ? $opts{to} : _default_target('merge');
    if (!$TARGET{$to} || !$TARGET{$to}{merge}) {
        _usage("merge: to => '$to' is not supported (known: " . join(', ', _targets_for('merge')) . ")");
    }
    my $level = defined $opts{compress} ? $opts{compress} : -1;
    if (defined $opts{compress} && $level !~ /\A[0-9]\z/) {
        _usage("merge: compress must be 0..9, not '$level'");
    }
    return _out_scalar('out', \%opts, sub { merge(%{ $_[0] }) }) if ref $opts{out} eq 'SCALAR';
    my $x = _xs_opts(\%opts);
    _source_opts('merge', \%opts, $x, $in[0]);
    # relative file names are looked up beside every input too
    require File::Basename;
    my %seen;
    # (not "/": an input there does not make the whole file system a source root)
    my $root = join ':', (stat '/')[0, 1];
    my @dirs = grep { !$seen{$_}++ && join(':', (stat $_)[0, 1]) ne $root }
        map { -d $_ ? $_ : File::Basename::dirname($_) } grep { $_ ne '-' } @in;
    $x->{source_root} = [ @{ $x->{source_root} || [] }, @dirs ] if @dirs;
    $x->{jobs} = $opts{jobs} if $opts{jobs};
    _check_not_input('merge', $opts{out}, @in);
    return _with_inputs(\@in, \%opts, sub { _write($to, 'merge', [@_], undef, $x, $opts{out}, $level); 1 });
}

# What a conversion of $file to $to cannot carry: [ { what, count, note } ]
# (Devel::ProfileBridge/"losses($file, to => $target)")
sub losses {
    my ($file, %opts) = @_;
    my $to = delete $opts{to} // _default_target('convert');
    _check_path('losses', 'the file name', $file);
    _usage('losses: to must be a target name, not ' . _ref_what($to)) if ref $to && !_stringy($to);
    _check_opts('losses', { map { $_ => 1 } qw(format thread pid sample_type salvage progress), @LIMITS }, \%opts);
    _usage("losses: to => '$to' is not a target (known: " . join(', ', _targets_for('convert')) . ")")
        unless $TARGET{$to} && $TARGET{$to}{convert};
    return _with_input($file, \%opts, sub { _losses_of($_[0], $to, %opts) });
}

# info and losses(to => 'nytprof') from one read of the input (profbridge
# info on a FIFO or standard input): (\%format_info, \%tag_counts, \@losses,
# \@facts: how to print the format's facts, [ key, text|list|beside, note ])
sub _info_losses {
    my ($file, %opts) = @_;
    _check_opts('info', { map { $_ => 1 } qw(format thread pid sample_type salvage progress), @LIMITS }, \%opts);
    return _with_input($file, \%opts, sub {
        # what the default target (nytprof.out) cannot carry of a foreign
        # profile, counted in the decode that counts the chunks
        my ($info, $counts, $facts, $l) = _info_of($_[0], %opts, _losses_to => _default_target('convert'));
        return ($info, $counts, $l, $facts);
    });
}

# losses() of a resolved input path: the format row's loss rules and the
# common ones (c/formats.c, c/outputs.c), counted in C in one decode that
# only counts (c/losses.c), worded here
sub _losses_of {
    my ($path, $to, %opts) = @_;
    return _losses_worded($to, _loss_counts($path, $opts{format}, _xs_opts(\%opts), undef));
}

# the losses of the counts c/losses.c made ({ rules => [ { what, fact,
# stacks, notes, count } ], attrs => { NAME => value } }), worded for the
# target's row (what it keeps): [ { what, count, note } ]
sub _losses_worded {
    my ($to, $lc) = @_;
    my $t = $TARGET{$to};
    my $keeps = _keeps($t);
    my $stack_output = grep { $_ eq 'stacks' } @{ $t->{consumes} };
    my @l;
    for my $r (@{ $lc->{rules} }) {
        next if $r->{stacks} && !$stack_output;
        next if defined $r->{fact} && $keeps->{ $r->{fact} } && $keeps->{ $r->{fact} }{whole};
        next unless $r->{count};
        push @l, { what => $r->{what}, count => $r->{count}, note => _loss_note($r, $keeps, $lc->{attrs}) };
    }
    return \@l;
}

# a placeholder's text: {attr:NAME}, {where:TAG} or one of %$v
sub _loss_fill {
    my ($k, $arg, $v, $attrs) = @_;
    return $attrs->{$arg} // '' if $k eq 'attr';
    return join ' and ', map { _keeps($_)->{$arg}{how} // $_->{name} } grep { _keeps($_)->{$arg} } @TARGETS
        if $k eq 'where';
    return $v->{$k} // '';
}

# what target row $t keeps: { fact => { whole => 0|1, how => text } }
sub _keeps {
    my ($t) = @_;
    return $t->{_keeps} //= { map {
        my ($part, $fact, $how) = /\A(~?)([^=]+)(?:=(.*))?\z/s;
        ($fact => { whole => !$part, how => $how });
    } grep { length } split /;/, $t->{keeps} };
}

# the note of rule $r for a target that keeps %$keeps: its first alternative
# whose tag the target keeps, placeholders filled
sub _loss_note {
    my ($r, $keeps, $attrs) = @_;
    my ($tag, $text);
    for (split /\n/, $r->{notes}) {
        ($tag, $text) = /\A([^=]+)=(.*)\z/s;
        last if $tag eq '*' || $keeps->{$tag};
    }
    my @k = sort { $a->{name} cmp $b->{name} } grep {
        my $kp = _keeps($_)->{ $r->{fact} // '' }; $kp && $kp->{whole} } @TARGETS;
    my $how = sub { my $h = _keeps($_[0])->{ $r->{fact} }{how}; defined $h ? " ($h)" : '' };
    my $to = join ' and ', map { "--to $_->{name}" } @k;
    my %v = (
        how => $tag ne '*' ? $keeps->{$tag}{how} // '' : '',
        to => $to,
        to_keep => $to . (@k == 1 ? ' keeps them' : ' keep them'),
        keepers => @k == 1 ? "--to $k[0]{name} keeps them" . $how->($k[0])
            : join(' and ', map { "--to $_->{name}" . $how->($_) } @k) . ' keep them',
    );
    $text =~ s/\{(\w+)(?::([^\}]*))?\}/_loss_fill($1, $2, \%v, $attrs)/ge;
    return $text;
}

sub diff {
    my (%opts) = @_;
    _check_opts('diff', { map { $_ => 1 } qw(before after out to thread pid sample_type progress), @LIMITS }, \%opts);
    for my $k (qw(before after out)) {
        next if defined $opts{$k} && (ref $opts{$k} || length $opts{$k});
        _usage("diff: $k => PATH is required");
    }
    my $to = defined $opts{to} ? $opts{to} : _default_target('diff');
    if (!$TARGET{$to} || !$TARGET{$to}{diff}) {
        _usage("diff: to => '$to' is not supported (known: " . join(', ', _targets_for('diff')) . ")");
    }
    if ($opts{before} eq '-' && $opts{after} eq '-') {
        _usage("diff: standard input can be read only once (before and after are both '-')");
    }
    return _out_scalar('out', \%opts, sub { diff(%{ $_[0] }) }) if ref $opts{out} eq 'SCALAR';
    my $x = _xs_opts(\%opts);
    _check_not_input('diff', $opts{out}, @opts{qw(before after)});
    return _with_input($opts{before}, \%opts, sub {
        my ($b) = @_;
        _with_input($opts{after}, \%opts, sub {
            _write($to, 'diff', [ $b, $_[0] ], undef, $x, $opts{out}, -1);
        });
        return 1;
    });
}

1;
__END__

=encoding utf8

=head1 NAME

Devel::ProfileBridge - read Python, C++ and Perl profiles with Devel::NYTProf's tools

=head1 SYNOPSIS

  use Devel::ProfileBridge::ReadStream qw(for_chunks);

  for_chunks {
      my $tag = shift;
      print join(' ', $tag, @_), "\n";
  } filename => 'nytprof.out';

  my $info = Devel::ProfileBridge::detect_format('profile.bin');
  # { format => 'tachyon', version => '1', compressed => 1, compression => 'zstd',
  #   byte_order => 'little', supported => 1 }

  my $counts = Devel::ProfileBridge::chunk_counts('nytprof.out');
  # { VERSION => 1, TIME_LINE => 41640058, ... }   decoded in C, no Perl call per chunk

=head1 DESCRIPTION

Devel::ProfileBridge lets you look at profiles from other languages and
profilers with the tools you know from L<Devel::NYTProf>.  Give it a
profile written by CPython's sampling profiler, EasyProfiler (C++),
Devel::StatProfiler, Go's pprof, Node or Chrome (V8 C<.cpuprofile>),
Pynytprof or any folded-stacks tool, and it either writes a real
F<nytprof.out> that C<nytprofhtml> turns into its usual report (the
program's source beside the numbers, a flame graph, call stacks), or
converts it to collapsed stacks, pprof or speedscope.  From the shell
that is L<profbridge>:

  profbridge convert profile.bin -o profile.nytprof
  nytprofhtml -f profile.nytprof

From Perl, L</convert(in =E<gt> $file, out =E<gt> $path, %options)> does the
same, and L<Devel::ProfileBridge::ReadStream>'s C<for_chunks> presents any
of these files as the chunk stream of L<Devel::NYTProf::ReadStream>, so
callbacks written for NYTProf work unchanged.  Decoding is done in plain C
(F<c/> in the distribution), and every input is treated as untrusted
(L</LIMITS>, L</ERRORS>).

Formats are recognised by their content, never by the file's name:

=over

=item nytprof

Devel::NYTProf v5 files, plain or zlib-compressed after the C<z> tag
(NYTProf 6.x).  The chunk stream is identical to NYTProf 6.12's own reader.

=item tachyon

CPython's sampling profiler binary files (C<python -m profiling.sampling
--binary>), format version 1, either byte order, plain or zstd-compressed,
from Python 3.15 and its pre-releases (L</Tachyon (CPython)> has the
details of the header layouts).

=item easyprofiler

EasyProfiler C<.prof> captures of every version its reader accepts (header
layouts 0.1.0-1.0.0, 1.0.1-1.2.x, 1.3.x, 2.0.x, 2.1.x and later)
(the format EasyProfiler's own reader, C<fillTreesFromFile>, reads).

=item statprofiler

Devel::StatProfiler traces (Snappy packets), one file or a whole genealogy
(the record format of Devel::StatProfiler 0.56).

=item pynytprof

Files written by Pynytprof in any of its four historical dialects (A:
binary magic; B: banner and framed chunks; C: raw C<P> and a statement log;
D: NYTProf tokens with fixed-width pids), none of which NYTProf itself can
load.

=item pprof

Go's C<profile.proto> (C<runtime/pprof>, pprof-rs, Pyroscope and Parca
exports), gzipped or not (L</pprof (Go and others)>).

=item v8

V8 C<.cpuprofile> JSON (C<node --cpu-prof>, Chrome DevTools), when this
build has libyajl (L</V8 .cpuprofile (Node, Chrome DevTools)>).

=item folded

Brendan Gregg's folded ("collapsed") stacks, C<frame;frame;... WEIGHT> per
line, as the C<stackcollapse-*.pl> scripts, inferno, py-spy C<--format raw>,
rbspy, C<nytprofcalls>, CPython's C<profiling.sampling replay --collapsed>
and our own C<< to => 'collapsed' >> write them.  Recognised by content,
never by name: every non-blank line in the first 4 KB ends in white space
and an integer, with no control bytes (other formats are tried first).

=back

C<formats()> returns C<< { name => 1 if this build decodes it } >>.

=head1 MAPPING FOREIGN PROFILES

Every foreign profile becomes the NYTProf chunks that C<nytprofhtml> needs
(L</CHUNKS>): C<ATTRIBUTE>s first (C<ticks_per_sec>,
C<nv_size=8>, C<source_format>, C<source_format_version>, and what the file
says about its origin), C<NEW_FID> for each file in order of first use
(fids 1..N), C<TIME_LINE>s in file order, then C<SUB_INFO> and
C<SUB_CALLERS> (times in seconds) and C<PID_END>.  Threads are never merged:
each is its own C<PID_START>/C<PID_END> span, and C<< thread => $id >>
selects one.  C<nytprofhtml> adds the spans up, so its "profiled for" is
the sum over threads.  Formats with stacks (Tachyon, StatProfiler,
EasyProfiler) also carry NYTProf's call events (C<OPTION calls=1> and one
C<SUB_RETURN> per node of each thread's call tree), which C<nytprofcalls>
and C<nytprofhtml>'s flame graph read (L</NYTPROFHTML REPORTS>).  No new
tags are invented.

=head2 Tachyon (CPython)

The file is the format of CPython's
C<Modules/_remote_debugging/binary_io.h>.  Both 64-byte header layouts that
share version 1 are read: the pre-release one (u32 sample count at offset
28) and the one Python 3.15.0 writes (CPython PR #153425: u64 sample count
at 28, every later field 4 bytes further on), with the 32-bit field at
offset 60 read as CPython 3.15.2's reader reads it: bits 0-2 the profiling
mode + 1 (0 none; 1 wall, 2 cpu, 3 gil, 4 all, 5 exception; 6 and 7 are a
C<corrupt> error at byte 60, as CPython refuses them), bit 3 "capture
features recorded", bits 4-8 the features (C<all_threads> 1, C<native> 2,
C<gc> 4, C<opcodes> 8, C<blocking> 16), higher bits ignored.  The layout is
decided from the header's own consistency (reserved bytes 56..63 zero in
the old layout, table offsets after the header, strings before frames,
both before the footer); a header consistent in neither is a C<corrupt>
error at byte 28.  The C<header_layout> attribute (C<3.14> or C<3.15>),
C<profiling_mode> (C<wall>, C<cpu>, C<gil>, C<all>, C<exception>),
C<capture_features> (e.g. C<all_threads,gc>) and C<profiling_mode_field>
(the raw field) say which.

=over

=item units

C<ticks_per_sec=1000000> (µs).  Each sample gives one C<TIME_LINE> on the
innermost frame's line, ticks = sample interval (µs) × weight.  C<SUB_CALLERS>
per caller→callee pair on a stack: inclusive time = samples containing the
edge (outermost activation only; recursive activations go to the recursive
time, as NYTProf does), exclusive = samples where the callee is innermost,
recursion depth, and a call count inferred from stack changes between
consecutive samples of a thread (a frame that appears at a depth where it
was not is a new call).

=item names

A frame's package comes from its file: C<pkg/mod.py> gives C<pkg::mod>
(relative to the last C<site-packages/>, C<dist-packages/> or
C<lib/pythonX.Y/>, else the base name), C<pkg/__init__.py> gives C<pkg>,
C<< <frozen a.b> >> gives C<a::b>, other C<< <...> >> names give C<main>.
The qualname's dots become C<::>: C<Class.method> in C<mod.py> is
C<mod::Class::method>.  Synthetic frames (file C<~>: C<< <GC> >>,
C<< <native> >>) share one fake fid (flag IS_FAKE) whose name says what it
is: C<(frames the profiler adds, no source)> (every format's synthetic frames are in it).  Real files
get flags VIA_STMT|VIA_SUB; C<convert> embeds their source when it finds
it (L</Source>).  Top-level frames are called by C<main::RUNTIME>, whose
C<SUB_INFO> is in the program's file (C<application>), as NYTProf puts it
in the script.  These
sub names are what the chunks and nytprof.out carry; the stack outputs show
CPython's own names (L</NAMES IN EACH TARGET>).

=item threads

Each (thread id, interpreter id) pair becomes pid 1, 2, ... in order of
first appearance (ppid 0); C<ATTRIBUTE thread_id_E<lt>pidE<gt>> holds the
thread id (C<tid/iid> when the interpreter id is not 0).  C<< thread => $tid >>
takes the CPython thread id.

=item attributes

C<python_version>, C<sample_interval_us>, C<profiler>,
C<profiler_version> and C<clock> (the profiling mode when the 3.15 header
stores it), C<profiling_mode>, C<capture_features> and
C<profiling_mode_field> (the header's field at 60, see L</tachyon>),
C<start_time_us> (the header's start: a B<monotonic> clock, time
since boot), C<basetime> (wall-clock seconds: the file's modification time,
written when profiling ended, minus the profile's duration from the stats
trailer, else samples × interval; for a profile read from memory, the
monotonic seconds), C<application>
(the file of the C<< <module> >> frame nearest the root that is not the
profiler's own, i.e. the program, F</srv/app/prog.py>, not
F<profiling/sampling/_sync_coordinator.py>, whose frames are dropped: see
L<Devel::ProfileBridge::Formats>;
else the file name; sent at the end, when known), the stats trailer's figures in CPython's units when the
file has one (every 3.15.2 file does): C<profile_duration_sec> (s) and
C<profile_sample_rate> (Hz) always, C<profile_error_rate> (% of the
profiler's sampling attempts that failed) and C<profile_missed_samples> (%
of the samples the run's length calls for that were never taken) when the
trailer's flags word says so (bit 0, bit 1), C<opcode_samples> (samples
whose innermost frame records an opcode: files made with C<--opcodes>) and
C<sample_status_counts> (status byte histogram, C<status:count,...>).

=item opcodes and thread status

The stack outputs that can carry them get them per sample.  pprof: the
label C<opcode> (CPython 3.15's name of the instruction executing in the
innermost frame, e.g. C<CALL_PY_EXACT_ARGS>, as the profiler's own
C<opcode_utils> names it; C<< <N> >> for a number it does not name and for
files of the pre-release layout) and one label C<thread_status> per flag of
the sample's status byte (C<has_gil>, C<on_cpu>, C<unknown>,
C<gil_requested>, C<has_exception>, C<main_thread>: CPython's
C<THREAD_STATUS_*>), so C<go tool pprof -tags> and C<-tagfocus> select by
them.  StatProfiler records: the opcode name is the sample's op name.
nytprof.out, collapsed and speedscope have no place for either (only the
status histogram survives, as above); L<< /"losses($file, to => $target)" >> counts
what a target drops.
C<merge> does not carry them.

=back

=head2 EasyProfiler (C++)

=over

=item units

C<ticks_per_sec=1000000000> (ns).  Timestamps are converted exactly as the
real reader does (C<(u64)(t * (1e9 / cpu_frequency))> per timestamp), so
counts, inclusive and exclusive ns equal its numbers.  Each block gives one
C<TIME_LINE> at its descriptor's line with its exclusive time, in
completion order (split over several chunks when it exceeds the I32 tick
range); events and values count as calls with zero time.

=item names

A descriptor (or run-time) name that has a package, a C<::> outside
C<()>, C<< <> >> and C<{}>, is kept (C<ns::C::f(int)>, C<<
ns::Box<std::pair<int, int>>::get() const >>).  Others go into package
C<main>, whatever the thread (C<< operator<<(std::ostream&, const T&) >> is
C<main::operator[[(std.ostream&, const T&)>, C<< biggest<std::string> >>
is C<main::biggest[std.string]>: the C<std::> inside brackets is no
package):
block C<work_unit> is the sub C<main::work_unit> in every thread, so its
calls, inclusive and exclusive time are the sums over the threads, as
EasyProfiler's own per-name statistics are, and every block name is one
row in C<nytprofhtml>'s list of subs.  Each distinct run-time name is its
own sub.  A sub's C<SUB_INFO> (file, first line) is that of the first
descriptor giving it its name, once per file.  A call site is the caller's
descriptor file and line.  The stack outputs show the block name alone, as
EasyProfiler does (L</NAMES IN EACH TARGET>).

Threads stay apart by their own root sub C<E<lt>packageE<gt>::RUNTIME>,
the package being C<main> for the thread named C<Main>,
C<thread_E<lt>tidE<gt>> for an unnamed thread, else the thread name with
non-word characters turned into C<_> (C<Worker_1::RUNTIME> for
C<Worker 1>): it calls the thread's top-level blocks (C<SUB_CALLERS>, at
line 0 of the block's file: EasyProfiler does not record where the program
entered a top-level block, and the block's own line holds the calls it
makes) and is the outermost frame of each of the thread's stacks in the
call events, so C<nytprofcalls> prints
C<Worker_1::RUNTIME;main::worker.iteration;main::work_unit> and
C<nytprofhtml>'s flame graph has one tower per thread.  The main thread's
root is C<main::RUNTIME>, which, as in a Perl profile, calls the top-level
blocks but is no frame: its stacks start at those blocks
(C<main::Frame;main::middle>).  With no calls of its own a root is not in
the report's list of subs.  C<merge> unifies subs
by name in the same way (its stacks start at the blocks).

=item threads

Each thread is one span with pid = its tid's low 32 bits and ppid = the
file's pid (0 for the main thread); C<< thread => $name_or_tid >>.
Attributes C<application> (the source file of the first block descriptor:
EasyProfiler registers a block when the program first runs it, so it is
the program's, F<ep_basic.cpp>; the file records no program name; without
descriptors the input's base name), C<cpu_frequency>, C<pid>,
C<thread_E<lt>tidE<gt>_name> (and C<_blocks>, C<_max_depth>, ...),
C<bookmark_E<lt>iE<gt>_pos_ns/_text/_color>.

=item values

Not dropped: each EASY_VALUE becomes one C<COMMENT> C<value {JSON}\n> with
the thread, time (ns), name, type, array flag, id and the value (or C<hex>
when the data does not fit its type).

=item differences from the real reader, on purpose

A file with 0 blocks (dumped while a top-level block was open, upstream
#135/#218) is read with a warning instead of refused; pre-1.3 context
switches are read with their 32-bit target tid instead of mis-read; a record
count that differs from the header is accepted with a warning.

=back

=head2 StatProfiler (Perl)

=over

=item units

C<ticks_per_sec=1000000> (µs); ticks = weight × the trace's interval.

=item frames

Sub frames are subs C<package::name> whose C<SUB_INFO> first line comes from
the record; xsub frames are subs with lines 0,0 (as NYTProf marks xsubs);
main and eval frames are C<main::RUNTIME>, in their own fids (C<(eval N)>
for evals), and are not calls: a sub called from them is called by the
enclosing sub.  Eval source carried by the trace becomes C<SRC_LINE>s of the
eval's fid.  Sections become C<COMMENT>s; custom metadata becomes
C<ATTRIBUTE metadata:E<lt>keyE<gt>>.

=item names and encodings

StatProfiler keeps a UTF-8 flag per string.  Package and sub are joined as
Perl joins them: a part without the flag is Latin-1 and is upgraded, so
C<Café> (stored as Latin-1) and C<λάμδα> (stored as UTF-8) give the
character string C<Café::λάμδα>, C<eq> to what C<Devel::StatProfiler::Reader>
returns.  Every name and file name reaches the chunks, and so every writer,
as valid UTF-8: Latin-1 is upgraded, and bytes that are not valid UTF-8 in a
string that claims to be are escaped visibly as C<\xNN> (never passed on
raw).  StatProfiler records written from a StatProfiler trace keep each
string's own flag.

=item stacks cut at the depth limit

StatProfiler records at most C<stack_depth> frames (default 20) from the
innermost; the main program's frame is added only when the limit leaves room.
A sample with exactly C<stack_depth> frames whose outermost is not a main frame
was cut there: it gets the pseudo-frame C<main::(truncated)> (a synthetic sub
in the fake fid C<(frames the profiler adds, no source)>, line 0, called by C<main::RUNTIME>) outermost, in every
view (F<nytprof.out>, collapsed, pprof, speedscope), so the cut stacks hang
under it instead of each becoming a root called "at" the first line of its
outermost sub (which mixed made-up calls into that line's call site and showed
negative times such as C<457ms+-2.00ms>).  StatProfiler records written from a
trace keep the stack as the file holds it.

=item frameless samples

A sample that caught no Perl frame at all (the profiler fired outside any
Perl code) counts, as C<Devel::StatProfiler::Reader> counts it: its weight
is a C<TIME_LINE> and the exclusive time of the pseudo-sub
C<main::(no frame)> (a synthetic sub in the fake fid of synthetic frames, line 0, called
by C<main::RUNTIME>), a C<main::(no frame)> stack in collapsed output, and
an empty sample again in StatProfiler records.  Totals therefore equal the
real reader's total weight.  The same holds for a Tachyon sample with an
empty stack.

=item reader quirks

We keep every frame the file holds: the real reader's C<qeval:E<lt>idE<gt>/>
renaming of eval files and its dropping of a main/eval frame after a
C<BEGIN> sub frame (on perl 5.36 and later) are not reproduced.

=item genealogies

C<< files => [...] >>, a directory, or a template (C<dir/statprof.out>)
reads a whole trace: rotated files in ordinal order, each process (genealogy
id) its own span with pid = the id's pid word and ppid = the parent's.

A run is one profile everywhere: C<convert> (every target),
C<chunk_counts>, C<dump_json>, C<detect_format> (which adds C<run_files>)
and C<for_chunks> accept the run's directory, and all but C<for_chunks>
(which stays a drop-in that reads the one file it is given, see
C<< files => >>) also the first file of its root process
(C<NAME.E<lt>idE<gt>.00000001> with a zero parent id): that root's
genealogy is read, its rotated files and every descendant process.  Any
other trace file is read alone.  C<< pid => PID >> keeps one process (the
id's pid word); a PID that is not in the run is an C<unsupported> error
naming the run's processes.  Resolving a run (which files belong to it,
parents before children) takes time linear in its number of traces, in
whatever order they are stored.

Each trace file is read once.  In C<< files => [...] >> a file given twice
(the same path, or two paths to one file: same device and inode) is read
once; two different files with the same trace id and ordinal are a
C<corrupt> error.  C<merge> reads every trace file at most once however its
inputs name them: a run's first file plus its members (what
C<profbridge merge trace.out.*> hands over), a directory plus its files,
or one file by two paths all give each trace once (the input that stands
for the most trace files is read; an input all of whose traces it covers
adds nothing).  Two inputs that share some trace files but not all (two
directories holding the same parent's files and different children) are
refused with a C<usage> error naming the input.  This is for StatProfiler
traces only: any other profile given twice to C<merge> is counted twice.

=back

=head2 Folded stacks

=over

=item units

A line's weight is taken as it is written: a count whose unit the file does
not say (CPython's are samples, C<nytprofcalls>' NYTProf ticks, ours the
source's weights: samples, or ns for Perl and merged profiles).  No sample
interval is claimed (no C<sample_interval_us>).  In the chunks one unit is
one tick at C<ticks_per_sec=1000000>, so C<nytprofhtml> shows a weight of N
as N µs; each line is one C<TIME_LINE> (line 0 for frames without one) and
C<SUB_CALLERS> as for Tachyon.  The stack outputs keep the numbers:
collapsed writes them back unchanged, pprof as C<samples/count> (its
C<nanoseconds> values 0, so C<default_sample_type> is C<samples>), speedscope as sample counts, Devel::StatProfiler
traces as sample weights (one trace per thread); C<merge>, which adds
time in ns, takes one unit as 1 ns, as for any input without an interval.

=item names

A frame C<file:func:line> (CPython's shape: a non-empty file before the
first C<:>, a function up to the last C<:>, a line of 1-9 digits, no C<::>)
is that function in that file at that line, named as for Tachyon: its
package the file's stem (C<threading.py> gives C<threading>,
C<< <frozen runpy> >> C<runpy>), its dots as C<::>
(C<threading::Thread::run>); the stack outputs show the function
(C<Thread.run>).  Files named C<< <...> >> are fake fids.  Any other frame is
a sub name as written, with no file: C<Pkg::sub> as it is, C<< <GC> >> and
other C<< <...> >> names synthetic frames (the fake fid C<(frames the profiler adds, no source)>), anything else
C<main::name>; the stack outputs show it unchanged.  C<\xHH> in a frame is
the byte HH (how our collapsed output escapes C<;>, C<\>, CR, LF and NUL).
Names are UTF-8, as pprof's, V8's and StatProfiler's: a byte that does not
start a valid UTF-8 sequence is C<\xNN> in every output (C<caf\xE9>, the
same text in nytprof.out's sub name, pprof, speedscope and collapsed, which
reads back as the byte), never Latin-1-upgraded.  A UTF-8 byte order mark at
the start of the file is skipped.

=item folded in, folded out

C<< to => 'collapsed' >> of folded stacks gives the input's own lines: every
frame exactly as written (CPython's C<file:func:line>, escapes and all; a
byte that is not UTF-8 as C<\xNN>), each line's root frames as written
(C<tid:5081>, C<pid:7;tid:1>, py-spy's; none where the line had none), the
weights of identical lines summed, lines sorted by weight then text (as
CPython sorts them: CPython's own files and ours come back byte for byte).
A C<merge> or C<diff> of folded inputs keeps the frames as written (a merge
names threads C<tid:LABEL>; a diff merges them).

=item threads

Optional root frames name a process and a thread: C<pid:P> or py-spy's
C<process P:"command">, then C<tid:T> (CPython, ours) or py-spy's
C<thread (T)>.  Each distinct root is a thread (pid 1, 2, ... in order of
first use), labelled C<T>, or C<P/T> with a process; lines without a root
are one more thread.  C<< thread => $id >> takes the thread whose C<T> is
that number (decimal or C<0x>), or whose whole label is that text.

=item two columns (differential)

C<frame;... BEFORE AFTER>, the form C<difffolded.pl> and our C<diff> write
and C<flamegraph.pl> draws as a differential graph, is read as two sample
types, C<before/samples> and C<after/samples> (ATTRIBUTEs C<sample_types> and
C<sample_type>; C<info> lists them): C<< sample_type => 'before' >> reads
the first column, C<'after'> (the default: the last, as for pprof, and the
widths C<flamegraph.pl> draws) the second; another name is an
C<unsupported> error.  The first stack line decides the form (a line that
ends in two numbers has two columns, as C<flamegraph.pl> reads it); a later
line with the other number of columns is C<corrupt>.

=item attributes

C<application> (the file name) and C<basetime> (the file's modification
time: a folded file holds no date).

=item errors and limits

A line that does not end in white space and a weight, starts with white
space, holds a control byte or an empty frame, or has another number of
weight columns than the first line, is C<corrupt> at its byte; a
weight past 2^63-1, a line longer than C<max_record_size>, more frames than
C<max_stack_depth> or more unique frames than C<max_frames> is C<limit>.
Memory grows with the longest line, unique frames and threads, never with
the number of lines.  Lines are counted in the messages (C<line 12 ...>).
There is nothing to salvage: a file cut short ends at its last line.

=back

=head2 perf script text (Linux perf)

=over

=item units

A sample's weight is its period as C<perf script> prints it (what
C<stackcollapse-perf.pl> and C<perf report> sum): ns of CPU time for
C<cpu-clock> and C<task-clock> (ATTRIBUTE C<sample_weight_unit=ns>, so a
C<merge> adds them as time), a count of the event for any other event
(cycles, instructions, page faults: shown as 1 ns per count, as pprof's
counts are), 1 per sample when C<-F> printed no period; ATTRIBUTE
C<sample_weight> says which.  In the chunks one unit is one tick at
C<ticks_per_sec=1000000000>, or at C<ticks_per_sec=1000000> where no period
is printed (a sample shows as 1 µs in C<nytprofhtml>, as a folded count
does).  Sample times (C<secs.frac:>) are kept, in µs
for the stack outputs.

=item events

A file of several events (C<perf record -e a,b>) is read one event at a
time: C<< sample_type => $event >> (C<--sample-type>), else the first event
the C<# event :> lines of a C<perf script --header> block declare, else the
first event met.  C<info> lists them all (C<sample_types>); ATTRIBUTE
C<perf_other_event_samples> counts the samples left out.  An event with no
samples in the file is an C<unsupported> error naming the file's events.

=item names and threads

Frames are named as C<stackcollapse-perf.pl> names them (its C<--tid>
output is our collapsed output without the C<tid:> prefix;
L<Devel::ProfileBridge::Formats/perf: Linux perf's perf script text> has the
rules and the two differences), C++ and Rust names as perf demangles them.
Each distinct comm, pid and tid is a thread labelled C<comm-pid/tid> (C<?>
for a pid not printed); C<< thread => $tid >> takes a tid, C<< thread =>
$name >> a label or a comm.

=item attributes

C<profiler> (C<perf script>), C<application> (the file name),
C<basetime> (the file's modification time), C<sample_type>,
C<sample_types>, C<sample_weight>, C<total_samples>, and from a
C<--header> block C<cmdline> and C<perf_version>.

=item errors and limits

A line that is neither a sample's header, a frame under one, a blank line
nor a C<#> line before the first sample, or that holds a control byte, is
C<corrupt> at its byte, as is a sample without a period after samples with
one (or the other way round); a line longer than C<max_record_size>, a
sample with more frames than C<max_stack_depth>, more unique symbols than
C<max_frames> or more threads than C<max_strings> is C<limit>.  Memory grows
with the longest line, unique symbols, threads and events, never with the
number of samples.  There is nothing to salvage: a file cut short ends at
its last sample.

=back

=head2 V8 .cpuprofile (Node, Chrome DevTools)

=over

=item units

C<ticks_per_sec=1000000000> (ns); a sample's ticks are the µs to the next
sample (C<timeDeltas[i+1]>, the last sample to C<endTime>) × 1000, the rule
of speedscope's importer (which gives the last sample 0).  The stack outputs
carry ns weights (C<sample_weight_unit=ns>: pprof C<wall/nanoseconds>,
collapsed ns).  One thread, C<main> (pid 1); C<--thread 0> or
C<--thread main> select it.

=item frames

Each node of the profile's tree is a frame: sub C<package::name> (the
package from the url, L<Devel::ProfileBridge::Formats/v8>), file the url
(C<file://> dropped), line C<lineNumber + 1>.  C<(root)> is not a frame:
the outermost frames are called by C<main::RUNTIME>.  C<(program)>,
C<(idle)>, C<(garbage collector)> and functions without a url are
synthetic subs C<main::(program)> ... in the fake fid C<(frames the profiler adds, no source)>; their time is
in the ATTRIBUTEs C<v8_program_ns>, C<v8_idle_ns>, C<v8_gc_ns>.  Collapsed,
pprof and speedscope show V8's own names (C<fib>, C<(anonymous)>,
C<(garbage collector)>).

=item attributes

C<application> (the base name of the first C<file:> script in node order,
as C<node app.js> names it; the profile does not name the program), C<basetime> (the file's mtime less the profile's
length: C<startTime> is a monotonic clock), C<profile_duration_sec>
(C<endTime - startTime>), C<v8_nodes>, C<v8_samples>,
C<v8_column_frames> and C<v8_position_ticks> (what no target carries:
L</"losses($file, to =E<gt> $target)">).

=back

=head2 Pynytprof

C<source_dialect> says which of A-D was read.  Files become fids (fid 0 is
fid 1); a path that dialect C lost is named
C<pynytprof-fidE<lt>NE<gt>-path-not-recorded> with an
C<ATTRIBUTE source_path_lost_fidE<lt>NE<gt>>.  NYTProf counts one statement
per C<TIME_LINE> (a C<DISCOUNT> makes the next one count 0), so a line run N
times becomes N C<TIME_LINE>s sharing its exclusive ticks; inclusive ticks
are kept as C<ATTRIBUTE pynytprof_inc_ticks:E<lt>fidE<gt>:E<lt>lineE<gt>>.
Dialect C's statement log orders them.  Python names become
C<main::name>.  C<PID_START>/C<PID_END> are synthesised where a dialect
lacks them.

Call edges (B, C) become C<SUB_CALLERS> as NYTProf counts calls.  Pynytprof
times each call on its own, so a recursive call's time is also inside the
call that made it.  A sub's exclusive time is exact: the time of its calls
minus the time of the calls they made (0 where that is negative: the main
program, whose own call Pynytprof never times).  A self edge (C<f -E<gt> f>)
is recursion: inclusive 0, its time as C<reci_time>, as NYTProf records a
call into a sub already running.  The exclusive time is shared among a
sub's callers by their time, or, for a recursive sub, by call count (every
call taken to cost the same).  The run lasts at least as long as all lines'
exclusive time and all subs' exclusive time, so no sub exceeds it.  Where the
header says C<application=-e> (dialect B always does), the program's path
(its first file) is the application, which C<nytprofhtml> shows as the
report's title.

What each dialect lacks, and what the report then shows:

=over

=item A

No sub data (its C<D> and C<C> chunks are empty): no subs, no calls, no
flame graph (C<calls=0>); a line's inclusive time equals its exclusive time.

=item B

Sub names are Python's C<co_name> without class or module, and a sub has no
definition lines.  When C<convert> embeds the program (found as under
L</Source>), each name defined there once by C<def>, C<async def> or C<class>
gets that fid and its lines (from its first decorator or its header line to
the block's last line with code, by indentation), and C<E<lt>moduleE<gt>> the
whole program: C<nytprofhtml> shows them as subs, not as xsubs.  Names
defined more than once (the same method name in two classes: the file
merges them), comprehensions and lambdas (C<E<lt>listcompE<gt>>,
C<E<lt>lambdaE<gt>>), code outside the program (runpy's C<_run_code>), and
every sub when the source is not found or C<< source => 0 >>, keep lines 0-0
and are shown as xsubs.  Call edges have no call line: every call is at
line 0 ("Profile data that couldn't be associated with a specific line").
No recursion depth is recorded (C<rec_depth> 0), so C<nytprofhtml> does not
print its "recursion: max depth" note.

=item C

As B, and the file's path and sub names are not in the file: the file is
C<pynytprof-fidE<lt>NE<gt>-path-not-recorded>, subs are
C<main::pynytprof_sid_E<lt>sidE<gt>>, so neither source nor definition lines
can be found.

=item D

NYTProf tokens: sub definitions (C<s>) and call edges (C<c>) keep the lines
they carry; but the files Pynytprof wrote in this dialect hold no statement
or sub data at all (an empty report).

=back

=head2 pprof (Go and others)

=over

=item units

C<ticks_per_sec=1000000000> (ns).  The weight of a sample is its value of
the sample type read (L<Devel::ProfileBridge::Formats/pprof: pprof's
profile.proto (Go and others)>): a time unit (C<nanoseconds>,
C<microseconds>, C<milliseconds>, C<seconds>) becomes ns
(C<ATTRIBUTE sample_weight_unit=ns>, as for a merge); a count or a size
(C<count>, C<bytes>) stays as it is and one unit is shown as 1 ns in
C<nytprof.out>.  Samples of weight 0 (a heap profile's freed allocations,
for C<inuse_*>) carry nothing and are left out.  C<TIME_LINE>,
C<SUB_CALLERS> and call events as for Tachyon, in ns.

=item frames

Each C<Line> of each C<Location> of a sample, leaf first, is a frame: a
location with several lines (inlined calls) gives one frame per line, the
inlined callee first, in the order C<go tool pprof -traces> lists them.
The function's name, file and line; its start line is the sub's first line.
The stack outputs show the name as pprof does (C<main.leafHash>,
C<runtime/pprof.Do>, C<example.com/pkg.(*T).Method>); C<nytprof.out> and
the chunks a Perl sub name made from Go's: the package path up to the
first C<.> after the last C</>, C</> read as C<::>, then the rest
(C<main::leafHash>, C<runtime::pprof::Do>,
C<example.com::pkg::(*T).Method>); a name of another shape (C++, Rust) is
in C<main>.  A location without lines (an unsymbolized address) is
C<0xADDRESS> in its mapping's file.

=item threads

A sample's labels C<thread> or C<tid> (a string or a number; C<thread>
wins) name its thread, C<pid> its process; samples with none are thread
C<main>.  Each (thread, process) pair becomes pid 1, 2, ... in order of
first appearance; C<ATTRIBUTE thread_id_E<lt>pidE<gt>> holds the thread
label, C<thread_E<lt>pidE<gt>_pid> the process.  C<< thread => ... >>
takes a thread label (a number or a name).  Go's C<pprof.Do> /
C<pprof.Labels("thread", ...)> name goroutines this way.

=item attributes

C<profiler> (C<pprof (profile.proto)>), C<compression>, C<sample_types>
(every C<type/unit>), C<sample_type> (the one read),
C<default_sample_type>, C<period> and C<period_type>, C<time_nanos> and
C<basetime> (its seconds: the date), C<duration_nanos> and
C<profile_duration_sec>, C<clock> (C<cpu> for a C<cpu> sample type, else
C<wall>, for time units), C<comment> (C<comment_1>, ...), C<drop_frames>,
C<keep_frames>, and at the end C<application> (the base name of the first
mapping's file, the program, as C<go tool pprof>'s C<File:> line shows it)
and C<total_samples>.

=back

=head1 PERL PROFILES AS STACKS

The stack outputs (C<< to => 'collapsed' >>, C<'pprof'>, C<'speedscope'>,
L</merge(in =E<gt> [ $file, ... ], out =E<gt> $path, %options)> and
L</diff(before =E<gt> $file, after =E<gt> $file, out =E<gt> $path, %options)>)
read NYTProf files through their call events (C<SUB_RETURN>, written with
NYTProf's C<calls> option, on by default): the same stacks, with the same
exclusive ticks, that C<nytprofcalls> and C<nytprofhtml>'s flame graph show
(F<c/chunk_stacks.c>; the main program is not a frame, as in
C<nytprofcalls>).  Weights are nanoseconds (ticks × 10^9 / C<ticks_per_sec>);
a frame's file and line are its sub's C<SUB_INFO> fid and first line.  A
file without call events (C<calls=0>, and every Pynytprof file) gives
one-frame stacks: each sub with its exclusive time from C<SUB_CALLERS>.
Memory grows with the distinct stacks under each open frame, never with
the number of calls (the 3.15 million call events of a 10 MB profile fold
in about a second).

=head1 NAMES IN EACH TARGET

Each target names a function in its own reader's language.

=over

=item nytprof.out (C<convert>, C<merge>)

NYTProf's C<Package::sub>: a foreign function becomes a sub of a package
(L</Tachyon (CPython)>, L</EasyProfiler (C++)>), then the L</Names> mapping
makes it show in C<nytprofhtml> (C<threading::Thread::run>,
C<mod::[module]>, C<main::work_unit>).  File names get the same
mapping (C<[frozen runpy]>).  Only this target has it.

=item collapsed, pprof, speedscope, gecko (and C<diff>)

The source tool's own names.  Tachyon: CPython's function name, its
qualname as CPython's own reports print it (C<Thread.run>, C<< <module> >>,
C<< crunch.<locals>.<genexpr> >>, C<< <GC> >>); in pprof and speedscope
with its file as recorded and its line (pprof: the location's line, the
line executing; speedscope: the frame's line).  EasyProfiler: the block name
exactly as EasyProfiler shows it (C<work_unit>, C<ns::C::f(int)>), without
the C<main> package, and no thread root frame (collapsed lines start with the
thread's C<tid:> frame, pprof and speedscope keep threads apart themselves).  StatProfiler, NYTProf and Pynytprof: Perl's
C<Package::sub> (C<main::fib>; a file's top-level code C<main::RUNTIME>,
a sample with no frame C<main::(no frame)>).  Collapsed lines name a frame
by its function name alone (C<flamegraph.pl> has no place for a file), so
two functions of one name at one place in a stack (two modules'
C<< <module> >>) share a line there, as in any per-function flame graph;
pprof and speedscope keep them apart by file.

=item StatProfiler records

A Perl tool's package and sub: as the source wrote them for StatProfiler
input; for Tachyon input the sub names of the chunks, split at the last
C<::> (C<cpu_recursion> and C<merge_sort>).

=item for_chunks, dump

The decoder's sub names (L</MAPPING FOREIGN PROFILES>), before the
L</Names> mapping.

=back

=head1 NYTPROFHTML REPORTS

What C<convert> (and C<profbridge convert>) does so that a converted profile
reads in C<nytprofhtml>, C<nytprofcsv> and C<nytprofcalls> like a Perl one.
It all happens in the presentation filter (F<c/present.c>) between the
decoder and the writer, and only for foreign input: a real F<nytprof.out>
passes through unchanged.

=head2 Names

C<nytprofhtml> prints sub names into its pages without HTML escaping and
splits the package off at the last C<::>.  So every sub name (C<SUB_INFO>,
C<SUB_CALLERS>, C<SUB_RETURN>) is rewritten by one rule,
L</nytprof_name($name)>:

=over

=item *

C<< < >> becomes C<[> and the C<< > >> that closes it C<]>:
C<< mod::<module> >> is C<mod::[module]> (also C<< <listcomp> >>,
C<< <lambda> >>, C<< <genexpr> >>, C<< <locals> >>), and
C<< std::vector<int>::push_back >> is C<std::vector[int]::push_back>.
After C<operator> the brackets are the operator's: C<< operator<< >> is
C<operator[[>; C<< operator-> >> and a lone C<< > >> are kept (harmless in
HTML text).

=item *

C<::> inside C<()>, C<< <> >> or C<{}> becomes C<.>, so the package is
what the language calls it: C<ns::C::f(std::string const&) const> is
C<ns::C::f(std.string const&) const>, package C<ns::C>, sub
C<f(std.string const&) const>.

=item *

Everything else is kept: spaces, C<&>, C<*>, Perl's
C<__ANON__[file.pl:12]>.  Python names are C<module::Class::method> (the
module from the file, L</names>); C++ names are EasyProfiler's block names
in package C<main> (L</EasyProfiler (C++)>).

=back

File names (C<NEW_FID>) get the same rule, since C<nytprofhtml> prints them
unescaped too: C<< <frozen runpy> >> is C<[frozen runpy]> in the list of
source files and in the name of its page.  Such files (a name in
C<< <...> >>: no file on disk) have the flags C<IS_FAKE|VIA_SUB> from
C<convert> and C<merge> alike.

Names and file names are written as UTF-8 bytes without the UTF-8 flag, as
NYTProf writes them, so the UTF-8 pages show them and nothing warns about
wide characters.  The other targets keep the source's own names
(L</NAMES IN EACH TARGET>).  C<nytprofcalls> prints names as
they are written (its own C<tr/; /??/> changes nothing).

=head2 Source

For each file of the profile that is not synthetic (C<IS_FAKE>), an eval, or
already carries its source (StatProfiler evals), C<convert> looks for the
file, in this order: its name as recorded (absolute, or relative to the
working directory); under each C<source_root>, after removing the first
C<strip_prefix> that the name starts with (else the name, a leading C</>
dropped); then in the input's own directory (a relative name as it is, an
absolute one by its base name: a profile copied beside its program).

A profile may come from anyone, so by default (the source policy) a
candidate is used only when it is a regular file whose resolved path (every
symlink followed, C<..> applied) lies under an allowed directory: the
input's directory, the working directory (neither when it is C</>) or a
C<source_root>; a name looked up under a source root or beside the input
must stay inside that directory.  Nothing under C</proc>, C</sys> or
C</dev>, nor on such a pseudo file system (procfs, sysfs, debugfs, ...), is
read.  The name must end in a source extension of the input's language
(each format's row lists them, F<c/formats.c>):
Tachyon and Pynytprof (Python) C<.py .pyw>; EasyProfiler (C/C++) C<.c .cc
.cp .cpp .cxx .c++ .C .CPP .h .hh .hp .hpp .hxx .h++ .H .inl .ipp .tcc .tpp
.ixx .cppm .cu .cuh .m .mm>; StatProfiler (Perl) C<.pl .pm .pmc .t .PL .plx
.psgi .cgi .al>; V8 (JavaScript/TypeScript) C<.js .mjs .cjs .jsx .ts .mts
.cts .tsx>; pprof (Go) C<.go>; a merge (whose inputs' languages are not
told apart) and folded stacks (written by any language's tools) any of
these.  For Python, Perl and JavaScript a name without an extension is a
script when its first line is a C<#!> line naming C<python>, C<perl> or
C<node>.  A source file of the language
outside the allowed directories (the language's standard library,
site-packages, a system module: CPython's F<threading.py>) is left out
without a warning: C<nytprofhtml> reads it from disk where it lies, as for a
Perl profile made without C<savesrc>; C<--source-root DIR> embeds it.  Other
files kept out are named in one warning with the reason
(C<convert: warning: the source of N of M files was not embedded by the
source policy: 'NAME' (outside the allowed directories), ...>).
C<< source_any => 1 >> (C<--source-any>) lifts the directory and name
checks for a profile you trust: any regular file it names is embedded,
wherever it lies and whatever its name, but never one under C</proc>,
C</sys> or C</dev> (by its name, C<.> and C<..> applied, or by its resolved
path: C</proc/self/environ>, C</dev/stdin>, a symlink to either), nor one on
a pseudo file system, nor anything that is not a regular file (a device, a
FIFO): those hold the converting process's secrets or never end (the
warning: C<... was not embedded: '/proc/self/environ' (in /proc, /sys or
/dev); even --source-any embeds only regular files on a disk file system,
never under /proc, /sys or /dev>).

A file is read through one descriptor, at most 64 MiB counted as the bytes
arrive (C<st_size> is 0 for C</proc> files); a larger one is not embedded,
and a read error is a warning naming the file and the system's reason.  A
file embedded is written as NYTProf's C<savesrc> does
it: flags C<HAS_SRC|SAVE_SRC>, its size (the bytes read) and mtime, one C<SRC_LINE> per line
(up to C<max_line> lines).  C<nytprofhtml> then shows the code beside the
numbers and never compares a file on disk with the profile's date.  One
warning names the files not found
(C<convert: warning: the source of N of M files was not found ...>) when
that hides the program: none of the profile's files was found, or one it
names relatively (as the program was started: C<python app.py>) was not;
absolute paths of the recording machine that are not here (its
interpreter's library, system headers) beside a program that was found are
left out without a word.  Each
such file gets the flag C<IS_FAKE>, so that C<nytprofhtml> says on its page
that no source code is available instead of warning "Unable to open" (it
would look for any other file by its name).  C<< source => 0 >>
(C<--no-source>) embeds nothing and flags nothing: C<nytprofhtml> then
reads the files from disk, as for a Perl profile made without C<savesrc>.

=head2 Call events and the flame graph

C<nytprofhtml> draws its flame graph, and C<nytprofcalls> prints its stacks,
from C<SUB_RETURN> records only.  For Tachyon and StatProfiler input they
come from each thread's call tree, for EasyProfiler from each thread's
distinct span stacks: one C<SUB_RETURN> per tree node (not per sample), with
the node's exclusive weight and its inclusive weight in ticks.  So
C<nytprofcalls> prints exactly the stacks that C<< to => 'collapsed' >> gives
for the nytprof.out itself (without the C<tid:> frame, in ticks): those of
the input, with the names above instead of the source's own, threads merged,
weights in ticks instead of samples (Tachyon, StatProfiler: samples ×
C<sample_interval_us>; EasyProfiler: ns either way).  Pynytprof files record caller → callee pairs, not stacks: their call
events are rebuilt from that call graph as C<gprof> does (from each sub no
other sub calls, each callee appears under every caller with the share of its
time that came through that call, its weight its exclusive time (see
L</Pynytprof>); recursion stays folded into the outer frame; a dialect D
file whose own times add up to more than its run is scaled to fit it).  Pynytprof
dialects without call data (A, D) get
C<OPTION calls=0>: no flame graph rather than an empty one.  Very deep
stacks (deep recursion) make C<nytprofcalls> print Perl's own
C<Deep recursion> warnings, as they do for a real Perl profile.

=head2 Times, weights and the Calls column

Sampled input (Tachyon, StatProfiler): a sample's weight × the sampling
interval the file records (C<sample_interval_us>) is its time, on the
innermost frame's line (C<TIME_LINE>) and in the subs' exclusive and
inclusive times.  Statement counts are sample counts.  The Calls column of a
sub is the number of calls B<inferred> from the samples: a frame that
appears where the previous sample of the thread had another is a new call;
calls shorter than the interval are not seen.  EasyProfiler input is exact:
span durations in ns and real call counts.  Pynytprof input keeps the
profiler's own line times and call counts.

B<Sampled time is sampled time, in every view.>  For sampled input (Tachyon,
StatProfiler, V8, pprof, folded stacks) the profile is active for the
sampled total: the sum over all threads (and processes) of sample weights ×
interval, what CPython's and StatProfiler's own reports count.  In
F<nytprof.out> NYTProf's C<profiler_active> (which C<nytprofhtml> prints as
the X of "Profile of ... for X (of Y)") is that total, its flame graph's
root is that many microseconds and its first level fills the width, and
every percentage is a share of what the source tool counts.  Y
(C<profiler_duration>) is the run's length where the source records it:
Tachyon (C<duration_sec> of the stats trailer, every 3.15 file; else the
first sample's timestamp to the last), pprof (C<duration_nanos>), V8
(C<endTime - startTime>), so a 2.97 s run sampled for 511 ms reads "for
511ms (of 2.97s)"; the threads' C<PID_START>..C<PID_END> spans add up to it
and C<cumulative_overhead_ticks> is Y - X in ticks (negative when threads
sampled in parallel hold more than the run).  Y is the sampled time too
where the source records no run length (StatProfiler, whose samples are
wall-clock ticks of one thread, and folded stacks), in a C<merge> (many
runs have no one length), and where the threads'
sampled time exceeds the run by more than 9% (NYTProf's reader warns
beyond 10%: "The sum of the statement timings is ... of the total time
profiling"); the run's length then stays in the ATTRIBUTEs
C<profile_duration_sec> and C<run_wall_clock_sec>.  EasyProfiler's X and Y
are the threads' spans added up (each spans the file's C<begin>..C<end>):
for one thread the run's length.  The run's wall-clock length (first
sample to last plus one interval, over all threads; Tachyon, whose samples
carry timestamps) is kept as C<ATTRIBUTE run_wall_clock_sec>, beside
C<sampled_time_sec>; C<info> prints both and the loss report names the wall
clock.  pprof's sample values and speedscope's weights are the same sampled
ns; pprof's C<duration_nanos> stays the wall clock (so C<go tool pprof>'s
"Total samples = 511ms (17.20%)" is the share of the run that was sampled).
Tracing input (EasyProfiler, Pynytprof) keeps its real durations.

=head2 Dates

C<basetime>, which C<nytprofhtml> prints as "Run on" (and pprof as
C<time_nanos>), is wall-clock seconds.  Where each format's comes from:

=over

=item NYTProf

the file's own C<basetime> (the profiled program's C<$^T>).

=item StatProfiler

the time word of the genealogy id in the trace's header: when
Devel::StatProfiler began profiling that process (a whole run: its first
file's).

=item Pynytprof

the file's: the header's C<:basetime> (dialects B, C, D: when Pynytprof
started), dialect A's C<start_time> (nanoseconds, to whole seconds).

=item Tachyon

not in the file (its start time is a monotonic clock, time since boot): the
file's B<modification time> (written when profiling ended) B<minus the
run's length> (the stats trailer's duration, else samples × interval), in
whole seconds.  A profile read from memory keeps the monotonic seconds.

=item EasyProfiler

not in the file (its times are CPU cycles): the file's B<modification time
minus the capture's length> (the header's begin to end time), in whole
seconds.  A profile read from memory has none.

=back

So for Tachyon and EasyProfiler the date is only as good as the file's
modification time: a copy that does not keep it (a C<git clone>, a
download, C<cp> without C<-p>) dates the report at the copy; standard input
is dated when it is read; a gzip-compressed file is dated by the time its
gzip header records (else the F<.gz> file's modification time).  C<merge>
takes the first input's date.

=head2 Threads and processes

L</info($file, %options)> lists them (C<profbridge info>); C<< thread => ID >>
(C<--thread>) keeps one thread of a Tachyon, EasyProfiler or pprof profile,
C<< pid => PID >> (C<--pid>) one process of a StatProfiler run.  By default
every thread and process is kept, each its own C<PID_START>/C<PID_END>
span.  The attributes C<profiler>, C<profiler_version>,
C<sample_interval_us> and C<clock> say where the data came from.

=head2 speedscope JSON

=over

=item units

C<ticks_per_sec=1000000000> (ns).  A profile in a time unit gives ns
(each weight, each event's C<at> rounded to the nearest ns;
C<sample_weight_unit=ns>); one in C<bytes> or C<none> gives its numbers as
written, one tick each.  Profiles of units that do not add up are refused
(C<unsupported>) unless C<thread> picks profiles of one kind.

=item threads

One per profile: key its index in C<profiles> (C<thread =E<gt> N>), pid
index + 1, named by the profile's C<name> (C<thread =E<gt> NAME>).

=item frames

C<shared.frames>: the stack outputs show each frame's C<name> as written;
the sub is the name split at its last C<::>, else C<main::>I<name>; file and
line as written; C<col> is dropped (C<losses>).  Evented profiles alone
are folded as spans (exact call counts: the C<O> events), sampled and
mixed ones as samples.  L<Devel::ProfileBridge::Formats/speedscope>.

=back

=head1 FUNCTIONS

=head2 for_chunks($callback, %options)

The function behind L<Devel::ProfileBridge::ReadStream/for_chunks>; the
same arguments.

=head2 features()

What this build can do, as a hash reference:

  {
    libraries => { zlib => '1.2.13', zstd => '1.5.4', snappy => 'yes' },
    read  => { nytprof => 1, pynytprof => 1, easyprofiler => 1, tachyon => 1,
               'tachyon-zstd' => 1, statprofiler => 1, v8 => 1, pprof => 1, folded => 1,
               speedscope => 1 },
    write => { nytprof => 1, collapsed => 1, pprof => 1, speedscope => 1, gecko => 1, dump => 1, statprofiler => 1,
               pstats => 1, callgrind => 1 },
  }

zlib is required; libzstd and libsnappy are optional at build time
(F<Makefile.PL> says which it found).  A library this build lacks is
C<undef> in C<libraries>, and what needs it is 0: compressed Tachyon files
need zstd, Devel::StatProfiler traces (read and write) need snappy.  Asked
to do it anyway, the decoder or writer throws an C<unsupported> error:
C<this build has no zstd (install libzstd-dev and rebuild
Devel::ProfileBridge)>.  C<profbridge --version> prints the same.

=head2 detect_format($file)

Reads the first 4 KB of C<$file> and returns a hash reference:
C<format> (a name above, or C<undef> when unknown), C<version> (the file's
format version as a string, e.g. C<5.0> for NYTProf, C<2.1.0> for
EasyProfiler, C<1> for Tachyon and StatProfiler), C<compressed> (1, 0, or
C<undef> when it cannot tell from the first bytes), C<compression>
(C<zlib>, C<zstd>, C<snappy>, C<none>), C<byte_order> (Tachyon,
EasyProfiler), C<dialect> (Pynytprof: C<A> to C<D>), C<layout> (Tachyon:
C<3.14> for the pre-release header, C<3.15> for Python 3.15's), C<mode>
(Tachyon, only when the header stores one: C<wall>, C<cpu>, C<gil>, C<all>,
C<exception>, as CPython's C<get_info()> reports it), C<capture> (Tachyon,
when the header records capture features: an array reference of the ones
CPython reports true, in its order: C<all_threads>, C<native>, C<gc>,
C<opcodes>, C<blocking>; empty when none), and C<supported> (1
when this build has a decoder for it).  Throws an C<io> error if the file
cannot be read.

=head2 info($file, %options)

C<detect_format> and C<chunk_counts> over one read of C<$file>: returns the
two hash references.  A FIFO or standard input can be read only once, so
C<profbridge info> uses this.  For a gzip-compressed C<$file> (inflated
before it is read), C<compression> is C<gzip> (C<gzip+zstd> when the
format compresses inside too) and C<compressed> 1.  The first also holds C<threads>: an array
reference with one hash per thread or process, in order of first sample:
C<pid> and C<ppid> (as in C<PID_START>), C<id> (the thread id: Tachyon;
the pid: StatProfiler), C<name> (EasyProfiler), C<samples> (sum of sample
weights: Tachyon, StatProfiler), C<ns> (a merged profile's weight, in ns),
C<spans> (EasyProfiler blocks), C<weight> (the sum of sample weights in
C<weight_unit>, below, in place of C<samples>).  From a Tachyon file's stats trailer, as
numbers in the units of CPython's C<get_info()>: C<duration_sec> (the run's
length, s), C<sample_rate> (samples per second the profiler achieved),
C<error_rate> and C<missed_samples> (both in percent: sampling attempts
that failed; samples the run's length called for that were never taken),
each only when the file records it.
Sampled input (Tachyon, StatProfiler) adds
C<sampled_time_sec> (every thread's sample weights × the interval: the time
the reports show) and, where samples carry timestamps (Tachyon),
C<run_wall_clock_sec> (first sample to last, over all threads; see
L</Times, weights and the Calls column>).  Weights that are neither time
nor samples (a pprof heap profile's C<inuse_space/bytes>, an
C<alloc_objects/count>) are no time: C<weight_unit> (the sample type's
unit: C<bytes>, C<count>) and C<sampled_weight> (every thread's weights
summed, in that unit) replace C<sampled_time_sec>.
A call graph (pstats, callgrind: no stacks) adds C<call_graph> (C<exact>
for a tracing profiler's counts, C<sampled> for CPython 3.15's C<replay
--pstats> of samples), C<graph_producer> (what wrote it: C<cProfile>, C<the
profile module>, ...), C<graph_total_sec> (the functions' own times
summed, s) in place of C<sampled_time_sec>, and C<graph_targets> (the C<--to>
targets that carry a call graph: stack targets refuse it).  A callgrind file
adds C<graph_events> (its events, comma-separated), C<graph_event> and
C<graph_cost_unit> (the event read: C<< event => NAME >> or C<sample_type> picks it, default the
first; an instruction count is no time, and nytprofhtml's "seconds" are
that many units / 1e9) and C<graph_total> (its C<summary:> for that event).

=head2 chunk_counts($file, %options)

Decodes the whole file in C and returns C<< { TAG => count, ... } >> for
the tags present.  It makes no Perl call per chunk, so it is the fast way
to validate a file.  Options as for C<for_chunks> (C<format>, C<thread>,
limits).

=head2 convert(in => $file, out => $path, %options)

Decodes C<$file> in C and writes it as a real NYTProf file at C<$path>,
without a Perl call per chunk (L<Devel::ProfileBridge::NYTProfWriter>
explains what is written and refused).  Options: C<format> (skip
detection), C<thread> (one thread only), C<sample_type> (pprof and
two-column folded stacks: the sample type to read; C<< to => 'pprof' >>
keeps every type of a pprof input and makes this one the default; callgrind:
the event, also as C<< event => NAME >>, see
L<Devel::ProfileBridge::ReadStream/event =E<gt> $name>), C<< compress => 0..9 >> (zlib
level; default 3 for NYTProf input (NYTProf's own 6 takes about twice as
long for a file about 1.7 times smaller), and 0, no compression, for the
other formats, whose long runs of small records (a statement record per
sample) even level 1 takes longer to compress than the rest of the
conversion takes in all, for a file about half the size: ask for 1 to have it), C<< to => 'nytprof' >> (the default), C<< salvage => 1 >>
(see L<Devel::ProfileBridge::ReadStream/salvage>: a truncated input still
gives a valid nytprof.out of what came before the cut, with a warning;
C<to =E<gt> 'nytprof'> only, other targets croak), and the limits.
For foreign input (L</NYTPROFHTML REPORTS>): C<< source => 0 >> embeds no
source; C<< source_any => 1 >> embeds any regular file the profile names
(no directory or name check, but never a file under C</proc>, C</sys> or
C</dev>, L</Source>); C<< source_root => $dir >> or C<< [ $dir, ... ] >> and
C<< strip_prefix => $prefix >> or C<< [ ... ] >> say where to look for the
profile's files (paths, no NUL; a bad one croaks).

C<< to => 'collapsed' >> writes collapsed stacks (C<flamegraph.pl> input):
one line C<tid:E<lt>thread idE<gt>;outer;...;inner WEIGHT> per distinct
stack and thread, each frame named in the source tool's own language
(L</NAMES IN EACH TARGET>).  WEIGHT is a sample count for Tachyon and StatProfiler
input (a StatProfiler sample's weight), and for EasyProfiler input the
exclusive (self) time in B<nanoseconds> of the blocks that end exactly that
stack, so a block's stacks add up to its self time and a thread's lines to
the sum of its blocks' self times, as EasyProfiler's own reader computes
them.  Inside a name, C<;>, newline, carriage return and NUL (which would
break the line format) are written as C<\x3B>, C<\x0A>, C<\x0D>,
C<\x00>, and C<\> itself as C<\x5C> (so every C<\xNN> in a line is an
escape: a reader that decodes them gets the names back exactly).  Folded
stacks in give their own lines back: each frame and each line's root frames
as the input wrote them (CPython's C<threading.py:Thread.run:1161>, no
C<tid:> frame where the input had none), the weights of identical lines
summed (L</Folded stacks>).  C<< to => 'statprofiler' >> writes Devel::StatProfiler records
(sampled input only).  A record's weight counts ticks of the trace's
interval (C<tick_duration>, µs): weights in ns (pprof and V8 times,
EasyProfiler spans, a merge) are written as 1 µs ticks (interval 1; the
sub-µs rest of a sample carried to its thread's next one, so each trace's
total is exact to the µs), sample counts keep their interval
(C<sample_interval_us>, or pprof's C<period> when its C<period_type> is a
time).  Weights that are neither (a pprof heap profile's C<bytes>, an
C<alloc_objects/count>) are refused with an C<unsupported> error naming the unit
(C<--sample-type> picks another); a sample of more than 4,294,967,295 ticks
(a record's 32-bit weight: 71 minutes at 1 µs) is a C<limit> error, never
cut.

C<< to => 'pprof' >> writes pprof's C<profile.proto>
(C<perftools.profiles.Profile>, gzipped), which C<go tool pprof>,
Pyroscope, Parca, Grafana and speedscope read, from every input with stacks
(every format: Tachyon, StatProfiler, EasyProfiler, and NYTProf and Pynytprof
as L</PERL PROFILES AS STACKS> says): one sample per distinct stack and
thread, locations leaf first, each with its function (the source tool's
own name, L</NAMES IN EACH TARGET>: CPython's C<Thread.run>, C<< <module> >>;
the file as recorded; its first line when the format has it) and
line; labels C<thread> (the thread id, as text) and C<pid> (a number).
Sampled input has the sample types C<samples/count> and C<wall/nanoseconds>
(C<cpu/nanoseconds> when the file says its clock is CPU time): a sample's
weight and weight × C<sample_interval_us>; C<period> is the interval.
EasyProfiler input has C<wall/nanoseconds> only: the exclusive ns of the
blocks on that stack (as for collapsed output).  C<time_nanos> is
C<basetime>; C<duration_nanos> the profile's duration.  NYTProf and
Pynytprof input: see L</PERL PROFILES AS STACKS>.  pprof input comes back
as it was: every sample type with its name and unit (C<samples/count>
beside C<cpu/nanoseconds>; a heap profile's four), the default sample type
(or the one C<sample_type> names), the period type and period, the
mappings, each location's address and its inlined lines, the functions'
system names, the samples' own labels (no C<thread> or C<pid> label is
added), the comments, C<drop_frames>, C<keep_frames>, C<time_nanos> and
C<duration_nanos>: C<go tool pprof -raw> of the output is the input's, ids
aside (a merge or diff of pprof inputs writes the sample types above).  The message is
encoded by F<c/write_pprof.c> (protobuf's wire format is a few varint and
length rules; the profile is built in one pass, with no library to match
versions with) and gzipped with zlib.

C<< to => 'speedscope' >> writes speedscope's JSON file format (valid
against the schema the C<speedscope> npm package publishes): one C<sampled>
profile per thread (named as its profiler names it, EasyProfiler's
C<Main>, with its id in parentheses when two threads share a name; else
C<thread E<lt>idE<gt>>), its samples the thread's
distinct stacks (root first) with their weights in nanoseconds (a sample's
weight × C<sample_interval_us>; EasyProfiler's exclusive ns), and shared
frames with the function's own name (L</NAMES IN EACH TARGET>), file and
first line.  EasyProfiler threads are
C<evented> profiles instead: an open and a close event per block at its real
begin and end (ns), so speedscope's time-order view shows the capture as it
ran (that form lists every block: its memory grows with the blocks).

Where the input records when each sample was taken (Tachyon: every
recorded sample, one by one even in a run of equal stacks; V8: C<startTime>
plus the running sum of C<timeDeltas>; perf script: the time field;
speedscope sampled profiles: C<startValue> plus the weights before the
sample; a merge of those), each thread is an C<evented> profile in
nanoseconds instead, so speedscope's "Time Order" view shows the samples
when they were taken: each sample is open from its recorded time (ns after
the profile's earliest sample, C<startValue> 0, the same origin for every
thread) for exactly its weight (weight × C<sample_interval_us>, or the
input's ns), the time between samples is left idle, a frame that two
samples in a row share stays open across them, and C<endValue> is the
thread's last sample's end.  A sample recorded before the one before it
has ended (its weight is more than the time to the next sample) starts at
that end instead: an C<evented> profile cannot draw two samples of one
thread at once, and cutting the earlier one short would make
speedscope's "Left Heavy" and "Sandwich" totals differ from the weights
(which stay those of the collapsed output, exactly).  A C<sampled>
profile with every sample would keep the totals too, but speedscope lays
its samples back to back, so no sample would be at its time once a thread
was idle.  How late a pushed sample is depends on the input: V8's samples
last exactly to the next one, so every sample is at its time; perf's
C<cpu-clock> samples (a period each) are late by timer jitter (under 0.1 ms
in our tests); CPython's Tachyon sampler takes a thread's samples often
closer together than the interval each one weighs (it catches up after a
late tick), so most of them are late, by up to about 12 ms in our real
files, until the thread's next idle gap.  Inputs without sample times
(pprof, folded stacks, StatProfiler, NYTProf, Pynytprof, callgrind,
pstats) and threads whose weights are no time (sample counts with no
interval: perf without periods) keep the C<sampled> form above.  The
samples are spooled as for C<gecko> below (an unlinked temporary file in
C<$TMPDIR>, 24 bytes a sample), so memory stays bounded; the file holds
an open and a close event for each frame that changes from one sample to
the next, so it can be many times the size of the C<sampled> form (a
100 MB V8 profile of 10.7 million samples: 2.9 GB).  C<< time_order => 0 >>
(C<--no-time-order>; C<convert> and C<merge>, read by this target only)
writes every thread in the C<sampled> form instead: each distinct stack
once with its summed weight, as compact as the other stack targets, with
no Time Order.  Open it
at L<https://www.speedscope.app> or in the npm package's F<index.html>.

C<< to => 'pstats' >> writes the call graph as Python's C<pstats> file,
C<< to => 'callgrind' >> as Valgrind's callgrind format, from every input;
see L</CALL-GRAPH TARGETS>.

C<< to => 'gecko' >> writes a timeline for the Firefox Profiler
(L<https://profiler.firefox.com>, "Load a profile from file") that the
speedscope app (L<https://www.speedscope.app>, 1.25) opens too: a raw Gecko
profile (C<meta.version> 32, the format Firefox's own profiler writes, which
the Firefox Profiler processes on load) inside the old Firefox DevTools
wrapper C<< {"systemHost":{"name":"Firefox"}, "profile": ..., "duration": MS} >>
(the Firefox Profiler reads its C<profile>; speedscope imports the wrapper
as a Firefox profile).  C<meta> holds C<interval> in ms, C<startTime> the
input's C<basetime> in ms, C<product> the input's base name,
C<categories>, C<presymbolicated>, C<markerSchema> (empty) and C<profbridge>
(below); C<libs>, C<processes> and C<pausedRanges> are empty.  Each thread
is a track (named as its profiler names it, else C<Thread-E<lt>idE<gt>>;
C<tid> its id, C<pid> its process) with its own C<stringTable>,
C<stackTable> (C<prefix>, C<frame>), C<frameTable> (C<location>, C<line>
of the call, C<category>) and C<samples> and C<markers> as
C<{ schema, data }> rows.  A frame's C<location> is its function's string,
C<name (file:line)> (the function's own name, L</NAMES IN EACH TARGET>, its
file and first line), C<name (in file)> when the input records no first
line (C<name ((eval 1))> for a file in parentheses), C<name ()> when it
records no file: the Firefox Profiler shows the name and the file,
speedscope keeps each function as one frame.  C<samples> rows are
C<[stack, time]> (C<time> in ms after the first sample), or
C<[stack, time, null, weight]> when some weight is not 1 (in ms, with
C<weightType> C<tracing-ms>, when the weights are ns; the Firefox Profiler
counts each sample once whatever its weight); each thread's samples end
with one of no stack (null) at the time the last one ends (its time + the
interval, or the thread's last gap without one, or the end of the spread),
which the Firefox Profiler counts in no function and which closes
speedscope's last sample.  Samples are at their recorded times where the
input records them (Tachyon, one sample per recorded sample even in a run
of equal stacks; V8's C<timeDeltas>; perf's sample times; speedscope); a
time before the thread's previous sample is written at that one (both
viewers need a thread's samples in order).  Where the input records none
(pprof, folded stacks, StatProfiler, EasyProfiler's stacks) each thread's
samples are spread evenly by weight over the recorded duration (the blocks'
extent, C<profile_duration_sec>, or samples x interval), so a sample lasts
its weight's share; C<meta.profbridge.sampleTimes> says which
(C<recorded>, or C<spread ...>); C<meta.profbridge.timeOriginNs> is the
time 0 of the tracks in the input's clock (ns).  EasyProfiler blocks and
speedscope evented profiles' C<O>/C<C> pairs are interval markers (phase
1, C<data.type> C<Span>) on their thread at their begin and end; a Tachyon
file's thread status gives the interval markers CPython's collector writes
(C<Has GIL>, C<No GIL>, C<On CPU>, C<Off CPU>, C<Python Code>, C<Native
Code>, C<Waiting for GIL>, C<GC Collecting>, C<Has Exception>, C<No
Exception>), at the same times as CPython 3.15's C<profiling.sampling replay
--gecko>.  Samples and markers are spooled to an unlinked temporary file in
C<$TMPDIR> (else F</tmp>; 24 bytes a sample or marker) and written thread
by thread, so memory grows with distinct frames, stacks and marker names,
not with samples; a full or missing C<$TMPDIR> is an C<io> error (C<gecko:
io: OUT: cannot create the writer's spool file in DIR: ...>).  A
merge (L</merge(in =E<gt> [ $file, ... ], out =E<gt> $path, %options)>)
puts every input's threads side by side, each as that input's own
conversion has it: the same samples (one per recorded sample) at the same
times, the same status and span markers; each input's times count from its
own origin (its first sample, or its first block where its samples are
spread), as its clock is not the others', so all inputs start at 0 ms, and
C<meta.profbridge> gives the first input's C<timeOriginNs> and, when the
inputs' times were found in different ways, C<sampleTimes> C<each merged
input on its own clock; input 1: recorded; input 2: spread ...>.  A thread
of the same label in two inputs (the same tid) is one track holding both.
speedscope's limits: it shows one thread (the only one, else one
named C<GeckoMain>, which we never write), so convert a multi-thread input
one thread at a time (C<< thread => $id >>, C<profbridge convert --thread>);
it times a sample until the next one (its totals are times, in ms: a
spread sample's share of the duration), it shows no markers, and it cannot
open a profile of no samples.

A profile that holds no samples, timed statements or calls still converts,
with a warning on standard error (C<nytprof-writer: warning: ...> or
C<collapsed: warning: ...>), since its report will be empty.  A foreign one
gets a fake file C<(empty profile)> and one process in its nytprof.out, so
that C<nytprofhtml> draws that empty report without a complaint.

The output goes to a temporary file renamed on success: on any error the
target is left as it was.  Warnings (a salvaged file, an odd header) are
given once the conversion has finished, so a C<$SIG{__WARN__}> handler that
dies finds the target complete and no temporary file behind.  Throws a
L<Devel::ProfileBridge::Error>: the
decoder's (named after the input format), or C<nytprof-writer: ...> for
what the writer refuses or fails to write.

=head2 nytprof_name($name)

The name C<convert> writes for a foreign sub or file name C<$name> (a
string; the result keeps its UTF-8 flag): the rule of L</Names>.  For callers who write
chunks themselves with L<Devel::ProfileBridge::NYTProfWriter>.

  Devel::ProfileBridge::nytprof_name('mod::<module>');   # 'mod::[module]'

=head2 merge(in => [ $file, ... ], out => $path, %options)

Folds many profiles of one program into one: several runs, processes or
hosts, even different formats (every one: NYTProf and Pynytprof as
L</PERL PROFILES AS STACKS> says; a StatProfiler run is one input).  C<< to =>
'nytprof' >> (the default; with C<source>, C<source_any>, C<source_root>, C<strip_prefix>
and C<compress> as for L</convert(in =E<gt> $file, out =E<gt> $path, %options)>),
C<'collapsed'>, C<'pprof'>, C<'speedscope'> or C<'gecko'>, and C<'pstats'> or C<'callgrind'>.
Call graphs (pstats, callgrind) merge into the targets that carry a call
graph (C<nytprof>, C<pstats>, C<callgrind>): each function's calls,
primitive calls, exclusive and inclusive cost and each caller edge's are
summed (per thread: each input's threads stay its own, as below), and
stack inputs may join them (stacks to a graph is exact); a callgrind event
(C<Ir>) adds only to the same event.  A stack target refuses a call-graph
input (C<unsupported>, naming the targets that fit).  Every input goes into the one consumer
through a layer (F<c/merge.c>) that puts weights in B<nanoseconds> (a sample
stands for its file's C<sample_interval_us>; EasyProfiler weights are ns
already), so the result's totals are the sum of the parts whatever their
intervals: nytprof.out ticks are ns (C<ticks_per_sec=1000000000>), collapsed
weights are ns, pprof has the one sample type C<wall/nanoseconds>,
speedscope profiles are in nanoseconds, gecko weights are ms.  What a
single conversion keeps besides stacks a merge keeps too: a gecko file's
sample times (each input on its own clock) and markers, EasyProfiler
blocks and speedscope events as speedscope's evented profiles, Tachyon's
opcode and thread status as pprof labels.  Weights of different units never
add: every input's weights are time (ns, or samples × their interval; a
pprof C<samples/count> stands for its C<period>) or all are the same other
unit (C<bytes>, C<count>: pprof heap profiles); otherwise a C<usage> error
names both (C<pprof: usage: cpu.prof: its weights are ns (cpu/nanoseconds),
those of heap.prof are bytes (inuse_space/bytes): ...>; the CLI exits 2),
and C<sample_type> may pick comparable types.  Relative file names are looked up beside every input.  Frames
are unified by name, file and line, so memory grows with distinct frames
and stacks, not with the number of inputs; each input's threads stay
separate threads (a pid already taken by an earlier input gets the next free
number); the first input's attributes head the result.  StatProfiler
traces are each read once however the inputs name them (L</genealogies>).
C<< jobs => N >> decodes the inputs in N worker processes (each a
contiguous share of them) and folds what they decoded in input order in
this one, so the result is the same as with one process, byte for byte
(every sample with its own time where the target is a timeline, the
thread status and spans a gecko file shows as markers, the sample tags
pprof keeps as labels: all pass through the spools); without it the
inputs are read one after the other.  Each worker writes a spool file in
C<$TMPDIR> (else F</tmp>), unlinked as soon as it is made, so nothing is
left there whatever happens; its decoders' output ends, input by input,
with a completion record, and the worker reports over a pipe that it
finished (with the spool's size) or why it failed.  The merge uses a spool
only when every input of the worker's share is complete in it; otherwise it
fails with the worker's own error: the input's decoder error, or
C<merge: io: DIR: cannot write a merge worker's spool: No space left on
device (ENOSPC)> when C<$TMPDIR> fills up, or a worker killed by a signal
or ended without reporting.  It never succeeds with part of the data.
Workers die with the calling process (C<PR_SET_PDEATHSIG> on Linux, and a
check of the parent's pid).  C<progress> is called in the calling process,
never in a worker (see L</PROGRESS>).  C<$path> C<-> is standard output
for collapsed and pprof.  Throws L<Devel::ProfileBridge::Error>: the
failing input's error (C<corrupt> for a file that is no profile).

=head2 diff(before => $file, after => $file, out => $path, %options)

Writes the per-stack difference of two profiles as collapsed stacks with two
weight columns, C<outer;...;inner BEFORE AFTER> per line (the format
C<difffolded.pl> writes and C<flamegraph.pl> draws as a differential flame
graph), threads merged, names and weights as for
C<< convert(to => 'collapsed') >>, 0 where one side lacks the stack; lines
sorted by BEFORE + AFTER, then text (C<< to => 'collapsed' >>, the
default).  C<< to => 'pprof' >> writes one pprof profile of the change:
AFTER's samples, and BEFORE's with negated values and the label
C<pprof::base=true> (what C<pprof -diff_base> builds), weights in ns as
for L</merge(in =E<gt> [ $file, ... ], out =E<gt> $path, %options)>;
C<go tool pprof -top> shows what grew and what shrank.  C<$path> C<-> is standard output; other
paths are written through a temp file and renamed (L</OUTPUT FILES>).
Options: C<thread>, C<pid>, C<progress>, the limits (applied to both
inputs).  Every input format works (L</PERL PROFILES AS STACKS>).  The two
inputs' weights must be of one unit, as for C<merge> (a C<usage> error
naming both otherwise).  Throws
L<Devel::ProfileBridge::Error>: the failing input's error.

=head2 losses($file, to => $target)

What converting C<$file> to C<$target> (C<nytprof>, the default,
C<collapsed>, C<pprof>, C<speedscope>, C<statprofiler>) cannot carry, so
nothing is dropped silently: an array reference of
C<< { what => ..., count => N, note => ... } >>, empty when nothing is
lost.  It reads the file once, counting in C as the chunks go by (a
StatProfiler root file counts its whole run, as C<convert> converts it);
C<profbridge info> counts them in the decode that counts the chunks, and
C<convert --report> to C<nytprof> in the decode that writes the output.  C<count> is a number of samples or records, or for what the
profiler itself could not sample a percentage with a C<%> sign (Tachyon's
C<error_rate> and C<missed_samples>, listed when above 0: no target can
hold samples the profile never had; nytprof.out keeps the rates as
attributes).  Examples: Tachyon's thread-state flags (dropped by every
target but pprof), opcodes (kept by pprof and StatProfiler), error rate and
missed samples,
EasyProfiler's value records, bookmarks and context switches,
StatProfiler's op names, sections and metadata, NYTProf's line
timings and call counts in a stack output.  C<profbridge convert --report>
and C<profbridge info> print it.

=head2 formats()

A hash reference C<< { nytprof => 1, tachyon => 1, ... } >>: 1 for each
format this build decodes.

=head2 dump_json($file, %options)

Writes the chunk stream as JSON Lines, one C<[tag, args...]> array per
chunk, with exactly the conventions of the C<nytprof-dump-chunks> tool
(integers as JSON integers, NVs in the shortest round-trip form, strings as
Perl characters with C<\uXXXX> escapes).  C<< output => $path >> (default
C<->, standard output).

=head1 PROGRESS

C<for_chunks>, C<chunk_counts>, C<info>, C<dump_json> and C<convert> take
C<< progress => sub { my ($done, $total) = @_; ... } >>: called from the C
reader at most once per MiB read, with the input offset reached and the
input's size in bytes (C<undef> when unknown).  Errors it throws are
ignored, so a display can never stop a conversion.  C<profbridge> uses it
to draw a L<Term::ProgressBar> on a terminal.  C<merge> and C<diff> take it
too; with C<< jobs => N >>, C<$done> is the bytes all workers have read and
C<$total> the inputs' total size, and the hook still runs in the calling
process (the workers send their progress over their pipes).  A hook that
calls C<exit> ends the program as anywhere else: the call never returns,
and the output's temporary file, the copy of an input (unlinked as it is
made) and the workers go with it.

=head1 INPUT FILES

Every function that takes a file (C<for_chunks>' C<filename>,
C<detect_format>, C<chunk_counts>, C<info>, C<dump_json>, C<convert>'s
C<in>) also takes:

=over

=item C<-> (standard input), a FIFO or a device

read once, as a stream: its first bytes tell the format (and whether it is
gzip, below) and stay for the decoder.  Only a format whose decoder seeks
or reads its input twice (Tachyon, Pynytprof, V8, pprof, speedscope: its
row in the table of formats says so) gets a temporary copy, in
C<$TMPDIR>, created with C<O_EXCL> and unlinked at once, so that it is
gone on every path (an error, a signal, C<exit> in a callback, even
SIGKILL).  The copy is at most C<max_decompressed_bytes> bytes (default 64
MiB for a copy: see L</LIMITS>), else a C<limit> error (C<profbridge:
limit: holds more than max_decompressed_bytes (N) bytes to copy to a
temporary file at byte N of standard input>) as soon as the stream passes
it.  Errors name C<standard input> for C<->.  C<info> and C<convert
--report> in L<profbridge> read such an input once (where the losses need
a second decode, it reads a copy kept for it); so does C<merge>, which
detects its inputs before it reads them.

=item a gzip-compressed profile of any format

(the first bytes C<1f 8b>; no profile format starts with them), a file or
a stream, of one gzip member or several one after the other (as C<cat
a.gz b.gz> makes), is inflated as it is read, under whatever the format
compresses inside: one open, one read, no copy unless the format seeks
(then the copy above holds the inflated bytes).  At most
C<max_decompressed_bytes> bytes are inflated (default 64 MiB here), else a
C<limit> error of format C<gzip> (C<gzip: limit: inflates to more than
max_decompressed_bytes (N) at byte N of FILE>, the offset in the gzip
file).  The profile's date is the original's modification time from the
gzip header.  A damaged or cut gzip, or bytes after a member that start no
other, is a C<gzip: corrupt:> error.  Errors inside the profile name
C<FILE.gz (gunzipped)> (C<standard input (gunzipped)>), and their offsets
count bytes of the inflated data.  A pprof file, gzipped by every writer,
is inflated by its own decoder as it reads.

=item an empty file or empty input

is a C<corrupt> error (C<empty file: not a profile>), never an empty report.

=back

C<< pid => >> must be a number, and C<< thread => >> a thread id (or, for
EasyProfiler, a thread name); a name where the format numbers its threads
is an C<unsupported> error listing the threads, never thread 0.

=head1 CALL-GRAPH TARGETS

C<< to => 'pstats' >> (C<--to pstats>) and C<< to => 'callgrind' >>
(C<--to callgrind>) write the profile's call graph: its subs and who
called whom, with counts and times, from every input format.  Both read
the input's chunk stream (C<SUB_INFO>, C<SUB_CALLERS>; a sampled or span
format's as its fold makes them), so what they write is what C<for_chunks>
delivers: a sub's calls are the sum of its C<SUB_CALLERS> counts, its
exclusive and inclusive times the sums of their C<excl> and C<incl>
(NYTProf's inclusive time counts a recursive sub's outermost call only).
C<merge> writes them too.  Memory grows with subs and call edges.

=head2 pstats

One C<marshal> dump (the types of marshal version 2, which every Python 3
reads) of C<< {(file, line, funcname): (cc, nc, tt, ct, callers)} >>, as
C<python -m cProfile -o> writes it: C<pstats.Stats(path)> loads it (Python
3.11 and 3.15; no C<("__sampled__",)> key), and so do snakeviz and
gprof2dot.  One key per sub: its file and first line (a sub known only as a
caller: C<("", 0, name)>; a synthetic frame such as C<< <GC> >>:
C<('~', 0, '<GC>')>, as pstats keys built-ins); C<funcname> is the sub's
name (C<main::fib>), for Python input the function as CPython names it
(C<threading::Thread::run> in F<threading.py> is C<Thread.run>).  Names
that are not UTF-8 get U+FFFD for each bad byte.  A profile without subs
is refused (C<unsupported>): C<pstats.Stats> cannot load an empty one.

=over

=item tracing input (NYTProf, Pynytprof, EasyProfiler)

Exact: C<nc> the sub's calls, C<cc> its primitive calls (C<nc> less the
calls from itself; calls through mutual recursion count as primitive, for
the chunks do not say which they were), C<tt> and C<ct> its exclusive and
inclusive seconds; C<callers> per calling sub (call sites summed)
C<(nc, cc, tt, ct)>, cProfile's order: the count (C<cc> 0 from itself), the
edge's exclusive and inclusive seconds.

=item call-graph input (pstats, callgrind)

Exact, and written as it was read, so that pstats to pstats keeps every
number C<pstats.Stats> loads: C<cc> per function and per caller as the
input said it (the fold's C<ATTRIBUTE primitive_calls>, mutual recursion
included), each caller's C<ct> its own (cProfile counts it per
caller-callee pair), the calls from outside the profile (the part of a
function's C<nc> its callers do not hold, built-ins called by the profiler
itself) counted in C<nc> but no caller, and the profile module's callers
as a bare count, as it writes them (C<ATTRIBUTE graph_edge_times none>).
Not kept: the code object that C<python -m profile> stores as its top
entry's name, which becomes its C<co_name> (C<< <module> >>).  A
C<funcname> the reader told apart as C<func@LINE> is C<func> again (the
key's line tells it apart).

=item sampled input (Tachyon, StatProfiler, pprof, V8, perf, folded, speedscope)

The estimates CPython's own C<python -m profiling.sampling replay --pstats>
makes of samples: C<cc> the samples in which the sub is the innermost frame,
C<nc> those in which it is on the stack (once per sample, however deep it
recurses), C<tt> = C<cc> x the interval, C<ct> = C<nc> x the interval, and
per caller the number of samples in which that caller called it (each
adjacency counted), a plain integer.  An input whose weights are time
(pprof, V8, perf, speedscope, a merge) counts in ns instead of samples.
On CPython 3.15's own files (F<t/data/tachyon/real315>) every function's
direct samples and C<tt> equal those of C<replay --pstats -o> of the same
file, with these differences: CPython keys a function once per I<executing>
line (one function is several keys; ours is one key at its C<def> line),
so its cumulative samples for a function that recurses through different
lines add up to more than ours (ours lie between its largest key's and the
sum); our outermost frames are called by C<main::RUNTIME> (a key of its
own, all zero), CPython's by nothing; and CPython's file carries the
C<("__sampled__",)> key that Python 3.11's pstats cannot load.

=back

=head2 callgrind

Valgrind's Callgrind Format Specification, version 1, as
C<callgrind_annotate> and KCachegrind read it: C<positions: line>, one
event (C<ns>, or C<samples> for input counted in samples; a callgrind
input's event as it was read, C<Ir> or C<Ticks>, its counts as they were), C<fl=>/C<fn=>
with name compression (C<(id) name> once, C<(id)> after), each sub's
exclusive cost at its first line, and per call site C<cfl=>, C<cfn=>,
C<calls=COUNT LINE> and the call's inclusive cost; C<summary:> and
C<totals:> the sum of all exclusive costs.  C<callgrind_annotate
--inclusive=no> shows each sub's exclusive time; C<--inclusive=yes> a
called sub's incoming calls' costs (NYTProf's inclusive time) and an
uncalled one's own cost plus its calls'.  What a function's totals hold
beyond its calls (a callgrind input's uncalled root, the profile module's
times, which its callers do not split) is no C<calls=> line (after
C<calls=0> C<callgrind_annotate> counts the cost as the caller's own): a
function whose calls carry no time gets its inclusive time spread over its
calls by count.  callgrind to callgrind keeps every function's self and
inclusive cost as C<callgrind_annotate> reads them, by function name: the
costs of a function's inlined lines (C<fi=>, C<fe=>) and of one name in
several C<fl=> files are one sub's, so they are one key.  Names are UTF-8 (a bad byte
U+FFFD, control bytes as spaces); a sub with no known file is in C<???>.

=head1 OUTPUT FILES

Every writer (C<convert> to each target, C<dump_json>'s C<output>,
L<Devel::ProfileBridge::NYTProfWriter>,
L<Devel::ProfileBridge::StatProfilerWriter>, and C<profbridge>) opens its
output the same way (F<c/output.c>):

=over

=item a new name, or an existing regular file

is written to a temporary file created with C<O_CREAT|O_EXCL> (a random
name, C<< .<base>.XXXXXX >>, never a predictable one, so a symlink planted
in the directory is never followed) in the target's directory, and renamed
onto the target only when everything succeeded.  An existing target keeps
its permission bits.  On any error the target is left byte-identical and
the temporary file is removed; so it is when the process is killed by
SIGINT, SIGTERM or SIGHUP, unless the program installed its own handler
for that signal (Perl's C<%SIG> included), which is then left alone.

=item a symlink

is followed to its final target, as C<cp> and C<tar> do: the target is
updated and the link stays a link.  A dangling link creates its target.

=item an existing device, FIFO or socket

is written in place and never replaced (a FIFO waits for its reader).

=item C<->

is standard output, for C<dump_json> and C<convert> to C<nytprof> and
C<collapsed>.

=item a scalar reference (C<< out => \$buffer >>; C<< output => \$buffer >> for C<dump_json>)

receives the bytes a file would get (C<convert>, C<merge>, C<diff>,
C<dump_json>; written through a temporary file in C<$TMPDIR>, removed
after): C<$buffer> is set when the call succeeds and left as it was when it
fails.  A target that writes a file per thread (C<statprofiler>) refuses it
with a C<usage> error.  Any other reference is a C<usage> error.

=item a StatProfiler run (C<< to => 'statprofiler' >> with several threads)

is written into a private temporary directory next to C<out> and its
traces are renamed into place only when all of them are complete, so a
failed conversion leaves no trace file behind.  At most 64 traces hold a
file descriptor at once (a quarter of a lower C<ulimit -n>).

=back

Long names work (the temporary name keeps at most 64 bytes of the base
name).  Only the process that opened an output writes, renames or removes
it: after C<fork>, the child's copy of a writer does nothing.

=head1 CHUNKS

Tags and arguments, in callback order (NYTProf 6.12 C<callback_info[]>):

  VERSION       major, minor
  COMMENT       text (with its trailing "\n")
  ATTRIBUTE     key, value
  OPTION        key, value
  START_DEFLATE
  PID_START     pid, ppid, time_of_day (seconds, NV)
  PID_END       pid, time_of_day
  NEW_FID       fid, eval_fid, eval_line, flags, size, mtime, name
  TIME_LINE     ticks, fid, line
  TIME_BLOCK    ticks, fid, line, block_line, sub_line
  DISCOUNT
  SRC_LINE      fid, line, text
  SUB_INFO      fid, first_line, last_line, name
  SUB_CALLERS   fid, line, count, incl_time, excl_time, reci_time, rec_depth, called, caller
  SUB_ENTRY     fid, line
  SUB_RETURN    depth, incl_ticks, excl_ticks, subname

Units: C<TIME_*> ticks are divided by the C<ticks_per_sec> ATTRIBUTE;
C<SUB_CALLERS> times are seconds; C<SUB_RETURN> times are ticks.  As in
NYTProf, ticks are delivered with C<sv_setuv> of a 32-bit signed value, so
a negative count appears as C<2**64 + ticks>.

=head1 LIMITS

Every decoder bounds-checks every read and never allocates from a count
before the bytes behind it exist.  On top of that, these options of
C<for_chunks>, C<chunk_counts> and C<dump_json> bound the resources one
file may use; tripping one throws a C<limit> error:

=over

=item max_decompressed_bytes

Bytes one compressed region may inflate to (zlib, zstd, snappy).  Default
4 GiB: such data is streamed, never stored (a real 10 MB nytprof.out
inflates to 280 MB).  The same option bounds a gzip-compressed input
(L</INPUT FILES>: inflated as it is read) and a temporary copy on disk (a
stream or an inflated C<.gz> read by a format that seeks), whose default
is 64 MiB: every real profile of the distribution's test
corpora fits with room to spare (the largest, an EasyProfiler capture, is
27.5 MB; the other large ones 10-20 MB), and a hostile stream or a
291 KB C<.gz> bomb cannot fill C<$TMPDIR>.  Pass a higher value for a
larger profile on standard input.

=item max_record_size

Bytes one record or string may occupy.  Default 256 MiB.

=item max_string_bytes

Bytes of a string table that a decoder must hold whole: pprof's
C<string_table>, which Go writes after the samples that use it.  One
string longer than this, or a table whose strings add up to more, is a
C<limit> error (C<pprof: limit: a string_table entry of N bytes would take
the string table past max_string_bytes (M) ...>) before its bytes are read
or inflated.  Default 32 MiB (real profiles hold a few MB of names), so a
small C<.gz> holding strings of hundreds of MiB stays within about 100 MB
of memory.  In the same spirit, one pprof C<Sample> may occupy no more
bytes than C<max_stack_depth> location ids and 1 MiB of values and labels
(C<limit>), checked on the first pass before the sample is read.

=item max_stack_depth, max_strings, max_frames

Frames in one stack sample or nesting depth (default 4096); entries in a
string table (default 50 million); entries in a frame table (default 50
million).  A speedscope file's C<max_frames> bounds its C<shared.frames> and its
C<profiles> alike; C<max_stack_depth> a sample's stack and the nesting of
an evented profile's C<O> events (deeper than 254 levels, the span fold's
limit, such a profile is folded as samples).

=item max_threads

Threads (and processes) of one profile, for every format and every
target: the decoders of sampling and span formats, the fold into
F<nytprof.out>, and every stack target (C<--to statprofiler> writes one
trace file per thread, speedscope one profile per thread).  The thread
past it is a C<limit> error (C<pprof: limit: more than max_threads (4096)
threads ...>), before a target writes more files.  Default 4096 (real
profiles have a few to a few hundred).

=item max_statements

C<TIME_LINE> chunks made from statement counts (Pynytprof) or from splitting
a sample's weight x interval (Tachyon).  Default 2**28, and, unless
C<max_statements> is given, no more than 4096 per byte of the input file
(at least 2**24): a few bytes of counts cannot claim billions of
statements.  Giving C<max_statements> replaces both bounds.

=item max_line

For C<convert> to a F<nytprof.out>: the highest line number a chunk may
carry (default 4,194,304).  C<nytprofhtml> and C<nytprofcalls> size
per-line tables by the highest line of a file, so a corrupt or hostile line
number such as 2**31-1 would make them allocate tens of gigabytes; such a
stream is refused with a C<limit> error (C<nytprof-writer: limit: ...>)
instead, and the target is left untouched.  Raise it for generated sources
longer than that.

=back

A fixed bound beside these: a C<perf script> file may name at most 1000
distinct events (C<perf: limit: more than 1000 events in one file>); a real
recording has a handful.  A pstats file's marshal objects may nest at most 200 deep (C<pstats:
limit: marshal objects nested more than 200 deep>; a pstats dict needs
five levels, a code object's constants a few more), and a long integer
may have at most 100000 digits; a reference must name an object already
begun (C<corrupt>).  A callgrind file may name at most 64 events and two
position kinds; its lines are at most C<max_record_size> bytes.

Every limit is a positive integer: C<max_stack_depth>, C<max_strings>,
C<max_frames>, C<max_line> and C<max_threads> (and C<pid>) at most 4294967295, the others
at most 18446744073709551615; a value out of range is a C<usage> error,
never cut to its low bits.

Sums and products of weights and intervals (a sample's weight x the
sampling interval, a thread's or stack's total) are exact: one that would
not fit 63 bits (pprof's values are int64) throws a C<limit> error
(C<pprof: limit: ...: a thread's sampled time of N x M ns does not fit 63
bits>) for every target, as C<merge> does, instead of wrapping.  A
StatProfiler record's weight is 32 bits: a sample of more than 4294967295
ticks (1 µs ticks for ns weights: about 71 minutes in one sample) is a
C<limit> error (C<statprofiler-writer: limit: OUT: a sample of N ns (M
ticks of 1 us) does not fit a StatProfiler record's weight ...>), never cut.

=head1 ERRORS

Everything a decoder rejects is thrown as a L<Devel::ProfileBridge::Error>
whose text is C<< <format>: <class>: <what> at byte <offset> of <file> >>;
the class is C<truncated>, C<corrupt>, C<unsupported>, C<limit> or C<io>;
writers add C<usage> for calls out of order and handles that are not
theirs.  A bad option or argument throws the same object with class
C<usage> and format C<profbridge>, one line that names the caller
instead of a format: C<Devel::ProfileBridge: usage: convert: compress must
be 0..9, not '12'> from the Perl API, C<profbridge: usage: ...> from the
command (B<profbridge>
exits 1 on it, as on its own usage errors; 2 on every other error, a usage
error that names a file included: inputs whose weights do not add).
Every argument is checked the same way: a reference where a path or a
value belongs (C<< in => [ $file ] >>, C<< filename => $fh >>,
C<< thread => [ 1 ] >>, a writer's names and numbers) is a C<usage> error
saying what it is (C<Devel::ProfileBridge: usage: convert: in must be a path (a
string), not an ARRAY reference>), never read as its C<ARRAY(0x...)> text;
an object with its own string form (a path object) is taken as that
string.  C<compress> is 0..9 (the default is the writer's own: leave it
out).  An
output that cannot be written says so with the system's reason
(C<collapsed: io: OUT: cannot write the collapsed stacks: No space left on
device>).  Control bytes in a message or a file name (which a profile
chooses) are shown as C<\xHH> (C0, DEL, and C1 as UTF-8), in every error
line and warning, so a name cannot drive the terminal or split the line;
the object's C<message> and C<file> keep the bytes as they were.

=head1 SEE ALSO

L<Devel::ProfileBridge::Formats> (every format read and written, in
brief), L<Devel::ProfileBridge::Internals> (how the distribution is built),
L<Devel::NYTProf>, L<Devel::NYTProf::ReadStream>, L<profbridge>.

=head1 LICENSE

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
