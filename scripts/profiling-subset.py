#!/usr/bin/env python3
"""profiling-subset.py: the subset of Vidur's measured kernel times bundled in
data/profiling/ (rows and columns selected, values copied unchanged).

Usage: scripts/profiling-subset.py VIDUR_PROFILING_DIR OUT_DIR
VIDUR_PROFILING_DIR holds compute/{a100,h100}/MODEL.mlp.csv and
network/{a100,h100}_dgx.all_reduce.csv from microsoft/vidur's data/profiling/.
"""
import csv
import os
import sys

TOKENS = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}
# 2 KiB to 64 MiB, about two per octave of message size
SIZES = {2048 + 8192 * ((1 << k) - 1) for k in range(8)} | {1 << k for k in range(20, 27)}
KEEP = ["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp",
        "num_tokens", "num_tensor_parallel_workers"] + [
        "time_stats.%s.median" % op for op in
        ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_act", "mlp_down_proj")]
NET = ["num_workers", "devices_per_node", "size", "time_stats.all_reduce.median"]
MODELS = {"CodeLlama-34b-Instruct-hf": "codellama-34b", "Llama-2-70b-hf": "llama-2-70b"}


def subset(src, dst, cols, keep):
    with open(src, newline="") as f:
        rows = [r for r in csv.DictReader(f) if keep(r)]
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([r[c] for c in cols])


def main():
    src, out = sys.argv[1], sys.argv[2]
    for dev in ("a100", "h100"):
        for model, short in MODELS.items():
            subset(os.path.join(src, "compute", dev, model + ".mlp.csv"),
                   os.path.join(out, "%s.%s.csv" % (dev, short)), KEEP,
                   lambda r: int(r["num_tokens"]) in TOKENS)
        subset(os.path.join(src, "network", dev + "_dgx.all_reduce.csv"),
               os.path.join(out, "%s.all_reduce.csv" % dev), NET,
               lambda r: int(r["size"]) in SIZES and r["num_workers"] == r["devices_per_node"]
               and r["rank"] == "0")


main()
