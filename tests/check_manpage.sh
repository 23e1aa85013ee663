#!/bin/sh
# The generated manual page afdkit.1 (made by make from the program's help)
# formats without warnings and documents every command and every option.
: "${AFDKIT:?AFDKIT must point to the afdkit program}"
page=${ABS_BUILDDIR:-.}/afdkit.1
[ -f "$page" ] || { echo "FAIL: $page not built"; exit 1; }
status=0
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        echo "FAIL: groff warns: $warnings"
        status=1
    fi
    text=$(groff -man -Tutf8 "$page" 2>/dev/null | sed 's/.\x08//g')
else
    echo "groff not found: the page's text is checked in its source"
    text=$(sed 's/\\-/-/g; s/\\f[BIR]//g' "$page")
fi
# Commands and subcommands, from the program's --help.
paths=$("$AFDKIT" --help | awk '/^Commands:/ { f = 1; next } f && /^  [a-z]/ { if ($1 != "help") print $1; next } f { exit }')
n=0
for c in $paths; do
    subs=$("$AFDKIT" "$c" --help | awk '/^Subcommands:/ { f = 1; next } f && /^  [a-z]/ { print $1; next } f { exit }')
    for s in ${subs:-""}; do
        p=$(echo "afdkit $c $s" | sed 's/ *$//')
        printf '%s\n' "$text" | grep -q "^   $p\$" || { echo "FAIL: no section '$p'"; status=1; }
        # shellcheck disable=SC2086
        for opt in $("$AFDKIT" $c $s --help | awk '/^  (-[A-Za-z], |    )--[a-z]/ { for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z]/) { print $i; break } }'); do
            printf '%s\n' "$text" | grep -q -e "$opt" || { echo "FAIL: $p: $opt missing"; status=1; }
            n=$((n + 1))
        done
    done
done
printf '%s\n' "$text" | grep -q "paper-910c" || { echo "FAIL: the presets are missing"; status=1; }
[ $status -eq 0 ] && echo "ok   afdkit.1: every command and its $n options"
exit $status
