"""The Python functions against the command line, number for number.

Each test runs the afdkit command with --json --precision 17 (17 significant
digits give back the exact double) and asserts that the Python function
returns the same doubles, bit for bit, column by column.  The Monte Carlo
functions are also held to the closed forms within five standard errors.

AFDKIT names the program (default: AFDKIT_BUILD_DIR/afdkit), AFDKIT_SRCDIR the
source tree (default: two levels up from here).
"""

import json
import math
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import afdkit
from afdkit import _ffi

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("AFDKIT_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
CONV = os.path.join(SRCDIR, "notebooks-data", "AzureLLMInferenceTrace_conv.csv")
CODE = os.path.join(SRCDIR, "notebooks-data", "AzureLLMInferenceTrace_code.csv")
PROGRAM = os.environ.get("AFDKIT") or os.path.join(os.environ.get("AFDKIT_BUILD_DIR", "."),
                                                   "afdkit")


def cli(*args):
    """The rows of `afdkit ARGS --json --precision 17` as dicts (a provenance
    line comes only with --provenance or --shard; skipped if there is one), without
    the "block" number that leads the rows of a table of several blocks)."""
    out = subprocess.run([PROGRAM, *map(str, args), "--json", "--precision", "17"],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, OMP_NUM_THREADS="2"))
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    for r in rows:
        r.pop("block", None)
    return [r for r in rows if list(r) != ["provenance"]]


def cli_error(*args):
    """(exit status, the message after 'afdkit: CMD: ') of a failing run."""
    out = subprocess.run([PROGRAM, *map(str, args)], capture_output=True, text=True)
    assert out.returncode != 0
    line = out.stderr.strip().splitlines()[-1]
    return out.returncode, re.sub(r"^afdkit: [a-z ]+: ", "", line)


def same(py, js):
    """One value: JSON null stands for nan (and the table prints inf as nan)."""
    if js is None:
        return not math.isfinite(float(py))
    if isinstance(js, str):
        return str(py) == js
    return float(py) == float(js)


def assert_table(d, rows, columns=None):
    """Every column of the CLI rows equals the Python dict of arrays."""
    columns = columns or list(rows[0])
    for col in columns:
        got = list(np.atleast_1d(d[col]))
        want = [row[col] for row in rows]
        assert len(got) == len(want), col
        bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not same(g, w)]
        assert not bad, "column %s differs: %r" % (col, bad[:3])


def assert_row(d, row):
    for col, want in row.items():
        assert same(d[col], want), "%s: %r != %r" % (col, d[col], want)


# ------------------------------------------------------------- closed forms

def test_kappa():
    r = [1, 2, 3, 24, 1000]
    assert_table(afdkit.kappa(r, full=True), cli("kappa", "--r", "1,2,3,24,1000"))
    k = afdkit.kappa(r)
    # exact values: kappa_1 = 0, kappa_2 = 1/sqrt(pi), kappa_3 = 3/(2 sqrt(pi))
    assert k[0] == 0
    assert abs(k[1] - 1 / math.sqrt(math.pi)) < 1e-14
    assert abs(k[2] - 1.5 / math.sqrt(math.pi)) < 1e-14
    assert isinstance(afdkit.kappa(2), float)


@pytest.mark.parametrize("wl,args", [
    ({"trace": CONV}, ["--trace", CONV]),
    ({"trace": CODE, "time_col": ""}, ["--trace", CODE, "--time-col", "none"]),
    ({"geometric": (1000, 200)}, ["--geometric", "--mu-p", 1000, "--mu-d", 200]),
    ({"theta": 600, "nu": 300}, ["--theta", 600, "--nu", 300]),
])
def test_theta(wl, args):
    assert_row(afdkit.theta(**wl), cli("theta", *args)[0])


def test_theta_geometric_closed_form():
    # Corollary 4.5: theta = MP + MD - 1, nu^2 = MP (MP - 1) + MD (MD - 1)
    t = afdkit.theta(geometric=(1000, 200))
    assert t["theta"] == 1199
    assert abs(t["nu"] - math.sqrt(1000 * 999 + 200 * 199)) < 1e-9


