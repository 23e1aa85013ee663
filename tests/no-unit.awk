# The unit check shared by tests/check_docs.sh and tests/check_readme.sh
# (docs/cli.md, "Table output"): prints the time or rate columns (ttft_*,
# tpot_*, wait_*, *_ms, lambda, goodput*, thr*, tau*, ...) of a table's first
# header when no '## unit=' line comes before it; nothing otherwise.
# Usage: awk -f tests/no-unit.awk FILE
/^## unit=/ { unit = 1 }
/^# / {
    for (i = 2; i <= NF; i++)
        if ($i ~ /(^|_)(ms|s|us)$|^(ttft|tpot|wait|sojourn|tau|thr|goodput|latency|e2e|wq|service_mean|start$|end$|lambda$|throughput|span)/)
            cols = cols " " $i
    if (!unit && cols != "") print substr(cols, 2)
    exit
}
