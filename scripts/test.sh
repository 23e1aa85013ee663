#!/bin/sh
# The README's second command: run every test.
#   1. unit and command-line tests (make check) in build/
#   2. the same suite built with clang, AddressSanitizer + UBSan in build-fuzz/
#   3. every libFuzzer target of that build for FUZZ_SECONDS (default 10)
#   4. the command-line tests of the readers and error paths with afdkit
#      under valgrind memcheck (make check-valgrind-all runs them all)
#   5. make distcheck: the release tarball builds without OpenMP and with
#      -Werror, and passes its tests
# Idempotent; builds first if needed (scripts/setup.sh --build).
# AFDKIT_QUICK=1 runs step 1 only.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${AFDKIT_BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)

scripts/setup.sh --build

step() { printf '\n=== %s (%ss)\n' "$*" "$(( $(date +%s) - start ))" >&2; }
check() { # check BUILDDIR [TARGET] [MAKE ARGS...]: run, print the log on failure
    dir=$1; target=${2:-check}; shift 2 || shift $#
    make -C "$dir" -j"$jobs" "$target" "$@" >"$dir/check.out" 2>&1 || {
        cat "$dir/check.out" >&2
        for log in "$dir"/test-suite.log; do [ -f "$log" ] && cat "$log" >&2; done
        echo "FAILED: make $target in $dir" >&2
        exit 1
    }
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/check.out" >&2 || true
}

step "make check"
check "$build" check

[ "${AFDKIT_QUICK:-0}" = 1 ] && { step "quick run: done"; exit 0; }

# The libFuzzer build (clang, --enable-fuzzing) is an AddressSanitizer and
# UBSan build too: the suite runs there, then the fuzz targets, so that one
# instrumented build serves both.
step "make check with AddressSanitizer and UndefinedBehaviorSanitizer (clang)"
scripts/fuzz.sh 0
# LeakSanitizer: the OpenMP runtime's own thread-team structures are not ours
LSAN_OPTIONS="suppressions=$top/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
check "$top/build-fuzz" check

step "fuzzing: each target for ${FUZZ_SECONDS:-10}s"
scripts/fuzz.sh "${FUZZ_SECONDS:-10}"

step "command-line tests under valgrind"
check "$build" check-valgrind

# The release tarball is built and tested without OpenMP and with -Werror:
# one build covers both the packagers' path and the serial configuration.
step "make distcheck, built without OpenMP"
check "$build" distcheck DISTCHECK_CONFIGURE_FLAGS="--enable-werror --disable-openmp"

step "all tests passed"
