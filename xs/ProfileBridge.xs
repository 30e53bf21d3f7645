/* ProfileBridge.xs - glue only: C chunks -> Perl calls, C errors -> one croak.
 *
 * Everything that parses, folds or writes lives in ../c (plain C99).  This
 * file marshals: options hash -> pb_options, chunk -> callback arguments
 * (NYTProf 6.12's callback_info[] conventions), pb_error -> an exception
 * object of class Devel::ProfileBridge::Error.
 */
#define PERL_NO_GET_CONTEXT
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#include <pthread.h>
#include <sys/stat.h>
#endif
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#include "pb.h"
#include "formats.h"
#include "json_lines.h"
#include "write_nytprof.h"
#include "present.h"
#include "outputs.h"
#include "losses.h"
#include "write_statprofiler.h"
#include "output.h"

/* children forked since this library was loaded, counted in each child by a
 * pthread_atfork handler (set at BOOT): a for_chunks callback that forked is
 * told apart without a getpid() system call after every chunk */
static volatile unsigned long pb_forks;
static void pb_count_fork(void) { pb_forks++; }

/* ---- errors ------------------------------------------------------------ */

/* Croak with a Devel::ProfileBridge::Error built from the record. */
static void croak_pb(pTHX_ const pb_error *e)
{
    HV *hv = newHV();
    char line[PB_ERR_MSG_MAX + PB_ERR_FILE_MAX + 128];
    SV *obj;
    pb_error_format(e, line, sizeof line);
    (void)hv_stores(hv, "format", newSVpv(e->format ? e->format : "profbridge", 0));
    (void)hv_stores(hv, "class", newSVpv(pb_status_class(e->status), 0));
    (void)hv_stores(hv, "message", newSVpv(e->message, 0));
    (void)hv_stores(hv, "file", newSVpv(e->file, 0));
    (void)hv_stores(hv, "offset", e->has_offset ? newSVuv((UV)e->offset) : newSV(0));
    (void)hv_stores(hv, "line", newSVpv(line, 0));
    obj = sv_bless(newRV_noinc((SV *)hv), gv_stashpv("Devel::ProfileBridge::Error", GV_ADD));
    croak_sv(sv_2mortal(obj));
}

/* ---- options ------------------------------------------------------------ */

static UV opt_uv(pTHX_ HV *hv, const char *key)
{
    SV **svp = hv ? hv_fetch(hv, key, (I32)strlen(key), 0) : NULL;
    if (!svp || !SvOK(*svp))
        return 0;
    return SvUV(*svp);
}

/* a 32-bit limit or pid: a bigger value is refused, never cut to its low
 * bits (the Perl API checks first; this guards the XS entry points) */
static uint32_t opt_u32(pTHX_ HV *hv, const char *key)
{
    UV v = opt_uv(aTHX_ hv, key);
    if (v > (UV)UINT32_MAX)
        croak("Devel::ProfileBridge: %s must be at most 4294967295, not %" UVuf, key, v);
    return (uint32_t)v;
}

/* options.progress -> the Perl code reference (done, total); its errors are
 * ignored: a progress display must never stop a conversion */
static void progress_cb(void *ud, uint64_t done, uint64_t total)
{
    dTHX;
    dSP;
    ENTER;
    SAVETMPS;
    PUSHMARK(SP);
    XPUSHs(sv_2mortal(newSVuv((UV)done)));
    XPUSHs(total == UINT64_MAX ? &PL_sv_undef : sv_2mortal(newSVuv((UV)total)));
    PUTBACK;
    call_sv((SV *)ud, G_DISCARD | G_EVAL);
    FREETMPS;
    LEAVE;
}

/* A string or an array of strings as a C array (freed with the caller's
 * scope; the strings are valid while the options hash lives).  NULL, n 0
 * when absent. */
static const char *const *string_list(pTHX_ SV **svp, size_t *n)
{
    const char **v;
    *n = 0;
    if (!svp || !SvOK(*svp))
        return NULL;
    if (SvROK(*svp) && SvTYPE(SvRV(*svp)) == SVt_PVAV) {
        AV *av = (AV *)SvRV(*svp);
        SSize_t i, top = av_top_index(av);
        Newxz(v, top + 2, const char *);
        SAVEFREEPV(v);
        for (i = 0; i <= top; i++) {
            SV **e = av_fetch(av, i, 0);
            if (e && SvOK(*e))
                v[(*n)++] = SvPV_nolen(*e);
        }
        return v;
    }
    Newxz(v, 1, const char *);
    SAVEFREEPV(v);
    v[0] = SvPV_nolen(*svp);
    *n = 1;
    return v;
}

static void fill_options(pTHX_ HV *hv, pb_options *o)
{
    SV **svp;
    pb_options_init(o);
    if (!hv)
        return;
    o->max_decompressed_bytes = opt_uv(aTHX_ hv, "max_decompressed_bytes");
    o->max_record_size = opt_uv(aTHX_ hv, "max_record_size");
    o->max_stack_depth = opt_u32(aTHX_ hv, "max_stack_depth");
    o->max_strings = opt_u32(aTHX_ hv, "max_strings");
    o->max_frames = opt_u32(aTHX_ hv, "max_frames");
    o->max_statements = (uint64_t)opt_uv(aTHX_ hv, "max_statements");
    o->max_line = opt_u32(aTHX_ hv, "max_line");
    o->max_threads = opt_u32(aTHX_ hv, "max_threads");
    o->max_string_bytes = (uint64_t)opt_uv(aTHX_ hv, "max_string_bytes");
    o->salvage = (int)opt_uv(aTHX_ hv, "salvage");
    o->reread = (int)opt_uv(aTHX_ hv, "_reread");
    o->jobs = (int)opt_uv(aTHX_ hv, "jobs");
    svp = hv_fetchs(hv, "progress", 0);
    if (svp && SvROK(*svp) && SvTYPE(SvRV(*svp)) == SVt_PVCV) {
        o->progress = progress_cb;
        o->progress_ud = (void *)SvRV(*svp); /* valid while the options hash lives */
    }
    svp = hv_fetchs(hv, "source", 0);
    o->no_source = svp && SvOK(*svp) && !SvTRUE(*svp);
    svp = hv_fetchs(hv, "time_order", 0);
    o->no_time_order = svp && SvOK(*svp) && !SvTRUE(*svp);
    svp = hv_fetchs(hv, "source_any", 0);
    o->source_any = svp && SvTRUE(*svp);
    o->source_roots = string_list(aTHX_ hv_fetchs(hv, "source_root", 0), &o->n_source_roots);
    o->strip_prefixes = string_list(aTHX_ hv_fetchs(hv, "strip_prefix", 0), &o->n_strip_prefixes);
    svp = hv_fetchs(hv, "source_base", 0);
    if (svp && SvOK(*svp))
        o->source_base = SvPV_nolen(*svp); /* valid while the options hash lives */
    svp = hv_fetchs(hv, "sample_type", 0);
    if (svp && SvOK(*svp))
        o->sample_type = SvPV_nolen(*svp); /* a format with sample types; valid while the options hash lives */
    svp = hv_fetchs(hv, "pid", 0);
    if (svp && SvOK(*svp)) {
        o->have_pid = 1;
        o->pid = opt_u32(aTHX_ hv, "pid");
    }
    svp = hv_fetchs(hv, "thread", 0);
    if (svp && SvOK(*svp)) {
        STRLEN len;
        const char *p = SvPV(*svp, len);
        UV v = 0;
        int numeric = len > 0 && grok_number(p, len, &v) == IS_NUMBER_IN_UV;
        o->have_thread = 1;
        if (numeric)
            o->thread_id = (uint64_t)v;
        else
            o->thread_name = p; /* valid while the options hash lives */
    }
}

static pb_format format_arg(pTHX_ SV *sv)
{
    pb_format f;
    if (!sv || !SvOK(sv))
        return PB_FMT_UNKNOWN;
    f = pb_format_from_name(SvPV_nolen(sv));
    if (f == PB_FMT_UNKNOWN) {
        char list[256];
        croak("Devel::ProfileBridge: unknown format '%s' (known: %s)", SvPV_nolen(sv),
              pb_format_list(0, 0, ", ", list, sizeof list));
    }
    return f;
}

/* ---- the Perl-calling sink ------------------------------------------------ */

/* NYTProf's cb_args[]: the callback's arguments after the tag are reused
 * scalars, one per position (TIME_LINE's $_[1] is the same scalar as
 * SUB_INFO's $_[1]), so what a callback keeps (\$_[1], \@_) changes as
 * under NYTProf's reader.  NEW_FID's and SRC_LINE's strings are fresh
 * mortals and take no position, as there. */
#define XS_MAX_ARGS 10

typedef struct {
    pb_sink sink;
    unsigned char wants[PB_TAG_COUNT];
    SV *cb[PB_TAG_COUNT];   /* the CV to call per tag (a reference held) */
    unsigned char light[PB_TAG_COUNT]; /* cb[tag] may be run as a light call */
    SV *tag_sv[PB_TAG_COUNT];
    SV *arg[XS_MAX_ARGS];   /* NYTProf's cb_args, by position */
    /* NYTProf reads the sub names of SUB_INFO, SUB_CALLERS and SUB_RETURN
     * into two reused scalars whose UTF-8 flag a STRING_UTF8 turns on and
     * nothing turns off again; the arguments are copies of them */
    unsigned char s_utf8[2];
    SV *seq_sv;             /* $. */
    pb_source src;
    int src_open;
    /* what the decoder and fold own while they call us: released here when
     * a callback dies and Perl unwinds past them (chunk.h) */
    pb_cleanups cleanups;
    int errno_in;           /* $! as the caller left it: what callbacks see */
    int *errnop;            /* &errno, looked up once */
    pid_t pid;              /* the process reading: a child forked in a callback stops */
    unsigned long forks;    /* pb_forks when the reading began */
    /* the light call (below): the sub of the context pushed, NULL when none */
    CV *lc_cv;
    OP *lc_op;              /* PL_op of the XSUB, as call_sv leaves it */
    bool lc_oldcatch;
#ifdef MULTIPLICITY
    PerlInterpreter *interp;
#endif
} xs_sink;

