# fig4.gp: the body of Figure 4 (a: batch size, b: prompt/decode lengths),
# loaded by fig4a.gp and fig4b.gp after they set
#   name     'fig4a' or 'fig4b' (file names: in.'-sim.tsv', out.'/'.name.'.png')
#   nconf    number of configurations (blocks of the tables)
#   conf(i)  the legend label of block i (0-based)
#   title_   the plot title
# Tables: in.'-sim.tsv' (afdkit sim at every integer r), in.'-sweep.tsv'
# (afdkit sweep, fine r grid), in.'-ratio.tsv' (afdkit ratio), one block
# per configuration in the same order.

sim = in.'-sim.tsv'
sweep = in.'-sweep.tsv'
ratio = in.'-ratio.tsv'

# r*_mf of each configuration and the mean-field throughput there.
array rmf[nconf]
array tmf[nconf]
do for [i = 0:nconf - 1] {
    stats ratio index i using (strcol(1) eq 'mf' ? $2 : NaN) nooutput
    rmf[i + 1] = STATS_max
    stats ratio index i using (strcol(1) eq 'mf' ? $3 : NaN) nooutput
    tmf[i + 1] = STATS_max
}

set xrange [0:33]
set xtics 0, 4, 32
set mxtics 4
set xlabel 'A/F ratio r (Attention instances per FFN instance)'
set ylabel sprintf('throughput per instance (tokens / %s)', afd_unit1(afd_setting('unit', sim)))
set key top right
set title title_ offset 0, 0.3

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/'.name.'.'.fmt
    # Each marker rises from the axis to its mean-field peak, so that it
    # reads with its own curve and stays clear of the legend.
    unset arrow
    do for [i = 0:nconf - 1] {
        set arrow from rmf[i + 1], graph 0 to rmf[i + 1], tmf[i + 1] nohead lt (i + 1) lw 1.5 dt afd_dt_marker back
    }
    plot for [i = 0:nconf - 1] sim index i using 1:2 with points lt (i + 1) ps 0.9 \
             title sprintf('%s  (r*_{mf} = %.2f)', conf(i), rmf[i + 1]), \
         for [i = 0:nconf - 1] sweep index i using 1:3 with lines lt (i + 1) dt afd_dt_theory lw 1.5, \
         for [i = 0:nconf - 1] sweep index i using 1:5 with lines lt (i + 1) lw 1, \
         NaN with points lt 7 ps 0.9 pt 6 title 'simulated (afdkit sim)', \
         NaN with lines lt 7 dt afd_dt_theory lw 1.5 title 'mean-field theory, Thr_{mf}', \
         NaN with lines lt 7 lw 1 title 'barrier-aware theory, Thr_G', \
         NaN with lines lt 7 lw 1.5 dt afd_dt_marker title 'r*_{mf} (Theorem 4.4)'
    set output
}
