#!/usr/bin/env python3
"""gemm-forms.py: GEMM time forms tried against Vidur's full measurements
(docs/estimator.md, "Tile and wave forms tried").

Usage:
  scripts/gemm-forms.py [--forms F,F,...] FILE...
      FILE: Vidur mlp.csv files (data/profiling/compute/GPU/ORG/MODEL/mlp.csv of
      a microsoft/vidur checkout, or the bundled data/profiling/GPU.MODEL.csv);
      the GPU (a100 or h100) is the directory that names it or the file
      name's first word, the model the directory (or file) name.  For each form,
      the parameters are fitted to the file of each GPU whose path contains
      Llama-2-70b-hf, and every file is evaluated: one line per file and module
      with the rows at >= 512 tokens (n, median and worst |estimate / measured
      - 1| in percent, rows above 30%) and the weight-read rows (< 512 tokens,
      every operator of the module memory-bound at the preset's efficiencies:
      the rows `calibrate --summary` calls weight_read), then the worst over
      all files.  Forms: preset refit fused tiles tiles-l2 (default: all).
  scripts/gemm-forms.py --minimax FORM FILE...
      FORM preset or tiles, fitted for the worst case instead: per GPU, over
      every file of that GPU at once, the parameters (preset: mfu, mbu,
      kernel_us, p; tiles: those, kk and the three tile efficiencies) that
      minimise the L^64 norm, (mean |e|^64)^(1/64), of the relative errors e =
      estimate / measured - 1 over the rows the targets are about (>= 512
      tokens, and the weight-read rows), a smooth stand-in for their largest
      (between the largest / n^(1/64) and the largest for n rows: / 1.16 for
      the A100's 15100, / 1.15 for the H100's 8423; the largest itself is
      what is reported).  Nelder-Mead from the preset (preset) or
      the `tiles` fit to Llama-2-70B (tiles), first on the L^32 norm (250
      steps), then on L^64 (600 steps); the search may stop at a local
      minimum, so the worst found is an upper bound on the form's best.  One
      line per file and module as above, then the worst per GPU.
  scripts/gemm-forms.py --check ROWS FILE
      the largest |preset form / estimate_ms - 1| over the rows `afdkit
      calibrate --profile FILE --model M --device D --no-fit --precision 6`
      printed (a check that the preset form is the estimator's).

The forms (t_c = W / (mfu S_c), t_m = Q / (mbu S_m), p-norm roofline
(t_c^p + t_m^p)^(1/p); every GEMM kernel M x N x K is 16-bit, W = 2 M N K,
Q = 2 (M K + K N + M N)):
  preset    the estimator as it is (libanalytic/latency/estimate.c): Q, K and V three
            rooflines charged one kernel_us, the MLP's gate and up two
            rooflines charged one, SiLU and product memory-bound operators,
            down projection; the a100-80g and h100-sxm presets' values.
  refit     the same form, mfu, mbu, kernel_us and p refitted to every row of
            the Llama-2-70B file (least squares of ln(estimate / measured)
            over the three modules, Nelder-Mead), not only its powers of two.
  fused     Q, K and V as one kernel (N = q + 2 kv), gate and up as one
            (N = 2 w), and a fixed time per kernel of kernel_us + kk K / 1000
            (a longer reduction dimension, a longer pipeline: the qkv kernels,
            K = hidden, take 5-6 us beyond their weight read at small batches,
            the output projection at TP 8, K = hidden / 8, 3 us).  Two-stage
            fit: mbu, kernel_us and kk to the rows of at most 64 tokens, then
            mfu and p to the rest.
  tiles     fused, with the compute time of the best of five tile shapes
            (tM x tN: 128 x 256, 256 x 128 at efficiency 1; 128 x 128,
            64 x 128, 64 x 64 at efficiencies fitted in the second stage):
            t_c = 2 K tM tN slots / (eta mfu S_c), slots = the ceil(M / tM)
            ceil(N / tN) tiles rounded up to whole waves of one tile per SM
            (108 SMs on the A100, 132 on the H100) when there are at least as
            many tiles as SMs, else the tiles alone (split-K fills the SMs).
  tiles-l2  tiles, the shape chosen by the whole roofline time, the weights
            read once per row of tiles when they exceed L2 (40 MB A100, 50 MB
            H100).
"""
import copy
import csv
import math
import os
import statistics
import sys

