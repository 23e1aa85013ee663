#!/bin/sh
# make-tables.sh [--quick] [--workload WORDS] [--hw WORDS] [-B N] [SERVING] AFDKIT OUTDIR [NAME...]
#
# Writes the tables behind the figures into OUTDIR, each made by AFDKIT (the
# afdkit program to use) with --provenance, so that every table starts with
# the command line that produced it.  NAME selects figures (default: all):
#   fig3 fig4a fig4b table1 fig5 mdc map gantt regime pareto
# --quick: 2,000 simulated requests per Attention instance instead of 10,000,
# 5,000 Monte Carlo trials instead of 50,000, and coarser grids for the map
# and the M/D/c curves (for tests: the same tables, noisier and shorter).
# The paper's setting is the default: the geometric workload with mu_P = 100
# and mu_D = 500, the paper-910c hardware, B = 256.  --workload and --hw
# replace the first two with afdkit's own options, given as one string of
# single-quoted shell words ("'--trace' '/abs/mine.csv'"; file names absolute,
# as the commands run elsewhere); -B replaces B.  --workload applies to fig3,
# fig4a, table1, fig5 (a --trace only), gantt and regime, --hw to fig3 fig4a
# fig4b map gantt, -B to fig3 fig4b table1 gantt.  SERVING, each one value
# (a file name absolute) replacing the figure's own: --model --device --tp
# --ttft-slo --tpot-slo --lengths for regime and pareto, --instances for
# regime, --devices for pareto.
#
# The commands run in the directory above this script's (the source tree, or
# the installed data directory), so that trace paths in the provenance lines
# read notebooks-data/... wherever the tables are made.
set -eu

me=make-tables.sh
usage() {
    echo "usage: $me [--quick] [--workload WORDS] [--hw WORDS] [-B N] [SERVING] AFDKIT OUTDIR [NAME...]" >&2
    exit 2
}

quick=0
workload=
hwopts=
batch=
sv_model= sv_device= sv_tp= sv_instances= sv_devices= sv_ttft= sv_tpot= sv_lengths=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --model | --device | --tp | --instances | --devices | --ttft-slo | --tpot-slo | --lengths)
        [ $# -ge 2 ] && [ -n "$2" ] || usage
        case $1 in
        --model) sv_model=$2 ;;
        --device) sv_device=$2 ;;
        --tp) sv_tp=$2 ;;
        --instances) sv_instances=$2 ;;
        --devices) sv_devices=$2 ;;
        --ttft-slo) sv_ttft=$2 ;;
        --tpot-slo) sv_tpot=$2 ;;
        --lengths) sv_lengths=$2 ;;
        esac
        shift 2
        ;;
    --workload | --hw | -B)
        [ $# -ge 2 ] || usage
        case $1 in
        --workload) workload=$2 ;;
        --hw) hwopts=$2 ;;
        -B)
            case $2 in
            '' | *[!0-9]*) echo "$me: -B: not a positive integer: '$2'" >&2; exit 2 ;;
            esac
            batch=$2
            ;;
        esac
        shift 2
        ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || usage
afdkit=$1
outdir=$2
shift 2

all="fig3 fig4a fig4b table1 fig5 mdc map gantt regime pareto"
for name in "$@"; do
    case " $all " in
    *" $name "*) ;;
    *) echo "$me: unknown figure '$name' (one of: $all)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || set -- $all
# takes OPTION VALUE FIGURES: every named figure must be one of FIGURES.
takes() {
    [ -n "$2" ] || return 0
    for name in $names; do
        case " $3 " in
        *" $name "*) ;;
        *) echo "$me: $name takes no $1 (those that do: $3)" >&2; exit 2 ;;
        esac
    done
}
names="$*"
takes --workload "$workload" "fig3 fig4a table1 fig5 gantt regime"
takes --hw "$hwopts" "fig3 fig4a fig4b map gantt"
takes -B "$batch" "fig3 fig4b table1 gantt"
takes --model "$sv_model" "regime pareto"
takes --device "$sv_device" "regime pareto"
takes --tp "$sv_tp" "regime pareto"
takes --ttft-slo "$sv_ttft" "regime pareto"
takes --tpot-slo "$sv_tpot" "regime pareto"
takes --lengths "$sv_lengths" "regime pareto"
takes --instances "$sv_instances" regime
takes --devices "$sv_devices" pareto

