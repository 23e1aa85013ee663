#!/bin/sh
# make bench: run every benchmark and write the report to bench/out/report.txt
# (machine, commands, numbers).  BENCH_ROWS sets the size of the generated
# trace (default 10^7; not committed, regenerated when missing);
# BENCH_MEM_ROWS the rows streamed to the memory benchmark (default 10^8,
# never written to disk; e.g. BENCH_MEM_ROWS=1000000 for a quick run);
# BENCH_SERVE_REQUESTS the requests of the long serve run (default 10^8).
set -eu
builddir=$1
srcdir=$2
out=$builddir/bench/out
mkdir -p "$out"
rows=${BENCH_ROWS:-10000000}
trace=$out/trace-$rows.csv
report=$out/report.txt

[ -f "$trace" ] || { echo "bench: generating $trace ($rows rows)" >&2; "$srcdir/bench/gen_trace.sh" "$trace" "$rows"; }

# Time the program itself, not libtool's wrapper script around the
# uninstalled binary (which alone costs about 13 ms per start).
afdkit=$builddir/afdkit
if [ -x "$builddir/.libs/afdkit" ]; then
    afdkit=$builddir/.libs/afdkit
    LD_LIBRARY_PATH=$builddir/libanalytic/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi

{
    echo "afdkit benchmark report, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $(nproc) cores"
    echo "compiler: $(${CC:-cc} --version 2>/dev/null | head -1)"
    echo
    echo "## trace reader ($rows rows, $(du -m "$trace" | cut -f1) MB): bench/bench_trace $trace"
    "$builddir/bench/bench_trace" "$trace" 3
    echo
    echo "## afdkit theta on the same trace, wall time and peak memory (/usr/bin/time)"
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "theta: %e s wall, %M KB peak RSS" "$afdkit" theta --trace "$trace" 2>&1
    else
        start=$(date +%s.%N); "$afdkit" theta --trace "$trace"; end=$(date +%s.%N)
        echo "theta: $(echo "$end - $start" | bc) s wall (peak memory: /usr/bin/time not installed)"
    fi
    echo
    mrows=${BENCH_MEM_ROWS:-100000000}
    echo "## memory bounded by the distinct (P, D) pairs: $mrows rows streamed from bench/gen_trace.sh into --trace -, peak RSS of afdkit (target: each under 200 MB)"
    if [ -x /usr/bin/time ]; then
        for cmd in "hist" "mc barrier -B 64 --r 2,8 --trials 2000" \
                   "sim --hw paper-910c -B 64 --r 4 --requests 2000"; do
            "$srcdir/bench/gen_trace.sh" /dev/stdout "$mrows" |
                /usr/bin/time -f "%e s wall, %M KB peak RSS" -o "$out/mem.time" \
                    "$afdkit" $cmd --trace - -q >/dev/null
            echo "afdkit $cmd --trace -: $(tail -1 "$out/mem.time")"
        done
    else
        echo "(skipped: /usr/bin/time not installed)"
    fi
    echo
    echo "## afdkit sweep over r = 1..1024 (paper setting), best of 10 runs, wall time"
    best=""
    for i in 1 2 3 4 5 6 7 8 9 10; do
        t0=$(date +%s%N)
        "$afdkit" sweep --geometric --mu-p 100 --mu-d 500 --hw paper-910c -B 256 --r 1:1024 >/dev/null
        t1=$(date +%s%N)
        ms=$(( (t1 - t0) / 1000000 ))
        [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
    done
    echo "sweep 1..1024: $best ms (target: under 50 ms; includes process start-up)"
    echo
    echo "## afdkit sim, the Figure 3 sweep (r = 1,2,4,8,16,24,32; 10,000 requests per instance), 1 thread, best of 5"
    best=""
    for i in 1 2 3 4 5; do
        t0=$(date +%s%N)
        OMP_NUM_THREADS=1 "$afdkit" sim --geometric --mu-p 100 --mu-d 500 --hw paper-910c -B 256 \
            --r 1,2,4,8,16,24,32 --requests 10000 >"$out/sim.tsv"
        t1=$(date +%s%N)
        us=$(( (t1 - t0) / 1000 ))
        [ -z "$best" ] || [ "$us" -lt "$best" ] && best=$us
    done
    # events: per micro-batch step, x Attention tasks and three other stages; plus completions
    awk -v us="$best" '!/^#/ { ev += $15 * ($12 + 3) + $14 } END {
        printf "sim Figure 3 sweep: %.3f s (target: under 0.2 s on one core), %.0f events, %.1f M events/s\n",
               us / 1e6, ev, ev / us }' "$out/sim.tsv"
    echo
    echo "## Monte Carlo engine: bench/bench_mc (Philox floor, per-slot barrier, Table 1)"
    "$builddir/bench/bench_mc" "$srcdir/notebooks-data/AzureLLMInferenceTrace_conv.csv" 3
    echo
    echo "## exact M/D/c (target: under 10 ms for c = 64, rho = 0.95): bench/bench_mdc 200 64 0.95"
    "$builddir/bench/bench_mdc" 200 64 0.95
    echo "## the same at rho = 0.99 and for c = 1 at rho = 0.999: bench/bench_mdc 20 64 0.99; bench/bench_mdc 20 1 0.999"
    "$builddir/bench/bench_mdc" 20 64 0.99
    "$builddir/bench/bench_mdc" 20 1 0.999
    echo
    echo "## the estimator: bench/bench_estimate 2000 (target: under 10 ms per call), and afdkit estimate as a process, best of 10, wall time"
    "$builddir/bench/bench_estimate" 2000
    best=""
    for i in 1 2 3 4 5 6 7 8 9 10; do
        t0=$(date +%s%N)
        "$afdkit" estimate --model llama-3.1-70b --device h100-sxm --tp 4 --phase decode -b 64 -s 2048 >/dev/null
        t1=$(date +%s%N)
        us=$(( (t1 - t0) / 1000 ))
        [ -z "$best" ] || [ "$us" -lt "$best" ] && best=$us
    done
    echo "afdkit estimate (h100-sxm, kernel model): $best us (target: under 10 ms; includes process start-up)"
    echo
    # serve's speed: NAME, the target in requests per CPU second, then the
    # command line (10^6 measured + 10^4 warm-up requests)
    serve_speed() {
        name=$1 target=$2
        shift 2
        echo "afdkit $*"
        if [ -x /usr/bin/time ]; then
            /usr/bin/time -f "%U %S" -o "$out/$name.time" "$afdkit" "$@" >/dev/null
            awk -v name="$name" -v target="$target" '{ cpu = $1 + $2; printf "%s: %.3f s CPU, %.3g requests per CPU second (target: >= %s)\n", name, cpu, 1.01e6 / cpu, target }' "$out/$name.time"
        fi
    }
    light="serve --arch disagg --model codellama-34b --device ascend-910b3 --tp 4 --lengths op2 --lambda 2.5/s --prefill-bmax 4 --decode-bmax 16 --requests 1000000 --warmup 10000"
    echo "## afdkit serve, 1p1d (CodeLlama-34B, 910B3, TP 4, OP2, 2.5/s, batches 4/16), 10^6 requests, CPU time"
    # shellcheck disable=SC2086
    serve_speed serve 1e6 $light
    echo
    echo "## afdkit serve with a router: the same 1p1d, --router round-robin (the prefill pool's own queue), 10^6 requests, CPU time"
    # shellcheck disable=SC2086
    serve_speed serve_router 1e6 $light --router round-robin
    echo
    echo "## afdkit serve with a prefix cache: Mooncake's synthetic trace, 4 prefill instances of 4,000 blocks, cache-aware, 10^6 requests, CPU time"
    serve_speed serve_prefix 2e5 serve --arch disagg --prefill 4 --decode 2 --prefill-bmax 1 --hw "$srcdir/notebooks-data/llama-3.1-70b-h100-tp4.hw" --trace "$srcdir/notebooks-data/mooncake/synthetic_trace.jsonl.gz" --lambda 2.5/s --prefix-cache 4000 --router cache-aware --requests 1000000 --warmup 10000 -q
    echo
    sreq=${BENCH_SERVE_REQUESTS:-100000000}
    echo "## afdkit serve, the same 1p1d, $sreq requests: peak RSS (target: under 200 MB; percentiles from histograms past 2^20 requests, within 2^-10 = 0.098% of the exact ones) and CPU time"
    cmd="serve --arch disagg --model codellama-34b --device ascend-910b3 --tp 4 --lengths op2 --lambda 2.5/s --prefill-bmax 4 --decode-bmax 16 --requests $sreq --warmup 10000 -q"
    echo "afdkit $cmd"
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%U %S %M" -o "$out/serve-long.time" "$afdkit" $cmd >"$out/serve-long.tsv"
        awk -v n="$sreq" '{ cpu = $1 + $2; printf "serve %d requests: %.1f s CPU, %.2f M requests per CPU second, %.1f MB peak RSS (target: under 200 MB)\n", n, cpu, (n + 10000) / cpu / 1e6, $3 / 1024 }' "$out/serve-long.time"
        awk -F '\t' '/^# / { for (i = 2; i <= NF; i++) h[i] = $i; h[1] = substr($1, 3); next } /^#/ { next } { line = ""; for (i = 1; i <= NF; i++) if (h[i] ~ /^(ttft_p90|ttft_p90_se|tpot_p90|tpot_p90_se|completed)$/) line = line (line == "" ? "" : " ") h[i] "=" $i; print line }' "$out/serve-long.tsv"
    else
        echo "(skipped: /usr/bin/time not installed)"
    fi
    echo
    echo "## afdkit strategies, 8 devices, CodeLlama-34B on 910B3, OP2, 1500 ms / 70 ms, best of 3, wall time"
    for method in closed both; do
        best=""
        for i in 1 2 3; do
            t0=$(date +%s%N)
            "$afdkit" strategies --devices 8 --model codellama-34b --device ascend-910b3 --lengths op2 \
                --ttft-slo 1500ms --tpot-slo 70ms --method $method >/dev/null 2>&1
            t1=$(date +%s%N)
            ms=$(( (t1 - t0) / 1000000 ))
            [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
        done
        [ $method = closed ] && target="1 s" || target="30 s"
        echo "strategies --method $method: $best ms (target: under $target)"
    done
    echo
    echo "## afdkit regime, the 5 x 5 SLO map of docs/taichi.md (llama-3.1-70b on 8 x TP4 h100-sxm-round.device, conversation trace), best of 3, wall time"
    for method in closed sim; do
        best=""
        for i in 1 2 3; do
            t0=$(date +%s%N)
            "$afdkit" regime --instances 8 --model llama-3.1-70b \
                --device "$srcdir/notebooks-data/devices/h100-sxm-round.device" --tp 4 \
                --trace "$srcdir/notebooks-data/AzureLLMInferenceTrace_conv.csv" \
                --ttft-slo 150ms,250ms,500ms,1s,2s --tpot-slo 25ms,35ms,50ms,75ms,100ms \
                --method $method --requests 10000 --warmup 1000 -q >/dev/null 2>&1
            t1=$(date +%s%N)
            ms=$(( (t1 - t0) / 1000000 ))
            [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
        done
        [ $method = closed ] && target="1 s" || target="120 s"
        echo "regime --method $method: $best ms (target: under $target)"
    done
} | tee "$report"
echo "bench: report written to $report" >&2