static void xs_sink_cleanup(pTHX_ void *p)
{
    xs_sink *x = (xs_sink *)p;
    int i;
    pb_cleanups_run(&x->cleanups);
    if (x->src_open)
        pb_src_close(&x->src);
    for (i = 0; i < PB_TAG_COUNT; i++) {
        SvREFCNT_dec(x->tag_sv[i]);
        SvREFCNT_dec(x->cb[i]);
    }
    for (i = 0; i < XS_MAX_ARGS; i++)
        SvREFCNT_dec(x->arg[i]);
    Safefree(x);
}

/* $. = n, as NYTProf does before each callback, without a magic round-trip:
 * the value is kept in the SV and, when a filehandle was read last, in its
 * line counter (which is where reading $. looks first). */
static void set_input_line(pTHX_ SV *sv, IV n)
{
    GV *gv = PL_last_in_gv;
    if (gv && isGV_with_GP(gv) && GvIO(gv))
        IoLINES(GvIOp(gv)) = n;
    if (SvTYPE(sv) >= SVt_PVIV && !SvREADONLY(sv) && !SvROK(sv)) {
        (void)SvIOK_only(sv);   /* drop a cached string or NV */
        SvIV_set(sv, n);
    } else {
        sv_setiv(sv, n);
    }
}

/* sv_setuv and sv_setnv (what NYTProf calls) for a plain numeric scalar,
 * inline; anything else (a string, reference, read-only or magic scalar a
 * callback left in @_) goes through them */
#define PLAIN_SCALAR(sv, types) \
    (!(SvFLAGS(sv) & (SVf_THINKFIRST | SVf_OOK)) && ((1U << SvTYPE(sv)) & (types)))
#define IV_TYPES ((1U << SVt_IV) | (1U << SVt_PVIV) | (1U << SVt_PVNV))
#define NV_TYPES ((1U << SVt_NV) | (1U << SVt_PVNV))

static inline void set_uv(pTHX_ SV *sv, UV u)
{
    if (LIKELY(u <= (UV)IV_MAX && PLAIN_SCALAR(sv, IV_TYPES))) {
        SvFLAGS(sv) = (SvFLAGS(sv) & ~(SVf_OK | SVf_IVisUV | SVf_UTF8)) | (SVf_IOK | SVp_IOK);
        SvIV_set(sv, (IV)u);
        SvTAINT(sv);
    } else {
        sv_setuv(sv, u);
    }
}

/* set_uv for a value that fits an IV (a U32) */
static inline void set_u32(pTHX_ SV *sv, U32 u)
{
    if (LIKELY(PLAIN_SCALAR(sv, IV_TYPES))) {
        SvFLAGS(sv) = (SvFLAGS(sv) & ~(SVf_OK | SVf_IVisUV | SVf_UTF8)) | (SVf_IOK | SVp_IOK);
        SvIV_set(sv, (IV)u);
        SvTAINT(sv);
    } else {
        sv_setuv(sv, (UV)u);
    }
}

static inline void set_nv(pTHX_ SV *sv, NV n)
{
    if (LIKELY(PLAIN_SCALAR(sv, NV_TYPES))) {
        SvFLAGS(sv) = (SvFLAGS(sv) & ~(SVf_OK | SVf_IVisUV | SVf_UTF8)) | (SVf_NOK | SVp_NOK);
        SvNV_set(sv, n);
        SvTAINT(sv);
    } else {
        sv_setnv(sv, n);
    }
}

/* the callback's arguments for chunk c, as NYTProf 6.12's
 * load_perl_callback() makes them; returns how many (the tag included) */
static int chunk_args(pTHX_ xs_sink *x, const pb_chunk *c, SV **argv)
{
    const char *sig = pb_tag_sig[c->tag];
    int n = 0, ai = 0, ui = 0, ni = 0, si = 0;

    argv[n++] = x->tag_sv[c->tag];
    /* the two tags of nearly every chunk, without walking the signature */
    if (c->tag == PB_T_TIME_LINE) {
        set_uv(aTHX_ argv[1] = x->arg[0], (UV)(IV)c->ticks);
        set_u32(aTHX_ argv[2] = x->arg[1], c->u[0]);
        set_u32(aTHX_ argv[3] = x->arg[2], c->u[1]);
        return 4;
    }
    if (c->tag == PB_T_DISCOUNT)
        return 1;
    for (; *sig; sig++) {
        SV *sv;
        switch (*sig) {
        case 'u':
            sv = x->arg[ai++];
            set_u32(aTHX_ sv, c->u[ui++]);
            break;
        case 'i':
            /* as NYTProf: sv_setuv((I32)ticks), so -1 shows as 2**64-1 */
            sv = x->arg[ai++];
            set_uv(aTHX_ sv, (UV)(IV)c->ticks);
            break;
        case 'n':
            sv = x->arg[ai++];
            set_nv(aTHX_ sv, c->n[ni++]);
            break;
        default: /* 's' */
            if (c->tag == PB_T_NEW_FID || c->tag == PB_T_SRC_LINE) {
                /* NYTProf passes fresh mortals for these two */
                sv = sv_2mortal(newSVpvn(c->s[si].ptr, c->s[si].len));
                if (c->s[si].utf8)
                    SvUTF8_on(sv);
            } else {
                sv = x->arg[ai++];
                sv_setpvn(sv, c->s[si].ptr, c->s[si].len);
                if (c->tag <= PB_T_OPTION) {
                    SvUTF8_off(sv); /* COMMENT, ATTRIBUTE, OPTION: never UTF-8 */
                } else {
                    x->s_utf8[si] |= c->s[si].utf8 != 0;
                    if (x->s_utf8[si])
                        SvUTF8_on(sv);
                    else
                        SvUTF8_off(sv);
                }
            }
            si++;
            break;
        }
        argv[n++] = sv;
    }
    return n;
}

/* ---- the light call ----------------------------------------------------------
 * A callback that is a plain Perl sub is called the way perl's sort and
 * List::Util call a block (perlcall, LIGHTWEIGHT CALLBACKS): one sub context
 * is pushed, on a stack of its own, for as long as the reading goes on, and
 * each chunk runs the sub's ops on it.  What the callback can see is what
 * call_sv(cv, G_DISCARD) gives it (as NYTProf's reader calls it: in scalar
 * context), done by hand: @_ is the sub's
 * own pad array holding the argument scalars themselves (aliases, reified
 * into a new array when the callback keeps \@_, as pp_entersub and
 * pp_leavesub do), caller() shows the sub called with arguments in scalar
 * context from the XSUB's line, and after each call its scope is left
 * (lexicals cleared, local restored), its temporaries are freed and
 * PL_curcop, PL_curpm, PL_op are as before it.  A die unwinds the context
 * as it unwinds any sub's.  Not light (call_sv instead): an XSUB, a sub
 * not defined yet (AUTOLOAD), an lvalue sub, a sub holding a goto (goto &sub
 * cannot leave a light call), under the debugger or a profiler that hooks
 * entersub. */

/* perl's own entersub (pp_proto.h is for the core): a profiler or debugger
 * that replaced it sees call_sv's calls, so it gets those */
PERL_CALLCONV OP *Perl_pp_entersub(pTHX);

static int op_tree_has(const OP *o, OPCODE type)
{
    if (o->op_type == type)
        return 1;
    if (o->op_flags & OPf_KIDS) {
        const OP *k;
        for (k = cUNOPx(o)->op_first; k; k = OpSIBLING(k))
            if (op_tree_has(k, type))
                return 1;
    }
    return 0;
}

static int light_callable(pTHX_ CV *cv)
{
    if (CvISXSUB(cv) || !CvROOT(cv) || CvLVALUE(cv) || !CvPADLIST(cv))
        return 0;
    if (PERLDB_SUB || PL_ppaddr[OP_ENTERSUB] != Perl_pp_entersub)
        return 0;
    return !op_tree_has(CvROOT(cv), OP_GOTO);
}

/* @_ with room for any chunk's arguments, written in place (as
 * pp_entersub grows it) */
static AV *light_room(pTHX_ AV *av)
{
    if (UNLIKELY(AvMAX(av) < XS_MAX_ARGS)) {
        SV **ary = AvALLOC(av);
        Renew(ary, XS_MAX_ARGS + 1, SV *);
        AvMAX(av) = XS_MAX_ARGS;
        AvALLOC(av) = ary;
        AvARRAY(av) = ary;
    }
    return av;
}

/* cx becomes a call of cv with @_ (pp_entersub's part, minus the args) */
static void light_pushsub(pTHX_ xs_sink *x, PERL_CONTEXT *cx, CV *cv)
{
    PADLIST *padlist = CvPADLIST(cv);
    AV *av;
    cx_pushsub(cx, cv, NULL, 1);
    cx->blk_u16 = 0; /* as call_sv's op: not an lvalue call */
    if (++CvDEPTH(cv) >= 2)
        Perl_pad_push(aTHX_ padlist, CvDEPTH(cv));
    PAD_SET_CUR_NOSAVE(padlist, CvDEPTH(cv));
    av = light_room(aTHX_ MUTABLE_AV(PAD_SVl(0)));
    cx->blk_sub.savearray = GvAV(PL_defgv);
    GvAV(PL_defgv) = MUTABLE_AV(SvREFCNT_inc_simple_NN(av));
    x->lc_cv = cv;
}

