#!/bin/sh
# The standing agreement table: every serving closed form beside its
# simulation on fixed grids, written as docs/agreement.md.
#
#   scripts/validate.sh [--quick] [OUT]
#
# $AFDKIT is the program (default build/afdkit), OUT the Markdown file
# (default docs/agreement.md; `-` for none).  --quick runs the small grid of
# `make check` (tests/check_agreement.sh).  Each cell is a closed form, its
# simulation +- one standard error, and gap = closed / simulated - 1.  The
# bounds are docs/agreement.bounds (the one table of them): a cell passes when
# |gap| <= bound + 2 SE / simulated; a simulated 0 passes only against a
# closed 0.  The script exits 1 when a cell is out of its bound, after writing
# the table, and names each such cell on stderr.
set -u
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/docs/agreement.md}
bounds=${AFDKIT_AGREEMENT_BOUNDS:-$top/docs/agreement.bounds}
AFDKIT=${AFDKIT:-$top/build/afdkit}
NB=$top/notebooks-data
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-validate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cells=$tmp/cells
: >"$cells"
status=0
start=$(date +%s)

# afd ARGS...: run afdkit, stop on failure with its stderr.
afd() {
    if ! AFDKIT_PROGRESS=off "$AFDKIT" "$@" >"$tmp/o" 2>"$tmp/e"; then
        echo "validate: afdkit $* failed:" >&2; cat "$tmp/e" >&2; exit 2
    fi
    cat "$tmp/o"
}

# cols FILE: "NAME=INDEX" pairs of the '# ' header, for awk -v.
# emit FAMILY QUANTITY CELL CLOSED SIM SE: one cell.
emit() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$cells"; }

# law_file FILE UNIT PREFILL_A PREFILL_B DECODE_BETA DECODE_GAMMA DECODE_ALPHA:
# a latency file of serving laws alone (prefill_c 0, unit AFD coefficients).
law_file() {
    cat >"$1" <<EOF
unit = $2
alpha_a = 1
beta_a = 0
alpha_f = 1
beta_f = 0
alpha_c = 0
beta_c = 0
prefill_a = $3
prefill_b = $4
prefill_c = 0
decode_beta = $5
decode_gamma = $6
decode_alpha = $7
EOF
}

# ---- regime: TaiChi's three modes on 4 instances at docs/taichi-test.hw, at
# two settings of the geometric lengths.  Beside each mode's goodput, the
# winner: the simulated goodput of the mode the closed forms name best
# against the simulated best (the hybrid's column holds the best of its own
# configuration and the plain modes, so a closed "hybrid" reads that).
# The simulated side runs regime's default 20000 requests after 4000 at every
# rate (about 11 s a setting on the full grid).
if [ "$quick" -eq 1 ]; then
    ttft=300ms,1s; tpot=35ms,80ms; ttft2=1s; tpot2=50ms
else
    ttft=300ms,500ms,1s,2s,4s; tpot=35ms,50ms,60ms,80ms,100ms; ttft2=$ttft; tpot2=$tpot
fi
for setting in "|1000|100|$ttft|$tpot" "mu 500/200: |500|200|$ttft2|$tpot2"; do
    IFS='|' read -r label mp md tt tp <<EOF
