# gantt.gp: Figure 2 of the paper from the simulator: the first micro-batch
# steps of an 8A-1F pipeline (B = 256, geometric mu_P = 100, mu_D = 500,
# paper-910c, two micro-batches), one box per stage and worker.  Gaps in a
# lane are bubbles: an Attention worker waiting for the slowest one (the
# barrier) or for the FFN, the FFN waiting for Attention.
#
#   gnuplot -e "in='TABLES/gantt.tsv'; out='DIR'" gantt.gp
#
# Reads in (afdkit sim --gantt: step microbatch stage worker start end);
# writes gantt.png and gantt.svg into out.

here = ARG0[1:strlen(ARG0) - strlen('gantt.gp')]
load here.'style.gp'
if (!exists('in')) in = 'gantt.tsv'
if (!exists('out')) out = '.'

# Lanes from the top: Attention workers 0..r-1, then A->F, FFN, F->A.
stats in using 4 nooutput
r = STATS_max + 1
lane(stage, w) = stage eq 'attention' ? 3 + (r - 1 - w) : \
                 stage eq 'a2f' ? 2 : stage eq 'ffn' ? 1 : 0
half = 0.36

set yrange [-0.7:r + 2.7]
set ytics () nomirror
do for [w = 0:r - 1] {
    set ytics add (sprintf('Attention %d', w) 3 + (r - 1 - w))
}
set ytics add ('A → F' 2, 'FFN' 1, 'F → A' 0)
unset mytics
set grid noytics nomytics xtics
set xlabel sprintf('time (%s)', afd_setting('unit', in))
set xrange [0:*]
set key at screen 0.5, screen 0.015 center bottom horizontal
set bmargin at screen 0.16
set style fill solid 0.9 border lc rgb 'white'

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/gantt.'.fmt
    set title sprintf("Pipeline of %dA-1F, two micro-batches: the first steps (afdkit sim --gantt)\n%s", \
                      r, afd_setting('all', in))
    plot in using (($5 + $6) / 2):(lane(strcol(3), $4)):(($6 - $5) / 2):(half):($2 + 1) \
            with boxxyerror lc variable, \
         NaN with boxes lt 1 title 'micro-batch 0', \
         NaN with boxes lt 2 title 'micro-batch 1'
    set output
}