def test_theta_where_and_offset(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("ContextTokens,GeneratedTokens,kind\n10,3,a\n20,1,b\n30,4,a\n5,2,a\n")
    py = afdkit.theta(trace=str(f), where={"kind": "a"}, decode_offset=1)
    assert_row({k: py[k] for k in ("n", "theta", "nu", "mean_p", "mean_d")},
               {k: v for k, v in cli("theta", "--trace", f, "--where", "kind=a",
                                     "--decode-offset", 1)[0].items()
                if k in ("n", "theta", "nu", "mean_p", "mean_d")})
    # by hand: rows (P, D) = (10, 2), (30, 3), (5, 1);
    # theta = sum(D P + D(D-1)/2) / sum D = (21 + 93 + 5) / 6
    assert py["n"] == 3 and py["theta"] == pytest.approx(119 / 6, rel=1e-15)
    assert py["filtered"] == 1


def test_hw_preset():
    h = afdkit.hw("paper-910c")
    # Table 3 of the paper
    assert (h["alpha_a"], h["beta_a"], h["alpha_f"], h["beta_f"], h["alpha_c"],
            h["beta_c"]) == (0.00165, 50, 0.083, 100, 0.022, 20)
    assert h["unit"] == "cycles"
    # a preset states no tensor-parallel size, has no decode law to bound,
    # and states no devices per instance for its six coefficients (Table 3
    # does not say)
    assert h["tp"] == 0 and h["decode_batch_max"] == 0 and h["afd_tp"] == 0


def test_theta_format(tmp_path):
    """A CSV header that starts with '{' read as CSV when named so.  By hand:
    rows (P, D) = (1, 2), (3, 4); theta = (2 + 1 + 12 + 6) / 6 = 3.5."""
    f = tmp_path / "brace.csv"
    f.write_text("{a},b\n1,2\n3,4\n")
    py = afdkit.theta(trace=str(f), prompt_col="{a}", output_col="b", format="csv")
    assert py["n"] == 2 and py["theta"] == pytest.approx(3.5, rel=1e-15)
    with pytest.raises(afdkit.AfdkitError):
        afdkit.theta(trace=str(f), prompt_col="{a}", output_col="b", format="xml")
    with pytest.raises(ValueError):
        afdkit.theta(geometric=(2, 2), format="csv")


def test_hw_afd_tp(tmp_path):
    # hw --tp 4: the estimator's laws at TP 4 beside Appendix B's per-card
    # six, which time instances of one device; each read apart
    out = tmp_path / "hw4.hw"
    subprocess.run([PROGRAM, "hw", "--model", "llama-3.1-70b", "--device", "h100-sxm",
                    "--tp", "4", "--unit", "ms", "--out", str(out)], check=True,
                   capture_output=True)
    h = afdkit.hw(str(out))
    assert (h["tp"], h["afd_tp"]) == (4, 1)
    assert afdkit.hw({"hw": str(out), "afd_tp": 8})["afd_tp"] == 8
    with pytest.raises(ValueError, match="afd_tp must be an integer in"):
        afdkit.hw({"hw": str(out), "afd_tp": 1025})
    with pytest.raises(ValueError, match="afd_tp must be an integer in"):
        afdkit.hw({"hw": str(out), "afd_tp": 2.5})


def test_sweep():
    r = [0.5, 1, 2, 8, 16, 23, 24, 40]
    py = afdkit.sweep(r, B=256, hw="paper-910c", trace=CONV)
    assert_table(py, cli("sweep", "--trace", CONV, "--hw", "paper-910c", "-B", 256, "--r",
                         "0.5,1,2,8,16,23,24,40"))
    # eq. (1): thr = rB / ((r + 1) tau)
    np.testing.assert_allclose(py["thr_mf"], py["r"] * 256 / ((py["r"] + 1) * py["tau_mf"]),
                               rtol=1e-15)


def test_sweep_hw_override():
    h = afdkit.hw("paper-910c")
    h["alpha_c"] = 0.03
    py = afdkit.sweep([4, 12], B=128, hw=h, geometric=(600, 100))
    assert_table(py, cli("sweep", "--geometric", "--mu-p", 600, "--mu-d", 100, "--hw",
                         "paper-910c", "--alpha-c", 0.03, "-B", 128, "--r", "4,12"))


def test_ratio_trace():
    py = afdkit.ratio(B=256, hw="paper-910c", trace=CONV)
    rows = cli("ratio", "--trace", CONV, "--hw", "paper-910c", "-B", 256)
    assert_row(py["mf"], {k: v for k, v in rows[0].items() if k != "rule"})
    assert_row(py["g"], {k: v for k, v in rows[1].items() if k != "rule"})


def test_ratio_topologies():
    py = afdkit.ratio(B=256, hw="paper-910c", theta=600, nu=300, r=[2, 4, 8, 9, 10, 11, 12],
                      max_instances=12, top=4)
    rows = cli("ratio", "--theta", 600, "--nu", 300, "--hw", "paper-910c", "-B", 256, "--r",
               "2,4,8:12", "--max-instances", 12, "--top", 4)
    assert_row(py["mf"], {k: v for k, v in rows[0].items() if k != "rule"})
    assert_row(py["g"], {k: v for k, v in rows[1].items() if k != "rule"})
    assert_table(py["topologies"], rows[2:])


MS_HW = ("alpha_a = 0.0000021\nbeta_a = 0.06\nalpha_f = 0.0001\nbeta_f = 0.12\n"
         "alpha_c = 0.00003\nbeta_c = 0.025\nunit = ms\n")


def test_sweep_cost_energy(tmp_path):
    hwf = tmp_path / "ms.hw"
    hwf.write_text(MS_HW)
    r = [1, 2.5, 4, 9]
    py = afdkit.sweep(r, B=64, hw=str(hwf), geometric=(100, 500), price=(2.99, 1.79),
                      power=(700, 400))
    assert_table(py, cli("sweep", "--geometric", "--mu-p", 100, "--mu-d", 500, "--hw", hwf,
                         "-B", 64, "--r", "1,2.5,4,9", "--price-a", 2.99, "--price-f", 1.79,
                         "--power-a", 700, "--power-f", 400))
    # tokens per dollar of an rA-1F bundle: r B / tau tokens per ms, 3600 s per
    # hour, r + 1 devices priced 2.99 and 1.79 per hour
    rr = np.array(r)
    per_s = rr * 64 / (py["tau_g"] * 1e-3)
    np.testing.assert_allclose(py["thr_per_dollar"], 3600 * per_s / (rr * 2.99 + 1.79),
                               rtol=1e-14)
    np.testing.assert_allclose(py["thr_per_joule"], per_s / (rr * 700 + 400), rtol=1e-14)


def test_ratio_cost_energy():
    with pytest.warns(UserWarning, match="not a unit of time"):
        py = afdkit.ratio(B=256, hw="paper-910c", geometric=(100, 500), price=(2.99, 1.79),
                          power=(700, 400))
    rows = cli("ratio", "--geometric", "--mu-p", 100, "--mu-d", 500, "--hw", "paper-910c",
               "-B", 256, "--price-a", 2.99, "--price-f", 1.79, "--power-a", 700,
               "--power-f", 400)
    assert [row["rule"] for row in rows] == ["mf", "g", "cost", "energy"]
    for row in rows:
        assert_row(py[row["rule"]], {k: v for k, v in row.items() if k != "rule"})
    # with equal prices per device, tokens per dollar picks the barrier-aware r
    with pytest.warns(UserWarning, match="not a unit of time"):
        eq = afdkit.ratio(B=256, hw="paper-910c", geometric=(100, 500), price=(2, 2))
    assert eq["cost"]["r"] == eq["g"]["r"]


def test_cost_bad_pair():
    with pytest.raises(ValueError, match="price"):
        afdkit.sweep([2], B=64, hw="paper-910c", geometric=(100, 500), price=(0, 1))


def test_mdc():
    py = afdkit.mdc([1, 1.5], 0.5, [1, 2, 3, 8], percentile=0.95)
    assert_table(py, cli("mdc", "--lambda", "1,1.5", "--service", 0.5, "--c", "1,2,3,8",
                         "--percentile", 0.95))
    # c = 1 is Pollaczek-Khinchine: rho D / (2 (1 - rho))
    assert py["wq_exact"][0] == pytest.approx(0.5 * 0.5 / (2 * 0.5), rel=1e-13)


def test_mdc_single_rate():
    py = afdkit.mdc(30, 0.1, [4, 5, 8])
    rows = cli("mdc", "--lambda", 30, "--service", 0.1, "--c", "4,5,8")
    assert_table(py, rows, [c for c in rows[0]])


def test_estimate():
    for kw, args in [({}, []),
                     ({"tp": 4, "phase": "decode", "batch": 32, "seq": 4096},
                      ["--tp", 4, "--phase", "decode", "-b", 32, "-s", 4096])]:
        py = afdkit.estimate("llama-3.1-70b", "h100-sxm", **kw)
        assert_table(py, cli("estimate", "--model", "llama-3.1-70b", "--device", "h100-sxm",
                             *args))
    py = afdkit.estimate("deepseek-v3", "h200", tp=8, per_op=True)
    assert_table(py, cli("estimate", "--model", "deepseek-v3", "--device", "h200", "--tp", 8,
                         "--per-op"))


def test_estimate_laws_and_model(tmp_path):
    out = tmp_path / "laws.txt"
    subprocess.run([PROGRAM, "estimate", "--model", "llama-3.1-8b", "--device", "l40s",
                    "--out", str(out)], check=True, capture_output=True)
    py = afdkit.estimate_laws("llama-3.1-8b", "l40s")
    for line in out.read_text().splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        key, val = (s.strip() for s in line.split("=", 1))
        if key.endswith("_table"):  # the step-time tables: the simulators', not the laws'
            continue
        assert same(py[key], val) if key in ("unit", "model", "device") else \
            py[key] == float(val), key
    # the default TP 1 is recorded, and another size with it, for the laws
    # and for the six coefficients (all fitted at that size)
    two = afdkit.estimate_laws("llama-3.1-8b", "l40s", tp=2)
    assert py["tp"] == py["afd_tp"] == 1 and two["tp"] == two["afd_tp"] == 2
    # the decode law's batches reach the largest whose KV cache fits at
    # context 128: (0.9 x 48 GB - 2 x 8,030,261,248 B) / 131,072 B per token
    # = 207,057 tokens, / 128 = 1617
    assert "decode_batch_max" in out.read_text() and py["decode_batch_max"] == 1617
    # and the file reads back as hw=
    back = afdkit.hw(str(out))
    assert all(same(back[k], v) for k, v in py.items())
    assert_table(afdkit.sweep([2, 4], B=64, hw=str(out), geometric=(500, 100)),
                 cli("sweep", "--hw", out, "--geometric", "--mu-p", 500, "--mu-d", 100,
                     "-B", 64, "--r", "2,4"))
    assert_row(afdkit.model("qwen2.5-14b"), cli("model", "--model", "qwen2.5-14b")[0])


# -------------------------------------------------------------- Monte Carlo

def test_mc_barrier_trace():
    py = afdkit.mc_barrier(B=64, r=[1, 2, 8], trials=2000, seed=7, trace=CONV)
    assert_table(py, cli("mc", "barrier", "--trace", CONV, "-B", 64, "--r", "1,2,8",
                         "--trials", 2000, "--seed", 7))
    # r = 1: W is one worker's sum of B slot loads, E[W] = B theta exactly
    assert abs(py["overhead_mc"][0]) < 5 * py["overhead_se"][0]


def test_mc_barrier_geometric_threads():
    kw = dict(B=256, r=[2, 16], trials=20000, seed=3, geometric=(600, 100))
    py = afdkit.mc_barrier(threads=1, **kw)
    assert_table(py, cli("mc", "barrier", "--geometric", "--mu-p", 600, "--mu-d", 100,
                         "-B", 256, "--r", "2,16", "--trials", 20000, "--seed", 3))
    assert_table(afdkit.mc_barrier(threads=2, **kw), [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
         for k, v in zip(py, vals)} for vals in zip(*py.values())])