$setting
EOF
    reg="regime --instances 4 --hw $top/docs/taichi-test.hw --geometric --mu-p $mp --mu-d $md --ttft-slo $tt --tpot-slo $tp"
    # shellcheck disable=SC2086
    afd $reg --method closed >"$tmp/rc"
    # shellcheck disable=SC2086
    afd $reg --method sim >"$tmp/rs"
    awk -F '\t' -v label="$label" 'FNR == 1 { f++ } /^#/ { next }
        f == 1 { for (m = 0; m < 3; m++) c[FNR, m] = $(3 + m); best[FNR] = $6; next }
        { split("agg disagg hybrid", name, " ")
          cell = sprintf("%sTTFT %s ms, TPOT %s ms", label, $1, $2)
          for (m = 0; m < 3; m++)
              printf "regime\tgoodput_%s\t%s\t%s\t%s\t%s\n", name[m + 1], cell,
                  c[FNR, m], $(3 + m), ($(10 + m) == "nan" ? 0 : $(10 + m))
          top = $3; k = 0
          for (m = 1; m < 3; m++) if ($(3 + m) > top) { top = $(3 + m); k = m }
          w = 0
          for (m = 0; m < 3; m++) if (best[FNR] == name[m + 1]) w = $(3 + m)
          printf "regime\twinner\t%s: closed %s, simulated %s\t%s\t%s\t%s\n", cell, best[FNR], $6,
              w, top, ($(10 + k) == "nan" ? 0 : $(10 + k)) }' \
        "$tmp/rc" "$tmp/rs" >>"$cells"
    # the limit that binds at each mode's goodput, closed and simulated: one
    # row per setting, the (cell, mode) pairs where they agree against all of
    # them (gap: minus the share that differ), the differing ones named; a
    # simulated tie (ttft=tpot: the run cannot tell the two attainments
    # apart) agrees with a closed ttft or tpot
    awk -F '\t' -v label="$label" 'BEGIN { split("agg disagg hybrid", nm, " ") }
        FNR == 1 { f++ }
        /^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) col[f, $i] = i; next }
        /^#/ { next }
        { r = FNR; n[f] = r; cell[r] = $1 " ms/" $2 " ms"
          for (m = 1; m <= 3; m++) v[f, r, m] = $(col[f, "limit_" nm[m]]) }
        END { d = 0; t = 0; ties = 0; list = ""
              for (r = 1; r <= n[2]; r++) {
                  if (!(r in cell)) continue
                  for (m = 1; m <= 3; m++) {
                      t++
                      tie = v[2, r, m] == "ttft=tpot" && (v[1, r, m] == "ttft" || v[1, r, m] == "tpot")
                      ties += tie
                      if (v[1, r, m] != v[2, r, m] && !tie) {
                          d++
                          list = list sprintf(" %s %s %s/%s;", cell[r], nm[m], v[1, r, m], v[2, r, m]) } } }
              printf "regime\tlimit\t%s%d of %d limits differ (closed/simulated; %d simulated ties taken as agreeing):%s\t%d\t%d\t0\n",
                  label, d, t, ties, (d ? list : " none"), t - d, t }' \
        "$tmp/rc" "$tmp/rs" >>"$cells"
done

# ---- strategies at 8 devices: goodput closed and simulated (--method both),
# short and long prompts, and
# long prompts at 16 devices.
# The small grid: long prompts at tp 4 alone (three strategies).
if [ "$quick" -eq 1 ]; then
    wls="long prompts|--devices 8 --lengths 4000,500 --tp 4"
else
    wls="short prompts|--devices 8 --lengths 500,500
