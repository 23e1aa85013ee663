"""Measure a model's kernels and forward passes on the local GPU for afdkit calibrate.

    python -m afdkit.profile --model CONFIG --tp T --out DIR [--quick]
    python3 python/afdkit/profile.py ...     (the same, without installing the package)

CONFIG is a Hugging Face config.json of a dense Llama-family decoder; the
rows name it by its path (which calibrate --forward reads), or by --name (an
afdkit model preset of the same dimensions).  T is the tensor-parallel size: every shape is one GPU's
shard at T (heads, key/value heads and the MLP's intermediate size divided by
T), timed on one GPU without the all-reduce, which afdkit models apart.

DIR receives four CSV files in the formats of the H100 measurements bundled
with afdkit's sources (docs/profile.md):

    gemm.csv               model,tp,op,tokens,k,n,ms_median,ms_min,kernel,note
    attention_prefill.csv  model,tp,q_heads,kv_heads,head_dim,seq,ms_median,ms_min
    attention_decode.csv   model,tp,q_heads,kv_heads,head_dim,batch,ctx,kv_bytes,ms_median,ms_min
    forward.csv            model,tp,layers,phase,batch,tokens,ms,eager_ms,lm_head_ms

forward.csv is what ``afdkit calibrate --forward FILE --device D`` reads.

PyTorch and a CUDA GPU are optional dependencies of afdkit: without them this
module says so and exits with status 2.  The CSV writing and the shapes need
neither (they are what the tests exercise).
"""

import argparse
import csv
import json
import math
import os
import statistics
import sys

GEMM_COLUMNS = ["model", "tp", "op", "tokens", "k", "n", "ms_median", "ms_min", "kernel", "note"]
PREFILL_COLUMNS = ["model", "tp", "q_heads", "kv_heads", "head_dim", "seq", "ms_median", "ms_min"]
DECODE_COLUMNS = ["model", "tp", "q_heads", "kv_heads", "head_dim", "batch", "ctx", "kv_bytes",
                  "ms_median", "ms_min"]
FORWARD_COLUMNS = ["model", "tp", "layers", "phase", "batch", "tokens", "ms", "eager_ms",
                   "lm_head_ms"]

# The grids: token counts of the GEMMs, prompt lengths, decode (batch, context)
# pairs.  --quick keeps a subset so that a run stays well under 3 minutes.
GEMM_TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
PREFILL_SEQ = [128, 256, 512, 1024, 2048, 4096, 8192]
DECODE_POINTS = [(1, 512), (1, 2048), (1, 8192), (8, 1024), (32, 1024), (64, 2048), (128, 1024),
                 (256, 512)]
FORWARD_DECODE = [(1, 1024), (1, 8192), (8, 1024), (32, 1024), (64, 2048), (128, 1024)]
FORWARD_PREFILL = [128, 512, 2048, 8192]
QUICK = {"gemm": [1, 8, 64, 512, 4096], "prefill": [512, 2048], "decode": DECODE_POINTS[:4],
         "fwd_decode": FORWARD_DECODE[:3], "fwd_prefill": FORWARD_PREFILL[:2]}


class ProfileError(Exception):
    """A usage or input error: the message is printed and the exit status is 2."""


def load_config(path):
    """The dimensions of a dense Llama-family decoder from its config.json."""
    try:
        with open(path, encoding="utf-8") as f:
            c = json.load(f)
    except (OSError, ValueError) as e:
        raise ProfileError("%s: %s" % (path, e))
    need = ["hidden_size", "num_attention_heads", "intermediate_size", "num_hidden_layers",
            "vocab_size"]
    missing = [k for k in need if not isinstance(c.get(k), int) or c.get(k) <= 0]
    if missing:
        raise ProfileError("%s: no positive integer %s" % (path, ", ".join(missing)))
    heads = c["num_attention_heads"]
    return {
        "hidden": c["hidden_size"],
        "heads": heads,
        "kv_heads": c.get("num_key_value_heads") or heads,
        "head_dim": c.get("head_dim") or c["hidden_size"] // heads,
        "intermediate": c["intermediate_size"],
        "layers": c["num_hidden_layers"],
        "vocab": c["vocab_size"],
        "rms_eps": c.get("rms_norm_eps", 1e-5),
    }


