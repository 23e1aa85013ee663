#!/bin/sh
# After "make install DESTDIR=...", the installed manual page renders with
# man: man -l on the installed afdkit.1 exits 0 without warnings and shows
# the page's NAME line and a command section (what "man afdkit" shows a user
# once the page is in MANPATH).  Skipped (77) without man or make.
set -u
build=${ABS_BUILDDIR:-.}
command -v man >/dev/null 2>&1 || { echo "SKIP: no man program"; exit 77; }
make=${MAKE:-make}
command -v "$make" >/dev/null 2>&1 || { echo "SKIP: no make"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# Only the pages are installed (install-man): the whole "make install" would
# relink the programs while other tests run them.  It is the same rule
# "make install" runs for the pages.
"$make" -C "$build" install-man DESTDIR="$tmp/root" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; echo "FAIL: make install-man DESTDIR=$tmp/root"; exit 1; }
page=$(find "$tmp/root" -name afdkit.1 -path '*/man1/*' | head -n 1)
[ -n "$page" ] || { echo "FAIL: no man1/afdkit.1 under DESTDIR"; exit 1; }
MANWIDTH=80 MAN_KEEP_FORMATTING= man -l "$page" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/err"; echo "FAIL: man -l $page exited with $rc"; exit 1; }
if [ -s "$tmp/err" ]; then
    cat "$tmp/err"
    echo "FAIL: man -l $page warns"
    exit 1
fi
text=$(sed 's/.\x08//g' "$tmp/out")
printf '%s\n' "$text" | grep -q '^NAME' || { echo "FAIL: no NAME section"; exit 1; }
printf '%s\n' "$text" | grep -q '^ *afdkit  *-  *provisioning' || { echo "FAIL: no 'afdkit - provisioning' name line"; exit 1; }
printf '%s\n' "$text" | grep -q '^   afdkit ratio$' || { echo "FAIL: no section 'afdkit ratio'"; exit 1; }
echo "ok   $(echo "$page" | sed "s|^$tmp/root||") renders with man -l ($(wc -l <"$tmp/out") lines)"
