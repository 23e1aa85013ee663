#!/bin/sh
# The small grid of docs/agreement.md: scripts/validate.sh --quick runs each
# family's closed form beside its simulation and holds every cell to the bound
# of docs/agreement.bounds (the table docs/agreement.md states).  Then the
# check itself must be able to fail: with one family's bounds set to 0, the
# same grid is out of bound (no closed form meets its simulation exactly).
# Skipped as slow (AFDKIT_SKIP_SLOW=1: scripts/test.sh's sanitizer and
# distcheck steps, after make check ran it): its grid runs commands and
# options that the case files also run there, and its bounds are numbers that
# make check has held them to.
set -u
[ "${AFDKIT_SKIP_SLOW:-0}" = 1 ] && { echo "SKIP: slow (AFDKIT_SKIP_SLOW=1)"; exit 77; }
srcdir=${srcdir:-.}
: "${AFDKIT:?AFDKIT must point to the afdkit program}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-agree.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0

if ! sh "$srcdir/scripts/validate.sh" --quick "$tmp/agreement.md"; then
    echo "FAIL: a cell of the small grid is out of its bound (above)"; status=1
fi
# Every quantity of the bounds table has a cell on the small grid.
awk -F '\t' '!/^#/ && NF >= 3 { print $1 " | " $2 " |" }' "$srcdir/docs/agreement.bounds" |
while IFS= read -r q; do
    grep -qF "| $q" "$tmp/agreement.md" || echo "FAIL: no cell for $q"
done >"$tmp/missing"
if [ -s "$tmp/missing" ]; then cat "$tmp/missing"; status=1; fi

# docs/agreement.md states the bounds of the table (made with it, not edited).
awk -F '\t' 'FNR == NR { if (!/^#/ && NF >= 3) b[$1 " | " $2] = sprintf("%.0f%%", 100 * $3); next }
    /^\| [a-z]+ \| [a-z0-9_]+ \| [0-9]+% \|/ { split($0, f, / \| /); k = substr(f[1], 3) " | " f[2]
        seen[k] = 1; if (b[k] != f[3]) print "FAIL: docs/agreement.md states " f[3] " for " k ", the table " b[k] }
    END { for (k in b) if (!(k in seen)) print "FAIL: docs/agreement.md has no bound for " k }' \
    "$srcdir/docs/agreement.bounds" "$srcdir/docs/agreement.md" >"$tmp/doc"
if [ -s "$tmp/doc" ]; then cat "$tmp/doc"; status=1; fi

awk -F '\t' 'BEGIN { OFS = "\t" } !/^#/ && $1 == "pipeline" { $3 = 0 } { print }' \
    "$srcdir/docs/agreement.bounds" >"$tmp/zero.bounds"
if AFDKIT_AGREEMENT_BOUNDS="$tmp/zero.bounds" sh "$srcdir/scripts/validate.sh" --quick - 2>"$tmp/err"; then
    echo "FAIL: bounds of 0 for pipeline pass"; status=1
elif ! grep -q '^validate: pipeline\.' "$tmp/err"; then
    echo "FAIL: bounds of 0 for pipeline: no cell named"; cat "$tmp/err"; status=1
fi
[ "$status" -eq 0 ] && echo "ok   the small agreement grid is within docs/agreement.bounds"
exit $status
