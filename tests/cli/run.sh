#!/bin/sh
# Black-box tests of the afdkit program, driven by .cases files.
#
# A .cases file is a list of cases; each line is one directive:
#   case NAME                 start a case
#   write FILE TEXT           printf '%b' TEXT > $TMP/FILE  (\r \n \t \\ \0NNN escapes)
#   run ARGS...               run "$AFDKIT" ARGS (expanded by the shell:
#                             $NBDATA and $TMP are available)
#   sh COMMAND...             run a shell command line instead (use "$AFDKIT")
#   exit N                    exit status
#   stdout-empty | stderr-empty
#   stderr TEXT               stderr is exactly this one line (after expansion)
#   stderr~ REGEX             some stderr line matches the extended regex
#   stderr!~ REGEX            no stderr line matches
#                             (stderr-empty and stderr TEXT look past the notes,
#                             "afdkit: CMD: note: ..." lines, which only stderr~
#                             and stderr!~ see)
#   stdout~ REGEX             some stdout line matches the extended regex
#   stdout!~ REGEX            no stdout line matches
#   header COL...             the first '# ' header line has exactly these columns
#   rows N                    number of data rows (lines not starting with '#', not blank)
#   value ROW COL EXPR TOL    data row ROW (1-based), column COL, equals the awk
#                             expression EXPR within |x - e| <= TOL * max(|e|, 1e-300);
#                             quote EXPR if it has parentheses: 'sqrt(2)'
#   same FILE                 stdout is byte-identical to $TMP/FILE
#   save FILE                 copy stdout to $TMP/FILE
#   slow                      skip the rest of this case when AFDKIT_SKIP_SLOW=1
#                             (make check-valgrind; scripts/test.sh's sanitizer
#                             and distcheck steps, after make check ran it)
# Blank lines and lines starting with '#' are ignored.
set -u

cases_file=$1
: "${AFDKIT:?AFDKIT must point to the afdkit program}"
NBDATA=${NBDATA:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
export NBDATA TMP AFDKIT

out=$TMP/.stdout
err=$TMP/.stderr
name=""
failures=0
cases=0
case_failed=0
skipping=0

fail() {
    printf 'FAIL %s: %s\n' "$name" "$*"
    case_failed=1
}

finish_case() {
    if [ -n "$name" ]; then
        cases=$((cases + 1))
        if [ "$case_failed" -eq 0 ]; then
            printf 'ok   %s\n' "$name"
        else
            failures=$((failures + 1))
            printf -- '---- stdout:\n'; head -c 2000 "$out" 2>/dev/null
            printf -- '---- stderr:\n'; head -c 2000 "$err" 2>/dev/null
            printf -- '----\n'
        fi
    fi
    case_failed=0
}

# value ROW COL EXPR TOL
check_value() {
    awk -v row="$1" -v col="$2" -v tol="$4" -v label="$name" '
        function abs(x) { return x < 0 ? -x : x }
        /^## / { next }
        /^# / && hcol == 0 {
            sub(/^# /, "")
            n = split($0, h, "\t")
            for (i = 1; i <= n; i++) if (h[i] == col) hcol = i
            if (hcol == 0) { print "no column " col; bad = 1; exit }
            next
        }
        /^#/ || /^$/ { next }
        { seen++ }
        seen == row {
            split($0, f, "\t")
            x = f[hcol]
            e = '"$3"'
            scale = abs(e) > 1e-300 ? abs(e) : 1e-300
            if (x == "nan" || x == "" || abs(x - e) > tol * scale) {
                printf "row %d column %s = %s, expected %.17g (tol %g)\n", row, col, x, e, tol
                bad = 1
            }
            found = 1
            exit
        }
        END { if (!bad && !found) { print "no data row " row; bad = 1 } exit bad }
    ' "$out"
}

while IFS= read -r line || [ -n "$line" ]; do
    case $line in
    '' | '#'*) continue ;;
    esac
    directive=${line%% *}
    rest=${line#"$directive"}
    rest=${rest# }
    if [ "$skipping" -eq 1 ] && [ "$directive" != case ]; then
        continue
    fi
    case $directive in
    case)
        finish_case
        name=$rest
        skipping=0
        ;;
    write)
        file=${rest%% *}
        text=${rest#"$file"}
        text=${text# }
        printf '%b' "$text" >"$TMP/$file"
        ;;
    run)
        if ! (eval "set -- $rest") 2>/dev/null; then
            fail "cannot parse: run $rest"
            continue
        fi
        eval "set -- $rest"
        "$AFDKIT" "$@" >"$out" 2>"$err" </dev/null
        rc=$?
        ;;
    sh)
        (eval "$rest") >"$out" 2>"$err" </dev/null
        rc=$?
        ;;
    exit)
        [ "$rc" -eq "$rest" ] || fail "exit status $rc, expected $rest"
        ;;
    stdout-empty)
        [ ! -s "$out" ] || fail "stdout is not empty"
        ;;
    stderr-empty)
        grep -Ev '^afdkit: [a-z0-9-]+: note: ' "$err" >"$err.w"
        [ ! -s "$err.w" ] || fail "stderr is not empty"
        ;;
    stderr)
        grep -Ev '^afdkit: [a-z0-9-]+: note: ' "$err" >"$err.w"
        expected=$(eval "printf '%s' \"$rest\"")
        actual=$(cat "$err.w")
        nlines=$(wc -l <"$err.w")
        [ "$actual" = "$expected" ] || fail "stderr is '$actual', expected '$expected'"
        [ "$nlines" -eq 1 ] || fail "stderr has $nlines lines, expected one"
        ;;
    'stderr~')
        grep -Eq -- "$rest" "$err" || fail "no stderr line matches /$rest/"
        ;;
    'stderr!~')
        ! grep -Eq -- "$rest" "$err" || fail "a stderr line matches /$rest/"
        ;;
    'stdout~')
        grep -Eq -- "$rest" "$out" || fail "no stdout line matches /$rest/"
        ;;
    'stdout!~')
        ! grep -Eq -- "$rest" "$out" || fail "a stdout line matches /$rest/"
        ;;
    header)
        expected=$(printf '%s' "$rest" | tr ' ' '\t')
        actual=$(grep -m1 '^# ' "$out" | sed 's/^# //')
        [ "$actual" = "$expected" ] || fail "header is '$actual', expected '$expected'"
        ;;
    rows)
        n=$(grep -cv '^#\|^$' "$out")
        [ "$n" -eq "$rest" ] || fail "$n data rows, expected $rest"
        ;;
    value)
        if ! (eval "set -- $rest") 2>/dev/null; then
            fail "cannot parse: value $rest"
            continue
        fi
        eval "set -- $rest"
        msg=$(check_value "$1" "$2" "$3" "$4") || fail "$msg"
        ;;
    same)
        cmp -s "$out" "$TMP/$rest" || fail "stdout differs from $rest"
        ;;
    save)
        cp "$out" "$TMP/$rest"
        ;;
    slow)
        [ "${AFDKIT_SKIP_SLOW:-0}" = 1 ] && { skipping=1; name="$name (skipped: slow)"; }
        ;;
    *)
        fail "unknown directive '$directive'"
        ;;
    esac
done <"$cases_file"
finish_case

printf '%d cases, %d failed\n' "$cases" "$failures"
[ "$failures" -eq 0 ]
