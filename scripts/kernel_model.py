#!/usr/bin/env python3
"""Kernel-level forward-pass model of afdkit's estimator: an independent implementation of
libanalytic/latency/estimate.c's kernel model (the tests check the C against it) and the fit of
the h100-sxm preset's kernel model.

Plain Python 3 (no numpy): run `python3 scripts/kernel_model.py [report|current|allreduce|vidur|all]`.
Data: ../shared/data/h100-measured (gemm.csv, attention_*.csv, forward.csv, measure.py documents
the method) and ../shared/data/vidur-profiling (all-reduce, A100 per-module times).

A forward pass is the list of kernels the measured engine launches (forward_kernels); each kernel
has a time in a CUDA graph:
  GEMM        f + (tc^p + tm^p)^(1/p)         tc = 2Tkn / (R_g * wave_eff), tm = bytes / (B_g * occ)
  elementwise f + bytes / B_e
  attention   prefill f + causal flash model; decode f + (tm^q + tl^q)^(1/q)
Isolated kernel measurements (gemm.csv, attention_*.csv) carry a CPU/launch offset c_iso that a
CUDA graph does not pay: t_csv = c_iso + (t_graph - f).
"""
import csv, json, math, os, statistics, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("AFD_SHARED", os.path.join(HERE, "../../shared"))
H100 = os.path.join(SHARED, "data/h100-measured")
VIDUR = os.path.join(SHARED, "data/vidur-profiling")
MODELDIR = os.environ.get("AFD_MODELS", os.path.join(HERE, "../data/models"))
SMS = 132  # H100 SXM streaming multiprocessors (README of h100-measured)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def model_cfg(name):
    c = json.load(open(os.path.join(MODELDIR, name + ".json")))
    h, nh = c["hidden_size"], c["num_attention_heads"]
    return dict(name=name, h=h, I=c["intermediate_size"], nh=nh, nkv=c.get("num_key_value_heads", nh),
                hd=c.get("head_dim") or h // nh, L=c["num_hidden_layers"], V=c["vocab_size"])


# --------------------------------------------------------------------------------------------
# 1. The current estimator (libanalytic/latency/estimate.c, afdkit's GQA forms, h100-sxm preset)
H100_PRESET = dict(peak=989.4e12, hbm=3.35e12, mfu=0.718, mbu=0.883, kernel_us=4.41, p=2.6)


def current_estimate_ms(m, tp, phase, b, s, d=H100_PRESET):
    csc, msm, e = d["mfu"] * d["peak"], d["mbu"] * d["hbm"], 2.0

    def op(W, Q, k=0):
        tc, tm = W / csc, Q / msm
        hi, lo = max(tc, tm), min(tc, tm)
        t = hi * (1 + (lo / hi) ** d["p"]) ** (1 / d["p"]) if hi > 0 else 0
        return t + k * d["kernel_us"] * 1e-6

    def gemm(n, k, mm, kk=1):
        return op(2 * n * k * mm, e * n * k + e * k * mm + e * n * mm, kk)

    h, hd, I = m["h"], m["hd"], m["I"] / tp
    n = b * s if phase == "prefill" else b
    norm = op(n * h, 4 * n * h) + op(n * h, 2 * n * h + 2 * n) + op(n, 4 * n) + op(n, 4 * n) + \
        op(n * h, 4 * n * h + 2 * n) + op(n * h, 4 * n * h + 2 * h)
    hq = m["nh"] / tp
    q, kv = hq * hd, math.ceil(m["nkv"] / tp) * hd
    pairs = b * s * (s + 1) / 2 if phase == "prefill" else b * s
    att = gemm(n, h, q) + gemm(n, h, kv, 0) + gemm(n, h, kv, 0) + \
        op(3.5 * n * (q + kv), e * n * (8.5 * (q + kv) + 2 * hd))
    if phase == "prefill":
        att += op(4 * pairs * q + 5 * pairs * hq, e * (2 * n * q + 2 * n * kv))
    else:
        att += op(0, 2 * e * b * kv) + op(4 * pairs * q + 5 * pairs * hq, e * (2 * b * q + 2 * pairs * kv))
    att += gemm(n, q, h)
    mlp = gemm(n, h, I) + op(5 * n * I, 2 * e * n * I) + gemm(n, h, I, 0) + op(n * I, 3 * e * n * I) + \
        gemm(n, I, h) + op(n * h, 3 * e * n * h)
    head = gemm(b, h, m["V"] / tp)
    return (m["L"] * (2 * norm + att + mlp) + head) * 1e3


# --------------------------------------------------------------------------------------------
# 2. The kernel model
# Parameters (times in seconds, rates in B/s or FLOP/s).  DEFAULT holds the h100-sxm fit of
# `python3 model.py report` (all data, rounded to 4 digits); fit_all() refits them.
DEFAULT = dict(
    f=3.325e-06,        # per-kernel floor in a CUDA graph (launch gap + minimal kernel)
    c_iso=2.111e-05,     # extra time of an isolated, event-timed GEMM call (CPU dispatch) over f
    c_iso_a=3.211e-05,   # the same for an isolated SDPA call
    R_g=761100000000000.0,      # GEMM tensor-core rate (FLOP/s) at full waves
    B_g=3045000000000.0,     # GEMM weight-streaming bandwidth with all SMs busy (B/s)
    p_g=7.33,         # smooth roofline exponent of GEMMs
    tile_n=64,       # skinny-GEMM tile width along the output features (occupancy)
    occ_sm=102,    # CTAs that saturate HBM on a skinny GEMM
    occ_g=0.192,       # exponent of the occupancy
    R_a=690600000000000.0,      # flash attention rate, causal prefill (FLOP/s)
    k_tail=0.8139,      # prefill attention's tail-wave factor
    a_cta=5.274e-06,    # per (head, 128-query tile) cost of prefill attention, spread over SMs
    B_a=3019000000000.0,     # decode attention KV streaming bandwidth (B/s)
    b_cta=45470000000.0,      # decode attention bandwidth of one (sequence, kv head) CTA (B/s)
    p_a=9.771,         # smooth max exponent of decode attention
    B_e=1770000000000.0,      # elementwise kernel bandwidth (B/s, bytes read + written)
    c_cpu=1.034e-05,     # eager: CPU dispatch per PyTorch op
    g_eager=1.211e-06,    # eager: extra GPU gap per kernel over the graph
)


def pnorm(a, b, p):
    hi, lo = max(a, b), min(a, b)
    return hi * (1 + (lo / hi) ** p) ** (1 / p) if hi > 0 else 0.0


def gemm_core(P, T, k, n):
    """GEMM time above the floor: the smooth roofline of tensor-core work (wave-quantised) and of
    streaming the weight (occupancy of skinny tiles)."""
    flops = 2.0 * T * k * n
    byts = 2.0 * (k * n + T * k + T * n)
    eff = 1.0  # cuBLAS picks tiles that avoid wave quantisation (gemm.csv: 730-820 TFLOP/s from 512 tokens up)
    tc = flops / (P["R_g"] * eff)
    ctas = math.ceil(n / P["tile_n"])
    occ = min(1.0, ctas / P["occ_sm"]) ** P["occ_g"]
    tm = byts / (P["B_g"] * occ)
    return pnorm(tc, tm, P["p_g"])


def gemm_graph(P, T, k, n):
    return P["f"] + gemm_core(P, T, k, n)


def gemm_iso(P, T, k, n):
    return P["f"] + P["c_iso"] + gemm_core(P, T, k, n)


def attn_prefill_core(P, nh, hd, s):
    # causal flash attention of one sequence: QK^T and PV over the s(s+1)/2 causal pairs
    flops = 4.0 * nh * hd * s * (s + 1) / 2
    ctas = nh * math.ceil(s / 128)
    # the last wave's tail: one CTA's mean duration, k_tail of it (fewer heads, fewer CTAs, longer tail)
    return flops / P["R_a"] * (1 + P["k_tail"] * SMS / ctas) + ctas * P["a_cta"] / SMS


def attn_decode_core(P, b, nkv, hd, ctx):
    kvb = 2.0 * b * nkv * ctx * hd * 2
    tm = kvb / P["B_a"]
    tl = ctx * hd * 4 / P["b_cta"]  # one CTA streams its sequence's K and V for one kv head
    return pnorm(tm, tl, P["p_a"])


def ew(P, byts):
    return P["f"] + byts / P["B_e"]


def forward_kernels(P, m, tp, phase, b, s):
    """The kernels of one layer (list of (name, seconds)) as measure.py's minimal Llama launches
    them, unfused: F.rms_norm (1 kernel), fused QKV GEMM, rotary as 5 elementwise kernels for q and
    5 for k (mul cos, neg, cat, mul sin, add), decode: 2 KV-cache copies; SDPA; prefill: the
    attention output's transpose copy; o_proj GEMM; residual add; rms_norm; gate_up GEMM; silu;
    mul; down GEMM; residual add."""
    h, hd = m["h"], m["hd"]
    nh, nkv, I = m["nh"] // tp, max(1, m["nkv"] // tp), m["I"] // tp
    q, kv = nh * hd, nkv * hd
    n = b * s if phase == "prefill" else b
    E = 2.0  # bf16
    K = []
    K.append(("rmsnorm", ew(P, E * 2 * n * h)))
    K.append(("qkv", gemm_graph(P, n, h, q + 2 * kv)))
    for X in (n * q, n * kv):  # rope of q then k: mul, neg(half), cat, mul, add
        K += [("rope_mul", ew(P, E * 2 * X)), ("rope_neg", ew(P, E * X)), ("rope_cat", ew(P, E * 2 * X)),
              ("rope_mul", ew(P, E * 2 * X)), ("rope_add", ew(P, E * 3 * X))]
    if phase == "decode":
        K += [("k_write", ew(P, E * 2 * b * kv)), ("v_write", ew(P, E * 2 * b * kv))]
        K.append(("attention", P["f"] + attn_decode_core(P, b, nkv, hd, s)))
    else:
        K.append(("attention", P["f"] + attn_prefill_core(P, nh, hd, s) * b))
        K.append(("attn_out_copy", ew(P, E * 2 * n * q)))
    K.append(("o_proj", gemm_graph(P, n, q, h)))
    K.append(("add", ew(P, E * 3 * n * h)))
    K.append(("rmsnorm", ew(P, E * 2 * n * h)))
    K.append(("gate_up", gemm_graph(P, n, h, 2 * I)))
    K.append(("silu", ew(P, E * 2 * n * I)))
    K.append(("mul", ew(P, E * 3 * n * I)))
    K.append(("down", gemm_graph(P, n, I, h)))
    K.append(("add", ew(P, E * 3 * n * h)))
    return K


# PyTorch ops per layer that cost CPU dispatch in eager mode (views, splits and slices included)
EAGER_OPS = {"decode": 40, "prefill": 42}


def head_time(P, m, tp, b):
    return ew(P, 2.0 * 2 * b * m["h"]) + gemm_graph(P, b, m["h"], m["V"] // tp)


def forward_ms(P, m, tp, phase, b, s):
    layer = sum(t for _, t in forward_kernels(P, m, tp, phase, b, s))
    return (m["L"] * layer + head_time(P, m, tp, 1 if phase == "prefill" else b)) * 1e3


def eager_ms(P, m, tp, phase, b, s):
    ks = forward_kernels(P, m, tp, phase, b, s)
    gpu = m["L"] * (sum(t for _, t in ks) + len(ks) * P["g_eager"])
    cpu = m["L"] * EAGER_OPS[phase] * P["c_cpu"]
    return max(gpu, cpu) * 1e3


# --------------------------------------------------------------------------------------------
# 3. Fitting (pure Python Nelder-Mead on log-parameters; loss on log(pred/meas))
def nelder_mead(fun, x0, step=0.1, iters=1500, tol=1e-9):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0) for j in range(n)] for i in range(n)]
    vals = [fun(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol * (abs(vals[0]) + 1e-12):
            break
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = fun(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = fun(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = fun(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = fun(pts[i])
    i = min(range(n + 1), key=lambda i: vals[i])
    return pts[i], vals[i]


def huber(r, d=0.1):
    a = abs(r)
    return r * r if a <= d else d * (2 * a - d)


def fit(P, names, resid, restarts=2, **kw):
    """Fit the parameters `names` of P (in log space) minimising sum huber(resid(P)); returns P."""
    P = dict(P)
    x = [math.log(P[k]) for k in names]

    def fun(x):
        Q = dict(P)
        for k, v in zip(names, x):
            Q[k] = math.exp(v)
        return sum(huber(r) for r in resid(Q))
    for _ in range(restarts):
        x, v = nelder_mead(fun, x, **kw)
    for k, v in zip(names, x):
        P[k] = math.exp(v)
    return P


def gemm_rows(exclude=lambda r: False):
    out = []
    for r in rows(os.path.join(H100, "gemm.csv")):
        if r["note"] or exclude(r):
            continue
        out.append((r, int(r["tokens"]), int(r["k"]), int(r["n"]), float(r["ms_median"]) * 1e-3))
    return out


def gemm_resid(G):
    return lambda P: [math.log(gemm_iso(P, T, k, n) / t) for _, T, k, n, t in G]


def attn_rows(exclude=lambda r: False):
    pre, dec = [], []
    for r in rows(os.path.join(H100, "attention_prefill.csv")):
        if not exclude(r):
            pre.append((r, int(r["q_heads"]), int(r["head_dim"]), int(r["seq"]), float(r["ms_median"]) * 1e-3))
    for r in rows(os.path.join(H100, "attention_decode.csv")):
        if not exclude(r):
            dec.append((r, int(r["batch"]), int(r["kv_heads"]), int(r["head_dim"]), int(r["ctx"]),
                        float(r["ms_median"]) * 1e-3))
    return pre, dec


def attn_iso(P, core):
    return P["f"] + P["c_iso_a"] + core


def attn_resid(pre, dec):
    return lambda P: [math.log(attn_iso(P, attn_prefill_core(P, nh, hd, s)) / t) for _, nh, hd, s, t in pre] + \
        [math.log(attn_iso(P, attn_decode_core(P, b, nkv, hd, c)) / t) for _, b, nkv, hd, c, t in dec]


def forward_rows(exclude=lambda r: False):
    out = []
    for r in rows(os.path.join(H100, "forward.csv")):
        if exclude(r):
            continue
        out.append(dict(r=r, m=model_cfg(r["model"]), tp=int(r["tp"]), phase=r["phase"], b=int(r["batch"]),
                        s=int(r["tokens"]), compute=float(r["ms"]) + float(r["lm_head_ms"]),
                        ms=float(r["ms"]), eager=float(r["eager_ms"]), head=float(r["lm_head_ms"])))
    return out


def forward_resid(F):
    return lambda P: [math.log(forward_ms(P, x["m"], x["tp"], x["phase"], x["b"], x["s"]) / x["compute"]) for x in F]


def eager_resid(F):
    return lambda P: [math.log((eager_ms(P, x["m"], x["tp"], x["phase"], x["b"], x["s"])) / x["eager"]) for x in F]


GEMM_P = ["c_iso", "R_g", "B_g", "p_g", "occ_sm", "occ_g"]
ATTN_P = ["c_iso_a", "R_a", "a_cta", "k_tail", "B_a", "b_cta", "p_a"]
FWD_P = ["f", "B_e"]
EAGER_P = ["c_cpu", "g_eager"]


def fit_all(exclude=lambda r: False, P0=None, quiet=True):
    """Fit in stages: GEMMs on gemm.csv, attention on attention_*.csv (both with their isolated-call
    offset), then the kernel floor f and elementwise bandwidth B_e on forward.csv (compute_ms),
    then the eager dispatch on eager_ms.  `exclude(row)` drops rows of every file (leave-one-out)."""
    P = dict(P0 or DEFAULT)
    P = fit(P, GEMM_P, gemm_resid(gemm_rows(exclude)), restarts=2)
    pre, dec = attn_rows(exclude)
    P = fit(P, ATTN_P, attn_resid(pre, dec), restarts=2)
    Cg, Ca = P["f"] + P["c_iso"], P["f"] + P["c_iso_a"]
    F = forward_rows(exclude)
    P = fit(P, FWD_P, forward_resid(F), restarts=2)
    P["c_iso"], P["c_iso_a"] = Cg - P["f"], Ca - P["f"]
    P = fit(P, EAGER_P, eager_resid(F), restarts=2)
    return P


# --------------------------------------------------------------------------------------------
# 4. Reports
def errs(vals):
    a = sorted(abs(v) for v in vals)
    return (statistics.median(a) if a else float("nan")), (a[-1] if a else float("nan"))


def forward_table(P, F, title):
    out = ["| model | tp | phase | batch | tokens | measured ms | estimate ms | error | afdkit now | now error |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    res = {"decode": [], "prefill": []}
    cur = {"decode": [], "prefill": []}
    for x in F:
        e = forward_ms(P, x["m"], x["tp"], x["phase"], x["b"], x["s"])
        c = current_estimate_ms(x["m"], x["tp"], x["phase"], x["b"], x["s"])
        r, rc = e / x["compute"] - 1, c / x["compute"] - 1
        res[x["phase"]].append(r)
        cur[x["phase"]].append(rc)
        out.append("| %s | %d | %s | %d | %d | %.3f | %.3f | %+.1f%% | %.3f | %+.1f%% |" % (
            x["r"]["model"], x["tp"], x["phase"], x["b"], x["s"], x["compute"], e, 100 * r, c, 100 * rc))
    summ = []
    for ph in ("decode", "prefill"):
        if res[ph]:
            m1, w1 = errs(res[ph])
            m0, w0 = errs(cur[ph])
            summ.append("%s: median |error| %.1f%%, worst %.1f%% (afdkit now: %.1f%% / %.1f%%)" % (
                ph, 100 * m1, 100 * w1, 100 * m0, 100 * w0))
    return "### " + title + "\n\n" + "\n".join(out) + "\n\n" + "; ".join(summ) + "\n", res


def loo(quiet=False):
    """Leave one model out.  strict: drop every row of that model (GEMM, attention, forward);
    forward-only: drop only its forward.csv rows (its kernel shapes stay in the fit)."""
    out = []
    for held, pred in (("llama-3.1-8b", lambda r: r["model"] == "llama-3.1-8b"),
                       ("llama-3.1-70b", lambda r: r["model"] == "llama-3.1-70b")):
        for mode in ("strict", "forward-only"):
            if mode == "strict":
                ex = pred
            else:
                ex = lambda r, pred=pred: pred(r) and "phase" in r
            P = fit_all(ex)
            F = [x for x in forward_rows() if pred(x["r"])]
            t, res = forward_table(P, F, "held out: %s (%s)" % (held, mode))
            out.append((held, mode, P, t, res))
    return out


def format_params(P):
    unit = dict(f=("us", 1e6), c_iso=("us", 1e6), c_iso_a=("us", 1e6), R_g=("TFLOP/s", 1e-12),
                B_g=("TB/s", 1e-12), R_a=("TFLOP/s", 1e-12), B_a=("TB/s", 1e-12), b_cta=("GB/s", 1e-9),
                B_e=("TB/s", 1e-12), c_cpu=("us", 1e6), g_eager=("us", 1e6), a_cta=("us", 1e6))
    s = []
    for k, v in P.items():
        u, sc = unit.get(k, ("", 1))
        s.append("%s = %.4g %s" % (k, v * sc, u))
    return s


# --------------------------------------------------------------------------------------------
# 5. All-reduce (Vidur's NCCL measurements in one DGX node, 2-8 GPUs, launch included)
def allreduce_rows(gpu):
    d = {}
    for r in rows(os.path.join(VIDUR, "network/%s_dgx.all_reduce.csv" % gpu)):
        p = int(r["num_workers"])
        if int(r["devices_per_node"]) != p:  # keep one node (NVLink/NVSwitch) only
            continue
        d.setdefault(p, []).append((int(r["size"]), float(r["time_stats.all_reduce.median"]) * 1e-3))
    for p in d:
        d[p].sort()
    return d


def ar_weights(pts):
    # equal weight per octave of message size (the sizes are spaced linearly: 8 KiB apart)
    octs = {}
    for S, _ in pts:
        octs[int(math.log2(S))] = octs.get(int(math.log2(S)), 0) + 1
    return [1.0 / octs[int(math.log2(S))] for S, _ in pts]


def ar_ring(P, p, S):
    return 2 * (p - 1) * P["alpha"] + 2.0 * (p - 1) / p * S / P["B"]


def ar_tree(P, p, S):
    return 2 * math.ceil(math.log2(p)) * P["alpha"] + 2.0 * S / P["B"]


def ar_switch(P, p, S):
    # NVSwitch: one latency whatever the world size, ring bandwidth term
    return P["alpha"] + 2.0 * (p - 1) / p * S / P["B"]


def isotonic(y, w=None):
    """Pool-adjacent-violators: the best non-decreasing fit to y (least squares)."""
    w = w or [1.0] * len(y)
    blocks = []
    for yi, wi in zip(y, w):
        blocks.append([yi * wi, wi, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            a = blocks.pop()
            blocks[-1] = [blocks[-1][0] + a[0], blocks[-1][1] + a[1], blocks[-1][2] + a[2]]
    out = []
    for s_, w_, n in blocks:
        out += [s_ / w_] * n
    return out


def ar_fit(gpu):
    """Per world size: t = L + S / Beff (fitted); ring and tree with one (alpha, B) over 2-8 GPUs.
    Returns rows for the report and the measured curve's non-monotone steps."""
    d = allreduce_rows(gpu)
    out = {}

    def wres(form, ps):
        def r(P):
            v = []
            for p in ps:
                w = ar_weights(d[p])
                for (S, t), wi in zip(d[p], w):
                    v.append(math.sqrt(wi) * math.log(form(P, p, S) / t))
            return v
        return r
    per = {}
    for p in sorted(d):
        P = fit(dict(L=20e-6, Beff=100e9), ["L", "Beff"],
                wres(lambda P, p, S: P["L"] + S / P["Beff"], [p]), restarts=2)
        per[p] = P
    ring = fit(dict(alpha=3e-6, B=200e9), ["alpha", "B"], wres(ar_ring, sorted(d)), restarts=2)
    tree = fit(dict(alpha=3e-6, B=200e9), ["alpha", "B"], wres(ar_tree, sorted(d)), restarts=2)
    switch = fit(dict(alpha=30e-6, B=200e9), ["alpha", "B"], wres(ar_switch, sorted(d)), restarts=2)
    for p in sorted(d):
        pts = d[p]
        small = [(S, t) for S, t in pts if S <= 1 << 20]
        big = [(S, t) for S, t in pts if S > 1 << 20]
        row = {}
        for name, form, P in (("per-size", lambda P, p, S: P["L"] + S / P["Beff"], per[p]),
                              ("ring", ar_ring, ring), ("tree", ar_tree, tree), ("switch", ar_switch, switch)):
            es = [form(P, p, S) / t - 1 for S, t in small]
            eb = [form(P, p, S) / t - 1 for S, t in big]
            row[name] = (errs(es), errs(eb))
        # the measured curve's non-monotone steps: the error of the best non-decreasing curve
        # (isotonic regression of log t), the floor under any latency + bandwidth model's error
        iso = isotonic([math.log(t) for _, t in pts])
        e_iso = [math.exp(a) / t - 1 for a, (S, t) in zip(iso, pts)]
        row["nonmono"] = (errs([e for e, (S, t) in zip(e_iso, pts) if S <= 1 << 20]),
                          errs([e for e, (S, t) in zip(e_iso, pts) if S > 1 << 20]))
        out[p] = row
    return per, ring, tree, switch, out


# --------------------------------------------------------------------------------------------
# 6. A100 from Vidur's per-module times (vLLM kernels: fused QKV, fused gate_up, silu_and_mul,
#    rotary in place on q and k); every op is an isolated, event-timed kernel: offset c_iso.
VIDUR_OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj",
             "input_layernorm", "mlp_act", "add", "attn_rope")


def vidur_rows(gpu):
    out = []
    d = os.path.join(VIDUR, "compute", gpu)
    for fn in sorted(os.listdir(d)):
        for r in rows(os.path.join(d, fn)):
            nh, nkv, h, I = (int(float(r[k])) for k in ("n_head", "n_kv_head", "n_embd", "n_expanded_embd"))
            T, tp = int(float(r["num_tokens"])), int(float(r["num_tensor_parallel_workers"]))
            hd = h // nh
            q, kv = nh * hd // tp, max(1, nkv // tp) * hd
            shape = {"attn_pre_proj": ("g", T, h, q + 2 * kv), "attn_post_proj": ("g", T, q, h),
                     "mlp_up_proj": ("g", T, h, 2 * I // tp), "mlp_down_proj": ("g", T, I // tp, h),
                     "input_layernorm": ("e", 4.0 * T * h), "mlp_act": ("e", 6.0 * T * I / tp),
                     "add": ("e", 6.0 * T * h), "attn_rope": ("e", 4.0 * T * (q + kv))}
            for op in VIDUR_OPS:
                t = float(r["time_stats.%s.median" % op]) * 1e-3
                if t > 0:
                    out.append((fn.split(".")[0], tp, T, op, shape[op], t))
    return out


def vidur_pred(P, s):
    if s[0] == "g":
        return P["f"] + P["c_iso"] + gemm_core(P, *s[1:])
    return P["f"] + P["c_iso"] + s[1] / P["B_e"]


def vidur_fit(gpu, P0=None):
    R = vidur_rows(gpu)
    P = dict(P0 or DEFAULT)
    res = lambda P: [math.log(vidur_pred(P, s) / t) for *_, s, t in R]
    P = fit(P, ["c_iso", "R_g", "B_g", "p_g", "B_e"], res, restarts=2)
    per = {}
    for (mname, tp, T, op, s, t) in R:
        per.setdefault(op, []).append(vidur_pred(P, s) / t - 1)
    return P, {op: (statistics.median(v), errs(v)[0], errs(v)[1], len(v)) for op, v in per.items()}


def vidur_ew_classes(gpu, f=0.0):
    """Elementwise bandwidth per op class: median of bytes / (t - f) over Vidur's rows."""
    out = {}
    for (mname, tp, T, op, s, t) in vidur_rows(gpu):
        if s[0] == "e" and t > f and T >= 256:
            out.setdefault(op, []).append(s[1] / (t - f))
    return {op: statistics.median(v) for op, v in out.items()}


def main(argv):
    what = argv[1] if len(argv) > 1 else "report"
    out = []
    if what in ("report", "all"):
        P = fit_all()
        out.append("## Fitted parameters (h100-sxm, all data)\n\n" + "\n".join("- " + s for s in format_params(P)) + "\n")
        t, _ = forward_table(P, forward_rows(), "forward.csv, fitted on everything")
        out.append(t)
        out.append("### eager_ms\n\n| model | tp | phase | batch | tokens | eager ms | model | error |\n|---|---|---|---|---|---|---|---|")
        for x in forward_rows():
            e = eager_ms(P, x["m"], x["tp"], x["phase"], x["b"], x["s"])
            out.append("| %s | %d | %s | %d | %d | %.2f | %.2f | %+.1f%% |" % (
                x["r"]["model"], x["tp"], x["phase"], x["b"], x["s"], x["eager"], e, 100 * (e / x["eager"] - 1)))
        out.append("")
        for held, mode, Q, t, res in loo():
            out.append(t)
            out.append("refit: f %.2f us, B_e %.2f TB/s, R_g %.0f TFLOP/s, B_g %.2f TB/s, R_a %.0f TFLOP/s\n" % (
                Q["f"] * 1e6, Q["B_e"] * 1e-12, Q["R_g"] * 1e-12, Q["B_g"] * 1e-12, Q["R_a"] * 1e-12))
    if what in ("allreduce", "all", "report"):
        for g in ("a100", "h100"):
            per, ring, tree, sw, rowsd = ar_fit(g)
            out.append("### all-reduce %s (one node)\n\nring: alpha %.2f us per step x 2(p-1), B %.0f GB/s; "
                       "tree: alpha %.2f us x 2 log2 p, B %.0f GB/s; switch: L %.1f us, B %.0f GB/s\n" % (
                           g, ring["alpha"] * 1e6, ring["B"] / 1e9, tree["alpha"] * 1e6, tree["B"] / 1e9,
                           sw["alpha"] * 1e6, sw["B"] / 1e9))
            out.append("| p | L_p us | Beff_p GB/s | per-p <=1MB med/worst | >1MB | ring <=1MB | >1MB | tree <=1MB | >1MB "
                       "| switch <=1MB | >1MB | non-monotone floor <=1MB | >1MB |\n|" + "---|" * 13)
            for p, r in rowsd.items():
                cells = []
                for k in ("per-size", "ring", "tree", "switch", "nonmono"):
                    (a, b), (c, d) = r[k]
                    cells += ["%.0f%%/%.0f%%" % (100 * a, 100 * b), "%.0f%%/%.0f%%" % (100 * c, 100 * d)]
                out.append("| %d | %.1f | %.0f | %s |" % (p, per[p]["L"] * 1e6, per[p]["Beff"] / 1e9, " | ".join(cells)))
            out.append("")
    if what in ("vidur", "all"):
        for g in ("a100", "h100"):
            P, per = vidur_fit(g)
            out.append("### Vidur per-module %s: R_g %.0f TFLOP/s, B_g %.2f TB/s, p_g %.3g, offset %.1f us, B_e %.2f TB/s\n" % (
                g, P["R_g"] * 1e-12, P["B_g"] * 1e-12, P["p_g"], (P["f"] + P["c_iso"]) * 1e6, P["B_e"] * 1e-12))
            for op, v in per.items():
                out.append("- %s: signed median %+.1f%%, median |err| %.1f%%, worst %.0f%% (%d rows)" % (op, 100 * v[0], 100 * v[1], 100 * v[2], v[3]))
            cls = vidur_ew_classes(g, 2.9e-6)
            out.append("- elementwise bandwidth per class (>= 256 tokens): " + ", ".join("%s %.2f TB/s" % (k, v * 1e-12) for k, v in cls.items()) + "\n")
    if what == "current":
        for x in forward_rows():
            print(x["r"]["model"], x["tp"], x["phase"], x["b"], x["s"],
                  "%.6f" % current_estimate_ms(x["m"], x["tp"], x["phase"], x["b"], x["s"]))
        return
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv)
