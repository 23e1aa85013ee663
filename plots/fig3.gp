# fig3.gp: Figure 3 of the paper: per-instance throughput, TPOT and idle
# ratios against the A/F ratio r (B = 256, geometric mu_P = 100, mu_D = 500,
# paper-910c hardware).
#
#   gnuplot -e "in='TABLES/fig3'; out='DIR'" fig3.gp
#
# Reads in.'-sim.tsv' (afdkit sim at the paper's seven ratios),
# in.'-simall.tsv' (the same at every integer r), in.'-sweep.tsv' (afdkit
# sweep on a fine r grid, with the idle fractions its cycle times imply)
# and in.'-ratio.tsv' (afdkit ratio); writes
# fig3-throughput, fig3-tpot and fig3-idle, each as .png and .svg, into out.

here = ARG0[1:strlen(ARG0) - strlen('fig3.gp')]
load here.'style.gp'
if (!exists('in')) in = 'fig3'
if (!exists('out')) out = '.'

sim = in.'-sim.tsv'
simall = in.'-simall.tsv'
sweep = in.'-sweep.tsv'
ratio = in.'-ratio.tsv'

# The setting and the time unit, from the tables; the paper's setting keeps
# the paper's axis ranges, any other is autoscaled.
setting = afd_setting('all', sim)
unit = afd_setting('unit', sim)
paper = setting eq afd_paper

# r*_mf (real) and r*_G (integer) from the ratio table.
stats ratio using (strcol(1) eq 'mf' ? $2 : NaN) nooutput
rmf = STATS_max
stats ratio using (strcol(1) eq 'g' ? $2 : NaN) nooutput
rg = STATS_max

set xrange [0:33]
set xtics 0, 4, 32
set mxtics 4
set xlabel 'A/F ratio r (Attention instances per FFN instance)'

# Vertical markers at both optima, labelled at the top of the plot.
markers = afd_vline(rmf, afd_vermilion).'; '.afd_vline(rg, afd_green)
lab_mf = sprintf('r*_{mf} = %.2f', rmf)
lab_g = sprintf('r*_G = %d', rg)

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)

    # ---- throughput
    set output out.'/fig3-throughput.'.fmt
    unset arrow
    unset label
    eval markers
    set label 1 lab_mf at rmf, graph 1.03 right offset -0.3, 0 tc rgb afd_vermilion
    set label 2 lab_g at rg, graph 1.03 left offset 0.3, 0 tc rgb afd_green
    set ylabel sprintf('throughput per instance (tokens / %s)', afd_unit1(unit))
    if (paper) { set yrange [0.3:0.8]; set ytics 0.3, 0.1 } else { set yrange [*:*]; set ytics autofreq }
    set mytics 2
    set key top right
    set tmargin 3
    set title setting offset 0, 0.8
    plot simall using 1:2 with lines lt 6 lw 1.5 title 'simulated, every integer r', \
         sim using 1:2 with points lt 1 ps 1.5 title 'simulated, the paper''s ratios', \
         sweep using 1:3 with lines lt 2 dt afd_dt_theory title 'mean-field Thr_{mf} (eq. 1)', \
         sweep using 1:5 with lines lt 3 title 'barrier-aware Thr_G (eq. 11)'
    set output

    # ---- TPOT: one token per request per pipeline period, which with two
    # micro-batches is two micro-batch steps: the theory curves are 2 tau.
    set output out.'/fig3-tpot.'.fmt
    set ylabel sprintf('TPOT (%s per output token)', unit)
    if (paper) { set yrange [0:1700]; set ytics 0, 200 } else { set yrange [0:*]; set ytics autofreq }
    set mytics 2
    set key bottom right
    plot simall using 1:3 with lines lt 6 lw 1.5 title 'simulated, every integer r', \
         sim using 1:3 with points lt 1 ps 1.5 title 'simulated, the paper''s ratios', \
         sweep using 1:(2 * $2) with lines lt 2 dt afd_dt_theory title '2 τ_{mf} (two micro-batches)', \
         sweep using 1:(2 * $4) with lines lt 3 title '2 τ_G'
    set output

    # ---- idle ratios
    set output out.'/fig3-idle.'.fmt
    set ylabel 'idle fraction of time'
    set yrange [0:1]
    set ytics 0, 0.1
    set mytics 2
    set key top right
    set ytics ('0%%' 0, '20%%' 0.2, '40%%' 0.4, '60%%' 0.6, '80%%' 0.8, '100%%' 1)
    # Theory: the idle fractions a cycle time implies, 1 - mu_A/tau and
    # 1 - t_FFN/tau (sweep's eta columns), for tau_G (dashed) and tau_mf
    # (dotted, zero on one side of r*_mf).
    plot simall using 1:4 with lines lt 1 lw 1.5 notitle, \
         sim using 1:4 with points lt 1 ps 1.5 title 'η_A, Attention workers (simulated)', \
         sweep using 1:11 with lines lt 1 lw 1.5 dt afd_dt_theory notitle, \
         sweep using 1:9 with lines lt 1 lw 1.5 dt afd_dt_marker notitle, \
         simall using 1:5 with lines lt 2 lw 1.5 notitle, \
         sim using 1:5 with points lt 2 ps 1.4 title 'η_F, FFN (simulated)', \
         sweep using 1:12 with lines lt 2 lw 1.5 dt afd_dt_theory notitle, \
         sweep using 1:10 with lines lt 2 lw 1.5 dt afd_dt_marker notitle, \
         NaN with lines lt 8 lw 1.5 title 'solid: simulated at every integer r', \
         NaN with lines lt 8 lw 1.5 dt afd_dt_theory title 'dashed: from τ_G (eq. 9)', \
         NaN with lines lt 8 lw 1.5 dt afd_dt_marker title 'dotted: from τ_{mf} (eq. 8)'
    set output
    unset title
    set tmargin
}