def test_mc_slot():
    py = afdkit.mc_slot(steps=200000, seed=5, geometric=(50, 20))
    rows = cli("mc", "slot", "--geometric", "--mu-p", 50, "--mu-d", 20, "--steps", 200000,
               "--seed", 5)
    assert_table(py, rows)
    # Corollary 4.5: theta = 50 + 20 - 1
    assert py["exact"][0] == 69
    assert abs(py["mc"][0] - 69) < 5 * py["se"][0]


def test_mc_mdc_against_exact():
    py = afdkit.mc_mdc(1.6, [2, 3], service=1, customers=100000, seed=2)
    assert_table(py, cli("mc", "mdc", "--lambda", 1.6, "--service", 1, "--c", "2,3",
                         "--customers", 100000, "--seed", 2))
    exact = afdkit.mdc(1.6, 1, [2, 3])
    for k in range(2):
        assert abs(py["wq_mc"][k] - exact["wq_exact"][k]) < 5 * py["wq_se"][k]
        assert abs(py["p_wait_mc"][k] - exact["p_wait"][k]) < 5 * py["p_wait_se"][k]


def test_mc_mdc_percentile_names():
    py = afdkit.mc_mdc(0.5, [1], service=1, customers=5000, percentile=0.999)
    assert "wq_p99_9_mc" in py and "ttft_p99_9_se" in py


