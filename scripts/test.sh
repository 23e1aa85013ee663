#!/bin/sh
# The README's second command: run every test.
#   1. unit and command-line tests (make check) in build/
#   2. the same suite built with clang, AddressSanitizer + UBSan in build-fuzz/,
#      less the cases marked slow (longer runs of code the others cover)
#   3. every libFuzzer target of that build for FUZZ_SECONDS (default 10),
#      as many at once as there are processors (FUZZ_JOBS)
#   4. the command-line tests of the readers and error paths with afdkit
#      under valgrind memcheck (make check-valgrind-all runs them all)
#   5. make distcheck-quick: the release tarball builds without OpenMP and
#      with -Werror, installs, and passes its unit and script tests and a
#      case file of every command (less the cases marked slow)
# Every step runs even when an earlier one fails, so one run shows all that
# is wrong; the output ends with one line per step (passed or failed, its
# minutes, its name), and the exit status is 1 if any step failed.
# Idempotent; builds first if needed (scripts/setup.sh --build).
# AFDKIT_QUICK=1 runs step 1 only.
set -u
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
build=${AFDKIT_BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
summary=""
failed=0

# A failed build shows here; the steps then run and fail on their own.
scripts/setup.sh --build || echo "FAILED: scripts/setup.sh --build" >&2

check() { # check BUILDDIR [TARGET] [MAKE ARGS...]: run, print the log on failure
    dir=$1; target=${2:-check}; shift 2 || shift $#
    make -C "$dir" -j"$jobs" "$target" "$@" >"$dir/check.out" 2>&1 || {
        cat "$dir/check.out" >&2
        [ -f "$dir/test-suite.log" ] && cat "$dir/test-suite.log" >&2
        echo "FAILED: make $target in $dir" >&2
        return 1
    }
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/check.out" >&2 || true
}

# step NAME COMMAND...: run one step, whatever became of the others, and
# add its line to the summary
step() {
    name=$1; shift
    t0=$(date +%s)
    printf '\n=== %s (%ss)\n' "$name" "$((t0 - start))" >&2
    if "$@"; then result=passed; else result=failed; failed=$((failed + 1)); fi
    t=$(($(date +%s) - t0))
    summary="$summary$(printf '%s %3d.%d min  %s' "$result" $((t / 60)) $((t % 60 / 6)) "$name")
"
}

# The libFuzzer build (clang, --enable-fuzzing) is an AddressSanitizer and
# UBSan build too: the suite runs there, then the fuzz targets, so that one
# instrumented build serves both.
sanitizers() {
    scripts/fuzz.sh 0 || { echo "FAILED: scripts/fuzz.sh 0 (the sanitizer build)" >&2; return 1; }
    check "$top/build-fuzz" check AFDKIT_SKIP_SLOW=1
}
# LeakSanitizer: the OpenMP runtime's own thread-team structures are not ours
LSAN_OPTIONS="suppressions=$top/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
# The sanitizer runtime of LLVM up to 16 and GCC up to 13 can take a block of
# dynamic TLS (the OpenMP runtime's) for one with a pre-2.25 glibc header,
# depending only on where it lands, and LeakSanitizer's tracer then dies at
# exit ("Tracer caught signal 11") without a leak: not intercepting
# __tls_get_addr avoids it (google/sanitizers#1322).  A leak that only dynamic
# TLS holds is then reported as one: none is ours.
ASAN_OPTIONS="intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS

step "make check" check "$build" check
if [ "${AFDKIT_QUICK:-0}" != 1 ]; then
    step "make check with AddressSanitizer and UndefinedBehaviorSanitizer (clang)" sanitizers
    step "fuzzing: each target for ${FUZZ_SECONDS:-10}s" scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
    step "command-line tests under valgrind" check "$build" check-valgrind
    # The release tarball is built and tested without OpenMP and with -Werror:
    # one build covers both the packagers' path and the serial configuration.
    # make check has run every test: distcheck-quick leaves out the three
    # longest case files (their commands run in laws.cases) and the slow cases.
    step "make distcheck, built without OpenMP" \
        check "$build" distcheck-quick DISTCHECK_CONFIGURE_FLAGS="--enable-werror --disable-openmp"
fi

printf '\n=== %s of the steps failed (%ss); each step:\n%s' "$failed" "$(($(date +%s) - start))" \
    "$summary" >&2
[ "$failed" -eq 0 ]