long prompts|--devices 8 --lengths 4000,500
16 devices, long prompts|--devices 16 --lengths 4000,500"
fi
echo "$wls" >"$tmp/wls"
while IFS= read -r w; do
        label=${w%%|*}; wl=${w#*|}
        # shellcheck disable=SC2086
        afd strategies --model llama-3.1-70b --device h200 $wl --ttft-slo 1s \
            --tpot-slo 50ms --decode-bmax 256 --method both >"$tmp/st"
        awk -F '\t' -v w="$label" '/^#/ { next }
                { printf "strategies\tgoodput_%s\t%s: %s tp %s (%s)\t%s\t%s\t0\n", $2, w, $1, $3, $11, $7, $9 }' \
            "$tmp/st" >>"$cells"
        # the binding limits: the rows whose simulated limit is known (not
        # none, the top of the bracket) against those where the closed one
        # is the same (a stage that cannot keep up: prefill or decode,
        # capacity; a simulated tie, ttft=tpot, with either SLO)
        awk -F '\t' -v w="$label" '/^#/ { next }
                $16 != "none" { n++; c = ($11 == "prefill" || $11 == "decode") ? "capacity" : $11
                                if (c == $16 || ($16 == "ttft=tpot" && (c == "ttft" || c == "tpot"))) k++
                                else bad = bad " " $1 " tp " $3 " " $11 "/" $16 }
                END { printf "strategies\tlimit\t%s: rows with the simulated limit known, and agreeing%s\t%d\t%d\t0\n",
                          w, (bad == "" ? "" : " (differ:" bad ")"), n, k }' \
            "$tmp/st" >>"$cells"
done <"$tmp/wls"

# ---- pipelines: end-to-end sojourn mean and 90th percentile, closed and sim.
cat >"$tmp/exp.json" <<'EOF'
{"stages": [
  {"name": "a", "servers": 1, "service": {"exp": 0.1}},
  {"name": "b", "servers": 2, "service": {"exp": 0.18}},
  {"name": "c", "servers": 1, "service": {"exp": 0.08}}
]}
EOF
cat >"$tmp/mixed.json" <<'EOF'
{"stages": [
  {"name": "a", "servers": 1, "service": {"const": 0.1}},
  {"name": "b", "servers": 1, "service": {"exp": 0.03}, "repeat": 4}
]}
EOF
if [ "$quick" -eq 1 ]; then pq="--customers 5000 --reps 8"; else pq=""; fi
for p in "deterministic|$NB/pipelines/tandem.json|2 6 8" \
         "exponential|$tmp/exp.json|2 5 8" \
         "mixed|$tmp/mixed.json|2.5 4.17 5.83"; do
    kind=${p%%|*}; rest=${p#*|}; file=${rest%%|*}; rates=${rest#*|}
    [ "$quick" -eq 1 ] && rates=${rates%% *}
    for l in $rates; do
        afd pipeline --stages "$file" --lambda "$l" >"$tmp/pc"
        # shellcheck disable=SC2086
        afd pipeline --stages "$file" --lambda "$l" --method sim $pq >"$tmp/ps"
        awk -F '\t' -v k="$kind" -v l="$l" 'FNR == 1 { f++ } $1 != "total" { next }
            f == 1 { m = $5; q = $6; next }
            { printf "pipeline\t%s_sojourn_mean\t%s /s\t%s\t%s\t%s\n", k, l, m, $5, $10
              printf "pipeline\t%s_sojourn_p90\t%s /s\t%s\t%s\t%s\n", k, l, q, $6, $11 }' \
            "$tmp/pc" "$tmp/ps" >>"$cells"
    done
done

# ---- serve --closed: TTFT and TPOT, mean and 90th percentile, of colloc and
# disagg at docs/taichi-test.hw (prompts 1000, outputs 100 tokens).
if [ "$quick" -eq 1 ]; then sq="--requests 4000 --warmup 400"; else sq="--requests 40000 --warmup 4000"; fi
for a in "colloc|1 2 2.5|--arch colloc --instances 1" "disagg|1 2.5 4|--arch disagg --prefill 1 --decode 1"; do
    arch=${a%%|*}; rest=${a#*|}; srates=${rest%%|*}; flags=${rest#*|}
    [ "$quick" -eq 1 ] && srates=${srates#* } && srates=${srates%% *}
    for l in $srates; do
        # shellcheck disable=SC2086
        afd serve $flags --hw "$top/docs/taichi-test.hw" --lengths 1000,100 --lambda "$l/s" \
            --closed $sq >"$tmp/sv"
        awk -F '\t' -v a="$arch" -v l="$l" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) c[$i] = i; next }
                /^#/ { next }
                { split("ttft_mean ttft_p90 tpot_mean tpot_p90", k, " ")
                  for (j = 1; j <= 4; j++)
                      printf "serve\t%s_%s\t%s /s\t%s\t%s\t%s\n", a, k[j], l,
                          $(c[k[j] "_cf"]), $(c[k[j]]), $(c[k[j] "_se"]) }' "$tmp/sv" >>"$cells"
    done
done

# ---- bulk: TTFT of greedy static prefill batches of up to 16 (bulk.c)
# against the simulator, prompt work 1 s, fixed cost 0.01 s (compute-bound)
# or 1 s (and 0.3 s at c = 8, where the random-phase law enters with weight
# 0.6), c prefill instances, at a load lambda S(16) / (16 c) of 0.6 and
# 0.85 (one output token: prefill alone), one queue for the c instances
# (--router global), the queue the closed form solves.
for a in 0.01 0.3 1; do
    law_file "$tmp/bulk$a.hw" s "$a" 1e-3 0.03 1e-4 1e-7
done
if [ "$quick" -eq 1 ]; then bgrid="2,0.01,0.6"; bq="--requests 20000 --warmup 2000"
else
    bgrid="2,0.01,0.6 2,0.01,0.85 4,0.01,0.6 4,0.01,0.85 8,0.01,0.6 8,0.01,0.85
2,1,0.6 2,1,0.85 4,1,0.6 4,1,0.85 8,1,0.6 8,1,0.85 8,0.3,0.6 8,0.3,0.85"
    bq="--requests 200000 --warmup 5000"
fi
for g in $bgrid; do
    IFS=, read -r c a ld <<EOF
$g
EOF
    l=$(awk -v c="$c" -v a="$a" -v ld="$ld" 'BEGIN { printf "%.6g", ld * 16 * c / (a + 16) }')
    # shellcheck disable=SC2086
    afd serve --arch disagg --prefill "$c" --decode 1 --prefill-bmax 16 --router global --hw "$tmp/bulk$a.hw" \
        --lengths 1000,1 --lambda "$l/s" --closed --seed 3 $bq >"$tmp/bk"
    awk -F '\t' -v cell="c $c, fixed cost $a s, load $ld" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) c[$i] = i; next }
            /^#/ { next }
            { for (j = 1; j <= 2; j++) { k = j == 1 ? "ttft_mean" : "ttft_p90"
                  printf "bulk\t%s\t%s\t%s\t%s\t%s\n", k, cell, $(c[k "_cf"]), $(c[k]), $(c[k "_se"]) } }' \
        "$tmp/bk" >>"$cells"
