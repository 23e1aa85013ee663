# fig5.gp: Figure 5 of the paper (Appendix A.8) on the bundled traces: the
# distribution of decode lengths D (GeneratedTokens) of the Azure LLM
# inference traces of 2023, code and conversation, on a log scale, beside
# the geometric law of the same mean.
#
#   gnuplot -e "in='TABLES/fig5'; out='DIR'" fig5.gp
#
# Reads in.'-code.tsv' and in.'-conv.tsv' (afdkit hist: value count pmf
# geometric_pmf lo hi); writes fig5.png and fig5.svg into out.  A geometric
# law is a straight line on this scale.  When in.'-trace.tsv' is there
# instead (afdkit plot fig5 --trace FILE: the user's trace, 20 bins per
# decade) it draws that one histogram on log-log axes.

here = ARG0[1:strlen(ARG0) - strlen('fig5.gp')]
load here.'style.gp'
if (!exists('in')) in = 'fig5'
if (!exists('out')) out = '.'

code = in.'-code.tsv'
conv = in.'-conv.tsv'
own = in.'-trace.tsv'

if (system(sprintf("test -f '%s' && echo 1 || echo 0", own)) eq '1') {
    stats own using 2 nooutput
    n_own = STATS_sum
    # mean of the geometric law from the first bin, as below
    stats own every ::0::0 using ($6 - $5 + 1) nooutput
    w_own = STATS_max
    stats own every ::0::0 using 4 nooutput
    mean_own = 1 / (1 - (1 - w_own * STATS_max) ** (1.0 / w_own))
    pos(y) = y > 0 ? y : NaN
    set logscale xy
    set format y '10^{%L}'
    set format x '10^{%L}'
    set xlabel 'decode length D (output tokens)'
    set ylabel 'probability per token'
    set key top right
    set title sprintf('Decode lengths: %s, %d requests', afd_setting('workload', own), n_own)
    do for [fmt in 'png svg'] {
        eval afd_terminal(fmt)
        set output out.'/fig5.'.fmt
        plot own using 1:(pos($3)) with points lt 1 pt 7 ps 0.7 title 'empirical, 20 bins per decade', \
             own using 1:(pos($4)) with lines lt 2 dt afd_dt_theory title sprintf('geometric, mean %.1f', mean_own)
        set output
    }
    exit
}

# Number of requests, requests beyond the plotted range, bin width, and the
# sample mean for the legends: the first bin holds 1..W, where the geometric
# law of mean 1/p has mass 1 - (1-p)^W = W geometric_pmf.
xmax = 1000
stats code using 2 nooutput
n_code = STATS_sum
stats code using ($5 > xmax ? $2 : 0) nooutput
beyond_code = STATS_sum
stats conv using 2 nooutput
n_conv = STATS_sum
stats conv using ($5 > xmax ? $2 : 0) nooutput
beyond_conv = STATS_sum
stats code every ::0::0 using ($6 - $5 + 1) nooutput
w_code = STATS_max
stats code every ::0::0 using 4 nooutput
mean_code = 1 / (1 - (1 - w_code * STATS_max) ** (1.0 / w_code))
stats conv every ::0::0 using ($6 - $5 + 1) nooutput
w_conv = STATS_max
stats conv every ::0::0 using 4 nooutput
mean_conv = 1 / (1 - (1 - w_conv * STATS_max) ** (1.0 / w_conv))
panel(name, n, beyond) = beyond > 0 \
    ? sprintf('%s: %d requests (%d beyond D = %d)', name, n, beyond, xmax) \
    : sprintf('%s: %d requests', name, n)

pos(y) = y > 0 ? y : NaN

set logscale y
set format y '10^{%L}'
set yrange [1e-6:0.3]
set ytics nomirror
set mytics 10
set xlabel 'decode length D (output tokens)'
set key top right

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/fig5.'.fmt
    set multiplot layout 1, 2 title 'Decode lengths of the Azure LLM inference traces (2023)' font ',12'

    set title panel('code', n_code, beyond_code)
    set ylabel 'probability per token'
    set xrange [0:xmax]
    set xtics 0, 200
    set mxtics 4
    plot code using 1:(pos($3)) with points lt 1 pt 7 ps 0.7 title sprintf('empirical, bins of %d tokens', w_code), \
         code using 1:(pos($4)) with lines lt 2 dt afd_dt_theory title sprintf('geometric, mean %.1f', mean_code)

    set title panel('conversation', n_conv, beyond_conv)
    unset ylabel
    plot conv using 1:(pos($3)) with points lt 1 pt 7 ps 0.7 title sprintf('empirical, bins of %d tokens', w_conv), \
         conv using 1:(pos($4)) with lines lt 2 dt afd_dt_theory title sprintf('geometric, mean %.1f', mean_conv)

    unset multiplot
    unset title
    set output
}