/* make the pushed context a call of cv, pushing it the first time */
static void light_enter(pTHX_ xs_sink *x, CV *cv)
{
    PERL_CONTEXT *cx;
    if (x->lc_cv == cv)
        return;
    if (x->lc_cv) {
        cx = CX_CUR();
        cx_popsub(cx);
        cx->cx_type = CXt_SUB | CXp_MULTICALL;
    } else {
        dSP;
        x->lc_op = PL_op;
        x->lc_oldcatch = CATCH_GET;
        CATCH_SET(TRUE);
        PUSHSTACKi(PERLSI_MULTICALL);
        cx = cx_pushblock(CXt_SUB | CXp_MULTICALL, G_SCALAR, PL_stack_sp, PL_savestack_ix);
    }
    light_pushsub(aTHX_ x, cx, cv);
}

/* one call of the pushed sub with its n arguments already in @_
 * (AvARRAY), left as pp_leavesub and call_sv(G_DISCARD) leave a call, the
 * context kept */
static void light_call(pTHX_ xs_sink *x, int n)
{
    PERL_CONTEXT *cx;
    AV *av = MUTABLE_AV(PAD_SVl(0));
    SSize_t floor = PL_tmps_floor;
    AvFILLp(av) = n - 1;
    /* the arguments' mortals (NEW_FID, SRC_LINE) outlive the callback's
     * statements, as under call_sv's SAVETMPS */
    PL_tmps_floor = PL_tmps_ix;
    PL_op = CvSTART(x->lc_cv);
    CALLRUNOPS(aTHX);
    cx = CX_CUR();
    PL_stack_sp = PL_stack_base + cx->blk_oldsp;
    CX_LEAVE_SCOPE(cx);
    av = MUTABLE_AV(PAD_SVl(0));
    if (LIKELY(!AvREAL(av) && GvAV(PL_defgv) == av)) {
        CLEAR_ARGARRAY(av);
    } else {
        /* @_ was kept, reified or replaced: leave it as a sub's exit does,
         * then give the next call a fresh one as a sub's entry does */
        cx_popsub_args(cx);
        av = light_room(aTHX_ MUTABLE_AV(PAD_SVl(0)));
        cx->blk_sub.savearray = GvAV(PL_defgv);
        GvAV(PL_defgv) = MUTABLE_AV(SvREFCNT_inc_simple_NN(av));
    }
    PL_markstack_ptr = PL_markstack + cx->blk_oldmarksp;
    PL_scopestack_ix = cx->blk_oldscopesp;
    PL_curpm = cx->blk_oldpm;
    PL_curcop = cx->blk_oldcop;
    PL_op = x->lc_op;
    PL_tmps_floor = floor;
    FREETMPS; /* the callback's temporaries, then the arguments' mortals */
}

/* pop the light call's context, when the reading is over */
static void light_end(pTHX_ xs_sink *x)
{
    PERL_CONTEXT *cx;
    if (!x->lc_cv)
        return;
    cx = CX_CUR();
    CX_LEAVE_SCOPE(cx);
    cx_popsub(cx);
    cx_popblock(cx);
    CX_POP(cx);
    POPSTACK;
    CATCH_SET(x->lc_oldcatch);
    PL_op = x->lc_op;
    x->lc_cv = NULL;
}

/* the chunk's call by call_sv, as NYTProf's reader makes it */
static void sv_call(pTHX_ xs_sink *x, pb_tag tag, SV **argv, int n)
{
    dSP;
    int i;
    PUSHMARK(SP);
    EXTEND(SP, n);
    for (i = 0; i < n; i++)
        PUSHs(argv[i]);
    PUTBACK;
    call_sv(x->cb[tag], G_DISCARD | G_SCALAR); /* NYTProf's: wantarray is false, not undef */
    FREETMPS; /* NEW_FID's and SRC_LINE's mortals: memory must not grow with the chunks */
}

static void fork_check(pTHX_ xs_sink *x)
{
    /* a callback forked and the child came back: parent and child share
     * the input's file offset, so a child that read on would corrupt
     * both streams.  It stops here, before reading a byte. */
    pb_error e;
    pb_error_init(&e, "for_chunks", "");
    pb_fail_nooff(&e, PB_ERR_USAGE,
                  "a for_chunks callback forked and the child returned to the reader (process %ld, reading "
                  "in %ld): the two would share the input's file offset; the child must end inside the "
                  "callback (exit or POSIX::_exit), the parent reads on",
                  (long)getpid(), (long)x->pid);
    croak_pb(aTHX_ &e);
}

static int xs_chunk(pb_sink *self, const pb_chunk *c)
{
    xs_sink *x = (xs_sink *)self->ctx;
#ifdef MULTIPLICITY
    dTHXa(x->interp);
#endif
    SV *stackv[XS_MAX_ARGS + 1];
    SV **argv = stackv;
    const int light = x->light[c->tag];
    int n;

    if (light) {
        if (UNLIKELY(x->lc_cv != (CV *)x->cb[c->tag]))
            light_enter(aTHX_ x, (CV *)x->cb[c->tag]);
        argv = AvARRAY(MUTABLE_AV(PAD_SVl(0))); /* the arguments go straight into @_ */
    }
    set_input_line(aTHX_ x->seq_sv, (IV)(self->seq - 1));
    n = chunk_args(aTHX_ x, c, argv);
    /* $! as the caller had it, whatever the decoder's own I/O left in errno
     * (as under NYTProf's reader: a script dying here exits 255, not ENOENT) */
    *x->errnop = x->errno_in;
    if (light)
        light_call(aTHX_ x, n);
    else
        sv_call(aTHX_ x, c->tag, argv, n);
    if (pb_forks != x->forks) /* not getpid(): a system call per chunk */
        fork_check(aTHX_ x);
    return 0;
}

/* warn with msg's control bytes escaped (error.h): a name from a profile
 * reaches the terminal as text */
static void warn_escaped(pTHX_ const char *msg)
{
    size_t cap = strlen(msg) * 4 + 1;
    char *b = (char *)safemalloc(cap);
    SAVEFREEPV(b);
    pb_escape_controls(msg, b, cap);
    warn("%s\n", b);
}

static void xs_warn(pb_sink *self, const char *msg)
{
    xs_sink *x = (xs_sink *)self->ctx;
#ifdef MULTIPLICITY
    dTHXa(x->interp);
#endif
    PERL_UNUSED_VAR(x);
    ENTER;
    warn_escaped(aTHX_ msg);
    LEAVE;
}

static SV *code_of(pTHX_ SV *sv, const char *what)
{
    if (SvROK(sv) && SvTYPE(SvRV(sv)) == SVt_PVCV)
        return SvRV(sv);
    croak("Devel::ProfileBridge: %s must be a code reference", what);
    return NULL;
}

/* Build the sink on the savestack: freed (and the file closed) at scope
 * exit, including when a callback dies. */
static xs_sink *new_xs_sink(pTHX_ SV *callback)
{
    xs_sink *x;
    int i;
    SV *deflt = NULL;
    SV *cbs[PB_TAG_COUNT] = { NULL };
    Newxz(x, 1, xs_sink);
    x->errno_in = errno;
    x->errnop = &errno;
    x->pid = getpid();
    x->forks = pb_forks;
    SAVEDESTRUCTOR_X(xs_sink_cleanup, x);
#ifdef MULTIPLICITY
    x->interp = aTHX;
#endif
    if (SvROK(callback) && SvTYPE(SvRV(callback)) == SVt_PVHV) {
        HV *hv = (HV *)SvRV(callback);
        HE *he;
        SV **d = hv_fetchs(hv, "", 0);
        if (d && SvOK(*d))
            deflt = code_of(aTHX_ *d, "the '' (default) callback");
        hv_iterinit(hv);
        while ((he = hv_iternext(hv))) {
            I32 klen;
            const char *k = hv_iterkey(he, &klen);
            pb_tag t;
            if (klen == 0)
                continue;
            t = pb_tag_from_name(k, (size_t)klen);
            if (t == PB_TAG_COUNT)
                croak("Devel::ProfileBridge: unknown tag '%s' in the callback hash", k);
            cbs[t] = code_of(aTHX_ hv_iterval(hv, he), "a callback hash value");
        }
    } else {
        deflt = code_of(aTHX_ callback, "the callback");
    }
    for (i = 0; i < PB_TAG_COUNT; i++) {
        /* held: a callback may delete itself from the hash it came in */
        x->cb[i] = SvREFCNT_inc_simple(cbs[i] ? cbs[i] : deflt);
        x->wants[i] = x->cb[i] != NULL;
        x->light[i] = x->cb[i] && light_callable(aTHX_ (CV *)x->cb[i]);
        x->tag_sv[i] = newSVpv(pb_tag_name[i], 0);
        SvREADONLY_on(x->tag_sv[i]);
    }
    for (i = 0; i < XS_MAX_ARGS; i++)
        x->arg[i] = newSV(0);
    /* $. localised as NYTProf's reader does it (save_scalar: the caller's
     * value and PL_last_in_gv come back at the caller's LEAVE, also when a
     * callback dies); the counter of a filehandle read last keeps the last
     * chunk number, as under NYTProf */
    x->seq_sv = save_scalar(gv_fetchpvs(".", GV_ADD, SVt_IV));
    x->sink.chunk = xs_chunk;
    x->sink.warn = xs_warn;
    x->sink.wants = x->wants;
    x->sink.ctx = x;
    x->sink.cleanups = &x->cleanups;
    return x;
}

/* info as a hash; with facts_how, also "_facts": how info prints each
 * fact, [ key, "text" | "list" | "beside", note ] (Devel::ProfileBridge
 * takes it out before anyone sees the hash) */
