#!/usr/bin/env python3
"""decode-batch-dispersion.py: the index of dispersion Var(N) / E[N] of the
batch of one decode instance whose step grows with the batch, quoted in
docs/queues.md ("The step at the load").

Counted in steps, step k holds N_k = A_{k-1} + ... + A_{k-D} sequences
(every request stays D steps) and A_k, the arrivals during step k, is
Poisson with mean lambda S(N_k) = a + c N_k given the past (a = lambda beta,
c = lambda (gamma + alpha theta)): a discrete self-exciting process of
branching ratio x = c D.  Writing A_k = mu + c (N_k - m) + e_k with e_k
uncorrelated of variance mu = E[A] = a / (1 - x), A - mu = e / (1 - c W)
and N - m = W e / (1 - c W), W the filter summing lags 1..D, so

    Var(N) = mu / (2 pi) integral over (-pi, pi] of |W|^2 / |1 - c W|^2,
    W(w) = sum_{j=1..D} e^{-i w j},   E[N] = m = D mu,

evaluated here by the midpoint rule on M points (the integrand is smooth
and periodic, so the rule converges fast).

Usage: scripts/decode-batch-dispersion.py D X [X ...] [--points M]
Prints x, Var(N) / E[N] and 1 / (1 - x) for each X in (0, 1).
"""
import cmath
import math
import sys


def dispersion(d, x, points):
    c = x / d
    total = 0.0
    for k in range(points):
        w = 2 * math.pi * (k + 0.5) / points
        z = cmath.exp(-1j * w)
        wsum = z * (1 - z ** d) / (1 - z)  # sum of z^j, j = 1..d
        total += abs(wsum) ** 2 / abs(1 - c * wsum) ** 2
    return total / points / d  # Var(N) / mu over D


def main(argv):
    points = 200000
    args = list(argv[1:])
    if "--points" in args:
        i = args.index("--points")
        points = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__.strip().splitlines()[-2])
    d = int(args[0])
    print("x\tdispersion\t1/(1-x)")
    for s in args[1:]:
        x = float(s)
        if not 0 < x < 1 or d < 1:
            sys.exit("need D >= 1 and 0 < X < 1: %s" % s)
        print("%g\t%.4f\t%.4f" % (x, dispersion(d, x, points), 1 / (1 - x)))


if __name__ == "__main__":
    main(sys.argv)
