#!/bin/sh
# make fuzz: run each libFuzzer target named after SECONDS for SECONDS
# each, starting from the seed corpus in fuzz/corpus/TARGET, with the
# dictionary fuzz/dict/TARGET.dict when there is one; new inputs go to
# BUILDDIR/fuzz/work/TARGET, crashes to BUILDDIR/fuzz/crash-*.  Fails on any
# crash, leak, sanitizer report or timeout.  FUZZ_JOBS targets (default: the
# number of processors) run at once, each on one core, so that ten targets
# of 10 s take 50 s on 2 cores; the reports follow in the order named.
#   run.sh BUILDDIR SRCDIR SECONDS TARGET...
set -eu
[ $# -ge 4 ] || { echo "usage: run.sh BUILDDIR SRCDIR SECONDS TARGET..." >&2; exit 2; }
builddir=$1
srcdir=$2
seconds=$3
shift 3
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1

# fuzz TARGET: one target's run; its output in BUILDDIR/fuzz/TARGET.log, its
# exit status in BUILDDIR/fuzz/TARGET.status
fuzz() {
    work=$builddir/fuzz/work/$1
    dict=$srcdir/fuzz/dict/$1.dict
    mkdir -p "$work"
    dictopt=
    [ -f "$dict" ] && dictopt=-dict=$dict
    rc=0
    "$builddir/fuzz/fuzz_$1" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$builddir/fuzz/crash-$1-" \
        ${dictopt:+"$dictopt"} "$work" "$srcdir/fuzz/corpus/$1" >"$builddir/fuzz/$1.log" 2>&1 || rc=$?
    echo "$rc" >"$builddir/fuzz/$1.status"
}

for target; do rm -f "$builddir/fuzz/$target.status"; done
# Worker k of JOBS runs the targets k, k + JOBS, k + 2 JOBS, ... in turn.
k=0
while [ "$k" -lt "$jobs" ]; do
    (
        i=0
        for target; do
            if [ $((i % jobs)) -eq "$k" ]; then
                echo "fuzz: $target for ${seconds}s" >&2
                fuzz "$target"
            fi
            i=$((i + 1))
        done
    ) &
    k=$((k + 1))
done
wait

status=0
for target; do
    if [ "$(cat "$builddir/fuzz/$target.status" 2>/dev/null)" != 0 ]; then
        echo "fuzz: $target FAILED; see $builddir/fuzz/$target.log" >&2
        tail -40 "$builddir/fuzz/$target.log" >&2
        status=1
    else
        printf 'fuzz: %s: ' "$target" >&2
        grep -E "stat::number_of_executed_units|cov: " "$builddir/fuzz/$target.log" | tail -2 | tr '\n' ' ' >&2
        echo >&2
    fi
done
exit $status
