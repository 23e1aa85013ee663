#!/usr/bin/env python3
"""profiling-errors.py: the error tables of docs/estimator.md ("On the full
measurements") from the rows `afdkit calibrate --profile FILE ... --no-fit
--precision 6` prints (module tp tokens measured_ms estimate_ms rel_err bound).

Usage:
  scripts/profiling-errors.py ROWS
      one line per module: rows at >= 512 tokens (n, median and worst
      |rel_err| in percent, rows above 30%, worst at powers of two), then the
      weight-read rows (< 512 tokens, bound = memory: n, median, worst, above
      30%).
  scripts/profiling-errors.py --wave TM TN SMS DEVICE_KEYS HIDDEN ROWS
      the wave-quantization experiment on the output projection (one GEMM,
      M = tokens, N = HIDDEN, K = HIDDEN / tp, 16-bit): the estimator's form
      t = (t_c^p + t_m^p)^(1/p) + kernel_us, t_c = 2 M N K / (mfu S_c),
      t_m = 2 (M K + K N + M N) / (mbu S_m), with t_c multiplied by
      ceil(T / SMS) / (T / SMS), T = ceil(M / TM) ceil(N / TN) tiles, and mfu
      refitted (0.60 to 1.00 by 0.01, least squares of ln(estimate /
      measured) over the o_proj rows).  DEVICE_KEYS is
      mfu,peak_tflops,hbm_tbps,mbu,kernel_us,roofline_p (e.g. the h100-sxm
      preset's 0.718,989.4,3.35,0.883,4.41,2.6).  TM 0: no term and the
      given mfu, plus the largest |form / estimate_ms - 1| (a check that the
      form is the estimator's; it is below 1e-5 at --precision 6).
  scripts/profiling-errors.py --monotone ROWS
      the smallest worst-case error any estimator can reach that never gives
      more tokens less time (a GEMM padded to a larger size could always run
      the smaller one's kernel), per module and regime (>= 512 tokens; the
      weight-read rows), the largest over the TP sizes: for a series of
      measurements m_i at token counts t_i, a non-decreasing estimate e within
      eps of every m_i (|e / m - 1| <= eps) exists iff m_i (1 - eps) <=
      m_j (1 + eps) whenever t_i <= t_j, so the least eps is the largest
      (m_i - m_j) / (m_i + m_j) over those pairs.  Checked against a second
      algorithm (bisection on eps with the greedy non-decreasing fit).
"""
import math
import statistics
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m, tp, tok, meas, est, rel, bound = line.rstrip("\n").split("\t")
            rows.append((m, int(tp), float(tok), float(meas), float(est), float(rel), bound))
    return rows


def pct(x):
    return "%.1f" % (100 * x)


def summary(rows):
    for mod in ("qkv", "o_proj", "mlp"):
        s = [r for r in rows if r[0] == mod]
        large = [abs(r[5]) for r in s if r[2] >= 512]
        pow2 = [abs(r[5]) for r in s if r[2] >= 512 and (int(r[2]) & (int(r[2]) - 1)) == 0]
        wr = [abs(r[5]) for r in s if r[2] < 512 and r[6] == "memory"]
        print(mod, len(large), pct(statistics.median(large)), pct(max(large)),
              sum(x > 0.3 for x in large), pct(max(pow2)),
              len(wr), pct(statistics.median(wr)), pct(max(wr)), sum(x > 0.3 for x in wr))


def oproj_ms(m, tp, hidden, dev, mfu, tile):
    peak, bw, mbu, kernel_us, p = dev
    n, k = hidden, hidden / tp
    tc = 2 * m * n * k / (mfu * peak * 1e12)
    tm = 2 * (m * k + k * n + m * n) / (mbu * bw * 1e12)
    if tile:
        tm_, tn_, sms = tile
        tiles = math.ceil(m / tm_) * math.ceil(n / tn_)
        tc *= math.ceil(tiles / sms) / (tiles / sms)
    return ((tc ** p + tm ** p) ** (1 / p) + kernel_us * 1e-6) * 1e3


def wave(tm_, tn_, sms, keys, hidden, rows):
    mfu, *dev = [float(x) for x in keys.split(",")]
    rows = [r for r in rows if r[0] == "o_proj"]
    tile = (tm_, tn_, sms) if tm_ else None
    if tile:
        mfu = min((sum(math.log(oproj_ms(r[2], r[1], hidden, dev, i / 100, tile) / r[3]) ** 2
                       for r in rows), i / 100) for i in range(60, 101))[1]
    else:
        print("largest |form / estimate_ms - 1|: %.2g"
              % max(abs(oproj_ms(r[2], r[1], hidden, dev, mfu, None) / r[4] - 1) for r in rows))
    err = [(oproj_ms(r[2], r[1], hidden, dev, mfu, tile) / r[3] - 1, r) for r in rows]
    large = [abs(e) for e, r in err if r[2] >= 512]
    small = [abs(e) for e, r in err if r[2] < 512]
    print("mfu", mfu, "large", pct(statistics.median(large)), pct(max(large)),
          sum(x > 0.3 for x in large), "below 512 worst", pct(max(small)))


def inversion_bound(series):
    """max over t_i <= t_j of (m_i - m_j) / (m_i + m_j), and that pair."""
    best, pair, top = 0.0, None, (0.0, 0)  # top: the largest m so far, its t
    for t in sorted(series):
        for m in series[t]:  # equal token counts bound each other too
            if m > top[0]:
                top = (m, t)
        for m in series[t]:
            b = (top[0] - m) / (top[0] + m)
            if b > best:
                best, pair = b, (top, (m, t))
    return best, pair


def greedy_bound(series):
    """The same least eps by bisection: the lowest non-decreasing estimate
    e_t = max(e_prev, max m (1 - eps)) must stay <= min m (1 + eps)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        eps = (lo + hi) / 2
        e, ok = 0.0, True
        for t in sorted(series):
            e = max(e, max(m * (1 - eps) for m in series[t]))
            ok = ok and e <= min(m * (1 + eps) for m in series[t])
        lo, hi = (lo, eps) if ok else (eps, hi)
    return hi


def monotone(rows):
    for mod in ("qkv", "o_proj", "mlp"):
        out = [mod]
        for regime in ("large", "weight_read"):
            worst = (0.0, None, None)
            for tp in sorted({r[1] for r in rows}):
                series = {}
                for r in rows:
                    if r[0] != mod or r[1] != tp:
                        continue
                    if (r[2] >= 512) if regime == "large" else (r[2] < 512 and r[6] == "memory"):
                        series.setdefault(r[2], []).append(r[3])
                if not series:
                    continue
                b, pair = inversion_bound(series)
                g = greedy_bound(series)
                if abs(b - g) > 1e-9:
                    sys.exit("monotone bound: %g by pairs, %g by bisection (tp %d)" % (b, g, tp))
                if b > worst[0]:
                    worst = (b, tp, pair)
            b, tp, pair = worst
            out.append("%s %s" % (regime, pct(b)))
            if pair:
                (mi, ti), (mj, tj) = pair
                out.append("(tp %d: %.4g ms at %d tokens, %.4g at %d)" % (tp, mi, ti, mj, tj))
        print(" ".join(out))


def main(argv):
    if len(argv) == 2:
        summary(load(argv[1]))
    elif len(argv) == 3 and argv[1] == "--monotone":
        monotone(load(argv[2]))
    elif len(argv) == 8 and argv[1] == "--wave":
        wave(int(argv[2]), int(argv[3]), int(argv[4]), argv[5], int(argv[6]), load(argv[7]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
