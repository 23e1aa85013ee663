#!/bin/sh
# setting.sh [--part all|workload|hw|B|unit|serving] TABLE
#
# The setting a table was computed in, for a figure's title and axis labels,
# read from the table's own provenance: its "## command=" line (the afdkit
# command, its words single-quoted where needed) and its "## unit=" line.
#   workload  "geometric μ_P = 100, μ_D = 500", "trace mine.csv (where
#             model=a)" (the file's name without its directory) or
#             "θ = 599, ν = 509"
#   hw        the preset or the latency file's name ("paper-910c",
#             "mine.hw"), "+ overrides" when coefficients were given apart
#   B         the -B value
#             or "prompt 1000 and output 100 tokens" (--lengths)
#   unit      the time unit of the latency model ("time units" without one)
#   serving   "llama-3.1-70b on 8 instances of 4 × h100-sxm-round.device"
#             (regime's --model, --instances, --tp, --device)
#   all       "B = 256, geometric μ_P = 100, μ_D = 500, paper-910c" (the
#             default)
# Names taken from the command are escaped for gnuplot's enhanced text
# (a backslash before _ ^ { } @ & ~).  The command is split into words by
# awk, never evaluated by the shell.
set -eu

part=all
if [ "${1:-}" = --part ]; then
    part=${2:-}
    shift 2 || { echo "setting.sh: --part needs a value" >&2; exit 2; }
fi
case $part in
all | workload | hw | B | unit | serving) ;;
*) echo "setting.sh: unknown part '$part'" >&2; exit 2 ;;
esac
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
    echo "usage: setting.sh [--part all|workload|hw|B|unit|serving] TABLE (readable)" >&2
    exit 2
fi

awk -v part="$part" '
    function esc(s) { gsub(/[_^{}@&~]/, "\\\\&", s); return s }
    function base(s) { sub(/.*\//, "", s); return s }
    # split the command line into w[1..nw]: single quotes group, a backslash
    # outside them takes the next character as it is
    function words(line,    i, c, q, cur, have) {
        nw = 0; q = 0; cur = ""; have = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (q) {
                if (c == "\047") q = 0; else cur = cur c
            } else if (c == "\047") {
                q = 1; have = 1
            } else if (c == "\\" && i < length(line)) {
                i++; cur = cur substr(line, i, 1); have = 1
            } else if (c == " ") {
                if (have || cur != "") w[++nw] = cur
                cur = ""; have = 0
            } else {
                cur = cur c
            }
        }
        if (have || cur != "") w[++nw] = cur
    }
    /^## command=/ && !cmd { cmd = 1; words(substr($0, 12)) }
    /^## unit=/ && unit == "" { unit = substr($0, 9) }
    END {
        trace = ""; where = ""; geo = 0; hw = ""; over = 0; B = ""; len = ""
        model = ""; dev = ""; tp = "1"; inst = ""
        for (i = 1; i <= nw; i++) {
            o = w[i]
            if (o == "--trace") trace = w[++i]
            else if (o == "--where") where = where (where == "" ? "" : ", ") w[++i]
            else if (o == "--geometric") geo = 1
            else if (o == "--mu-p") mp = w[++i]
            else if (o == "--mu-d") md = w[++i]
            else if (o == "--theta") th = w[++i]
            else if (o == "--nu") nu = w[++i]
            else if (o == "--hw") hw = w[++i]
            else if (o ~ /^--(alpha|beta)-[afc]$/) { over = 1; i++ }
            else if (o == "-B" || o == "--batch") B = w[++i]
            else if (o == "--lengths") len = w[++i]
            else if (o == "--model" || o == "-m") model = w[++i]
            else if (o == "--device" || o == "-d") dev = w[++i]
            else if (o == "--tp") tp = w[++i]
            else if (o == "--instances" || o == "-n") inst = w[++i]
        }
        if (trace != "")
            wl = "trace " esc(base(trace)) (where == "" ? "" : " (where " esc(where) ")")
        else if (geo)
            wl = "geometric μ_P = " mp ", μ_D = " md
        else if (len != "")
            wl = "prompt " substr(len, 1, index(len, ",") - 1) " and output " \
                 substr(len, index(len, ",") + 1) " tokens"
        else
            wl = "θ = " th ", ν = " nu
        h = hw == "" ? "coefficients given" : esc(base(hw))
        if (over && hw != "") h = h " + overrides"
        if (part == "workload") print wl
        else if (part == "hw") print h
        else if (part == "B") print B
        else if (part == "unit") print (unit == "" ? "time units" : unit)
        else if (part == "serving")
            print esc(base(model)) " on " inst " instances of " tp " × " esc(base(dev))
        else print "B = " B ", " wl ", " h
    }
' "$1"
