# pareto.gp: goodput (or throughput) against cost, every configuration of
# afdkit pareto --all: the frontier (the configurations no other is both no
# dearer and no worse than) as a staircase of labelled points, collocated and
# disaggregated apart, and the dominated ones as grey circles.
#
#   gnuplot -e "in='TABLES/pareto.tsv'; out='DIR'" pareto.gp
#
# Reads in (afdkit pareto --all: device tp strategy arch devices
# price_per_hour VALUE VALUE_per_dollar frontier, VALUE goodput or throughput,
# with ## model=, ## lengths= and, for goodput, ## slo= lines); writes
# pareto.png and pareto.svg into out.  The title and the value axis come from
# the table.

here = ARG0[1:strlen(ARG0) - strlen('pareto.gp')]
load here.'style.gp'
if (!exists('in')) in = 'pareto.tsv'
if (!exists('out')) out = '.'

# The table's own words: the value column's name and the provenance lines.
meta(key) = system(sprintf("sed -n 's/^## %s=//p' '%s' | head -n 1", key, in))
value = system(sprintf("sed -n 's/^# device\t[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*\t\\([^\t]*\\)\t.*/\\1/p' '%s' | head -n 1", in))
if (value eq '') value = 'goodput'
model = meta('model')
lengths = meta('lengths')
plen = lengths[1:strstrt(lengths, ',') - 1]
glen = lengths[strstrt(lengths, ',') + 1:]
slo = meta('slo')

set datafile separator "\t"
set datafile commentschars "#"
front(f) = f == 1

# The frontier rows alone, in the table's order (cheapest first), so that
# the staircase joins them without breaks.
set table $F
plot in using 6:7 with table if (strcol(9) eq '1')
unset table

stats in using 6:7 nooutput name 'A'
set xrange [0:A_max_x * 1.2]
set yrange [0:A_max_y * 1.1]
set xlabel 'cost (dollars per hour: devices × price\_per\_hour)'
set ylabel sprintf('%s (requests/s)', value)
set key top left
# the title over the whole picture, the plot being narrowed by the list
set label 1 sprintf('%s, prompt %s and output %s tokens%s', model, plen, glen, \
                    slo eq '' ? '' : sprintf('; goodput: %s', slo)) \
    at screen 0.5, screen 0.965 center noenhanced
set tmargin at screen 0.92
label(d, tp, s) = sprintf('%s tp%d %s', d, tp, s)
# The frontier points carry their rank (cheapest first), a list right of the
# plot names them: names written beside points close in cost ran into each
# other.
set table $L
plot in using (label(strcol(1), $2, strcol(3))) with table if (strcol(9) eq '1')
unset table
nl = |$L|
set rmargin at screen 0.74
set key top left
do for [i = 1:nl] {
    set label 100 + i sprintf('%d  %s', i, $L[i]) at screen 0.76, \
        screen 0.88 - (i - 1) * (nl > 22 ? 0.78 / nl : 0.035) font ',8' noenhanced
}
k = 0
rank(f) = f ? sprintf('%d', k = k + 1) : ''

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/pareto.'.fmt
    k = 0
    # The staircase: from each frontier point the value stays until the next,
    # dearer one (what the cheapest configuration within a budget delivers).
    plot $F using 1:2 with steps lt 7 lw 1.5 title 'frontier', \
         in using 6:(front($9) ? NaN : $7) with points pt 6 ps 1.0 lc rgb afd_grey \
            title 'dominated', \
         in using 6:(front($9) && strcol(4) eq 'colloc' ? $7 : NaN) with points lt 1 ps 1.4 \
            title 'frontier, collocated', \
         in using 6:(front($9) && strcol(4) eq 'disagg' ? $7 : NaN) with points lt 2 ps 1.4 \
            title 'frontier, disaggregated', \
         in using 6:(front($9) ? $7 : NaN):(rank(front($9))) with labels \
            left offset 0.6, -0.5 font ',8' notitle
    unset output
}
