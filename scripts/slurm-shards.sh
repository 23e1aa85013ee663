#!/bin/sh
# One task of a Slurm job array: run an afdkit command on its share of a list.
#
#   sbatch --array=1-N scripts/slurm-shards.sh OUTDIR afdkit COMMAND ARGS...
#
# Task K of N (K = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1, so
# --array=0-3 and --array=1-4 both make 4 parts) runs
#   afdkit COMMAND ARGS... --shard K/N > OUTDIR/part-K
# (through a temporary file, so a failed or cut-off task leaves no part behind).
# When all tasks are done, join the parts:
#   afdkit merge OUTDIR/part-* > whole.tsv
# e.g. in a job that depends on the array:
#   jid=$(sbatch --parsable --array=1-16 scripts/slurm-shards.sh out afdkit sim ...)
#   sbatch --dependency=afterok:$jid --wrap 'afdkit merge out/part-* > sim.tsv'
# The parts are reproducible on any machine (the random streams are addressed
# by the item, not by the task), so a failed task can simply be run again.
#SBATCH --job-name=afdkit-shard
#SBATCH --output=afdkit-shard-%A-%a.log
set -eu
if [ $# -lt 3 ]; then
    echo "usage: sbatch --array=1-N $0 OUTDIR AFDKIT COMMAND [ARGS...]" >&2
    exit 2
fi
outdir=$1
shift
: "${SLURM_ARRAY_TASK_ID:?not a Slurm array task (sbatch --array=1-N)}"
min=${SLURM_ARRAY_TASK_MIN:-1}
if [ -n "${SLURM_ARRAY_TASK_COUNT:-}" ]; then
    n=$SLURM_ARRAY_TASK_COUNT
else
    : "${SLURM_ARRAY_TASK_MAX:?SLURM_ARRAY_TASK_MAX or SLURM_ARRAY_TASK_COUNT is needed}"
    n=$((SLURM_ARRAY_TASK_MAX - min + 1))
fi
k=$((SLURM_ARRAY_TASK_ID - min + 1))
mkdir -p "$outdir"
tmp="$outdir/.part-$k.$$"
trap 'rm -f "$tmp"' EXIT
"$@" --shard "$k/$n" >"$tmp"
# a part run again keeps the mode of the one it replaces
if [ -f "$outdir/part-$k" ]; then
    m=$(stat -c %a "$outdir/part-$k" 2>/dev/null || stat -f %Lp "$outdir/part-$k") &&
        chmod "$m" "$tmp"
fi
mv "$tmp" "$outdir/part-$k"