static HV *info_hv(pTHX_ const pb_format_info *info, int facts_how)
{
    HV *hv = newHV();
    AV *facts = facts_how ? (AV *)sv_2mortal((SV *)newAV()) : NULL;
    size_t i;
    (void)hv_stores(hv, "format", info->name ? newSVpv(info->name, 0) : newSV(0));
    (void)hv_stores(hv, "version", info->version[0] ? newSVpv(info->version, 0) : newSV(0));
    (void)hv_stores(hv, "compressed", info->compressed < 0 ? newSV(0) : newSViv(info->compressed));
    if (info->compression[0])
        (void)hv_stores(hv, "compression", newSVpv(info->compression, 0));
    if (info->byte_order[0])
        (void)hv_stores(hv, "byte_order", newSVpv(info->byte_order, 0));
    if (info->run_files)
        (void)hv_stores(hv, "run_files", newSVuv((UV)info->run_files));
    for (i = 0; i < info->n_facts; i++) {
        const pb_fact *f = &info->facts[i];
        SV *v;
        if (f->type == PB_FACT_LIST) {
            /* the comma-separated items as an array */
            AV *av = newAV();
            const char *p = f->value;
            while (*p) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                av_push(av, newSVpvn(p, l));
                p += l + (c != NULL);
            }
            v = newRV_noinc((SV *)av);
        } else {
            v = newSVpv(f->value, 0);
        }
        (void)hv_store(hv, f->key, (I32)strlen(f->key), v, 0);
        if (facts) {
            AV *row = newAV();
            av_push(row, newSVpv(f->key, 0));
            av_push(row, newSVpv(f->type == PB_FACT_LIST ? "list" : f->type == PB_FACT_BESIDE ? "beside" : "text", 0));
            av_push(row, newSVpv(f->note, 0));
            av_push(facts, newRV_noinc((SV *)row));
        }
    }
    if (facts)
        (void)hv_stores(hv, "_facts", newRV_inc((SV *)facts));
    (void)hv_stores(hv, "supported", newSViv(info->supported));
    return hv;
}

/* A conversion's warnings are kept until it has returned: a __WARN__
 * handler that dies must not unwind through the writer (its temp file and
 * heap would be left behind). */
typedef struct {
    SV *lines; /* each message followed by "\n" */
#ifdef MULTIPLICITY
    PerlInterpreter *interp;
#endif
} held_warnings;

static void held_warn_cb(void *ud, const char *msg)
{
    held_warnings *hw = (held_warnings *)ud;
#ifdef MULTIPLICITY
    dTHXa(hw->interp);
#endif
    {
        /* escaped here: held_warnings_emit splits at the newlines */
        size_t cap = strlen(msg) * 4 + 1;
        char *b = (char *)malloc(cap);
        if (!b)
            return;
        pb_escape_controls(msg, b, cap);
        sv_catpv(hw->lines, b);
        free(b);
    }
    sv_catpvs(hw->lines, "\n");
}

static void held_warnings_init(pTHX_ held_warnings *hw)
{
    hw->lines = sv_2mortal(newSVpvs(""));
#ifdef MULTIPLICITY
    hw->interp = aTHX;
#endif
}

static void held_warnings_emit(pTHX_ held_warnings *hw)
{
    STRLEN len;
    const char *p = SvPV(hw->lines, len), *end = p + len;
    while (p < end) {
        const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
        warn("%.*s\n", (int)(nl - p), p);
        p = nl + 1;
    }
}

static void perl_warn_cb(void *ud, const char *msg)
{
#ifdef MULTIPLICITY
    dTHXa((PerlInterpreter *)ud);
#else
    PERL_UNUSED_ARG(ud);
#endif
    ENTER;
    warn_escaped(aTHX_ msg);
    LEAVE;
}

/* ---- writer handles ------------------------------------------------------ *
 * A handle is a blessed reference to a scalar carrying ext magic whose
 * mg_ptr is the C writer.  Only this file can attach that magic (the vtable
 * is the key), so a forged or copied handle (bless \$n, Storable::dclone)
 * has none and is refused; an ithreads clone gets a NULL pointer (svt_dup)
 * and its package's CLONE_SKIP keeps it away from the clone altogether; the
 * magic's free callback releases the C writer exactly once.  In a forked
 * child the C writers refuse to write and their free touches no file. */

static int handle_mg_dup(pTHX_ MAGIC *mg, CLONE_PARAMS *param)
{
    PERL_UNUSED_ARG(param);
    mg->mg_ptr = NULL; /* the C state stays with the thread that made it */
    return 0;
}

static int nyw_mg_free(pTHX_ SV *sv, MAGIC *mg)
{
    PERL_UNUSED_ARG(sv);
    if (mg->mg_ptr)
        pb_nytprof_writer_abort((pb_nytprof_writer *)mg->mg_ptr); /* not closed: the target stays as it was */
    mg->mg_ptr = NULL;
    return 0;
}

static int spw_mg_free(pTHX_ SV *sv, MAGIC *mg)
{
    PERL_UNUSED_ARG(sv);
    if (mg->mg_ptr)
        pb_spw_free((pb_spw *)mg->mg_ptr);
    mg->mg_ptr = NULL;
    return 0;
}

static MGVTBL nyw_vtbl = {0, 0, 0, 0, nyw_mg_free, 0, handle_mg_dup, 0};
static MGVTBL spw_vtbl = {0, 0, 0, 0, spw_mg_free, 0, handle_mg_dup, 0};

static void croak_usage(pTHX_ const char *format, const char *file, const char *msg)
{
    pb_error e;
    pb_error_init(&e, format, file);
    pb_fail_nooff(&e, PB_ERR_USAGE, "%s", msg);
    croak_pb(aTHX_ &e);
}

static SV *handle_new(pTHX_ MGVTBL *vt, const char *klass, void *ptr, const char *path)
{
    SV *obj = newSVpv(path, 0); /* the caller's file name, for the usage errors */
    MAGIC *mg = sv_magicext(obj, NULL, PERL_MAGIC_ext, vt, (const char *)ptr, 0);
    mg->mg_flags |= MGf_DUP;
    return sv_bless(newRV_noinc(obj), gv_stashpv(klass, GV_ADD));
}

static MAGIC *handle_mg(pTHX_ SV *h, MGVTBL *vt)
{
    /* mg_findext reads SvMAGIC, which only an SV of type PVMG or above has:
     * a forged handle (a reference to a plain number) must not be read so */
    return SvROK(h) && SvTYPE(SvRV(h)) >= SVt_PVMG ? mg_findext(SvRV(h), PERL_MAGIC_ext, vt) : NULL;
}

/* the file a real handle was opened on ("" for anything else) */
static const char *handle_file(pTHX_ SV *h, MGVTBL *vt)
{
    return handle_mg(aTHX_ h, vt) && SvPOK(SvRV(h)) ? SvPVX(SvRV(h)) : "";
}

/* the C writer behind h, or a usage croak */
static void *handle_get(pTHX_ SV *h, MGVTBL *vt, const char *format)
{
    MAGIC *mg = handle_mg(aTHX_ h, vt);
    if (!mg)
        croak_usage(aTHX_ format, "",
                    "not a writer handle of this distribution (a copied, serialised or forged handle is refused)");
    if (!mg->mg_ptr)
        croak_usage(aTHX_ format, handle_file(aTHX_ h, vt), "the writer is closed, or belongs to another thread");
    return mg->mg_ptr;
}

/* take the C writer out of h (close: the handle is spent) */
static void *handle_take(pTHX_ SV *h, MGVTBL *vt, const char *format)
{
    void *p = handle_get(aTHX_ h, vt, format);
    handle_mg(aTHX_ h, vt)->mg_ptr = NULL;
    return p;
}

/* Fill a chunk from Perl values in callback order (tag already known). */
static void chunk_from_args(pTHX_ pb_chunk *c, pb_tag t, SV **args, I32 nargs, const char *file)
{
    const char *sig = pb_tag_sig[t];
    I32 need = (I32)strlen(sig), k = 0;
    int ui = 0, ni = 0, si = 0;
    if (nargs != need)
    {
        char msg[160];
        snprintf(msg, sizeof msg, "%s takes %d argument%s (%s), got %d", pb_tag_name[t], (int)need,
                 need == 1 ? "" : "s", sig, (int)nargs);
        croak_usage(aTHX_ "nytprof-writer", file, msg);
    }
    memset(c, 0, sizeof *c);
    c->tag = t;
    for (; *sig; sig++, k++) {
        SV *sv = args[k];
        switch (*sig) {
        case 'u': c->u[ui++] = (uint32_t)SvUV(sv); break;
        case 'i': c->ticks = (int32_t)(uint32_t)(SvIOK_UV(sv) ? SvUV(sv) : (UV)SvIV(sv)); break;
        case 'n': c->n[ni++] = SvNV(sv); break;
        default: {
            STRLEN len;
            const char *p = SvPV(sv, len);
            c->s[si++] = pb_str_make(p, len, SvUTF8(sv) ? 1 : 0);
        }
        }
    }
}

/* ---- StatProfiler writer handles ---------------------------------------- */

/* A Perl string as StatProfiler writes it: Latin-1 bytes (flag 0) when the
 * characters allow, else UTF-8 bytes (flag 1) -- as Devel::StatProfiler. */
static pb_str sp_str(pTHX_ SV *sv)
{
    STRLEN len;
    const char *p;
    if (SvUTF8(sv)) {
        SV *copy = sv_2mortal(newSVsv(sv));
        if (sv_utf8_downgrade(copy, TRUE)) {
            p = SvPV(copy, len);
            return pb_str_make(p, len, 0);
        }
        p = SvPV(sv, len);
        return pb_str_make(p, len, 1);
    }
    p = SvPV(sv, len);
    return pb_str_make(p, len, 0);
}

