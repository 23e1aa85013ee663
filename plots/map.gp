# map.gp: the provisioning map: the recommended A/F ratio as a function of
# the stationary slot load theta and the micro-batch size B, for the paper's
# hardware (paper-910c), with nu = theta (the spread of a geometric-like
# load; the geometric model of mu_P = 100, mu_D = 500 has theta = 599,
# nu = 509).
#
#   gnuplot -e "in='TABLES/map.tsv'; out='DIR'" map.gp
#
# Reads in (theta nu B r_mf r_g thr_mf thr_g, one scan line per B, from
# afdkit ratio); writes map.png and map.svg into out.  Left: the mean-field
# r*_mf (Theorem 4.4); right: the barrier-aware integer r*_G (eq. 12).
# The grid is uniform in log theta and log B: each grid point is drawn as
# one cell centred on it, with contour lines of r* on top.

here = ARG0[1:strlen(ARG0) - strlen('map.gp')]
load here.'style.gp'
if (!exists('in')) in = 'map.tsv'
if (!exists('out')) out = '.'

# The paper's operating point: theta = 599 (mu_P + mu_D - 1), B = 256.
theta0 = 599
b0 = 256

lx(t) = log10(t)
ly(b) = log(b) / log(2)

set view map
unset grid
set border 15
set tics out nomirror
unset mxtics
unset mytics
set xtics ('100' 2, '200' lx(200), '500' lx(500), '1000' 3, '2000' lx(2000), '5000' lx(5000), '10^4' 4)
set ytics ('16' 4, '32' 5, '64' 6, '128' 7, '256' 8, '512' 9, '1024' 10)
set autoscale xfix
set autoscale yfix
set xrange [*:*] noextend
set yrange [*:*] noextend
set logscale cb
set cbrange [1:300]
set cbtics ('1' 1, '2' 2, '5' 5, '10' 10, '20' 20, '50' 50, '100' 100, '200' 200)
# A perceptually uniform palette (viridis), dark for small r.
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set xlabel 'slot load θ = ν (tokens)'

set contour base
set cntrparam linear
set cntrparam levels discrete 2, 3, 5, 10, 20, 50, 100, 200
set cntrlabel onecolor format '%g' font ',9' start 6 interval 1000
set style textbox opaque noborder margins 1, 1

do for [fmt in 'png svg'] {
    eval afd_terminal(fmt)
    set output out.'/map.'.fmt
    set multiplot title sprintf('Provisioning map: recommended A/F ratio r*, %s hardware, ν = θ', \
                                afd_setting('hw', in)) \
        font ',12'
    set tmargin at screen 0.86
    set bmargin at screen 0.13

    do for [panel = 1:2] {
        if (panel == 1) {
            set lmargin at screen 0.08
            set rmargin at screen 0.45
            set title 'mean-field r*_{mf} (Theorem 4.4)'
            set ylabel 'micro-batch size B'
            unset colorbox
            col = 4
        } else {
            set lmargin at screen 0.52
            set rmargin at screen 0.89
            set title 'barrier-aware r*_G (eq. 12)'
            unset ylabel
            set colorbox user origin screen 0.91, screen 0.13 size screen 0.018, screen 0.73
            set cblabel 'r*' offset 1.2, 0
            col = 5
        }
        set label 1 'paper' at lx(theta0), ly(b0), 1000 point pt 7 ps 1.3 lc rgb 'white' \
            offset 0.8, 0.6 boxed front font ',9'
        splot in using (lx($1)):(ly($3)):col with image nocontour, \
              in using (lx($1)):(ly($3)):col with lines nosurface lc rgb 'white' lw 1.2, \
              in using (lx($1)):(ly($3)):col with labels boxed nosurface
    }
    unset multiplot
    unset label
    unset title
    set output
}
