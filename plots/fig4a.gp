# fig4a.gp: Figure 4(a): throughput per instance against r for batch sizes
# B = 128, 256, 512 (geometric mu_P = 100, mu_D = 500, paper-910c).
#
#   gnuplot -e "in='TABLES/fig4a'; out='DIR'" fig4a.gp
#
# Reads in.'-sim.tsv', in.'-sweep.tsv' and in.'-ratio.tsv' (one block per
# B); writes fig4a.png and fig4a.svg into out.  See fig4.gp.

here = ARG0[1:strlen(ARG0) - strlen('fig4a.gp')]
load here.'style.gp'
if (!exists('in')) in = 'fig4a'
if (!exists('out')) out = '.'

name = 'fig4a'
nconf = 3
conf(i) = sprintf('B = %d', i == 0 ? 128 : i == 1 ? 256 : 512)
title_ = sprintf('Batch size B (%s, %s)', afd_setting('workload', in.'-sim.tsv'), \
                 afd_setting('hw', in.'-sim.tsv'))
load here.'fig4.gp'