def shard(cfg, tp):
    """One GPU's share at tensor-parallel size tp: query heads, key/value heads
    (never below one per GPU), MLP columns and vocabulary slice."""
    if tp < 1 or cfg["heads"] % tp or cfg["intermediate"] % tp:
        raise ProfileError("--tp %d does not divide the %d heads and the intermediate size %d"
                           % (tp, cfg["heads"], cfg["intermediate"]))
    return {
        "q_heads": cfg["heads"] // tp,
        "kv_heads": max(1, cfg["kv_heads"] // tp),
        "head_dim": cfg["head_dim"],
        "hidden": cfg["hidden"],
        "inter": cfg["intermediate"] // tp,
        "vocab": -(-cfg["vocab"] // tp),
    }


def gemm_shapes(cfg, tp):
    """The four GEMMs of one layer's shard as (op, k, n): F.linear of k inputs to n outputs."""
    s = shard(cfg, tp)
    q, kv = s["q_heads"] * s["head_dim"], s["kv_heads"] * s["head_dim"]
    return [("qkv", s["hidden"], q + 2 * kv), ("o_proj", q, s["hidden"]),
            ("gate_up", s["hidden"], 2 * s["inter"]), ("down", s["inter"], s["hidden"])]


def summarise(times_ms):
    """(median, minimum) of a list of times."""
    return statistics.median(times_ms), min(times_ms)


def _fmt(v):
    if isinstance(v, float):
        return repr(round(v, 6)) if math.isfinite(v) else "nan"
    return str(v)


def write_csv(path, columns, rows):
    """Write rows (dicts keyed by the columns) as a CSV with that header."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([_fmt(r.get(c, "")) for c in columns])


def write_all(out, model, tp, gemm, prefill, decode, forward):
    """Write the four CSVs into directory out.  Each list holds dicts with the
    measured columns; model and tp are filled in."""
    os.makedirs(out, exist_ok=True)
    files = [("gemm.csv", GEMM_COLUMNS, gemm), ("attention_prefill.csv", PREFILL_COLUMNS, prefill),
             ("attention_decode.csv", DECODE_COLUMNS, decode),
             ("forward.csv", FORWARD_COLUMNS, forward)]
    for name, cols, rows in files:
        write_csv(os.path.join(out, name), cols, [dict(r, model=model, tp=tp) for r in rows])
    return [os.path.join(out, name) for name, _, _ in files]


# ---------------------------------------------------------------- on the GPU


def _need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ProfileError("PyTorch is not installed: the profiler needs PyTorch with CUDA and a "
                           "CUDA GPU (pip install torch); nothing measured")
    if not torch.cuda.is_available():
        raise ProfileError("PyTorch sees no CUDA GPU (torch.cuda.is_available() is False); "
                           "nothing measured")
    return torch


class _Timer:
    """CUDA-event timing of a callable: n timed calls after warm-ups."""

    def __init__(self, torch):
        self.torch = torch

    def __call__(self, fn, n, warm=3):
        torch = self.torch
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        out = []
        for _ in range(n):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b))
        return out


def _copies(torch, shape, dtype, min_bytes=256 << 20):
    """Enough copies of a random tensor that cycling through them never finds
    one in the L2 cache (at least min_bytes in all)."""
    one = math.prod(shape) * torch.finfo(dtype).bits // 8
    n = max(2, -(-min_bytes // one))
    return [torch.randn(shape, device="cuda", dtype=dtype) for _ in range(n)]


def _gemms(torch, timer, cfg, tp, tokens):
    F = torch.nn.functional
    rows = []
    for op, k, n in gemm_shapes(cfg, tp):
        ws = _copies(torch, (n, k), torch.bfloat16)
        for T in tokens:
            x = torch.randn(T, k, device="cuda", dtype=torch.bfloat16)
            i = [0]

            def call():
                i[0] = (i[0] + 1) % len(ws)
                F.linear(x, ws[i[0]])

            med, lo = summarise(timer(call, 25 if T <= 4096 else 10))
            rows.append({"op": op, "tokens": T, "k": k, "n": n, "ms_median": med, "ms_min": lo,
                         "kernel": "", "note": ""})
        del ws
    return rows


def _attention(torch, timer, cfg, tp, seqs, points):
    F = torch.nn.functional
    s = shard(cfg, tp)
    nh, nkv, hd = s["q_heads"], s["kv_heads"], s["head_dim"]
    bf = torch.bfloat16
    pre, dec = [], []
    for S in seqs:
        q = torch.randn(1, nh, S, hd, device="cuda", dtype=bf)
        k = torch.randn(1, nkv, S, hd, device="cuda", dtype=bf)
        v = torch.randn(1, nkv, S, hd, device="cuda", dtype=bf)
        med, lo = summarise(timer(lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True), 15))
        pre.append({"q_heads": nh, "kv_heads": nkv, "head_dim": hd, "seq": S, "ms_median": med,
                    "ms_min": lo})
    for b, ctx in points:
        q = torch.randn(b, nh, 1, hd, device="cuda", dtype=bf)
        k = torch.randn(b, nkv, ctx, hd, device="cuda", dtype=bf)
        v = torch.randn(b, nkv, ctx, hd, device="cuda", dtype=bf)
        med, lo = summarise(timer(lambda: F.scaled_dot_product_attention(
            q, k, v, enable_gqa=True), 25))
        dec.append({"q_heads": nh, "kv_heads": nkv, "head_dim": hd, "batch": b, "ctx": ctx,
                    "kv_bytes": 2 * b * nkv * ctx * hd * 2, "ms_median": med, "ms_min": lo})
    return pre, dec


def _decoder(torch, cfg, tp):
    """One GPU's shard of the model: per layer RMSNorm, fused QKV, rotary,
    attention over a KV cache, o_proj, residual, RMSNorm, gate/up, SiLU x up,
    down, residual (no embedding lookup, no LM head, no all-reduce)."""
    F = torch.nn.functional
    s = shard(cfg, tp)
    nh, nkv, hd, h, w = s["q_heads"], s["kv_heads"], s["head_dim"], s["hidden"], s["inter"]
    bf = torch.bfloat16
    layers = [{"qkv": torch.randn((nh + 2 * nkv) * hd, h, device="cuda", dtype=bf) * 0.02,
               "o": torch.randn(h, nh * hd, device="cuda", dtype=bf) * 0.02,
               "gu": torch.randn(2 * w, h, device="cuda", dtype=bf) * 0.02,
               "down": torch.randn(h, w, device="cuda", dtype=bf) * 0.02,
               "n1": torch.ones(h, device="cuda", dtype=bf),
               "n2": torch.ones(h, device="cuda", dtype=bf)} for _ in range(cfg["layers"])]
    eps = cfg["rms_eps"]

    def rms(x, g):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * g

    def rope(x, cos, sin):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(x, cos, sin, caches, pos):
        # x: [b, t, h]; caches: per layer (k, v) [b, nkv, ctx, hd]; pos: KV
        # positions written by this pass (t of them, from pos)
        b, t, _ = x.shape
        for L, (kc, vc) in zip(layers, caches):
            y = rms(x, L["n1"])
            qkv = F.linear(y, L["qkv"])
            q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
            q = rope(q.view(b, t, nh, hd).transpose(1, 2), cos, sin)
            k = rope(k.view(b, t, nkv, hd).transpose(1, 2), cos, sin)
            kc[:, :, pos:pos + t] = k
            vc[:, :, pos:pos + t] = v.view(b, t, nkv, hd).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, kc[:, :, :pos + t], vc[:, :, :pos + t],
                                               is_causal=t > 1, enable_gqa=True)
            x = x + F.linear(a.transpose(1, 2).reshape(b, t, nh * hd), L["o"])
            y = rms(x, L["n2"])
            g, u = F.linear(y, L["gu"]).chunk(2, dim=-1)
            x = x + F.linear(F.silu(g) * u, L["down"])
        return x

    return forward, s


def _forwards(torch, timer, cfg, tp, decode_points, prefill_seqs):
    F = torch.nn.functional
    forward, s = _decoder(torch, cfg, tp)
    bf = torch.bfloat16
    hd, nkv, h = s["head_dim"], s["kv_heads"], s["hidden"]
    head = torch.randn(s["vocab"], h, device="cuda", dtype=bf) * 0.02
    rows = []

    def one(phase, b, tokens):
        t = 1 if phase == "decode" else tokens
        ctx = tokens if phase == "decode" else tokens
        caches = [(torch.zeros(b, nkv, ctx, hd, device="cuda", dtype=bf),
                   torch.zeros(b, nkv, ctx, hd, device="cuda", dtype=bf))
                  for _ in range(cfg["layers"])]
        x = torch.randn(b, t, h, device="cuda", dtype=bf)
        cos = torch.ones(1, 1, t, hd, device="cuda", dtype=bf)
        sin = torch.zeros(1, 1, t, hd, device="cuda", dtype=bf)
        pos = ctx - t
        eager = summarise(timer(lambda: forward(x, cos, sin, caches, pos), 5, warm=2))[0]
        g = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            forward(x, cos, sin, caches, pos)  # warm-up on the side stream
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(g):
            forward(x, cos, sin, caches, pos)
        graph = summarise(timer(g.replay, 15 if phase == "decode" else 7))[0]
        last = torch.randn(b, h, device="cuda", dtype=bf)
        lm = summarise(timer(lambda: F.linear(last, head), 15))[0]
        del caches, g
        torch.cuda.empty_cache()
        return {"layers": cfg["layers"], "phase": phase, "batch": b, "tokens": tokens,
                "ms": graph, "eager_ms": eager, "lm_head_ms": lm}

    for b, ctx in decode_points:
        rows.append(one("decode", b, ctx))
    for S in prefill_seqs:
        rows.append(one("prefill", 1, S))
    return rows


def measure(cfg, tp, quick=False):
    """Every measurement, as the four lists write_all takes."""
    torch = _need_torch()
    timer = _Timer(torch)
    with torch.inference_mode():
        gemm = _gemms(torch, timer, cfg, tp, QUICK["gemm"] if quick else GEMM_TOKENS)
        pre, dec = _attention(torch, timer, cfg, tp, QUICK["prefill"] if quick else PREFILL_SEQ,
                              QUICK["decode"] if quick else DECODE_POINTS)
        fwd = _forwards(torch, timer, cfg, tp, QUICK["fwd_decode"] if quick else FORWARD_DECODE,
                        QUICK["fwd_prefill"] if quick else FORWARD_PREFILL)
    return gemm, pre, dec, fwd


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m afdkit.profile",
                                description="Measure GEMMs, attention kernels and whole forward "
                                            "passes of a model's TP shard on this GPU, as the "
                                            "CSVs afdkit calibrate reads.")
    p.add_argument("--model", required=True, help="config.json of the model")
    p.add_argument("--name", help="the model column (default: the config's absolute path, which "
                                  "calibrate --forward reads; or an afdkit model preset)")
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel size of the shard (1)")
    p.add_argument("--out", required=True, help="directory for the CSVs")
    p.add_argument("--quick", action="store_true", help="fewer points (about a minute)")
    a = p.parse_args(argv)
    try:
        cfg = load_config(a.model)
        shard(cfg, a.tp)
        gemm, pre, dec, fwd = measure(cfg, a.tp, a.quick)
    except ProfileError as e:
        print("afdkit.profile: %s" % e, file=sys.stderr)
        return 2
    name = a.name or os.path.abspath(a.model)
    for f in write_all(a.out, name, a.tp, gemm, pre, dec, fwd):
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