DEV = {"a100": dict(peak=312e12, bw=2.039e12, mfu=0.735, mbu=0.792, kus=5.96, p=1.94, sms=108, l2=40e6),
       "h100": dict(peak=989.4e12, bw=3.35e12, mfu=0.718, mbu=0.883, kus=4.41, p=2.6, sms=132, l2=50e6)}
MODS = ("qkv", "o_proj", "mlp")
TILES = [[128, 256, 1.0], [256, 128, 1.0], [128, 128, 0.95], [64, 128, 0.85], [64, 64, 0.7]]


def gpu_of(path):
    """the directory named a100 or h100 in the path, or the file name's first
    dot-separated word (data/profiling/h100.llama-2-70b.csv)"""
    parts = os.path.normpath(path).split(os.sep)
    for g in DEV:
        if g in parts or parts[-1].split(".")[0] == g:
            return g
    sys.exit("%s: names no a100 or h100 directory or file" % path)


def label_of(path):
    base = os.path.basename(path)
    if base == "mlp.csv":
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return base.split(".")[0]


def load(path):
    rows = []
    with open(path) as f:
        for line, r in enumerate(csv.DictReader(f), 2):
            if r.get("use_gated_mlp") != "True":
                sys.exit("%s:%d: use_gated_mlp is %r: only gated MLPs are timed" % (path, line, r.get("use_gated_mlp")))
            g = lambda k: float(r["time_stats.%s.median" % k])
            x = dict(H=int(r["n_head"]), KV=int(r["n_kv_head"]), h=int(r["n_embd"]),
                     w=int(r["n_expanded_embd"]), t=int(r["num_tensor_parallel_workers"]),
                     n=int(r["num_tokens"]), qkv=g("attn_pre_proj"), o_proj=g("attn_post_proj"),
                     mlp=g("mlp_up_proj") + g("mlp_act") + g("mlp_down_proj"))
            rows.append(x)
    return rows


def shapes(r):
    d = r["h"] // r["H"]
    return r["H"] // r["t"] * d, math.ceil(r["KV"] / r["t"]) * d


def pnorm(tc, tm, p):
    hi, lo = max(tc, tm), min(tc, tm)
    return hi * (1 + (lo / hi) ** p) ** (1 / p) if hi > 0 else 0


def roof(W, Q, d, prm):
    tc, tm = W / (prm["mfu"] * d["peak"]), Q / (prm["mbu"] * d["bw"])
    return pnorm(tc, tm, prm["p"]), tc > tm


# ---- preset and refit: the estimator's form ----
def gemm_preset(n, k, m, d, prm, kernels=1):
    t, cb = roof(2 * n * k * m, 2 * (n * k + k * m + n * m), d, prm)
    return t + kernels * prm["kus"] * 1e-6, cb


def act(n, w, d, prm):
    return [roof(5 * n * w, 4 * n * w, d, prm), roof(n * w, 6 * n * w, d, prm)]


def est_preset(r, d, prm, opt):
    """ms per module and whether every operator is memory-bound"""
    n, h, w = r["n"], r["h"], r["w"] / r["t"]
    q, kv = shapes(r)
    a = [gemm_preset(n, h, q, d, prm), gemm_preset(n, h, kv, d, prm, 0), gemm_preset(n, h, kv, d, prm, 0)]
    o = gemm_preset(n, q, h, d, prm)
    g = [gemm_preset(n, h, w, d, prm), gemm_preset(n, h, w, d, prm, 0), gemm_preset(n, w, h, d, prm)] + act(n, w, d, prm)
    return {"qkv": (1e3 * sum(x[0] for x in a), not any(x[1] for x in a)), "o_proj": (1e3 * o[0], not o[1]),
            "mlp": (1e3 * sum(x[0] for x in g), not any(x[1] for x in g))}


