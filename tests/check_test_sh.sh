#!/bin/sh
# scripts/test.sh runs every step even when one fails, ends with one line per
# step (passed or failed, minutes, name) and exits non-zero if any failed;
# AFDKIT_QUICK=1 runs the first step only.  The script runs here on a copy
# of the tree whose setup.sh, fuzz.sh and make are stand-ins that log what
# they are asked and fail where told, so no step really builds anything.
set -u
srcdir=${srcdir:-.}
[ -f "$srcdir/scripts/test.sh" ] || { echo "scripts/test.sh not found: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-testsh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }

mkdir -p "$tmp/tree/scripts" "$tmp/bin"
cp "$srcdir/scripts/test.sh" "$tmp/tree/scripts/test.sh"
cat >"$tmp/tree/scripts/setup.sh" <<'EOF'
#!/bin/sh
echo "setup $*" >>"$LOG"
EOF
cat >"$tmp/tree/scripts/fuzz.sh" <<'EOF'
#!/bin/sh
mkdir -p "$(dirname "$0")/../build-fuzz"
echo "fuzz $*" >>"$LOG"
EOF
# make -C DIR [-jN] TARGET ...: fails when "DIR TARGET" is in $FAIL_MAKE
cat >"$tmp/bin/make" <<'EOF'
#!/bin/sh
dir=.; target=all
while [ $# -gt 0 ]; do
    case $1 in
    -C) dir=$2; shift ;;
    -j*|*=*) ;;
    *) target=$1 ;;
    esac
    shift
done
echo "make ${dir##*/} $target" >>"$LOG"
case " $FAIL_MAKE " in *" ${dir##*/}:$target "*) echo "make: stand-in failure"; exit 2 ;; esac
exit 0
EOF
chmod +x "$tmp/tree/scripts/setup.sh" "$tmp/tree/scripts/fuzz.sh" "$tmp/bin/make"
mkdir -p "$tmp/tree/build"

# run NAME FAIL_MAKE [VAR=VALUE...]: scripts/test.sh's exit status in $rc,
# its stderr in $tmp/NAME.err and the stand-ins' log in $tmp/NAME.log
run() {
    name=$1 fm=$2; shift 2
    : >"$tmp/$name.log"
    env PATH="$tmp/bin:$PATH" LOG="$tmp/$name.log" FAIL_MAKE="$fm" AFDKIT_BUILD_DIR="$tmp/tree/build" \
        AFDKIT_QUICK= FUZZ_SECONDS=3 "$@" sh "$tmp/tree/scripts/test.sh" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
}
# summary NAME: the step lines at the end, "passed|failed M.M min STEP"
summary() { grep -E '^(passed|failed) +[0-9]+\.[0-9] min  ' "$tmp/$1.err"; }

# the first step fails: every other step still runs, and the run fails
run first "build:check"
[ "$rc" -ne 0 ] || fail "a failing make check: exit status 0"
grep -qx 'make build-fuzz check' "$tmp/first.log" || fail "the sanitizer suite did not run after make check failed"
grep -qx 'fuzz 3' "$tmp/first.log" || fail "fuzzing (FUZZ_SECONDS=3) did not run after make check failed"
grep -qx 'make build check-valgrind' "$tmp/first.log" || fail "valgrind did not run after make check failed"
grep -qx 'make build distcheck-quick' "$tmp/first.log" || fail "distcheck did not run after make check failed"
[ "$(summary first | wc -l)" -eq 5 ] || fail "not one summary line for each of the 5 steps"
summary first | head -n 1 | grep -q '^failed .* min  make check$' || fail "make check is not reported failed first"
[ "$(summary first | grep -c '^passed ')" -eq 4 ] || fail "the other 4 steps are not reported passed"
grep -q 'stand-in failure' "$tmp/first.err" || fail "the failing step's output is not shown"
[ "$(tail -n 5 "$tmp/first.err")" = "$(summary first)" ] || fail "the summary is not the end of the output"

# two later steps fail: both reported, the run fails
run two "build:check-valgrind build:distcheck-quick"
[ "$rc" -ne 0 ] || fail "failing valgrind and distcheck steps: exit status 0"
[ "$(summary two | grep -c '^failed ')" -eq 2 ] || fail "not 2 steps reported failed"
summary two | grep -q '^failed .*valgrind' || fail "the valgrind step is not reported failed"
summary two | grep -q '^failed .*distcheck' || fail "the distcheck step is not reported failed"

# all pass: exit 0, 5 steps passed
run pass ""
[ "$rc" -eq 0 ] || fail "all steps passed: exit status $rc"
[ "$(summary pass | grep -c '^passed ')" -eq 5 ] || fail "all passing: not 5 steps reported passed"

# AFDKIT_QUICK=1: make check only
run quick "" AFDKIT_QUICK=1
[ "$rc" -eq 0 ] || fail "quick run: exit status $rc"
[ "$(summary quick | wc -l)" -eq 1 ] || fail "quick run: not exactly one step reported"
summary quick | grep -q '^passed .* min  make check$' || fail "quick run: make check not reported passed"
grep -q 'fuzz\|distcheck\|valgrind' "$tmp/quick.log" && fail "quick run ran more than make check"
run quickfail "build:check" AFDKIT_QUICK=1
[ "$rc" -ne 0 ] || fail "quick run with make check failing: exit status 0"

if [ "$status" -ne 0 ]; then
    for f in "$tmp"/*.err; do echo "---- $f"; cat "$f"; done
fi
exit "$status"
