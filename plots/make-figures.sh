#!/bin/sh
# make-figures.sh TABLES OUTDIR [NAME...]
#
# Draws the figures from the tables make-tables.sh wrote into TABLES: each
# NAME (default: all of fig3 fig4a fig4b table1 fig5 mdc map gantt regime pareto) runs
# NAME.gp with gnuplot, which writes PNG and SVG files into OUTDIR.
# gnuplot is $GNUPLOT if set, else the first gnuplot in PATH; without it the
# script says so in one line and exits 0.
set -eu

me=make-figures.sh
if [ $# -lt 2 ]; then
    echo "usage: $me TABLES OUTDIR [NAME...]" >&2
    exit 2
fi
tables=$1
outdir=$2
shift 2
plots=$(cd "$(dirname "$0")" && pwd)

all="fig3 fig4a fig4b table1 fig5 mdc map gantt regime pareto"
for name in "$@"; do
    case " $all " in
    *" $name "*) ;;
    *) echo "$me: unknown figure '$name' (one of: $all)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || set -- $all

gnuplot=${GNUPLOT:-gnuplot}
if ! command -v "$gnuplot" >/dev/null 2>&1; then
    echo "$me: gnuplot not found ('$gnuplot'): figures skipped"
    exit 0
fi

case $tables$outdir in
*\'*) echo "$me: directory names with a single quote are not supported" >&2; exit 2 ;;
esac

# The tables each figure reads, and the value of its "in" variable (a table,
# or the common stem of its tables).
inputs() {
    case $1 in
    fig3) echo "fig3-sim.tsv fig3-simall.tsv fig3-sweep.tsv fig3-ratio.tsv" ;;
    fig4a | fig4b) echo "$1-sim.tsv $1-sweep.tsv $1-ratio.tsv" ;;
    table1) echo "table1-mc.tsv table1-clt.tsv" ;;
    fig5)
        if [ -f "$tables/fig5-trace.tsv" ]; then echo fig5-trace.tsv
        else echo "fig5-code.tsv fig5-conv.tsv"; fi
        ;;
    *) echo "$1.tsv" ;;
    esac
}
stem() {
    case $1 in
    mdc | map | gantt | regime | pareto) echo "$tables/$1.tsv" ;;
    *) echo "$tables/$1" ;;
    esac
}

# Each figure is drawn into a temporary directory inside OUTDIR and its files
# moved into OUTDIR only when gnuplot succeeds, so a failure (a full disk)
# leaves neither truncated pictures nor the temporary directory behind.
mkdir -p "$outdir"
work=$(mktemp -d "$outdir/.figures.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP
case $work in
*\'*) echo "$me: directory names with a single quote are not supported" >&2; exit 2 ;;
esac
for name in "$@"; do
    for t in $(inputs "$name"); do
        if [ ! -f "$tables/$t" ]; then
            echo "$me: $tables/$t: no such table (make-tables.sh writes it)" >&2
            exit 1
        fi
    done
    "$gnuplot" -e "in='$(stem "$name")'; out='$work'" "$plots/$name.gp"
    # gnuplot exits 0 even when it could not write a picture whole: check
    # that each one ends as its format requires before moving it.
    for f in "$work"/*; do
        [ -e "$f" ] || continue
        case $f in
        *.png) tail -c 8 "$f" | grep -q IEND ;;
        *.svg) tail -c 16 "$f" | grep -q '</svg>' ;;
        esac || {
            echo "$me: $outdir/$(basename "$f"): gnuplot could not write it whole (disk full?)" >&2
            exit 1
        }
    done
    for f in "$work"/*; do
        [ -e "$f" ] && mv -f "$f" "$outdir/"
    done
done
