#!/bin/sh
# The README's examples are the program's output: every "$ build/afdkit ..."
# line in a code block is run from the source directory and its output must
# equal the lines that follow it in the block, and a table with a column
# named as a time or a rate states its unit (as tests/check_docs.sh checks).
set -u
srcdir=${srcdir:-.}
readme=$srcdir/README.md
[ -f "$readme" ] || { echo "README.md not found: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
awk -v dir="$tmp" '
    /^```/ { inblock = !inblock; if (!inblock && cmd) close(out); cmd = 0; next }
    inblock && /^\$ build\/afdkit / {
        n++; cmd = 1; out = dir "/expected." n
        sub(/^\$ build\/afdkit /, ""); print > (dir "/command." n); close(dir "/command." n)
        printf "" > out; next
    }
    inblock && cmd { print > out }
' "$readme"
status=0
count=0
for c in "$tmp"/command.*; do
    [ -e "$c" ] || break
    n=${c##*.}
    count=$((count + 1))
    # shellcheck disable=SC2046
    (cd "$srcdir" && eval "set -- $(cat "$c")" && "$AFDKIT" "$@") >"$tmp/actual.$n" 2>/dev/null
    if ! cmp -s "$tmp/expected.$n" "$tmp/actual.$n"; then
        echo "README example differs: afdkit $(cat "$c")"
        diff "$tmp/expected.$n" "$tmp/actual.$n"
        status=1
    fi
    cols=$(awk -f "$srcdir/tests/no-unit.awk" "$tmp/actual.$n")
    if [ -n "$cols" ]; then
        echo "README example prints times or rates ($cols) without '## unit=': afdkit $(cat "$c")"
        status=1
    fi
done
[ "$count" -gt 0 ] || { echo "no examples found in README.md"; exit 1; }
echo "$count README examples checked"

# The Commands table lists every command of 'afdkit --help', each row with a
# link to its doc; every link of the README to a file in the tree names a
# file that exists and, after '#', a heading of that file (GitHub's anchor:
# lowercase, punctuation dropped, spaces as '-').
slug() {
    sed -e 's/^#* *//' | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}
for cmd in $("$AFDKIT" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'); do
    [ "$cmd" = help ] && continue
    row=$(grep -E "^\| \`afdkit $cmd[ \`]" "$readme" | head -n 1)
    if [ -z "$row" ]; then
        echo "README: no row for 'afdkit $cmd' in the Commands table"
        status=1
    elif ! printf '%s\n' "$row" | grep -qE '\]\((docs/[^)]*|#[^)]*)\) \|$'; then
        echo "README: the row of 'afdkit $cmd' links no doc"
        status=1
    fi
done
links=$(grep -oE '\]\((docs/[^)]*|#[^)]*)\)' "$readme" | sed -e 's/^](//' -e 's/)$//' | sort -u)
for l in $links; do
    file=${l%%#*}
    anchor=
    case $l in *'#'*) anchor=${l#*#} ;; esac
    target=$readme
    if [ -n "$file" ]; then
        target=$srcdir/$file
        # docs/plan.md comes with the plan command
        [ "$file" = docs/plan.md ] && ! "$AFDKIT" help plan >/dev/null 2>&1 && continue
        [ -e "$target" ] || { echo "README links a missing file: $l"; status=1; continue; }
    fi
    if [ -n "$anchor" ] && ! grep -E '^#+ ' "$target" | slug | grep -qxF "$anchor"; then
        echo "README links a missing heading: $l"
        status=1
    fi
done

# The Python examples: every ```python block is a doctest session, run from
# the source directory against the package in python/ and this build's
# libraries.
awk '/^```python/ { inpy = 1; next } /^```/ { inpy = 0 } inpy { print }' "$readme" \
    >"$tmp/python.txt"
if [ -s "$tmp/python.txt" ]; then
    py=${PYTHON:-python3}
    so=${ABS_BUILDDIR:-.}/libanalytic/.libs/libanalytic.so.0
    if ! "$py" -c 'import numpy, cffi' 2>/dev/null; then
        echo "Python examples skipped: $py lacks numpy or cffi"
    elif [ ! -f "$so" ] || nm -D "$so" 2>/dev/null | grep -q ' U __[a-z]*san_'; then
        echo "Python examples skipped: no uninstrumented shared libanalytic in the build"
    elif (cd "$srcdir" && PYTHONPATH=$(pwd)/python PYTHONDONTWRITEBYTECODE=1 \
              AFDKIT_BUILD_DIR=${ABS_BUILDDIR:-.} "$py" -m doctest "$tmp/python.txt"); then
        echo "README Python examples checked"
    else
        echo "README Python example differs"
        status=1
    fi
fi
exit $status