static void spw_check(pTHX_ pb_spw *w, pb_status st)
{
    if (st != PB_OK)
        croak_pb(aTHX_ pb_spw_error(w));
}

#define SPW(h) ((pb_spw *)handle_get(aTHX_ (h), &spw_vtbl, "statprofiler-writer"))

/* profbridge info: chunk counts, and (when asked) the attributes and the
 * PID_START records, from which the Perl side lists threads and processes */
typedef struct {
    pb_count_sink cs;
    HV *attrs;
    AV *pids;
    pb_loss_count *lc; /* losses counted in the same pass (NULL: not asked) */
    SV *warnings;      /* with lc: the decoder's warnings, said once it has succeeded */
    unsigned char wants[PB_TAG_COUNT]; /* all but TIME_LINE and SUB_CALLERS: those are only counted */
    uint64_t skipped[PB_TAG_COUNT];    /* ... here (pb_sink.skipped) */
} info_sink;

/* info's warnings wait for the decode's end: a file that fails says only its error */
static void info_warn(pb_sink *self, const char *msg)
{
    info_sink *is = (info_sink *)self->ctx;
    size_t cap = strlen(msg) * 4 + 1;
    char *b = (char *)malloc(cap);
    dTHX;
    if (!b)
        return;
    pb_escape_controls(msg, b, cap); /* escaped here: the list is split at its newlines */
    sv_catpv(is->warnings, b);
    sv_catpvs(is->warnings, "\n");
    free(b);
}

static int info_chunk(pb_sink *self, const pb_chunk *c)
{
    dTHX;
    info_sink *is = (info_sink *)self->ctx;
    is->cs.count[c->tag]++;
    if (is->lc)
        pb_loss_count_chunk(is->lc, c);
    if (!is->attrs)
        return 0;
    if (c->tag == PB_T_ATTRIBUTE && HvUSEDKEYS(is->attrs) < 100000) {
        SV *v = newSVpvn(c->s[1].ptr, c->s[1].len);
        if (c->s[1].utf8)
            SvUTF8_on(v);
        (void)hv_store(is->attrs, c->s[0].ptr, (I32)c->s[0].len, v, 0);
    } else if (c->tag == PB_T_PID_START && av_top_index(is->pids) < 100000) {
        AV *p = newAV();
        av_push(p, newSVuv(c->u[0]));
        av_push(p, newSVuv(c->u[1]));
        av_push(p, newSVnv(c->n[0]));
        av_push(is->pids, newRV_noinc((SV *)p));
    }
    return 0;
}

/* ---- the floor of the calls (bench/for_chunks.pl) ----------------------------
 * The calls for_chunks makes, without a file: n chunks with the tag mix of
 * counts (tag name => how many), each with arguments of its tag's shapes,
 * through the same sink as a read (xs_chunk: $., the argument scalars, the
 * light call or call_sv).  light 0 calls every chunk through call_sv. */
static void fill_floor_chunk(pb_chunk *c, pb_tag t)
{
    static const char *const str[] = { "main::a_sub_name", "main::its_caller" };
    int k;
    memset(c, 0, sizeof *c);
    c->tag = t;
    c->ticks = 17;
    for (k = 0; k < 6; k++)
        c->u[k] = 3 + (uint32_t)k;
    for (k = 0; k < 3; k++)
        c->n[k] = 0.25 + k;
    for (k = 0; k < 2; k++)
        c->s[k] = pb_str_c(str[k]);
}

/* a tag sequence of length n in which each tag appears as often as its
 * weight says, spread out (smooth weighted round robin) */
static void floor_pattern(const UV *w, pb_tag *pat, size_t n)
{
    IV cur[PB_TAG_COUNT] = { 0 };
    IV total = 0;
    size_t i;
    int t;
    for (t = 0; t < PB_TAG_COUNT; t++)
        total += (IV)w[t];
    for (i = 0; i < n; i++) {
        int best = -1;
        for (t = 0; t < PB_TAG_COUNT; t++) {
            if (!w[t])
                continue;
            cur[t] += (IV)w[t];
            if (best < 0 || cur[t] > cur[best])
                best = t;
        }
        cur[best] -= total;
        pat[i] = (pb_tag)best;
    }
}

/* a list of loss rules (pb_loss, formats.h) as [ { what, count, fact,
 * stacks, late, notes } ] for losses() */
static SV *losses_rv(pTHX_ const pb_loss *l)
{
    AV *av = newAV();
    for (; l && l->what; l++) {
        HV *hv = newHV();
        (void)hv_stores(hv, "what", newSVpv(l->what, 0));
        (void)hv_stores(hv, "count", newSVpv(l->count, 0));
        (void)hv_stores(hv, "fact", l->fact ? newSVpv(l->fact, 0) : newSV(0));
        (void)hv_stores(hv, "stacks", newSViv(!!(l->flags & PB_LOSS_STACKS)));
        (void)hv_stores(hv, "late", newSViv(!!(l->flags & PB_LOSS_LATE)));
        (void)hv_stores(hv, "notes", newSVpv(l->notes, 0));
        av_push(av, newRV_noinc((SV *)hv));
    }
    return newRV_noinc((SV *)av);
}

/* a loss counter (losses.h) for the rules of the format named by fmt_sv
 * ("" or no such format: the common rules only; undef: the rules of the
 * row the driver hands the decode, so the input is not sniffed first);
 * freed with the scope */
static void loss_count_free_cb(pTHX_ void *p)
{
    pb_loss_count_free((pb_loss_count *)p);
    Safefree(p);
}
/* a decoder's warning from a pass that counts losses: said at once (as
 * for_chunks says it) */
static void loss_pass_warn(pb_sink *self, const char *msg)
{
    dTHX;
    PERL_UNUSED_ARG(self);
    ENTER;
    warn_escaped(aTHX_ msg);
    LEAVE;
}

static pb_loss_count *loss_count_new(pTHX_ SV *fmt_sv, pb_sink *next)
{
    pb_loss_count *lc;
    const pb_format_row *row = NULL;
    if (fmt_sv && SvOK(fmt_sv) && SvCUR(fmt_sv)) {
        pb_format f = pb_format_from_name(SvPV_nolen(fmt_sv));
        row = f != PB_FMT_UNKNOWN ? pb_format_get(f) : NULL;
    }
    Newxz(lc, 1, pb_loss_count);
    if (!fmt_sv || !SvOK(fmt_sv))
        pb_loss_count_init_by_row(lc, pb_losses_common, next);
    else
        pb_loss_count_init(lc, row ? row->losses : NULL, pb_losses_common, next);
    SAVEDESTRUCTOR_X(loss_count_free_cb, lc);
    if (lc->full)
        croak("Devel::ProfileBridge: the loss rules outgrew PB_LOSS_RULES_MAX or PB_LOSS_ATTRS_MAX (c/losses.h)");
    return lc;
}

/* what a loss counter counted: { rules => [ { what, fact, stacks, notes,
 * count } in losses()'s order ], attrs => { NAME => value } (the
 * ATTRIBUTEs the rules and their notes read) } */
static SV *loss_counts_rv(pTHX_ const pb_loss_count *lc)
{
    HV *hv = newHV();
    AV *rules = newAV();
    HV *attrs = newHV();
    size_t i;
    char buf[80];
    if (lc->oom)
        croak("Devel::ProfileBridge: out of memory counting the losses");
    for (i = 0; i < lc->n; i++) {
        const pb_loss *l = lc->rule[i];
        HV *r = newHV();
        (void)hv_stores(r, "what", newSVpv(l->what, 0));
        (void)hv_stores(r, "fact", l->fact ? newSVpv(l->fact, 0) : newSV(0));
        (void)hv_stores(r, "stacks", newSViv(!!(l->flags & PB_LOSS_STACKS)));
        (void)hv_stores(r, "notes", newSVpv(l->notes, 0));
        {
            const char *t = pb_loss_count_text(lc, i, buf, sizeof buf);
            SV *n = !pb_loss_count_is_number(lc, i) ? newSVpv(t, 0)
                    : t[strspn(t, "0123456789")] ? newSVnv(strtod(t, NULL)) : newSVuv((UV)strtoull(t, NULL, 10));
            (void)hv_stores(r, "count", n);
        }
        av_push(rules, newRV_noinc((SV *)r));
    }
    for (i = 0; i < lc->nattr; i++)
        if (lc->attr[i].val)
            (void)hv_store(attrs, lc->attr[i].name, (I32)lc->attr[i].len,
                           newSVpvn(lc->attr[i].val, lc->attr[i].vlen), 0);
    (void)hv_stores(hv, "rules", newRV_noinc((SV *)rules));
    (void)hv_stores(hv, "attrs", newRV_noinc((SV *)attrs));
    return newRV_noinc((SV *)hv);
}

MODULE = Devel::ProfileBridge    PACKAGE = Devel::ProfileBridge    PREFIX = pbxs_

PROTOTYPES: DISABLE

BOOT:
    pthread_atfork(NULL, NULL, pb_count_fork);