# ---- fused, tiles, tiles-l2 ----
def kernel(M, N, K, d, prm, opt):
    fixed = (prm["kus"] + prm.get("kk", 0) * K / 1000) * 1e-6
    Q = 2 * (M * K + K * N + M * N)
    if not opt.get("tiles"):
        t, cb = roof(2 * M * N * K, Q, d, prm)
        return t + fixed, cb
    best = None
    for tM, tN, eta in opt["tiles"]:
        rows = math.ceil(M / tM)
        T = rows * math.ceil(N / tN)
        slots = math.ceil(T / d["sms"]) * d["sms"] if T >= d["sms"] else T
        tc = 2 * K * tM * tN * slots / (eta * prm["mfu"] * d["peak"])
        if opt.get("l2"):
            reads = rows if 2 * K * N > d["l2"] else 1
            tm = 2 * (M * K + reads * K * N + M * N) / (prm["mbu"] * d["bw"])
            key = pnorm(tc, tm, prm["p"])
        else:
            tm = Q / (prm["mbu"] * d["bw"])
            key = tc
        if best is None or key < best[0]:
            best = (key, tc, tm)
    return pnorm(best[1], best[2], prm["p"]) + fixed, best[1] > best[2]


def est_fused(r, d, prm, opt):
    n, h, w = r["n"], r["h"], r["w"] / r["t"]
    q, kv = shapes(r)
    a = kernel(n, q + 2 * kv, h, d, prm, opt)
    o = kernel(n, h, q, d, prm, opt)
    g = [kernel(n, 2 * w, h, d, prm, opt), kernel(n, h, w, d, prm, opt)] + act(n, w, d, prm)
    return {"qkv": (1e3 * a[0], not a[1]), "o_proj": (1e3 * o[0], not o[1]),
            "mlp": (1e3 * sum(x[0] for x in g), not any(x[1] for x in g))}


# ---- fitting ----
def sse(rows, d, prm, est, opt):
    s = 0
    for r in rows:
        e = est(r, d, prm, opt)
        s += sum(math.log(e[m][0] / r[m]) ** 2 for m in MODS)
    return s


