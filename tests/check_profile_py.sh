#!/bin/sh
# The profiler (python/afdkit/profile.py) without a GPU: it refuses to run
# without PyTorch or CUDA (exit 2, one line saying which), its shapes are the
# TP shard's, and the CSVs it writes from given timings have the columns of
# the bundled H100 measurements and go through afdkit calibrate --forward.
set -u
srcdir=${srcdir:-.}
py=${PYTHON:-python3}
AFDKIT=${AFDKIT:-./afdkit}
command -v "$py" >/dev/null 2>&1 || { echo "SKIP: no Python 3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afdkit-profile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
prof=$srcdir/python/afdkit/profile.py
fail() { echo "FAIL: $*"; exit 1; }

# Llama-3.1-8B's dimensions (its config.json on Hugging Face)
cat > "$tmp/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
 "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
 "vocab_size": 128256, "rms_norm_eps": 1e-05, "max_position_embeddings": 131072,
 "torch_dtype": "bfloat16", "model_type": "llama", "head_dim": 128}
JSON

# 1. without PyTorch, or without a CUDA GPU: one line, exit 2, nothing written
if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    "$py" "$prof" --model "$tmp/config.json" --tp 1 --out "$tmp/none" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "exit $rc without PyTorch/CUDA, expected 2"
    grep -Eq '^afdkit.profile: (PyTorch is not installed|PyTorch sees no CUDA GPU)' "$tmp/err" ||
        fail "stderr: $(cat "$tmp/err")"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "more than one line on stderr"
    [ ! -e "$tmp/none" ] || fail "wrote $tmp/none without measuring"
fi
# a --tp that does not divide the heads: exit 2 before any measurement
"$py" "$prof" --model "$tmp/config.json" --tp 3 --out "$tmp/none" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q '^afdkit.profile: --tp 3 does not divide' "$tmp/err" || fail "--tp 3: $(cat "$tmp/err")"

# 2. the shapes and the CSVs from fixture timings (the first decode row of the
# bundled forward.csv, 7.3257 ms of layers and 0.4098 ms of LM head, and a
# prefill row), named by the config's path and by the preset's name
"$py" - "$prof" "$tmp" <<'PY' || fail "python fixture"
import csv, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("profile_under_test", sys.argv[1])
p = importlib.util.module_from_spec(spec)
spec.loader.exec_module(p)
tmp = sys.argv[2]
cfg = p.load_config(os.path.join(tmp, "config.json"))
# Llama-3.1-70B at TP 4, by hand: q 64/4 heads, kv 8/4, head_dim 128,
# intermediate 28672/4
cfg70 = dict(cfg, hidden=8192, heads=64, kv_heads=8, intermediate=28672, layers=80)
assert p.gemm_shapes(cfg70, 4) == [("qkv", 8192, (16 + 2 * 2) * 128), ("o_proj", 2048, 8192),
                                   ("gate_up", 8192, 2 * 7168), ("down", 7168, 8192)], p.gemm_shapes(cfg70, 4)