SV *
pbxs__detect(file, how = 0)
        const char *file
        int how
    PREINIT:
        pb_format_info info;
        pb_error err;
    CODE:
        pb_error_init(&err, "profbridge", file);
        if (pb_detect_file(file, &info, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        RETVAL = newRV_noinc((SV *)info_hv(aTHX_ &info, how));
    OUTPUT:
        RETVAL

void
pbxs__for_chunks(callback, file, format_sv, opts)
        SV *callback
        const char *file
        SV *format_sv
        HV *opts
    PREINIT:
        xs_sink *x;
        pb_options o;
        pb_error err;
        pb_format fmt;
        pb_status st;
    CODE:
        ENTER;
        SAVETMPS;
        fmt = format_arg(aTHX_ format_sv);
        fill_options(aTHX_ opts, &o);
        x = new_xs_sink(aTHX_ callback);
        pb_error_init(&err, fmt ? pb_format_name(fmt) : "profbridge", file);
        if (pb_src_open_file(&x->src, file, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        x->src_open = 1;
        st = pb_decode_source(&x->src, file, fmt, &o, &x->sink, &err);
        light_end(aTHX_ x);
        if (st != PB_OK)
            croak_pb(aTHX_ &err);
        errno = x->errno_in;
        FREETMPS;
        LEAVE;

void
pbxs__count(file, format_sv, opts, facts = NULL)
        const char *file
        SV *format_sv
        HV *opts
        SV *facts
    PREINIT:
        info_sink is;
        pb_options o;
        pb_error err;
        pb_format fmt;
        HV *counts;
        int t;
    PPCODE:
        fmt = format_arg(aTHX_ format_sv);
        fill_options(aTHX_ opts, &o);
        memset(&is, 0, sizeof is);
        pb_count_sink_init(&is.cs);
        is.cs.sink.chunk = info_chunk;
        is.cs.sink.ctx = &is;
        if (facts && SvTRUE(facts)) {
            is.attrs = (HV *)sv_2mortal((SV *)newHV());
            is.pids = (AV *)sv_2mortal((SV *)newAV());
        }
        if (pb_decode_file(file, fmt, &o, &is.cs.sink, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        counts = newHV();
        for (t = 0; t < PB_TAG_COUNT; t++)
            if (is.cs.count[t])
                (void)hv_store(counts, pb_tag_name[t], (I32)strlen(pb_tag_name[t]), newSVuv((UV)is.cs.count[t]), 0);
        mXPUSHs(newRV_noinc((SV *)counts));
        if (is.attrs) {
            mXPUSHs(newRV_inc((SV *)is.attrs));
            mXPUSHs(newRV_inc((SV *)is.pids));
        }

SV *
pbxs__info_read(file, format_sv, opts, loss_to = NULL)
        const char *file
        SV *format_sv
        HV *opts
        SV *loss_to
    PREINIT:
        info_sink is;
        pb_options o;
        pb_error err;
        pb_format fmt;
        pb_format_info info;
        pb_source src;
        int from_src = 0;
        struct stat sb;
        HV *counts;
        AV *r;
        int t;
    CODE:
        /* profbridge info in one open and one decode: the format's facts
         * sniffed from the head the decoder then reads on (a plain file of a
         * format without runs, no progress display), its chunk counts,
         * threads and (loss_to: a target) the losses of a conversion to it
         * counted as the chunks go by.  [ \%info, \%counts, \%attrs,
         * \@pids, \%losses | undef ] */
        fmt = format_arg(aTHX_ format_sv);
        fill_options(aTHX_ opts, &o);
        pb_error_init(&err, fmt ? pb_format_name(fmt) : "profbridge", file);
        /* standard input, a FIFO or a device can be read only once: always here */
        if ((strcmp(file, "-") == 0 || (stat(file, &sb) == 0 && !S_ISDIR(sb.st_mode) &&
                                        (!o.progress || !S_ISREG(sb.st_mode)))) &&
            pb_src_open_file(&src, file, &err) == PB_OK) {
            pb_format f = fmt;
            if (pb_settle_input(&src, &f, &info, &o, 1, &err) != PB_OK) {
                pb_src_close(&src);
                croak_pb(aTHX_ &err);
            }
            if (src.gunzipped) { /* gzip, then whatever the format compresses inside */
                char inner[sizeof info.compression];
                size_t k;
                memcpy(inner, info.compression, sizeof inner);
                k = !strcmp(inner, "none") ? 0 : strlen(inner);
                if (k > sizeof info.compression - 6)
                    k = sizeof info.compression - 6;
                memcpy(info.compression, k ? "gzip+" : "gzip", k ? 5 : 5);
                memcpy(info.compression + (k ? 5 : 4), inner, k);
                info.compression[(k ? 5 : 4) + k] = '\0';
                info.compressed = 1;
            }
            from_src = 1;
        }
        if (!from_src) {
            pb_error_init(&err, "profbridge", file);
            if (pb_detect_file(file, &info, &err) != PB_OK)
                croak_pb(aTHX_ &err);
        }
        r = (AV *)sv_2mortal((SV *)newAV());
        av_push(r, newRV_noinc((SV *)info_hv(aTHX_ &info, 1)));
        memset(&is, 0, sizeof is);
        pb_count_sink_init(&is.cs);
        is.cs.sink.chunk = info_chunk;
        is.cs.sink.ctx = &is;
        is.attrs = (HV *)sv_2mortal((SV *)newHV());
        is.pids = (AV *)sv_2mortal((SV *)newAV());
        /* TIME_LINE and SUB_CALLERS are only counted, not built (a fold may
         * then sum stacks: fold_samples.h sums_counted) */
        memset(is.wants, 1, sizeof is.wants);
        is.wants[PB_T_TIME_LINE] = is.wants[PB_T_SUB_CALLERS] = 0;
        is.cs.sink.wants = is.wants;
        is.cs.sink.skipped = is.skipped;
        if (loss_to && SvOK(loss_to) && !(info.name && strcmp(info.name, SvPV_nolen(loss_to)) == 0)) {
            SV *lf = sv_2mortal(info.name ? newSVpv(info.name, 0) : newSVpvs(""));
            is.lc = loss_count_new(aTHX_ lf, NULL);
            is.warnings = sv_2mortal(newSVpvs(""));
            is.cs.sink.warn = info_warn;
        }
        if (from_src) {
            pb_status st;
            char dname[PB_ERR_FILE_MAX]; /* the decoder's name for it (pb_src_open_file, pb_src_gunzip) */
            memcpy(dname, err.file, sizeof dname);
            pb_error_init(&err, fmt ? pb_format_name(fmt) : "profbridge", dname);
            /* (a run's other files found from the head in src: pb_decode_opened) */
            st = pb_decode_opened(&src, file, fmt, &o, &is.cs.sink, &err);
            pb_src_close(&src);
            if (st != PB_OK)
                croak_pb(aTHX_ &err);
        } else if (pb_decode_file(file, fmt, &o, &is.cs.sink, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        if (is.warnings) {
            STRLEN len;
            const char *p = SvPV(is.warnings, len), *end = p + len;
            while (p < end) {
                const char *nl = (const char *)memchr(p, '\n', (size_t)(end - p));
                warn("%.*s\n", (int)(nl - p), p);
                p = nl + 1;
            }
        }
        counts = newHV();
        if (is.lc)
            pb_loss_count_skipped(is.lc, is.skipped);
        for (t = 0; t < PB_TAG_COUNT; t++)
            if ((is.cs.count[t] += is.skipped[t]) != 0)
                (void)hv_store(counts, pb_tag_name[t], (I32)strlen(pb_tag_name[t]), newSVuv((UV)is.cs.count[t]), 0);
        av_push(r, newRV_noinc((SV *)counts));
        av_push(r, newRV_inc((SV *)is.attrs));
        av_push(r, newRV_inc((SV *)is.pids));
        av_push(r, is.lc ? loss_counts_rv(aTHX_ is.lc) : newSV(0));
        RETVAL = newRV_inc((SV *)r);
    OUTPUT:
        RETVAL

SV *
pbxs__loss_counts(file, format_sv, opts, loss_format)
        const char *file
        SV *format_sv
        HV *opts
        SV *loss_format
    PREINIT:
        pb_loss_count *lc;
        pb_options o;
        pb_error err;
        pb_format fmt;
        unsigned char loss_wants[PB_TAG_COUNT];
    CODE:
        /* losses() alone: one decode that only counts */
        fmt = format_arg(aTHX_ format_sv);
        fill_options(aTHX_ opts, &o);
        lc = loss_count_new(aTHX_ loss_format, NULL);
        lc->sink.warn = loss_pass_warn;
        /* no rule reads a TIME_LINE or a SUB_CALLERS but its tag: those are
         * counted, not built (a fold may then sum stacks: sums_counted) */
        memset(loss_wants, 1, sizeof loss_wants);
        loss_wants[PB_T_TIME_LINE] = loss_wants[PB_T_SUB_CALLERS] = 0;
        lc->sink.wants = loss_wants;
        lc->sink.skipped = lc->tags;
        if (pb_decode_file(file, fmt, &o, &lc->sink, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        RETVAL = loss_counts_rv(aTHX_ lc);
    OUTPUT:
        RETVAL

void
pbxs__write(to, mode, in, format_sv, opts, out, level, report = NULL)
        const char *to
        const char *mode
        AV *in
        SV *format_sv
        HV *opts
        const char *out
        int level
        SV *report
    PREINIT:
        pb_loss_count *lc = NULL;
        const pb_target *t;
        pb_write_mode m;
        pb_write_req rq;
        pb_options o;
        pb_error err;
        const char **paths;
        SSize_t i, n;
        pb_status st;
        held_warnings hw;
    PPCODE:
        /* every target (c/outputs.c): (the samples written, the files written) */
        m = !strcmp(mode, "merge") ? PB_WRITE_MERGE : !strcmp(mode, "diff") ? PB_WRITE_DIFF : PB_WRITE_CONVERT;
        if (!(t = pb_target_named(to)) || !pb_target_can(t, m))
            croak("Devel::ProfileBridge::%s: no target named '%s'", mode, to);
        pb_write_req_init(&rq);
        rq.fmt = format_arg(aTHX_ format_sv);
        fill_options(aTHX_ opts, &o);
        if (level < -1 || level > 9)
            croak("Devel::ProfileBridge::%s: compress must be 0..9, not %d", mode, level);
        n = av_top_index(in) + 1;
        Newxz(paths, n + 1, const char *);
        SAVEFREEPV(paths);
        for (i = 0; i < n; i++) {
            SV **e = av_fetch(in, i, 0);
            paths[i] = e && SvOK(*e) ? SvPV_nolen(*e) : "";
        }
        rq.in = paths;
        rq.n = (size_t)n;
        rq.opt = &o;
        rq.out = out;
        rq.level = level;
        rq.warn = held_warn_cb;
        rq.ud = &hw;
        /* convert --report: { format => NAME } gets the losses counted in
         * this decode ({ counts => ... }) when the target's driver feeds a
         * chunk writer (outputs.c); else the Perl side counts them apart */
        if (report && SvROK(report) && SvTYPE(SvRV(report)) == SVt_PVHV) {
            SV **f = hv_fetchs((HV *)SvRV(report), "format", 0);
            lc = loss_count_new(aTHX_ f ? *f : NULL, NULL);
            rq.chunk_tee = &lc->sink;
            rq.chunk_tee_next = &lc->next;
        }
        if (strcmp(out, "-") == 0)
            PerlIO_flush(PerlIO_stdout());
        held_warnings_init(aTHX_ &hw);
        st = pb_write(t, m, &rq, &err);
        held_warnings_emit(aTHX_ &hw);
        if (st != PB_OK)
            croak_pb(aTHX_ &err);
        if (lc && rq.chunk_teed) {
            (void)hv_stores((HV *)SvRV(report), "counts", loss_counts_rv(aTHX_ lc));
            pb_src_forget_kept(); /* no second decode reads the input */
        }
        EXTEND(SP, 1 + (SSize_t)rq.n_names);
        mPUSHu((UV)rq.samples);
        for (i = 0; i < (SSize_t)rq.n_names; i++)
            mPUSHs(newSVpv(rq.names[i], 0));
        pb_write_free(&rq);

SV *
pbxs__targets()
    PREINIT:
        AV *av;
        size_t i;
        const pb_target *t;
    CODE:
        /* THE table of targets (c/outputs.c), row by row */
        av = newAV();
        for (i = 0; (t = pb_target_at(i)); i++) {
            HV *hv = newHV();
            AV *consumes = newAV();
            (void)hv_stores(hv, "name", newSVpv(t->name, 0));
            (void)hv_stores(hv, "what", newSVpv(t->what, 0));
            if (t->consumes & PB_YIELDS_CHUNKS)
                av_push(consumes, newSVpvs("chunks"));
            if (t->consumes & PB_YIELDS_STACKS)
                av_push(consumes, newSVpvs("stacks"));
            if (t->consumes & PB_YIELDS_SAMPLES)
                av_push(consumes, newSVpvs("samples"));
            if (t->consumes & PB_YIELDS_SPANS)
                av_push(consumes, newSVpvs("spans"));
            if (t->consumes & PB_YIELDS_GRAPH)
                av_push(consumes, newSVpvs("graph"));
            (void)hv_stores(hv, "consumes", newRV_noinc((SV *)consumes));
            (void)hv_stores(hv, "convert", newSViv(!!(t->flags & PB_TO_CONVERT)));
            (void)hv_stores(hv, "merge", newSViv(pb_target_can(t, PB_WRITE_MERGE)));
            (void)hv_stores(hv, "diff", newSViv(pb_target_can(t, PB_WRITE_DIFF)));
            (void)hv_stores(hv, "default", newSViv(!!(t->flags & PB_TO_DEFAULT)));
            (void)hv_stores(hv, "diff_default", newSViv(!!(t->flags & PB_TO_DIFF_DEFAULT)));
            (void)hv_stores(hv, "stdout", newSViv(!!(t->flags & PB_TO_STDOUT)));
            (void)hv_stores(hv, "merge_stdout", newSViv(!!(t->flags & PB_TO_MERGE_STDOUT)));
            (void)hv_stores(hv, "compress", newSViv(!!(t->flags & PB_TO_COMPRESS)));
            (void)hv_stores(hv, "source", newSViv(!!(t->flags & PB_TO_SOURCE)));
            (void)hv_stores(hv, "salvage", newSViv(!!(t->flags & PB_TO_SALVAGE)));
            (void)hv_stores(hv, "files", newSViv(!!(t->flags & PB_TO_FILES)));
            (void)hv_stores(hv, "binary", newSViv(!!(t->flags & PB_TO_BINARY)));
            (void)hv_stores(hv, "library", t->library ? newSVpv(t->library, 0) : newSV(0));
            (void)hv_stores(hv, "empty", t->empty ? newSVpv(t->empty, 0) : newSV(0));
            (void)hv_stores(hv, "keeps", newSVpv(t->keeps ? t->keeps : "", 0));
            av_push(av, newRV_noinc((SV *)hv));
        }
        RETVAL = newRV_noinc((SV *)av);
    OUTPUT:
        RETVAL

SV *
pbxs__libraries()
    PREINIT:
        HV *hv;
    CODE:
        hv = newHV();
        (void)hv_stores(hv, "zlib", newSVpv(pb_zlib_version(), 0));
        (void)hv_stores(hv, "zstd", pb_have_zstd ? newSVpv(pb_zstd_version(), 0) : newSV(0));
        (void)hv_stores(hv, "snappy", pb_have_snappy ? newSVpvs("yes") : newSV(0));
        (void)hv_stores(hv, "yajl", pb_have_yajl ? newSVpv(pb_yajl_version(), 0) : newSV(0));
        RETVAL = newRV_noinc((SV *)hv);
    OUTPUT:
        RETVAL

SV *
pbxs__format_rows()
    PREINIT:
        AV *av;
        int f;
    CODE:
        /* THE table of formats (c/formats.c), row by row */
        av = newAV();
        for (f = 1; f < PB_FMT_COUNT; f++) {
            const pb_format_row *row = pb_format_get((pb_format)f);
            HV *hv = newHV();
            (void)hv_stores(hv, "name", newSVpv(row->name, 0));
            (void)hv_stores(hv, "title", newSVpv(row->title, 0));
            (void)hv_stores(hv, "supported", newSViv(pb_format_decodes((pb_format)f)));
            (void)hv_stores(hv, "library", row->library ? newSVpv(row->library, 0) : newSV(0));
            (void)hv_stores(hv, "library_use",
                            newSVpv(row->library_use == PB_LIB_EVERY_FILE   ? "every"
                                    : row->library_use == PB_LIB_SOME_FILES ? "some"
                                                                            : "built-in", 0));
            if (row->library_note)
                (void)hv_stores(hv, "library_note", newSVpv(row->library_note, 0));
            (void)hv_stores(hv, "runs", newSViv(row->run != NULL));
            (void)hv_stores(hv, "reads_gzip", newSViv(!!(row->yields & PB_READS_GZIP)));
            (void)hv_stores(hv, "call_graph", newSViv((row->yields & PB_YIELDS_GRAPH) && !(row->yields & PB_YIELDS_STACKS)));
            (void)hv_stores(hv, "losses", losses_rv(aTHX_ row->losses));
            if (row->run_what)
                (void)hv_stores(hv, "run_what", newSVpv(row->run_what, 0));
            av_push(av, newRV_noinc((SV *)hv));
        }
        RETVAL = newRV_noinc((SV *)av);
    OUTPUT:
        RETVAL

SV *
pbxs__graph_targets()
    PREINIT:
        char buf[256];
    CODE:
        /* the targets that carry a call graph, as "--to a, --to b" (formats.c) */
        RETVAL = newSVpv(pb_graph_targets(buf, sizeof buf), 0);
    OUTPUT:
        RETVAL

SV *
pbxs_formats()
    PREINIT:
        HV *hv;
        int f;
    CODE:
        hv = newHV();
        for (f = 1; f < PB_FMT_COUNT; f++)
            (void)hv_store(hv, pb_format_name((pb_format)f), (I32)strlen(pb_format_name((pb_format)f)),
                           newSViv(pb_format_decodes((pb_format)f)), 0);
        RETVAL = newRV_noinc((SV *)hv);
    OUTPUT:
        RETVAL

UV
pbxs__call_floor(callback, counts, light = 1)
        SV *callback
        HV *counts
        int light
    PREINIT:
        xs_sink *x;
        pb_chunk chunks[PB_TAG_COUNT];
        UV w[PB_TAG_COUNT];
        UV total = 0, i;
        pb_tag *pat;
        size_t plen, k;
        int t;
    CODE:
        /* bench only: the calls of a read without the read */
        ENTER;
        SAVETMPS;
        for (t = 0; t < PB_TAG_COUNT; t++) {
            SV **svp = hv_fetch(counts, pb_tag_name[t], (I32)strlen(pb_tag_name[t]), 0);
            w[t] = svp && SvOK(*svp) ? SvUV(*svp) : 0;
            total += w[t];
            fill_floor_chunk(&chunks[t], (pb_tag)t);
        }
        x = new_xs_sink(aTHX_ callback);
        if (!light)
            memset(x->light, 0, sizeof x->light);
        plen = total < 65536 ? (size_t)total : 65536;
        Newx(pat, plen ? plen : 1, pb_tag);
        SAVEFREEPV(pat);
        floor_pattern(w, pat, plen);
        for (i = 0, k = 0; i < total; i++) {
            pb_tag tag = pat[k];
            if (++k == plen)
                k = 0;
            x->sink.seq = i + 1;
            (void)xs_chunk(&x->sink, &chunks[tag]);
        }
        light_end(aTHX_ x);
        FREETMPS;
        LEAVE;
        RETVAL = total;
    OUTPUT:
        RETVAL

SV *
pbxs__heap_in_use()
    CODE:
        /* for t/14: bytes in use in the C heap (glibc), or undef */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
        {
            struct mallinfo2 mi = mallinfo2();
            RETVAL = mi.uordblks ? newSVuv((UV)mi.uordblks) : newSV(0);
        }
#else
        RETVAL = newSV(0);
#endif
    OUTPUT:
        RETVAL

SV *
pbxs_nytprof_name(name)
        SV *name
    PREINIT:
        STRLEN len;
        const char *p;
        size_t n;
    CODE:
        p = SvPV(name, len);
        n = pb_nytprof_name(p, len, NULL, 0);
        RETVAL = newSV(n + 1);
        SvPOK_on(RETVAL);
        pb_nytprof_name(p, len, SvPVX(RETVAL), n + 1);
        SvCUR_set(RETVAL, n);
        if (SvUTF8(name))
            SvUTF8_on(RETVAL);
    OUTPUT:
        RETVAL

int
pbxs__guard_temp(path, is_dir)
        const char *path
        int is_dir
    CODE:
        /* a temporary copy of an input, removed by the signal path of c/output.c */
        RETVAL = pb_output_guard(path, is_dir);
    OUTPUT:
        RETVAL

void
pbxs__unguard_temp(slot)
        int slot
    CODE:
        pb_output_unguard(slot);

void
pbxs__for_chunks_files(callback, files, format_sv, opts)
        SV *callback
        AV *files
        SV *format_sv
        HV *opts
    PREINIT:
        xs_sink *x;
        pb_options o;
        pb_error err;
        const char **paths;
        SSize_t i, n;
        pb_format fmt;
        pb_status st;
    CODE:
        /* a profile of several files (a row with run, c/formats.c) */
        ENTER;
        SAVETMPS;
        fmt = format_arg(aTHX_ format_sv);
        if (!pb_format_run_row(fmt))
            croak("Devel::ProfileBridge: no format reads a profile of several files");
        fill_options(aTHX_ opts, &o);
        x = new_xs_sink(aTHX_ callback);
        n = av_len(files) + 1;
        Newxz(paths, n ? n : 1, const char *);
        SAVEFREEPV(paths);
        for (i = 0; i < n; i++) {
            SV **svp = av_fetch(files, i, 0);
            paths[i] = svp ? SvPV_nolen(*svp) : "";
        }
        st = pb_decode_run(paths, (size_t)n, fmt, &o, &x->sink, &err);
        light_end(aTHX_ x);
        if (st != PB_OK)
            croak_pb(aTHX_ &err);
        errno = x->errno_in;
        FREETMPS;
        LEAVE;

void
pbxs__run_expand(spec, format_sv)
        const char *spec
        SV *format_sv
    PREINIT:
        char **paths = NULL;
        size_t n = 0, i;
        pb_error err;
        AV *av;
        const pb_format_row *row;
    PPCODE:
        /* (the files a directory or template names, what they are called) */
        row = pb_format_run_row(format_arg(aTHX_ format_sv));
        if (!row || !row->run_expand)
            croak("Devel::ProfileBridge: no format reads a profile of several files");
        pb_error_init(&err, row->name, spec);
        if (row->run_expand(spec, &paths, &n, &err) != PB_OK)
            croak_pb(aTHX_ &err);
        av = newAV();
        for (i = 0; i < n; i++)
            av_push(av, newSVpv(paths[i], 0));
        row->run_free(paths, n);
        EXTEND(SP, 2);
        mPUSHs(newRV_noinc((SV *)av));
        mPUSHs(newSVpv(row->run_what, 0));

MODULE = Devel::ProfileBridge    PACKAGE = Devel::ProfileBridge::NYTProfWriter    PREFIX = pbw_

SV *
pbw__open(path, level)
        const char *path
        int level
    PREINIT:
        pb_nytprof_writer_opts wo;
        pb_error err;
        pb_nytprof_writer *w;
    CODE:
        pb_nytprof_writer_opts_init(&wo);
        if (level >= 0)
            wo.compress_level = level;
        wo.warn = perl_warn_cb;
#ifdef MULTIPLICITY
        wo.warn_ud = (void *)aTHX;
#endif
        pb_error_init(&err, "nytprof-writer", path);
        w = pb_nytprof_writer_open(path, &wo, &err);
        if (!w)
            croak_pb(aTHX_ &err);
        RETVAL = handle_new(aTHX_ &nyw_vtbl, "Devel::ProfileBridge::NYTProfWriter::Handle", w, path);
    OUTPUT:
        RETVAL

void
pbw__write(handle, tag, ...)
        SV *handle
        const char *tag
    PREINIT:
        pb_nytprof_writer *w;
        pb_tag t;
        pb_chunk c;
        pb_sink *sink;
        pb_error err;
    CODE:
        w = (pb_nytprof_writer *)handle_get(aTHX_ handle, &nyw_vtbl, "nytprof-writer");
        if (!pb_nytprof_writer_owned(w))
            croak_usage(aTHX_ "nytprof-writer", handle_file(aTHX_ handle, &nyw_vtbl),
                        "this writer was opened by another process (before a fork); only that process writes it");
        t = pb_tag_from_name(tag, strlen(tag));
        if (t == PB_TAG_COUNT) {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown tag '%.60s'", tag);
            croak_usage(aTHX_ "nytprof-writer", handle_file(aTHX_ handle, &nyw_vtbl), msg);
        }
        chunk_from_args(aTHX_ &c, t, &ST(2), items - 2, handle_file(aTHX_ handle, &nyw_vtbl));
        sink = pb_nytprof_writer_sink(w);
        if (pb_emit(sink, &c) != 0 || pb_nytprof_writer_failed(w)) {
            w = (pb_nytprof_writer *)handle_take(aTHX_ handle, &nyw_vtbl, "nytprof-writer");
            (void)pb_nytprof_writer_close(w, &err); /* hands out the reason, removes the temp file */
            croak_pb(aTHX_ &err);
        }

void
pbw__close(handle)
        SV *handle
    PREINIT:
        pb_nytprof_writer *w;
        pb_error err;
    CODE:
        w = (pb_nytprof_writer *)handle_get(aTHX_ handle, &nyw_vtbl, "nytprof-writer");
        if (!pb_nytprof_writer_owned(w))
            croak_usage(aTHX_ "nytprof-writer", handle_file(aTHX_ handle, &nyw_vtbl),
                        "this writer was opened by another process (before a fork); only that process closes it");
        w = (pb_nytprof_writer *)handle_take(aTHX_ handle, &nyw_vtbl, "nytprof-writer");
        if (pb_nytprof_writer_close(w, &err) != PB_OK)
            croak_pb(aTHX_ &err);

MODULE = Devel::ProfileBridge    PACKAGE = Devel::ProfileBridge::StatProfilerWriter

SV *
_xs_open(path, rev, ver, sub, interval_us, depth)
        const char *path
        UV rev
        UV ver
        UV sub
        UV interval_us
        UV depth
    PREINIT:
        pb_spw_header h;
        pb_error err;
        pb_spw *w;
    CODE:
        pb_spw_header_init(&h);
        h.perl_revision = (uint32_t)rev;
        h.perl_version = (uint32_t)ver;
        h.perl_subversion = (uint32_t)sub;
        h.interval_us = (uint32_t)interval_us;
        h.depth = (uint32_t)depth;
        pb_error_init(&err, "statprofiler-writer", path);
        w = pb_spw_open(path, &h, &err);
        if (!w)
            croak_pb(aTHX_ &err);
        RETVAL = handle_new(aTHX_ &spw_vtbl, "Devel::ProfileBridge::StatProfilerWriter::Handle", w, path);
    OUTPUT:
        RETVAL

void
_xs_header_metadata(h, key, value)
        SV *h
        SV *key
        SV *value
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_header_metadata(SPW(h), sp_str(aTHX_ key), sp_str(aTHX_ value)));

void
_xs_start_sample(h, weight, op)
        SV *h
        UV weight
        SV *op
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_start_sample(SPW(h), (uint32_t)weight, sp_str(aTHX_ op)));

void
_xs_sub_frame(h, package, name, file, line, first_line)
        SV *h
        SV *package
        SV *name
        SV *file
        IV line
        IV first_line
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_sub_frame(SPW(h), sp_str(aTHX_ package), sp_str(aTHX_ name),
                                                         sp_str(aTHX_ file), (int32_t)line, (int32_t)first_line));

void
_xs_xsub_frame(h, package, name)
        SV *h
        SV *package
        SV *name
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_xsub_frame(SPW(h), sp_str(aTHX_ package), sp_str(aTHX_ name)));

void
_xs_main_frame(h, file, line)
        SV *h
        SV *file
        IV line
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_main_frame(SPW(h), sp_str(aTHX_ file), (int32_t)line));

void
_xs_eval_frame(h, file, line)
        SV *h
        SV *file
        IV line
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_eval_frame(SPW(h), sp_str(aTHX_ file), (int32_t)line));

void
_xs_eval_source(h, text, n)
        SV *h
        SV *text
        UV n
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_eval_source(SPW(h), sp_str(aTHX_ text), (uint32_t)n));

void
_xs_end_sample(h)
        SV *h
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_end_sample(SPW(h)));

void
_xs_section_start(h, name)
        SV *h
        SV *name
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_section_start(SPW(h), sp_str(aTHX_ name)));

void
_xs_section_end(h, name)
        SV *h
        SV *name
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_section_end(SPW(h), sp_str(aTHX_ name)));

void
_xs_metadata(h, key, value)
        SV *h
        SV *key
        SV *value
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_metadata(SPW(h), sp_str(aTHX_ key), sp_str(aTHX_ value)));

void
_xs_close(h)
        SV *h
    CODE:
        spw_check(aTHX_ SPW(h), pb_spw_close(SPW(h)));

