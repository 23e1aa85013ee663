#!/bin/sh
# The grid of docs/routing.md: the least-load routers' closed-form mean TTFT
# beside the simulated one, on disagg's prefill pool of n instances of batch
# 1 at 1 ms a prompt token, prompts of 1000 tokens (constant prefills) or
# geometric of mean 1000 (exponential prefills), one output token, at load
# rho = lambda x 1 s / n.
#
#   scripts/routing-grid.sh [CELL...]
#
# A CELL is ROUTER,PREFILLS,N,RHO (least-requests,exponential,4,0.8); none:
# the 40 cells of the table (least-requests on n = 2, 4, 8, power-of-two on
# n = 4, 8, both prefill laws, rho = 0.5, 0.7, 0.8, 0.9).  $AFDKIT is the
# program (default build/afdkit); $REQUESTS (default 1000000) requests are
# measured after $WARMUP (default 10000), with seed $SEED (default 5).
# Prints a tab-separated table: router prefills n rho ttft_mean_cf ttft_mean
# ttft_mean_se gap, the times in ms and gap = closed / simulated - 1.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
AFDKIT=${AFDKIT:-$top/build/afdkit}
requests=${REQUESTS:-1000000}
warmup=${WARMUP:-10000}
seed=${SEED:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-routing.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# prefill 1 ms a prompt token, a 10 ms decode step (one output token)
printf '%s\n' 'unit = ms' 'alpha_a = 1' 'beta_a = 0' 'alpha_f = 1' 'beta_f = 0' 'alpha_c = 0' \
    'beta_c = 0' 'prefill_a = 0' 'prefill_b = 1' 'prefill_c = 0' 'decode_beta = 10' \
    'decode_gamma = 0' 'decode_alpha = 0' >"$tmp/router.hw"

if [ $# -eq 0 ]; then
    for cell in least-requests,2 least-requests,4 least-requests,8 power-of-two,4 power-of-two,8; do
        for law in exponential constant; do
            for rho in 0.5 0.7 0.8 0.9; do
                set -- "$@" "${cell%,*},$law,${cell#*,},$rho"
            done
        done
    done
fi

printf '# router\tprefills\tn\trho\tttft_mean_cf\tttft_mean\tttft_mean_se\tgap\n'
for cell in "$@"; do
    IFS=, read -r router law n rho <<EOF
$cell
EOF
    case $law in
    exponential) workload="--geometric --mu-p 1000 --mu-d 1" ;;
    constant) workload="--lengths 1000,1" ;;
    *) echo "routing-grid.sh: unknown prefill law '$law' in '$cell'" >&2; exit 2 ;;
    esac
    # shellcheck disable=SC2086
    "$AFDKIT" serve --arch disagg --prefill "$n" --decode 1 --prefill-bmax 1 --decode-bmax 1 \
        --router "$router" --hw "$tmp/router.hw" \
        --lambda "$(awk -v n="$n" -v r="$rho" 'BEGIN { print n * r }')/s" $workload --closed \
        --seed "$seed" --requests "$requests" --warmup "$warmup" >"$tmp/out" || exit 1
    awk -F '\t' -v cell="$router	$law	$n	$rho" '
        /^# / { sub(/^# /, ""); for (i = 1; i <= NF; i++) c[$i] = i; next }
        /^#/ { next }
        { cf = $(c["ttft_mean_cf"]); m = $(c["ttft_mean"])
          printf "%s\t%s\t%s\t%s\t%.5f\n", cell, cf, m, $(c["ttft_mean_se"]), cf / m - 1 }' "$tmp/out"
done
