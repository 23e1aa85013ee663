# style.gp: the look shared by every afdkit figure (gnuplot 5.4).
#
# Each figure script loads this file and then, for fmt in png and svg:
#   eval afd_terminal(fmt); set output out.'/NAME.'.fmt
# Tables are read with explicit "using" columns: "set key autotitle
# columnhead" would take the first data row after a '#' header as titles.

reset
set encoding utf8

# The size of every figure, in pixels.
afd_w = 900
afd_h = 560
afd_font = 'DejaVu Sans,11'
afd_terminal(fmt) = (fmt eq 'png' \
    ? sprintf("set terminal pngcairo size %d,%d enhanced font '%s' linewidth 1.25 background rgb 'white'", afd_w, afd_h, afd_font) \
    : sprintf("set terminal svg size %d,%d dynamic enhanced font '%s' linewidth 1.25 background rgb 'white'", afd_w, afd_h, afd_font))

# Colours: the Okabe-Ito palette, which stays distinct for colour-blind
# readers and in greyscale print.
afd_blue = '#0072B2'
afd_vermilion = '#D55E00'
afd_green = '#009E73'
afd_purple = '#CC79A7'
afd_orange = '#E69F00'
afd_sky = '#56B4E9'
afd_black = '#000000'
afd_grey = '#7f7f7f'

# Line types 1-6 follow the palette; each has its own point shape.
set linetype 1 lc rgb afd_blue lw 2 dt solid pt 7 ps 1.1
set linetype 2 lc rgb afd_vermilion lw 2 dt solid pt 5 ps 1.0
set linetype 3 lc rgb afd_green lw 2 dt solid pt 9 ps 1.3
set linetype 4 lc rgb afd_purple lw 2 dt solid pt 13 ps 1.3
set linetype 5 lc rgb afd_orange lw 2 dt solid pt 11 ps 1.3
set linetype 6 lc rgb afd_sky lw 2 dt solid pt 15 ps 1.2
set linetype 7 lc rgb afd_black lw 2 dt solid pt 6 ps 1.1
set linetype 8 lc rgb afd_grey lw 1 dt solid pt 1 ps 1.0
set linetype cycle 8

# Dash patterns by role: measurement solid, theory dashed, markers dotted.
afd_dt_theory = 2
afd_dt_marker = 3
afd_dt_alt = 4

# Axes: left and bottom only, ticks outward, a light grid behind the data.
set border 3 lc rgb '#404040' lw 1
set tics nomirror out scale 0.6 textcolor rgb '#202020'
set grid back lc rgb '#dddddd' lw 1 dt solid
set mxtics
set mytics
set grid mxtics mytics lc rgb '#dddddd' lw 1 dt solid, lc rgb '#f0f0f0' lw 0.5 dt solid

# Legends: no frame, an opaque white background so that no curve shows
# through, and room between the entries.
set key noautotitle
set key opaque nobox samplen 2.5 spacing 1.15 width 1 enhanced

set style fill solid 1.0 noborder
set pointintervalbox 1.5
set datafile missing 'nan'
set datafile separator whitespace

# The setting of a table (setting.sh beside this file: the workload, the
# hardware, B and the time unit from the table's provenance lines), for
# titles and labels: afd_setting(part, table), part all, workload, hw, B or
# unit.  afd_unit1(u) is the singular of a unit ("cycle" per "cycles").
afd_setting(part, t) = system(sprintf("sh '%ssetting.sh' --part %s '%s'", here, part, t))
afd_unit1(u) = u eq 'cycles' ? 'cycle' : u
# The paper's setting, for which the scripts keep the paper's axis ranges.
afd_paper = 'B = 256, geometric μ_P = 100, μ_D = 500, paper-910c'

# A vertical marker at x = v across the plot: afd_vline(v, colour).
afd_vline(v, c) = sprintf("set arrow from %.10g, graph 0 to %.10g, graph 1 nohead lc rgb '%s' lw 1.5 dt %d back", v, v, c, afd_dt_marker)