def test_mc_mdc_replay_by_hand(tmp_path):
    """Four requests at 0, 0.1, 2 and 2.1 s, each prompt 100 tokens served in
    0.005 * 100 = 0.5 s by one server: the second and fourth wait 0.5 - 0.1 =
    0.4 s, the others nothing, so the mean wait is 0.2 s, P(wait > 0) = 0.5,
    the mean time in system 0.7 s, and rho = (4 - 1) / 2.1 s * 0.5 s = 5/7."""
    f = tmp_path / "four.csv"
    f.write_text("t,ContextTokens,GeneratedTokens\n0,100,5\n0.1,100,5\n2,100,5\n2.1,100,5\n")
    py = afdkit.mc_mdc(None, [1], trace=str(f), time_col="t", time_unit="s", service_b=0.005,
                       arrivals="trace", batches=2)
    assert py["wq_mc"][0] == pytest.approx(0.2, abs=1e-15)
    assert py["p_wait_mc"][0] == 0.5
    assert py["ttft_mean_mc"][0] == pytest.approx(0.7, abs=1e-15)
    assert py["service_mean"][0] == pytest.approx(0.5, abs=1e-15)
    assert py["rho"][0] == pytest.approx(5 / 7, rel=1e-14)
    # stretched to half the rate: gaps of 0.2 s, so the second waits 0.3 s
    slow = afdkit.mc_mdc(3 / 4.2, [1], trace=str(f), time_col="t", time_unit="s",
                         service_b=0.005, arrivals="trace", batches=2)
    assert slow["wq_mc"][0] == pytest.approx((0.3 + 0.3) / 4, abs=1e-15)
    with pytest.raises(ValueError):
        afdkit.mc_mdc(None, [1], service=1, arrivals="trace")
    with pytest.raises(ValueError):
        afdkit.mc_mdc(1, [1], trace=str(f), time_col="t", time_unit="s", arrivals="bursty")