# Absolute paths before leaving the caller's directory.
case $afdkit in
*/*) [ -x "$afdkit" ] && afdkit=$(cd "$(dirname "$afdkit")" && pwd)/$(basename "$afdkit") ;;
*) afdkit=$(command -v "$afdkit") || true ;;
esac
if [ -z "$afdkit" ] || [ ! -x "$afdkit" ]; then
    echo "$me: not an executable afdkit: '$afdkit'" >&2
    exit 2
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
cd "$(dirname "$0")/.."

if [ "$quick" = 1 ]; then
    requests=2000
    trials=5000
else
    requests=10000
    trials=50000
fi
geo="--geometric --mu-p 100 --mu-d 500"
hw="--hw paper-910c"
paper_r=1,2,4,8,16,24,32
# The setting of the figures that take one, as words for eval: the workload,
# the hardware and B.
wl=${workload:-$geo}
hwq=${hwopts:-$hw}
B=${batch:-256}

# Six significant digits: a figure draws no finer, and the last digits of a
# simulation or a root search can differ between machines (libm, GSL and
# OpenBLAS builds), which would leave a regenerated checkout changed.
digits="--precision 6"

# A table is written to FILE.tmp and renamed when complete, so that a failed
# command leaves no partial table behind.
# On failure (a full disk, a failing command) the temporary tables are removed.
trap 'rc=$?; [ "$rc" -eq 0 ] || rm -f "$outdir"/*.tmp; exit "$rc"' EXIT
trap 'exit 1' INT TERM HUP
# The renamed table keeps the mode of the one it replaces (as afdkit's own
# --out does), so that regenerating the tables leaves a checkout's files as
# they were.
start() { : >"$outdir/$1.tmp"; }
finish() {
    if [ -f "$outdir/$1" ]; then
        m=$(stat -c %a "$outdir/$1" 2>/dev/null || stat -f %Lp "$outdir/$1") &&
            chmod "$m" "$outdir/$1.tmp"
    fi
    mv "$outdir/$1.tmp" "$outdir/$1"
}

# add FILE ARGS...: afdkit ARGS --provenance as one more block of FILE (two
# blank lines before every block but the first: gnuplot's index 0, 1, ...).
add() {
    f=$outdir/$1.tmp
    shift
    if [ -s "$f" ]; then printf '\n\n' >>"$f"; fi
    "$afdkit" "$@" $digits --provenance -q >>"$f"
}

# table FILE ARGS...: a table of one command.
table() {
    start "$1"
    add "$@"
    finish "$1"
}

# --------------------------------------------------------------------------
# Figure 3: throughput, TPOT and idle ratios against r (paper setting); the
# paper's seven ratios, and every integer ratio as well.
fig3() {
    eval "table fig3-sim.tsv sim $wl $hwq -B $B --r $paper_r --requests $requests --seed 1 \
        --start stationary"
    eval "table fig3-simall.tsv sim $wl $hwq -B $B --r 1:32 --requests $requests --seed 1 \
        --start stationary"
    eval "table fig3-sweep.tsv sweep $wl $hwq -B $B --r 1:32:0.25"
    eval "table fig3-ratio.tsv ratio $wl $hwq -B $B"
}

# Figure 4: one block per configuration "B MU_P MU_D" (MU_P -: the workload
# of --workload, by default the paper's), in legend order.
fig4() {
    name=$1
    shift
    for k in sim sweep ratio; do start "$name-$k.tsv"; done
    for cfg in "$@"; do
        set -- $cfg
        if [ "$2" = - ]; then w=$wl; else w="--geometric --mu-p $2 --mu-d $3"; fi
        eval "add \"\$name-sim.tsv\" sim $w $hwq -B $1 --r 1:32 --requests $requests \
            --seed 1 --start stationary"
        eval "add \"\$name-sweep.tsv\" sweep $w $hwq -B $1 --r 1:32:0.25"
        eval "add \"\$name-ratio.tsv\" ratio $w $hwq -B $1"
    done
    for k in sim sweep ratio; do finish "$name-$k.tsv"; done
}
fig4a() { fig4 fig4a "128 - -" "256 - -" "512 - -"; }
fig4b() { fig4 fig4b "$B 100 500" "$B 200 500" "$B 100 1000" "$B 50 250"; }

# Table 1: barrier overhead, Monte Carlo against the CLT.  The CLT curve is
# sweep's barrier column, (nu/theta) kappa_r / sqrt(B): mc barrier's
# overhead_clt on a finer grid (it does not depend on the hardware).
table1() {
    eval "table table1-mc.tsv mc barrier $wl -B $B --r 2,4,8,12,16,24,32 --trials $trials \
        --seed 2024"
    eval "table table1-clt.tsv sweep $wl $hw -B $B --r 1:32:0.25"
}

# Figure 5: decode-length distributions of the two bundled traces, or of the
# trace of --workload (one table, 20 bins per decade).  A tables directory
# holds one of the two settings: the other's tables are removed.
fig5() {
    if [ -n "$workload" ]; then
        rm -f "$outdir/fig5-code.tsv" "$outdir/fig5-conv.tsv"
        eval "table fig5-trace.tsv hist $workload --bins log:20"
    else
        rm -f "$outdir/fig5-trace.tsv"
        table fig5-code.tsv hist --trace notebooks-data/AzureLLMInferenceTrace_code.csv --bins 5
        table fig5-conv.tsv hist --trace notebooks-data/AzureLLMInferenceTrace_conv.csv \
            --bins 10
    fi
}

# M/D/c: exact wait and its approximations against rho, one block per c.
# mdc takes the arrival rate, so each rho is one command (service time 1,
# lambda = rho c); a block keeps the provenance of its first command and a
# "## loop=" line says how the others differ.
mdc() {
    rhos="0.05 0.1 0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5 0.55 0.6 0.65 0.7 0.75 0.8 0.85"
    rhos="$rhos 0.9 0.92 0.94 0.95 0.96 0.97 0.98"
    if [ "$quick" = 1 ]; then rhos="0.05 0.3 0.6 0.9 0.98"; fi
    f=$outdir/mdc.tsv.tmp
    start mdc.tsv
    for c in 1 4 16 64; do
        if [ -s "$f" ]; then printf '\n\n' >>"$f"; fi
        echo "## loop=one row per rho in $(echo $rhos | tr ' ' ','):" \
            "the command below with --lambda rho*c" >>"$f"
        prov=--provenance
        for rho in $rhos; do
            lambda=$(awk -v r="$rho" -v c="$c" 'BEGIN { printf "%.10g", r * c }')
            # (a command substitution, so that set -e sees afdkit fail)
            rows=$("$afdkit" mdc --lambda "$lambda" --service 1 --c "$c" $digits $prov -q)
            if [ -n "$prov" ]; then
                echo "$rows"
            else
                echo "$rows" | grep -v '^#'
            fi >>"$f"
            prov=
        done
    done
    finish mdc.tsv
}

# Provisioning map: r*_mf and r*_G over theta and B with nu = theta (the
# spread of a geometric-like load), paper hardware.  One ratio command per
# point; the rows of one B form one scan line of the grid (a blank line
# after each, as gnuplot's pm3d expects).
map() {
    if [ "$quick" = 1 ]; then step=4; else step=1; fi
    thetas=$(awk -v s=$step 'BEGIN { for (i = 0; i <= 16; i += s) printf "%d ", 10 ^ (2 + i / 8) + 0.5 }')
    bs=$(awk -v s=$step 'BEGIN { for (j = 0; j <= 12; j += s) printf "%d ", 16 * 2 ^ (j / 2) + 0.5 }')
    f=$outdir/map.tsv.tmp
    start map.tsv
    echo "## loop=theta in $(echo $thetas | tr ' ' ','), B in $(echo $bs | tr ' ' ','):" \
        "the command below with --theta theta --nu theta -B B" >>"$f"
    prov=--provenance
    for b in $bs; do
        for t in $thetas; do
            # ratio's warnings (optimum at the largest feasible r, r*_mf < 1)
            # are expected somewhere on a grid: keep them out of the way.
            rows=$(eval "\"\$afdkit\" ratio --theta $t --nu $t -B $b $hwq --r-max 512 $digits $prov -q" \
                2>/dev/null)
            echo "$rows" |
                awk -v t="$t" -v B="$b" -v first="${prov:+1}" '
                    /^## / { if (first) print; next }
                    /^# / { next }
                    $1 == "mf" { rmf = $2; tmf = $3 }
                    $1 == "g" { rg = $2; tg = $3 }
                    END {
                        if (first) print "# theta\tnu\tB\tr_mf\tr_g\tthr_mf\tthr_g"
                        print t "\t" t "\t" B "\t" rmf "\t" rg "\t" tmf "\t" tg
                    }' >>"$f"
            prov=
        done
        echo >>"$f"
    done
    finish map.tsv
}

# Figure 2: the first steps of the pipeline at r = 8, per stage and worker.
# The gantt file has no provenance lines of its own: it gets those of the
# sim table printed by the same command.
gantt() {
    (
        cd "$outdir"
        eval "\"\$afdkit\" sim $wl $hwq -B $B --r 8 --requests 1000 --seed 1 \
            --start stationary --gantt gantt.tsv --gantt-steps 12 --provenance -q" \
            >gantt-sim.tsv.tmp
        {
            grep '^## ' gantt-sim.tsv.tmp | grep -v '^## unit='
            cat gantt.tsv
        } >gantt.tsv.tmp
        rm -f gantt-sim.tsv.tmp
    )
    finish gantt.tsv
}

# TaiChi's SLO regime map: the winning mode (aggregation, disaggregation,
# the hybrid) per pair of TTFT and TPOT SLOs, closed forms, for
# llama-3.1-70b on 8 instances of 4 h100-sxm at the round efficiencies of
# docs/taichi.md (notebooks-data/devices/h100-sxm-round.device) and the
# conversation trace.  --quick: a 3 x 3 grid.  The serving options and the
# workload (or --lengths) replace these.
regime() {
    if [ "$quick" = 1 ]; then
        ttft=250ms,500ms,2s
        tpot=25ms,50ms,100ms
    else
        ttft=150ms,200ms,250ms,350ms,500ms,700ms,1s,1.4s,2s
        tpot=20ms,25ms,30ms,35ms,40ms,50ms,60ms,75ms,100ms
    fi
    if [ -n "$workload" ]; then
        rwl=$workload
    elif [ -n "$sv_lengths" ]; then
        rwl="--lengths '$sv_lengths'"
    else
        rwl="--trace notebooks-data/AzureLLMInferenceTrace_conv.csv"
    fi
    start regime.tsv
    eval "\"\$afdkit\" regime --instances \"\${sv_instances:-8}\" \
        --model \"\${sv_model:-llama-3.1-70b}\" \
        --device \"\${sv_device:-notebooks-data/devices/h100-sxm-round.device}\" \
        --tp \"\${sv_tp:-4}\" $rwl --ttft-slo \"\${sv_ttft:-\$ttft}\" \
        --tpot-slo \"\${sv_tpot:-\$tpot}\" $digits --provenance -q" >>"$outdir/regime.tsv.tmp"
    finish regime.tsv
}

# The frontier of goodput against cost (afdkit pareto --all: the dominated
# configurations too): llama-3.1-8b on H100 and A100 devices, up to 8 of
# them at tensor-parallel sizes 1, 2 and 4 (--quick: up to 4, sizes 1 and 2).
# The serving options replace these.
pareto() {
    if [ "$quick" = 1 ]; then
        devices=4
        tps=1,2
    else
        devices=8
        tps=1,2,4
    fi
    table pareto.tsv pareto --model "${sv_model:-llama-3.1-8b}" \
        --device "${sv_device:-h100-sxm,a100-80g}" --devices "${sv_devices:-$devices}" \
        --tp "${sv_tp:-$tps}" --lengths "${sv_lengths:-1000,100}" \
        --ttft-slo "${sv_ttft:-500ms}" --tpot-slo "${sv_tpot:-50ms}" --all
}

for name in "$@"; do
    $name
done
