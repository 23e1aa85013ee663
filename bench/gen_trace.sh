#!/bin/sh
# Write a synthetic Azure-style trace of N rows (default 10^7) to FILE:
# CRLF records, timestamp text column, exponential prompt and decode lengths.
# Usage: bench/gen_trace.sh FILE [N]
set -eu
out=$1
n=${2:-10000000}
awk -v n="$n" 'BEGIN {
    srand(20231116)
    printf "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
    for (i = 0; i < n; i++)
        printf "2023-11-16 18:%02d:%02d.%07d,%d,%d\r\n", (i / 60000) % 60, (i / 1000) % 60,
               i % 10000000, int(-log(rand()) * 1000), 1 + int(-log(rand()) * 200)
}' >"$out"
