#!/bin/sh
# The documents' examples are the program's output: every "$ afdkit ..." line
# in a code block of docs/*.md (fenced, or indented by four spaces) is run and
# its output must equal the lines that follow it up to the next "$ " line or
# the end of the block; an example that shows no output must exit 0.  A
# line ending in a backslash continues on the next one.  Lines in code blocks
# that start with "afdkit" without "$ " are synopses with placeholders
# (DIR, FILE, B, ...), not examples.  Blank lines inside an example's output
# belong to it (tables of several blocks); trailing ones do not.
#
# The commands of one document run in order, in one scratch directory that
# links the source tree's top-level entries, so a file one example writes
# (--out est.hw) is there for the next and the sources stay untouched.
# An example preceded by the comment line "<!-- slow -->" is skipped when
# AFDKIT_SKIP_SLOW=1.
#
# Units (docs/cli.md, "Table output"): an example whose table has a column
# named as a time or a rate (ttft_*, tpot_*, wait_*, *_ms, lambda, goodput*,
# thr*, tau*, ...) must print its '## unit=' line before the first header.
# The check is tests/no-unit.awk, shared with tests/check_readme.sh.
set -u
srcdir=${srcdir:-.}
abs_srcdir=$(cd "$srcdir" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
count=0
skipped=0
for doc in "$abs_srcdir"/docs/*.md; do
    name=$(basename "$doc" .md)
    ex=$tmp/ex.$name
    work=$tmp/work.$name
    mkdir -p "$ex" "$work"
    for e in "$abs_srcdir"/*; do
        ln -s "$e" "$work/$(basename "$e")"
    done
    # command.N, expected.N and (for "<!-- slow -->") slow.N per example
    awk -v dir="$ex" '
        function finish() { if (cmd) close(out); cmd = 0; blanks = 0 }
        function lead(s) { match(s, /^ */); return RLENGTH }
        /^ *```/ { fenced = !fenced; finish(); next }
        {
            line = $0
            if (cont) {
                sub(/^[ \t]+/, " ", line)
                cont = sub(/\\$/, "", line)
                printf "%s", line > (dir "/command." n)
                if (!cont) { printf "\n" > (dir "/command." n); close(dir "/command." n) }
                next
            }
            if (line ~ /^ *\$ afdkit / && (fenced || lead(line) >= 4)) {
                finish()
                ind = lead(line)
                n++; cmd = 1; out = dir "/expected." n
                sub(/^ *\$ afdkit /, "", line)
                cont = sub(/\\$/, "", line)
                printf "%s", line > (dir "/command." n)
                if (!cont) { printf "\n" > (dir "/command." n); close(dir "/command." n) }
                printf "" > out
                if (slow) { printf "" > (dir "/slow." n); close(dir "/slow." n) }
                next
            }
            if (cmd && line ~ /^[ \t]*$/) { blanks++; next }
            if (cmd && (lead(line) < ind || line ~ /^ *(\$ |afdkit )/)) finish()
            if (cmd) {
                for (; blanks > 0; blanks--) print "" > out
                print substr(line, ind + 1) > out
                next
            }
            if (!fenced && lead(line) < 4) {
                if (line ~ /^<!-- slow -->/) slow = 1
                else if (line !~ /^[ \t]*$/) slow = 0
            }
        }
        ' "$doc"
    k=1
    while [ -e "$ex/command.$k" ]; do
        c=$ex/command.$k
        if [ -e "$ex/slow.$k" ] && [ "${AFDKIT_SKIP_SLOW:-0}" = 1 ]; then
            skipped=$((skipped + 1))
            k=$((k + 1))
            continue
        fi
        count=$((count + 1))
        # shellcheck disable=SC2046
        (cd "$work" && eval "set -- $(cat "$c")" && "$AFDKIT" "$@") >"$ex/actual.$k" 2>"$ex/stderr.$k"
        rc=$?
        if [ -s "$ex/expected.$k" ]; then
            if ! cmp -s "$ex/expected.$k" "$ex/actual.$k"; then
                echo "docs/$name.md example differs: afdkit $(cat "$c")"
                diff "$ex/expected.$k" "$ex/actual.$k"
                status=1
            fi
        elif [ "$rc" -ne 0 ]; then
            echo "docs/$name.md example failed (exit $rc): afdkit $(cat "$c")"
            cat "$ex/stderr.$k"
            status=1
        fi
        cols=$(awk -f "$abs_srcdir/tests/no-unit.awk" "$ex/actual.$k")
        if [ -n "$cols" ]; then
            echo "docs/$name.md example prints times or rates ($cols) without '## unit=': afdkit $(cat "$c")"
            status=1
        fi
        k=$((k + 1))
    done
done
[ "$count" -gt 0 ] || { echo "no examples found in docs/*.md"; exit 1; }
echo "$count examples of docs/*.md checked, $skipped skipped as slow"
exit $status