done

# ---- offload: M/M/c+D closed form against the simulator.
if [ "$quick" -eq 1 ]; then oq="-n 20000 -R 8"; grid="0.9,2,2"; else oq=""; grid="0.5,1,1 0.9,2,2 1.5,2,1 3,4,0.5"; fi
for g in $grid; do
    IFS=, read -r l c d <<EOF
$g
EOF
    afd offload --lambda "$l" --c "$c" --deadline "$d" --service-exp 1.5 >"$tmp/oc"
    # shellcheck disable=SC2086
    afd offload --lambda "$l" --c "$c" --deadline "$d" --service-exp 1.5 --method sim $oq >"$tmp/os"
    awk -F '\t' -v cell="lambda $l, c $c, deadline $d s" 'FNR == 1 { f++ } /^#/ { next }
        f == 1 { p = $1; w = $2; q = $3; next }
        { printf "offload\tp_offload\t%s\t%s\t%s\t%s\n", cell, p, $1, $2
          printf "offload\twait_mean\t%s\t%s\t%s\t%s\n", cell, w, $3, $4
          printf "offload\twait_p90\t%s\t%s\t%s\t%s\n", cell, q, $5, $6 }' \
        "$tmp/oc" "$tmp/os" >>"$cells"
done

# ---- pd, goodput, twotier, and strategies on the Azure conversation trace:
# the sizing commands' closed forms beside the simulator on the same
# settings, each family a function of its own.
conv=$NB/AzureLLMInferenceTrace_conv.csv
l70=$NB/llama-3.1-70b-h100-tp4.hw

# disagg_sim C N RATE [SERVE OPTIONS]: serve's twin of pd's and goodput's
# pools on the conversation trace at llama-3.1-70b-h100-tp4.hw: C prefill
# instances behind one queue (M/G/c), one prompt per prefill, N decode
# instances of 256 slots; the row in $tmp/ds.  A run that serve calls
# unstable is printed all the same (its P90s then miss any SLO).
disagg_sim() {
    ds_c=$1 ds_n=$2 ds_l=$3; shift 3
    afd serve --arch disagg --prefill "$ds_c" --decode "$ds_n" --router global --prefill-bmax 1 \
        --decode-bmax 256 --hw "$l70" --trace "$conv" --lambda "$ds_l/s" --seed 5 \
        --allow-unstable "$@" >"$tmp/ds"
}

# col NAME: the column NAME of the row in $tmp/ds.
col() {
    awk -F '\t' -v n="$1" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) k[$i] = i; next }
        /^#/ { next } { print $(k[n]) }' "$tmp/ds"
}

# pd at two rates: the P90 TTFT of each prefill pool of its curve (M/G/c,
# docs/queues.md, Prefill sizing) and the mean decode step at the load (the
# fixed point of The step at the load) against serve's TTFT P90 and mean
# TPOT of the same pools.
validate_pd() {
    if [ "$quick" -eq 1 ]; then rates=5; set -- --requests 20000 --warmup 2000
    else rates="5 15"; set -- --requests 200000 --warmup 5000; fi
    for l in $rates; do
        afd pd --lambda "$l/s" --trace "$conv" --hw "$l70" --ttft-slo 1s --tpot-slo 50ms \
            --slots-per-instance 256 >"$tmp/pd"
        # block 1: decode_instances, tpot; block 2: c, ttft_p90
        n=$(awk -F '\t' '/^# / { b++ } /^#/ { next } b == 1 && NF > 1 { print $12; exit }' "$tmp/pd")
        tpot=$(awk -F '\t' '/^# / { b++ } /^#/ { next } b == 1 && NF > 1 { print $13; exit }' "$tmp/pd")
        first=1
        awk -F '\t' '/^# / { b++ } /^#/ { next } b == 2 && NF > 1 { print $1 "\t" $5 }' "$tmp/pd" >"$tmp/curve"
        while IFS="$(printf '\t')" read -r c ttft; do
            [ "$quick" -eq 1 ] && [ "$c" -gt 2 ] && continue
            disagg_sim "$c" "$n" "$l" "$@"
            emit pd ttft_p90 "$l /s, $c prefill" "$ttft" "$(col ttft_p90)" "$(col ttft_p90_se)"
            if [ "$first" -eq 1 ]; then
                emit pd tpot_mean "$l /s, $n decode, $c prefill" "$tpot" "$(col tpot_mean)" \
                    "$(col tpot_mean_se)"
                first=0
            fi
        done <"$tmp/curve"
    done
}