def test_mc_mdc_trace_law_matches_cli():
    args = ("--service-trace", CONV, "--service-a", 0.02, "--service-b", 1e-4, "--c", "1,2",
            "--batches", 8)
    py = afdkit.mc_mdc(None, [1, 2], trace=CONV, service_a=0.02, service_b=1e-4,
                       arrivals="trace", batches=8)
    assert_table(py, cli("mc", "mdc", "--arrivals", "trace", *args))
    py = afdkit.mc_mdc(2, [1, 2], trace=CONV, service_a=0.02, service_b=1e-4, batches=8,
                       customers=20000, seed=3)
    assert_table(py, cli("mc", "mdc", "--lambda", 2, "--customers", 20000, "--seed", 3, *args))


def test_sim():
    py = afdkit.sim(B=32, r=[2, 5], hw="paper-910c", requests=300, seed=4, trace=CONV)
    assert_table(py, cli("sim", "--trace", CONV, "--hw", "paper-910c", "-B", 32, "--r", "2,5",
                         "--requests", 300, "--seed", 4))
    # one r alone gives the same row as in a list (streams derived from x, y)
    one = afdkit.sim(B=32, r=[5], hw="paper-910c", requests=300, seed=4, trace=CONV)
    assert one["thr_sim"][0] == py["thr_sim"][1]


