#!/bin/sh
# Build and run the C-level tests: every t/c/test_*.c, then the bad-input
# sweep over t/data.  Run from the distribution's top directory.
#   t/c/ctests.sh           plain build (-O2)
#   t/c/ctests.sh asan      -fsanitize=address,undefined,float-cast-overflow, leak detection on
set -eu
mode=${1:-plain}
CC=${CC:-cc}
LIBS="-lzstd -lsnappy -lyajl -lz -lpthread"
if [ "$mode" = asan ]; then
    CFLAGS="-O1 -g -std=c99 -Wall -Wextra -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:max_allocation_size_mb=512:allocator_may_return_null=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    suffix=-asan
else
    CFLAGS="-O2 -std=c99 -Wall -Wextra"
    suffix=
fi
out=t/c/build$suffix
rm -rf "$out/obj"
mkdir -p "$out/obj"
fail=0
# the core compiled once (two at a time), then linked into every test and
# the sweep: compiling it again for each of them was most of the run
JOBS=${CTEST_JOBS:-2}
ls c/*.c | xargs -P "$JOBS" -I{} sh -c 'o="$1/obj/$(basename "$2" .c).o"; $3 $4 -Ic -c -o "$o" "$2"' sh "$out" {} "$CC" "$CFLAGS" \
    || { echo "not ok - building the core ($mode)"; echo "C tests ($mode): FAILED"; exit 1; }
CORE=$(ls "$out"/obj/*.o)
# arguments per test (default: none)
args_for() {
    case "$1" in
        test_easyprofiler) echo "t/data/easyprofiler" ;;
        test_statprofiler) echo "bad" ;;
        *) echo "" ;;
    esac
}
for src in t/c/test_*.c; do
    name=$(basename "$src" .c)
    echo "# building $name ($mode)"
    # shellcheck disable=SC2086
    $CC $CFLAGS -Ic -o "$out/$name" "$src" $CORE $LIBS
    echo "# running $name"
    # shellcheck disable=SC2046
    if ! "$out/$name" $(args_for "$name"); then
        echo "not ok - $name"
        fail=1
    else
        echo "ok - $name"
    fi
done
echo "# building the sweep ($mode)"
# shellcheck disable=SC2086
$CC $CFLAGS -Ic -o "$out/sweep" t/c/sweep.c $CORE $LIBS
if ! "$out/sweep" ${SWEEP_SEED:+-s $SWEEP_SEED} -q t/data; then
    echo "not ok - sweep"
    fail=1
else
    echo "ok - sweep"
fi
if [ $fail = 0 ]; then echo "C tests ($mode): all passed"; else echo "C tests ($mode): FAILED"; fi
exit $fail
