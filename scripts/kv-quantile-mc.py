#!/usr/bin/env python3
"""kv-quantile-mc.py: Monte Carlo of the KV tokens held by the decode slots in
use, against which afdkit pd's kv_gb_p99 (afd_decode_demand) is checked in
docs/queues.md.

K = Y_1 + ... + Y_N with N ~ Poisson(L) (the slots in use, M/G/infinity) and
Y_i i.i.d. from the trace's stationary slot load (Lemma 4.1): a slot in use at
a random step holds request i with probability D_i / sum D, at an age uniform
on {0, ..., D_i - 1}, so Y = P_i + age (mean theta, eq. 3).

Usage: scripts/kv-quantile-mc.py TRACE.csv L Q TRIALS
Prints theta, nu, the Q-quantile of K and its 95% interval (order statistics
n Q +- 2 sqrt(n Q (1 - Q))), and a standard error (a quarter of its width).
"""
import csv
import math
import random
import sys


def main():
    path, L, q, trials = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    with open(path, newline="") as f:
        rows = [(int(r[1]), int(r[2])) for r in csv.reader(f) if r and r[0] != "TIMESTAMP"]
    rows = [(p, d) for p, d in rows if d >= 1]
    sum_d = sum(d for _, d in rows)
    theta = sum(d * p + d * (d - 1) / 2 for p, d in rows) / sum_d
    ey2 = sum(d * p * p + p * d * (d - 1) + d * (d - 1) * (2 * d - 1) / 6 for p, d in rows) / sum_d
    print("theta", theta, "nu", math.sqrt(ey2 - theta * theta))
    random.seed(12345)
    cum, c = [], 0
    for _, d in rows:
        c += d
        cum.append(c)
    e = math.exp(-L)

    def poisson():
        u, k, p = random.random(), 0, e
        s = p
        while u > s:
            k += 1
            p *= L / k
            s += p
        return k

    ns = [poisson() for _ in range(trials)]
    idx = random.choices(range(len(rows)), cum_weights=cum, k=sum(ns))
    ys = [rows[i][0] + random.randrange(rows[i][1]) for i in idx]
    out, j = [], 0
    for n in ns:
        out.append(sum(ys[j:j + n]))
        j += n
    out.sort()
    k = int(math.ceil(q * trials)) - 1
    h = int(math.ceil(2 * math.sqrt(trials * q * (1 - q))))
    print("quantile", out[k], "95% interval", out[k - h], out[k + h], "se",
          (out[k + h] - out[k - h]) / 4)


if __name__ == "__main__":
    main()