# meets T1 T2: 0 when the row in $tmp/ds has P90 TTFT <= T1 and P90 TPOT <= T2 (ms).
meets() {
    awk -F '\t' -v a="$1" -v b="$2" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) k[$i] = i; next }
        /^#/ { next } { ok = ($(k["ttft_p90"]) <= a && $(k["tpot_p90"]) <= b) } END { exit !ok }' "$tmp/ds"
}

# goodput on pools of the trace: the closed-form goodput (P90 TTFT and the
# decode side at the load, by bisection) against the largest rate at which
# serve's P90 TTFT and P90 TPOT meet the SLOs, bisected from the closed
# form's bracket to 2% (one seed for every rate, as strategies does).  The
# quantity is named after the limit the closed form names (goodput_ttft,
# goodput_tpot, ...).
validate_goodput() {
    if [ "$quick" -eq 1 ]; then
        grid="1 1 1000 50
3 1 1000 30"; set -- --requests 10000 --warmup 1000
    else
        grid="1 1 1000 50
2 1 1000 50
2 1 500 50
3 1 1000 30"
        set -- --requests 20000 --warmup 2000
    fi
    echo "$grid" >"$tmp/grid"
    while read -r c n t1 t2; do
        afd goodput --trace "$conv" --hw "$l70" --ttft-slo "${t1}ms" --tpot-slo "${t2}ms" \
            --slots-per-instance 256 --prefill "$c" --decode "$n" >"$tmp/gp"
        g=$(awk -F '\t' '!/^#/ && NF > 1 { print 1000 * $3; exit }' "$tmp/gp")
        lim=$(awk -F '\t' '!/^#/ && NF > 1 { print $5; exit }' "$tmp/gp")
        lo=$(awk -v g="$g" 'BEGIN { print 0.7 * g }'); hi=$(awk -v g="$g" 'BEGIN { print 1.3 * g }')
        k=0
        while disagg_sim "$c" "$n" "$lo" "$@"; ! meets "$t1" "$t2" && [ $k -lt 6 ]; do
            hi=$lo; lo=$(awk -v x="$lo" 'BEGIN { print 0.7 * x }'); k=$((k + 1))
        done
        k=0
        while disagg_sim "$c" "$n" "$hi" "$@"; meets "$t1" "$t2" && [ $k -lt 6 ]; do
            lo=$hi; hi=$(awk -v x="$hi" 'BEGIN { print 1.3 * x }'); k=$((k + 1))
        done
        while awk -v a="$lo" -v b="$hi" 'BEGIN { exit !(b - a > 0.02 * a) }'; do
            m=$(awk -v a="$lo" -v b="$hi" 'BEGIN { print (a + b) / 2 }')
            disagg_sim "$c" "$n" "$m" "$@"
            if meets "$t1" "$t2"; then lo=$m; else hi=$m; fi
        done
        emit goodput "goodput_$lim" "${c}p${n}d, TTFT $t1 ms, TPOT $t2 ms" "$g" \
            "$(awk -v a="$lo" -v b="$hi" 'BEGIN { print (a + b) / 2 }')" 0
    done <"$tmp/grid"
}