# more GPUs than key/value heads: one head per GPU
assert p.shard(cfg, 16)["kv_heads"] == 1
assert p.summarise([3.0, 1.0, 2.0, 10.0]) == (2.5, 1.0)
gemm = [{"op": "qkv", "tokens": 8, "k": 4096, "n": 6144, "ms_median": 0.038, "ms_min": 0.0362,
         "kernel": "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "note": ""}]
pre = [{"q_heads": 32, "kv_heads": 8, "head_dim": 128, "seq": 256, "ms_median": 0.040448,
        "ms_min": 0.038944}]
dec = [{"q_heads": 32, "kv_heads": 8, "head_dim": 128, "batch": 1, "ctx": 512,
        "kv_bytes": 2097152, "ms_median": 0.065312, "ms_min": 0.062944}]
fwd = [{"layers": 32, "phase": "decode", "batch": 1, "tokens": 1024, "ms": 7.3257,
        "eager_ms": 13.7928, "lm_head_ms": 0.4098},
       {"layers": 32, "phase": "prefill", "batch": 1, "tokens": 2048, "ms": 120.5,
        "eager_ms": 121.0, "lm_head_ms": 0.41}]
p.write_all(os.path.join(tmp, "path"), os.path.join(tmp, "config.json"), 1, gemm, pre, dec, fwd)
p.write_all(os.path.join(tmp, "preset"), "llama-3.1-8b", 1, gemm, pre, dec, fwd)
want = {"gemm.csv": "model,tp,op,tokens,k,n,ms_median,ms_min,kernel,note",
        "attention_prefill.csv": "model,tp,q_heads,kv_heads,head_dim,seq,ms_median,ms_min",
        "attention_decode.csv": "model,tp,q_heads,kv_heads,head_dim,batch,ctx,kv_bytes,ms_median,ms_min",
        "forward.csv": "model,tp,layers,phase,batch,tokens,ms,eager_ms,lm_head_ms"}
for name, header in want.items():
    with open(os.path.join(tmp, "preset", name)) as f:
        lines = f.read().splitlines()
    assert lines[0] == header, (name, lines[0])
    assert len(lines) == 1 + (2 if name == "forward.csv" else 1), (name, lines)
# read back as the kernel model's readers do (csv.DictReader, float of the times)
with open(os.path.join(tmp, "preset", "gemm.csv")) as f:
    r = list(csv.DictReader(f))[0]
assert (r["op"], int(r["tokens"]), int(r["k"]), int(r["n"]), float(r["ms_median"])) == ("qkv", 8, 4096, 6144, 0.038)
assert r["kernel"].startswith("nvjet_sm90_tst_64x8")
with open(os.path.join(tmp, "preset", "attention_decode.csv")) as f:
    r = list(csv.DictReader(f))[0]
assert (int(r["batch"]), int(r["ctx"]), int(r["kv_bytes"]), float(r["ms_median"])) == (1, 512, 2097152, 0.065312)
PY

# 3. calibrate --forward reads both: measured = ms + lm_head_ms, the estimate
# is afdkit estimate's forward time at the row's phase, batch and tokens, and
# the config's path gives what the preset of the same dimensions gives
est_dec=$("$AFDKIT" estimate --model llama-3.1-8b --device h100-sxm --phase decode --batch 1 --seq 1024 --precision 17 | awk -F '\t' '$1 == "forward" { print $5 }')
est_pre=$("$AFDKIT" estimate --model llama-3.1-8b --device h100-sxm --phase prefill --batch 1 --seq 2048 --precision 17 | awk -F '\t' '$1 == "forward" { print $5 }')
for which in path preset; do
    "$AFDKIT" calibrate --forward "$tmp/$which/forward.csv" --device h100-sxm --no-fit --precision 17 >"$tmp/cal.$which" 2>"$tmp/calerr" ||
        fail "calibrate --forward ($which): $(cat "$tmp/calerr")"
    awk -F '\t' -v d="$est_dec" -v p="$est_pre" '
        function abs(x) { return x < 0 ? -x : x }
        /^#/ { next }
        { n++ }
        n == 1 && !($3 == "decode" && abs($6 - (7.3257 + 0.4098)) <= 1e-12 && abs($7 / d - 1) <= 1e-9 &&
                    abs($8 - ($7 - $6) / $6) <= 1e-9 * abs($8) + 1e-15) { print "decode row: " $0; bad = 1 }
        n == 2 && !($3 == "prefill" && abs($6 - (120.5 + 0.41)) <= 1e-12 && abs($7 / p - 1) <= 1e-9) { print "prefill row: " $0; bad = 1 }
        END { if (n != 2 || !(d > 0) || !(p > 0)) { print "rows " n; bad = 1 } exit bad }' "$tmp/cal.$which" ||
        fail "calibrate --forward ($which)"
done
echo "ok: profiler refusal, shapes, CSV columns and the calibrate --forward round trip"
