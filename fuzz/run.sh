#!/bin/sh
# make fuzz: run each libFuzzer target named after SECONDS for SECONDS
# each, starting from the seed corpus in fuzz/corpus/TARGET, with the
# dictionary fuzz/dict/TARGET.dict when there is one; new inputs go to
# BUILDDIR/fuzz/work/TARGET, crashes to BUILDDIR/fuzz/crash-*.  Fails on any
# crash, leak, sanitizer report or timeout.
#   run.sh BUILDDIR SRCDIR SECONDS TARGET...
set -eu
[ $# -ge 4 ] || { echo "usage: run.sh BUILDDIR SRCDIR SECONDS TARGET..." >&2; exit 2; }
builddir=$1
srcdir=$2
seconds=$3
shift 3
status=0
for target; do
    work=$builddir/fuzz/work/$target
    dict=$srcdir/fuzz/dict/$target.dict
    mkdir -p "$work"
    echo "fuzz: $target for ${seconds}s" >&2
    if [ -f "$dict" ]; then set -- -dict="$dict"; else set --; fi
    if ! "$builddir/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$builddir/fuzz/crash-$target-" \
        "$@" "$work" "$srcdir/fuzz/corpus/$target" >"$builddir/fuzz/$target.log" 2>&1; then
        echo "fuzz: $target FAILED; see $builddir/fuzz/$target.log" >&2
        tail -40 "$builddir/fuzz/$target.log" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|cov: " "$builddir/fuzz/$target.log" | tail -2 >&2
    fi
done
exit $status
