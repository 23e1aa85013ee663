#!/bin/sh
# check_profiling.sh: the efficiencies of the a100-80g and h100-sxm presets are
# what "afdkit calibrate --profile" fits to the measurements bundled in
# data/profiling/.  The command is the one the preset's comment gives; it is
# run again (with --out) and its mfu, mbu, kernel_us, roofline_p, comm_eff
# and comm_latency_ms must equal the preset's lines.
set -u
srcdir=${srcdir:-.}
AFDKIT=${AFDKIT:-./afdkit}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-profiling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
for dev in a100-80g h100-sxm; do
    file=$srcdir/data/devices/$dev.device
    # the "#   afdkit calibrate ... \" comment and its continuation lines
    cmd=$(awk '/^#   afdkit calibrate/ { on = 1 }
               on { line = $0; sub(/^#[ ]*/, "", line); cont = sub(/ *\\$/, "", line);
                    printf "%s ", line; if (!cont) exit }' "$file")
    case $cmd in
    "afdkit calibrate --profile "*) ;;
    *) echo "$dev: no 'afdkit calibrate --profile' command in its comments"; status=1; continue ;;
    esac
    set -- ${cmd#afdkit }
    if ! (cd "$srcdir" && "$AFDKIT" "$@" --out "$tmp/$dev.device" >/dev/null); then
        echo "$dev: '$cmd' failed"; status=1; continue
    fi
    for key in mfu mbu kernel_us roofline_p comm_eff comm_latency_ms; do
        want=$(sed -n "s/^$key = //p" "$tmp/$dev.device")
        have=$(sed -n "s/^$key = //p" "$file")
        if [ -z "$want" ] || [ "$want" != "$have" ]; then
            echo "$dev: $key = '$have' in $file, but '$cmd' fits '$want'"
            status=1
        fi
    done
done

# scripts/profiling-errors.py makes docs/estimator.md's error tables from the
# rows calibrate prints; its grouping (>= 512 tokens; weight-read: fewer tokens
# and bound = memory), counts, medians and worst errors must agree with
# calibrate's own --summary ("all" TP sizes) on every bundled file, to the
# 0.05 percentage points of its one-decimal rounding.
PYTHON=${PYTHON:-python3}
for pair in a100:codellama-34b:codellama-34b a100:llama-2-70b:llama-3.1-70b \
            h100:codellama-34b:codellama-34b h100:llama-2-70b:llama-3.1-70b; do
    gpu=${pair%%:*}; rest=${pair#*:}; data=${rest%%:*}; model=${rest#*:}
    case $gpu in a100) dev=a100-80g ;; *) dev=h100-sxm ;; esac
    prof=data/profiling/$gpu.$data.csv
    (cd "$srcdir" && "$AFDKIT" calibrate --profile "$prof" --model "$model" --device "$dev" \
        --no-fit --precision 6) > "$tmp/rows" &&
    (cd "$srcdir" && "$AFDKIT" calibrate --profile "$prof" --model "$model" --device "$dev" \
        --no-fit --summary --precision 6) > "$tmp/summary" &&
    "$PYTHON" "$srcdir/scripts/profiling-errors.py" "$tmp/rows" > "$tmp/script" || {
        echo "$prof: calibrate or scripts/profiling-errors.py failed"; status=1; continue; }
    # scripts/gemm-forms.py's preset form (docs/estimator.md, "Tile and wave
    # forms tried") is the estimator written again from the module shapes of
    # the file's own columns: it must give every row's estimate_ms to 1e-5.
    check=$("$PYTHON" "$srcdir/scripts/gemm-forms.py" --check "$tmp/rows" "$srcdir/$prof") || {
        echo "$prof: scripts/gemm-forms.py --check failed"; status=1; continue; }
    if ! echo "$check" | awk -v f="$prof" '{ v = $NF + 0 } END { if (NR != 1 || !(v < 1e-5)) { print f ": gemm-forms.py preset form off by " v; exit 1 } }'; then
        status=1
    fi
    # --monotone checks its pairwise bound against bisection itself (exit 1)
    "$PYTHON" "$srcdir/scripts/profiling-errors.py" --monotone "$tmp/rows" > /dev/null || {
        echo "$prof: scripts/profiling-errors.py --monotone failed"; status=1; }
    # the script's columns: module nL medL worstL >30 pow2 nW medW worstW >30
    if ! awk -v f="$prof" '
        FNR == NR { if ($1 !~ /^#/ && $2 == "all") { k = $1 "," $3; n[k] = $4; med[k] = $5; w[k] = $6 }; next }
        function cmp(key, cn, cm, cw,   d) {
            if (!(key in n) || n[key] != cn) { print f ": " key " n " n[key] " vs " cn; bad = 1; return }
            d = 100 * med[key] - cm; if (d < -0.05 || d > 0.05) { print f ": " key " median " med[key] " vs " cm "%"; bad = 1 }
            d = 100 * w[key] - cw;   if (d < -0.05 || d > 0.05) { print f ": " key " worst " w[key] " vs " cw "%"; bad = 1 }
        }
        { cmp($1 ",large", $2, $3, $4); cmp($1 ",weight_read", $7, $8, $9); rows++ }
        END { if (rows != 3) { print f ": " rows " modules from the script"; bad = 1 }; exit bad }
        ' "$tmp/summary" "$tmp/script"; then
        status=1
    fi
done
# The monotone bound on series worked by hand: qkv at TP 1 measured 1, 2,
# 1.2 and 3 ms at 512, 520, 536 and 600 tokens is inverted once, 2 ms at 520
# against 1.2 at 536: no non-decreasing estimate is within less than
# (2 - 1.2) / (2 + 1.2) = 25% of both.  Two weight-read rows at the same 64
# tokens, 0.05 and 0.07 ms, are (0.07 - 0.05) / 0.12 = 16.7% from any one
# estimate; the ridge row (bound = compute) does not count.
printf '%s\n' '# module	tp	tokens	measured_ms	estimate_ms	rel_err	bound' \
    'qkv	1	512	1	1	0	compute' 'qkv	1	520	2	1	0	compute' \
    'qkv	1	536	1.2	1	0	compute' 'qkv	1	600	3	1	0	compute' \
    'o_proj	2	64	0.05	1	0	memory' 'o_proj	2	64	0.07	1	0	memory' \
    'o_proj	2	32	0.5	1	0	compute' > "$tmp/inv"
mono=$("$PYTHON" "$srcdir/scripts/profiling-errors.py" --monotone "$tmp/inv")
want='qkv large 25.0 (tp 1: 2 ms at 520 tokens, 1.2 at 536) weight_read 0.0
o_proj large 0.0 weight_read 16.7 (tp 2: 0.07 ms at 64 tokens, 0.05 at 64)
mlp large 0.0 weight_read 0.0'
if [ "$mono" != "$want" ]; then
    printf 'profiling-errors.py --monotone on the hand-worked series:\n%s\nwanted:\n%s\n' "$mono" "$want"
    status=1
fi
[ $status -eq 0 ] && echo "ok: a100-80g and h100-sxm efficiencies and kernel terms re-derived from data/profiling/; scripts/profiling-errors.py agrees with calibrate --summary; scripts/gemm-forms.py's preset form is the estimator; the monotone bound agrees with the hand-worked series"
exit $status
