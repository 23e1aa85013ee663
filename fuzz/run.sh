#!/bin/sh
# make fuzz: run every libFuzzer target for FUZZ_SECONDS (default 60) each,
# starting from the seed corpus in fuzz/corpus/TARGET; new inputs go to
# BUILDDIR/fuzz/work/TARGET, crashes to BUILDDIR/fuzz/crash-*.  Fails on any
# crash, leak, sanitizer report or timeout.
set -eu
builddir=$1
srcdir=$2
seconds=${3:-60}
status=0
for target in csv parse hw; do
    work=$builddir/fuzz/work/$target
    mkdir -p "$work"
    echo "fuzz: $target for ${seconds}s" >&2
    if ! "$builddir/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$builddir/fuzz/crash-$target-" \
        "$work" "$srcdir/fuzz/corpus/$target" >"$builddir/fuzz/$target.log" 2>&1; then
        echo "fuzz: $target FAILED; see $builddir/fuzz/$target.log" >&2
        tail -40 "$builddir/fuzz/$target.log" >&2
        status=1
    else
        grep -E "stat::number_of_executed_units|cov: " "$builddir/fuzz/$target.log" | tail -2 >&2
    fi
done
exit $status
