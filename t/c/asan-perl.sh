#!/bin/sh
# The whole Perl test suite against an AddressSanitizer + UBSan build of the
# XS module (issue 7).  Run from the distribution's top directory:
#   sh t/c/asan-perl.sh [BUILD_DIR]       (default: /tmp/pb-asan-perl.$$)
# The tree is copied (without blib, build products and .git) into BUILD_DIR,
# built there with -fsanitize=address,undefined, and `make test` runs with the
# ASan runtime preloaded into perl (perl itself is not instrumented, so its
# leaks are not ours: detect_leaks=0).  Fails when a test fails or when any
# sanitizer report appears in the output.
set -eu
top=$(pwd)
build=${1:-/tmp/pb-asan-perl.$$}
CC=${CC:-gcc}
SAN="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
asan_rt=$($CC -print-file-name=libasan.so)
ubsan_rt=$($CC -print-file-name=libubsan.so)
if [ ! -e "$asan_rt" ]; then
    echo "asan-perl: no ASan runtime for $CC ($asan_rt)" >&2
    exit 1
fi
rm -rf "$build"
mkdir -p "$build"
# a clean copy of the distribution
tar -C "$top" --exclude=./.git --exclude=./blib --exclude=./fuzz/build --exclude='./t/c/build*' \
    --exclude='*.o' --exclude=./Makefile --exclude=./MYMETA.json --exclude=./MYMETA.yml \
    --exclude=./pm_to_blib --exclude='./xs/ProfileBridge.c' -cf - . | tar -C "$build" -xf -
cd "$build"
echo "# asan-perl: building in $build"
perl Makefile.PL OPTIMIZE="-O1 -g $SAN" LDDLFLAGS="-shared $SAN" >build.log 2>&1
make >>build.log 2>&1 || { tail -30 build.log; exit 1; }
# every object of the module must be instrumented
if ! nm -D blib/arch/auto/Devel/ProfileBridge/ProfileBridge.so | grep -q __asan_report; then
    echo "asan-perl: the module is not instrumented" >&2
    exit 1
fi
echo "# asan-perl: make test with $asan_rt preloaded"
rc=0
LD_PRELOAD="$asan_rt:$ubsan_rt" \
ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:halt_on_error=1:allocator_may_return_null=1" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    make test >test.log 2>&1 || rc=$?
tail -20 test.log
if grep -nE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|SUMMARY: (Address|UndefinedBehavior)Sanitizer' test.log; then
    echo "asan-perl: sanitizer reports above (full log: $build/test.log)"
    exit 1
fi
if [ $rc != 0 ]; then
    echo "asan-perl: make test failed (full log: $build/test.log)"
    exit 1
fi
echo "asan-perl: the Perl test suite is clean under ASan + UBSan"
