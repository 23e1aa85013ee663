# fig4b.gp: Figure 4(b): throughput per instance against r for prompt and
# decode lengths (mu_P, mu_D) = (100, 500), (200, 500), (100, 1000),
# (50, 250), geometric, B = 256, paper-910c.
#
#   gnuplot -e "in='TABLES/fig4b'; out='DIR'" fig4b.gp
#
# Reads in.'-sim.tsv', in.'-sweep.tsv' and in.'-ratio.tsv' (one block per
# configuration); writes fig4b.png and fig4b.svg into out.  See fig4.gp.

here = ARG0[1:strlen(ARG0) - strlen('fig4b.gp')]
load here.'style.gp'
if (!exists('in')) in = 'fig4b'
if (!exists('out')) out = '.'

name = 'fig4b'
nconf = 4
mu_p(i) = i == 1 ? 200 : i == 3 ? 50 : 100
mu_d(i) = i == 2 ? 1000 : i == 3 ? 250 : 500
conf(i) = sprintf('μ_P = %d, μ_D = %d', mu_p(i), mu_d(i))
title_ = sprintf('Prompt and decode lengths (geometric, B = %s, %s)', \
                 afd_setting('B', in.'-sim.tsv'), afd_setting('hw', in.'-sim.tsv'))
load here.'fig4.gp'