# twotier: afdkit twotier's M/G/c+D LP pool and its GI/G/c HP pool fed by the
# LP pool's offloads (docs/queues.md, The offloaded stream and Capacity) on three instances, prefill 300 ms, T = 1 s, X = 400 ms, against
# serve --arch twotier as the same queue: one output token, a chunk of the
# whole prompt, FCFS, no tickets, one prompt per HP batch (the KV capacity of
# one request), and the offload at the same wait, T - X: serve offloads when
# the slack T - wait - prefill falls to its threshold, so X - 300 ms.
validate_twotier() {
    law_file "$tmp/tt.hw" ms 300 0 30 0 0
    if [ "$quick" -eq 1 ]; then rates=6; splits="2,1"; set -- --requests 20000 --warmup 2000
    else rates="6 8"; splits="3,0 2,1 1,2"; set -- --requests 200000 --warmup 5000; fi
    for l in $rates; do
        afd twotier --instances 3 --ttft-slo 1s --threshold 400ms --service 300ms --lambda "$l/s" \
            --slo-scale 1 >"$tmp/tt"
        for s in $splits; do
            lp=${s%,*}; hp=${s#*,}
            afd serve --arch twotier --lp "$lp" --hp "$hp" --policy fcfs --no-tickets \
                --offload-threshold 100ms --ttft-slo 1s --hw "$tmp/tt.hw" --lengths 1000,1 \
                --chunk 1000 --kv-capacity 1001 --lambda "$l/s" --seed 5 "$@" >"$tmp/ds"
            awk -F '\t' -v lp="$lp" -v hp="$hp" '/^# / { b++ } /^#/ { next } b == 2 && $2 == lp && $3 == hp {
                print $4 "\t" $5 }' "$tmp/tt" >"$tmp/ttc"
            IFS="$(printf '\t')" read -r att poff <"$tmp/ttc"
            emit twotier attainment "$l /s, ${lp}L${hp}H" "$att" "$(col attainment)" "$(col attainment_se)"
            [ "$hp" -gt 0 ] && emit twotier p_offload "$l /s, ${lp}L${hp}H" "$poff" \
                "$(col p_offload)" "$(col p_offload_se)"
        done
    done
}

# strategies on the Azure conversation trace at 8 devices (--method both);
# the closed forms read the trace's mean prompt and output, the simulator
# draws its rows.  The small grid: tp 4 alone, 4000 requests a rate.
validate_strategies_trace() {
    if [ "$quick" -eq 1 ]; then set -- --tp 4 --requests 4000 --warmup 400; fi
    afd strategies --devices 8 --model llama-3.1-70b --device h200 --trace "$conv" \
        --ttft-slo 1s --tpot-slo 50ms --decode-bmax 256 --method both "$@" >"$tmp/st"
    awk -F '\t' '/^#/ { next }
        { printf "strategies\ttrace_goodput_%s\tconversation trace: %s tp %s (%s)\t%s\t%s\t0\n",
              $2, $1, $3, $11, $7, $9 }' "$tmp/st" >>"$cells"
}

validate_pd
validate_goodput
validate_twotier
validate_strategies_trace

# ---- router: the prefill pool's TTFT, mean and 90th percentile, behind
# each router with a routed form (libanalytic/queue/routed.c), four prefill
# instances of batch 1 at 1 ms a prompt token (a law linear in the prompt),
# one output token: geometric prompts of mean 1000 (exponential prefills) at
# loads 0.5 and 0.8, and prompts of 1000 (constant prefills) at 0.8.
router_family() {
    law_file "$tmp/router.hw" ms 0 1 10 0 0
    if [ "$quick" -eq 1 ]; then rgrid="geometric,0.8"; rq="--requests 100000 --warmup 2000"
    else rgrid="geometric,0.5 geometric,0.8 fixed,0.8"; rq="--requests 1000000 --warmup 10000"; fi
    for g in $rgrid; do
        law=${g%,*}; ld=${g#*,}
        if [ "$law" = geometric ]; then rw="--geometric --mu-p 1000 --mu-d 1"; else rw="--lengths 1000,1"; fi
        for r in random round-robin global least-requests power-of-two; do
            # shellcheck disable=SC2086
            afd serve --arch disagg --prefill 4 --decode 1 --prefill-bmax 1 --decode-bmax 1 \
                --router "$r" --hw "$tmp/router.hw" --lambda "$(awk -v l="$ld" 'BEGIN { print 4 * l }')/s" \
                $rw --closed --seed 5 $rq >"$tmp/rt"
            awk -F '\t' -v r="$(echo "$r" | tr - _)" -v cell="$law prompts, load $ld" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) c[$i] = i; next }
                /^#/ { next }
                { for (j = 1; j <= 2; j++) { k = j == 1 ? "ttft_mean" : "ttft_p90"
                      printf "router\t%s_%s\t%s\t%s\t%s\t%s\n", r, k, cell, $(c[k "_cf"]), $(c[k]), $(c[k "_se"]) } }' \
                "$tmp/rt" >>"$cells"
        done
    done
}
router_family

