# regime.gp: TaiChi's SLO regime map: each pair of a TTFT SLO and a TPOT SLO
# coloured by the mode with the largest goodput (aggregation, disaggregation
# or the hybrid; none when no mode sustains any rate), labelled with that
# goodput in requests/s to three significant digits (0.0421, not 0).
#
#   gnuplot -e "in='TABLES/regime.tsv'; out='DIR'" regime.gp
#
# Reads in (afdkit regime: ttft_slo tpot_slo goodput_agg goodput_disagg
# goodput_hybrid best ...); writes regime.png and regime.svg into out.

here = ARG0[1:strlen(ARG0) - strlen('regime.gp')]
load here.'style.gp'
if (!exists('in')) in = 'regime.tsv'
if (!exists('out')) out = '.'

set datafile separator "\t"
set datafile commentschars "#"
code(s) = s eq 'agg' ? 1 : s eq 'disagg' ? 2 : s eq 'hybrid' ? 3 : 0
best(a, d, h, s) = s eq 'agg' ? a : s eq 'disagg' ? d : s eq 'hybrid' ? h : 0
stats in using 1 nooutput name 'X'
stats in using 2 nooutput name 'Y'
set logscale xy
set xrange [X_min / 1.25:X_max * 1.25]
set yrange [Y_min / 1.15:Y_max * 1.15]
# the tics are the SLOs asked for (xtic/ytic of the first plot below), no others
set xtics () nomirror
set ytics () nomirror
set xlabel 'TTFT SLO (ms)'
set ylabel 'TPOT SLO (ms)'
set key outside right top
set title sprintf("Winning mode per SLO pair (label: its goodput, requests/s)\n%s, %s", \
                 afd_setting('serving', in), afd_setting('workload', in))
set style fill solid 1.0

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/regime.'.fmt
    plot in using 1:2:xtic(1):ytic(2) with points ps 0 lc rgb 'white' notitle, \
         in using 1:(code(strcol(6)) == 1 ? $2 : 1/0) with points pt 5 ps 4 lc rgb '#4c72b0' title 'aggregation', \
         in using 1:(code(strcol(6)) == 2 ? $2 : 1/0) with points pt 5 ps 4 lc rgb '#dd8452' title 'disaggregation', \
         in using 1:(code(strcol(6)) == 3 ? $2 : 1/0) with points pt 5 ps 4 lc rgb '#55a868' title 'hybrid', \
         in using 1:(code(strcol(6)) == 0 ? $2 : 1/0) with points pt 5 ps 4 lc rgb '#bbbbbb' title 'none', \
         in using 1:2:(sprintf('%.3g', best($3, $4, $5, strcol(6)))) with labels font ',8' notitle
    unset output
}