def test_sim_options():
    kw = dict(B=16, r=[3], hw="paper-910c", requests=200, geometric=(300, 50),
              microbatches=3, start="fresh", ffn_instances=2, no_comm=True)
    assert_table(afdkit.sim(**kw),
                 cli("sim", "--geometric", "--mu-p", 300, "--mu-d", 50, "--hw", "paper-910c",
                     "-B", 16, "--r", 3, "--requests", 200, "--microbatches", 3, "--start",
                     "fresh", "--ffn-instances", 2, "--no-comm"))


def test_sim_gantt(tmp_path):
    g = tmp_path / "g.jsonl"
    rows = cli("sim", "--geometric", "--mu-p", 100, "--mu-d", 500, "--hw", "paper-910c", "-B",
               64, "--r", 4, "--requests", 200, "--gantt", g, "--gantt-steps", 5)
    py = afdkit.sim(B=64, r=[4], hw="paper-910c", requests=200, geometric=(100, 500),
                    gantt_steps=5)
    assert_table(py, rows, columns=list(rows[0]))
    lines = [json.loads(line) for line in g.read_text().splitlines()]
    want = lines  # JSON Lines without --provenance: the rows alone
    assert "provenance" not in want[0]
    assert_table(py["gantt"], want)
    # 5 steps of 4 Attention workers and the three shared stages
    assert len(want) == 5 * (4 + 3)
    with pytest.raises(ValueError, match="single r"):
        afdkit.sim(B=64, r=[2, 4], hw="paper-910c", geometric=(100, 500), gantt_steps=5)


# ------------------------------------------------------------------- errors

def test_error_missing_file():
    status, msg = cli_error("theta", "--trace", "/nonexistent/t.csv")
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.theta(trace="/nonexistent/t.csv")
    assert str(e.value) == msg
    assert e.value.status == "EIO"