# ---- prefix: Che's characteristic-time LRU hit fraction (prefix_hit_che,
# libanalytic/workload/prefix.c) against the replayed prefix_hit of one
# instance on Mooncake's trace in its own order (docs/prefix-cache.md, the
# first example) at several cache sizes.  One instance replaying the trace's
# order is deterministic: its prefix_hit is the trace's LRU replay exactly
# (tests/serve/test_prefix.c), so the cell's SE is 0; the batch-means
# prefix_hit_se it prints measures the trace's drift, not an uncertainty.
prefix_family() {
    if [ "$quick" -eq 1 ]; then pgrid="2000 16000"; else pgrid="500 2000 8000 16000 32000 50000"; fi
    for b in $pgrid; do
        afd serve --arch colloc --prefill-bmax 1 --hw "$NB/llama-3.1-70b-h100-tp4.hw" \
            --trace "$NB/mooncake/synthetic_trace.jsonl.gz" --arrivals trace --time-scale 8 \
            --prefix-cache "$b" --batches 8 --precision 6 >"$tmp/px"
        awk -F '\t' -v b="$b" '/^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) c[$i] = i; next }
            /^#/ { next }
            { printf "prefix\tche_hit_%s\t%s blocks\t%s\t%s\t0\n", b <= 8000 ? "small_cache" : "large_cache",
                  b, $(c["prefix_hit_che"]), $(c["prefix_hit"]) }' "$tmp/px" >>"$cells"
    done
}
prefix_family

elapsed=$(( $(date +%s) - start ))

