#!/bin/sh
# The generated bash completion (completion/afdkit, made by make from the
# program's help) completes commands, subcommands, options, choices, presets
# and files.  Expected words come from the program itself (--help, help
# --presets) and from files made here.
: "${AFDKIT:?AFDKIT must point to the afdkit program}"
comp=${ABS_BUILDDIR:-.}/completion/afdkit
[ -f "$comp" ] || { echo "FAIL: $comp not built"; exit 1; }
command -v bash >/dev/null 2>&1 || { echo "SKIP: no bash"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-comp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
: >"$tmp/part-1.tsv"
: >"$tmp/part-2.tsv"
mkdir "$tmp/partdir"

# complete WORDS...: the completions of the last word, sorted, on one line
cat >"$tmp/run.bash" <<'EOB'
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
_afdkit
((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' '
EOB
complete() { bash "$tmp/run.bash" "$comp" afdkit "$@"; }

status=0
expect() { # expect DESCRIPTION EXPECTED WORDS...
    what=$1 want=$2
    shift 2
    got=$(complete "$@")
    if [ "$got" = "$want" ]; then
        echo "ok   $what"
    else
        echo "FAIL $what: 'afdkit $*' completes to '$got', expected '$want'"
        status=1
    fi
}

expect "commands" "sweep " sw
expect "subcommands of a group" "barrier " mc b
expect "help COMMAND" "merge " help mer
expect "options" "--shard " sweep --sh
expect "options of a subcommand" "--per-slot --precision --prompt-col --provenance " mc barrier --p
expect "output options on every table command" "--json " kappa --j
expect "choices spelled out in the usage line" "decode " estimate --phase d
expect "a preset of --hw" "paper-910c " sweep --hw pap
models=$("$AFDKIT" help --presets | awk -F '\t' '$1 == "model" && $2 ~ /^llama/ { print $2 }' | LC_ALL=C sort | tr '\n' ' ')
[ -n "$models" ] || { echo "FAIL: no llama model preset listed"; status=1; }
expect "model presets after the short option" "$models" estimate -m llama
expect "a file argument" "$tmp/part-1.tsv $tmp/part-2.tsv $tmp/partdir " sim --trace "$tmp/part"
expect "the files of merge" "$tmp/part-1.tsv $tmp/part-2.tsv $tmp/partdir " merge "$tmp/part"
expect "a directory argument" "$tmp/partdir " plot --out "$tmp/part"
expect "the figures of plot" "fig4a fig4b " plot fig4
expect "nothing for a number" "" sweep -B 2
# each command's help lists -h, --help: the completion offers it once
expect "--help once" "--help " merge --h
expect "--help once after a subcommand" "--help " mc barrier --he

# Every option that a command's --help shows completes.
for cmd in sweep "mc mdc" merge; do
    # shellcheck disable=SC2086
    for opt in $("$AFDKIT" $cmd --help | awk '/^  (-[A-Za-z], |    )--[a-z]/ { for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z]/) { print $i; break } }'); do
        # shellcheck disable=SC2086
        got=$(complete $cmd "$opt")
        case " $got " in
        *" $opt "*) ;;
        *) echo "FAIL $cmd: $opt does not complete (got '$got')"; status=1 ;;
        esac
    done
done
exit $status