def test_error_bad_row(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("ContextTokens,GeneratedTokens\n10,3\n20,x\n")
    status, msg = cli_error("theta", "--trace", f)
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.theta(trace=str(f))
    assert str(e.value) == msg and e.value.line == 3 and e.value.status == "EPARSE"


def test_error_hw_file(tmp_path):
    f = tmp_path / "bad.hw"
    f.write_text("alpha_a = 0.1\nbeta_a = 1\nalpha_f = 1\nbeta_f = 1\nalpha_c = 1\nbogus = 2\n")
    status, msg = cli_error("sweep", "--hw", f, "--theta", 1, "--nu", 1, "-B", 1, "--r", 1)
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.sweep([1], B=1, hw=str(f), theta=1, nu=1)
    assert str(e.value) == msg


def test_error_unstable_and_bad_arguments():
    status, msg = cli_error("mdc", "--lambda", 5, "--service", 1, "--c", "2,6")
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.mdc(5, 1, [2, 6])
    assert str(e.value) == msg and e.value.status == "EUNSTABLE"
    # the smallest stable c in full below 2^53, exponent notation above
    for service in (9007199254740991, 1e308):
        status, msg = cli_error("mdc", "--lambda", 1, "--service", service, "--c", "1:3")
        with pytest.raises(afdkit.AfdkitError) as e:
            afdkit.mdc(1, service, [1, 2, 3])
        assert str(e.value) == msg and len(msg) < 120
    status, msg = cli_error("mc", "mdc", "--lambda", 1, "--service", 1e308, "--c", "1:3")
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.mc_mdc(1, [1, 2, 3], service=1e308)
    assert str(e.value) == msg and msg.endswith("a stable queue needs c > 1e+308")
    with pytest.raises(ValueError):
        afdkit.sweep([1], B=16, hw="paper-910c")  # no workload
    with pytest.raises(ValueError):
        afdkit.mc_barrier(B=4, r=[2], theta=1, nu=1)  # no lengths
    with pytest.raises(afdkit.AfdkitError, match="neither a preset"):
        afdkit.hw("paper-911")


def test_paths_as_open_takes_them(tmp_path):
    """A file name is taken as open() takes it: str, bytes (decoded with the
    file system's encoding) or os.PathLike; a NUL inside it is a ValueError,
    not a name cut short; anything else is a TypeError."""
    f = tmp_path / "ok.csv"
    f.write_text("ContextTokens,GeneratedTokens\n10,3\n20,5\n")
    # by hand: one slot per request, theta = P + (D - 1)/2 averaged over the
    # decode steps: (3 (10 + 1) + 5 (20 + 2)) / (3 + 5) = 143/8
    assert afdkit.theta(trace=str(f))["theta"] == pytest.approx(143 / 8, rel=1e-14)
    assert afdkit.theta(trace=f)["theta"] == afdkit.theta(trace=str(f))["theta"]
    assert afdkit.theta(trace=os.fsencode(str(f)))["n"] == 2
    with pytest.raises(ValueError, match="embedded null byte"):
        open(str(f) + "\0junk")
    with pytest.raises(ValueError, match="trace: embedded null byte"):
        afdkit.theta(trace=str(f) + "\0junk")
    with pytest.raises(ValueError, match="hw: embedded null byte"):
        afdkit.hw("paper-910c\0x")
    with pytest.raises(TypeError, match="trace: expected a file name"):
        afdkit.theta(trace=3)
    # a bytes name is the file it names, not the text "b'...'"
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.theta(trace=b"/nonexistent/t.csv")
    assert str(e.value).startswith("/nonexistent/t.csv: ")
    with pytest.raises(afdkit.AfdkitError) as e:
        afdkit.hw(b"/nonexistent/x.hw")
    assert str(e.value).startswith("/nonexistent/x.hw: ")


def test_bool_is_not_a_number():
    """True is not r = 1 (kappa_1 = 0): a bool where a number is taken is a
    TypeError, also inside a list and for keyword numbers."""
    for bad in (True, [2, False], np.array([True])):
        with pytest.raises(TypeError, match="r: expected a number, not a bool"):
            afdkit.kappa(bad)
    with pytest.raises(TypeError, match="theta: expected a number, not a bool"):
        afdkit.theta(theta=True, nu=1)
    with pytest.raises(TypeError, match="B: expected a number, not a bool"):
        afdkit.sweep([1], B=True, hw="paper-910c", theta=1, nu=1)
    with pytest.raises(TypeError, match="alpha_f: expected a number, not a bool"):
        afdkit.hw({"hw": "paper-910c", "alpha_f": True})
    with pytest.raises(TypeError, match="service: expected a number, not a bool"):
        afdkit.mdc(1, True, [2])


def test_range_messages_are_the_commands():
    """An r beyond kappa's range says what the command line says, from the
    same check in the library."""
    status, msg = cli_error("kappa", "--r", "2000000000000000")
    assert status == 2 and msg == "--r: value 2e+15 outside [1, 1e+15] (see 'afdkit kappa --help')"
    with pytest.raises(ValueError) as e:
        afdkit.kappa(2e15)
    assert str(e.value) == "r: value 2e+15 outside [1, 1e+15]"
    with pytest.raises(ValueError) as e:
        afdkit.kappa([2, 1e300])
    assert str(e.value) == "r: value 1e+300 outside [1, 1e+15]"


# --------------------------------------------------- declarations and build

def test_struct_layouts(tmp_path):
    """Every struct declared to cffi has the size and field offsets of the
    C headers (compiled here against the sources' headers)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    ffi = _ffi.ffi
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "afdkit.h"',
             '#include "afd_mc.h"', '#include "afd_pipeline.h"', "int main(void) {"]
    expect = []
    for s in _ffi.STRUCTS:
        t = ffi.typeof(s)
        lines.append('printf("%%zu\\n", sizeof(%s));' % s)
        expect.append("%s %d" % (s, ffi.sizeof(t)))
        for name, field in t.fields:
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (s, name))
            expect.append("%s.%s %d" % (s, name, field.offset))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    inc = [os.path.join(SRCDIR, "libanalytic")] + [  # one folder per area
        os.path.join(SRCDIR, top, d) for top in ("libanalytic", "montecarlo")
        for d in sorted(os.listdir(os.path.join(SRCDIR, top)))
        if os.path.isdir(os.path.join(SRCDIR, top, d))]
    subprocess.run([cc] + [a for d in inc for a in ("-I", d)] + ["-o", str(exe), str(src)],
                   check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    labels = [e.rsplit(" ", 1)[0] for e in expect]
    assert ["%s %s" % (l, g) for l, g in zip(labels, got)] == expect


def test_version_matches_package():
    with open(os.path.join(SRCDIR, "python", "pyproject.toml")) as f:
        m = re.search(r'^version = "([^"]+)"', f.read(), re.M)
    assert m.group(1) == afdkit.__version__