# ---- the table, and the check against the bounds.
awk -F '\t' -v quick="$quick" -v elapsed="$elapsed" -v bad="$tmp/bad" '
    FNR == NR { if ($0 ~ /^#/ || NF < 3) next
                b[$1 "." $2] = $3; st[$1 "." $2] = $4; note[$1 "." $2] = $5; next }
    { key = $1 "." $2
      if (!(key in b)) { print "validate: no bound for " key > "/dev/stderr"; print key >> bad; next }
      cl = $4 + 0; si = $5 + 0; se = $6 + 0
      num = "^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$"
      if ($4 !~ num || $5 !~ num) { gap = "no number"; ok = 0 }
      else if (si == 0) { gap = (cl == 0 ? "0" : "inf"); ok = (cl == 0) }
      else { g = cl / si - 1; gap = sprintf("%+.1f%%", 100 * g)
             a = g < 0 ? -g : g; ok = (a <= b[key] + 2 * se / si) }
      if (!ok) { print "validate: " key " at " $3 ": gap " gap " above " b[key] > "/dev/stderr"; print key >> bad }
      fam[key] = $1; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      row[key] = row[key] sprintf("| %s | %.4g | %.4g ± %.2g | %s | %s |\n", $3, cl, si, se, gap, ok ? "within" : "**out**")
      a2 = (si == 0 ? 0 : (cl / si - 1)); if (a2 < 0) a2 = -a2
      if (a2 > worst[key]) worst[key] = a2 }
    END {
      print "# Closed forms against the simulator"
      print ""
      print "Made by `make validate` (scripts/validate.sh" (quick ? " --quick" : "") "); do not edit by hand."
      print "Each cell: the closed form, the simulation ± one standard error (0 where the command"
      print "reports none: `strategies` bisects its simulated goodput to 2%), and gap = closed /"
      print "simulated − 1.  The bound of each quantity is docs/agreement.bounds, the one table"
      print "that scripts/validate.sh and tests/check_agreement.sh (a small grid, in `make check`)"
      print "hold every cell to: |gap| ≤ bound + 2 SE / simulated; a simulated 0 only against a"
      print "closed 0.  A bound marked *known disagreement* is the gap measured, not a claim of"
      print "accuracy: the closed form is off there and the row says so."
      print ""
      print "The grids: `regime --instances 4 --hw docs/taichi-test.hw --geometric --mu-p 1000"
      print "--mu-d 100` and `--mu-p 500 --mu-d 200` over TTFT 300 ms-4 s x TPOT 35-100 ms"
      print "(`--method closed` and `sim`; winner: the simulated goodput of the mode the closed"
      print "forms name best against the simulated best; limit: the binding limits that differ,"
      print "where a simulated tie, `ttft=tpot` (the TTFT and TPOT attainments at the goodput"
      print "within 2 standard errors of their difference), agrees with a closed `ttft` or `tpot`);"
      print "`strategies --devices 8 --model llama-3.1-70b --device h200 --ttft-slo 1s --tpot-slo 50ms"
      print "--decode-bmax 256 --method both` on prompts 500,500 and 4000,500, and at 16 devices on"
      print "4000,500 (limit: the rows whose simulated limit agrees, a simulated `ttft=tpot`, both"
      print "P90s over their SLOs or within 2 standard errors of each other as ratios to them, with a"
      print "closed `ttft` or `tpot`); `pipeline` on"
      print "notebooks-data/pipelines/tandem.json (deterministic), the same stages exponential, and"
      print "a constant 0.1 s stage before an Erlang-4 0.12 s one (mixed); `serve --closed` at"
      print "docs/taichi-test.hw with prompts 1000 and outputs 100 (colloc 1 instance, disagg 1:1);"
      print "`offload --service-exp 1.5` against `--method sim`; `serve --arch disagg --prefill-bmax 16"
      print "--lengths 1000,1 --closed` (bulk: prefill alone in greedy batches of up to 16, c = 2, 4, 8"
      print "instances, prompt work 1 s, fixed cost 0.01 s or 1 s, and 0.3 s at c = 8, load 0.6 and 0.85)."
      print ""
      print "The sizing commands, on notebooks-data/AzureLLMInferenceTrace_conv.csv at"
      print "notebooks-data/llama-3.1-70b-h100-tp4.hw: `pd --slots-per-instance 256` at 5 and 15/s"
      print "(the P90 TTFT of each prefill pool of its curve, the mean decode step at the load) against"
      print "`serve --arch disagg --router global --prefill-bmax 1 --decode-bmax 256` on the same pools;"
      print "`goodput` on 1p1d and 2p1d (TTFT 1 s and 0.5 s, TPOT 50 ms) and 3p1d (TTFT 1 s, TPOT 30 ms)"
      print "against the largest rate at which that serve run meets both P90s, bisected to 2%;"
      print "`twotier --instances 3 --ttft-slo 1s --threshold 400ms --service 300ms --slo-scale 1` at"
      print "6 and 8/s against `serve --arch twotier --policy fcfs --no-tickets --offload-threshold 100ms"
      print "--lengths 1000,1 --chunk 1000 --kv-capacity 1001` on a constant 300 ms prefill (the same"
      print "queue: the offload at a wait of T - X, one prompt per HP batch); `strategies` as above"
      print "on the conversation trace at 8 devices (trace_goodput_*)."
      print ""
      print "Router: `serve --arch disagg --prefill 4 --decode 1 --prefill-bmax 1 --router R --closed`, 1 ms a"
      print "prompt token, geometric prompts of mean 1000 at loads 0.5 and 0.8, prompts of 1000 at 0.8;"
      print "prefix: `serve --arch colloc --prefill-bmax 1 --trace` on the Mooncake trace `--arrivals trace"
      print "--prefix-cache B` (docs/prefix-cache.md), the Che hit against the replay, B = 500 to 50,000."
      print ""
      printf "This grid took %d s on a shared 2-core machine.\n\n", elapsed
      print "| family | quantity | bound | status | largest gap on this grid | note |"
      print "|---|---|---|---|---|---|"
      for (i = 1; i <= n; i++) { k = order[i]
          printf "| %s | %s | %.0f%% | %s | %.1f%% | %s |\n", fam[k], substr(k, length(fam[k]) + 2),
              100 * b[k], st[k] == "known" ? "known disagreement" : "agrees", 100 * worst[k], note[k] }
      for (i = 1; i <= n; i++) { k = order[i]
          printf "\n## %s: %s (bound %.0f%%%s)\n\n", fam[k], substr(k, length(fam[k]) + 2), 100 * b[k],
              st[k] == "known" ? ", known disagreement" : ""
          print "| cell | closed | simulated | gap | |"
          print "|---|---|---|---|---|"
          printf "%s", row[k] } }' "$bounds" "$cells" >"$tmp/md"
[ -s "$tmp/bad" ] && status=1
if [ "$out" != - ]; then cp "$tmp/md" "$out"; fi
exit $status
