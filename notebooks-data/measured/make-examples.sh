#!/bin/sh
# Writes the two example files of this directory: synthetic batch times, NOT
# measurements.  Each time is a known law times 1 + e, e uniform in
# [-0.02, 0.02) from a 31-bit linear congruential generator (the one
# tests/cli/hw.cases uses).  afdkit calibrate does not give the coefficients
# back to a percent: ordinary least squares weighs the long batches, so the
# small terms move (prefill_a 1.47 for 3, decode_gamma 0.0127 for 0.011, as
# docs/cli.md prints); the fit meets the prefill batches of 100 ms and more
# within 2.2% and misses the shortest by 14% (max_rel_err).  The laws:
#   prefill batch of `batch` prompts of `prompt` tokens (ms):
#       3 + 0.0227 S1 + 4.5e-7 S2,   S1 = batch prompt, S2 = batch prompt^2
#   decode step of `batch` sequences of `context` tokens (ms):
#       5.6 + 0.011 batch + 4.4e-5 K,   K = batch context
# (round numbers near afdkit estimate's laws for llama-3.1-8b on h100-sxm).
set -eu
cd "$(dirname "$0")"
awk 'BEGIN {
    s = 2024
    print "batch,prompt,t"
    split("1 2 4 8", B, " "); split("256 1024 4096", P, " ")
    for (i = 1; i <= 4; i++) for (j = 1; j <= 3; j++) {
        s = (1103515245 * s + 12345) % 2147483648
        s1 = B[i] * P[j]; s2 = B[i] * P[j] * P[j]
        printf "%d,%d,%.4f\n", B[i], P[j], (3 + 0.0227 * s1 + 4.5e-7 * s2) * (1 + 0.04 * s / 2147483648 - 0.02)
    }
}' > prefill.csv
awk 'BEGIN {
    s = 7
    print "batch,context,t"
    split("1 8 32 64", B, " "); split("512 1024 4096", C, " ")
    for (i = 1; i <= 4; i++) for (j = 1; j <= 3; j++) {
        s = (1103515245 * s + 12345) % 2147483648
        k = B[i] * C[j]
        printf "%d,%d,%.4f\n", B[i], C[j], (5.6 + 0.011 * B[i] + 4.4e-5 * k) * (1 + 0.04 * s / 2147483648 - 0.02)
    }
}' > decode.csv
