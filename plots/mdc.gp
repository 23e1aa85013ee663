# mdc.gp: the exact mean wait of the M/D/c queue against its classical
# approximations (Cosmetatos, Allen-Cunneen, Kingman) over the utilization
# rho, for c = 1, 4, 16, 64 servers.
#
#   gnuplot -e "in='TABLES/mdc.tsv'; out='DIR'" mdc.gp
#
# Reads in (afdkit mdc rows, one block per c, service time D = 1); writes
# mdc.png and mdc.svg into out.  Left: the exact wait Wq/D; right: the
# relative error (approximation - exact) / exact of each approximation.

here = ARG0[1:strlen(ARG0) - strlen('mdc.gp')]
load here.'style.gp'
if (!exists('in')) in = 'mdc.tsv'
if (!exists('out')) out = '.'

# The blocks, in the order make-tables.sh writes them.
nc = 4
cval(i) = i == 0 ? 1 : i == 1 ? 4 : i == 2 ? 16 : 64

set xrange [0:1]
set xtics 0, 0.2
set mxtics 4
set xlabel 'utilization ρ = λD/c'

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/mdc.'.fmt
    set multiplot layout 1, 2 title 'M/D/c: exact mean wait and its approximations' font ',12'

    # ---- exact mean wait, in units of the service time
    set title 'exact mean wait in queue'
    set logscale y
    set format y '10^{%L}'
    set yrange [1e-6:100]
    set mytics 10
    set ylabel 'W_q / D'
    set key top left
    plot for [i = 0:nc - 1] in index i using 2:3 with linespoints lt (i + 1) ps 0.8 \
        title sprintf('c = %d', cval(i))

    # ---- relative errors
    set title 'relative error of the approximations'
    unset logscale y
    set format y '%g%%'
    set yrange [-50:50]
    set ytics -50, 10
    set mytics 2
    set ylabel '(approximation - exact) / exact'
    set key bottom right
    set arrow 1 from graph 0, first 0 to graph 1, first 0 nohead lc rgb afd_grey lw 1 back
    plot for [i = 0:nc - 1] in index i using 2:(100 * $9) with linespoints lt (i + 1) ps 0.7, \
         for [i = 0:nc - 1] in index i using 2:(100 * $10) with lines lt (i + 1) dt afd_dt_theory, \
         for [i = 0:nc - 1] in index i using 2:(100 * $11) with lines lt (i + 1) dt afd_dt_marker lw 2.5, \
         NaN with linespoints lt 7 ps 0.7 title 'Cosmetatos', \
         NaN with lines lt 7 dt afd_dt_theory title 'Allen-Cunneen', \
         NaN with lines lt 7 dt afd_dt_marker lw 2.5 title 'Kingman'
    unset arrow 1
    unset multiplot
    unset title
    set output
}