def nelder_mead(f, x0, step, iters):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step[j] if j == i else 0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [2 * c[j] - pts[-1][j] for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [3 * c[j] - 2 * pts[-1][j] for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [(c[j] + pts[-1][j]) / 2 for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                pts = [pts[0]] + [[(pts[0][j] + p[j]) / 2 for j in range(n)] for p in pts[1:]]
                vals = [vals[0]] + [f(p) for p in pts[1:]]
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i]


def fit_refit(rows, d, opt):
    def f(x):
        if not (0.1 < x[0] < 1.5 and 0.1 < x[1] < 1.5 and 0 <= x[2] < 30 and 0.8 < x[3] < 20):
            return 1e9
        return sse(rows, d, dict(mfu=x[0], mbu=x[1], kus=x[2], p=x[3]), est_preset, opt)
    x = nelder_mead(f, [d["mfu"], d["mbu"], d["kus"], d["p"]], [0.05, 0.05, 1, 0.5], 300)
    return dict(mfu=x[0], mbu=x[1], kus=x[2], p=x[3])


def fit_two_stage(rows, d, opt):
    small = [r for r in rows if r["n"] <= 64]
    large = [r for r in rows if r["n"] > 64]

    def f1(x):
        if x[0] <= 0.1 or x[1] < 0 or x[2] < 0:
            return 1e9
        return sse(small, d, dict(mfu=d["mfu"], mbu=x[0], kus=x[1], kk=x[2], p=d["p"]), est_fused, opt)
    x1 = nelder_mead(f1, [0.9, 4, 0.3], [0.05, 1, 0.2], 200)
    fitted = [i for i, t in enumerate(opt.get("tiles") or []) if t[2] != 1.0]

    def f2(x):
        if x[0] <= 0.1 or not 0.8 < x[1] <= 20 or any(not 0.2 < v <= 1 for v in x[2:]):
            return 1e9
        for j, i in enumerate(fitted):
            opt["tiles"][i][2] = x[2 + j]
        return sse(large, d, dict(mfu=x[0], mbu=x1[0], kus=x1[1], kk=x1[2], p=x[1]), est_fused, opt)
    x2 = nelder_mead(f2, [0.75, 2] + [opt["tiles"][i][2] for i in fitted], [0.05, 0.5] + [-0.05] * len(fitted),
                     150 + 60 * len(fitted))
    f2(x2)
    return dict(mfu=x2[0], mbu=x1[0], kus=x1[1], kk=x1[2], p=x2[1])


FORMS = {"preset": (est_preset, None, {}), "refit": (est_preset, fit_refit, {}),
         "fused": (est_fused, fit_two_stage, {}), "tiles": (est_fused, fit_two_stage, {"tiles": TILES}),
         "tiles-l2": (est_fused, fit_two_stage, {"tiles": TILES, "l2": 1})}


def pct(x):
    return "%.1f" % (100 * x)


def run(form, files):
    est, fitter, opt0 = FORMS[form]
    prms, opts = {}, {}
    for g in DEV:
        opts[g] = copy.deepcopy(opt0)
        if fitter is None:
            prms[g] = DEV[g]
            continue
        ref = [f for f in files if f[0] == g and "Llama-2-70b-hf" in f[2]]
        if not ref:
            continue
        prms[g] = fitter(ref[0][3], DEV[g], opts[g])
        print("# %s %s fit: %s" % (form, g, fitted(prms[g], opts[g])))
    worst = {}
    for g, label, path, rows in files:
        if g not in prms:
            continue
        w = worst.setdefault(g, [0, 0])
        w[:] = map(max, w, file_rows(form, g, label, rows, est, prms[g], opts[g]))
    for g, w in worst.items():
        print("# %s %s worst: >= 512 tokens %s, weight-read %s" % (form, g, pct(w[0]), pct(w[1])))


def fitted(prm, opt):
    """the fitted values, as the `# ... fit:` lines print them"""
    extra = " tiles " + ",".join("%.3g" % t[2] for t in opt["tiles"]) if opt.get("tiles") else ""
    return " ".join("%s %.4g" % (k, prm[k]) for k in ("mfu", "mbu", "kus", "kk", "p") if k in prm) + extra


def file_rows(name, g, label, rows, est, prm, opt):
    """one table line per module of a file; the worst at >= 512 tokens and
    of the weight reads"""
    e = [(est(r, DEV[g], prm, opt), r) for r in rows]
    worst = [0, 0]
    for m in MODS:
        big = [abs(x[m][0] / r[m] - 1) for x, r in e if r["n"] >= 512]
        wr = [abs(x[m][0] / r[m] - 1) for x, r in e if r["n"] < 512 and r["wr_" + m]]
        print("| %s | %s | %s | %s | %s | %s | %d | %s | %s | %d |" % (
            name, g.upper(), label, m, pct(statistics.median(big)), pct(max(big)),
            sum(x > 0.3 for x in big), pct(statistics.median(wr)), pct(max(wr)), sum(x > 0.3 for x in wr)))
        worst = [max(worst[0], max(big)), max(worst[1], max(wr))]
    return worst


def check(rows_path, path):
    g = gpu_of(path)
    by_key = {}
    for r in load(path):
        e = est_preset(r, DEV[g], DEV[g], {})
        for m in MODS:
            by_key[(m, r["t"], r["n"])] = e[m][0]
    worst = 0
    with open(rows_path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m, tp, tok, _, est, _, _ = line.split("\t")
            worst = max(worst, abs(by_key[(m, int(tp), int(float(tok)))] / float(est) - 1))
    print("largest |form / estimate_ms - 1|: %.2g" % worst)


def minimax(form, files):
    est = est_preset if form == "preset" else est_fused
    for g in DEV:
        mine = [f for f in files if f[0] == g]
        if not mine:
            continue
        d, opt = DEV[g], ({"tiles": copy.deepcopy(TILES)} if form == "tiles" else {})
        if form == "preset":
            x0, step = [d["mfu"], d["mbu"], d["kus"], d["p"]], [0.05, 0.05, 1, 0.3]
        else:
            ref = [f for f in mine if "Llama-2-70b-hf" in f[2]]
            if not ref:
                sys.exit("--minimax tiles: no Llama-2-70b-hf file for the %s to start from" % g)
            prm = fit_two_stage(ref[0][3], d, opt)
            x0 = [prm[k] for k in ("mfu", "mbu", "kus", "kk", "p")] + [t[2] for t in opt["tiles"][2:]]
            step = [0.03, 0.05, 0.5, 0.05, 0.2, -0.03, -0.05, -0.05]
        target = [(r, m) for _, _, _, rows in mine for r in rows for m in MODS
                  if r["n"] >= 512 or r["wr_" + m]]

        def unpack(x):
            if form == "preset":
                return dict(mfu=x[0], mbu=x[1], kus=x[2], p=x[3])
            for i in range(3):
                opt["tiles"][2 + i][2] = x[5 + i]
            return dict(mfu=x[0], mbu=x[1], kus=x[2], kk=x[3], p=x[4])

        def errors(x):
            prm, cache, out = unpack(x), {}, []
            for r, m in target:
                if id(r) not in cache:
                    cache[id(r)] = est(r, d, prm, opt)
                out.append(cache[id(r)][m][0] / r[m] - 1)
            return out

        def norm(q):
            def f(x):
                if not (0.2 < x[0] < 1.3 and 0.2 < x[1] < 1.3 and 0 <= x[2] < 20 and 0.8 < x[-4 if form == "tiles" else 3] < 20
                        and (form == "preset" or (-1 < x[3] < 3 and all(0.2 < v <= 1 for v in x[5:])))):
                    return 1e9
                e = errors(x)
                return (sum(abs(v) ** q for v in e) / len(e)) ** (1 / q)
            return f
        x = nelder_mead(norm(32), x0, step, 250)
        x = nelder_mead(norm(64), x, step, 600)
        prm = unpack(x)
        print("# minimax %s %s: %s" % (form, g, fitted(prm, opt)))
        worst = [0, 0]
        for _, label, _, rows in mine:
            worst = list(map(max, worst, file_rows("minimax " + form, g, label, rows, est, prm, opt)))
        print("# minimax %s %s worst: >= 512 tokens %s, weight-read %s" % (form, g, pct(worst[0]), pct(worst[1])))


def main(argv):
    mm = None
    if len(argv) > 2 and argv[1] == "--minimax":
        mm = argv[2]
        argv = argv[2:]
        if mm not in ("preset", "tiles"):
            sys.exit(__doc__)
    if len(argv) == 4 and argv[1] == "--check":
        return check(argv[2], argv[3])
    forms = list(FORMS)
    if len(argv) > 2 and argv[1] == "--forms":
        forms = argv[2].split(",")
        argv = argv[2:]
    if len(argv) < 2 or any(f not in FORMS for f in forms):
        sys.exit(__doc__)
    files = []
    for path in argv[1:]:
        g = gpu_of(path)
        rows = load(path)
        for r in rows:
            b = est_preset(r, DEV[g], DEV[g], {})
            for m in MODS:
                r["wr_" + m] = b[m][1]
        files.append((g, label_of(path), path, rows))
    if mm:
        return minimax(mm, files)
    print("| form | GPU | model | module | large median | large worst | >30% | weight_read median | weight_read worst | >30% |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for form in forms:
        run(form, files)


if __name__ == "__main__":
    main(sys.argv)
